//! The pre-pass (`docs/commands.md#the-pre-pass`): one read of each capture file, before the
//! first verdict, for everything that must be known of all the files before any record is
//! validated:
//!
//! * the MCP facts ([`crate::core::mcp`]): which tool each JSON-RPC request id called, and
//!   the tools the `tools/list` results declare (the contracts `mcp/TOOL.input` and
//!   `mcp/TOOL.output`, compiled after the pre-pass: [`Workspace::with_facts`]);
//! * the batch-request index ([`crate::core::request`]);
//! * whatever a [`Hook`] collects per record: the engine's duplicate-id candidates
//!   (`crate::engine::ids`), for the files it is asked for.
//!
//! Each concern keeps its own logic in its module: a per-record reading that is pure (run
//! on blocks of lines in parallel) and a per-file builder fed in record order. The reader
//! opens each file once, as the pipeline reads it ([`capture::open_log`] for a log: never a
//! FIFO, never past its size at opening, a `.gz` / `.zst` inflated as it is read, no line
//! past `max_capture_bytes` held; [`capture::for_each_record_as`] for a one-record file).
//! Files are read in parallel, and a log's lines in blocks of [`BLOCK`] whose records are
//! read in parallel. [`Progress`] counts what is read and lets the caller stop it.

use crate::core::capture;
use crate::core::mcp::{self, McpSessions};
use crate::core::record_ref::RecordRef;
use crate::core::request::{self, Requests};
use crate::core::workspace::Workspace;
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// What the pre-pass's byte tests ask of a record, found in one search of its whole text
/// for them all (the duplicate-id scan, the MCP and the request tests): whether it holds
/// `jsonrpc` (an MCP message's member name) and `\u` (an escape a member name could hide
/// behind, RFC 8259 section 7), which of the quoted member names the tests look for it
/// holds ([`Needle`]), and where the ones the duplicate-id scan reads the values of are.
///
/// The search is one pass of an Aho-Corasick automaton over every needle (leftmost-first,
/// non-overlapping), where the tests made one `memmem` pass per needle (about eleven for a
/// capture record). It finds every match the separate searches find: no needle is a prefix
/// of another, and no match can begin inside another on strict JSON, where the only `"`
/// inside a match is its last byte, the closing quote of a string, which no needle (each a
/// quote and a letter, `jsonrpc`, `resourceSpans` or `\u`) can begin at. On other text a
/// match may be missed, as the byte scans allow (`crate::engine::ids`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sniff {
    /// The bytes hold `jsonrpc`.
    pub jsonrpc: bool,
    /// The bytes hold `\u`.
    pub escape: bool,
    /// The [`Needle`]s found, a bit each (`1 << needle as u32`).
    found: u32,
    /// The first [`Sniff::MEMBERS`] matches of member needles ([`Needle::is_member`]), in
    /// text order: the needle and the offset of its opening quote.
    members: [(u8, u32); Sniff::MEMBERS],
    /// How many of `members` are set; `u8::MAX`: more matches than it holds (ask
    /// [`Sniff::member_matches`] to search again).
    member_count: u8,
}

/// What the one search of [`Sniff::of`] looks for. `Id` to `RequestId` are
/// `crate::engine::ids::ID_MEMBERS` quoted, in its order; `Chain` and `TraceId` are the
/// members of `crate::engine::ids::CHAIN_MEMBERS` that are not ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Needle {
    /// `jsonrpc`, anywhere.
    Jsonrpc,
    /// `\u`, anywhere.
    Escape,
    /// `resourceSpans`, anywhere.
    ResourceSpans,
    /// `"jsonrpc"`.
    QuotedJsonrpc,
    /// `"id"`.
    Id,
    /// `"custom_id"`.
    CustomId,
    /// `"key"`.
    Key,
    /// `"recordId"`.
    RecordId,
    /// `"responseId"`.
    ResponseId,
    /// `"RequestId"`.
    RequestId,
    /// `"chain"`.
    Chain,
    /// `"trace_id"`.
    TraceId,
    /// `"method"`.
    Method,
    /// `"url"`.
    Url,
    /// `"params"`.
    Params,
    /// `"request"` (the search is for `"request`, its next bytes tell the two apart).
    Request,
    /// `"requests"`.
    Requests,
}

