//! Counts over a set of verdicts: the funnel of `docs/commands.md#the-terminal-workbench` and the `expect` tally.

use crate::core::verdict::{Decision, Stage, Verdict, Warning};
use serde::Serialize;
use std::collections::BTreeMap;

/// Totals of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Every capture.
    pub captures: usize,
    /// The funnel: how many passed each stage (`completed` = passed the response stage).
    pub funnel: Funnel,
    /// Captures by their verdict's decision (`ready-for-commit`: 3, ...).
    pub decisions: BTreeMap<Decision, usize>,
    /// Captures by the stage that decided them.
    pub stages: BTreeMap<Stage, usize>,
    /// Captures that carry an `expect`.
    pub expected: usize,
    /// Of those, how many met it.
    pub expect_met: usize,
    /// Captures without `expect` that are ready.
    pub ready_without_expect: usize,
    /// Captures that count as passing (`expect` met, or no `expect` and ready).
    pub passed: usize,
    /// Captures that count as failing.
    pub failed: usize,
    /// Workspace warnings, not about one capture: a `[[join]]` line whose id matches no
    /// capture (`UNMATCHED_JOIN`, `docs/config.md#join`). They never fail the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// The chain report of a `check` run whose captures form chains (`docs/chains.md`):
    /// printed by the reports on their own (`chains` beside `summary` in `--format json`),
    /// never inside the summary.
    #[serde(skip)]
    pub chains: Option<crate::core::chain::ChainReport>,
}

/// Totals of a `check --schema` run (plain JSON instances against one schema), in the
/// words of that mode: every instance, how many parsed, how many are valid (parsed and met
/// the schema) and how many are not. `valid + invalid == instances`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct InstanceSummary {
    /// Every instance (a `.json` file or a JSONL line).
    pub instances: usize,
    /// Instances that parse as JSON.
    pub parsed: usize,
    /// Instances that parse and meet the schema.
    pub valid: usize,
    /// The rest: unparsable, unreadable or not meeting the schema.
    pub invalid: usize,
}

/// How many captures passed each stage: `captures 31 > completed 27 > parsed 21 > schema 15 > business 3 > ready 3`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Funnel {
    /// Passed input and response: the provider finished normally.
    pub completed: usize,
    /// Passed the parse stage.
    pub parsed: usize,
    /// Passed the schema stage.
    pub schema: usize,
    /// Passed the business stage.
    pub business: usize,
    /// Passed everything.
    pub ready: usize,
}

impl Summary {
    /// Adds one verdict.
    pub fn add(&mut self, v: &Verdict) {
        self.add_outcome(v.stage, v.decision, v.expect.as_ref().map(|e| e.met));
    }

    /// Adds one verdict known only by its stage, decision and `expect` outcome
    /// (`Some(met)` when the capture has an `expect`): the same counts as [`Summary::add`].
    pub fn add_outcome(&mut self, stage: Stage, decision: Decision, expect: Option<bool>) {
        self.add_outcomes(stage, decision, expect, 1);
    }

    /// Adds `n` verdicts of the same outcome (see [`Summary::add_outcome`]).
    pub fn add_outcomes(
        &mut self,
        stage: Stage,
        decision: Decision,
        expect: Option<bool>,
        n: usize,
    ) {
        self.captures += n;
        let s = stage;
        let of = |b: bool| if b { n } else { 0 };
        self.funnel.completed += of(s > Stage::Response);
        self.funnel.parsed += of(s > Stage::Parse);
        self.funnel.schema += of(s > Stage::Schema);
        self.funnel.business += of(s > Stage::Business);
        self.funnel.ready += of(s == Stage::Ready);
        *self.decisions.entry(decision).or_default() += n;
        *self.stages.entry(stage).or_default() += n;
        match expect {
            Some(met) => {
                self.expected += n;
                self.expect_met += of(met);
            }
            None => self.ready_without_expect += of(stage == Stage::Ready),
        }
        if crate::core::outcome::passes(stage, expect) {
            self.passed += n;
        } else {
            self.failed += n;
        }
    }

    /// The counts of plain instances (`check --schema`), in instance words.
    pub fn instances(&self) -> InstanceSummary {
        InstanceSummary {
            instances: self.captures,
            parsed: self.funnel.parsed,
            valid: self.funnel.schema,
            invalid: self.captures - self.funnel.schema,
        }
    }

    /// The funnel for plain instances (`check --schema`), which have no response or business
    /// stage: `instances N > parsed N > valid N`.
    pub fn instance_funnel_line(&self) -> String {
        format!(
            "instances {} > parsed {} > valid {}",
            self.captures, self.funnel.parsed, self.funnel.schema
        )
    }

    /// The funnel as one line: `captures 31 > completed 27 > parsed 21 > schema 15 > business 3 > ready 3`.
    pub fn funnel_line(&self) -> String {
        let f = &self.funnel;
        format!(
            "captures {} > completed {} > parsed {} > schema {} > business {} > ready {}",
            self.captures, f.completed, f.parsed, f.schema, f.business, f.ready
        )
    }
}
