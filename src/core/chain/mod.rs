//! Self-correction loops: captures linked into attempt chains, each chain's outcome, flags
//! and feedback effects, and the summary over them (`docs/chains.md`).
//!
//! [`link`] says which chain a capture is an attempt of (the pipeline puts it on the
//! verdict as [`Verdict::chain`](crate::core::verdict::Verdict::chain)); a [`ChainSet`] is
//! fed the verdicts as they come, in any order, and keeps per attempt only a small step
//! (`Step`: 64 bytes, never the verdict); [`ChainSet::finish`] orders each chain's steps
//! and gives the [`ChainReport`]: one [`outcome::ChainRow`] per chain and the [`summary::ChainSummary`].

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
use std::sync::Arc;

/// The workspace warning for a chain whose attempt numbers repeat or skip, or whose
/// attempts' `pattern` numbers cannot be read (`docs/chains.md#warnings`).
pub const CHAIN_ATTEMPTS: &str = "CHAIN_ATTEMPTS";
/// The workspace warning for a chain some of whose attempts have no usable `[chains]
/// order` value (`docs/chains.md#warnings`).
pub const CHAIN_ORDER: &str = "CHAIN_ORDER";

/// The most pointers a step keeps of its failing stage (a verdict keeps at most
/// [`MAX_ERRORS`](crate::core::verdict::MAX_ERRORS) findings anyway).
const MAX_POINTERS: usize = 100;

/// Steps are kept in chunks of this many (allocated once each, never moved: a growing
/// vector of a million steps would copy itself and hold twice its size at its last growth).
const CHUNK: usize = 1 << 16;

/// "None" for the `u32` indexes of a [`Step`]: no contract, no reason; as its `chain`, a
/// step taken out of a live set (its slot free for the next one).
const NONE: u32 = u32::MAX;

// the bits of `Step::flags`
const HAS_ATTEMPT: u8 = 1;
const HAS_ORDER: u8 = 2;
const HAS_DIGEST: u8 = 4;
const HAS_TOKENS: u8 = 8;
const HAS_LINE: u8 = 16;
const FIRST_HAS_POINTER: u8 = 32;
const HAS_PROBLEM: u8 = 64;

/// What a chain keeps of one attempt: enough for its outcome, flags and effects, nothing
/// of the verdict (`docs/chains.md#memory`). Fixed-size, 64 bytes: the chain, file, reason
/// and contract are indexes into the set's tables (each name kept once), the failing
/// pointers a range of the set's interned pointer ids (4 bytes a pointer), the link's rare
/// problem text in a side map.
#[derive(Debug, Clone, Copy)]
struct Step {
    /// The attempt number the link gave (with [`HAS_ATTEMPT`]).
    attempt: u64,
    /// The `[chains] order` value (with [`HAS_ORDER`]).
    order: f64,
    /// The proposal's digest ([`ChainLink::digest`], with [`HAS_DIGEST`]).
    digest: u64,
    /// Tokens from `meta.usage` (with [`HAS_TOKENS`]).
    tokens: u64,
    /// The 1-based line in a log (with [`HAS_LINE`]).
    line: u64,
    /// The chain's index; [`NONE`]: a free slot.
    chain: u32,
    /// The capture file's index in the set's files.
    file: u32,
    /// The contract's index in the set's contracts, or [`NONE`].
    contract: u32,
    /// The reason's index in the set's reasons, or [`NONE`].
    reason: u32,
    /// Where its pointer ids start in the set's pointer ids.
    pointers: u32,
    /// How many pointer ids (at most [`MAX_POINTERS`]).
    npointers: u8,
    /// The verdict's stage.
    stage: Stage,
    /// The verdict's decision.
    decision: Decision,
    /// The `HAS_*` and [`FIRST_HAS_POINTER`] bits.
    flags: u8,
}

/// One attempt as the outcome reads it: a step (`Step`) and the tables its indexes point into.
#[derive(Clone, Copy)]
pub struct StepView<'a> {
    step: &'a Step,
    set: &'a ChainSet,
    index: u32,
}

impl<'a> StepView<'a> {
    fn bit(&self, b: u8) -> bool {
        self.step.flags & b != 0
    }

    /// The attempt number the link gave.
    pub fn attempt(&self) -> Option<u64> {
        self.bit(HAS_ATTEMPT).then_some(self.step.attempt)
    }

    /// The `[chains] order` value.
    pub fn order(&self) -> Option<f64> {
        self.bit(HAS_ORDER).then_some(self.step.order)
    }

    /// The proposal's digest.
    pub fn digest(&self) -> Option<u64> {
        self.bit(HAS_DIGEST).then_some(self.step.digest)
    }

    /// Tokens from `meta.usage`.
    pub fn tokens(&self) -> Option<u64> {
        self.bit(HAS_TOKENS).then_some(self.step.tokens)
    }