impl Needle {
    /// The bytes searched for, in [`Needle`] order up to `Request` (`Requests` is found by
    /// `Request`'s search).
    const SEARCHED: [&'static [u8]; 16] = [
        b"jsonrpc",
        b"\\u",
        b"resourceSpans",
        b"\"jsonrpc\"",
        b"\"id\"",
        b"\"custom_id\"",
        b"\"key\"",
        b"\"recordId\"",
        b"\"responseId\"",
        b"\"RequestId\"",
        b"\"chain\"",
        b"\"trace_id\"",
        b"\"method\"",
        b"\"url\"",
        b"\"params\"",
        b"\"request",
    ];

    /// Whether the duplicate-id scan reads the value after this member name (its offsets
    /// are kept): the id and chain members.
    pub fn is_member(self) -> bool {
        (Needle::Id as u8..=Needle::TraceId as u8).contains(&(self as u8))
    }

    /// Every needle, in order: the one the search reports as pattern `i` is `ALL[i]`.
    pub const ALL: [Needle; 17] = [
        Needle::Jsonrpc,
        Needle::Escape,
        Needle::ResourceSpans,
        Needle::QuotedJsonrpc,
        Needle::Id,
        Needle::CustomId,
        Needle::Key,
        Needle::RecordId,
        Needle::ResponseId,
        Needle::RequestId,
        Needle::Chain,
        Needle::TraceId,
        Needle::Method,
        Needle::Url,
        Needle::Params,
        Needle::Request,
        Needle::Requests,
    ];

    /// The bytes the needle stands for: what is searched, but `"request"` and
    /// `"requests"` whole.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            Needle::Request => b"\"request\"",
            Needle::Requests => b"\"requests\"",
            n => Needle::SEARCHED[n as usize],
        }
    }
}

/// The automaton of [`Sniff::of`], built once.
static SEARCHER: std::sync::LazyLock<aho_corasick::AhoCorasick> = std::sync::LazyLock::new(|| {
    aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(Needle::SEARCHED.iter().enumerate().map(|(i, n)| {
            if i == Needle::Escape as usize {
                &b"jsonrpc"[..]
            } else {
                *n
            }
        }))
        .expect("a handful of short literals always build")
});

/// The matches of [`SEARCHER`] in `bytes`: `(needle, offset)`, in text order.
fn needles(bytes: &[u8]) -> impl Iterator<Item = (Needle, usize)> + '_ {
    SEARCHER.find_iter(bytes).map(move |m| {
        let n = Needle::ALL[m.pattern().as_usize()];
        // `"request` followed by `"` or `s"`
        let n = match (n, bytes.get(m.end()..)) {
            (Needle::Request, Some([b's', b'"', ..])) => Needle::Requests,
            (n, _) => n,
        };
        (n, m.start())
    })
}

impl Sniff {
    /// How many member matches a `Sniff` holds (a capture record has one, `"id"`).
    pub const MEMBERS: usize = 8;

    /// The one search of `bytes`.
    pub fn of(bytes: &[u8]) -> Sniff {
        let mut s = Sniff::default();
        for (n, at) in needles(bytes) {
            if n == Needle::Request && bytes.get(at + 8) != Some(&b'"') {
                // `"request` begins neither `"request"` nor `"requests"`
                continue;
            }
            s.found |= 1 << n as u32;
            if n == Needle::QuotedJsonrpc {
                s.found |= 1 << Needle::Jsonrpc as u32;
            }
            if n.is_member() && s.member_count != u8::MAX {
                match (
                    s.members.get_mut(s.member_count as usize),
                    u32::try_from(at),
                ) {
                    (Some(slot), Ok(at)) => {
                        *slot = (n as u8, at);
                        s.member_count += 1;
                    }
                    _ => s.member_count = u8::MAX,
                }
            }
        }
        // `\u` apart: a needle of two bytes would make the automaton's prefilter (Teddy)
        // test every pair of bytes, not every three, and stop at most quotes
        static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
        if ESCAPE.find(bytes).is_some() {
            s.found |= 1 << Needle::Escape as u32;
        }
        s.jsonrpc = s.has(Needle::Jsonrpc) || s.has(Needle::QuotedJsonrpc);
        s.escape = s.has(Needle::Escape);
        s
    }

