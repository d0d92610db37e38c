//! Self-correction loops: captures linked into attempt chains, each chain's outcome, flags
//! and feedback effects, and the summary over them (`docs/chains.md`).
//!
//! [`link`] says which chain a capture is an attempt of (the pipeline puts it on the
//! verdict as [`Verdict::chain`](crate::core::verdict::Verdict::chain)); a [`ChainSet`] is
//! fed the verdicts as they come, in any order, and keeps per attempt only a small
//! [`Step`] (never the verdict); [`ChainSet::finish`] orders each chain's steps and gives
//! the [`ChainReport`]: one [`outcome::ChainRow`] per chain and the [`summary::ChainSummary`].

pub mod effect;
pub mod link;
pub mod outcome;
pub mod summary;

use crate::core::config::Budget;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Decision, Reason, Stage, Verdict, Warning};
pub use link::{ChainLink, LinkedBy};
use serde::Serialize;
use std::collections::HashMap;

/// The workspace warning for a chain whose attempt numbers repeat or skip, or whose
/// attempts' `pattern` numbers cannot be read (`docs/chains.md#warnings`).
pub const CHAIN_ATTEMPTS: &str = "CHAIN_ATTEMPTS";
/// The workspace warning for a chain some of whose attempts have no usable `[chains]
/// order` value (`docs/chains.md#warnings`).
pub const CHAIN_ORDER: &str = "CHAIN_ORDER";

/// The most pointers a step keeps of its failing stage (a verdict keeps at most
/// [`MAX_ERRORS`](crate::core::verdict::MAX_ERRORS) findings anyway).
const MAX_POINTERS: usize = 100;

/// What a chain keeps of one attempt: enough for its outcome, flags and effects, nothing
/// of the verdict's text (a few dozen bytes plus its failing pointers).
#[derive(Debug, Clone)]
pub struct Step {
    /// The attempt number the link gave.
    pub attempt: Option<u64>,
    /// The `[chains] order` value.
    pub order: Option<f64>,
    /// Where the capture is (the default order: file name, then line).
    pub source: RecordRef,
    /// The verdict's stage.
    pub stage: Stage,
    /// The verdict's decision.
    pub decision: Decision,
    /// The verdict's reason.
    pub reason: Option<Reason>,
    /// The pointer of the first finding (the first failure's pointer).
    pub first_pointer: Option<Box<str>>,
    /// The distinct pointers of the failing stage's findings, at most 100.
    pub pointers: Box<[Box<str>]>,
    /// The proposal's digest ([`ChainLink::digest`]).
    pub digest: Option<u64>,
    /// Tokens from `meta.usage`: `total_tokens`, else `input_tokens` + `output_tokens`.
    pub tokens: Option<u64>,
    /// Index of the verdict's contract in the set's contract names.
    pub contract: Option<u32>,
    /// The link's problem, if any (an unusable attempt number or order value).
    pub problem: Option<Box<str>>,
}

/// The tokens of one attempt from its `meta.usage` (`docs/chains.md#tokens`):
/// `total_tokens`, else `input_tokens` + `output_tokens` when both are there.
pub fn tokens_of(v: &Verdict) -> Option<u64> {
    let usage = v.meta.as_ref()?.get("usage")?;
    let n = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64);
    n("total_tokens").or_else(|| Some(n("input_tokens")?.saturating_add(n("output_tokens")?)))
}

/// One chain while it is fed.
#[derive(Debug, Clone)]
struct Acc {
    id: String,
    linked_by: LinkedBy,
    steps: Vec<Step>,
}

/// The chains of one workspace, fed verdicts in any order ([`ChainSet::add`]), or updated
/// and removed by source for a live session ([`ChainSet::live`]).
#[derive(Debug, Clone, Default)]
pub struct ChainSet {
    chains: Vec<Acc>,
    index: HashMap<String, usize>,
    contracts: Vec<String>,
    contract_index: HashMap<String, u32>,
    /// Live mode: the index of the chain each source's step is in (`None`: batch mode,
    /// nothing kept).
    by_source: Option<HashMap<RecordRef, u32>>,
}