    /// The verdict's stage.
    pub fn stage(&self) -> Stage {
        self.step.stage
    }

    /// The verdict's decision.
    pub fn decision(&self) -> Decision {
        self.step.decision
    }

    /// The verdict's reason.
    pub fn reason(&self) -> Option<&'a Reason> {
        self.set.reasons.get(self.step.reason as usize)
    }

    /// The interned ids of the distinct pointers of the failing stage's findings.
    pub fn pointer_ids(&self) -> &'a [u32] {
        let at = self.step.pointers as usize;
        &self.set.pointer_ids[at..at + self.step.npointers as usize]
    }

    /// The pointer of an id of [`StepView::pointer_ids`].
    pub fn pointer(&self, id: u32) -> &'a str {
        &self.set.pointer_names[id as usize]
    }

    /// The first finding's pointer.
    pub fn first_pointer(&self) -> Option<&'a str> {
        self.bit(FIRST_HAS_POINTER)
            .then(|| self.pointer(self.pointer_ids()[0]))
    }

    /// The capture file's name.
    pub fn file(&self) -> &'a str {
        &self.set.files[self.step.file as usize]
    }

    /// The line in a log.
    pub fn line(&self) -> Option<usize> {
        self.bit(HAS_LINE).then_some(self.step.line as usize)
    }

    /// Where the capture is (made on demand: the step keeps two numbers).
    pub fn source(&self) -> RecordRef {
        RecordRef::new(self.set.files[self.step.file as usize].clone(), self.line())
    }

    /// File name, then line: [`RecordRef`]'s order.
    pub fn cmp_source(&self, other: &StepView<'_>) -> std::cmp::Ordering {
        (self.file(), self.line()).cmp(&(other.file(), other.line()))
    }

    /// The link's problem, if any (an unusable attempt number or order value).
    pub fn problem(&self) -> Option<&'a str> {
        if !self.bit(HAS_PROBLEM) {
            return None;
        }
        self.set.problems.get(&self.index).map(|p| &**p)
    }

    /// The contract's index in the set.
    fn contract(&self) -> Option<u32> {
        (self.step.contract != NONE).then_some(self.step.contract)
    }
}

/// The tokens of one attempt from its `meta.usage` (`docs/chains.md#tokens`):
/// `total_tokens`, else `input_tokens` + `output_tokens` when both are there.
pub fn tokens_of(v: &Verdict) -> Option<u64> {
    let usage = v.meta.as_ref()?.get("usage")?;
    let n = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64);
    n("total_tokens").or_else(|| Some(n("input_tokens")?.saturating_add(n("output_tokens")?)))
}

/// Interns a name: its index in `names`, added when new.
fn intern<
    K: Clone + Eq + std::hash::Hash + std::borrow::Borrow<Q>,
    Q: Eq + std::hash::Hash + ?Sized,
>(
    names: &mut Vec<K>,
    index: &mut HashMap<K, u32>,
    name: &Q,
    make: impl FnOnce() -> K,
) -> u32 {
    if let Some(i) = index.get(name) {
        return *i;
    }
    let i = names.len() as u32;
    let k = make();
    names.push(k.clone());
    index.insert(k, i);
    i
}

/// Which rows [`ChainSet::finish_keeping`] keeps (every row goes into the summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// Every row (`check --format json` and `jsonl`, `verdict chains --format json`).
    #[default]
    All,
    /// The unrecovered or flagged ones, without their `sources` and `effects` lists: what
    /// `verdict chains`' table prints of them.
    Notable,
    /// None: the summary only (`check`'s human report).
    None,
}

impl Keep {
    /// `row` as this keeps it, or `None` when it is not kept.
    fn keeps(self, mut row: outcome::ChainRow) -> Option<outcome::ChainRow> {
        match self {
            Keep::All => Some(row),
            Keep::Notable
                if row.outcome == outcome::Outcome::Unrecovered || !row.flags.is_empty() =>
            {
                row.sources = Vec::new();
                row.effects = Vec::new();
                Some(row)
            }
            Keep::Notable | Keep::None => None,
        }
    }
}

/// A finished set whose rows a [`ChainReport`] makes again when it gives them
/// ([`ChainSet::finish_later`]).
#[derive(Debug)]
struct Later {
    set: ChainSet,
    budget: Budget,
    keep: Keep,
}

/// The finished sets of a report, in row order (equal when they are the same sets).
#[derive(Debug, Clone, Default)]
pub struct LaterRows(Vec<Arc<Later>>);