    /// Whether the bytes hold `n`.
    pub fn has(&self, n: Needle) -> bool {
        self.found & (1 << n as u32) != 0
    }

    /// Calls `each` with the offset of every match of the member needle `n` in `bytes` (the
    /// bytes this was made of), in text order.
    pub fn member_matches(&self, bytes: &[u8], n: Needle, each: &mut dyn FnMut(usize)) {
        if !self.has(n) {
            return;
        }
        if self.member_count == u8::MAX {
            for (m, at) in needles(bytes) {
                if m == n {
                    each(at);
                }
            }
            return;
        }
        for &(m, at) in &self.members[..self.member_count as usize] {
            if m == n as u8 {
                each(at as usize);
            }
        }
    }
}

/// Lines of a log read together (their records in parallel).
pub const BLOCK: usize = 4096;

/// The size of the buffer a log is read through (`capture::read_line_runs`): the lines one
/// fill of it holds whole are read together, in place. At most [`BLOCK`] lines a block
/// would otherwise be 24 MB of ~6 KB OTLP/JSON lines, a third of `check`'s memory on a log
/// of spans.
const BLOCK_BYTES: usize = 4 << 20;

/// What a caller collects per record, besides the MCP facts and the requests (the engine's
/// duplicate-id candidates). `record` runs on many threads at once, each with its own
/// `Found`; the `Found`s of a file's records are appended in record order, those of the
/// files in the order given.
pub trait Hook: Sync {
    /// What the records of one stretch give.
    type Found: Default + Send;
    /// One record of the file numbered `file` (the [`Target::hook`] it was given) at `line`
    /// (0: the record of a one-record file), with its bytes (`None`: unreadable).
    fn record(&self, file: u32, line: u32, bytes: Option<&[u8]>, found: &mut Self::Found);
    /// [`Hook::record`] with what the pre-pass's searches found of the bytes (a hook that
    /// searches them for the same may take it from here): the pre-pass calls this one.
    fn record_sniffed(
        &self,
        file: u32,
        line: u32,
        bytes: Option<(&[u8], Sniff)>,
        found: &mut Self::Found,
    ) {
        self.record(file, line, bytes.map(|(b, _)| b), found);
    }
    /// Appends `other` (what later records gave) to `into`.
    fn append(into: &mut Self::Found, other: Self::Found);
    /// Whether [`Hook::record`] is left out for the records the pre-pass reads as batch
    /// input requests (no capture, so no id: the duplicate-id candidates skip them), when
    /// it reads the requests. False by default: the hook sees every record.
    fn skips_requests(&self) -> bool {
        false
    }

    /// Called on the thread that read them once a stretch of records is read into `found`
    /// (before it is appended): a hook may compact it there, in parallel.
    fn seal(_found: &mut Self::Found) {}
}

/// No hook: the MCP facts and the requests only.
pub struct NoHook;

impl Hook for NoHook {
    type Found = ();
    fn record(&self, _: u32, _: u32, _: Option<&[u8]>, _: &mut ()) {}
    fn append(_: &mut (), _: ()) {}
}

/// One file to read.
#[derive(Debug, Clone)]
pub struct Target {
    /// The file (root-joined, as [`Workspace::capture_files`] names it).
    pub path: PathBuf,
    /// Its number for the [`Hook`] (`None`: the hook does not see its records).
    pub hook: Option<u32>,
}

/// What the pre-pass read of one file.
#[derive(Debug, Clone)]
pub struct FileRead {
    /// The file.
    pub path: PathBuf,
    /// Workspace-relative, as sources name it.
    pub name: Arc<str>,
    /// Read line by line ([`Workspace::is_log_file`]), else one record.
    pub log: bool,
    /// Its [`Target::hook`].
    pub hook: Option<u32>,
    /// How many records it has, as the pipeline reads them (every non-blank line of a log,
    /// unreadable ones included; 1 for a one-record file or a log that cannot be opened).
    pub records: usize,
    /// The line of each record (0 for a one-record file or a log that cannot be opened),
    /// for a hooked file only (empty otherwise).
    pub lines: Lines,
}

