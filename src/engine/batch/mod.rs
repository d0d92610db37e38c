//! `verdict check`'s batch pipeline (`docs/commands.md`), with no terminal or argument types: the
//! files of one or more workspaces ([`check_workspaces`]), or plain JSON instances against
//! one schema ([`check_instances`], `check --schema`), read on one thread (small files in
//! parallel, JSONL logs in blocks of lines), validated in parallel batches, and delivered in
//! capture order to a [`Deliver`] (the report), so memory does not grow with the number of
//! captures. Items may be rendered on the validation threads ([`BatchOptions::renderer`]);
//! `check --schema`'s JSONL lines take a fast path (the `fast` module).

use crate::core::capture::{self, RawRecord, RecordKind, is_log};
use crate::core::capture_file::{self, FileKind, Layout};
use crate::core::config::Config;
use crate::core::contract::Contracts;
use crate::core::item::{Item, Renderer};
use crate::core::pipeline::validate_instance;
use crate::core::record_ref::RecordRef;
use crate::core::request::Family;
use crate::core::stage::{parse, tape};
use crate::core::summary::Summary;
use crate::core::text::line_col;
use crate::core::verdict::{Decision, Finding, Stage, Verdict};
use crate::core::workspace::{Workspace, find_root};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod fast;
use crate::engine::ids;
use fast::{Fast, PassModel, Passes, fast_part};
pub use ids::DUPLICATE_ID;

/// Why `check` could not run at all (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A path given on the command line does not exist.
    #[error("{}: no such file or folder", crate::core::escape::path(.0))]
    NoSuchPath(PathBuf),
    /// The workspace cannot be opened.
    #[error(transparent)]
    Workspace(#[from] crate::core::workspace::WorkspaceError),
    /// Nothing to check: a mistyped path would otherwise pass.
    #[error(
        "{} (searched {searched}); pass a workspace folder, e.g. `verdict check samples/refund`",
        crate::core::workspace::NO_CAPTURES
    )]
    NoCaptures {
        /// The capture folders or files looked in, as the command line and `verdict.toml`
        /// name them (`ws/logs (missing)`).
        searched: String,
    },
    /// The `--schema` file cannot be used.
    #[error("{0}")]
    Schema(String),
}