impl PartialEq for LaterRows {
    fn eq(&self, other: &LaterRows) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// The chains of one workspace, fed verdicts in any order ([`ChainSet::add`]), or updated
/// and removed by source for a live session ([`ChainSet::live`]).
#[derive(Debug, Clone, Default)]
pub struct ChainSet {
    /// The steps, in chunks of [`CHUNK`].
    chunks: Vec<Vec<Step>>,
    /// How many slots of `chunks` are used (free ones included).
    len: usize,
    /// Live mode: the slots of removed steps, for the next ones.
    free: Vec<u32>,
    /// Per chain: how it was linked and how many steps it has.
    chains: Vec<(LinkedBy, u32)>,
    /// A chain's id -> its index (each id kept once).
    index: HashMap<Box<str>, u32>,
    files: Vec<Arc<str>>,
    file_index: HashMap<Arc<str>, u32>,
    reasons: Vec<Reason>,
    reason_index: HashMap<Reason, u32>,
    contracts: Vec<String>,
    contract_index: HashMap<String, u32>,
    pointer_names: Vec<Arc<str>>,
    pointer_index: HashMap<Arc<str>, u32>,
    /// The steps' pointer ids, each step's a range.
    pointer_ids: Vec<u32>,
    /// Live mode: pointer ids no step uses any more (compacted when they are half).
    garbage: usize,
    /// The problem texts of the steps that have one, by slot.
    problems: HashMap<u32, Box<str>>,
    /// Live mode: the slot of each source's step, by (file index, line; 0: a file of one
    /// record) (`None`: batch mode, nothing kept).
    by_source: Option<HashMap<(u32, u64), u32>>,
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

    fn step(&self, i: u32) -> &Step {
        &self.chunks[i as usize / CHUNK][i as usize % CHUNK]
    }

    fn step_mut(&mut self, i: u32) -> &mut Step {
        &mut self.chunks[i as usize / CHUNK][i as usize % CHUNK]
    }

    fn view(&self, i: u32) -> StepView<'_> {
        StepView {
            step: self.step(i),
            set: self,
            index: i,
        }
    }

    fn file_of(&mut self, file: &Arc<str>) -> u32 {
        intern(&mut self.files, &mut self.file_index, &**file, || {
            file.clone()
        })
    }

