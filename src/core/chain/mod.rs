//! Self-correction loops: captures linked into attempt chains, each chain's outcome, flags
//! and feedback effects, and the summary over them (`docs/chains.md`).
//!
//! [`link`] says which chain a capture is an attempt of (the pipeline puts it on the
//! verdict as [`Verdict::chain`](crate::core::verdict::Verdict::chain)); a [`ChainSet`] is
//! fed the verdicts as they come, in any order, and keeps per attempt only a small step
//! (`Step`: 40 bytes, never the verdict); [`ChainSet::finish`] orders each chain's steps
//! and gives the [`ChainReport`]: one [`outcome::ChainRow`] per chain and the [`summary::ChainSummary`].

pub mod effect;
pub mod link;
pub mod outcome;
mod store;
pub mod summary;

use crate::core::config::Budget;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Decision, Reason, Stage, Verdict, Warning};
pub use link::{ChainLink, LinkedBy};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use store::Chunks;

/// The workspace warning for a chain whose attempt numbers repeat or skip, or whose
/// attempts' `pattern` numbers cannot be read (`docs/chains.md#warnings`).
pub const CHAIN_ATTEMPTS: &str = "CHAIN_ATTEMPTS";
/// The workspace warning for a chain some of whose attempts have no usable `[chains]
/// order` value (`docs/chains.md#warnings`).
pub const CHAIN_ORDER: &str = "CHAIN_ORDER";

/// The most pointers a step keeps of its failing stage (a verdict keeps at most
/// [`MAX_ERRORS`](crate::core::verdict::MAX_ERRORS) findings anyway).
const MAX_POINTERS: usize = 100;

/// Steps (and their `order` values) are kept in chunks of this many, each allocated once
/// at its full size and never moved (a vector of a million steps grown by doubling would
/// copy itself and hold one and a half times its size at its last growth).
const STEPS: usize = 1 << 16;

/// As a [`Step`]'s `chain`: a step taken out of a live set (its slot free for the next one).
const NONE: u32 = u32::MAX;

/// As a [`Step`]'s `attempt`, `tokens` or `line`: the value does not fit in 32 bits and is
/// the step's [`Wide`] entry (kept exactly, never truncated).
const WIDE: u32 = u32::MAX;

/// As a [`Step`]'s `contract` or `reason`: none.
const NONE16: u16 = u16::MAX;
/// As a [`Step`]'s `contract` or `reason`: the index does not fit in 16 bits and is the
/// step's [`Wide`] entry.
const WIDE16: u16 = u16::MAX - 1;

// the bits of `Step::flags`
const HAS_ATTEMPT: u8 = 1;
const HAS_ORDER: u8 = 2;
const HAS_DIGEST: u8 = 4;
const HAS_TOKENS: u8 = 8;
const HAS_LINE: u8 = 16;
const FIRST_HAS_POINTER: u8 = 32;
const HAS_PROBLEM: u8 = 64;

/// What a chain keeps of one attempt: enough for its outcome, flags and effects, nothing
/// of the verdict (`docs/chains.md#memory`). Fixed-size, 40 bytes: the chain, file, reason
/// and contract are indexes into the set's tables (each name kept once), the failing
/// pointers one interned pointer id or a run of the set's pointer ids (4 bytes a pointer),
/// the attempt number, tokens and line 32 bits each: a value that does not fit (and a
/// contract or reason index past 16 bits) is kept whole in the set's side table of
/// [`Wide`] values, the `order` value in the set's chunks of them, the link's rare problem
/// text in a side map.
#[derive(Debug, Clone, Copy)]
struct Step {
    /// The proposal's digest ([`ChainLink::digest`], with [`HAS_DIGEST`]): its low and
    /// high 32 bits (two words keep the step 4-byte aligned).
    digest: [u32; 2],
    /// The attempt number the link gave (with [`HAS_ATTEMPT`]), or [`WIDE`].
    attempt: u32,
    /// Tokens from `meta.usage` (with [`HAS_TOKENS`]), or [`WIDE`].
    tokens: u32,
    /// The 1-based line in a log (with [`HAS_LINE`]), or [`WIDE`].
    line: u32,
    /// The chain's index; [`NONE`]: a free slot.
    chain: u32,
    /// The capture file's index in the set's files.
    file: u32,
    /// One pointer id (`npointers` 1), or where the step's run of them starts in the
    /// set's pointer ids (more than one).
    pointers: u32,
    /// The contract's index in the set's contracts, [`NONE16`] or [`WIDE16`].
    contract: u16,
    /// The reason's index in the set's reasons, [`NONE16`] or [`WIDE16`].
    reason: u16,
    /// How many pointer ids (at most [`MAX_POINTERS`]).
    npointers: u8,
    /// The verdict's stage.
    stage: Stage,
    /// The verdict's decision.
    decision: Decision,
    /// The `HAS_*` and [`FIRST_HAS_POINTER`] bits.
    flags: u8,
}