thread_local! {
    /// The buffer an item is rendered into on a validation thread ([`BatchOptions::renderer`]).
    static RENDER_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records per batch handed from the reader thread to the evaluators.
const BATCH: usize = 2048;

/// The bytes of text a log's block of lines holds at most (one line past it is let through
/// alone), below the [`IN_FLIGHT`] cut: the records a line makes weigh many times its text
/// once parsed (an OTLP line of 5 KB is a `TracesData` of a few spans, each a verdict), so a
/// block of [`BATCH`] long lines would keep tens of megabytes in each stage of the pipeline.
/// Lines of a few hundred bytes (capture records) still make blocks of [`BATCH`] lines.
const LINE_BLOCK_BYTES: u64 = 1 << 20;

/// The room a [`LineBlock`] has past its cut, for the line that crosses it (a capture
/// record is usually well under this).
const BLOCK_SLACK: usize = 64 * 1024;

/// Lines of a log read together before their captures are evaluated
/// (`Workspace::check_all_many`): the reading's code then runs over the whole run, then the
/// stages' code, each staying in the processor's instruction cache (a run of 8 already
/// saves a third of the misses a record at a time has; BENCHMARKS.md, "Session 21").
const MANY: usize = 32;

/// The text of a run of [`MANY`] lines, in bytes, past which the run is cut (after the line
/// that passes it): a run of capture records of a few hundred bytes is whole, while records
/// of kilobytes are read a few at a time and large ones one at a time on each validation
/// thread, as [`IN_FLIGHT`]'s bound on memory assumes. A parsed record can weigh 90 times
/// its text (an object of many small objects), so at 256 KiB a log of 8 KB records of that
/// kind took 94 MB against 37 MB read a record at a time; at 16 KiB, 39 MB
/// (BENCHMARKS.md, "Session 21").
const MANY_BYTES: usize = 16 * 1024;

/// A block's lines (`lines`, by index) in runs of at most [`MANY`] lines, each cut once its
/// text passes [`MANY_BYTES`], in order.
fn runs(lines: &[(usize, LineAt)]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::with_capacity(lines.len() / MANY + 1);
    let (mut start, mut bytes) = (0, 0);
    for (i, (_, at)) in lines.iter().enumerate() {
        bytes += at.as_ref().map_or(0, ExactSizeIterator::len);
        if i + 1 - start >= MANY || bytes >= MANY_BYTES {
            out.push(start..i + 1);
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < lines.len() {
        out.push(start..lines.len());
    }
    out
}

/// Lines per task of the fast path (a task gathers its passing lines into runs).
const FAST_CHUNK: usize = 256;

/// The bytes of records read and not yet validated that `check` holds at most, in units of
/// `max_capture_bytes` per validation thread: `IN_FLIGHT x max_capture_bytes x workers`
/// (64 MiB at the defaults on 2 cores), whatever the number and size of the files
/// (`docs/verdicts.md#limits`). A chunk of one-record files, or a log's block of lines, is
/// cut at half of it, so two chunks overlap (one read while one is validated); one record
/// past it is let through alone.
pub const IN_FLIGHT: u64 = 2;

/// Holds the reader back while the chunks it sent and the validator has not finished hold
/// more than the budget's bytes ([`IN_FLIGHT`]).
struct Gate {
    budget: u64,
    /// Bytes held, and whether the validator is gone (the reader then stops).
    held: std::sync::Mutex<(u64, bool)>,
    freed: std::sync::Condvar,
}

impl Gate {
    fn new(budget: u64) -> Gate {
        Gate {
            budget,
            held: std::sync::Mutex::new((0, false)),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Waits until `n` more bytes fit (or nothing is held), then holds them; false when the
    /// validator is gone.
    fn take(&self, n: u64) -> bool {
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while !held.1 && held.0 > 0 && held.0 + n > self.budget {
            held = self
                .freed
                .wait(held)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        held.0 += n;
        !held.1
    }

    /// Gives back `n` bytes of a validated chunk.
    fn give(&self, n: u64) {
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.0 = held.0.saturating_sub(n);
        self.freed.notify_all();
    }

    /// The validator is gone: the reader stops waiting.
    fn close(&self) {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1 = true;
        self.freed.notify_all();
    }
}

/// Closes the gate when the validator ends, however it ends.
struct CloseOnDrop<'a>(&'a Gate);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Why a batch run stopped.
#[derive(Debug)]
pub enum BatchError {
    /// The run cannot proceed (before anything is delivered).
    Check(CheckError),
    /// Delivering failed (an I/O error writing the report, a closed pipe included).
    Deliver(std::io::Error),
}

impl From<CheckError> for BatchError {
    fn from(e: CheckError) -> BatchError {
        BatchError::Check(e)
    }
}

impl From<std::io::Error> for BatchError {
    fn from(e: std::io::Error) -> BatchError {
        BatchError::Deliver(e)
    }
}

/// Where a batch run delivers its checked records, in capture order, on the calling thread
/// (a report sink).
pub trait Deliver {
    /// One checked record.
    ///
    /// # Errors
    /// Delivering failed: the run stops.
    fn item(&mut self, item: &Item) -> std::io::Result<()>;

    /// `n` passing records of one log, rendered by [`BatchOptions::renderer`] back to back in
    /// `bytes` (empty under [`BatchOptions::quiet`]), that differ from `model` only in their
    /// id, source and line: `check --schema`'s fast path. Only called when a renderer is set.
    ///
    /// # Errors
    /// Delivering failed: the run stops.
    fn passes(&mut self, model: &Item, bytes: &[u8], n: usize) -> std::io::Result<()>;

    /// `checked` records have been counted so far (for a progress display); called after
    /// each delivery. The default does nothing.
    fn progress(&mut self, checked: usize) {
        let _ = checked;
    }
}

/// How a batch run renders and delivers.
#[derive(Clone, Default)]
pub struct BatchOptions {
    /// Renders each delivered item on the validation threads ([`Item::rendered`]); `None`:
    /// items are delivered unrendered.
    pub renderer: Option<Renderer>,
    /// `-q`: passing records are not rendered.
    pub quiet: bool,
    /// Passing records are counted in the summary but not delivered.
    pub skip_passing: bool,
    /// Which chain rows the summary's chain report keeps (the summary counts them all):
    /// a format that prints none need not hold them (`docs/chains.md#memory`).
    pub chain_rows: crate::core::chain::Keep,
}

/// `check --schema`: plain JSON instances (each `.json` file or JSONL line is one raw
/// instance) against one schema file.
#[derive(Debug, Clone)]
pub struct InstanceOptions {
    /// The JSON Schema file.
    pub schema: PathBuf,
    /// Assert `format` (`--format-assertion`).
    pub format_assertion: bool,
}

/// Checks the captures of the workspaces that hold `paths` (workspaces, folders in them or
/// capture files; none: the current folder), workspace by workspace in order of first
/// appearance, each file once. Every workspace is opened before anything is delivered. A
/// verdict whose id another checked capture of its workspace has carries a
/// [`DUPLICATE_ID`] warning naming the others.
/// Returns the counts of what was checked (no captures is not an error here).
///
/// # Errors
/// [`CheckError`] (a path does not exist, a workspace cannot be opened) before anything is
/// delivered; a delivery error, which stops the run.
pub fn check_workspaces(
    paths: &[PathBuf],
    opts: &BatchOptions,
    out: &mut dyn Deliver,
) -> Result<Summary, BatchError> {
    let mut summary = Summary::default();
    let (warnings, chains) = workspace_mode(
        paths,
        render(opts),
        opts.quiet,
        opts.skip_passing,
        opts.chain_rows,
        &mut delivery(opts, &mut summary, out),
    )?;
    summary.warnings = warnings;
    summary.chains = chains;
    Ok(summary)
}

/// Checks plain JSON instances (`check --schema`): every `.json`, `.jsonl`, `.ndjson` or
/// `.jsonl.out` file (compressed or not) under `paths` (folders recursively, the schema
/// itself and `.sse` streams left out; none: the current folder) or named by them, each file or log line one instance, with the schema's lint
/// findings as every verdict's warnings. Returns the counts of what was checked.
///
/// # Errors
/// [`CheckError`] (a path does not exist, the schema file cannot be used) before anything is
/// delivered; a delivery error, which stops the run.
pub fn check_instances(
    schema: &InstanceOptions,
    paths: &[PathBuf],
    opts: &BatchOptions,
    out: &mut dyn Deliver,
) -> Result<Summary, BatchError> {
    let mut summary = Summary::default();
    validator_mode(
        &schema.schema,
        paths,
        schema.format_assertion,
        render(opts),
        &mut delivery(opts, &mut summary, out),
    )?;
    Ok(summary)
}

fn render(opts: &BatchOptions) -> Option<Render> {
    opts.renderer.clone().map(|renderer| Render {
        renderer,
        quiet: opts.quiet,
    })
}

/// The ordered delivery: counts each record, then hands it to `out` (unless it passes and
/// passing records are skipped).
fn delivery<'a>(
    opts: &BatchOptions,
    summary: &'a mut Summary,
    out: &'a mut dyn Deliver,
) -> impl FnMut(Out) -> std::io::Result<()> + 'a {
    let skip_passing = opts.skip_passing;
    move |o: Out| -> std::io::Result<()> {
        match o {
            Out::Item(item) => {
                summary.add(&item.verdict);
                out.progress(summary.captures);
                if skip_passing && item.verdict.passes() {
                    return Ok(());
                }
                out.item(&item)
            }
            Out::Counted(c) => {
                c.add_to(summary);
                out.progress(summary.captures);
                Ok(())
            }
            Out::Passes(run) => {
                let model = &run.model.item;
                let n = run.lines.len();
                let v = &model.verdict;
                summary.add_outcomes(v.stage, v.decision, v.expect.as_ref().map(|e| e.met), n);
                out.progress(summary.captures);
                if skip_passing {
                    return Ok(());
                }
                match &run.rendered {
                    Some(bytes) => out.passes(model, bytes, n),
                    None => run
                        .lines
                        .iter()
                        .try_for_each(|line| out.item(&run.model.at(*line))),
                }
            }
        }
    }
}

/// Where a record's report should point: the capture file as the user can open it
/// (`root` joined with the workspace-relative `file`).
fn display_path(root: &Path, file: &str) -> Arc<str> {
    let path = root.join(file).to_string_lossy().replace('\\', "/");
    Arc::from(path.strip_prefix("./").unwrap_or(&path))
}

/// The line and column of the record (JSONL) or of its `output`/`response` value (a `.json`
/// capture record; `records` false: the file is a plain instance, so 1:1).
fn locate_record(raw: &RawRecord, records: bool) -> (usize, usize) {
    if let Some(line) = raw.source.line() {
        return (line, 1);
    }
    if records
        && raw.kind == RecordKind::Json
        && let Ok(text) = &raw.text
    {
        for key in ["/output", "/response"] {
            if let Some(span) = parse::locate(text, key) {
                let at = line_col(text, span.start);
                return (at.line as usize, at.column as usize);
            }
        }
    }
    (1, 1)
}

/// Pre-rendering on the validation threads (see [`Renderer`]).
#[derive(Clone)]
struct Render {
    renderer: Renderer,
    /// `-q`: passing captures are not printed, so they are not rendered.
    quiet: bool,
}

/// What the validation threads hand the reporter, in capture order.
enum Out {
    /// One capture with its verdict (boxed: most of a fast-path batch is small runs).
    Item(Box<Item>),
    /// A passing capture that is counted but not delivered ([`BatchOptions::skip_passing`]).
    Counted(Counted),
    /// Consecutive instances of one log that passed `check --schema`'s fast path.
    Passes(Passes),
}

type Emit<'a> = dyn FnMut(Out) -> std::io::Result<()> + 'a;

/// What the summary counts of a verdict ([`Summary::add`]), without the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counted {
    stage: Stage,
    decision: Decision,
    /// Whether its `expect` was met; `None`: it has none.
    expect: Option<bool>,
    repair: Option<crate::core::repair::RepairMark>,
}

impl Counted {
    fn of(v: &Verdict) -> Counted {
        Counted {
            stage: v.stage,
            decision: v.decision,
            expect: v.expect.as_ref().map(|e| e.met),
            repair: v.repair.as_ref().map(crate::core::repair::Repair::mark),
        }
    }

    /// Adds it to `summary` as [`Summary::add`] adds its verdict.
    fn add_to(self, summary: &mut Summary) {
        summary.add_outcome(self.stage, self.decision, self.expect);
        summary.add_repairs(self.repair, 1);
    }
}

/// What [`stream`] reads.
struct Input<'a> {
    /// Joined to a file's name for the printed path.
    root: &'a Path,
    /// The files, in report order.
    files: Vec<PathBuf>,
    /// A file's name for reports (workspace-relative).
    rel: &'a (dyn Fn(&Path) -> String + Sync),
    /// `max_capture_bytes`.
    max_bytes: u64,
    /// Whether a file is a log (one record per line).
    is_log: &'a (dyn Fn(&Path) -> bool + Sync),
    /// The files hold capture records (false: plain instances, `--schema`).
    records: bool,
    /// Passing records are counted but not delivered ([`BatchOptions::skip_passing`]): a
    /// passing verdict outside any chain is made [`Out::Counted`] on the validation thread
    /// that made it, and freed there.
    skip_passing: bool,
    /// Under `-q`: the log lines the fast pass knows pass (`core::fast_pass`) are not read
    /// into a capture, only counted (`skip_passing`) or delivered by a model.
    fast_pass: Option<FastPassing<'a>>,
}

/// The fast pass of a workspace's logs under `-q` (`core::fast_pass`).
struct FastPassing<'a> {
    fast: &'a crate::core::fast_pass::FastPass,
    /// What a passing record counts as.
    counted: Counted,
    /// The verdict of a passing record at a source (its warnings the contract's), for the
    /// model of a log's passing lines.
    verdict: &'a (dyn Fn(RecordRef, Vec<Finding>) -> Verdict + Sync),
}