/// The lines of a file's records, in the order read, kept as runs of consecutive numbers:
/// a log's records are mostly one run (a blank line starts another), so a 1M-line log costs
/// a few bytes here, not 4 MB.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lines {
    /// `(first, last)` of each run, inclusive.
    runs: Vec<(u32, u32)>,
}

impl Lines {
    /// Adds `line` after the ones added (one past the last run's end extends it).
    pub fn push(&mut self, line: u32) {
        match self.runs.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(line) => *last = line,
            _ => self.runs.push((line, line)),
        }
    }

    /// Every line, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(a, z)| a..=z)
    }

    /// No line added.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

/// The pre-pass of some files.
#[derive(Debug)]
pub struct Prescan<F> {
    /// Their MCP facts (every file read, each once).
    pub mcp: McpSessions,
    /// Their batch input requests.
    pub requests: Requests,
    /// Each file, in the order given.
    pub files: Vec<FileRead>,
    /// What the hook collected, file after file.
    pub found: F,
    /// False when [`Progress::stop`] stopped it (the rest is then incomplete).
    pub complete: bool,
}

/// A run of records a running pre-pass has read, for a front end that lists every record
/// before its verdict (`docs/commands.md#while-it-loads`): the records at lines `first..=last`
/// of `file` (`0..=0`: the record of a one-record file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The file, workspace-relative, as sources name it.
    pub file: Arc<str>,
    /// The first record's 1-based line (0 for a one-record file).
    pub first: u32,
    /// The last record's line (`first` or more; consecutive lines, each a record).
    pub last: u32,
}

/// What a running pre-pass has read so far (shared with the thread that shows it), and the
/// switch that stops it between blocks.
#[derive(Debug, Default)]
pub struct Progress {
    files_done: AtomicUsize,
    files: AtomicUsize,
    records: AtomicU64,
    stop: AtomicBool,
    /// Whether the records read are listed ([`Progress::listing`]).
    listing: bool,
    /// The records read and not yet taken ([`Progress::take_listed`]).
    listed: Mutex<Vec<Listed>>,
}

impl Progress {
    /// A progress that also lists the records of the hooked files as they are read, in
    /// runs of lines ([`Progress::take_listed`]): the terminal workbench shows a pending row
    /// for each before the first verdict.
    pub fn listing() -> Progress {
        Progress {
            listing: true,
            ..Progress::default()
        }
    }

    /// The records read since the last call, in the order read within a file (runs of one
    /// file never interleave with themselves out of order; files read in parallel may
    /// interleave). Empty unless made by [`Progress::listing`].
    pub fn take_listed(&self) -> Vec<Listed> {
        match self.listed.lock() {
            Ok(mut l) => std::mem::take(&mut *l),
            Err(_) => Vec::new(),
        }
    }

    /// Lists the records at `lines` (ascending) of `file`, joined into runs.
    fn list(&self, file: &Arc<str>, lines: impl IntoIterator<Item = u32>) {
        if !self.listing {
            return;
        }
        let mut runs: Vec<Listed> = Vec::new();
        for line in lines {
            match runs.last_mut() {
                Some(r) if r.last.checked_add(1) == Some(line) => r.last = line,
                _ => runs.push(Listed {
                    file: file.clone(),
                    first: line,
                    last: line,
                }),
            }
        }
        if let Ok(mut l) = self.listed.lock() {
            l.extend(runs);
        }
    }

    /// Files read completely so far.
    pub fn files_done(&self) -> usize {
        self.files_done.load(Ordering::Relaxed)
    }

