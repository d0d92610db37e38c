//! Capture records (`docs/capture-record.md`): reading capture files and checking each record strictly.
//!
//! A `.json` file holds one record; a `.jsonl` / `.ndjson` / `.jsonl.out` file holds one
//! record per line (blank lines are skipped); a `.sse` file is one captured stream; any of
//! them may be compressed (`.gz`, `.zst`: [`crate::core::capture_file`]). Anything that
//! cannot be read or breaks the record table is an input-stage `INVALID_CAPTURE` finding
//! for that record alone.

use crate::core::adapter::Adapted;
use crate::core::capture_file::{self, Compression, FileKind, Layout, StreamError};
use crate::core::hint::hint_for;
pub use crate::core::meta::Meta;
use crate::core::record_ref::RecordRef;
pub use crate::core::record_ref::is_log;
use crate::core::stage::parse;
use crate::core::text::json_kind;
use crate::core::verdict::{Decision, Expect, Finding, Reason, Stage};
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The top-level keys of a capture record.
pub const RECORD_KEYS: [&str; 15] = [
    "id",
    "contract",
    "response",
    "output",
    "status",
    "status_detail",
    "provider",
    "tool",
    "context",
    "intent",
    "expect",
    "meta",
    "request",
    "chain",
    "attempt",
];

/// The `status` values of a record that carries `output`.
pub const OUTPUT_STATUSES: [&str; 4] = ["completed", "refusal", "incomplete", "request_error"];

/// One record's text as read from a capture file, before it is parsed.
#[derive(Debug, Clone)]
pub struct RawRecord {
    /// Where it came from: its file relative to the workspace (`/`-separated) and, in a
    /// log, its 1-based line (`captures/a.json`, `captures/log.jsonl:9`).
    pub source: RecordRef,
    /// The record's text, or why it could not be read (`INVALID_CAPTURE`).
    pub text: Result<String, Finding>,
    /// What the text is: a capture record, or a `.sse` file's stream.
    pub kind: RecordKind,
}

/// What a [`RawRecord`]'s text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordKind {
    /// A capture record's JSON text (a `.json` file, a log's line).
    #[default]
    Json,
    /// A `.sse` file's text: a captured stream, the capture's `response` as it is
    /// ([`crate::core::capture_file::sse_capture`]).
    Sse,
}

impl RawRecord {
    /// A capture record's JSON text (or why it could not be read) at `source`.
    pub fn json(source: RecordRef, text: Result<String, Finding>) -> RawRecord {
        RawRecord {
            source,
            text,
            kind: RecordKind::Json,
        }
    }
}

fn invalid(message: impl Into<String>) -> Finding {
    Finding::new(Stage::Input, Reason::INVALID_CAPTURE, message)
}

/// Whether a path is a capture file by its name: `.json`, `.jsonl`, `.ndjson`, `.jsonl.out`
/// or `.sse`, each optionally compressed (`.gz`, `.zst`): [`FileKind::of`].
pub fn is_capture_file(path: &Path) -> bool {
    FileKind::of(path).is_some()
}

/// Reads every record of one capture file. `rel` is the file's workspace-relative name;
/// `max_bytes` is `max_capture_bytes`: a larger record (after decompression) is
/// `INVALID_CAPTURE` and is never held in memory whole. Never fails: an unreadable file is
/// one `INVALID_CAPTURE` record, and a corrupt archive one after the records before the break.
pub fn read_file(path: &Path, rel: &str, max_bytes: u64) -> Vec<RawRecord> {
    let mut out = Vec::new();
    for_each_record(path, rel, max_bytes, |r| out.push(r));
    out
}

/// Streams the records of one capture file to `each`, in file order, holding one record
/// at a time (a JSONL log of any size reads in constant memory, compressed or not: a
/// `.gz` / `.zst` file is inflated as it is read). The file's kind is read from its name
/// ([`FileKind::or_record`]). As [`read_file`].
pub fn for_each_record(path: &Path, rel: &str, max_bytes: u64, each: impl FnMut(RawRecord)) {
    for_each_record_as(path, rel, max_bytes, is_log(path), each);
}

/// [`for_each_record`], with whether the file is a log (one record per line) given: a
/// `[[source]]` makes files of other extensions logs (`docs/config.md#source`).
pub fn for_each_record_as(
    path: &Path,
    rel: &str,
    max_bytes: u64,
    log: bool,
    mut each: impl FnMut(RawRecord),
) {
    let name: std::sync::Arc<str> = rel.into();
    let mut kind = FileKind::or_record(path);
    if log {
        kind.layout = Layout::Log;
    }
    let one = |text| RawRecord {
        source: RecordRef::new(name.clone(), None),
        text,
        kind: if kind.layout == Layout::Sse {
            RecordKind::Sse
        } else {
            RecordKind::Json
        },
    };
    let compressed = kind.compression != Compression::None;
    let line_max = (kind.layout == Layout::Log).then_some(max_bytes);
    let (file, meta) = match capture_file::open(path, rel, kind.compression, line_max) {
        Ok(f) => f,
        Err(message) => return each(one(Err(invalid(format!("cannot read {rel}: {message}"))))),
    };
    if kind.layout != Layout::Log {
        let len = if compressed {
            0
        } else {
            meta.map_or(0, |m| m.len())
        };
        if len > max_bytes {
            return each(one(Err(too_large(len, max_bytes))));
        }
        // straight into the buffer (no BufReader: one copy, not two)
        let mut bytes = Vec::with_capacity(if compressed { 8192 } else { len as usize + 1 });
        if let Err(e) = file
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
        {
            return each(one(Err(match StreamError::of(&e) {
                Some(s) => stream_finding(s),
                None => invalid(format!("cannot read {rel}: {e}")),
            })));
        }
        if bytes.len() as u64 > max_bytes {
            return each(one(Err(if compressed {
                inflates_too_far(rel, kind.compression, max_bytes)
            } else {
                too_large(bytes.len() as u64, max_bytes)
            })));
        }
        return each(one(decode(bytes)));
    }
    read_lines(
        BufReader::with_capacity(256 * 1024, file),
        max_bytes,
        |line_no, line| {
            each(RawRecord::json(
                RecordRef::new(name.clone(), Some(line_no)),
                line,
            ))
        },
    );
}

/// The finding of a compressed file's stream that stopped ([`StreamError`]).
fn stream_finding(e: &StreamError) -> Finding {
    let f = invalid(e.message.clone());
    match &e.hint {
        Some(h) => f.with_hint(h.clone()),
        None => f,
    }
}

/// A one-record compressed file whose record inflates past `max_capture_bytes`.
fn inflates_too_far(rel: &str, compression: Compression, max: u64) -> Finding {
    invalid(format!(
        "{rel}: the capture record inflates past max_capture_bytes ({max} bytes) after {} \
         decompression; not parsed",
        compression.name()
    ))
    .with_hint("raise max_capture_bytes in verdict.toml if this size is expected")
}

/// A read error of a capture file's stream as a finding: a compressed file's
/// [`StreamError`] as it says, any other `read error: ...`.
fn read_error(e: &std::io::Error) -> Finding {
    match StreamError::of(e) {
        Some(s) => stream_finding(s),
        None => invalid(format!("read error: {e}")),
    }
}

/// Opens a log (one record per line) for reading its lines: the file's bytes, or for a
/// `.gz` / `.zst` log its decompressed bytes (inflated as read, a line past `max_bytes`
/// ending the stream: [`capture_file::open`]). What [`for_each_record_as`] reads, for a
/// reader that splits the lines itself (the duplicate-id pre-pass).
///
/// # Errors
/// As [`capture_file::open`].
pub fn open_log(path: &Path, rel: &str, max_bytes: u64) -> Result<Box<dyn Read + Send>, String> {
    let kind = FileKind::or_record(path);
    capture_file::open(path, rel, kind.compression, Some(max_bytes)).map(|(r, _)| r)
}