/// The values of a step that do not fit in it (those whose field in the [`Step`] is
/// [`WIDE`] or [`WIDE16`]; the others are 0 here), by slot in the set's side table.
#[derive(Debug, Clone, Copy, Default)]
struct Wide {
    attempt: u64,
    tokens: u64,
    line: u64,
    contract: u32,
    reason: u32,
}

/// `v` as a step's 32-bit field: itself, or [`WIDE`] when it does not fit.
fn narrow(v: u64) -> u32 {
    u32::try_from(v).ok().filter(|&n| n != WIDE).unwrap_or(WIDE)
}

/// A table index as a step's 16-bit field: itself, or [`WIDE16`] when it does not fit.
fn narrow16(i: u32) -> u16 {
    u16::try_from(i)
        .ok()
        .filter(|&n| n < WIDE16)
        .unwrap_or(WIDE16)
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

    /// The step's side-table entry (its values that do not fit in it).
    fn wide(&self) -> Wide {
        self.set.wide.get(&self.index).copied().unwrap_or_default()
    }

    /// A 32-bit field of the step as the full value.
    fn wide32(&self, narrow: u32, wide: impl FnOnce(Wide) -> u64) -> u64 {
        if narrow == WIDE {
            wide(self.wide())
        } else {
            u64::from(narrow)
        }
    }

    /// A 16-bit index of the step as the full index (`None`: none).
    fn wide16(&self, narrow: u16, wide: impl FnOnce(Wide) -> u32) -> Option<u32> {
        match narrow {
            NONE16 => None,
            WIDE16 => Some(wide(self.wide())),
            i => Some(u32::from(i)),
        }
    }

    /// The attempt number the link gave.
    pub fn attempt(&self) -> Option<u64> {
        self.bit(HAS_ATTEMPT)
            .then(|| self.wide32(self.step.attempt, |w| w.attempt))
    }

    /// The `[chains] order` value.
    pub fn order(&self) -> Option<f64> {
        self.bit(HAS_ORDER).then(|| {
            let i = self.index as usize;
            self.set
                .orders
                .get(i / STEPS)
                .and_then(Option::as_ref)
                .map_or(0.0, |c| c[i % STEPS])
        })
    }

    /// The proposal's digest.
    pub fn digest(&self) -> Option<u64> {
        let [lo, hi] = self.step.digest;
        self.bit(HAS_DIGEST)
            .then_some((u64::from(hi) << 32) | u64::from(lo))
    }

    /// Tokens from `meta.usage`.
    pub fn tokens(&self) -> Option<u64> {
        self.bit(HAS_TOKENS)
            .then(|| self.wide32(self.step.tokens, |w| w.tokens))
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
        let i = self.wide16(self.step.reason, |w| w.reason)?;
        self.set.reasons.get(i as usize)
    }

    /// The interned ids of the distinct pointers of the failing stage's findings.
    pub fn pointer_ids(&self) -> &'a [u32] {
        match self.step.npointers {
            0 => &[],
            1 => std::slice::from_ref(&self.step.pointers),
            n => self
                .set
                .pointer_ids
                .run(self.step.pointers as usize, n as usize),
        }
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
        self.bit(HAS_LINE)
            .then(|| self.wide32(self.step.line, |w| w.line) as usize)
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
        self.wide16(self.step.contract, |w| w.contract)
    }
}