    /// Files to read.
    pub fn files(&self) -> usize {
        self.files.load(Ordering::Relaxed)
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    /// Asks the pre-pass to stop after its current block (the result is incomplete).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// The reading of one record for the MCP facts and the requests: its line (`None` in a
/// one-record file), its bytes, their searches ([`Sniff`]), and whether it is JSON text (not a
/// `.sse` stream).
type ItemOf<'a> = dyn Fn(Option<usize>, &[u8], Sniff, bool) -> Option<Item> + Sync + 'a;

/// What one record gives the MCP facts and the requests (read in parallel).
struct Item {
    source: RecordRef,
    mcp: Option<mcp::Fact>,
    input: Option<request::Input>,
}

impl Item {
    /// Whether the record is a batch input request (no capture).
    fn is_request(&self) -> bool {
        self.input.is_some()
    }
}

/// One file's builders, fed in record order.
struct Builders<F> {
    mcp: mcp::FactsBuilder,
    requests: request::RequestsBuilder,
    found: F,
    records: usize,
    lines: Lines,
}

impl<F: Default> Builders<F> {
    fn new() -> Self {
        Builders {
            mcp: mcp::FactsBuilder::default(),
            requests: request::RequestsBuilder::default(),
            found: F::default(),
            records: 0,
            lines: Lines::default(),
        }
    }

    fn push(&mut self, item: Item) {
        if let Some(f) = item.mcp {
            self.mcp.push(f);
        }
        if let Some(r) = item.input {
            self.requests.push_input(&item.source, r);
        }
    }
}

/// Reads `targets` (capture files of `ws`) once each: their MCP facts and batch requests
/// (when `facts`; else only the hook's records), and what `hook` collects of the hooked
/// ones. `progress` counts the files and records read and can stop the pass.
pub fn read<H: Hook>(
    ws: &Workspace,
    targets: &[Target],
    facts: bool,
    hook: &H,
    progress: &Progress,
) -> Prescan<H::Found> {
    progress.files.store(targets.len(), Ordering::Relaxed);
    let max = ws.config.max_capture_bytes;
    let one_file = |t: &Target| -> (FileRead, mcp::FileFacts, request::FileRequests, H::Found) {
        let name: Arc<str> = ws.relative(&t.path).into();
        let log = ws.is_log_file(&t.path);
        let mut b: Builders<H::Found> = Builders::new();
        // the MCP fact and input request of one record (pure: run in parallel)
        let item = |line: Option<usize>, bytes: &[u8], sniff: Sniff, json: bool| -> Option<Item> {
            if !facts {
                return None;
            }
            let source = || RecordRef::new(name.clone(), line);
            let mcp = mcp::fact_of_with(bytes, sniff, &source);
            let input = if json {
                request::input_of_bytes_with(bytes, sniff, &source, &|record, source| {
                    ws.read_input(record, source)
                })
            } else {
                None
            };
            (mcp.is_some() || input.is_some()).then(|| Item {
                source: source(),
                mcp,
                input,
            })
        };
        if !progress.stopped() {
            if log {
                read_log(t, &name, max, hook, progress, &item, &mut b);
            } else {
                capture::for_each_record_as(&t.path, &name, max, false, |r| {
                    let bytes = r.text.as_deref().ok().map(str::as_bytes);
                    let sniffed = bytes.map(|bytes| (bytes, Sniff::of(bytes)));
                    let i = sniffed.and_then(|(bytes, sniff)| {
                        item(None, bytes, sniff, r.kind == capture::RecordKind::Json)
                    });
                    if let Some(h) = t.hook {
                        if !(hook.skips_requests() && i.as_ref().is_some_and(Item::is_request)) {
                            hook.record_sniffed(h, 0, sniffed, &mut b.found);
                        }
                        b.lines.push(0);
                    }
                    b.records += 1;
                    if let Some(i) = i {
                        b.push(i);
                    }
                });
                if t.hook.is_some() {
                    progress.list(&name, [0]);
                }
                progress.records.fetch_add(1, Ordering::Relaxed);
            }
        }
        progress.files_done.fetch_add(1, Ordering::Relaxed);
        let read = FileRead {
            path: t.path.clone(),
            name,
            log,
            hook: t.hook,
            records: b.records,
            lines: b.lines,
        };
        (read, b.mcp.finish(), b.requests.finish(), b.found)
    };
    let done: Vec<_> = targets.par_iter().map(one_file).collect();
    let mut files = Vec::with_capacity(done.len());
    let mut mcp_files = Vec::new();
    let mut request_files = Vec::new();
    let mut found = H::Found::default();
    for (read, m, r, f) in done {
        if facts {
            mcp_files.push((read.name.to_string(), m));
            request_files.push((read.name.to_string(), r));
        }
        H::append(&mut found, f);
        files.push(read);
    }
    Prescan {
        mcp: McpSessions::of_files(mcp_files),
        requests: Requests::of_file_list(request_files),
        files,
        found,
        complete: !progress.stopped(),
    }
}

/// Reads the log `t` block by block into `b`: each block's records in parallel (the hook's
/// reading and [`Item`]s), then folded in line order.
fn read_log<H: Hook>(
    t: &Target,
    name: &Arc<str>,
    max: u64,
    hook: &H,
    progress: &Progress,
    item: &ItemOf<'_>,
    b: &mut Builders<H::Found>,
) {
    let Ok(file) = capture::open_log(&t.path, name, max) else {
        // one INVALID_CAPTURE record, named by its file
        if let Some(h) = t.hook {
            hook.record(h, 0, None, &mut b.found);
            b.lines.push(0);
            progress.list(name, [0]);
        }
        b.records += 1;
        progress.records.fetch_add(1, Ordering::Relaxed);
        return;
    };
    // the lines of one run (what one fill of the reader's buffer holds whole: no line is
    // copied), at most `BLOCK` of them at a time, in parallel tasks of a share of them
    let flush = |lines: &[capture::RunLine], bytes: &[u8], b: &mut Builders<H::Found>| {
        let per_task = lines
            .len()
            .div_ceil(rayon::current_num_threads() * 4)
            .clamp(1, 256);
        let got: Vec<(H::Found, Vec<Item>)> = lines
            .par_chunks(per_task)
            .map(|chunk| {
                let mut found = H::Found::default();
                let mut items = Vec::new();
                for l in chunk {
                    let line = l.line_no as u32;
                    // the searches every test of the record asks, once
                    let text = l.text.as_ref().ok().map(|r| {
                        let text = &bytes[r.clone()];
                        (text, Sniff::of(text))
                    });
                    let i =
                        text.and_then(|(text, sniff)| item(Some(line as usize), text, sniff, true));
                    if let Some(h) = t.hook
                        && !(hook.skips_requests() && i.as_ref().is_some_and(Item::is_request))
                    {
                        hook.record_sniffed(h, line, text, &mut found);
                    }
                    if let Some(i) = i {
                        items.push(i);
                    }
                }
                H::seal(&mut found);
                (found, items)
            })
            .collect();
        for (found, items) in got {
            H::append(&mut b.found, found);
            for i in items {
                b.push(i);
            }
        }
        b.records += lines.len();
        if t.hook.is_some() {
            for l in lines {
                b.lines.push(l.line_no as u32);
            }
            progress.list(name, lines.iter().map(|l| l.line_no as u32));
        }
        progress
            .records
            .fetch_add(lines.len() as u64, Ordering::Relaxed);
    };
    let reader = Stoppable {
        inner: std::io::BufReader::with_capacity(BLOCK_BYTES, file),
        progress,
    };
    // the reading of the next blocks (on a thread of its own) overlaps the scans of this
    // one: each block is handed over with the bytes it spans, copied out of the reader's
    // buffer (a read alone keeps one of two cores busy: BENCHMARKS.md, "Session 25")
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<u8>, Vec<capture::RunLine>)>(2);
        scope.spawn(move || {
            capture::read_line_runs(reader, max, |run, lines| {
                while !lines.is_empty() {
                    let take = lines.len().min(BLOCK);
                    let mut block: Vec<capture::RunLine> = lines.drain(..take).collect();
                    let spans = block.iter().filter_map(|l| l.text.as_ref().ok());
                    let from = spans.clone().map(|r| r.start).min().unwrap_or(0);
                    let to = spans.map(|r| r.end).max().unwrap_or(from);
                    for l in &mut block {
                        if let Ok(r) = &mut l.text {
                            *r = r.start - from..r.end - from;
                        }
                    }
                    if tx.send((run[from..to].to_vec(), block)).is_err() {
                        return;
                    }
                }
            });
        });
        for (bytes, block) in rx {
            flush(&block, &bytes, b);
        }
    });
}