/// Checks a run of records, giving each record's verdicts in order (`stream`'s `check_many`).
type CheckMany<'a> = dyn Fn(&[RawRecord]) -> Vec<Vec<Verdict>> + Sync + 'a;

/// Reads the input's files on a reader thread (small files in parallel, JSONL logs line by
/// line), validates each batch in parallel with `check`, and hands the items to `emit` in
/// order. A record `check` gives no verdict (not a capture: an MCP message other than a
/// tools/call request or response) is left out, uncounted; a record of several captures
/// (an OTLP `TracesData` of several LLM spans) gives an item per capture, in its order.
/// `check_many`, when given, checks a log's lines [`MANY`] at a time instead (each run read
/// whole, then evaluated: the same verdicts as `check` on each, in order).
fn stream(
    input: Input<'_>,
    check: &(dyn Fn(&RawRecord) -> Vec<Verdict> + Sync),
    check_many: Option<&CheckMany<'_>>,
    fast: Option<&Fast<'_>>,
    render: Option<Render>,
    emit: &mut Emit<'_>,
) -> std::io::Result<()> {
    let Input {
        root,
        files,
        rel,
        max_bytes,
        is_log,
        records,
        skip_passing,
        fast_pass,
    } = input;
    // three stages overlap: the reader thread reads batch k+2, the validator thread checks
    // batch k+1 on the rayon pool, and this thread reports batch k (in order)
    let (tx, rx) = std::sync::mpsc::sync_channel::<Chunk>(4);
    // a batch as the validation tasks made it: in order, one part per task
    let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<Vec<Vec<Out>>>(2);
    let workers = rayon::current_num_threads().max(1) as u64;
    let gate = Gate::new(IN_FLIGHT.saturating_mul(max_bytes).saturating_mul(workers));
    let gate = &gate;
    // logs only: the reader reads them on its own thread, never on the rayon pool (only a
    // run of one-record files is read on it, `read_batches`)
    let reader_off_pool = files.iter().all(|f| is_log(f));
    std::thread::scope(|scope| {
        scope.spawn(move || read_batches(&files, rel, is_log, max_bytes, &tx, gate));
        let validate = move || {
            let _closed = CloseOnDrop(gate);
            let mut paths: HashMap<Arc<str>, Arc<str>> = HashMap::new();
            // an item of a verdict, rendered
            let render_item = |item: &mut Item| {
                if let Some(r) = &render
                    && !(r.quiet && item.verdict.passes())
                {
                    // rendered into this thread's buffer, which keeps its size, then
                    // copied out at its exact length: one allocation and one copy, where a
                    // buffer grown from small would be reallocated and copied as it grows
                    // (a failing verdict's JSON line is about 1 KB)
                    RENDER_BUFFER.with_borrow_mut(|buf| {
                        buf.clear();
                        (r.renderer)(item, buf);
                        item.rendered = Some(buf.as_slice().to_vec());
                    });
                    // the report prints the rendered bytes, and nothing past this thread
                    // reads a rendered verdict's findings but the chain set (a verdict in a
                    // chain keeps them): they are freed here, on the thread that made them,
                    // not on the report's (a free from another thread costs more)
                    if item.verdict.chain.is_none() {
                        drop(std::mem::take(&mut item.verdict.errors));
                    }
                }
            };
            let finish = |verdict: Verdict, path: Arc<str>, (line, column): (usize, usize)| {
                let mut item = Item {
                    verdict,
                    path,
                    line,
                    column,
                    rendered: None,
                };
                render_item(&mut item);
                item
            };
            // a record's verdicts as items (`at`: where the record is)
            let to_items = |verdicts: Vec<Verdict>, at: (usize, usize), path: Arc<str>| {
                verdicts.into_iter().map(move |verdict| {
                    // a passing verdict the report does not print is only counted: its
                    // outcome goes on, the verdict is freed here, on the thread that made it
                    // (a free from the report's thread costs more; BENCHMARKS.md, "Session
                    // 23"). One in a chain goes on whole: the chain set reads it
                    if skip_passing && verdict.chain.is_none() && verdict.passes() {
                        return Out::Counted(Counted::of(&verdict));
                    }
                    // boxed first, rendered in place (a verdict is moved once, not thrice)
                    let mut item = Box::new(Item {
                        verdict,
                        path: path.clone(),
                        line: at.0,
                        column: at.1,
                        rendered: None,
                    });
                    render_item(&mut item);
                    Out::Item(item)
                })
            };
            let to_items = &to_items;
            let items = |raw: RawRecord, path: Arc<str>| {
                let at = locate_record(&raw, records);
                to_items(check(&raw), at, path)
            };
            // a line of a block as a record (decoded here, on the validation threads, which
            // also free it)
            let line_record = |block: &LineBlock, line_no: usize, at: &LineAt| {
                let text = match at {
                    Ok(range) => capture::decode(block.bytes[range.clone()].to_vec()),
                    Err(f) => Err(Finding::clone(f)),
                };
                RawRecord::json(RecordRef::new(block.rel.clone(), Some(line_no)), text)
            };
            for chunk in rx {
                let held = chunk.bytes();
                // a batch is mostly the lines of one log: one display path per file
                paths.clear();
                let outs: Vec<Vec<Out>> = match chunk {
                    Chunk::Records(batch) => {
                        for raw in &batch {
                            let file = raw.source.file();
                            if !paths.contains_key(file) {
                                paths.insert(file.clone(), display_path(root, file));
                            }
                        }
                        let paths = &paths;
                        let outs = batch
                            .into_par_iter()
                            .flat_map_iter(|raw| {
                                let path = paths[raw.source.file()].clone();
                                items(raw, path)
                            })
                            .collect::<Vec<Out>>();
                        vec![outs]
                    }
                    Chunk::Lines(block) => {
                        let path = display_path(root, &block.rel);
                        let block = &block;
                        match (fast, check_many) {
                            // a run of lines read, then evaluated, then made items
                            // with the fast pass (`-q`): the lines it knows pass are not
                            // read, the rest of a run are read, then evaluated, then made
                            // items
                            (None, Some(many)) if fast_pass.is_some() => {
                                let pass = fast_pass.as_ref().expect("matched");
                                // counted (`skip_passing`), else runs of passing lines
                                // delivered by a model (the human and github reports note
                                // the contract's warnings of passing captures)
                                let model = (!skip_passing).then(|| {
                                    let first = block.lines.first().map_or(1, |l| l.0);
                                    Arc::new(PassModel::new(
                                        &block.rel,
                                        path.clone(),
                                        &|source, errors| (pass.verdict)(source, errors),
                                        render.as_ref(),
                                        [first, first + 1],
                                    ))
                                });
                                let model = &model;
                                vec![
                                    runs(&block.lines)
                                        .into_par_iter()
                                        .flat_map_iter(|run| {
                                            let lines = &block.lines[run];
                                            let mut fast = Vec::with_capacity(lines.len());
                                            let raws: Vec<RawRecord> = lines
                                                .iter()
                                                .filter_map(|(line_no, at)| {
                                                    let passes = matches!(at, Ok(r) if pass.fast.passes(&block.bytes[r.clone()]));
                                                    fast.push(passes);
                                                    #[cfg(debug_assertions)]
                                                    if passes {
                                                        let raw = line_record(block, *line_no, at);
                                                        let vs = many(std::slice::from_ref(&raw));
                                                        assert!(
                                                            vs.len() == 1
                                                                && vs[0].len() == 1
                                                                && vs[0][0].chain.is_none()
                                                                && Counted::of(&vs[0][0]) == pass.counted,
                                                            "the fast pass passes {}, which check does not pass",
                                                            raw.source
                                                        );
                                                    }
                                                    (!passes).then(|| line_record(block, *line_no, at))
                                                })
                                                .collect();
                                            let verdicts = many(&raws);
                                            let mut slow = raws.into_iter().zip(verdicts);
                                            let mut outs = Vec::with_capacity(lines.len());
                                            let mut passing =
                                                model.as_ref().map(|m| Passes::new(m, lines.len()));
                                            for (i, ((line_no, _), passes)) in
                                                lines.iter().zip(fast).enumerate()
                                            {
                                                if passes {
                                                    match &mut passing {
                                                        Some(p) => p.push(*line_no),
                                                        None => outs.push(Out::Counted(pass.counted)),
                                                    }
                                                    continue;
                                                }
                                                if let (Some(p), Some(m)) = (&mut passing, model) {
                                                    p.flush(&mut outs, m, lines.len() - i);
                                                }
                                                if let Some((raw, vs)) = slow.next() {
                                                    let at = locate_record(&raw, records);
                                                    outs.extend(to_items(vs, at, path.clone()));
                                                }
                                            }
                                            if let (Some(p), Some(m)) = (&mut passing, model) {
                                                p.flush(&mut outs, m, 0);
                                            }
                                            outs
                                        })
                                        .collect::<Vec<Out>>(),
                                ]
                            }
                            (None, Some(many)) => vec![
                                runs(&block.lines)
                                    .into_par_iter()
                                    .flat_map_iter(|run| {
                                        let lines = &block.lines[run];
                                        let raws: Vec<RawRecord> = lines
                                            .iter()
                                            .map(|(line_no, at)| line_record(block, *line_no, at))
                                            .collect();
                                        let verdicts = many(&raws);
                                        let path = path.clone();
                                        raws.into_iter().zip(verdicts).flat_map(move |(raw, vs)| {
                                            to_items(vs, locate_record(&raw, records), path.clone())
                                        })
                                    })
                                    .collect::<Vec<Out>>(),
                            ],
                            (None, None) => vec![
                                block
                                    .lines
                                    .par_iter()
                                    .flat_map_iter(|(line_no, at)| {
                                        let raw = line_record(block, *line_no, at);
                                        items(raw, path.clone())
                                    })
                                    .collect::<Vec<Out>>(),
                            ],
                            (Some(fast), _) => {
                                let first = block.lines.first().map_or(1, |l| l.0);
                                let model = Arc::new(PassModel::new(
                                    &block.rel,
                                    path.clone(),
                                    fast.verdict,
                                    render.as_ref(),
                                    [first, first + 1],
                                ));
                                let parts: Vec<Vec<Out>> = block
                                    .lines
                                    .par_chunks(FAST_CHUNK)
                                    .map(|lines| {
                                        fast_part(
                                            lines,
                                            block,
                                            fast,
                                            &model,
                                            &|verdict, line| {
                                                finish(verdict, path.clone(), (line, 1))
                                            },
                                            &|line, at| {
                                                let raw = line_record(block, line, at);
                                                let at = locate_record(&raw, records);
                                                let verdict = check(&raw).pop().expect(
                                                    "a plain instance always has a verdict",
                                                );
                                                finish(verdict, path.clone(), at)
                                            },
                                        )
                                    })
                                    .collect();
                                parts
                            }
                        }
                    }
                };
                // the chunk's records are freed (the items keep what the report prints)
                gate.give(held);
                // the reporter stopped (a write error): dropping `rx` stops the reader
                if done_tx.send(outs).is_err() {
                    return;
                }
            }
        };
        if reader_off_pool {
            // the validator's loop runs on a worker of the rayon pool (`rayon::scope` from
            // this thread injects it once), so each block's tasks start from inside the
            // pool, without a cold injection and a wake-up of a thread outside it per block
            // (BENCHMARKS.md "Session 18": 4.5% of `check --schema -q`'s CPU). That worker
            // waits for the reader while no block is ready: safe only when the reader
            // never needs the pool (else, on a pool of one worker, each waits for the other)
            scope.spawn(move || rayon::scope(move |_| validate()));
        } else {
            scope.spawn(validate);
        }
        for parts in done_rx {
            for out in parts.into_iter().flatten() {
                // on error `done_rx` is dropped, which stops the validator and the reader
                emit(out)?;
            }
        }
        Ok(())
    })
}

