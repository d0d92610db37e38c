//! Compact per-capture state for large logs (`BENCHMARKS.md`): where a record lives on disk
//! ([`Locator`]), what a list needs to show and filter it ([`CaptureSummary`]), reading a
//! capture file with each record's byte offset ([`for_each_located`]), and re-reading one
//! record to rebuild its full [`Evaluation`] ([`load`]).
//!
//! A front end keeps one summary per capture (no record text, no findings beyond the
//! first) and asks for the full evaluation of the one capture it shows.

use crate::core::capture::{self, RawRecord, is_log};
use crate::core::capture_file::{self, Compression, FileKind};
use crate::core::outcome::Outcome;
use crate::core::pipeline::Evaluation;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Verdict;
use crate::core::workspace::Workspace;
use std::cell::Cell;
use std::hash::Hasher;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

/// [`Locator::offset`] when the record's byte offset is not known: re-reading scans the
/// file for the line.
pub const UNKNOWN_OFFSET: u64 = u64::MAX;

/// Where one capture record is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Locator {
    /// The capture file, workspace-relative and `/`-separated (`captures/log.jsonl`).
    pub file: Arc<str>,
    /// 1-based line in a JSONL file; `None` for a `.json` file (one record per file).
    pub line: Option<u32>,
    /// Byte offset where re-reading starts: where the record's line starts, 0 for a
    /// `.json` file; [`UNKNOWN_OFFSET`] when not known. In a compressed log it is the
    /// offset in the decompressed stream, kept for the record but never sought to (there
    /// is no random access: [`read_record`] inflates from the start).
    pub offset: u64,
    /// The 1-based part of a record holding several captures (an OTLP `TracesData` of
    /// several LLM spans, [`RecordRef::part`]); `None` for a record that is one capture.
    pub part: Option<u32>,
}

impl Locator {
    /// The record it locates: its verdict `source` (`captures/a.json`,
    /// `captures/log.jsonl:9`, `captures/log.jsonl:9#2`).
    pub fn record_ref(&self) -> RecordRef {
        RecordRef::new_part(self.file.clone(), self.line.map(|l| l as usize), self.part)
    }

    /// The verdict `source` of the record, as text: `captures/a.json`, `captures/log.jsonl:9`
    /// or `captures/log.jsonl:9#2`.
    pub fn source(&self) -> String {
        self.record_ref().to_string()
    }

    /// The locator of a record, with the offset unknown.
    pub fn of_ref(source: &RecordRef) -> Locator {
        Locator {
            file: source.file().clone(),
            line: source.line().and_then(|l| u32::try_from(l).ok()),
            offset: UNKNOWN_OFFSET,
            part: source.part(),
        }
    }

    /// The locator of a verdict `source` given as text ([`RecordRef::parse`]), with the
    /// offset unknown.
    pub fn of_source(source: &str) -> Locator {
        Locator::of_ref(&RecordRef::parse(source))
    }
}

/// What a list shows, sorts and filters for one capture, without the record or the
/// findings beyond the first: a few hundred bytes in transit, less once a front end
/// interns the repeated strings.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureSummary {
    /// Where the record is.
    pub loc: Locator,
    /// The capture's id.
    pub id: String,
    /// The contract it was checked against, or the one it names.
    pub contract: Option<String>,
    /// The verdict's outcome (stage, decision, reason, `expect` met).
    pub outcome: Outcome,
    /// Every distinct pointer of the verdict's errors, in error order.
    pub pointers: Vec<String>,
    /// Whether the first error has a pointer (then it is `pointers[0]`).
    pub first_has_pointer: bool,
    /// The first error's message (`None` when ready).
    pub message: Option<String>,
    /// The content hash of the generation schema its request sent, when a server contract
    /// checked it beside that schema: its drift variant (`core::drift::key_of`).
    pub sent: Option<u64>,
    /// The verdict's `repair` (`docs/repairs.md`): what the workbench's triage tree groups by
    /// when it groups by repair.
    pub repair: Option<crate::core::repair::Repair>,
}