/// The tokens of one attempt from its `meta.usage` (`docs/chains.md#tokens`):
/// `total_tokens`, else `input_tokens` + `output_tokens` when both are there.
pub fn tokens_of(v: &Verdict) -> Option<u64> {
    let usage = v.meta.as_ref()?.get("usage")?;
    let n = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64);
    n("total_tokens").or_else(|| Some(n("input_tokens")?.saturating_add(n("output_tokens")?)))
}

/// Interns a name: its index in `names`, added when new. `last` is the index this gave
/// last for the table: a name equal to the one there is found without hashing it (any value
/// of `last` is safe, the names are compared).
fn intern<
    K: Clone + Eq + std::hash::Hash + std::borrow::Borrow<Q>,
    Q: Eq + std::hash::Hash + ?Sized,
>(
    names: &mut Vec<K>,
    index: &mut HashMap<K, u32>,
    last: &mut u32,
    name: &Q,
    make: impl FnOnce() -> K,
) -> u32 {
    if names
        .get(*last as usize)
        .is_some_and(|k| k.borrow() == name)
    {
        return *last;
    }
    let i = match index.get(name) {
        Some(i) => *i,
        None => {
            let i = names.len() as u32;
            let k = make();
            names.push(k.clone());
            index.insert(k, i);
            i
        }
    };
    *last = i;
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
    /// The steps by slot, in chunks of [`STEPS`].
    steps: Chunks<Step, STEPS>,
    /// Live mode: the slots of removed steps, for the next ones.
    free: Vec<u32>,
    /// Per chain (by index): how it was linked and how many steps it has.
    chains: Chunks<(LinkedBy, u32), { 1 << 14 }>,
    /// The chains' ids, each kept once (a chain's index is its id's).
    ids: store::Ids,
    files: Vec<Arc<str>>,
    file_index: HashMap<Arc<str>, u32>,
    reasons: Vec<Reason>,
    reason_index: HashMap<Reason, u32>,
    contracts: Vec<String>,
    contract_index: HashMap<String, u32>,
    pointer_names: Vec<Arc<str>>,
    pointer_index: HashMap<Arc<str>, u32>,
    /// The pointer ids of the steps that have more than one, each step's a run.
    pointer_ids: Chunks<u32, { 1 << 16 }>,
    /// Live mode: pointer ids no step uses any more (compacted when they are half).
    garbage: usize,
    /// The problem texts of the steps that have one, by slot.
    problems: HashMap<u32, Box<str>>,
    /// The values of the steps that do not fit in them, by slot (`Wide`).
    wide: HashMap<u32, Wide>,
    /// The steps' `order` values by slot, a chunk of [`STEPS`] allocated when a step of it
    /// first has one.
    orders: Vec<Option<Box<[f64]>>>,
    /// Live mode: the slot of each source's step, by (file index, line; 0: a file of one
    /// record) (`None`: batch mode, nothing kept).
    by_source: Option<HashMap<(u32, u64), u32>>,
    /// The index each table gave last, tried before hashing (`intern`).
    last: LastNames,
}