/// What the reader thread hands to the validator thread, in file order.
enum Chunk {
    /// Records read whole (one-record files, or a log that could not be opened).
    Records(Vec<RawRecord>),
    /// Lines of one JSONL log, copied into one buffer as read: split by the reader (the
    /// same splitting as [`capture::read_lines`]), decoded on the validation threads.
    Lines(LineBlock),
}

impl Chunk {
    /// The bytes it holds, as the [`Gate`] counts them: the records' texts, or the lines.
    fn bytes(&self) -> u64 {
        match self {
            Chunk::Records(batch) => batch.iter().map(record_bytes).sum(),
            Chunk::Lines(block) => block.bytes.len() as u64,
        }
    }
}

fn record_bytes(r: &RawRecord) -> u64 {
    r.text.as_ref().map_or(0, |t| t.len() as u64)
}

/// Up to [`BATCH`] consecutive non-blank lines of one log.
struct LineBlock {
    /// The log, workspace-relative (shared by its records' sources).
    rel: Arc<str>,
    /// The lines' bytes, back to back.
    bytes: Vec<u8>,
    /// Per line: its 1-based number and its byte range in `bytes`, or why it is unusable
    /// (too long, a read error).
    lines: Vec<(usize, LineAt)>,
}

/// Where one line's bytes are in its [`LineBlock`], or why the line is unusable.
use crate::core::capture::LineAt;