/// Opens `path` for reading if it is a regular file (after symlinks). Opening a FIFO would
/// block until a writer comes, and a device may never end, so the file is opened without
/// blocking and checked with one `fstat` on the open descriptor (no second path lookup).
/// Every reader of capture files goes through this (a plain `File::open` of a FIFO named
/// `*.jsonl` hangs the thread that does it).
///
/// # Errors
/// The file cannot be opened, or is not a regular file (the message says why).
pub fn open_regular(path: &Path) -> Result<(std::fs::File, Option<std::fs::Metadata>), String> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(not_regular(&meta));
    }
    let file = opts.open(path).map_err(|e| e.to_string())?;
    match file.metadata() {
        // a folder is listed among the capture files only when it cannot be listed
        // (`Workspace::capture_files`): say why
        Ok(meta) if meta.is_dir() => Err(match std::fs::read_dir(path) {
            Err(e) => format!("cannot list this folder: {e}"),
            Ok(_) => not_regular(&meta),
        }),
        Ok(meta) if !meta.is_file() => Err(not_regular(&meta)),
        Ok(meta) => Ok((file, Some(meta))),
        Err(_) => Ok((file, None)),
    }
}

/// [`open_regular`], the file read no further than the size it had when it was opened: a
/// file a writer keeps appending to ends there (its later records are read by the next run),
/// so one read of it is bounded by its size (`docs/config.md#limits`). Every reader of
/// capture and `[[join]]` files streams through this.
///
/// # Errors
/// As [`open_regular`].
pub fn open_sized(
    path: &Path,
) -> Result<(std::io::Take<std::fs::File>, Option<std::fs::Metadata>), String> {
    let (file, meta) = open_regular(path)?;
    // no metadata (rare): nothing is known of its size, read it as it is
    let size = meta.as_ref().map_or(u64::MAX, std::fs::Metadata::len);
    Ok((file.take(size), meta))
}

fn not_regular(meta: &std::fs::Metadata) -> String {
    let what = if meta.is_dir() {
        "a directory"
    } else {
        "a FIFO, socket or device"
    };
    format!("not a regular file ({what})")
}

/// A record handed over as its bytes instead of read from a capture file (the Python
/// package's `Workspace.check`, `docs/python.md`), read as a capture file's record at
/// `source` is: over `max_bytes` (`max_capture_bytes`) it is `INVALID_CAPTURE` and never
/// parsed, invalid UTF-8 is `INVALID_CAPTURE` naming the first invalid byte ([`decode`]),
/// and a `.sse` file's record (no line) is its stream ([`RecordKind::Sse`]).
pub fn record_of_bytes(source: RecordRef, bytes: Vec<u8>, max_bytes: u64) -> RawRecord {
    let sse = source.line().is_none()
        && FileKind::or_record(Path::new(&**source.file())).layout == Layout::Sse;
    let text = if bytes.len() as u64 > max_bytes {
        Err(too_large(bytes.len() as u64, max_bytes))
    } else {
        decode(bytes)
    };
    RawRecord {
        source,
        text,
        kind: if sse {
            RecordKind::Sse
        } else {
            RecordKind::Json
        },
    }
}

fn too_large(len: u64, max: u64) -> Finding {
    invalid(format!(
        "capture record is {len} bytes, over max_capture_bytes ({max}); not parsed"
    ))
    .with_hint("raise max_capture_bytes in verdict.toml if this size is expected")
}

/// A record's bytes as text, or `INVALID_CAPTURE` naming the first invalid byte.
pub fn decode(bytes: Vec<u8>) -> Result<String, Finding> {
    String::from_utf8(bytes).map_err(|e| {
        let off = e.utf8_error().valid_up_to();
        invalid(format!(
            "record is not valid UTF-8 (invalid byte at offset {off})"
        ))
    })
}

/// Splits a JSONL stream into non-blank lines (with `\r\n` or `\n` endings), calling `each`
/// with the 1-based line number and the line's text or an `INVALID_CAPTURE` finding (too
/// long, invalid UTF-8, a read error). Over-long lines are skipped, not buffered.
pub fn read_lines<R: BufRead>(
    reader: R,
    max_bytes: u64,
    mut each: impl FnMut(usize, Result<String, Finding>),
) {
    read_line_bytes(reader, max_bytes, |line_no, line| {
        each(line_no, line.and_then(|b| decode(b.to_vec())));
    });
}

/// [`read_lines`] before decoding: each non-blank line's bytes (without its line ending),
/// borrowed until the next call, or the finding for a line that is too long or unreadable.
/// Lets a caller copy lines into a block and decode them elsewhere (on another thread).
pub fn read_line_bytes<R: BufRead>(
    reader: R,
    max_bytes: u64,
    mut each: impl FnMut(usize, Result<&[u8], Finding>),
) {
    read_line_bytes_at(reader, max_bytes, |line_no, _, line| each(line_no, line));
}

/// [`read_lines`] with each line's byte offset in the stream (where the line starts).
pub fn read_lines_at<R: BufRead>(
    reader: R,
    max_bytes: u64,
    mut each: impl FnMut(usize, u64, Result<String, Finding>),
) {
    read_line_bytes_at(reader, max_bytes, |line_no, offset, line| {
        each(line_no, offset, line.and_then(|b| decode(b.to_vec())));
    });
}

/// [`read_line_bytes`] with each line's byte offset in the stream (where the line starts).
/// A line is lent straight from the reader's buffer when it lies whole in it. Lines are
/// handed out one at a time, each before the next is looked for: a reader that ends once
/// `each` asks it to (`crate::engine::summary`'s re-reading of one record) reads no more.
pub fn read_line_bytes_at<R: BufRead>(
    mut reader: R,
    max_bytes: u64,
    mut each: impl FnMut(usize, u64, Result<&[u8], Finding>),
) {
    let mut line_no = 0usize;
    let mut offset = 0u64;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        line_no += 1;
        let start = offset;
        // the common case: the whole line is in the reader's buffer, lent without a copy
        let whole = match reader.fill_buf() {
            Ok(chunk) => memchr::memchr(b'\n', chunk)
                .filter(|&i| (i as u64) < max_bytes.saturating_add(2))
                .map(|i| {
                    if let Some(text) = finish_line(&chunk[..i], max_bytes) {
                        each(line_no, start, text.map(|r| &chunk[r]).map_err(|f| *f));
                    }
                    i + 1
                }),
            // the slow path below reports it
            Err(_) => None,
        };
        if let Some(len) = whole {
            reader.consume(len);
            offset += len as u64;
            continue;
        }
        let (text, stop) = read_slow_line(&mut reader, max_bytes, &mut buf, &mut offset);
        if let Some(text) = text {
            each(line_no, start, text.map(|r| &buf[r]).map_err(|f| *f));
        }
        if stop {
            return;
        }
    }
}

/// One line of a run ([`read_line_runs`]).
#[derive(Debug)]
pub struct RunLine {
    /// Its 1-based number in the stream.
    pub line_no: usize,
    /// Its bytes in the run (without its line ending), or the finding for a line that is
    /// too long or unreadable.
    pub text: LineAt,
}

/// Where one line's bytes are in the buffer it was read into, or why the line is unusable
/// (boxed: a block holds one per line, and a finding is hundreds of bytes).
pub type LineAt = Result<std::ops::Range<usize>, Box<Finding>>;