    /// Adds a verdict: nothing when it has no [`Verdict::chain`](crate::core::verdict::Verdict::chain).
    pub fn add(&mut self, v: &Verdict) {
        if self.by_source.is_some() {
            self.remove(&v.source);
        }
        let Some(link) = &v.chain else { return };
        let contract = v.contract.as_ref().map_or(NONE, |c| {
            intern(
                &mut self.contracts,
                &mut self.contract_index,
                c.as_str(),
                || c.clone(),
            )
        });
        let reason = v.reason.as_ref().map_or(NONE, |r| {
            intern(&mut self.reasons, &mut self.reason_index, r, || r.clone())
        });
        let start = self.pointer_ids.len();
        let first_has_pointer = v.errors.first().is_some_and(|f| f.pointer.is_some());
        for f in &v.errors {
            if self.pointer_ids.len() - start >= MAX_POINTERS {
                break;
            }
            if let Some(p) = &f.pointer {
                let id = intern(
                    &mut self.pointer_names,
                    &mut self.pointer_index,
                    p.as_str(),
                    || Arc::from(p.as_str()),
                );
                if !self.pointer_ids[start..].contains(&id) {
                    self.pointer_ids.push(id);
                }
            }
        }
        let digest = link
            .digest
            .as_deref()
            .and_then(|d| u64::from_str_radix(d, 16).ok());
        let tokens = tokens_of(v);
        let file = self.file_of(v.source.file());
        let line = v.source.line();
        let bits = [
            (link.attempt.is_some(), HAS_ATTEMPT),
            (link.order.is_some(), HAS_ORDER),
            (digest.is_some(), HAS_DIGEST),
            (tokens.is_some(), HAS_TOKENS),
            (line.is_some(), HAS_LINE),
            (first_has_pointer, FIRST_HAS_POINTER),
            (link.problem.is_some(), HAS_PROBLEM),
        ];
        let chain = match self.index.get(link.id.as_str()) {
            Some(i) => *i,
            None => {
                let i = self.chains.len() as u32;
                self.chains.push((link.linked_by, 0));
                self.index.insert(link.id.as_str().into(), i);
                i
            }
        };
        // an explicit link wins over a natural one for the chain's name
        if link.linked_by != LinkedBy::Natural {
            self.chains[chain as usize].0 = link.linked_by;
        }
        self.chains[chain as usize].1 += 1;
        let step = Step {
            attempt: link.attempt.unwrap_or(0),
            order: link.order.unwrap_or(0.0),
            digest: digest.unwrap_or(0),
            tokens: tokens.unwrap_or(0),
            line: line.unwrap_or(0) as u64,
            chain,
            file,
            contract,
            reason,
            pointers: start as u32,
            npointers: (self.pointer_ids.len() - start) as u8,
            stage: v.stage,
            decision: v.decision,
            flags: bits
                .iter()
                .filter(|(on, _)| *on)
                .fold(0, |acc, (_, b)| acc | b),
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                *self.step_mut(slot) = step;
                slot
            }
            None => {
                if self.len.is_multiple_of(CHUNK) {
                    self.chunks.push(Vec::with_capacity(CHUNK));
                }
                if let Some(c) = self.chunks.last_mut() {
                    c.push(step);
                }
                self.len += 1;
                (self.len - 1) as u32
            }
        };
        if let Some(p) = &link.problem {
            self.problems.insert(slot, p.as_str().into());
        }
        if let Some(m) = &mut self.by_source {
            m.insert((file, line.unwrap_or(0) as u64), slot);
        }
    }

    /// Live mode: takes the step of `source` out of its chain (a capture that disappeared
    /// or is about to be replaced). Returns whether it had one.
    pub fn remove(&mut self, source: &RecordRef) -> bool {
        let Some(&file) = self.file_index.get(&**source.file()) else {
            return false;
        };
        let Some(slot) = self
            .by_source
            .as_mut()
            .and_then(|m| m.remove(&(file, source.line().unwrap_or(0) as u64)))
        else {
            return false;
        };
        let step = *self.step(slot);
        self.step_mut(slot).chain = NONE;
        self.free.push(slot);
        self.problems.remove(&slot);
        self.chains[step.chain as usize].1 -= 1;
        self.garbage += step.npointers as usize;
        if self.garbage > 4096 && self.garbage * 2 > self.pointer_ids.len() {
            self.compact_pointers();
        }
        true
    }

    /// Live mode: drops the pointer ids of removed steps.
    fn compact_pointers(&mut self) {
        let mut ids = Vec::with_capacity(self.pointer_ids.len() - self.garbage);
        for c in &mut self.chunks {
            for s in c.iter_mut().filter(|s| s.chain != NONE) {
                let at = s.pointers as usize;
                let start = ids.len() as u32;
                ids.extend_from_slice(&self.pointer_ids[at..at + s.npointers as usize]);
                s.pointers = start;
            }
        }
        self.pointer_ids = ids;
        self.garbage = 0;
    }

    /// The report: each chain's steps ordered (`docs/chains.md#order`), its row, the
    /// summary, and the workspace warnings of chains whose numbering repeats or skips or
    /// whose order values are unusable. A natural link seen once is no chain. Chains come
    /// in the order their first attempt was added.
    pub fn finish(&self, budget: &Budget) -> ChainReport {
        self.finish_each(budget, Keep::All, |_| {})
    }

    /// [`ChainSet::finish`], keeping only the rows `keep` says (the summary counts them
    /// all): at a million attempts the rows would weigh more than the steps.
    pub fn finish_keeping(&self, budget: &Budget, keep: Keep) -> ChainReport {
        self.finish_each(budget, keep, |_| {})
    }

    /// [`ChainSet::finish`], with every chain's attempts in chain order (all of them, not
    /// only the first 100 a row lists): the same index as the report's rows. What the
    /// terminal workbench groups its list by (`docs/chains.md#in-the-terminal-workbench`).
    pub fn finish_with_attempts(&self, budget: &Budget) -> (ChainReport, Vec<Vec<Attempt>>) {
        let mut attempts = Vec::new();
        let report = self.finish_each(budget, Keep::All, |steps| {
            attempts.push(steps.iter().map(Attempt::of).collect());
        });
        (report, attempts)
    }

    /// [`ChainSet::finish_keeping`] that keeps the set instead of the rows: the summary and
    /// the warnings now, each row `keep` says made again, one at a time, when the report
    /// gives them ([`ChainReport::each_row`]: `check --format json` and `jsonl`, `verdict
    /// chains`). A row is about a kilobyte, a step 64 bytes (`docs/chains.md#memory`).
    pub fn finish_later(self, budget: &Budget, keep: Keep) -> ChainReport {
        let mut report = self.finish_keeping(budget, Keep::None);
        if keep != Keep::None && report.summary.chains > 0 {
            report.later.0.push(Arc::new(Later {
                set: self,
                budget: *budget,
                keep,
            }));
        }
        report
    }

    /// The report, handing each reported chain's ordered steps to `each` (in row order).
    fn finish_each(
        &self,
        budget: &Budget,
        keep: Keep,
        mut each: impl FnMut(&[StepView<'_>]),
    ) -> ChainReport {
        let mut rows = Vec::new();
        let mut warnings = Vec::new();
        let mut acc = summary::SummaryAcc::default();
        let walked: Result<(), std::convert::Infallible> =
            self.walk(budget, |id, steps, ordered, row| {
                warnings.extend(outcome::warnings(id, steps, ordered));
                acc.add(&row);
                each(steps);
                if let Some(row) = keep.keeps(row) {
                    rows.push(row);
                }
                Ok(())
            });
        let Ok(()) = walked;
        ChainReport {
            rows,
            summary: acc.summary(),
            warnings,
            acc,
            later: LaterRows::default(),
        }
    }

    /// Every reported chain in row order (the order its first attempt was added; a natural
    /// link seen once left out): its id, its ordered steps, how they were ordered and its
    /// row, handed to `f` one at a time; stops at `f`'s first error.
    fn walk<E>(
        &self,
        budget: &Budget,
        mut f: impl FnMut(&str, &[StepView<'_>], outcome::Ordered, outcome::ChainRow) -> Result<(), E>,
    ) -> Result<(), E> {
        self.walk_indexed(&self.groups(), budget, |_, id, steps, ordered, row| {
            f(id, steps, ordered, row)
        })
    }

    /// The slots grouped by chain (a counting sort: 4 bytes a step, 4 a chain).
    pub fn groups(&self) -> ChainGroups {
        let mut start: Vec<u32> = Vec::with_capacity(self.chains.len() + 1);
        let mut at = 0u32;
        for (_, n) in &self.chains {
            start.push(at);
            at += n;
        }
        start.push(at);
        let mut fill = start.clone();
        let mut slots = vec![0u32; at as usize];
        for i in 0..self.len as u32 {
            let c = self.step(i).chain;
            if c != NONE {
                slots[fill[c as usize] as usize] = i;
                fill[c as usize] += 1;
            }
        }
        ChainGroups { start, slots }
    }

    /// Live mode: the index of the chain the capture at `source` is a step of.
    pub fn chain_of(&self, source: &RecordRef) -> Option<u32> {
        let file = *self.file_index.get(&**source.file())?;
        let slot = *self
            .by_source
            .as_ref()?
            .get(&(file, source.line().unwrap_or(0) as u64))?;
        Some(self.step(slot).chain).filter(|&c| c != NONE)
    }

    /// One chain's row and its attempts in chain order, made from its steps alone (O(its
    /// attempts)): chain `c` (an index [`ChainSet::walk_indexed`] gave, `id` its id) of
    /// `groups` ([`ChainSet::groups`] of this set as it is). The same row and attempts the
    /// whole report gives it.
    pub fn one(
        &self,
        groups: &ChainGroups,
        c: u32,
        id: &str,
        budget: &Budget,
    ) -> (outcome::ChainRow, Vec<Attempt>) {
        let c = c as usize;
        let range = groups.start[c] as usize..groups.start[c + 1] as usize;
        let mut steps: Vec<StepView<'_>> =
            groups.slots[range].iter().map(|&i| self.view(i)).collect();
        outcome::order(&mut steps);
        let contract = steps
            .iter()
            .find_map(StepView::contract)
            .map(|i| self.contracts[i as usize].clone());
        let row = outcome::row(id, self.chains[c].0, contract, &steps, budget);
        (row, steps.iter().map(Attempt::of).collect())
    }

    /// `ChainSet::walk` over `groups` ([`ChainSet::groups`] of this set), with each
    /// chain's index in the set (what [`ChainSet::one`] takes).
    pub fn walk_indexed<E>(
        &self,
        groups: &ChainGroups,
        budget: &Budget,
        mut f: impl FnMut(
            u32,
            &str,
            &[StepView<'_>],
            outcome::Ordered,
            outcome::ChainRow,
        ) -> Result<(), E>,
    ) -> Result<(), E> {
        let (start, slots) = (&groups.start, &groups.slots);
        let mut ids: Vec<&str> = vec![""; self.chains.len()];
        for (id, i) in &self.index {
            ids[*i as usize] = id;
        }
        let mut steps: Vec<StepView<'_>> = Vec::new();
        for (c, &(linked_by, n)) in self.chains.iter().enumerate() {
            if n == 0 || linked_by == LinkedBy::Natural && n < 2 {
                continue;
            }
            steps.clear();
            let range = start[c] as usize..start[c + 1] as usize;
            steps.extend(slots[range].iter().map(|&i| self.view(i)));
            let ordered = outcome::order(&mut steps);
            let contract = steps
                .iter()
                .find_map(StepView::contract)
                .map(|i| self.contracts[i as usize].clone());
            let row = outcome::row(ids[c], linked_by, contract, &steps, budget);
            f(c as u32, ids[c], &steps, ordered, row)?;
        }
        Ok(())
    }

    /// Steps kept, over every chain (for measurements: a step is 64 bytes plus 4 a
    /// pointer).
    pub fn steps(&self) -> usize {
        self.chains.iter().map(|c| c.1 as usize).sum()
    }

    /// The bytes the set holds on the heap (its steps, tables and indexes; estimated from
    /// capacities, the names' bytes counted): what `docs/chains.md#memory` reports.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let map = |n: usize, entry: usize| n * (entry + 1) * 8 / 7;
        let steps = self.chunks.iter().map(|c| c.capacity()).sum::<usize>() * size_of::<Step>();
        let names = self.index.keys().map(|k| k.len()).sum::<usize>()
            + self
                .pointer_names
                .iter()
                .map(|p| p.len() + 16)
                .sum::<usize>()
            + self.files.iter().map(|p| p.len() + 16).sum::<usize>();
        steps
            + self.free.capacity() * 4
            + self.chains.capacity() * size_of::<(LinkedBy, u32)>()
            + map(self.index.capacity(), size_of::<(Box<str>, u32)>())
            + self.pointer_ids.capacity() * 4
            + self.pointer_names.capacity() * 16
            + map(self.pointer_index.capacity(), size_of::<(Arc<str>, u32)>())
            + self
                .by_source
                .as_ref()
                .map_or(0, |m| map(m.capacity(), size_of::<((u32, u64), u32)>()))
            + names
    }
}

/// A set's step slots grouped by chain ([`ChainSet::groups`]): chain `c`'s slots are
/// `slots[start[c]..start[c + 1]]`, in the order they were added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainGroups {
    start: Vec<u32>,
    slots: Vec<u32>,
}

impl ChainGroups {
    /// How many chains (reported or not).
    pub fn chains(&self) -> usize {
        self.start.len().saturating_sub(1)
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
    fn of(s: &StepView<'_>) -> Attempt {
        Attempt {
            source: s.source(),
            attempt: s.attempt(),
            stage: s.stage(),
            decision: s.decision(),
            reason: s.reason().cloned(),
            pointer: s.first_pointer().map(Into::into),
            pointers: s
                .pointer_ids()
                .iter()
                .map(|&p| s.pointer(p).into())
                .collect(),
            tokens: s.tokens(),
        }
    }
}

/// The chain report of a run (`docs/chains.md#the-report`): `check --format json`'s
/// `chains` object (`rows` and `summary`, serialized with every row of
/// [`ChainReport::each_row`]); the warnings go to the run's workspace warnings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChainReport {
    /// The rows kept, one per chain, in the order their first attempt was read (none of
    /// those [`ChainSet::finish_later`] makes again when they are given).
    pub rows: Vec<outcome::ChainRow>,
    /// The summary over every row.
    pub summary: summary::ChainSummary,
    /// `CHAIN_ATTEMPTS` and `CHAIN_ORDER` warnings (not serialized here: they are the
    /// run's workspace warnings).
    pub warnings: Vec<Warning>,
    /// What the summary was made of, for [`ChainReport::append`] (the rows may not all be
    /// kept: [`Keep`]).
    pub acc: summary::SummaryAcc,
    /// The sets whose rows are made again when they are given, after [`ChainReport::rows`].
    pub later: LaterRows,
}

impl ChainReport {
    /// Appends another workspace's report (`check` over several workspaces): rows and
    /// warnings concatenated, the summary recomputed.
    pub fn append(&mut self, other: ChainReport) {
        self.rows.extend(other.rows);
        self.warnings.extend(other.warnings);
        self.later.0.extend(other.later.0);
        self.acc.merge(other.acc);
        self.summary = self.acc.summary();
    }

    /// Hands every row to `f` in report order: the kept [`ChainReport::rows`], then those
    /// of each set [`ChainSet::finish_later`] kept, made again one at a time (none of them
    /// kept: memory stays the set's). Stops at `f`'s first error.
    ///
    /// # Errors
    /// `f`'s.
    pub fn each_row<E>(
        &self,
        mut f: impl FnMut(&outcome::ChainRow) -> Result<(), E>,
    ) -> Result<(), E> {
        for row in &self.rows {
            f(row)?;
        }
        for later in &self.later.0 {
            later
                .set
                .walk(&later.budget, |_, _, _, row| match later.keep.keeps(row) {
                    Some(row) => f(&row),
                    None => Ok(()),
                })?;
        }
        Ok(())
    }

    /// The bytes the report holds on the heap: its kept rows (their strings and lists,
    /// estimated from capacities) and the sets it makes rows of again. For the
    /// measurement in `docs/chains.md#memory`.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let s = |x: &String| x.capacity();
        let rows: usize = self
            .rows
            .iter()
            .map(|r| {
                r.chain.capacity()
                    + r.contract.as_ref().map_or(0, s)
                    + r.first_failure
                        .as_ref()
                        .map_or(0, |f| f.pointer.as_ref().map_or(0, s))
                    + r.flags.capacity() * 16
                    + r.wasted.capacity() * size_of::<outcome::Wasted>()
                    + r.over_budget.iter().map(|b| b.capacity() + 24).sum::<usize>()
                    + r.effects
                        .iter()
                        .map(|e| e.pointer.capacity() + size_of::<outcome::PointerEffect>())
                        .sum::<usize>()
                    + r.sources.iter().map(|x| x.capacity() + 24).sum::<usize>()
                    // a BTreeMap node per non-empty map
                    + (r.wasted_by.len().min(1) + r.effect_counts.len().min(1)) * 200
            })
            .sum();
        self.rows.capacity() * size_of::<outcome::ChainRow>()
            + rows
            + self
                .later
                .0
                .iter()
                .map(|l| l.set.heap_bytes())
                .sum::<usize>()
    }
}

impl Serialize for ChainReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ChainReport", 2)?;
        st.serialize_field("rows", &Rows(self))?;
        st.serialize_field("summary", &self.summary)?;
        st.end()
    }
}