impl ChainSet {
    /// A set for a live session: a source added again replaces its step, and
    /// [`ChainSet::remove`] takes one out.
    pub fn live() -> ChainSet {
        ChainSet {
            by_source: Some(HashMap::new()),
            ..ChainSet::default()
        }
    }

    /// Whether no verdict of a chain was added.
    pub fn is_empty(&self) -> bool {
        self.chains.is_empty()
    }

    /// Adds a verdict: nothing when it has no [`Verdict::chain`](crate::core::verdict::Verdict::chain).
    pub fn add(&mut self, v: &Verdict) {
        if self.by_source.is_some() {
            self.remove(&v.source);
        }
        let Some(link) = &v.chain else { return };
        let contract = v
            .contract
            .as_ref()
            .map(|c| match self.contract_index.get(c) {
                Some(i) => *i,
                None => {
                    let i = self.contracts.len() as u32;
                    self.contracts.push(c.clone());
                    self.contract_index.insert(c.clone(), i);
                    i
                }
            });
        let mut pointers: Vec<Box<str>> = Vec::new();
        for f in &v.errors {
            if pointers.len() >= MAX_POINTERS {
                break;
            }
            if let Some(p) = &f.pointer
                && !pointers.iter().any(|q| &**q == p)
            {
                pointers.push(p.as_str().into());
            }
        }
        let step = Step {
            attempt: link.attempt,
            order: link.order,
            source: v.source.clone(),
            stage: v.stage,
            decision: v.decision,
            reason: v.reason.clone(),
            first_pointer: v
                .errors
                .first()
                .and_then(|f| f.pointer.as_deref())
                .map(Into::into),
            pointers: pointers.into_boxed_slice(),
            digest: link
                .digest
                .as_deref()
                .and_then(|d| u64::from_str_radix(d, 16).ok()),
            tokens: tokens_of(v),
            contract,
            problem: link.problem.as_deref().map(Into::into),
        };
        let i = match self.index.get(&link.id) {
            Some(i) => *i,
            None => {
                self.chains.push(Acc {
                    id: link.id.clone(),
                    linked_by: link.linked_by,
                    steps: Vec::new(),
                });
                self.index.insert(link.id.clone(), self.chains.len() - 1);
                self.chains.len() - 1
            }
        };
        // an explicit link wins over a natural one for the chain's name
        if link.linked_by != LinkedBy::Natural {
            self.chains[i].linked_by = link.linked_by;
        }
        self.chains[i].steps.push(step);
        if let Some(m) = &mut self.by_source {
            m.insert(v.source.clone(), i as u32);
        }
    }

    /// Live mode: takes the step of `source` out of its chain (a capture that disappeared
    /// or is about to be replaced). Returns the chain's id.
    pub fn remove(&mut self, source: &RecordRef) -> Option<String> {
        let i = self.by_source.as_mut()?.remove(source)? as usize;
        let acc = &mut self.chains[i];
        if let Some(at) = acc.steps.iter().position(|s| s.source == *source) {
            acc.steps.swap_remove(at);
        }
        Some(acc.id.clone())
    }

    /// The report: each chain's steps ordered (`docs/chains.md#order`), its row, the
    /// summary, and the workspace warnings of chains whose numbering repeats or skips or
    /// whose order values are unusable. A natural link seen once is no chain. Chains come
    /// in the order their first attempt was added.
    pub fn finish(&self, budget: &Budget) -> ChainReport {
        self.finish_each(budget, |_| {})
    }