/// The lines of `reader` as [`read_line_bytes_at`] splits them, handed out in runs: every
/// line that lies whole in what the reader's buffer holds at once is given with the others
/// there, in one call of `run` with that buffer (no line copied) and the lines (ranges of
/// it; blank lines left out). A line across two fills of the buffer, an over-long one or
/// the last one is read alone into a buffer of its own and given as a run of one. `run`
/// may drain the lines it is given. The prescan's reading of a log
/// (`crate::core::prescan`): its records are read in parallel, a run at a time.
pub fn read_line_runs<R: BufRead>(
    mut reader: R,
    max_bytes: u64,
    mut run: impl FnMut(&[u8], &mut Vec<RunLine>),
) {
    let mut line_no = 0usize;
    let mut offset = 0u64;
    let mut buf: Vec<u8> = Vec::new();
    let mut lines: Vec<RunLine> = Vec::new();
    loop {
        // the common case: the lines that lie whole in the reader's buffer, lent together
        let used = match reader.fill_buf() {
            Ok(chunk) => {
                let mut at = 0;
                while let Some(i) = memchr::memchr(b'\n', &chunk[at..])
                    .filter(|&i| (i as u64) < max_bytes.saturating_add(2))
                {
                    line_no += 1;
                    if let Some(text) = finish_line(&chunk[at..at + i], max_bytes) {
                        lines.push(RunLine {
                            line_no,
                            text: text.map(|r| at + r.start..at + r.end),
                        });
                    }
                    at += i + 1;
                }
                if !lines.is_empty() {
                    run(chunk, &mut lines);
                    lines.clear();
                }
                at
            }
            // the slow path below reports it
            Err(_) => 0,
        };
        if used > 0 {
            reader.consume(used);
            offset += used as u64;
            continue;
        }
        line_no += 1;
        let (text, stop) = read_slow_line(&mut reader, max_bytes, &mut buf, &mut offset);
        if let Some(text) = text {
            lines.push(RunLine { line_no, text });
            run(&buf, &mut lines);
            lines.clear();
        }
        if stop {
            return;
        }
    }
}

/// What [`read_line_blocks`] reads each time (and the room a block is given more of when it
/// is short of it): the most a full block leaves to copy into the next, besides the line
/// across its end.
const MIN_READ: usize = 64 * 1024;

/// The lines of `reader` as [`read_line_bytes_at`] splits them, read straight into owned
/// blocks: a block is the bytes read (its lines back to back with their line endings and the
/// blank lines between them) and its lines (1-based number, range in the bytes or the
/// finding), handed to `send` once `full(lines, bytes)` says so after a line, and at the end.
/// Only the start of the line that crosses a block's end is copied, into the next block.
/// `room` is a block's capacity: a longer line grows its block (a line over `max_bytes` is
/// dropped as it is read, not kept). Reading stops when `send` gives false. The main pass's
/// reading of a log (`crate::engine::batch`), whose blocks are checked on other threads: a
/// file is read into them without a copy of its lines (`Read::read_to_end` of a `File`
/// fills a buffer without clearing it first).
pub fn read_line_blocks<R: Read>(
    reader: R,
    max_bytes: u64,
    room: usize,
    full: impl FnMut(usize, usize) -> bool,
    send: impl FnMut(Vec<u8>, Vec<(usize, LineAt)>) -> bool,
) {
    read_line_blocks_by(reader, max_bytes, room, MIN_READ, full, send);
}

/// [`read_line_blocks`] reading at least `min_read` bytes a time (small in tests, to cross
/// every boundary).
fn read_line_blocks_by<R: Read>(
    mut reader: R,
    max_bytes: u64,
    room: usize,
    min_read: usize,
    mut full: impl FnMut(usize, usize) -> bool,
    mut send: impl FnMut(Vec<u8>, Vec<(usize, LineAt)>) -> bool,
) {
    let limit = max_bytes.saturating_add(2);
    let room = room.max(2 * min_read);
    let mut bytes: Vec<u8> = Vec::with_capacity(room);
    let mut lines: Vec<(usize, LineAt)> = Vec::new();
    let mut line_no = 0usize;
    // where the line being read starts in `bytes`, and where the search for its end goes on
    let (mut start, mut scan) = (0usize, 0usize);
    // the bytes of an over-long line dropped so far, while it is read to its end, and the
    // last of them
    let mut skipped: Option<u64> = None;
    let mut skipped_last = 0u8;
    let mut failed = None;
    let mut eof = false;
    loop {
        // the lines that end in what was read
        while let Some(i) = memchr::memchr(b'\n', &bytes[scan..]) {
            let end = scan + i;
            line_no += 1;
            let len = (end - start) as u64;
            let over = |n: u64| {
                let last = bytes[start..end].last().copied().unwrap_or(skipped_last);
                Some(Err(Box::new(too_large(
                    record_len(n + len, last),
                    max_bytes,
                ))))
            };
            let text = match skipped.take() {
                Some(n) => over(n),
                None if len >= limit => over(0),
                None => finish_line(&bytes[start..end], max_bytes)
                    .map(|t| t.map(|r| start + r.start..start + r.end)),
            };
            (start, scan) = (end + 1, end + 1);
            let Some(text) = text else { continue };
            lines.push((line_no, text));
            if full(lines.len(), start) {
                // the rest read so far starts the next block
                let mut next = Vec::with_capacity(room.max(bytes.len() - start + min_read));
                next.extend_from_slice(&bytes[start..]);
                bytes.truncate(start);
                if !send(
                    std::mem::replace(&mut bytes, next),
                    std::mem::take(&mut lines),
                ) {
                    return;
                }
                (start, scan) = (0, 0);
            }
        }
        scan = bytes.len();
        if eof || failed.is_some() {
            break;
        }
        // a line already past `max_bytes` is not kept
        let partial = (bytes.len() - start) as u64;
        if skipped.is_some() || partial > limit {
            *skipped.get_or_insert(0) += partial;
            if let Some(&b) = bytes[start..].last() {
                skipped_last = b;
            }
            bytes.truncate(start);
            scan = start;
        }
        if bytes.capacity() - bytes.len() < min_read {
            bytes.reserve(room.max(bytes.len()));
        }
        // a read at a time of `min_read`: a block that fills up (by its lines or its bytes)
        // leaves at most that much, and the line across, to copy into the next
        let want = (bytes.capacity() - bytes.len()).min(min_read) as u64;
        let before = bytes.len();
        match (&mut reader).take(want).read_to_end(&mut bytes) {
            Ok(_) => eof = bytes.len() == before,
            Err(e) => failed = Some(e),
        }
    }
    // the last line, or the one a read error cut short
    if let Some(e) = failed {
        lines.push((line_no + 1, Err(Box::new(read_error(&e)))));
    } else {
        let len = skipped.unwrap_or(0) + (bytes.len() - start) as u64;
        let last = bytes[start..].last().copied().unwrap_or(skipped_last);
        let text = if len == 0 {
            None
        } else if skipped.is_some() || len > limit {
            Some(Err(Box::new(too_large(record_len(len, last), max_bytes))))
        } else {
            finish_line(&bytes[start..], max_bytes)
                .map(|t| t.map(|r| start + r.start..start + r.end))
        };
        if let Some(text) = text {
            lines.push((line_no + 1, text));
        }
    }
    if !lines.is_empty() {
        send(bytes, lines);
    }
}

