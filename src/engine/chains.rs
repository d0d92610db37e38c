//! The chains of a live session (`docs/chains.md`), for the front ends that show them as
//! captures change: the terminal workbench's engine thread and `verdict watch --json`.
//! Both feed a [`LiveChains`] every verdict they get (the same core [`ChainSet`] `check`
//! feeds, so the rows are `check`'s rows) and ask it for the report after a run or a batch
//! of changes.

use crate::core::chain::outcome::ChainRow;
use crate::core::chain::{Attempt, ChainReport, ChainSet, LinkedBy};
use crate::core::config::Budget;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Verdict;
use crate::engine::ids::DUPLICATE_ID;
use std::collections::HashMap;

/// Whether `v`'s only link is a batch line's own id seen once (no other capture shares it:
/// its verdict has no `DUPLICATE_ID` warning): no chain, and nothing is kept for it, as
/// `check` keeps nothing (`docs/chains.md#memory`).
pub fn lone(v: &Verdict) -> bool {
    v.chain
        .as_ref()
        // a trace's key (not the capture's own id) is kept: other captures may share it
        .is_some_and(|l| l.linked_by == LinkedBy::Natural && l.id == v.id)
        && !v.warnings.iter().any(|w| w.code == DUPLICATE_ID)
}

/// A live session's chain set: verdicts added and replaced by source, captures removed.
#[derive(Debug, Clone)]
pub struct LiveChains {
    set: ChainSet,
}

impl Default for LiveChains {
    fn default() -> LiveChains {
        LiveChains {
            set: ChainSet::live(),
        }
    }
}

impl LiveChains {
    /// Adds (or replaces) the step of `v`'s capture; a verdict in no chain, or only in a
    /// [`lone`] natural one, takes out the step its capture had.
    pub fn add(&mut self, v: &Verdict) {
        if lone(v) {
            self.set.remove(&v.source);
        } else {
            self.set.add(v);
        }
    }

    /// Takes out the step of a capture that disappeared.
    pub fn remove(&mut self, source: &RecordRef) {
        self.set.remove(source);
    }

    /// Whether no capture of a chain was added.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Steps kept (one per capture of a chain).
    pub fn steps(&self) -> usize {
        self.set.steps()
    }

    /// The report under `budget` (`verdict.toml`'s `[budget]` as it is now).
    pub fn report(&self, budget: &Budget) -> ChainReport {
        self.set.finish(budget)
    }

    /// The report with every chain's attempts, for the terminal workbench.
    pub fn view(&self, budget: &Budget) -> ChainsView {
        let (report, attempts) = self.set.finish_with_attempts(budget);
        ChainsView::new(report, attempts)
    }
}

/// The chains as the terminal workbench shows them (`docs/chains.md#in-the-terminal-workbench`):
/// the rows and summary `check` reports, every chain's attempts in chain order, and which
/// chain and position each capture is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChainsView {
    /// The report: one row per chain, the summary.
    pub report: ChainReport,
    /// Per row (same index), its attempts in chain order.
    pub attempts: Vec<Vec<Attempt>>,
    /// A capture's `source` (`captures/a.jsonl:3`) -> (row index, position in its chain).
    pub by_source: HashMap<String, (u32, u32)>,
}

impl ChainsView {
    /// The view of a report and its attempts ([`ChainSet::finish_with_attempts`]).
    pub fn new(report: ChainReport, attempts: Vec<Vec<Attempt>>) -> ChainsView {
        let mut by_source = HashMap::new();
        for (i, chain) in attempts.iter().enumerate() {
            for (k, a) in chain.iter().enumerate() {
                by_source.insert(a.source.to_string(), (i as u32, k as u32));
            }
        }
        ChainsView {
            report,
            attempts,
            by_source,
        }
    }

    /// The chain of the capture at `source` and its position (0-based) in it.
    pub fn of_source(&self, source: &str) -> Option<(&ChainRow, &[Attempt], usize)> {
        let &(i, k) = self.by_source.get(source)?;
        let i = i as usize;
        Some((&self.report.rows[i], &self.attempts[i], k as usize))
    }

    /// Whether there is no chain.
    pub fn is_empty(&self) -> bool {
        self.report.rows.is_empty()
    }
}