    /// [`ChainSet::finish`], with every chain's attempts in chain order (all of them, not
    /// only the first 100 a row lists): the same index as the report's rows. What the
    /// terminal workbench groups its list by (`docs/chains.md#in-the-terminal-workbench`).
    pub fn finish_with_attempts(&self, budget: &Budget) -> (ChainReport, Vec<Vec<Attempt>>) {
        let mut attempts = Vec::new();
        let report = self.finish_each(budget, |steps| {
            attempts.push(steps.iter().map(|s| Attempt::of(s)).collect());
        });
        (report, attempts)
    }

    /// The report, handing each reported chain's ordered steps to `each` (in row order).
    fn finish_each(&self, budget: &Budget, mut each: impl FnMut(&[&Step])) -> ChainReport {
        let mut rows = Vec::new();
        let mut warnings = Vec::new();
        for acc in &self.chains {
            if acc.steps.is_empty() || acc.linked_by == LinkedBy::Natural && acc.steps.len() < 2 {
                continue;
            }
            let mut steps: Vec<&Step> = acc.steps.iter().collect();
            let ordered = outcome::order(&mut steps);
            warnings.extend(outcome::warnings(&acc.id, &steps, ordered));
            let contract = steps
                .iter()
                .find_map(|s| s.contract)
                .map(|i| self.contracts[i as usize].clone());
            rows.push(outcome::row(
                &acc.id,
                acc.linked_by,
                contract,
                &steps,
                budget,
            ));
            each(&steps);
        }
        let summary = summary::ChainSummary::of(&rows);
        ChainReport {
            rows,
            summary,
            warnings,
        }
    }

    /// Steps kept, over every chain (for measurements: a step is a few dozen bytes plus
    /// its pointers).
    pub fn steps(&self) -> usize {
        self.chains.iter().map(|c| c.steps.len()).sum()
    }
}

/// One attempt of a chain, in chain order, as the terminal workbench lists it: where it is
/// and how it fared (`docs/chains.md#in-the-terminal-workbench`).
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// Where the capture is (its verdict's `source`).
    pub source: RecordRef,
    /// The attempt number the link gave.
    pub attempt: Option<u64>,
    /// The verdict's stage.
    pub stage: Stage,
    /// The verdict's decision.
    pub decision: Decision,
    /// The verdict's reason.
    pub reason: Option<Reason>,
    /// The first finding's pointer.
    pub pointer: Option<Box<str>>,
    /// The distinct pointers of its failing stage's findings (at most 100).
    pub pointers: Box<[Box<str>]>,
    /// Tokens from `meta.usage`.
    pub tokens: Option<u64>,
}

impl Attempt {
    fn of(s: &Step) -> Attempt {
        Attempt {
            source: s.source.clone(),
            attempt: s.attempt,
            stage: s.stage,
            decision: s.decision,
            reason: s.reason.clone(),
            pointer: s.first_pointer.clone(),
            pointers: s.pointers.clone(),
            tokens: s.tokens,
        }
    }
}

/// The chain report of a run (`docs/chains.md#the-report`): `check --format json`'s
/// `chains` object (`rows` and `summary`); the warnings go to the run's workspace warnings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChainReport {
    /// One row per chain, in the order their first attempt was read.
    pub rows: Vec<outcome::ChainRow>,
    /// The summary over the rows.
    pub summary: summary::ChainSummary,
    /// `CHAIN_ATTEMPTS` and `CHAIN_ORDER` warnings (not serialized here: they are the
    /// run's workspace warnings).
    #[serde(skip)]
    pub warnings: Vec<Warning>,
}

impl ChainReport {
    /// Appends another workspace's report (`check` over several workspaces): rows and
    /// warnings concatenated, the summary recomputed.
    pub fn append(&mut self, other: ChainReport) {
        self.rows.extend(other.rows);
        self.warnings.extend(other.warnings);
        self.summary = summary::ChainSummary::of(&self.rows);
    }
}

#[cfg(test)]
mod tests {
    use super::outcome::{Outcome, Waste};
    use super::*;
    use crate::core::verdict::Finding;

