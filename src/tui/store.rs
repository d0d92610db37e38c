//! The capture list's compact store (`BENCHMARKS.md`): one [`Row`] of 40 bytes per capture, its
//! id and first message in one shared text arena, and everything that repeats (outcomes,
//! pointer sets, file names) interned. A million captures take about 80 MB; the records
//! themselves stay on disk and are re-read when one is shown.

use crate::core::record_ref::RecordRef;
use crate::core::review::Outcome;
use crate::core::verdict::Finding;
use crate::engine::summary::{CaptureSummary, Locator};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

/// "No row" in the line index.
const NONE: u32 = u32::MAX;
/// [`Row::flags`]: the verdict flipped this session.
pub const FLIPPED: u8 = 1;
/// [`Row::flags`]: a record the pre-pass listed whose verdict has not come yet
/// (`docs/commands.md#while-it-loads`): no id, no outcome ([`PENDING_KIND`]), sorted after every
/// checked row, in file and line order.
pub const PENDING: u8 = 2;
/// The [`Row::kind`] of a pending row: a placeholder outcome no verdict has (it is not
/// interned: a checked row with the same outcome gets another index), left out of every
/// count and filter.
pub const PENDING_KIND: u32 = 0;
/// The longest id or message a row keeps, in bytes (longer ones are cut at a character
/// boundary; the detail re-reads the record and shows them whole).
pub const MAX_TEXT: usize = u16::MAX as usize - 1;

/// `s` cut to at most [`MAX_TEXT`] bytes at a character boundary.
fn clip(s: &str) -> &str {
    if s.len() <= MAX_TEXT {
        return s;
    }
    let mut end = MAX_TEXT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Per capture file, the row of each line. Dense (4 bytes per line number) while most line
/// numbers hold a record; a log that is mostly blank lines (a gigabyte of `\n` and a few
/// records) switches to a map, so the index never grows with the blank lines.
#[derive(Debug)]
enum Lines {
    /// Indexed by line; [`NONE`] for a line without a row. `live`: the rows held.
    Dense { rows: Vec<u32>, live: usize },
    /// Line -> row.
    Sparse(HashMap<u32, u32>),
}

impl Default for Lines {
    fn default() -> Lines {
        Lines::Dense {
            rows: Vec::new(),
            live: 0,
        }
    }
}

impl Lines {
    fn get(&self, line: u32) -> Option<u32> {
        match self {
            Lines::Dense { rows, .. } => rows.get(line as usize).copied().filter(|&i| i != NONE),
            Lines::Sparse(m) => m.get(&line).copied(),
        }
    }

    /// Sets the row of a line (`expect`: lines a new dense index is sized for).
    fn set(&mut self, line: u32, row: u32, expect: &mut usize) {
        if let Lines::Dense { rows, live } = self {
            let l = line as usize;
            if l >= rows.len() {
                // mostly holes: a map instead
                if l > 4 * (*live + 1) + 65_536 {
                    let m = rows
                        .iter()
                        .enumerate()
                        .filter(|(_, i)| **i != NONE)
                        .map(|(l, &i)| (l as u32, i))
                        .collect();
                    *self = Lines::Sparse(m);
                    return self.set(line, row, expect);
                }
                if rows.is_empty() && line > 0 {
                    // a JSONL log: size the index once for the expected lines
                    rows.reserve(std::mem::take(expect) + 1);
                }
                rows.resize(l + 1, NONE);
            }
            *live += usize::from(rows[l] == NONE);
            rows[l] = row;
            return;
        }
        if let Lines::Sparse(m) = self {
            m.insert(line, row);
        }
    }

    fn unset(&mut self, line: u32) {
        match self {
            Lines::Dense { rows, live } => {
                if let Some(i) = rows.get_mut(line as usize)
                    && *i != NONE
                {
                    *i = NONE;
                    *live -= 1;
                }
            }
            Lines::Sparse(m) => {
                m.remove(&line);
            }
        }
    }

    fn clear(&mut self) {
        match self {
            Lines::Dense { rows, live } => {
                rows.iter_mut().for_each(|i| *i = NONE);
                *live = 0;
            }
            Lines::Sparse(m) => m.clear(),
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Lines::Dense { rows, .. } => rows.capacity() * 4,
            Lines::Sparse(m) => m.capacity() * 12,
        }
    }
}

/// One capture as the list keeps it (40 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Byte offset to re-read the record from ([`Locator::offset`]).
    pub offset: u64,
    /// The id starts here in the text arena; the message (if any) follows it.
    text_at: u32,
    /// The id's length in bytes (ids are kept to [`MAX_TEXT`] bytes).
    id_len: u16,
    /// The first message's length + 1 (0: none; kept to [`MAX_TEXT`] bytes).
    msg_len: u16,
    /// Index into [`Store::files`].
    pub file: u32,
    /// 1-based JSONL line; 0 for a `.json` file.
    pub line: u32,
    /// The generation (truncated to 32 bits) that produced it.
    pub generation: u32,
    /// Index into [`Store::kinds`].
    pub kind: u32,
    /// Index into [`Store::psets`] (0 is the empty set).
    pub pointers: u32,
    /// [`FLIPPED`].
    pub flags: u8,
    /// The 1-based part of a record holding several captures (an OTLP `TracesData` of
    /// several LLM spans, `RecordRef::part`); 0 for a record that is one capture. A part
    /// past 65,535 is kept as 65,535.
    pub part: u16,
}