/// The line at the reader's position when it does not lie whole in the reader's buffer (a
/// line across buffer fills, an over-long one, the last one) or the buffer cannot be
/// filled: read into `buf` (an over-long line is skipped, not kept), `offset` moved past
/// it. Gives the line's bytes in `buf` (`None`: blank, or nothing left), a finding for a
/// line over `max_bytes` or a read error, and whether the stream ended (its end, or an
/// error: nothing more is read).
fn read_slow_line<R: BufRead>(
    reader: &mut R,
    max_bytes: u64,
    buf: &mut Vec<u8>,
    offset: &mut u64,
) -> (Option<LineAt>, bool) {
    buf.clear();
    let mut len: u64 = 0;
    // the line's last byte before its `\n`, and whether it has one
    let (mut last, mut newline) = (0u8, false);
    let mut overflow = false;
    let mut eof = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return (Some(Err(Box::new(read_error(&e)))), true),
        };
        if chunk.is_empty() {
            eof = true;
            break;
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if let Some(&b) = chunk[..take - usize::from(done)].last() {
            last = b;
        }
        newline = done;
        len += take as u64;
        if !overflow {
            if len > max_bytes.saturating_add(2) {
                overflow = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        reader.consume(take);
        *offset += take as u64;
        if done {
            break;
        }
    }
    if len == 0 && eof {
        return (None, true);
    }
    let text = if overflow {
        let record = record_len(len - u64::from(newline), last);
        Some(Err(Box::new(too_large(record, max_bytes))))
    } else {
        finish_line(buf, max_bytes)
    };
    (text, eof)
}

/// The bytes of an over-long line's record, the count its finding gives: the line's `len`
/// bytes before its `\n` (if any), less a `\r` that ends them (`last`, their last byte), so
/// a record counts the same whether its line ends in `\n`, `\r\n` or the end of the stream
/// ([`finish_line`] counts a line that is read whole the same).
fn record_len(len: u64, last: u8) -> u64 {
    len - u64::from(len > 0 && last == b'\r')
}

/// One line of [`read_line_runs`] (its `\n` and any `\r`/`\n` before it stripped): `None`
/// when blank (skipped), else its bytes' range in `line`, or a finding when over
/// `max_bytes`.
fn finish_line(line: &[u8], max_bytes: u64) -> Option<LineAt> {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let line = &line[..end];
    if line.iter().all(|b| b.is_ascii_whitespace()) {
        None
    } else if line.len() as u64 > max_bytes {
        Some(Err(Box::new(too_large(line.len() as u64, max_bytes))))
    } else {
        Some(Ok(0..end))
    }
}

/// Where the proposal comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// `response`: a provider response object, an array of stream events, or SSE text.
    Response(Value),
    /// `output` with its `status` and `status_detail`.
    Output {
        /// The model's raw text (a string) or an already-structured value.
        output: Value,
        /// `completed` (default), `refusal`, `incomplete`, `request_error`.
        status: Option<String>,
        /// `max_output_tokens`, `content_filter`, `rate_limit`, an HTTP status...
        status_detail: Option<String>,
    },
    /// The container already decided the response stage (a batch line whose request did not
    /// run: expired, cancelled, errored); the pipeline takes this outcome as the response
    /// stage's.
    Settled(Box<Adapted>),
    /// A JSON-RPC message of an MCP session log (`docs/record-shapes.md#mcp`): what it
    /// means depends on the workspace's other records (its request, the `tools/list`
    /// results), so the pipeline resolves it against the workspace's MCP facts
    /// ([`crate::core::mcp`]); a message that is not a `tools/call` request or response
    /// is no capture at all.
    Mcp(Box<crate::core::mcp::Message>),
    /// A batch INPUT record (`docs/requests.md#batch-input-files`): requests, not a
    /// capture. The pipeline gives it no verdict; the workspace indexes its requests.
    Requests(Box<crate::core::request::InputRecord>),
    /// A record that holds no capture: an OTLP/JSON `TracesData` with no LLM or tool span
    /// (`docs/record-shapes.md#traces`). The pipeline gives it no verdict and does not
    /// count it.
    NotACapture,
    /// A record that holds several captures, in the record's order: an OTLP/JSON
    /// `TracesData` of several LLM or tool spans, a promptfoo results file
    /// (`docs/record-shapes.md#traces`). Each part is a capture of its own (or the
    /// `INVALID_CAPTURE` of a part that breaks the shape), whose source is the record's
    /// with the part's 1-based index (`captures/log.jsonl:9#2`,
    /// [`crate::core::record_ref::RecordRef::part`]).
    Parts(Vec<Result<Capture, RecordError>>),
}

/// A capture record that passed the checks of `docs/capture-record.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// `id`, or the default from the source.
    pub id: String,
    /// The record shape it was read as (`capture`, `response`, `openai-batch`, ...;
    /// `docs/record-shapes.md#record-shapes`).
    pub format: &'static str,
    /// `contract`, if given.
    pub contract: Option<String>,
    /// The response or output.
    pub payload: Payload,
    /// `provider`, forcing an adapter.
    pub provider: Option<String>,
    /// `tool`: which tool call is the proposal.
    pub tool: Option<String>,
    /// Trusted context for rules.
    pub context: Option<Map<String, Value>>,
    /// The confirmed intent.
    pub intent: Option<Map<String, Value>>,
    /// The expected verdict.
    pub expect: Option<Expect>,
    /// Free-form metadata (a capture record's is held as its checked text until read:
    /// [`Meta`]).
    pub meta: Option<Meta>,
    /// The provider request the capture answers, when its record carries it: a capture
    /// record's `request` key, or the request a batch line echoes (Vertex `request`,
    /// Bedrock `modelInput`; `docs/requests.md`).
    pub request: Option<CaptureRequest>,
    /// `chain`: the self-correction chain the capture is an attempt of
    /// (`docs/chains.md#linking`).
    pub chain: Option<String>,
    /// `attempt`: its 1-based attempt number in that chain.
    pub attempt: Option<u64>,
}

/// A request carried by a capture's own record.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureRequest {
    /// The request body as sent.
    pub body: Value,
    /// JSON Pointer of the body in the record (`/request`, `/modelInput`).
    pub base: &'static str,
    /// Whether the provider echoed it (a batch line), rather than the record's author
    /// writing it down (a capture record's `request`).
    pub echoed: bool,
}

/// What parsing a record gives: the capture, or an `INVALID_CAPTURE` finding together with
/// whatever id and expect could still be read (so a broken record keeps its name and an
/// `expect` of `INVALID_CAPTURE` can be met).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordError {
    /// The finding.
    pub finding: Finding,
    /// The record's `id`, if it could be read.
    pub id: Option<String>,
    /// The record's `expect`, if it could be read.
    pub expect: Option<Expect>,
    /// The record shape it matched, if any (`docs/record-shapes.md#record-shapes`).
    pub format: Option<&'static str>,
}

/// Parses one record's text strictly and reads it as the record shape it has
/// (`docs/record-shapes.md#record-shapes`): a capture record, a bare provider response, a
/// batch line, ... `source` is where it was read; it is the id of a record that has none.
///
/// # Errors
/// `INVALID_CAPTURE` when the text is not strict JSON (duplicate keys included), is not an
/// object, matches no record shape, or breaks the shape it matched (for a capture record: an
/// unknown key with a "did you mean" hint, both or neither of `response`/`output`, `status`
/// without `output`, or a key of the wrong type).
pub fn parse_record(text: &str, source: &RecordRef) -> Result<Capture, RecordError> {
    parse_record_as(text, source, None)
}

