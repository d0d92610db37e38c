//! Counts over a set of verdicts: the funnel of `docs/commands.md#the-terminal-workbench`,
//! the reliability rates (`docs/repairs.md#the-rates`) and the `expect` tally. Every front
//! end (`check`, `watch --json`, the workbench's header) prints these same counts.

use crate::core::repair::{RepairMark, RepairName};
use crate::core::verdict::{Decision, Stage, Verdict, Warning};
use serde::{Serialize, Serializer};
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
    /// The reliability rates: parse success, schema pass, repairable overall and per repair,
    /// each with its denominator (`docs/repairs.md#the-rates`).
    pub rates: Rates,
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
        self.add_repairs(v.repair.as_ref().map(crate::core::repair::Repair::mark), 1);
    }

    /// Counts the `repair` of `n` verdicts added by [`Summary::add_outcomes`] (nothing for
    /// `None`): what the repairable rates count ([`Rates`]).
    pub fn add_repairs(&mut self, repair: Option<RepairMark>, n: usize) {
        if let Some(m) = repair {
            let t = &mut self.rates.repairs[m.name.index()];
            if m.ready {
                t.ready += n;
            } else {
                t.not_ready += n;
            }
        }
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
        self.rates.completed += of(s > Stage::Response);
        self.rates.parsed += of(s > Stage::Parse);
        self.rates.schema += of(s > Stage::Schema);
        self.rates.failing += of(s != Stage::Ready);
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

/// `count` of `of`: a rate with its denominator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ratio {
    /// The numerator.
    pub count: usize,
    /// The denominator.
    pub of: usize,
}

impl Ratio {
    /// `count / of`; `None` when `of` is 0.
    pub fn rate(&self) -> Option<f64> {
        (self.of > 0).then(|| self.count as f64 / self.of as f64)
    }

    /// The rate as a percentage with one decimal (`71.4%`), `-` when `of` is 0.
    pub fn percent(&self) -> String {
        self.rate()
            .map_or_else(|| "-".to_owned(), |r| format!("{:.1}%", r * 100.0))
    }
}

/// Serialized as `{"count", "of", "rate"}`, `rate` rounded to 4 decimals (`null` when `of`
/// is 0).
impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Ratio", 3)?;
        st.serialize_field("count", &self.count)?;
        st.serialize_field("of", &self.of)?;
        st.serialize_field(
            "rate",
            &self.rate().map(|r| (r * 10_000.0).round() / 10_000.0),
        )?;
        st.end()
    }
}

/// The verdicts whose `repair` is one repair's: its copy would be ready, or would have
/// another outcome that still fails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepairTally {
    /// The repaired copy would pass every stage.
    pub ready: usize,
    /// The repaired copy would fail elsewhere (its `would_be` names it).
    pub not_ready: usize,
}

/// The three reliability rates of the design contract's repairs section, with their
/// denominators (`docs/repairs.md#the-rates`):
/// - parse success: captures that passed the parse stage, of those that reached it
///   (`parsed` of `completed`; an already-structured proposal counts as parsed);
/// - schema pass: captures that passed the schema stage, of those that parsed;
/// - repairable: failing captures (not ready) that one allowed repair would make ready, of
///   every failing capture; and the same per repair, in table order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rates {
    /// Captures that passed the response stage (reached the parse stage).
    pub completed: usize,
    /// Captures that passed the parse stage.
    pub parsed: usize,
    /// Captures that passed the schema stage.
    pub schema: usize,
    /// Captures that are not ready.
    pub failing: usize,
    /// Per repair, in [`RepairName::ALL`] order.
    pub repairs: [RepairTally; 6],
}

impl Rates {
    /// `parsed` of `completed`.
    pub fn parse_success(&self) -> Ratio {
        Ratio {
            count: self.parsed,
            of: self.completed,
        }
    }

    /// `schema` of `parsed`.
    pub fn schema_pass(&self) -> Ratio {
        Ratio {
            count: self.schema,
            of: self.parsed,
        }
    }

    /// Failing captures one repair would make ready, of every failing capture.
    pub fn repairable(&self) -> Ratio {
        Ratio {
            count: self.repairs.iter().map(|t| t.ready).sum(),
            of: self.failing,
        }
    }

    /// Failing captures `repair` would make ready, of every failing capture.
    pub fn by_repair(&self, repair: RepairName) -> Ratio {
        Ratio {
            count: self.repairs[repair.index()].ready,
            of: self.failing,
        }
    }

    /// The rates as the human report prints them, one line each: `rates: parse success
    /// 71.4% (15 of 21 completed), schema pass 60.0% (9 of 15 parsed), repairable 16.7% (4 of
    /// 24 failing)`, then, when a repair counts, `  by repair: strip-fence 1 of 24 (4.2%),
    /// ...` (with `N more not ready` for a repair whose copies would still fail).
    pub fn lines(&self) -> Vec<String> {
        let (p, s, r) = (self.parse_success(), self.schema_pass(), self.repairable());
        let mut out = vec![format!(
            "rates: parse success {} ({} of {} completed), schema pass {} ({} of {} parsed), repairable {} ({} of {} failing)",
            p.percent(),
            p.count,
            p.of,
            s.percent(),
            s.count,
            s.of,
            r.percent(),
            r.count,
            r.of
        )];
        let per: Vec<String> = RepairName::ALL
            .into_iter()
            .filter_map(|name| {
                let t = self.repairs[name.index()];
                if t.ready + t.not_ready == 0 {
                    return None;
                }
                let q = self.by_repair(name);
                let more = if t.not_ready > 0 {
                    format!("; {} more not ready", t.not_ready)
                } else {
                    String::new()
                };
                Some(format!(
                    "{name} {} of {} ({}{more})",
                    q.count,
                    q.of,
                    q.percent()
                ))
            })
            .collect();
        if !per.is_empty() {
            out.push(format!("  by repair: {}", per.join(", ")));
        }
        out
    }

    /// The rates on one short line, for the workbench's header: `parse 15/21 · schema 9/15
    /// · repairable 4/24` (passed of reached, for each).
    pub fn compact(&self) -> String {
        let (p, s, r) = (self.parse_success(), self.schema_pass(), self.repairable());
        format!(
            "parse {}/{} · schema {}/{} · repairable {}/{}",
            p.count, p.of, s.count, s.of, r.count, r.of
        )
    }
}

/// Serialized as `{"parse_success": RATIO, "schema_pass": RATIO, "repairable": RATIO,
/// "by_repair": [{"repair", "count", "of", "rate", "not_ready"}, ...]}`, every repair of
/// the table in its order (`docs/repairs.md#the-rates`).
impl Serialize for Rates {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        #[derive(Serialize)]
        struct PerRepair {
            repair: RepairName,
            #[serde(flatten)]
            ratio: Ratio,
            not_ready: usize,
        }
        let by: Vec<PerRepair> = RepairName::ALL
            .into_iter()
            .map(|repair| PerRepair {
                repair,
                ratio: self.by_repair(repair),
                not_ready: self.repairs[repair.index()].not_ready,
            })
            .collect();
        let mut st = s.serialize_struct("Rates", 4)?;
        st.serialize_field("parse_success", &self.parse_success())?;
        st.serialize_field("schema_pass", &self.schema_pass())?;
        st.serialize_field("repairable", &self.repairable())?;
        st.serialize_field("by_repair", &by)?;
        st.end()
    }
}