/// A verdict's outcome as the list needs it (interned: a log has few distinct ones).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Kind {
    /// The verdict's outcome (stage, decision, reason, `expect` met).
    pub outcome: Outcome,
    /// The contract.
    pub contract: Option<String>,
    /// Whether the first error has a pointer (the first of the row's pointer set).
    pub first_has_pointer: bool,
    /// The content hash of the schema its request sent, beside a server contract (its
    /// drift variant, `docs/requests.md#the-drift-report`).
    pub sent: Option<u64>,
    /// The verdict's `repair`, name and would-be outcome (the triage tree by repair, the
    /// `repair:` and `would:` filter tokens).
    pub repair: Option<crate::core::repair::Repair>,
}

impl Kind {
    /// The outcome part of a capture's summary.
    pub(crate) fn of(s: &CaptureSummary) -> Kind {
        Kind {
            outcome: s.outcome.clone(),
            contract: s.contract.clone(),
            first_has_pointer: s.first_has_pointer,
            sent: s.sent,
            repair: s.repair.clone(),
        }
    }
}

/// What [`Store::put`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// A newer generation's row is there: nothing changed.
    Stale,
    /// A new row at this index.
    Inserted(usize),
    /// The row at this index was replaced; `moved` when its sort key changed.
    Replaced {
        /// The row.
        index: usize,
        /// Whether its decision or id changed (its place in the sorted list).
        moved: bool,
    },
}

/// Every capture of the list.
#[derive(Debug)]
pub struct Store {
    /// The rows, in arrival order.
    pub rows: Vec<Row>,
    text: String,
    /// Arena bytes no row points at any more.
    garbage: usize,
    /// The interned outcomes.
    pub kinds: Vec<Kind>,
    kind_ids: HashMap<Kind, u32>,
    /// Rows per kind (index as [`Store::kinds`]), kept as rows come and go: the funnel's
    /// counts without a pass over a million rows at each rebuild.
    kind_rows: Vec<usize>,
    /// The interned pointer sets (index 0: no pointer).
    pub psets: Vec<Vec<String>>,
    pset_ids: HashMap<Vec<String>, u32>,
    /// The capture files.
    pub files: Vec<Arc<str>>,
    file_ids: HashMap<Arc<str>, u32>,
    /// Per file, the row of each line (index 0 for a `.json` file).
    index: Vec<Lines>,
    /// The rows of the parts of records that hold several captures, by (file, line, part):
    /// few, so a map beside the dense line index.
    parts: HashMap<(u32, u32, u16), u32>,
    /// Lines the first JSONL file's index is sized for ([`Store::reserve`]).
    expect_lines: usize,
}