/// [`parse_record`], read as `forced` (a `[[source]]`'s format) when given, else as the
/// shape the record has.
///
/// # Errors
/// As [`parse_record`].
pub fn parse_record_as(
    text: &str,
    source: &RecordRef,
    forced: Option<&crate::core::shape::Shape>,
) -> Result<Capture, RecordError> {
    // an OTLP/JSON record is read by a typed walk of its spans when it can be: the same
    // capture, without building the whole record (`docs/record-shapes.md#traces`)
    // one searcher for every record (`memmem::find` builds one per call: more work than
    // the search itself on a capture record)
    static RESOURCE_SPANS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"resourceSpans"));
    if forced.is_none()
        && RESOURCE_SPANS.find(text.as_bytes()).is_some()
        && let Some(read) = crate::core::shape::otlp::read_text(text, source)
    {
        return read;
    }
    if forced.is_none() {
        // a record of record keys only is read without a map of its members or a pass
        // over the shapes: the same capture or error `shape::read` gives it
        // (`meta` is kept as its text, checked: `crate::core::meta`)
        match parse::record_members(text, &RECORD_KEYS, Some(at::META)) {
            Ok(parse::Members::Named(members, meta)) if is_capture_record(&members) => {
                return read_members_with(
                    *members,
                    meta.map(Meta::from_checked_text),
                    source.as_str(),
                );
            }
            Ok(parse::Members::Named(mut members, meta)) => {
                if let Some(m) = meta {
                    members[at::META] = Some(Value::Object(Meta::from_checked_text(m).into_map()));
                }
                return crate::core::shape::read(
                    Value::Object(members_object(*members)),
                    source,
                    None,
                );
            }
            Ok(parse::Members::Other(value)) => {
                return crate::core::shape::read(value, source, None);
            }
            // the parse stage's own reading names the problem
            Err(_) => {}
        }
    }
    let value = parse::parse_strict(text).map_err(|f| record_parse_error(&f))?;
    crate::core::shape::read(value, source, forced)
}

/// The `INVALID_CAPTURE` of a record that is not strict JSON (`f`: the parse finding).
pub(crate) fn record_parse_error(f: &crate::core::verdict::Finding) -> RecordError {
    let at = f.at.map(|a| format!(" at {a}")).unwrap_or_default();
    // valid JSON that is only too deep is not called invalid
    let what = if f.reason == Reason::TOO_DEEP {
        "record"
    } else {
        "record is not valid JSON"
    };
    // a value inside prose, a fence or a tag is positioned where the value starts, which
    // the message names (`the JSON value at 3:11 is preceded by prose ... found "Hello"`),
    // not where the record stops being JSON (its first character)
    let message = match f.message.strip_prefix("the JSON value ") {
        Some(rest) if f.reason == Reason::FENCED_JSON => {
            format!("{what}: the JSON value{at} {rest}")
        }
        _ => format!("{what}{at}: {}", f.message),
    };
    RecordError {
        finding: invalid(message),
        id: None,
        expect: None,
        format: None,
    }
}

/// A capture record's members by the place of their name in [`RECORD_KEYS`].
pub(crate) type Members = [Option<Value>; RECORD_KEYS.len()];

/// The places of [`RECORD_KEYS`] in [`Members`].
mod at {
    pub(super) const ID: usize = 0;
    pub(super) const CONTRACT: usize = 1;
    pub(super) const RESPONSE: usize = 2;
    pub(super) const OUTPUT: usize = 3;
    pub(super) const STATUS: usize = 4;
    pub(super) const STATUS_DETAIL: usize = 5;
    pub(super) const PROVIDER: usize = 6;
    pub(super) const TOOL: usize = 7;
    pub(super) const CONTEXT: usize = 8;
    pub(super) const INTENT: usize = 9;
    pub(super) const EXPECT: usize = 10;
    pub(super) const META: usize = 11;
    pub(super) const REQUEST: usize = 12;
    pub(super) const CHAIN: usize = 13;
    pub(super) const ATTEMPT: usize = 14;
}

/// Reads a record object as a capture record (`docs/capture-record.md`); `default_id` is
/// the id of a record with none.
///
/// # Errors
/// As [`parse_record`], for a capture record.
pub(crate) fn read_capture(
    obj: Map<String, Value>,
    default_id: &str,
) -> Result<Capture, RecordError> {
    if let Some(finding) = unknown_key(&obj) {
        return Err(RecordError {
            finding,
            id: obj.get("id").and_then(Value::as_str).map(str::to_string),
            expect: obj.get("expect").and_then(|e| parse_expect(e).ok()),
            format: Some("capture"),
        });
    }
    let mut members: Members = Default::default();
    for (k, v) in obj {
        let i = RECORD_KEYS
            .iter()
            .position(|r| *r == k)
            .expect("every key is a record key (unknown_key)");
        members[i] = Some(v);
    }
    read_members(members, default_id)
}

/// [`read_capture`] of a record whose members are all named in [`RECORD_KEYS`], by their
/// places ([`Members`]).
///
/// # Errors
/// As [`read_capture`].
pub(crate) fn read_members(members: Members, default_id: &str) -> Result<Capture, RecordError> {
    read_members_with(members, None, default_id)
}

/// [`read_members`], `meta` given apart (its place in `members` empty) when it was kept as
/// its text ([`Meta`]).
fn read_members_with(
    mut members: Members,
    meta: Option<Meta>,
    default_id: &str,
) -> Result<Capture, RecordError> {
    check_record(&mut members, meta, default_id).map_err(|finding| RecordError {
        finding,
        // `id` and `expect` are only read by the checks, never taken
        id: members[at::ID]
            .as_ref()
            .and_then(Value::as_str)
            .map(str::to_string),
        expect: members[at::EXPECT]
            .as_ref()
            .and_then(|e| parse_expect(e).ok()),
        format: Some("capture"),
    })
}

/// Whether a capture record read from `members` is read as a capture record: a record
/// whose member names are all record keys is one unless it is a Vertex AI batch line
/// (`request`, `response` and `status`; `crate::core::shape::SHAPES` detects that shape
/// first, and no other shape before the capture record takes a record of only these names).
pub(crate) fn is_capture_record(members: &Members) -> bool {
    !(members[at::REQUEST].is_some()
        && members[at::RESPONSE].is_some()
        && members[at::STATUS].is_some())
}

/// The members as the record's object.
pub(crate) fn members_object(members: Members) -> Map<String, Value> {
    RECORD_KEYS
        .iter()
        .zip(members)
        .filter_map(|(k, v)| Some(((*k).to_owned(), v?)))
        .collect()
}

/// The `INVALID_CAPTURE` of a capture record's first key outside [`RECORD_KEYS`].
fn unknown_key(obj: &Map<String, Value>) -> Option<Finding> {
    let key = obj.keys().find(|k| !RECORD_KEYS.contains(&k.as_str()))?;
    let mut f = invalid(format!(
        "unknown key `{key}` in capture record (free-form data belongs in `meta`)"
    ));
    f.pointer = None;
    if let Some(h) = hint_for(key, RECORD_KEYS) {
        f = f.with_hint(h);
    } else if !obj.contains_key("response") && !obj.contains_key("output") {
        // no capture key at all: most likely a plain JSON instance
        f = f.with_hint(
            "this looks like a plain JSON value, not a capture record or a provider log record: to validate plain JSON files, run `verdict check --schema SCHEMA FILE..`",
        );
    }
    Some(f)
}