impl CaptureSummary {
    /// The summary of an evaluated record found at `loc` (the part of the record the
    /// verdict's source names, if any, is its locator's).
    pub fn of(ev: &Evaluation, mut loc: Locator) -> CaptureSummary {
        let v = &ev.verdict;
        loc.part = v.source.part();
        let mut pointers: Vec<String> = Vec::new();
        for f in &v.errors {
            if let Some(p) = &f.pointer
                && !pointers.contains(p)
            {
                pointers.push(p.clone());
            }
        }
        CaptureSummary {
            loc,
            id: v.id.clone(),
            contract: v.contract.clone(),
            outcome: v.outcome(),
            pointers,
            first_has_pointer: v.errors.first().is_some_and(|f| f.pointer.is_some()),
            message: v.errors.first().map(|f| f.message.clone()),
            sent: crate::core::drift::key_of(ev).map(|k| k.4),
            repair: v.repair.clone(),
        }
    }

    /// The summary of an evaluation whose location is only known by its source (offset
    /// unknown: re-reading scans the file).
    pub fn of_evaluation(ev: &Evaluation) -> CaptureSummary {
        CaptureSummary::of(ev, Locator::of_ref(&ev.verdict.source))
    }

    /// Whether `check` counts it as passing (its `expect` met, or none and ready).
    pub fn passes(&self) -> bool {
        self.outcome.passes()
    }
}

/// A 64-bit hash of everything a verdict says (its JSON form): equal verdicts hash the
/// same, so a session can tell a changed verdict without keeping the old one.
pub fn verdict_hash(v: &Verdict) -> u64 {
    struct W(std::collections::hash_map::DefaultHasher);
    impl std::io::Write for W {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.write(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = W(Default::default());
    let _ = serde_json::to_writer(&mut w, v);
    w.0.finish()
}

/// A buffered reader that can be told to stop (read as EOF).
struct Stoppable<'a, R> {
    inner: R,
    stop: &'a Cell<bool>,
}

impl<R: BufRead> Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.get() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

impl<R: BufRead> BufRead for Stoppable<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.stop.get() {
            return Ok(&[]);
        }
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
    }
}

/// Streams the records of one capture file to `each` with their [`Locator`]s, in file
/// order, one record in memory at a time, until `each` returns false. `rel` is the file's
/// workspace-relative name, `max_bytes` the workspace's `max_capture_bytes`. Records are
/// exactly those of [`capture::for_each_record`] (the same line splitting, limits and
/// errors).
pub fn for_each_located(
    path: &Path,
    rel: &Arc<str>,
    max_bytes: u64,
    each: impl FnMut(RawRecord, Locator) -> bool,
) {
    for_each_located_as(path, rel, max_bytes, is_log(path), each);
}

/// [`for_each_located`] with whether the file is a log given ([`Workspace::is_log_file`]:
/// a `[[source]]` makes other extensions logs).
pub fn for_each_located_as(
    path: &Path,
    rel: &Arc<str>,
    max_bytes: u64,
    log: bool,
    mut each: impl FnMut(RawRecord, Locator) -> bool,
) {
    let whole = |each: &mut dyn FnMut(RawRecord, Locator) -> bool| {
        let mut go = true;
        capture::for_each_record_as(path, rel, max_bytes, log, |r| {
            let line = r.source.line();
            let loc = Locator {
                file: rel.clone(),
                line: line.map(|l| l as u32),
                offset: if line.is_some() { UNKNOWN_OFFSET } else { 0 },
                part: None,
            };
            if go {
                go = each(r, loc);
            }
        })
    };
    if !log {
        return whole(&mut each);
    }
    // never a plain `File::open`: on a FIFO it waits for a writer forever
    let compression = FileKind::or_record(path).compression;
    let file = match capture_file::open(path, rel, compression, Some(max_bytes)) {
        Ok((f, _)) => f,
        // an error record: as the core reads it
        Err(_) => return whole(&mut each),
    };
    let stop = Cell::new(false);
    let reader = Stoppable {
        inner: BufReader::with_capacity(256 * 1024, file),
        stop: &stop,
    };
    capture::read_lines_at(reader, max_bytes, |line_no, offset, text| {
        let loc = Locator {
            file: rel.clone(),
            line: Some(line_no as u32),
            offset,
            part: None,
        };
        let go = each(
            RawRecord::json(RecordRef::new(rel.clone(), Some(line_no)), text),
            loc,
        );
        stop.set(!go);
    });
}