fn read_batches(
    files: &[PathBuf],
    rel: &(dyn Fn(&Path) -> String + Sync),
    is_log: &(dyn Fn(&Path) -> bool + Sync),
    max_bytes: u64,
    tx: &std::sync::mpsc::SyncSender<Chunk>,
    gate: &Gate,
) {
    // a chunk is cut at half the budget (one is read while the other is validated), and at
    // 64 MiB on a machine of many cores
    let cut = (gate.budget / 2).clamp(1, 64 << 20);
    let mut batch = Vec::with_capacity(BATCH);
    let mut batch_bytes = 0u64;
    // hands the pending records on; false when the receiver is gone
    let flush = |batch: &mut Vec<RawRecord>, batch_bytes: &mut u64| {
        let n = std::mem::take(batch_bytes);
        gate.take(n)
            && tx
                .send(Chunk::Records(std::mem::replace(
                    batch,
                    Vec::with_capacity(BATCH),
                )))
                .is_ok()
    };
    let mut i = 0;
    while i < files.len() {
        if is_log(&files[i]) {
            // what came before goes first, in order
            if !batch.is_empty() && !flush(&mut batch, &mut batch_bytes) {
                return;
            }
            let name = rel(&files[i]);
            let compression = FileKind::or_record(&files[i]).compression;
            let Ok((file, _)) = capture_file::open(&files[i], &name, compression, Some(max_bytes))
            else {
                // not readable: the one INVALID_CAPTURE record `for_each_record` makes
                capture::for_each_record(&files[i], &name, max_bytes, |r| {
                    batch_bytes += record_bytes(&r);
                    batch.push(r);
                });
                i += 1;
                continue;
            };
            let block_cut = cut.min(LINE_BLOCK_BYTES);
            if !read_log_blocks(file, name.into(), max_bytes, block_cut, tx, gate) {
                return;
            }
            i += 1;
            continue;
        }
        // a run of one-record files: read them in parallel, in order, as many as fit in
        // what is left of the chunk by their sizes on disk (at least one; a record is read
        // up to `max_capture_bytes`)
        let mut room = cut.saturating_sub(batch_bytes);
        let end = (i..files.len())
            .take_while(|j| !is_log(&files[*j]))
            .take(BATCH - batch.len())
            .take_while(|j| {
                let size = std::fs::metadata(&files[*j]).map_or(0, |m| m.len().min(max_bytes));
                let fits = *j == i || size <= room;
                room = room.saturating_sub(size);
                fits
            })
            .last()
            .map_or(i + 1, |j| j + 1);
        let read: Vec<Vec<RawRecord>> = files[i..end]
            .par_iter()
            .map(|f| capture::read_file(f, &rel(f), max_bytes))
            .collect();
        for r in read.into_iter().flatten() {
            batch_bytes += record_bytes(&r);
            batch.push(r);
        }
        if (batch.len() >= BATCH || batch_bytes >= cut) && !flush(&mut batch, &mut batch_bytes) {
            return;
        }
        i = end;
    }
    if !batch.is_empty() {
        let _ = flush(&mut batch, &mut batch_bytes);
    }
}

/// Reads one log (its file, or a compressed log's decompressed stream) into [`LineBlock`]s
/// of up to [`BATCH`] lines or `cut` bytes ([`LINE_BLOCK_BYTES`] at most), read straight into
/// each block's buffer (`capture::read_line_blocks`: no line copied but the one that crosses
/// a block's end), and sends them, each once the [`Gate`] lets it through; false when the
/// receiver is gone (stop reading).
fn read_log_blocks(
    file: impl std::io::Read,
    rel: Arc<str>,
    max_bytes: u64,
    cut: u64,
    tx: &std::sync::mpsc::SyncSender<Chunk>,
    gate: &Gate,
) -> bool {
    // room for a whole block (it is sent once past `cut`: `cut` plus the line that crosses
    // it), so the block is not copied as it grows; a line of more than `BLOCK_SLACK` still
    // grows it
    let room = usize::try_from(cut)
        .unwrap_or(usize::MAX)
        .min(LINE_BLOCK_BYTES as usize)
        + BLOCK_SLACK;
    let mut open = true;
    capture::read_line_blocks(
        file,
        max_bytes,
        room,
        // at most BATCH lines, and sent once past `cut` bytes (lines of large records)
        |lines, bytes| lines >= BATCH || bytes as u64 >= cut,
        // when the gate lets it through
        |bytes, lines| {
            open = gate.take(bytes.len() as u64)
                && tx
                    .send(Chunk::Lines(LineBlock {
                        rel: rel.clone(),
                        bytes,
                        lines,
                    }))
                    .is_ok();
            open
        },
    );
    open
}

/// The workspace warnings and the chain report (`None`: no capture is in a chain) of a
/// workspace-mode run.
type WorkspaceEnd = (
    Vec<crate::core::verdict::Warning>,
    Option<crate::core::chain::ChainReport>,
);