    /// A verdict of chain `chain` at `file:line`, attempt `attempt`, failing with `errors`
    /// (`(reason, pointer, decision)`) or ready, with `digest` and `tokens`.
    fn v(
        chain: &str,
        attempt: Option<u64>,
        at: (&str, usize),
        errors: &[(&str, &str, Decision)],
        digest: &str,
        tokens: Option<u64>,
    ) -> Verdict {
        let errors = errors
            .iter()
            .map(|(r, p, d)| {
                let reason = Reason::new(*r);
                let stage = reason.builtin_stage().unwrap_or(Stage::Business);
                Finding::new(stage, reason, "m")
                    .with_pointer(*p)
                    .with_decision(*d)
            })
            .collect();
        let source = RecordRef::new(std::sync::Arc::<str>::from(at.0), Some(at.1));
        let mut v =
            Verdict::from_errors(format!("{chain}#{at:?}"), source, Some("c".into()), errors);
        v.chain = Some(ChainLink {
            id: chain.into(),
            attempt,
            linked_by: LinkedBy::Record,
            order: None,
            digest: Some(digest.into()),
            problem: None,
        });
        if let Some(t) = tokens {
            let mut m = serde_json::Map::new();
            m.insert("usage".into(), serde_json::json!({"total_tokens": t}));
            v.meta = Some(m);
        }
        v
    }

    const RG: Decision = Decision::Regenerate;