/// A reader that ends (reads nothing more) once [`Progress::stop`] was asked.
struct Stoppable<'a, R> {
    inner: R,
    progress: &'a Progress,
}

impl<R: std::io::Read> std::io::Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.progress.stopped() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for Stoppable<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.progress.stopped() {
            return Ok(&[]);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
    }
}

/// The targets for the MCP facts and requests only (no hook) of `files`.
pub fn targets(files: &[PathBuf]) -> Vec<Target> {
    files
        .iter()
        .map(|p| Target {
            path: p.clone(),
            hook: None,
        })
        .collect()
}

/// The MCP facts and batch requests of `files` (capture files of `ws`), one read each.
pub fn facts(ws: &Workspace, files: &[PathBuf]) -> (McpSessions, Requests) {
    let p = read(ws, &targets(files), true, &NoHook, &Progress::default());
    (p.mcp, p.requests)
}

#[cfg(test)]
mod tests {
    use super::{Lines, Needle, Sniff};

    /// Every needle as separate `memmem` searches find it: whether the bytes hold it, and
    /// (a member needle) the offset of each match.
    fn by_memmem(bytes: &[u8]) -> Vec<(Needle, Vec<usize>)> {
        Needle::ALL
            .into_iter()
            .map(|n| (n, memchr::memmem::find_iter(bytes, n.bytes()).collect()))
            .collect()
    }