fn check_record(
    obj: &mut Members,
    lazy_meta: Option<Meta>,
    default_id: &str,
) -> Result<Capture, Finding> {
    let string = |obj: &Members, key: usize| -> Result<Option<String>, Finding> {
        match &obj[key] {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(invalid(format!(
                "`{}` must be a string, found {}",
                RECORD_KEYS[key],
                json_kind(v)
            ))),
        }
    };
    let object = |obj: &mut Members, key: usize| -> Result<Option<Map<String, Value>>, Finding> {
        match obj[key].take() {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(invalid(format!(
                "`{}` must be an object, found {}",
                RECORD_KEYS[key],
                json_kind(&v)
            ))),
        }
    };
    let id = string(obj, at::ID)?.unwrap_or_else(|| default_id.to_string());
    if id.is_empty() {
        return Err(invalid("`id` must not be empty"));
    }
    let contract = string(obj, at::CONTRACT)?;
    let provider = string(obj, at::PROVIDER)?;
    let tool = string(obj, at::TOOL)?;
    let status = string(obj, at::STATUS)?;
    let status_detail = match &obj[at::STATUS_DETAIL] {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(v) => {
            return Err(invalid(format!(
                "`status_detail` must be a string, found {}",
                json_kind(v)
            )));
        }
    };
    let expect = match &obj[at::EXPECT] {
        None => None,
        Some(e) => Some(parse_expect(e)?),
    };
    let chain = string(obj, at::CHAIN)?;
    if chain.as_deref() == Some("") {
        return Err(invalid("`chain` must not be empty"));
    }
    let attempt = match &obj[at::ATTEMPT] {
        None => None,
        Some(v) => Some(attempt_number(v).ok_or_else(|| {
            invalid(format!(
                "`attempt` must be an integer from 1 (the first attempt is 1), found {}",
                match v {
                    Value::Number(n) => n.to_string(),
                    v => json_kind(v).to_string(),
                }
            ))
            .with_pointer("/attempt")
        })?),
    };
    if attempt.is_some() && chain.is_none() {
        return Err(invalid(
            "`attempt` goes with `chain` (the chain the capture is an attempt of)",
        ));
    }
    let context = object(obj, at::CONTEXT)?;
    let intent = object(obj, at::INTENT)?;
    let meta = match lazy_meta {
        Some(m) => Some(m),
        None => object(obj, at::META)?.map(Meta::from),
    };
    let request = match obj[at::REQUEST].take() {
        None => None,
        Some(v @ Value::Object(_)) => Some(CaptureRequest {
            body: v,
            base: "/request",
            echoed: false,
        }),
        Some(v) => {
            return Err(invalid(format!(
                "`request` must be an object (the provider request body as sent), found {}",
                json_kind(&v)
            )));
        }
    };
    let payload = match (obj[at::RESPONSE].take(), obj[at::OUTPUT].take()) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "a capture record has exactly one of `response` and `output`, found both",
            ));
        }
        (None, None) => {
            return Err(invalid(
                "a capture record needs `response` (the provider's raw response) or `output` (the model's text)",
            ));
        }
        (Some(r), None) => {
            if !(r.is_object() || r.is_array() || r.is_string()) {
                return Err(invalid(format!(
                    "`response` must be an object, an array of stream events or SSE text, found {}",
                    json_kind(&r)
                )));
            }
            if status.is_some() || status_detail.is_some() {
                return Err(invalid(
                    "`status` and `status_detail` go with `output`; a `response` carries its own status",
                ));
            }
            Payload::Response(r)
        }
        (None, Some(output)) => Payload::Output {
            output,
            status,
            status_detail,
        },
    };
    if provider.is_some() && !matches!(payload, Payload::Response(_)) {
        return Err(invalid("`provider` goes with `response`"));
    }
    Ok(Capture {
        id,
        format: "capture",
        contract,
        payload,
        provider,
        tool,
        context,
        intent,
        expect,
        meta,
        request,
        chain,
        attempt,
    })
}

/// A record's `attempt` as a number from 1: a JSON integer (`2` or `2.0`, as JSON Schema's
/// `integer` says) of at least 1; `None` for anything else (`0`, `-1`, `"2"`, `1.5`).
fn attempt_number(v: &Value) -> Option<u64> {
    let n = v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= 9_007_199_254_740_992.0)
            .map(|f| f as u64)
    })?;
    (n >= 1).then_some(n)
}

/// Parses an `expect` object: `stage`, `decision`, `reason` (a left-out key is not checked).
///
/// # Errors
/// `INVALID_CAPTURE` for an unknown key or stage or decision name.
pub fn parse_expect(v: &Value) -> Result<Expect, Finding> {
    let Value::Object(m) = v else {
        return Err(invalid(format!(
            "`expect` must be an object, found {}",
            json_kind(v)
        )));
    };
    let mut e = Expect::default();
    for (k, v) in m {
        match (k.as_str(), v) {
            ("stage", Value::String(s)) => {
                e.stage = Some(Stage::parse(s).ok_or_else(|| {
                    let names = Stage::ALL.map(Stage::as_str);
                    let mut f = invalid(format!(
                        "unknown stage {s:?} in `expect`; stages: {}",
                        names.join(", ")
                    ));
                    if let Some(h) = hint_for(s, names) {
                        f = f.with_hint(h);
                    }
                    f
                })?)
            }
            ("decision", Value::String(s)) => {
                e.decision = Some(Decision::parse(s).ok_or_else(|| {
                    let names = Decision::ALL.map(Decision::as_str);
                    let mut f = invalid(format!(
                        "unknown decision {s:?} in `expect`; decisions: {}",
                        names.join(", ")
                    ));
                    if let Some(h) = hint_for(s, names) {
                        f = f.with_hint(h);
                    }
                    f
                })?)
            }
            ("reason", Value::String(s)) => e.reason = Some(Some(Reason::new(s.as_str()))),
            ("reason", Value::Null) => e.reason = Some(None),
            ("stage" | "decision" | "reason", v) => {
                return Err(invalid(format!(
                    "`expect.{k}` must be a string, found {}",
                    json_kind(v)
                )));
            }
            (k, _) => {
                let mut f = invalid(format!(
                    "unknown key `{k}` in `expect` (keys: stage, decision, reason)"
                ));
                if let Some(h) = hint_for(k, ["stage", "decision", "reason"]) {
                    f = f.with_hint(h);
                }
                return Err(f);
            }
        }
    }
    Ok(e)
}

#[cfg(test)]
mod read_line_tests {
    use super::{read_line_blocks_by, read_line_bytes_at, read_line_runs, too_large};

    type Line = (usize, u64, Result<Vec<u8>, String>);