    #[test]
    fn outcomes_flags_effects_and_warnings() {
        let mut set = ChainSet::default();
        // added out of order: the attempt numbers order them
        set.add(&v("a", Some(3), ("x", 3), &[], "03", Some(30)));
        set.add(&v(
            "a",
            Some(1),
            ("x", 1),
            &[
                ("SCHEMA_MISMATCH", "/amount", RG),
                ("SCHEMA_MISMATCH", "/currency", RG),
            ],
            "01",
            Some(10),
        ));
        set.add(&v(
            "a",
            Some(2),
            ("x", 2),
            &[
                ("SCHEMA_MISMATCH", "/amount", RG),
                ("SCHEMA_MISMATCH", "/reason", RG),
            ],
            "02",
            Some(20),
        ));
        set.add(&v("b", Some(1), ("x", 4), &[], "0b", None));
        // a reject retried, then the same proposal re-sent after regenerate
        set.add(&v(
            "c",
            Some(1),
            ("y", 1),
            &[("NOT_AUTHORIZED", "/order_id", Decision::Reject)],
            "0c",
            None,
        ));
        set.add(&v(
            "c",
            Some(2),
            ("y", 2),
            &[("SCHEMA_MISMATCH", "/amount", RG)],
            "0d",
            None,
        ));
        set.add(&v(
            "c",
            Some(2),
            ("y", 3),
            &[("SCHEMA_MISMATCH", "/amount", RG)],
            "0d",
            None,
        ));
        set.add(&v(
            "c",
            Some(5),
            ("y", 4),
            &[("SCHEMA_MISMATCH", "/amount", RG)],
            "0e",
            None,
        ));
        let budget = Budget {
            max_attempts: Some(3),
            max_tokens: Some(50),
        };
        let r = set.finish(&budget);
        let a = &r.rows[0];
        assert_eq!(
            (a.chain.as_str(), a.outcome, a.recovered_at, a.attempts),
            ("a", Outcome::Recovered, Some(3), 3)
        );
        assert_eq!((a.tokens, a.tokens_to_recover), (Some(60), Some(60)));
        assert_eq!(a.flags, ["over-budget"]);
        assert_eq!(a.over_budget, ["tokens 60 > max_tokens 50"]);
        let effects: Vec<(usize, &str, &str)> = a
            .effects
            .iter()
            .map(|e| (e.attempt, e.pointer.as_str(), e.effect.as_str()))
            .collect();
        assert_eq!(
            effects,
            [
                (1, "/amount", "persisted"),
                (1, "/currency", "moved"),
                (2, "/amount", "fixed"),
                (2, "/reason", "fixed")
            ]
        );
        assert_eq!(a.sources, ["x:1", "x:2", "x:3"]);
        assert_eq!(r.rows[1].outcome, Outcome::FirstPass);
        let c = &r.rows[2];
        assert_eq!(
            (c.outcome, c.attempts, c.wasted_count),
            (Outcome::Unrecovered, 4, 2)
        );
        let wasted: Vec<(usize, Waste)> = c.wasted.iter().map(|w| (w.attempt, w.why)).collect();
        assert_eq!(wasted, [(2, Waste::AfterReject), (3, Waste::SameProposal)]);
        assert_eq!(c.flags, ["wasted", "over-budget"]);
        assert_eq!(c.over_budget, ["attempts 4 > max_attempts 3"]);
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].code, CHAIN_ATTEMPTS);
        assert_eq!(
            r.warnings[0].message,
            "chain \"c\": attempt 2 appears 2 times (y:2, y:3); attempts 3, 4 missing; its attempts are taken as ordered, never renumbered (docs/chains.md#order)"
        );
        let s = &r.summary;
        assert_eq!(
            (
                s.chains,
                s.first_pass,
                s.recovered,
                s.unrecovered,
                s.attempts
            ),
            (3, 1, 1, 1, 8)
        );
        assert_eq!(s.wasted_attempts.get(&Waste::AfterReject), Some(&1));
        assert_eq!(s.budget_advice[0].p90, 3);
        assert_eq!(s.unrecovered_by_reason[0].reason, Reason::SCHEMA_MISMATCH);
    }

    #[test]
    fn a_natural_link_seen_once_is_no_chain_and_live_sets_replace_by_source() {
        let mut one = v("n", None, ("b1", 1), &[], "01", None);
        if let Some(l) = &mut one.chain {
            l.linked_by = LinkedBy::Natural;
        }
        let mut set = ChainSet::default();
        set.add(&one);
        assert!(set.finish(&Budget::default()).rows.is_empty());
        let mut live = ChainSet::live();
        live.add(&v(
            "a",
            Some(1),
            ("x", 1),
            &[("SCHEMA_MISMATCH", "/a", RG)],
            "01",
            None,
        ));
        live.add(&v(
            "a",
            Some(2),
            ("x", 2),
            &[("SCHEMA_MISMATCH", "/a", RG)],
            "02",
            None,
        ));
        assert_eq!(
            live.finish(&Budget::default()).rows[0].outcome,
            Outcome::Unrecovered
        );
        live.add(&v("a", Some(2), ("x", 2), &[], "02", None));
        assert_eq!(
            live.finish(&Budget::default()).rows[0].outcome,
            Outcome::Recovered
        );
        assert_eq!(
            live.remove(&RecordRef::new(std::sync::Arc::<str>::from("x"), Some(2)))
                .as_deref(),
            Some("a")
        );
        assert_eq!(live.finish(&Budget::default()).rows[0].attempts, 1);
    }

    #[test]
    fn a_chain_of_100000_attempts_keeps_a_bounded_row() {
        let mut set = ChainSet::default();
        for i in 1..=100_000u64 {
            set.add(&v(
                "long",
                Some(i),
                ("big", i as usize),
                &[("SCHEMA_MISMATCH", "/a", RG)],
                "01",
                Some(1),
            ));
        }
        let r = set.finish(&Budget::default());
        let row = &r.rows[0];
        assert_eq!(
            (row.attempts, row.wasted_count, row.tokens),
            (100_000, 99_999, Some(100_000))
        );
        assert_eq!(
            (row.wasted.len(), row.effects.len(), row.sources.len()),
            (100, 100, 100)
        );
        assert!(r.warnings.is_empty());
    }
}