    /// What one `Sniff` gives for the same questions.
    fn by_sniff(bytes: &[u8]) -> Vec<(Needle, Vec<usize>)> {
        let s = Sniff::of(bytes);
        by_memmem(bytes)
            .into_iter()
            .map(|(n, _)| {
                let mut at = Vec::new();
                if n.is_member() {
                    s.member_matches(bytes, n, &mut |i| at.push(i));
                } else if s.has(n) {
                    // only whether it is there
                    at = memchr::memmem::find_iter(bytes, n.bytes()).collect();
                }
                (n, at)
            })
            .collect()
    }

    #[test]
    fn one_search_finds_what_a_search_per_needle_finds_in_every_sample_line() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let mut lines = 0;
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let Ok(text) = std::fs::read(&p) else {
                    continue;
                };
                for line in text.split(|&b| b == b'\n') {
                    lines += 1;
                    assert_eq!(
                        by_sniff(line),
                        by_memmem(line),
                        "{}: {}",
                        p.display(),
                        String::from_utf8_lossy(line)
                    );
                }
            }
        }
        assert!(lines > 500, "{lines} sample lines");
    }

    #[test]
    fn one_search_finds_every_match_of_many_members_and_of_odd_text() {
        let many: String = (0..40)
            .map(|i| format!(r#"{{"id":"a{i}","key":"k{i}","chain":"c/{i}"}}"#))
            .collect();
        let cases: Vec<Vec<u8>> = vec![
            many.into_bytes(),
            br#"{"request":{"key":1},"requests":[],"request_id":"x","custom_id":"c","url":"/v1"}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"\u0069d"}}"#.to_vec(),
            br#"{"resourceSpans":[{"traceId":"t","RequestId":"r","responseId":"s","recordId":"q"}]}"#.to_vec(),
            br#"{"a":"\"id\"","trace_id":"x/y","\u006bey":"k","requestss":1}"#.to_vec(),
            vec![0xff, b'"', b'i', b'd', b'"', b':', 0xfe, b'"', b'k', b'e', b'y', b'"'],
            Vec::new(),
        ];
        for c in &cases {
            assert_eq!(by_sniff(c), by_memmem(c), "{}", String::from_utf8_lossy(c));
        }
        // 120 member matches: more than a `Sniff` holds, found again
        let s = Sniff::of(&cases[0]);
        let mut n = 0;
        s.member_matches(&cases[0], Needle::Chain, &mut |_| n += 1);
        assert_eq!(n, 40);
        assert!(!s.has(Needle::Requests) && Sniff::of(&cases[1]).has(Needle::Requests));
        assert!(Sniff::of(&cases[2]).jsonrpc && Sniff::of(&cases[2]).escape);
    }

    #[test]
    fn lines_keep_runs_and_give_back_every_line_in_order() {
        let mut l = Lines::default();
        assert!(l.is_empty());
        for n in [1, 2, 3, 5, 6, 0, u32::MAX, 7] {
            l.push(n);
        }
        assert_eq!(
            l.runs,
            vec![(1, 3), (5, 6), (0, 0), (u32::MAX, u32::MAX), (7, 7)]
        );
        assert_eq!(
            l.iter().collect::<Vec<_>>(),
            vec![1, 2, 3, 5, 6, 0, u32::MAX, 7]
        );
    }
}