/// Counts the records of a JSONL file (non-blank lines) without decoding them, for a
/// progress gauge; a `.json` or `.sse` file counts 1. A compressed log is inflated to count
/// its lines (as far as a line over `max_bytes` or a break in the archive: what a read of
/// it gives).
pub fn count_records(path: &Path, max_bytes: u64) -> usize {
    count_records_as(path, max_bytes, is_log(path))
}

/// [`count_records`] with whether the file is a log given ([`Workspace::is_log_file`]).
pub fn count_records_as(path: &Path, max_bytes: u64, log: bool) -> usize {
    if !log {
        return 1;
    }
    let compression = FileKind::or_record(path).compression;
    let Ok((f, _)) = capture_file::open(path, "", compression, Some(max_bytes)) else {
        return 1;
    };
    let mut r = BufReader::with_capacity(256 * 1024, f);
    let (mut n, mut blank) = (0usize, true);
    loop {
        let buf = match r.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for &b in buf {
            if b == b'\n' {
                n += usize::from(!blank);
                blank = true;
            } else if !b.is_ascii_whitespace() {
                blank = false;
            }
        }
        let len = buf.len();
        r.consume(len);
    }
    n + usize::from(!blank)
}

/// Re-reads the record at `loc` as it is on disk now (a `.json` or `.sse` file is read
/// whole; a JSONL record from its offset, or by scanning for its line when the offset is
/// unknown or past the end). A compressed log has no random access: it is inflated from its
/// start up to the line (on the caller's thread: the engine's, never the screen's). `None`
/// when the file no longer has that line.
pub fn read_record(ws: &Workspace, loc: &Locator) -> Option<RawRecord> {
    // the record, named by the part its locator names (what `Workspace::evaluate` reads)
    read_whole_record(ws, loc).map(|mut r| {
        if loc.part.is_some() {
            r.source = r.source.with_part(loc.part);
        }
        r
    })
}

fn read_whole_record(ws: &Workspace, loc: &Locator) -> Option<RawRecord> {
    let path = ws.root.join(&*loc.file);
    let Some(line) = loc.line else {
        return ws.read_file(&path).into_iter().next();
    };
    let max = ws.config.max_capture_bytes;
    let record =
        |text| RawRecord::json(RecordRef::new(loc.file.clone(), Some(line as usize)), text);
    let compression = FileKind::or_record(&path).compression;
    if compression != Compression::None {
        let (file, _) = capture_file::open(&path, &loc.file, compression, Some(max)).ok()?;
        return scan_for_line(BufReader::with_capacity(256 * 1024, file), line, max).map(record);
    }
    let (mut file, _) = capture::open_regular(&path).ok()?;
    // the offset must still start a line (the byte before it a newline), else the file
    // changed under it: scan for the line instead
    let at_line_start = |file: &mut std::fs::File| -> bool {
        if loc.offset == 0 {
            return true;
        }
        let mut b = [0u8; 1];
        file.seek(SeekFrom::Start(loc.offset - 1)).is_ok()
            && file.read_exact(&mut b).is_ok()
            && b[0] == b'\n'
    };
    if loc.offset != UNKNOWN_OFFSET
        && at_line_start(&mut file)
        && file.seek(SeekFrom::Start(loc.offset)).is_ok()
    {
        let stop = Cell::new(false);
        let mut found = None;
        capture::read_lines(
            Stoppable {
                inner: BufReader::with_capacity(64 * 1024, &mut file),
                stop: &stop,
            },
            max,
            |_, text| {
                found = Some(text);
                stop.set(true);
            },
        );
        if let Some(text) = found {
            return Some(record(text));
        }
    }
    // offset unknown or stale: scan for the line
    file.seek(SeekFrom::Start(0)).ok()?;
    scan_for_line(BufReader::with_capacity(256 * 1024, file), line, max).map(record)
}

