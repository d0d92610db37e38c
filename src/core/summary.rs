//! Counts over a set of verdicts: the funnel of DESIGN 8 and the `expect` tally.

use crate::core::verdict::{Decision, Stage, Verdict};
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
        self.captures += 1;
        let s = v.stage;
        self.funnel.completed += usize::from(s > Stage::Response);
        self.funnel.parsed += usize::from(s > Stage::Parse);
        self.funnel.schema += usize::from(s > Stage::Schema);
        self.funnel.business += usize::from(s > Stage::Business);
        self.funnel.ready += usize::from(s == Stage::Ready);
        *self.decisions.entry(v.decision).or_default() += 1;
        *self.stages.entry(v.stage).or_default() += 1;
        match &v.expect {
            Some(e) => {
                self.expected += 1;
                self.expect_met += usize::from(e.met);
            }
            None => self.ready_without_expect += usize::from(v.is_ready()),
        }
        if v.passes() {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
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