fn workspace_mode(
    paths: &[PathBuf],
    render: Option<Render>,
    quiet: bool,
    skip_passing: bool,
    keep: crate::core::chain::Keep,
    emit: &mut Emit<'_>,
) -> Result<WorkspaceEnd, BatchError> {
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    // group the paths by workspace, keeping the order of first appearance
    let mut groups: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    for p in &paths {
        if !p.exists() {
            return Err(CheckError::NoSuchPath(p.clone()).into());
        }
        let root = find_root(p);
        match groups.iter_mut().find(|(r, _)| *r == root) {
            Some((_, v)) => v.push(p.clone()),
            None => groups.push((root, vec![p.clone()])),
        }
    }
    // open every workspace first: a broken one stops the run before anything is printed
    let mut opened = Vec::new();
    for (root, targets) in groups {
        // no capture file is read yet: the pre-pass below reads each once
        let ws = Workspace::load(&root).map_err(CheckError::from)?;
        let mut files: Vec<PathBuf> = Vec::new();
        for t in &targets {
            if same_dir(t, &root) {
                files.extend(ws.capture_files());
            } else if t.is_dir() {
                let canon = t.canonicalize().unwrap_or_else(|_| t.clone());
                files.extend(
                    ws.capture_files()
                        .into_iter()
                        .filter(|f| f.canonicalize().is_ok_and(|c| c.starts_with(&canon))),
                );
            } else {
                // named from the workspace root, not from the current folder
                files.push(crate::core::workspace::under_root(t, &root));
            }
        }
        // one row per file, however often it is named (`a.json . ./a.json`); a symlink
        // keeps its own name, so only the folder is resolved
        let mut seen = std::collections::HashSet::new();
        files.retain(|f| {
            let dir = f.parent().and_then(|d| {
                let d = if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                };
                d.canonicalize().ok()
            });
            seen.insert(
                dir.map_or_else(|| f.clone(), |d| d.join(f.file_name().unwrap_or_default())),
            )
        });
        opened.push((root, ws, files));
    }
    let mut warnings = Vec::new();
    let mut chains: Option<crate::core::chain::ChainReport> = None;
    for (root, ws, mut files) in opened {
        let Checker {
            ws,
            dups,
            keys,
            requests_only,
        } = Checker::prepare(&ws, &files)?;
        // a file of batch input requests only holds no capture: the pre-pass read all it
        // gives (`docs/requests.md#memory`), so it is not read again
        files.retain(|f| !requests_only.contains(&*ws.relative(f)));
        let max = ws.config.max_capture_bytes;
        // the joined ids some capture has: the rest are reported once, after the run
        let matched = std::sync::Mutex::new(std::collections::HashSet::new());
        let marks = ws.requests.marks();
        let check_one = |v: &mut Verdict, raw: &RawRecord| {
            if ws.joins.by_id.contains_key(&v.id) {
                matched
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(v.id.clone());
            }
            // the input requests this result may join have a result of their batch
            if !ws.requests.is_empty()
                && let Some(family) = v.format.as_deref().and_then(Family::of_result)
            {
                let rel = raw.source.file();
                let glob = ws.config.requests_for(rel);
                ws.requests.mark(family, &v.id, rel, glob, &marks);
            }
        };
        // a record's verdicts as the pipeline gave them, made the run's: each marked when
        // its id is shared, its join and batch input noted
        let settle = |vs: &mut Vec<Verdict>, raw: &RawRecord| {
            for v in vs.iter_mut() {
                dups.mark(v);
            }
            // the pre-pass finds every shared id only if each verdict id is one of the
            // candidates its byte scan reads, and `record_parts` is the pipeline's reading (the
            // part of each capture too: the shared ids name captures by their full source)
            #[cfg(debug_assertions)]
            {
                for v in vs.iter() {
                    assert!(
                        ids::is_candidate_in(&ws, &v.id, raw),
                        "the id {:?} of {} is not among the candidates `ids::candidates` reads",
                        v.id,
                        raw.source
                    );
                }
                // a span's chain is left out when the pre-pass saw its key once: every
                // chain id a key could equal must be among the keys it reads
                for v in vs.iter() {
                    if let Some(l) = &v.chain
                        && matches!(
                            l.linked_by,
                            crate::core::chain::LinkedBy::Record
                                | crate::core::chain::LinkedBy::Natural
                        )
                        && l.id.contains('/')
                    {
                        assert!(
                            ids::is_chain_key_in(&ws, &l.id, raw),
                            "the chain id {:?} of {} is not among the keys `ids::chain_keys_in` reads",
                            l.id,
                            raw.source
                        );
                    }
                }
                if !vs.is_empty() {
                    assert_eq!(
                        vs.iter()
                            .map(|v| (v.source.part(), v.id.clone()))
                            .collect::<Vec<_>>(),
                        ws.record_parts(raw),
                        "Workspace::record_parts disagrees with the pipeline on {}",
                        raw.source
                    );
                }
            }
            for v in vs.iter_mut() {
                check_one(v, raw);
            }
        };
        let check = |raw: &RawRecord| {
            let mut vs = ws.check_all(raw);
            settle(&mut vs, raw);
            vs
        };
        // a log's lines a run at a time: all read, then all evaluated
        // (`Workspace::check_all_many`)
        let check_many = |raws: &[RawRecord]| {
            let mut all = ws.check_all_many(raws);
            for (vs, raw) in all.iter_mut().zip(raws) {
                settle(vs, raw);
            }
            all
        };
        // `-q`: a passing plain record is known without being read into a capture
        // (`core::fast_pass`); it is the verdict of no findings of its contract
        let fast_pass = if quiet {
            crate::core::fast_pass::FastPass::of(&ws)
        } else {
            None
        };
        let pass_verdict = |source: RecordRef, errors: Vec<Finding>| {
            let fp = fast_pass.as_ref().expect("made only with a fast pass");
            let mut v = Verdict::from_errors(
                source.to_string(),
                source,
                Some(fp.contract_name().to_owned()),
                errors,
            );
            v.format = Some("capture".to_owned());
            v.warnings = fp.contract().warnings();
            ws.apply_decisions(&mut v);
            v
        };
        let passing = fast_pass.as_ref().map(|fast| FastPassing {
            fast,
            counted: Counted::of(&pass_verdict(RecordRef::new("", None), Vec::new())),
            verdict: &pass_verdict,
        });
        let input = Input {
            root: &root,
            files,
            rel: &|f| ws.relative(f),
            max_bytes: max,
            is_log: &|f| ws.is_log_file(f),
            records: true,
            skip_passing,
            fast_pass: passing,
        };
        // the chain accumulator, fed the verdicts as they are delivered (a small step per
        // attempt of a chain, never the verdict: `docs/chains.md#memory`); a natural link
        // (a batch line's own id, a span's `TRACEID/PARENTSPANID`) is a chain only when
        // another capture shares the id, which the pre-pass already knows: a 1M-line batch
        // of distinct ids, or 1M spans under distinct parents, keeps nothing
        let mut set = crate::core::chain::ChainSet::default();
        let mut feed = |o: Out| {
            if let Out::Item(item) = &o {
                let v = &item.verdict;
                let lone = v.chain.as_ref().is_some_and(|l| {
                    l.linked_by == crate::core::chain::LinkedBy::Natural
                        && if is_span(v) {
                            keys.lone(&l.id)
                        } else {
                            l.id == v.id && dups.group(ids::fingerprint(&v.id)).is_none()
                        }
                });
                if !lone {
                    set.add(v);
                }
            }
            emit(o)
        };
        stream(
            input,
            &check,
            Some(&check_many),
            None,
            render.clone(),
            &mut feed,
        )?;
        let matched = matched
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        warnings.extend(ws.unmatched_joins(&matched));
        warnings.extend(ws.request_warnings(Some(&marks)));
        if !set.is_empty() {
            // the rows are made again when the report prints them, one at a time
            // (`ChainReport::each_row`): the set weighs less than its rows
            let mut report = set.finish_later(&ws.config.budget, keep);
            warnings.append(&mut report.warnings);
            if report.summary.chains > 0 {
                match &mut chains {
                    Some(c) => c.append(report),
                    None => chains = Some(report),
                }
            }
        }
    }
    Ok((warnings, chains))
}

/// Whether `v` is the verdict of an OTLP or OpenInference span, whose natural chain key
/// the pre-pass counts ([`ids::ChainKeys`]).
fn is_span(v: &Verdict) -> bool {
    matches!(v.format.as_deref(), Some("otlp" | "openinference"))
}

/// A workspace opened as `check` opens it, to evaluate records one at a time as `check`
/// does: the Python package's `Workspace` (`docs/python.md`), and the first step of every
/// workspace `check` runs on.
#[derive(Debug)]
pub struct Checker {
    /// The workspace, with the facts the pre-pass read of its capture files.
    pub ws: Workspace,
    /// The ids several captures of the checked files share (`DUPLICATE_ID`).
    dups: ids::Shared,
    /// The span chain keys several captures of the checked files may share.
    keys: ids::ChainKeys,
    /// The files (workspace-relative) whose every record is a batch input request: the
    /// pre-pass read all they give, so `check` does not read them again.
    requests_only: std::collections::HashSet<std::sync::Arc<str>>,
}

impl Checker {
    /// Opens the workspace `path` belongs to ([`find_root`]) as `check PATH` does: loads it,
    /// then one read of every capture file for its MCP facts, batch requests and shared ids
    /// (`docs/commands.md#the-pre-pass`).
    ///
    /// # Errors
    /// What `check PATH` exits 2 with: the path does not exist
    /// ([`CheckError::NoSuchPath`]), the workspace cannot be opened.
    pub fn open(path: &Path) -> Result<Checker, CheckError> {
        if !path.exists() {
            return Err(CheckError::NoSuchPath(path.to_path_buf()));
        }
        let ws = Workspace::load(&find_root(path))?;
        Checker::prepare(&ws, &ws.capture_files())
    }

    /// The loaded `ws` after the pre-pass: the facts of every capture file, and the shared
    /// ids of the files to check (`files`).
    fn prepare(ws: &Workspace, files: &[PathBuf]) -> Result<Checker, CheckError> {
        // one read of each file (`docs/commands.md#the-pre-pass`): the MCP facts and batch
        // requests of every capture file of the workspace (and of files named outside its
        // capture folders, `check FILE`), and the duplicate-id candidates of those checked
        let pre = crate::engine::prescan::run(
            ws,
            &ws.capture_files(),
            files,
            &crate::core::prescan::Progress::default(),
        );
        let ws = ws.with_facts(pre.mcp, pre.requests);
        if let Some(e) = ws.request_glob_error() {
            return Err(CheckError::from(e));
        }
        // ids shared by several captures of the workspace: known before the first verdict
        let mut scan = pre.ids;
        let keys = scan.chain_keys();
        let dups = scan.exact(&ws, None).shared();
        Ok(Checker {
            ws,
            dups,
            keys,
            requests_only: pre.requests_only,
        })
    }

