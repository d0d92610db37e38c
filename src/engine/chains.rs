//! The chains of a live session (`docs/chains.md`), for the front ends that show them as
//! captures change: the terminal workbench's engine thread and `verdict watch --json`.
//! Both feed a [`LiveChains`] every verdict they get (the same core [`ChainSet`] `check`
//! feeds, so the rows are `check`'s rows) and ask it for the report after a run or a batch
//! of changes.

use crate::core::chain::outcome::{ChainRow, Outcome};
use crate::core::chain::{Attempt, ChainGroups, ChainReport, ChainSet, LinkedBy};
use crate::core::config::Budget;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Verdict;
use crate::engine::ids::DUPLICATE_ID;
use std::sync::Arc;

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
    set: Arc<ChainSet>,
}

impl Default for LiveChains {
    fn default() -> LiveChains {
        LiveChains {
            set: Arc::new(ChainSet::live()),
        }
    }
}

impl LiveChains {
    /// Adds (or replaces) the step of `v`'s capture; a verdict in no chain, or only in a
    /// [`lone`] natural one, takes out the step its capture had.
    pub fn add(&mut self, v: &Verdict) {
        if lone(v) {
            Arc::make_mut(&mut self.set).remove(&v.source);
        } else {
            Arc::make_mut(&mut self.set).add(v);
        }
    }

    /// Takes out the step of a capture that disappeared.
    pub fn remove(&mut self, source: &RecordRef) {
        Arc::make_mut(&mut self.set).remove(source);
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

    /// The chains for the terminal workbench (sharing the set until the next change).
    pub fn view(&self, budget: &Budget) -> ChainsView {
        ChainsView::new(self.set.clone(), budget)
    }
}

/// What a collapsed chain row shows ([`ChainsView::heads`]): its set index, id, outcome,
/// attempt count and flags; the rest of its row and its attempts are made on demand
/// ([`ChainsView::chain`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ChainHead {
    /// The chain's index in the set ([`ChainSet::one`]).
    pub index: u32,
    /// The chain's id.
    pub chain: String,
    /// Its outcome.
    pub outcome: Outcome,
    /// How many attempts.
    pub attempts: u32,
    /// `wasted` and `over-budget`, those that apply.
    pub flags: Vec<&'static str>,
}

/// The chains as the terminal workbench shows them (`docs/chains.md#in-the-terminal-workbench`):
/// the summary `check` reports, per chain what its collapsed row shows, and the live set
/// they were made from (shared with the engine until its next change: a step is 40 bytes),
/// from which a chain's full row and attempts are made when they are shown. Memory: about
/// 80 bytes a chain and 4 a capture besides the set (`docs/chains.md#memory`).
#[derive(Debug, Clone, Default)]
pub struct ChainsView {
    /// The report: its summary and warnings (no rows: [`ChainsView::heads`]).
    pub report: ChainReport,
    /// Per chain (report order), what its collapsed row shows.
    pub heads: Vec<ChainHead>,
    /// A set index -> its position in `heads` (`u32::MAX`: not reported).
    row_of: Vec<u32>,
    set: Arc<ChainSet>,
    groups: ChainGroups,
    budget: Budget,
}

impl PartialEq for ChainsView {
    fn eq(&self, other: &ChainsView) -> bool {
        self.report == other.report && self.heads == other.heads
    }
}

impl ChainsView {
    /// The view of a live set under `budget`.
    pub fn new(set: Arc<ChainSet>, budget: &Budget) -> ChainsView {
        let groups = set.groups();
        let mut heads = Vec::new();
        let mut acc = crate::core::chain::summary::SummaryAcc::default();
        let mut warnings = Vec::new();
        let mut row_of = vec![u32::MAX; groups.chains()];
        let walked: Result<(), std::convert::Infallible> =
            set.walk_indexed(&groups, budget, |c, id, steps, ordered, row| {
                warnings.extend(crate::core::chain::outcome::warnings(id, steps, ordered));
                acc.add(&row);
                row_of[c as usize] = heads.len() as u32;
                heads.push(ChainHead {
                    index: c,
                    chain: row.chain,
                    outcome: row.outcome,
                    attempts: row.attempts as u32,
                    flags: row.flags,
                });
                Ok(())
            });
        let Ok(()) = walked;
        let report = ChainReport {
            rows: Vec::new(),
            summary: acc.summary(),
            warnings,
            acc,
            later: Default::default(),
        };
        ChainsView {
            report,
            heads,
            row_of,
            set,
            groups,
            budget: *budget,
        }
    }

    /// Row `i`'s full row and its attempts in chain order (made now: O(its attempts)).
    pub fn chain(&self, i: usize) -> Option<(ChainRow, Vec<Attempt>)> {
        let h = self.heads.get(i)?;
        Some(self.set.one(&self.groups, h.index, &h.chain, &self.budget))
    }

    /// The row index of the chain of the capture at `source`.
    pub fn row_of_source(&self, source: &str) -> Option<usize> {
        let c = self.set.chain_of(&RecordRef::parse(source))?;
        let i = *self.row_of.get(c as usize)?;
        (i != u32::MAX).then_some(i as usize)
    }

    /// The chain of the capture at `source`, its attempts and its position (0-based) in it.
    pub fn of_source(&self, source: &str) -> Option<(ChainRow, Vec<Attempt>, usize)> {
        let (row, attempts) = self.chain(self.row_of_source(source)?)?;
        let k = attempts.iter().position(|a| a.source == source)?;
        Some((row, attempts, k))
    }

    /// Whether there is no chain.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }
}