/// The text (or finding) of line `line` of a log read from its start, `None` when the
/// log has no such record. Reading stops at the line.
fn scan_for_line(
    reader: impl BufRead,
    line: u32,
    max: u64,
) -> Option<Result<String, crate::core::verdict::Finding>> {
    let stop = Cell::new(false);
    let mut found = None;
    capture::read_lines(
        Stoppable {
            inner: reader,
            stop: &stop,
        },
        max,
        |n, text| {
            if n == line as usize {
                found = Some(text);
            }
            if n >= line as usize {
                stop.set(true);
            }
        },
    );
    found
}

/// The full evaluation of the record at `loc`, re-read from disk and re-validated (about
/// the cost of one record of a `check` run); `None` when the record is gone (or is no
/// longer a capture).
pub fn load(ws: &Workspace, loc: &Locator) -> Option<Evaluation> {
    read_record(ws, loc).and_then(|r| ws.evaluate(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_re_read_the_same_records() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("captures")).unwrap();
        let text = "{\"id\":\"a\",\"output\":\"1\"}\n\n  \r\n{\"id\":\"b\",\"output\":\"2\"}\r\n{\"id\":\"c\",\"output\":\"3\"}";
        let path = dir.path().join("captures/l.jsonl");
        std::fs::write(&path, text).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let rel: Arc<str> = Arc::from("captures/l.jsonl");
        let mut got = Vec::new();
        for_each_located(&path, &rel, 1 << 20, |r, loc| {
            got.push((r, loc));
            true
        });
        assert_eq!(got.len(), 3);
        assert_eq!(count_records(&path, 1 << 20), 3);
        for (r, loc) in &got {
            assert_eq!(r.source, loc.source());
            let again = read_record(&ws, loc).unwrap();
            assert_eq!(again.source, r.source);
            assert_eq!(again.text.as_ref().ok(), r.text.as_ref().ok());
            let scanned = read_record(&ws, &Locator::of_ref(&r.source)).unwrap();
            assert_eq!(scanned.text.as_ref().ok(), r.text.as_ref().ok());
        }
        assert_eq!(got[1].0.source.line(), Some(4));
        // an offset that no longer starts a line: the line is scanned for
        let mut moved = got[2].1.clone();
        moved.offset += 3;
        let again = read_record(&ws, &moved).unwrap();
        assert_eq!(again.text.as_ref().ok(), got[2].0.text.as_ref().ok());
        assert!(read_record(&ws, &Locator::of_source("captures/l.jsonl:9")).is_none());
    }

    #[test]
    fn compressed_logs_re_read_the_same_records_from_their_start() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("captures")).unwrap();
        let text =
            "{\"id\":\"a\",\"output\":\"1\"}\n\n{\"id\":\"b\",\"output\":\"2\"}\r\n{\"id\":\"c\"";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        let files = [
            ("captures/l.jsonl.gz", gz.finish().unwrap()),
            (
                "captures/l.ndjson.zst",
                zstd::encode_all(text.as_bytes(), 1).unwrap(),
            ),
        ];
        let ws_root = dir.path();
        for (name, bytes) in files {
            let path = ws_root.join(name);
            std::fs::write(&path, bytes).unwrap();
            let ws = Workspace::open(ws_root).unwrap();
            let rel: Arc<str> = Arc::from(name);
            let mut got = Vec::new();
            for_each_located(&path, &rel, 1 << 20, |r, loc| {
                got.push((r, loc));
                true
            });
            assert_eq!(count_records(&path, 1 << 20), 3);
            let lines: Vec<(Option<usize>, u64)> = got
                .iter()
                .map(|(r, l)| (r.source.line(), l.offset))
                .collect();
            // offsets in the decompressed stream
            assert_eq!(
                lines,
                [(Some(1), 0), (Some(3), 25), (Some(4), 50)],
                "{name}"
            );
            for (r, loc) in &got {
                for loc in [loc.clone(), Locator::of_ref(&r.source)] {
                    let again = read_record(&ws, &loc).unwrap();
                    assert_eq!(again.source, r.source);
                    assert_eq!(again.text.as_ref().ok(), r.text.as_ref().ok());
                }
            }
            assert!(read_record(&ws, &Locator::of_source(&format!("{name}:9"))).is_none());
        }
    }
}