    /// The splitting rules of [`read_line_bytes_at`] on the whole input at once.
    fn reference(bytes: &[u8], max: u64) -> Vec<Line> {
        let mut out = Vec::new();
        let mut at = 0u64;
        for (i, raw) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
            let n = i + 1;
            let start = at;
            at += raw.len() as u64;
            if raw.len() as u64 > max.saturating_add(2) {
                // the record: the line without its ending (`\n`, `\r\n`, a last `\r`)
                let record = raw.strip_suffix(b"\n").unwrap_or(raw);
                let record = record.strip_suffix(b"\r").unwrap_or(record);
                out.push((n, start, Err(too_large(record.len() as u64, max).message)));
                continue;
            }
            let mut line = raw;
            while let [rest @ .., b'\n' | b'\r'] = line {
                line = rest;
            }
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            out.push((
                n,
                start,
                if line.len() as u64 > max {
                    Err(too_large(line.len() as u64, max).message)
                } else {
                    Ok(line.to_vec())
                },
            ));
        }
        out
    }

    /// A reader that fails after `ok` bytes of `text`.
    struct Failing<'a> {
        text: &'a [u8],
        ok: usize,
    }

    impl std::io::Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.ok == 0 {
                return Err(std::io::Error::other("disk gone"));
            }
            let n = buf.len().min(self.ok).min(self.text.len()).min(2);
            buf[..n].copy_from_slice(&self.text[..n]);
            self.text = &self.text[n..];
            self.ok -= n;
            Ok(n)
        }
    }

    #[test]
    fn a_read_error_ends_the_blocks_as_it_ends_the_lines() {
        let text = b"{\"a\":1}\n\n{\"b\":2}\n{\"c\":3}\n";
        for ok in 1..text.len() {
            let mut want = Vec::new();
            read_line_bytes_at(
                std::io::BufReader::with_capacity(4, Failing { text, ok }),
                64,
                |n, _, l| want.push((n, l.map(<[u8]>::to_vec).map_err(|f| f.message))),
            );
            let mut got = Vec::new();
            read_line_blocks_by(
                Failing { text, ok },
                64,
                4,
                1,
                |lines, _| lines >= 2,
                |bytes, lines| {
                    for (n, l) in lines {
                        got.push((n, l.map(|r| bytes[r].to_vec()).map_err(|f| f.message)));
                    }
                    true
                },
            );
            assert_eq!(got, want, "failing after {ok} bytes");
            assert!(want.last().is_some_and(|l| l.1.is_err()), "{want:?}");
        }
    }

    /// An over-long line's message counts its record's bytes, the line without its ending:
    /// the same count with `\n`, `\r\n` or none (the last line), whichever reader reads it
    /// and however its reads fall. A record of `max` bytes passes with either ending.
    #[test]
    fn an_over_long_line_counts_its_record_without_its_line_ending() {
        let max = 8u64;
        for ending in ["\n", "\r\n", ""] {
            for len in [8usize, 9, 10, 11, 12, 40] {
                let record = "x".repeat(len);
                let text = format!("{{}}\r\n{record}{ending}");
                let want = vec![
                    (1, Ok(b"{}".to_vec())),
                    (
                        2,
                        if len as u64 > max {
                            Err(format!(
                                "capture record is {len} bytes, over max_capture_bytes (8); \
                                 not parsed"
                            ))
                        } else {
                            Ok(record.clone().into_bytes())
                        },
                    ),
                ];
                let case = format!("{len} bytes, ending {ending:?}");
                for cap in [1usize, 3, 4096] {
                    let mut got = Vec::new();
                    let reader = std::io::BufReader::with_capacity(cap, text.as_bytes());
                    read_line_bytes_at(reader, max, |n, _, l| {
                        got.push((n, l.map(<[u8]>::to_vec).map_err(|f| f.message)))
                    });
                    assert_eq!(got, want, "lines: {case}, buffer {cap}");
                    let mut runs = Vec::new();
                    let reader = std::io::BufReader::with_capacity(cap, text.as_bytes());
                    read_line_runs(reader, max, |run, lines| {
                        for l in lines.drain(..) {
                            let text = l.text.map(|r| run[r].to_vec()).map_err(|f| f.message);
                            runs.push((l.line_no, text));
                        }
                    });
                    assert_eq!(runs, want, "runs: {case}, buffer {cap}");
                    let mut blocks = Vec::new();
                    read_line_blocks_by(
                        text.as_bytes(),
                        max,
                        cap,
                        1 + cap % 7,
                        |_, _| true,
                        |bytes, lines| {
                            for (n, l) in lines {
                                let text = l.map(|r| bytes[r].to_vec()).map_err(|f| f.message);
                                blocks.push((n, text));
                            }
                            true
                        },
                    );
                    assert_eq!(blocks, want, "blocks: {case}, reads of {}", 1 + cap % 7);
                }
            }
        }
    }

    #[test]
    fn sending_false_stops_the_reading() {
        let text = b"1\n2\n3\n4\n";
        let mut sent = 0;
        read_line_blocks_by(
            &text[..],
            64,
            2,
            1,
            |lines, _| lines >= 1,
            |_, _| {
                sent += 1;
                false
            },
        );
        assert_eq!(sent, 1);
    }

    #[test]
    fn lines_split_the_same_whatever_the_reader_buffer_size() {
        let pieces: &[&[u8]] = &[b"{}", b"ab", b"\n", b"\r", b"\r\n", b" ", b"\t", b"xyz01"];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..3000 {
            let len = next(16);
            let text: Vec<u8> = (0..len)
                .flat_map(|_| pieces[next(pieces.len())].to_vec())
                .collect();
            let max = [0u64, 1, 3, 6, 64][next(5)];
            let want = reference(&text, max);
            for cap in [1usize, 2, 3, 5, 8, 4096] {
                let mut got = Vec::new();
                let reader = std::io::BufReader::with_capacity(cap, text.as_slice());
                read_line_bytes_at(reader, max, |n, at, l| {
                    got.push((n, at, l.map(<[u8]>::to_vec).map_err(|f| f.message)))
                });
                assert_eq!(got, want, "{text:?}, max {max}, buffer {cap}");
                // in runs: the same lines, each run's lines ranges of the buffer it gives
                let mut runs = Vec::new();
                let reader = std::io::BufReader::with_capacity(cap, text.as_slice());
                read_line_runs(reader, max, |run, lines| {
                    assert!(!lines.is_empty(), "a run has lines");
                    for l in lines.drain(..) {
                        let text = l.text.map(|r| run[r].to_vec()).map_err(|f| f.message);
                        runs.push((l.line_no, text));
                    }
                });
                let want: Vec<_> = want.iter().map(|(n, _, l)| (*n, l.clone())).collect();
                assert_eq!(runs, want, "runs: {text:?}, max {max}, buffer {cap}");
                // in owned blocks of `cap` bytes (reads of 1 to 3 bytes, a block full after 1 to
                // 3 lines or `cap` bytes): the same lines, each block's ranges in its bytes
                let (min_read, per_block) = (1 + cap % 3, 1 + len % 3);
                let mut blocks = Vec::new();
                let reader = std::io::BufReader::with_capacity(cap, text.as_slice());
                read_line_blocks_by(
                    reader,
                    max,
                    cap,
                    min_read,
                    |lines, bytes| lines >= per_block || bytes >= cap,
                    |bytes, lines| {
                        assert!(!lines.is_empty(), "a block has lines");
                        for (n, l) in lines {
                            let text = l.map(|r| bytes[r].to_vec()).map_err(|f| f.message);
                            blocks.push((n, text));
                        }
                        true
                    },
                );
                assert_eq!(blocks, want, "blocks: {text:?}, max {max}, buffer {cap}");
            }
        }
    }
}

#[cfg(test)]
mod record_members_tests {
    use super::*;

    /// What [`parse_record`] gave before the members were read into places: the strict
    /// parse, then the pass over the record shapes.
    /// Each of `texts`, as line N+1 of a log, reads to the same capture or error through
    /// [`parse_record`] as through the strict parse and the shapes.
    fn reads_as_shapes(texts: &[&str]) {
        for (i, text) in texts.iter().enumerate() {
            let source = RecordRef::new("captures/log.jsonl", Some(i + 1));
            assert_eq!(
                parse_record(text, &source),
                by_shapes(text, &source),
                "{text}"
            );
        }
    }

    fn by_shapes(text: &str, source: &RecordRef) -> Result<Capture, RecordError> {
        let value = parse::parse_strict(text).map_err(|f| record_parse_error(&f))?;
        crate::core::shape::read(value, source, None)
    }