/// A report's rows as a JSON array, made one at a time ([`ChainReport::each_row`]).
struct Rows<'a>(&'a ChainReport);

impl Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        self.0.each_row(|row| seq.serialize_element(row))?;
        seq.end()
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
        assert!(live.remove(&RecordRef::new(std::sync::Arc::<str>::from("x"), Some(2))));
        assert!(!live.remove(&RecordRef::new(std::sync::Arc::<str>::from("x"), Some(2))));
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

    /// Chains `a0` .. `a{n-1}`, 3 attempts each: failing at `/p{k}` twice, then ready.
    fn three_attempt_chains(n: usize) -> Vec<Verdict> {
        let mut out = Vec::new();
        for c in 0..n {
            for a in 1..=3u64 {
                let p = format!("/p{}", c % 7);
                let errors: Vec<(&str, &str, Decision)> = if a < 3 {
                    vec![("SCHEMA_MISMATCH", &p, RG)]
                } else {
                    Vec::new()
                };
                out.push(v(
                    &format!("a{c}"),
                    Some(a),
                    ("f", c * 3 + a as usize),
                    &errors,
                    &format!("{a:02x}"),
                    Some(a * 10),
                ));
            }
        }
        out
    }

    #[test]
    fn rows_not_kept_still_count_in_the_summary_and_reports_append() {
        let mut set = ChainSet::default();
        let mut vs = three_attempt_chains(5);
        // chain a4 never recovers: notable
        vs.pop();
        for v in &vs {
            set.add(v);
        }
        let b = Budget::default();
        let all = set.finish(&b);
        let none = set.finish_keeping(&b, Keep::None);
        let notable = set.finish_keeping(&b, Keep::Notable);
        assert_eq!(all.rows.len(), 5);
        assert!(none.rows.is_empty());
        assert_eq!(
            notable
                .rows
                .iter()
                .map(|r| r.chain.as_str())
                .collect::<Vec<_>>(),
            ["a4"]
        );
        assert!(notable.rows[0].sources.is_empty() && notable.rows[0].effects.is_empty());
        assert_eq!((none.summary.chains, none.summary.recovered), (5, 4));
        assert_eq!(none.summary, all.summary);
        assert_eq!(notable.summary, all.summary);
        // two workspaces: the summary over both, kept rows or not
        let mut twice = set.finish_keeping(&b, Keep::None);
        twice.append(set.finish_keeping(&b, Keep::None));
        let mut rows = all.rows.clone();
        rows.extend(all.rows.clone());
        assert_eq!(twice.summary, summary::ChainSummary::of(&rows));
        assert_eq!(twice.summary.chains, 10);
    }

    #[test]
    fn a_report_made_later_gives_the_rows_summary_and_json_of_one_that_kept_them() {
        let mut vs = three_attempt_chains(5);
        // chain a4 never recovers: notable
        vs.pop();
        let b = Budget {
            max_attempts: Some(2),
            ..Budget::default()
        };
        let (mut one, mut two) = (ChainSet::default(), ChainSet::default());
        for v in &vs {
            one.add(v);
        }
        for v in vs.iter().rev() {
            two.add(v);
        }
        for keep in [Keep::All, Keep::Notable] {
            let mut kept = one.finish_keeping(&b, keep);
            kept.append(two.finish_keeping(&b, keep));
            let mut later = one.clone().finish_later(&b, keep);
            later.append(two.clone().finish_later(&b, keep));
            assert!(later.rows.is_empty());
            assert_eq!(later.later.0.len(), 2);
            let mut given = Vec::new();
            later
                .each_row(|r| {
                    given.push(r.clone());
                    Ok::<(), ()>(())
                })
                .unwrap();
            assert_eq!(given, kept.rows, "{keep:?}");
            assert_eq!(later.summary, kept.summary);
            assert_eq!(later.warnings, kept.warnings);
            assert_eq!(
                serde_json::to_string_pretty(&later).unwrap(),
                serde_json::to_string_pretty(&kept).unwrap()
            );
        }
        // the second set was read backwards: its chains come in that order
        let all = two.finish(&b);
        let chains: Vec<&str> = all.rows.iter().map(|r| r.chain.as_str()).collect();
        assert_eq!(chains, ["a4", "a3", "a2", "a1", "a0"]);
        let later = two.clone().finish_later(&b, Keep::Notable);
        let mut notable = Vec::new();
        later
            .each_row(|r| {
                notable.push((r.chain.clone(), r.flags.clone(), r.sources.len()));
                Ok::<(), ()>(())
            })
            .unwrap();
        // a4 (2 attempts) never recovers; the others are over max_attempts 2
        assert_eq!(notable.len(), 5);
        assert_eq!(notable[0], ("a4".to_string(), Vec::<&str>::new(), 0));
        assert_eq!(notable[1], ("a3".to_string(), vec!["over-budget"], 0));
        // nothing kept for None, and an error stops the rows
        assert!(two.clone().finish_later(&b, Keep::None).later.0.is_empty());
        let mut n = 0;
        assert_eq!(
            later.each_row(|_| {
                n += 1;
                if n == 2 { Err("stop") } else { Ok(()) }
            }),
            Err("stop")
        );
        assert_eq!(n, 2);
    }

    #[test]
    fn a_live_set_edited_over_and_over_reports_what_a_fresh_set_reports() {
        // every capture replaced many times (the pointer ids of the old steps compacted
        // away), some removed: the same rows as a set fed the last verdicts once
        let vs = three_attempt_chains(400);
        let mut live = ChainSet::live();
        for round in 0..6 {
            for (i, v) in vs.iter().enumerate() {
                let mut v = v.clone();
                if round < 5 {
                    // an earlier edit: failing everywhere, at another pointer
                    v = super::tests::v(
                        &v.chain.as_ref().unwrap().id,
                        v.chain.as_ref().unwrap().attempt,
                        (&**v.source.file(), v.source.line().unwrap()),
                        &[("SCHEMA_MISMATCH", &format!("/old{round}/{i}"), RG)],
                        "ff",
                        None,
                    );
                }
                live.add(&v);
            }
        }
        let gone = RecordRef::new(std::sync::Arc::<str>::from("f"), Some(3));
        assert!(live.remove(&gone));
        let mut fresh = ChainSet::default();
        for v in vs.iter().filter(|v| v.source != gone) {
            fresh.add(v);
        }
        let b = Budget::default();
        assert_eq!(live.steps(), vs.len() - 1);
        assert_eq!(live.finish(&b).rows, fresh.finish(&b).rows);
        // the garbage was compacted: the ids in use, not every edit's
        assert!(
            live.pointer_ids.len() < 3 * vs.len(),
            "{}",
            live.pointer_ids.len()
        );
        assert_eq!(std::mem::size_of::<Step>(), 64);
    }

    /// The bytes a set keeps per attempt (`docs/chains.md#memory`, BENCHMARKS.md): 1M
    /// attempts in 200k chains, failing at one or two of 7 pointers, as a batch set and a
    /// live set. A measurement, not a check: `cargo test --lib chain_memory -- --ignored
    /// --nocapture`.
    #[test]
    #[ignore = "a measurement: prints the bytes per attempt"]
    fn chain_memory() {
        for live in [false, true] {
            let mut set = if live {
                ChainSet::live()
            } else {
                ChainSet::default()
            };
            let mut n = 0usize;
            for c in 0..200_000usize {
                for a in 1..=5u64 {
                    let p = format!("/p{}", (c + a as usize) % 7);
                    let q = format!("/q{}", c % 3);
                    let errors: Vec<(&str, &str, Decision)> = match a {
                        1 | 2 => vec![("SCHEMA_MISMATCH", &p, RG), ("SCHEMA_MISMATCH", &q, RG)],
                        3 => vec![("SCHEMA_MISMATCH", &p, RG)],
                        _ => Vec::new(),
                    };
                    n += 1;
                    set.add(&v(
                        &format!("loop-{c:07}"),
                        Some(a),
                        ("captures/log.jsonl", n),
                        &errors,
                        &format!("{n:016x}"),
                        Some(500),
                    ));
                }
            }
            let bytes = set.heap_bytes();
            let steps = set.steps();
            println!(
                "{} set: {} attempts, {} bytes, {:.1} bytes per attempt",
                if live { "live" } else { "batch" },
                steps,
                bytes,
                bytes as f64 / steps as f64
            );
            if live {
                continue;
            }
            // what a finished report holds beside the set, by how it keeps its rows
            // (`check --format json`/`jsonl`, `verdict chains`; `docs/chains.md#memory`)
            let b = Budget {
                max_attempts: Some(4),
                ..Budget::default()
            };
            for keep in [Keep::All, Keep::Notable] {
                let kept = set.finish_keeping(&b, keep).heap_bytes();
                let later = set.clone().finish_later(&b, keep).heap_bytes();
                println!(
                    "report keeping rows ({keep:?}): {kept} bytes, {:.1} per attempt; made later: {later} bytes (the set), {:.1} per attempt",
                    kept as f64 / steps as f64,
                    later as f64 / steps as f64
                );
            }
        }
    }
}