/// The index of the name each of a [`ChainSet`]'s tables interned last: a verdict's file and
/// contract are mostly the last one's, its reason and pointer often.
#[derive(Debug, Clone, Copy, Default)]
struct LastNames {
    file: u32,
    contract: u32,
    reason: u32,
    pointer: u32,
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
        self.chains.end() == 0
    }

    fn step(&self, i: u32) -> &Step {
        self.steps.get(i as usize)
    }

    fn step_mut(&mut self, i: u32) -> &mut Step {
        self.steps.get_mut(i as usize)
    }

    fn view(&self, i: u32) -> StepView<'_> {
        StepView {
            step: self.step(i),
            set: self,
            index: i,
        }
    }

    fn file_of(&mut self, file: &Arc<str>) -> u32 {
        intern(
            &mut self.files,
            &mut self.file_index,
            &mut self.last.file,
            &**file,
            || file.clone(),
        )
    }

    /// Adds a verdict: nothing when it has no [`Verdict::chain`](crate::core::verdict::Verdict::chain).
    pub fn add(&mut self, v: &Verdict) {
        if self.by_source.is_some() {
            self.remove(&v.source);
        }
        let Some(link) = &v.chain else { return };
        let mut wide = Wide::default();
        let contract = v.contract.as_ref().map(|c| {
            intern(
                &mut self.contracts,
                &mut self.contract_index,
                &mut self.last.contract,
                c.as_str(),
                || c.clone(),
            )
        });
        let reason = v.reason.as_ref().map(|r| {
            intern(
                &mut self.reasons,
                &mut self.reason_index,
                &mut self.last.reason,
                r,
                || r.clone(),
            )
        });
        let mut ids = [0u32; MAX_POINTERS];
        let mut n = 0;
        let first_has_pointer = v.errors.first().is_some_and(|f| f.pointer.is_some());
        for f in &v.errors {
            if n >= MAX_POINTERS {
                break;
            }
            if let Some(p) = &f.pointer {
                let id = intern(
                    &mut self.pointer_names,
                    &mut self.pointer_index,
                    &mut self.last.pointer,
                    p.as_str(),
                    || Arc::from(p.as_str()),
                );
                if !ids[..n].contains(&id) {
                    ids[n] = id;
                    n += 1;
                }
            }
        }
        let pointers = match n {
            0 => 0,
            1 => ids[0],
            _ => u32::try_from(self.pointer_ids.push_run(&ids[..n]))
                .expect("fewer than 2^32 pointer ids"),
        };
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
        let (chain, new) = self.ids.intern(&link.id);
        if new {
            self.chains.push((link.linked_by, 0));
        }
        let c = self.chains.get_mut(chain as usize);
        // an explicit link wins over a natural one for the chain's name
        if link.linked_by != LinkedBy::Natural {
            c.0 = link.linked_by;
        }
        c.1 += 1;
        let mut is_wide = false;
        let mut field = |x: u64, keep: &mut u64| {
            let n = narrow(x);
            if n == WIDE {
                *keep = x;
                is_wide = true;
            }
            n
        };
        let attempt = field(link.attempt.unwrap_or(0), &mut wide.attempt);
        let tokens = field(tokens.unwrap_or(0), &mut wide.tokens);
        let line = field(line.unwrap_or(0) as u64, &mut wide.line);
        let mut index = |i: Option<u32>, keep: &mut u32| match i {
            None => NONE16,
            Some(i) => {
                let n = narrow16(i);
                if n == WIDE16 {
                    *keep = i;
                    is_wide = true;
                }
                n
            }
        };
        let contract = index(contract, &mut wide.contract);
        let reason = index(reason, &mut wide.reason);
        let digest = digest.unwrap_or(0);
        let step = Step {
            digest: [digest as u32, (digest >> 32) as u32],
            attempt,
            tokens,
            line,
            chain,
            file,
            pointers,
            contract,
            reason,
            npointers: n as u8,
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
            None => u32::try_from(self.steps.push(step)).expect("fewer than 2^32 attempts"),
        };
        if is_wide {
            self.wide.insert(slot, wide);
        }
        if let Some(o) = link.order {
            let (c, i) = (slot as usize / STEPS, slot as usize % STEPS);
            if self.orders.len() <= c {
                self.orders.resize(c + 1, None);
            }
            self.orders[c].get_or_insert_with(|| vec![0.0; STEPS].into_boxed_slice())[i] = o;
        }
        if let Some(p) = &link.problem {
            self.problems.insert(slot, p.as_str().into());
        }
        if let Some(m) = &mut self.by_source {
            m.insert((file, v.source.line().unwrap_or(0) as u64), slot);
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
        self.wide.remove(&slot);
        self.chains.get_mut(step.chain as usize).1 -= 1;
        if step.npointers > 1 {
            self.garbage += step.npointers as usize;
        }
        if self.garbage > 4096 && self.garbage * 2 > self.pointer_ids.end() {
            self.compact_pointers();
        }
        true
    }

    /// Live mode: drops the pointer ids of removed steps.
    fn compact_pointers(&mut self) {
        let mut ids: Chunks<u32, { 1 << 16 }> = Chunks::default();
        for (_, s) in self.steps.iter_mut() {
            if s.chain != NONE && s.npointers > 1 {
                let run = self
                    .pointer_ids
                    .run(s.pointers as usize, s.npointers as usize);
                s.pointers = u32::try_from(ids.push_run(run)).expect("fewer than 2^32 pointer ids");
            }
        }
        self.pointer_ids = ids;
        self.garbage = 0;
    }

    /// The report: each chain's steps ordered (`docs/chains.md#order`), its row, the
    /// summary, and the workspace warnings of chains whose numbering repeats or skips or
    /// whose order values are unusable. A natural link seen once is no chain. Chains (their
    /// rows and warnings) come in report order ([`ChainSet::report_order`]).
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
    /// chains`). A row is about a kilobyte, a step 40 bytes (`docs/chains.md#memory`).
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
            self.walk(budget, keep == Keep::All, |id, steps, ordered, row| {
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

    /// Every reported chain in row order ([`ChainSet::report_order`]; a natural link seen
    /// once left out): its id, its ordered steps, how they were ordered and its
    /// row (its `sources` and `effects` lists made only when `lists`:
    /// [`outcome::row_listing`]), handed to `f` one at a time; stops at `f`'s first error.
    fn walk<E>(
        &self,
        budget: &Budget,
        lists: bool,
        mut f: impl FnMut(&str, &[StepView<'_>], outcome::Ordered, outcome::ChainRow) -> Result<(), E>,
    ) -> Result<(), E> {
        self.walk_listing(
            &self.groups(),
            budget,
            lists,
            |_, id, steps, ordered, row| f(id, steps, ordered, row),
        )
    }

    /// The slots grouped by chain (a counting sort: 4 bytes a step, 4 a chain).
    pub fn groups(&self) -> ChainGroups {
        let chains = self.chains.end();
        let mut start: Vec<u32> = Vec::with_capacity(chains + 1);
        let mut at = 0u32;
        for c in 0..chains {
            start.push(at);
            at += self.chains.get(c).1;
        }
        start.push(at);
        let mut slots = vec![0u32; at as usize];
        // each chain's start is its cursor while its slots are placed: then it is where
        // the next chain starts, and the starts are shifted back by one
        for i in 0..self.steps.end() as u32 {
            let c = self.step(i).chain;
            if c != NONE {
                slots[start[c as usize] as usize] = i;
                start[c as usize] += 1;
            }
        }
        for c in (1..chains).rev() {
            start[c] = start[c - 1];
        }
        if let Some(s) = start.first_mut() {
            *s = 0;
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
        let row = outcome::row(id, self.chains.get(c).0, contract, &steps, budget);
        (row, steps.iter().map(Attempt::of).collect())
    }

    /// `ChainSet::walk` over `groups` ([`ChainSet::groups`] of this set), with each
    /// chain's index in the set (what [`ChainSet::one`] takes).
    pub fn walk_indexed<E>(
        &self,
        groups: &ChainGroups,
        budget: &Budget,
        f: impl FnMut(u32, &str, &[StepView<'_>], outcome::Ordered, outcome::ChainRow) -> Result<(), E>,
    ) -> Result<(), E> {
        self.walk_listing(groups, budget, true, f)
    }

    /// [`ChainSet::walk_indexed`], the rows' lists made only when `lists`.
    fn walk_listing<E>(
        &self,
        groups: &ChainGroups,
        budget: &Budget,
        lists: bool,
        mut f: impl FnMut(
            u32,
            &str,
            &[StepView<'_>],
            outcome::Ordered,
            outcome::ChainRow,
        ) -> Result<(), E>,
    ) -> Result<(), E> {
        let (start, slots) = (&groups.start, &groups.slots);
        let mut steps: Vec<StepView<'_>> = Vec::new();
        for c in self.report_order(groups) {
            let c = c as usize;
            let (linked_by, n) = *self.chains.get(c);
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
            let id = self.ids.get(c as u32);
            let row = outcome::row_listing(id, linked_by, contract, &steps, budget, lists);
            f(c as u32, id, &steps, ordered, row)?;
        }
        Ok(())
    }

    /// The chains' indexes in report order, the one order every front end gives them
    /// (`check`'s rows and summary warnings, `watch --json`'s `chain` lines and summary
    /// warnings, the workbench's chain tree): the order in which a fresh `check` of the
    /// workspace reads their first attempts, its capture files in path order (as
    /// [`crate::core::workspace::Workspace::capture_files`] sorts them), then line. A set
    /// fed as `check` reads (not [`ChainSet::live`]) is in that order already: its chains
    /// in the order they were first added. A live set was fed as files changed, so its
    /// chains are sorted by their earliest attempt's file (by path) and line (ties, as the
    /// parts of one record, in the order the chains were first added).
    pub fn report_order(&self, groups: &ChainGroups) -> Vec<u32> {
        let chains = self.chains.end() as u32;
        if self.by_source.is_none() {
            return (0..chains).collect();
        }
        // each file's rank in path order (`Path` compares by component: `a/x` before `a-b/x`)
        let mut by_path: Vec<u32> = (0..self.files.len() as u32).collect();
        by_path.sort_by(|&a, &b| {
            Path::new(&*self.files[a as usize]).cmp(Path::new(&*self.files[b as usize]))
        });
        let mut rank = vec![0u32; self.files.len()];
        for (r, &f) in by_path.iter().enumerate() {
            rank[f as usize] = r as u32;
        }
        let mut keyed: Vec<((u32, Option<usize>), u32)> = (0..chains)
            .map(|c| {
                let range =
                    groups.start[c as usize] as usize..groups.start[c as usize + 1] as usize;
                let first = groups.slots[range]
                    .iter()
                    .map(|&i| {
                        let s = self.view(i);
                        (rank[s.step.file as usize], s.line())
                    })
                    .min()
                    .unwrap_or((u32::MAX, None));
                (first, c)
            })
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, c)| c).collect()
    }

    /// Steps kept, over every chain (for measurements: a step is 40 bytes, plus 4 a
    /// pointer when it has more than one).
    pub fn steps(&self) -> usize {
        (0..self.chains.end())
            .map(|c| self.chains.get(c).1 as usize)
            .sum()
    }

    /// The bytes the set holds on the heap (its steps, tables and indexes; estimated from
    /// capacities, the names' bytes counted): what `docs/chains.md#memory` reports.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let map = |n: usize, entry: usize| n * (entry + 1) * 8 / 7;
        let names = self
            .pointer_names
            .iter()
            .map(|p| p.len() + 16)
            .sum::<usize>()
            + self.files.iter().map(|p| p.len() + 16).sum::<usize>()
            + self.problems.values().map(|p| p.len()).sum::<usize>();
        self.steps.heap_bytes()
            + self.free.capacity() * 4
            + self.chains.heap_bytes()
            + self.ids.heap_bytes()
            + self.pointer_ids.heap_bytes()
            + self.pointer_names.capacity() * 16
            + map(self.pointer_index.capacity(), size_of::<(Arc<str>, u32)>())
            + map(self.problems.capacity(), size_of::<(u32, Box<str>)>())
            + map(self.wide.capacity(), size_of::<(u32, Wide)>())
            + self
                .orders
                .iter()
                .flatten()
                .map(|c| c.len() * 8)
                .sum::<usize>()
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
    /// The rows kept, one per chain, in the order their first attempt was read
    /// ([`ChainSet::report_order`]; none of those [`ChainSet::finish_later`] makes again
    /// when they are given).
    pub rows: Vec<outcome::ChainRow>,
    /// The summary over every row.
    pub summary: summary::ChainSummary,
    /// `CHAIN_ATTEMPTS` and `CHAIN_ORDER` warnings, in row order (not serialized here:
    /// they are the run's workspace warnings).
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
            later.set.walk(
                &later.budget,
                later.keep == Keep::All,
                |_, _, _, row| match later.keep.keeps(row) {
                    Some(row) => f(&row),
                    None => Ok(()),
                },
            )?;
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
            v.meta = Some(m.into());
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
                        &[
                            ("SCHEMA_MISMATCH", &format!("/old{round}/{i}"), RG),
                            ("SCHEMA_MISMATCH", &format!("/old{round}/{i}/b"), RG),
                        ],
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
        // the garbage was compacted: the ids in use, not every edit's (two a step in each
        // of the five earlier rounds: 10 a capture; a single pointer is kept in its step)
        assert!(
            live.pointer_ids.end() < 4 * vs.len(),
            "{}",
            live.pointer_ids.end()
        );
        assert_eq!(std::mem::size_of::<Step>(), 40);
    }

    #[test]
    fn values_past_32_bits_and_indexes_past_16_are_kept_exactly() {
        // attempt numbers from u32::MAX (the step's own marker) up, lines past 2^32 and
        // tokens past 2^32: the side table of wide values, never truncated
        let big = u64::from(u32::MAX);
        let mut set = ChainSet::default();
        let t = Some(5_000_000_000);
        let fail = [("SCHEMA_MISMATCH", "/a", RG)];
        set.add(&v("w", Some(big + 2), ("x", 7), &[], "03", t));
        set.add(&v("w", Some(big), ("x", 5_000_000_000), &fail, "01", t));
        set.add(&v("w", Some(big + 1), ("x", 5_000_000_001), &fail, "02", t));
        set.add(&v(
            "w",
            Some(u64::MAX),
            ("x", usize::MAX),
            &[],
            "04",
            Some(u64::MAX),
        ));
        let (r, attempts) = set.finish_with_attempts(&Budget::default());
        let got: Vec<(Option<u64>, String, Option<u64>)> = attempts[0]
            .iter()
            .map(|a| (a.attempt, a.source.to_string(), a.tokens))
            .collect();
        assert_eq!(
            got,
            [
                (Some(big), "x:5000000000".to_string(), t),
                (Some(big + 1), "x:5000000001".to_string(), t),
                (Some(big + 2), "x:7".to_string(), t),
                (Some(u64::MAX), format!("x:{}", usize::MAX), Some(u64::MAX)),
            ]
        );
        let row = &r.rows[0];
        assert_eq!(
            (row.outcome, row.recovered_at, row.tokens_to_recover),
            (Outcome::Recovered, Some(3), Some(15_000_000_000))
        );
        assert_eq!(row.tokens, Some(u64::MAX));
        assert_eq!(
            r.warnings[0].message,
            format!(
                "chain \"w\": attempts 1, 2, 3, 4, 5 and {} more missing; its attempts are taken as ordered, never renumbered (docs/chains.md#order)",
                u64::MAX - 3 - 5 - 1
            )
        );
        assert_eq!(set.wide.len(), 4);
        // more reasons and contracts than 16 bits index: the later ones in the side table
        let mut set = ChainSet::default();
        let n = 70_000usize;
        for i in 0..n {
            let reason = format!("RULE_{i}");
            let mut one = v(
                &format!("k{i}"),
                Some(1),
                ("y", i + 1),
                &[(reason.as_str(), "/b", RG)],
                "01",
                None,
            );
            one.contract = Some(format!("contract-{i}"));
            set.add(&one);
        }
        let r = set.finish(&Budget::default());
        assert_eq!(r.rows.len(), n);
        for i in [0, 65_533, 65_534, 65_535, n - 1] {
            let row = &r.rows[i];
            assert_eq!(row.chain, format!("k{i}"));
            assert_eq!(row.contract.as_deref(), Some(&*format!("contract-{i}")));
            assert_eq!(row.last_reason, Some(Reason::new(format!("RULE_{i}"))));
            let first = row.first_failure.as_ref().unwrap();
            assert_eq!(
                (first.reason.as_str(), first.pointer.as_deref()),
                (&*format!("RULE_{i}"), Some("/b"))
            );
        }
        // a slot whose wide values are gone when its step is replaced in a live set
        let mut live = ChainSet::live();
        live.add(&v("w", Some(big + 9), ("x", 1), &[], "01", None));
        assert_eq!(live.wide.len(), 1);
        live.add(&v("w", Some(2), ("x", 1), &[], "01", None));
        assert!(live.wide.is_empty());
        let (_, a) = live.finish_with_attempts(&Budget::default());
        assert_eq!(a[0][0].attempt, Some(2));
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

    /// A live set fed as files changed (a file that sorts first saved last, a chain's
    /// earliest attempt added after its others) reports its chains, rows and warnings
    /// alike, in the order a batch set fed as `check` reads the files gives them: by their
    /// first attempt's file in path order (`captures/a/x` before `captures/a-b/x`), then
    /// line. `watch --json` and the workbench used to list them in the order the live set
    /// first saw each chain.
    #[test]
    fn a_live_set_reports_its_chains_in_the_order_check_reads_them() {
        let ok: &[(&str, &str, Decision)] = &[];
        // (chain, attempt, file, line): zeta's attempt 1 twice, alpha's 2 missing, mid's 1
        // missing
        let read = [
            ("zeta", 1, "captures/a/x.jsonl", 1),
            ("zeta", 1, "captures/a/x.jsonl", 2),
            ("mid", 2, "captures/a/x.jsonl", 3),
            ("alpha", 1, "captures/a-b/y.jsonl", 1),
            ("mid", 3, "captures/a-b/y.jsonl", 2),
            ("alpha", 3, "captures/a-b/y.jsonl", 3),
        ];
        let verdict = |&(chain, attempt, file, line): &(&str, u64, &str, usize)| {
            v(chain, Some(attempt), (file, line), ok, "d", None)
        };
        let mut batch = ChainSet::default();
        for r in &read {
            batch.add(&verdict(r));
        }
        let mut live = ChainSet::live();
        // the later file first, and bottom up; then a step removed and added again
        for r in read.iter().rev() {
            live.add(&verdict(r));
        }
        live.remove(&RecordRef::new(Arc::from("captures/a/x.jsonl"), Some(1)));
        live.add(&verdict(&read[0]));
        let b = Budget::default();
        let (want, got) = (batch.finish(&b), live.finish(&b));
        let chains = |r: &ChainReport| r.rows.iter().map(|r| r.chain.clone()).collect::<Vec<_>>();
        assert_eq!(chains(&want), ["zeta", "mid", "alpha"]);
        assert_eq!(chains(&got), chains(&want));
        let messages = |r: &ChainReport| {
            r.warnings
                .iter()
                .map(|w| w.message.split(';').next().unwrap_or("").to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            messages(&want),
            [
                "chain \"zeta\": attempt 1 appears 2 times (captures/a/x.jsonl:1, captures/a/x.jsonl:2)",
                "chain \"mid\": attempt 1 missing",
                "chain \"alpha\": attempt 2 missing",
            ]
        );
        assert_eq!(got.warnings, want.warnings);
        // the workbench's walk, by chain index, in the same order
        let groups = live.groups();
        let mut walked = Vec::new();
        let done: Result<(), std::convert::Infallible> =
            live.walk_indexed(&groups, &b, |_, id, _, _, _| {
                walked.push(id.to_string());
                Ok(())
            });
        let Ok(()) = done;
        assert_eq!(walked, chains(&want));
    }
}