    /// One record's verdict as `check` gives it (`None`: not a capture, as
    /// [`Workspace::evaluate`]): a record at the source of one of the workspace's captures
    /// whose id another capture shares carries the [`DUPLICATE_ID`] warning.
    pub fn check(&self, raw: &RawRecord) -> Option<Verdict> {
        verdict_of(&self.ws, &self.dups, raw)
    }

    /// Every verdict of the record, one per capture it holds (a trace record with several
    /// spans: `docs/record-shapes.md`), as `check` gives them.
    pub fn check_all(&self, raw: &RawRecord) -> Vec<Verdict> {
        verdicts_of(&self.ws, &self.dups, raw)
    }
}

/// A record's verdict in a `check` run: the pipeline's, marked when its id is shared.
fn verdict_of(ws: &Workspace, dups: &ids::Shared, raw: &RawRecord) -> Option<Verdict> {
    let mut v = ws.check(raw)?;
    dups.mark(&mut v);
    Some(v)
}

/// Every verdict of a record in a `check` run, one per capture it holds, each marked when
/// its id is shared.
fn verdicts_of(ws: &Workspace, dups: &ids::Shared, raw: &RawRecord) -> Vec<Verdict> {
    let mut vs = ws.check_all(raw);
    for v in &mut vs {
        dups.mark(v);
    }
    vs
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// `--schema FILE`: each `.json` file or JSONL line is one raw instance (the output text).
fn validator_mode(
    schema_file: &Path,
    paths: &[PathBuf],
    format_assertion: bool,
    render: Option<Render>,
    emit: &mut Emit<'_>,
) -> Result<(), BatchError> {
    if !schema_file.exists() {
        return Err(CheckError::NoSuchPath(schema_file.to_path_buf()).into());
    }
    if !schema_file.is_file() {
        return Err(CheckError::Schema(format!(
            "{}: not a regular file (the --schema file must be a JSON Schema document)",
            crate::core::escape::path(schema_file)
        ))
        .into());
    }
    let dir = schema_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let config = Config {
        format_assertion,
        ..Config::default()
    };
    let contracts = Contracts::load_files(dir, &[schema_file.to_path_buf()], dir, &config);
    let contract = contracts.by_name.values().next().cloned().ok_or_else(|| {
        CheckError::Schema(format!(
            "{}: not a schema file",
            crate::core::escape::path(schema_file)
        ))
    })?;
    let name = contract.name.clone();
    // the lint findings every verdict carries, computed once; in this mode format assertion
    // is the `--format-assertion` flag, not a verdict.toml key
    let warnings: Vec<crate::core::verdict::Warning> = contract
        .lint
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if f.code == crate::core::lint::codes::FORMAT_NOT_ASSERTED {
                f.hint = Some("pass --format-assertion, or add a `pattern`".into());
            }
            f.to_warning()
        })
        .collect();
    let mut files = Vec::new();
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    for p in &paths {
        if !p.exists() {
            return Err(CheckError::NoSuchPath(p.clone()).into());
        }
        if p.is_dir() {
            let ws = Workspace {
                root: p.clone(),
                config: Config {
                    // empty, not ".": `in/./a.json` would become the id
                    captures: vec![PathBuf::new()],
                    ..Config::default()
                },
                contracts: Contracts::default(),
                mcp: Default::default(),
                joins: Default::default(),
                requests: Default::default(),
                request_contracts: Default::default(),
                own_folder: false,
            };
            // a folder's files, but not the schema itself (`check --schema s.json` in the
            // folder that holds it would validate the schema against itself)
            let schema = schema_file.canonicalize().ok();
            let is_schema = |f: &Path| {
                f.file_name() == schema_file.file_name()
                    && schema.is_some()
                    && f.canonicalize().ok() == schema
            };
            // nor `.sse` streams: they are not JSON instances
            let is_sse = |f: &Path| FileKind::of(f).is_some_and(|k| k.layout == Layout::Sse);
            files.extend(
                ws.capture_files()
                    .into_iter()
                    .filter(|f| !is_schema(f) && !is_sse(f)),
            );
        } else {
            files.push(p.clone());
        }
    }
    let rel = |f: &Path| {
        let rel = f.to_string_lossy().replace('\\', "/");
        rel.strip_prefix("./").unwrap_or(&rel).to_string()
    };
    // a passing instance is known without building its `Value` when the tape reads it
    // (`core::stage::tape`): the full path gives every other verdict
    let tape = match &contract.compiled {
        Ok(_) => tape::validator(&contract.schema, format_assertion),
        Err(_) => None,
    };
    // one definition of an instance's errors and verdict, for the fast path and the rest
    let errors = |text: &str| match &contract.compiled {
        Ok(validator) => {
            if let Some(tape) = &tape
                && tape::passes(tape, text)
            {
                debug_assert!(
                    validate_instance(text, validator).is_empty(),
                    "the tape passes {text:?}, which check fails"
                );
                return Vec::new();
            }
            validate_instance(text, validator)
        }
        Err(errs) => errs.clone(),
    };
    let verdict = |source: RecordRef, errors: Vec<Finding>| {
        let mut v = Verdict::from_errors(source.to_string(), source, Some(name.clone()), errors);
        v.warnings = warnings.clone();
        v
    };
    let check = |raw: &RawRecord| {
        vec![match &raw.text {
            Ok(text) => verdict(raw.source.clone(), errors(text)),
            Err(f) => verdict(raw.source.clone(), vec![f.clone()]),
        }]
    };
    let input = Input {
        root: Path::new(""),
        files,
        rel: &rel,
        max_bytes: crate::core::config::DEFAULT_MAX_CAPTURE_BYTES,
        is_log: &|f| is_log(f),
        records: false,
        // the fast path's runs of passing lines are counted already (`Out::Passes`)
        skip_passing: false,
        fast_pass: None,
    };
    let fast = Fast {
        errors: &errors,
        verdict: &verdict,
    };
    stream(input, &check, None, Some(&fast), render, emit)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of lines: [`MANY`] small lines at most, and a large line ends its run, so records
    /// of hundreds of kilobytes are evaluated one at a time; an unusable line counts no bytes.
    #[test]
    fn a_run_is_cut_at_many_lines_or_after_the_line_that_passes_its_bytes() {
        let line = |n: usize, len: usize| (n, Ok(0..len));
        let small: Vec<(usize, LineAt)> = (1..=70).map(|n| line(n, 500)).collect();
        assert_eq!(runs(&small), vec![0..32, 32..64, 64..70]);
        let mut mixed: Vec<(usize, LineAt)> = vec![line(1, 100), line(2, MANY_BYTES), line(3, 1)];
        mixed.push((
            4,
            Err(Box::new(Finding::new(
                crate::core::verdict::Stage::Input,
                crate::core::verdict::Reason::INVALID_CAPTURE,
                "too long",
            ))),
        ));
        mixed.extend((5..=8).map(|n| line(n, MANY_BYTES / 3)));
        assert_eq!(runs(&mixed), vec![0..2, 2..7, 7..8]);
        assert_eq!(runs(&[]), Vec::<std::ops::Range<usize>>::new());
    }

    /// Collects what a run delivers: `(source, path, line, column)` per item, and the runs of
    /// passing lines as `(model source, n)`.
    #[derive(Default)]
    struct Collect {
        items: Vec<(String, String, usize, usize)>,
        passes: Vec<(String, usize)>,
        progress: usize,
    }

    impl Deliver for Collect {
        fn item(&mut self, item: &Item) -> std::io::Result<()> {
            self.items.push((
                item.verdict.source.to_string(),
                item.path.to_string(),
                item.line,
                item.column,
            ));
            Ok(())
        }
        fn passes(&mut self, model: &Item, _: &[u8], n: usize) -> std::io::Result<()> {
            self.passes.push((model.verdict.source.to_string(), n));
            Ok(())
        }
        fn progress(&mut self, checked: usize) {
            self.progress = checked;
        }
    }

    #[test]
    fn instances_are_delivered_in_order_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let schema = dir.path().join("s.schema.json");
        std::fs::write(&schema, r#"{"type": "object", "required": ["a"]}"#).unwrap();
        let log = dir.path().join("odd:l.jsonl");
        std::fs::write(&log, "{\"a\": 1}\n\n[]\n{\"a\": 2}\n{\"a\"\n").unwrap();
        let one = dir.path().join("one.json");
        std::fs::write(&one, "{}").unwrap();
        let instances = InstanceOptions {
            schema,
            format_assertion: false,
        };
        let paths = [log.clone(), one.clone()];
        let name = |p: &Path| p.to_string_lossy().replace('\\', "/");
        let (log, one) = (name(&log), name(&one));
        let mut got = Collect::default();
        let summary =
            check_instances(&instances, &paths, &BatchOptions::default(), &mut got).unwrap();
        let want = |source: String, path: &str, line| (source, path.to_string(), line, 1);
        assert_eq!(
            got.items,
            [
                want(format!("{log}:1"), &log, 1),
                want(format!("{log}:3"), &log, 3),
                want(format!("{log}:4"), &log, 4),
                want(format!("{log}:5"), &log, 5),
                want(one.clone(), &one, 1),
            ]
        );
        // no renderer: the fast path's passing runs come as items
        assert!(got.passes.is_empty());
        assert_eq!(
            (summary.captures, summary.passed, summary.failed),
            (5, 2, 3)
        );
        assert_eq!(got.progress, 5);
        // passing instances counted, not delivered
        let mut quiet = Collect::default();
        let opts = BatchOptions {
            skip_passing: true,
            ..BatchOptions::default()
        };
        let again = check_instances(&instances, &paths, &opts, &mut quiet).unwrap();
        let sources: Vec<&str> = quiet.items.iter().map(|i| i.0.as_str()).collect();
        assert_eq!(
            sources,
            [format!("{log}:3"), format!("{log}:5"), one.clone()]
        );
        assert_eq!((again.captures, again.failed), (5, 3));
    }

    /// Collects the sources of the delivered items and whether each passes.
    #[derive(Default)]
    struct Sources(Vec<(String, bool)>);

    impl Deliver for Sources {
        fn item(&mut self, item: &Item) -> std::io::Result<()> {
            self.0
                .push((item.verdict.source.to_string(), item.verdict.passes()));
            Ok(())
        }
        fn passes(&mut self, _: &Item, _: &[u8], _: usize) -> std::io::Result<()> {
            unreachable!("a workspace has no fast path")
        }
        fn progress(&mut self, _: usize) {}
    }

    #[test]
    fn passing_captures_counted_on_the_validation_threads_give_the_summary_of_a_full_run() {
        // `skip_passing` makes a passing verdict outside any chain an `Out::Counted` where it
        // was made: the summary must be the one of a run that delivers every verdict, and
        // the delivered items that run's failing ones
        let mut counted_repairs = 0;
        for sample in [
            "refund",
            "chains",
            "logs",
            "providers",
            "requests",
            "traces",
        ] {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("samples")
                .join(sample);
            let paths = [root];
            let mut all = Sources::default();
            let mut full = check_workspaces(&paths, &BatchOptions::default(), &mut all).unwrap();
            let mut quiet = Sources::default();
            let opts = BatchOptions {
                skip_passing: true,
                ..BatchOptions::default()
            };
            let mut counted = check_workspaces(&paths, &opts, &mut quiet).unwrap();
            // the chain reports by their counts (their sets' hash tables differ in order)
            let chains = |s: &mut Summary| s.chains.take().map(|c| c.summary);
            assert_eq!(chains(&mut counted), chains(&mut full), "{sample}");
            assert_eq!(counted, full, "{sample}");
            let failing: Vec<&(String, bool)> = all.0.iter().filter(|(_, p)| !p).collect();
            assert_eq!(quiet.0.iter().collect::<Vec<_>>(), failing, "{sample}");
            assert!(
                full.passed > 0 && full.failed + full.passed == full.captures,
                "{sample}"
            );
            counted_repairs += full
                .rates
                .repairs
                .iter()
                .map(|t| t.ready + t.not_ready)
                .sum::<usize>();
        }
        // the repairs' counts are part of what is compared
        assert!(counted_repairs > 0);
    }

    #[test]
    fn a_missing_path_stops_the_run_before_anything_is_delivered() {
        let mut got = Collect::default();
        let missing = PathBuf::from("no/such/folder/for/this/test");
        let err = check_workspaces(
            std::slice::from_ref(&missing),
            &BatchOptions::default(),
            &mut got,
        )
        .unwrap_err();
        assert!(matches!(err, BatchError::Check(CheckError::NoSuchPath(p)) if p == missing));
        assert!(got.items.is_empty());
    }

    /// The reader never holds more than the gate's budget in chunks the validator has not
    /// finished (one chunk past it only when nothing else is held), and cuts a run of
    /// one-record files at half the budget: ten 1 MB files under a 4 MB budget are five
    /// chunks of two, never more than two chunks held. On main the ten went as one chunk
    /// (a run of up to 2,048 files was read whole: 100 files of 10 MB held 1 GB).
    #[test]
    fn the_reader_holds_at_most_the_budget_of_unvalidated_records() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            r#"{{"id": "x", "output": "{}"}}"#,
            "a".repeat(1_000_000 - 25)
        );
        assert_eq!(text.len(), 1_000_000);
        let files: Vec<PathBuf> = (0..10)
            .map(|i| {
                let f = dir.path().join(format!("c{i}.json"));
                std::fs::write(&f, &text).unwrap();
                f
            })
            .collect();
        let gate = Gate::new(4_000_000);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Chunk>(4);
        let mut chunks = Vec::new();
        std::thread::scope(|s| {
            s.spawn(|| {
                let rel = |f: &Path| f.display().to_string();
                read_batches(&files, &rel, &|_| false, 16 << 20, &tx, &gate);
                drop(tx);
            });
            for chunk in rx {
                let held = gate.held.lock().unwrap().0;
                let n = match &chunk {
                    Chunk::Records(r) => r.len(),
                    Chunk::Lines(_) => panic!("no log here"),
                };
                chunks.push((n, held));
                // slow validation: the reader fills the budget meanwhile
                std::thread::sleep(std::time::Duration::from_millis(50));
                assert!(gate.held.lock().unwrap().0 <= 4_000_000);
                gate.give(chunk.bytes());
            }
        });
        assert_eq!(
            chunks.iter().map(|c| c.0).collect::<Vec<_>>(),
            [2, 2, 2, 2, 2]
        );
        assert!(chunks.iter().all(|c| c.1 <= 4_000_000), "{chunks:?}");
    }
}