    #[test]
    fn records_read_by_their_members_read_as_the_shapes_read_them() {
        let texts = [
            r#"{"id":"c1","output":"{\"a\":1}","context":{"order":{"x":[1,2.5,"s",null]}},"intent":{"a":1},"meta":{"m":"x"}}"#,
            r#"{"output":"{}","status":"incomplete","status_detail":"max_output_tokens","expect":{"stage":"response"}}"#,
            r#"{"id":"c2","response":{"id":"r","object":"response","output":[]},"provider":"openai-responses","tool":"t"}"#,
            r#"{"id":"c3","output":"x","chain":"k","attempt":2,"contract":"refund-v1","request":{"model":"m"}}"#,
            r#"{"id":"","output":"x"}"#,
            r#"{"id":7,"output":"x","expect":{"reason":"X"}}"#,
            r#"{"id":"c4","output":"x","context":[1]}"#,
            r#"{"id":"c5","output":"x","intent":"no","expect":{"decision":"reject"}}"#,
            r#"{"id":"c6","output":"x","response":{}}"#,
            r#"{"id":"c7"}"#,
            r#"{}"#,
            r#"{"id":"c8","output":"x","attempt":2}"#,
            r#"{"id":"c9","output":"x","chain":"","attempt":0}"#,
            r#"{"id":"c10","output":"x","status_detail":429,"provider":"openai-chat"}"#,
            r#"{"id":"c11","output":"x","expect":{"stage":"nope"}}"#,
            r#"{"id":"c12","output":"x","request":"s"}"#,
            r#"{"id":"c13","response":{"candidates":[]},"status":"completed"}"#,
            // a Vertex AI batch line: the shape before the capture record's
            r#"{"request":{"contents":[]},"response":{"candidates":[]},"status":""}"#,
            // another member name: read as the shapes read it
            r#"{"id":"c14","output":"x","note":1}"#,
            r#"{"id":"c15","outptu":"x"}"#,
            r#"{"custom_id":"b1","response":{"status_code":200,"body":{}},"error":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"id":"r1","object":"chat.completion","choices":[]}"#,
            r#"{"a":1}"#,
            // not strict JSON, or not an object
            r#"{"id":"c16","output":"x","id":"c17"}"#,
            r#"{"id":"c18","output":"x","context":{"a":1,"a":2}}"#,
            r#"{"id":"c19","output":"x","note":1,"note":2}"#,
            r#"{"id":"c20","output":"x","note":1,"id":"c21"}"#,
            r#"{"id":"c22","output":"x","meta":{"n":1e999}}"#,
            r#"{"id":"c23","output":"x","meta":{"n":0.30000000000000000001}}"#,
            r#"{"id":"c24","output":"x"} trailing"#,
            r#"{"id":"c25","output":"x""#,
            r#"[{"type":"message_start","message":{"id":"m"}}]"#,
            r#"[1,2]"#,
            r#""a string""#,
            r#"3"#,
            r#"null"#,
            r#"true"#,
            "",
        ];
        reads_as_shapes(&texts);
        // the records above take each way of the reading at least once
        let named = |t: &str| {
            matches!(
                parse::record_members(t, &RECORD_KEYS, Some(at::META)),
                Ok(parse::Members::Named(m, _)) if is_capture_record(&m)
            )
        };
        assert!(named(texts[0]) && named(texts[16]));
        assert!(!named(texts[17]) && !named(texts[18]) && !named(texts[24]));
    }

    /// A record whose `meta` is `meta` (JSON text).
    fn with_meta(meta: &str) -> String {
        format!(r#"{{"id":"m","output":"{{}}","meta":{meta},"context":{{"a":1}}}}"#)
    }

    #[test]
    fn a_meta_kept_as_text_reads_as_the_shapes_read_it() {
        let deep = |k: usize| format!("{}1{}", r#"{"a":"#.repeat(k), "}".repeat(k));
        let deep_array =
            |k: usize| format!(r#"{{"a":{}1{}}}"#, "[".repeat(k - 1), "]".repeat(k - 1));
        let metas = [
            // the flat objects the one-pass check accepts
            r#"{"request_id":"req_1","model":"gpt","captured_at":"2026-11-28T00:00:00Z"}"#.to_string(),
            r#"{}"#.into(),
            r#" { } "#.into(),
            r#"{ "a" : 1 , "b" : -0 , "c" : true , "d" : false , "e" : null , "f" : "" }"#.into(),
            r#"{"n":123456789012345678,"m":-123456789012345678}"#.into(),
            "{\"a\":\"\u{e9}\u{1F600}\"}".into(),
            // what it leaves to `serde_json`: escapes, nesting, doubles, long integers
            r#"{"a":"x\"y","b":"\u00e9\ud83d\ude00","c":"\n\t\/"}"#.into(),
            r#"{"\u0061":1,"b":2}"#.into(),
            r#"{"a":{"b":[1,2.5,{"c":null}]},"d":[]}"#.into(),
            r#"{"n":1234567890123456789,"m":12345678901234567890}"#.into(),
            r#"{"n":1.5e3,"m":-0.0,"k":1E2}"#.into(),
            r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17}"#.into(),
            // and what the record's parse rejects
            r#"{"a":1,"a":2}"#.into(),
            r#"{"a":1,"\u0061":2}"#.into(),
            r#"{"a":{"b":1,"b":2}}"#.into(),
            r#"{"n":1e999}"#.into(),
            r#"{"n":0.30000000000000000001}"#.into(),
            r#"{"n":123456789012345678901234567890}"#.into(),
            r#"{"n":01}"#.into(),
            r#"{"s":"\ud800"}"#.into(),
            r#"{"s":"\udc00x"}"#.into(),
            r#"{"s":"\ud800\u0041"}"#.into(),
            "{\"s\":\"a\u{1}b\"}".into(),
            r#"{"s":"\x"}"#.into(),
            r#"{"a":1,}"#.into(),
            r#"{"a" 1}"#.into(),
            // not an object: the record's error
            r#"[1,2]"#.into(),
            r#""text""#.into(),
            r#"3"#.into(),
            r#"null"#.into(),
            // deep: the record is one level, so `meta` may nest 126 more
            deep(125),
            deep(126),
            deep(127),
            deep_array(126),
            deep_array(127),
        ];
        for (i, meta) in metas.iter().enumerate() {
            let text = with_meta(meta);
            let source = RecordRef::new("captures/log.jsonl", Some(i + 1));
            let got = parse_record(&text, &source);
            if let Ok(c) = &got {
                // a record-keys-only record keeps its `meta` object as text (until the
                // comparison below reads it)
                assert!(c.meta.as_ref().is_some_and(Meta::is_text), "{meta}");
            }
            assert_eq!(got, by_shapes(&text, &source), "{meta}");
        }
        let ok = |m: &str| parse_record(&with_meta(m), &RecordRef::new("c", None)).is_ok();
        assert!(ok(&metas[0]) && ok(&metas[9]) && ok(&deep(126)) && ok(&deep_array(126)));
        assert!(!ok(&metas[12]) && !ok(&metas[13]) && !ok(&metas[19]));
        assert!(!ok(&deep(127)) && !ok(&deep_array(127)));
        // the meta a capture keeps is the record's, built on first read
        let c = parse_record(&with_meta(&metas[6]), &RecordRef::new("c", None)).unwrap();
        let meta = c.meta.unwrap();
        assert_eq!(meta.get("a"), Some(&Value::from("x\"y")));
        assert_eq!(meta.get("b"), Some(&Value::from("\u{e9}\u{1F600}")));
        assert!(!meta.is_text());
    }

    #[test]
    fn a_meta_beside_other_names_or_twice_reads_as_the_shapes_read_it() {
        let texts = [
            // another member name after `meta`: the whole record is a map
            r#"{"id":"m","output":"x","meta":{"a":1},"note":1}"#,
            r#"{"id":"m","output":"x","meta":{"a":{"b":[1]}},"note":1,"zz":2}"#,
            r#"{"meta":{"a":1},"custom_id":"b1","response":{"status_code":200,"body":{}}}"#,
            // `meta` twice
            r#"{"id":"m","output":"x","meta":{"a":1},"meta":{"a":1}}"#,
            r#"{"id":"m","output":"x","meta":[1],"meta":{"a":1}}"#,
            r#"{"id":"m","output":"x","meta":{"a":1},"meta":2}"#,
            // a Vertex AI batch line with a `meta`: read by its shape
            r#"{"request":{"contents":[]},"response":{"candidates":[]},"status":"","meta":{"k":"v"}}"#,
            // an error elsewhere in the record after a `meta` kept as text
            r#"{"id":"m","output":"x","meta":{"a":1},"context":{"a":1,"a":2}}"#,
            r#"{"id":"m","output":"x","meta":{"a":1},"attempt":0,"chain":"c"}"#,
        ];
        reads_as_shapes(&texts);
    }
}