impl Default for Store {
    fn default() -> Store {
        Store {
            rows: Vec::new(),
            text: String::new(),
            garbage: 0,
            kinds: vec![Kind {
                outcome: Outcome::ready(),
                contract: None,
                first_has_pointer: false,
                sent: None,
                repair: None,
            }],
            kind_ids: HashMap::new(),
            kind_rows: vec![0],
            psets: vec![Vec::new()],
            pset_ids: HashMap::from([(Vec::new(), 0)]),
            files: Vec::new(),
            file_ids: HashMap::new(),
            index: Vec::new(),
            parts: HashMap::new(),
            expect_lines: 0,
        }
    }
}

impl Store {
    /// How many captures.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Reserves room for `n` more rows (and their texts and line index, estimated), so
    /// that a large load grows no big buffer by copying it.
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
        self.text.reserve(n * 32);
        self.expect_lines = self.expect_lines.max(n);
    }

    /// Reserves text for `n` more rows' ids and messages (estimated): for the pending rows
    /// when their verdicts start to come.
    pub fn reserve_text(&mut self, n: usize) {
        self.text.reserve(n * 32);
    }

    /// The id of a row.
    pub fn id(&self, r: &Row) -> &str {
        let at = r.text_at as usize;
        &self.text[at..at + r.id_len as usize]
    }

    /// The first error's message of a row.
    pub fn message(&self, r: &Row) -> Option<&str> {
        let at = r.text_at as usize + r.id_len as usize;
        (r.msg_len > 0).then(|| &self.text[at..at + r.msg_len as usize - 1])
    }

    /// Arena bytes of a row.
    fn text_len(r: &Row) -> usize {
        r.id_len as usize + (r.msg_len as usize).saturating_sub(1)
    }

    /// Whether a row is pending ([`PENDING`]).
    pub fn is_pending(r: &Row) -> bool {
        r.flags & PENDING != 0
    }

    /// How many rows are pending.
    pub fn pending(&self) -> usize {
        self.kind_rows[PENDING_KIND as usize]
    }

    /// How many rows have each kind (index as [`Store::kinds`]; [`PENDING_KIND`]: the
    /// pending rows).
    pub fn kind_rows(&self) -> &[usize] {
        &self.kind_rows
    }

    /// Counts the rows per kind again (after rows were dropped in bulk).
    fn recount(&mut self) {
        self.kind_rows.iter_mut().for_each(|n| *n = 0);
        for r in &self.rows {
            self.kind_rows[r.kind as usize] += 1;
        }
    }

    /// The outcome of a row ([`PENDING_KIND`]'s placeholder for a pending row).
    pub fn kind(&self, r: &Row) -> &Kind {
        &self.kinds[r.kind as usize]
    }

    /// The distinct pointers of a row's errors, in error order.
    pub fn pointers(&self, r: &Row) -> &[String] {
        &self.psets[r.pointers as usize]
    }

    /// The capture file of a row.
    pub fn file(&self, r: &Row) -> &str {
        &self.files[r.file as usize]
    }

    /// Writes a row's verdict `source` (`captures/log.jsonl:9`) to `out`.
    pub fn write_source(&self, r: &Row, out: &mut String) {
        use std::fmt::Write;
        out.push_str(self.file(r));
        if r.line > 0 {
            let _ = write!(out, ":{}", r.line);
        }
        if r.part > 0 {
            let _ = write!(out, "#{}", r.part);
        }
    }

    /// A row's verdict `source`.
    pub fn source(&self, r: &Row) -> String {
        let mut s = String::new();
        self.write_source(r, &mut s);
        s
    }

    /// Where a row's record is.
    pub fn locator(&self, r: &Row) -> Locator {
        Locator {
            file: self.files[r.file as usize].clone(),
            line: (r.line > 0).then_some(r.line),
            offset: r.offset,
            part: (r.part > 0).then_some(u32::from(r.part)),
        }
    }

    /// The first error of a row, rebuilt from what the row keeps (reason, decision,
    /// pointer, message), for a flip's cause.
    pub fn first_error(&self, r: &Row) -> Option<Finding> {
        let k = self.kind(r);
        let reason = k.outcome.reason.clone()?;
        let mut f = Finding::new(k.outcome.stage, reason, self.message(r).unwrap_or_default())
            .with_decision(k.outcome.decision);
        if k.first_has_pointer {
            f = f.with_pointer(self.pointers(r)[0].clone());
        }
        Some(f)
    }

    /// The drift variants of `contract` among the rows (`docs/requests.md#the-drift-report`):
    /// for each distinct sent-schema hash, in the order first seen, how many rows have it
    /// and the ids of the first `ids` of them.
    pub fn variants(&self, contract: &str, ids: usize) -> Vec<(u64, usize, Vec<String>)> {
        let mut out: Vec<(u64, usize, Vec<String>)> = Vec::new();
        for r in &self.rows {
            let k = &self.kinds[r.kind as usize];
            let Some(h) = k.sent else { continue };
            if k.contract.as_deref() != Some(contract) {
                continue;
            }
            let i = match out.iter().position(|(x, _, _)| *x == h) {
                Some(i) => i,
                None => {
                    out.push((h, 0, Vec::new()));
                    out.len() - 1
                }
            };
            out[i].1 += 1;
            if out[i].2.len() < ids {
                out[i].2.push(self.id(r).to_owned());
            }
        }
        out
    }

    /// The row of a file and line (0 for a `.json` file).
    pub fn find(&self, file: &str, line: u32) -> Option<usize> {
        self.find_part(file, line, 0)
    }

    /// The row of a file, line (0 for a `.json` file) and part (0 for a record that is
    /// one capture).
    pub fn find_part(&self, file: &str, line: u32, part: u16) -> Option<usize> {
        let f = *self.file_ids.get(file)?;
        self.row_at(f, line, part).map(|i| i as usize)
    }

    fn row_at(&self, file: u32, line: u32, part: u16) -> Option<u32> {
        if part == 0 {
            self.index[file as usize].get(line)
        } else {
            self.parts.get(&(file, line, part)).copied()
        }
    }

    /// Indexes row `i` (`expect`: lines a new dense index is sized for).
    fn index_row(&mut self, r: Row, i: u32, expect: &mut usize) {
        if r.part == 0 {
            self.index[r.file as usize].set(r.line, i, expect);
        } else {
            self.parts.insert((r.file, r.line, r.part), i);
        }
    }

    fn unindex_row(&mut self, r: Row) {
        if r.part == 0 {
            self.index[r.file as usize].unset(r.line);
        } else {
            self.parts.remove(&(r.file, r.line, r.part));
        }
    }

    /// The row of a verdict `source` given as text ([`RecordRef::parse`]). A log that only
    /// a `[[source]]` makes one (`captures/app.log:3`, `docs/config.md#source`) is not a
    /// log by its name, so `FILE:LINE` is also tried split at its last `:` when the whole
    /// text names no row.
    pub fn find_source(&self, source: &str) -> Option<usize> {
        let parsed = RecordRef::parse(source);
        let part = parsed
            .part()
            .map_or(0, |p| u16::try_from(p).unwrap_or(u16::MAX));
        let found = match parsed.line() {
            Some(l) => self.find_part(parsed.file(), u32::try_from(l).ok()?, part),
            None => self.find_part(parsed.file(), 0, part),
        };
        found.or_else(|| {
            let (file, line) = source.rsplit_once(':')?;
            if parsed.line().is_some() || !line.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            self.find(file, line.parse().ok()?)
        })
    }

    fn intern_file(&mut self, f: &Arc<str>) -> u32 {
        if let Some(&i) = self.file_ids.get(&**f) {
            return i;
        }
        let i = self.files.len() as u32;
        self.files.push(f.clone());
        self.file_ids.insert(f.clone(), i);
        self.index.push(Lines::default());
        i
    }

    fn intern_kind(&mut self, s: &CaptureSummary) -> u32 {
        let k = Kind::of(s);
        if let Some(&i) = self.kind_ids.get(&k) {
            return i;
        }
        let i = self.kinds.len() as u32;
        self.kinds.push(k.clone());
        self.kind_rows.push(0);
        self.kind_ids.insert(k, i);
        i
    }

    fn intern_pointers(&mut self, p: &[String]) -> u32 {
        if let Some(&i) = self.pset_ids.get(p) {
            return i;
        }
        let i = self.psets.len() as u32;
        self.psets.push(p.to_vec());
        self.pset_ids.insert(p.to_vec(), i);
        i
    }

    /// Inserts or replaces the row of a capture, unless the row holds a newer
    /// generation's result.
    pub fn put(&mut self, s: &CaptureSummary, generation: u64) -> Put {
        let generation = generation as u32;
        let file = self.intern_file(&s.loc.file);
        let line = s.loc.line.unwrap_or(0);
        let part = s
            .loc
            .part
            .map_or(0, |p| u16::try_from(p).unwrap_or(u16::MAX));
        let existing = self.row_at(file, line, part);
        if let Some(i) = existing
            && self.rows[i as usize].generation > generation
        {
            return Put::Stale;
        }
        let kind = self.intern_kind(s);
        let pointers = self.intern_pointers(&s.pointers);
        let (id, message) = (clip(&s.id), s.message.as_deref().map(clip));
        if self.text.len() + id.len() + message.map_or(0, str::len) > u32::MAX as usize {
            self.compact_text();
        }
        let text_at = self.text.len() as u32;
        self.text.push_str(id);
        let msg_len = match message {
            Some(m) => {
                self.text.push_str(m);
                m.len() as u16 + 1
            }
            None => 0,
        };
        let mut row = Row {
            offset: s.loc.offset,
            text_at,
            id_len: id.len() as u16,
            msg_len,
            file,
            line,
            generation,
            kind,
            pointers,
            flags: 0,
            part,
        };
        match existing {
            Some(i) => {
                let old = self.rows[i as usize];
                row.flags = old.flags & !PENDING;
                self.garbage += Store::text_len(&old);
                let moved = Store::is_pending(&old)
                    || self.kinds[old.kind as usize].outcome.decision
                        != self.kinds[kind as usize].outcome.decision
                    || self.id(&old) != id;
                self.rows[i as usize] = row;
                self.kind_rows[old.kind as usize] -= 1;
                self.kind_rows[kind as usize] += 1;
                if self.garbage > 1 << 20 && self.garbage > self.text.len() / 2 {
                    self.compact_text();
                }
                Put::Replaced {
                    index: i as usize,
                    moved,
                }
            }
            None => {
                let i = self.rows.len();
                self.rows.push(row);
                self.kind_rows[kind as usize] += 1;
                let mut expect = std::mem::take(&mut self.expect_lines);
                self.index_row(row, i as u32, &mut expect);
                self.expect_lines = expect;
                Put::Inserted(i)
            }
        }
    }

    /// Adds a pending row for the record at `line` of `file` (0: a one-record file) unless
    /// a row is there (a checked one keeps its verdict until the new one comes); the new
    /// row's index.
    pub fn put_pending(&mut self, file: &Arc<str>, line: u32, generation: u64) -> Option<usize> {
        let file = self.intern_file(file);
        if self.row_at(file, line, 0).is_some() {
            return None;
        }
        let row = Row {
            offset: crate::engine::summary::UNKNOWN_OFFSET,
            text_at: self.text.len().min(u32::MAX as usize) as u32,
            id_len: 0,
            msg_len: 0,
            file,
            line,
            generation: generation as u32,
            kind: PENDING_KIND,
            pointers: 0,
            flags: PENDING,
            part: 0,
        };
        let i = self.rows.len();
        self.rows.push(row);
        self.kind_rows[PENDING_KIND as usize] += 1;
        self.index_row(row, i as u32, &mut 0);
        Some(i)
    }

    /// Removes row `i` (the last row takes its index, which is returned).
    pub fn swap_remove(&mut self, i: usize) -> Option<usize> {
        let r = self.rows.swap_remove(i);
        self.kind_rows[r.kind as usize] -= 1;
        self.garbage += Store::text_len(&r);
        self.unindex_row(r);
        let moved = self.rows.get(i).copied()?;
        self.index_row(moved, i as u32, &mut 0);
        Some(self.rows.len())
    }

    /// Keeps only the rows for which `keep` holds (order kept, index rebuilt).
    pub fn retain(&mut self, mut keep: impl FnMut(&Row) -> bool) {
        self.rows.retain(|r| keep(r));
        self.recount();
        for idx in &mut self.index {
            idx.clear();
        }
        self.parts.clear();
        for i in 0..self.rows.len() {
            self.index_row(self.rows[i], i as u32, &mut 0);
        }
        self.compact_text();
    }

    /// Rewrites the text arena without the garbage.
    fn compact_text(&mut self) {
        let mut text = String::with_capacity(self.text.len() - self.garbage);
        for r in &mut self.rows {
            let len = Store::text_len(r);
            let at = r.text_at as usize;
            r.text_at = text.len() as u32;
            text.push_str(&self.text[at..at + len]);
        }
        self.text = text;
        self.garbage = 0;
    }

    /// The list order of two rows: decision (most severe first), then id, then source;
    /// pending rows after every checked one, by file, then line.
    pub fn cmp(&self, a: usize, b: usize) -> Ordering {
        let (x, y) = (&self.rows[a], &self.rows[b]);
        let (px, py) = (Store::is_pending(x), Store::is_pending(y));
        if px || py {
            return px.cmp(&py).then_with(|| {
                if x.file == y.file {
                    x.line.cmp(&y.line)
                } else {
                    self.file(x).cmp(self.file(y)).then(x.line.cmp(&y.line))
                }
            });
        }
        self.kinds[x.kind as usize]
            .outcome
            .decision
            .cmp(&self.kinds[y.kind as usize].outcome.decision)
            .then_with(|| self.id(x).cmp(self.id(y)))
            .then_with(|| {
                if x.file == y.file {
                    // same file: compare the sources as text (`:10` sorts before `:9`)
                    x.line
                        .to_string()
                        .cmp(&y.line.to_string())
                        .then(x.part.cmp(&y.part))
                } else {
                    self.source(x).cmp(&self.source(y))
                }
            })
    }

    /// Bytes held by the store (rows, text, the line index), for measurements.
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<Row>()
            + self.text.capacity()
            + self.index.iter().map(Lines::heap_bytes).sum::<usize>()
            + self.parts.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::verdict::{Decision, Stage};

    /// A summary of the capture `id` at `source` with no error detail: `decision`, at the
    /// ready stage or else the schema stage.
    fn summary(source: &str, id: &str, decision: Decision) -> CaptureSummary {
        CaptureSummary {
            loc: Locator::of_source(source),
            id: id.to_owned(),
            contract: None,
            outcome: Outcome {
                stage: if decision == Decision::ReadyForCommit {
                    Stage::Ready
                } else {
                    Stage::Schema
                },
                decision,
                reason: None,
                expect_met: None,
                repair: None,
            },
            pointers: Vec::new(),
            first_has_pointer: false,
            message: None,
            sent: None,
            repair: None,
        }
    }

    #[test]
    fn a_row_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 40);
    }

    /// The bytes the store keeps per capture, counted from its buffers' capacities
    /// ([`Store::heap_bytes`]), for a log loaded as the engine gives it (`Started`'s total
    /// reserved first, then the rows in line order): a 40-byte row, the 32 bytes of text
    /// reserved per row (an 8-byte id; a 36-byte message on one capture in ten) and a
    /// 4-byte line index entry, 76 bytes (BENCHMARKS.md "The TUI at 1,000,000 captures").
    /// A new field in a row, a text kept per row or a second index makes this fail.
    #[test]
    fn a_loaded_log_keeps_76_bytes_per_capture() {
        let n = 10_000usize;
        let mut store = Store::default();
        store.reserve(n);
        for i in 0..n {
            let failing = i % 10 == 3;
            let s = CaptureSummary {
                loc: Locator::of_source(&format!("captures/log.jsonl:{}", i + 1)),
                id: format!("c{i:07}"),
                contract: Some("refund-v1".into()),
                outcome: Outcome::ready(),
                pointers: if failing {
                    vec!["/expected_version".into()]
                } else {
                    Vec::new()
                },
                first_has_pointer: failing,
                message: failing.then(|| "expected_version: 3 is less than 16".into()),
                sent: None,
                repair: None,
            };
            assert!(matches!(store.put(&s, 1), Put::Inserted(_)));
        }
        assert_eq!(store.len(), n);
        // rows, text, the dense line index (lines 1..=n and the unused line 0)
        assert_eq!(store.heap_bytes(), n * 40 + n * 32 + (n + 1) * 4);
    }

    /// The rows per kind, kept as rows are listed pending, checked, replaced and removed,
    /// always equal what a count over the rows gives (the funnel reads them).
    #[test]
    fn the_rows_per_kind_follow_every_change() {
        let counted = |store: &Store| {
            let mut n = vec![0usize; store.kinds.len()];
            for r in &store.rows {
                n[r.kind as usize] += 1;
            }
            n
        };
        let mut store = Store::default();
        let file: Arc<str> = Arc::from("c/log.jsonl");
        let mut rng = 7u64;
        for step in 0..2000u32 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = (rng >> 33) as u32 % 50 + 1;
            let decision = if rng >> 20 & 1 == 0 {
                Decision::ReadyForCommit
            } else {
                Decision::Regenerate
            };
            match (rng >> 40) % 5 {
                0 | 1 => {
                    store.put_pending(&file, line, u64::from(step));
                }
                2 => {
                    let source = format!("c/log.jsonl:{line}");
                    store.put(
                        &summary(&source, &format!("id{line}"), decision),
                        u64::from(step),
                    );
                }
                3 if !store.is_empty() => {
                    store.swap_remove(line as usize % store.len());
                }
                _ => store.retain(|r| r.line % 7 != line % 7),
            }
            assert_eq!(store.kind_rows(), counted(&store), "step {step}");
            assert_eq!(
                store.pending(),
                store.rows.iter().filter(|r| Store::is_pending(r)).count()
            );
        }
    }

    /// The parts of a record of several captures (`log.jsonl:1#2`) are rows of their own,
    /// found, named and re-read by their part, beside the line's own rows.
    #[test]
    fn parts_of_a_record_are_rows_of_their_own() {
        let mut store = Store::default();
        for (source, id) in [
            ("c/log.jsonl:1#1", "t/a"),
            ("c/log.jsonl:1#2", "t/b"),
            ("c/log.jsonl:2", "t/c"),
            ("c/export.json#1", "t/d"),
        ] {
            assert!(matches!(
                store.put(&summary(source, id, Decision::ReadyForCommit), 1),
                Put::Inserted(_)
            ));
        }
        let found = |store: &Store, source: &str| {
            store.find_source(source).map(|i| {
                (
                    store.id(&store.rows[i]).to_owned(),
                    store.source(&store.rows[i]),
                )
            })
        };
        assert_eq!(
            found(&store, "c/log.jsonl:1#2"),
            Some(("t/b".into(), "c/log.jsonl:1#2".into()))
        );
        assert_eq!(
            found(&store, "c/export.json#1"),
            Some(("t/d".into(), "c/export.json#1".into()))
        );
        assert_eq!(
            found(&store, "c/log.jsonl:2").map(|f| f.0),
            Some("t/c".into())
        );
        // the whole record is no row: its parts are
        assert_eq!(found(&store, "c/log.jsonl:1"), None);
        let row = store.rows[store.find_source("c/log.jsonl:1#1").unwrap()];
        assert_eq!(store.locator(&row).source(), "c/log.jsonl:1#1");
        // a part replaced in place, another removed: the index follows
        assert!(matches!(
            store.put(
                &summary("c/log.jsonl:1#1", "t/a", Decision::ReadyForCommit),
                2
            ),
            Put::Replaced { .. }
        ));
        store.swap_remove(0);
        assert_eq!(found(&store, "c/log.jsonl:1#1"), None);
        assert_eq!(
            found(&store, "c/export.json#1").map(|f| f.0),
            Some("t/d".into())
        );
        store.retain(|r| r.part != 2);
        assert_eq!(found(&store, "c/log.jsonl:1#2"), None);
        assert_eq!(
            found(&store, "c/export.json#1").map(|f| f.0),
            Some("t/d".into())
        );
    }
}
