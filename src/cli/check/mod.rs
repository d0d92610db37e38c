//! `verdict check`: validate once, print a report, exit 0 / 1 / 2 (DESIGN 7).

use crate::cli::args::{CheckArgs, Format};
use crate::core::capture::{self, RawRecord};
use crate::core::config::Config;
use crate::core::contract::Contracts;
use crate::core::stage::{parse, schema};
use crate::core::summary::Summary;
use crate::core::text::line_col;
use crate::core::verdict::{Finding, Reason, Stage, Verdict};
use crate::core::workspace::{Workspace, find_root};
use crate::report::{self, Item, Renderer, ReportOptions, Sink};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod fast;
use fast::{Fast, PassModel, Passes, fast_part};

/// Why `check` could not run at all (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A path given on the command line does not exist.
    #[error("{0}: no such file or folder")]
    NoSuchPath(PathBuf),
    /// The workspace cannot be opened.
    #[error(transparent)]
    Workspace(#[from] crate::core::workspace::WorkspaceError),
    /// Nothing to check: a mistyped path would otherwise pass.
    #[error(
        "{}; pass a workspace folder, e.g. `verdict check samples/refund`",
        crate::core::workspace::NO_CAPTURES
    )]
    NoCaptures,
    /// The `--schema` file cannot be used.
    #[error("{0}")]
    Schema(String),
}

/// Records per batch handed from the reader thread to the evaluators.
const BATCH: usize = 2048;

/// Lines per task of the fast path (a task gathers its passing lines into runs).
const FAST_CHUNK: usize = 256;

/// Runs `check` and writes the report to `out`, streaming: records are read on one thread,
/// validated in parallel batches, and reported in capture order, so memory does not grow
/// with the number of captures. Returns whether every capture passed.
///
/// # Errors
/// [`CheckError`] when the run cannot proceed; I/O errors writing the report (a closed
/// pipe included, which the binary treats as success).
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    use std::io::IsTerminal;
    let color = args.color.enabled();
    let opts = ReportOptions {
        color,
        quiet: args.quiet,
        instances: args.schema.is_some(),
    };
    let mut sink: Box<dyn Sink + '_> = match args.format {
        Format::Human => Box::new(report::human::Human::new(&mut *out, &opts)),
        Format::Json => Box::new(report::json::Json::new(&mut *out)),
        Format::Jsonl => Box::new(report::json::JsonLines::new(&mut *out)),
        Format::Junit => Box::new(report::junit::Junit::new(&mut *out)),
        Format::Sarif => Box::new(report::sarif::Sarif::new(&mut *out)),
        Format::Github => Box::new(report::github::Github::new(&mut *out)),
    };
    let mut summary = Summary::default();
    // progress on stderr for long runs, only when it cannot mix with the report
    let mut progress =
        Progress::new(std::io::stderr().is_terminal() && !std::io::stdout().is_terminal());
    // `-q`: the human sink leaves out passing captures itself (it still counts them and
    // notes their contract's warnings); the other formats never see them; none are rendered
    let skip_passing = args.quiet && args.format != Format::Human;
    let render = sink.renderer().map(|renderer| Render {
        renderer,
        quiet: args.quiet,
    });
    let mut emit = |out: Out| -> std::io::Result<()> {
        match out {
            Out::Item(item) => {
                summary.add(&item.verdict);
                progress.tick(summary.captures);
                if skip_passing && item.verdict.passes() {
                    return Ok(());
                }
                sink.item(&item)
            }
            Out::Passes(run) => {
                let model = &run.model.item;
                let n = run.lines.len();
                let v = &model.verdict;
                summary.add_outcomes(v.stage, v.decision, v.expect.as_ref().map(|e| e.met), n);
                progress.tick(summary.captures);
                if skip_passing {
                    return Ok(());
                }
                match &run.rendered {
                    Some(bytes) => sink.passes(model, bytes, n),
                    None => run
                        .lines
                        .iter()
                        .try_for_each(|line| sink.item(&run.model.at(*line))),
                }
            }
        }
    };
    match &args.schema {
        Some(schema_file) => validator_mode(
            schema_file,
            &args.paths,
            args.format_assertion,
            render,
            &mut emit,
        )?,
        None => workspace_mode(&args.paths, render, &mut emit)?,
    }
    progress.done();
    if summary.captures == 0 {
        // a wrong path must not pass CI silently
        return Err(CheckError::NoCaptures.into());
    }
    sink.finish(&summary)?;
    drop(sink);
    out.flush()?;
    Ok(summary.failed == 0)
}

/// A one-line `checked N captures` counter on stderr, redrawn at most every 200 ms.
struct Progress {
    on: bool,
    last: std::time::Instant,
    shown: bool,
}

impl Progress {
    fn new(on: bool) -> Progress {
        Progress {
            on,
            last: std::time::Instant::now(),
            shown: false,
        }
    }

    fn tick(&mut self, n: usize) {
        if self.on && self.last.elapsed() >= std::time::Duration::from_millis(200) {
            self.last = std::time::Instant::now();
            self.shown = true;
            eprint!("\rverdict: checked {n} captures...");
        }
    }

    fn done(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
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
    if let Some(line) = raw.line {
        return (line, 1);
    }
    if records && let Ok(text) = &raw.text {
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
    /// Consecutive instances of one log that passed `check --schema`'s fast path.
    Passes(Passes),
}

type Emit<'a> = dyn FnMut(Out) -> std::io::Result<()> + 'a;

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
    /// The files hold capture records (false: plain instances, `--schema`).
    records: bool,
}

/// Reads the input's files on a reader thread (small files in parallel, JSONL logs line by
/// line), validates each batch in parallel with `check`, and hands the items to `emit` in
/// order.
fn stream(
    input: Input<'_>,
    check: &(dyn Fn(&RawRecord) -> Verdict + Sync),
    fast: Option<&Fast<'_>>,
    render: Option<Render>,
    emit: &mut Emit<'_>,
) -> std::io::Result<()> {
    let Input {
        root,
        files,
        rel,
        max_bytes,
        records,
    } = input;
    // three stages overlap: the reader thread reads batch k+2, the validator thread checks
    // batch k+1 on the rayon pool, and this thread reports batch k (in order)
    let (tx, rx) = std::sync::mpsc::sync_channel::<Chunk>(4);
    // a batch as the validation tasks made it: in order, one part per task
    let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<Vec<Vec<Out>>>(2);
    std::thread::scope(|scope| {
        scope.spawn(move || read_batches(&files, rel, max_bytes, &tx));
        scope.spawn(move || {
            let mut paths: HashMap<String, Arc<str>> = HashMap::new();
            // an item of a verdict, rendered
            let finish = |verdict: Verdict, path: Arc<str>, (line, column): (usize, usize)| {
                let mut item = Item {
                    verdict,
                    path,
                    line,
                    column,
                    rendered: None,
                };
                if let Some(r) = &render
                    && !(r.quiet && item.verdict.passes())
                {
                    let mut bytes = Vec::with_capacity(256);
                    (r.renderer)(&item, &mut bytes);
                    item.rendered = Some(bytes);
                }
                item
            };
            let item = |raw: RawRecord, path: Arc<str>| {
                let verdict = check(&raw);
                finish(verdict, path, locate_record(&raw, records))
            };
            // a line of a block as a record (decoded here, on the validation threads, which
            // also free it)
            let line_record = |block: &LineBlock, line_no: usize, at: &LineAt| {
                let text = match at {
                    Ok(range) => capture::decode(block.bytes[range.clone()].to_vec()),
                    Err(f) => Err(Finding::clone(f)),
                };
                RawRecord {
                    source: format!("{}:{line_no}", block.rel),
                    file: block.rel.clone(),
                    line: Some(line_no),
                    text,
                }
            };
            for chunk in rx {
                // a batch is mostly the lines of one log: one display path per file
                paths.clear();
                let outs: Vec<Vec<Out>> = match chunk {
                    Chunk::Records(batch) => {
                        for raw in &batch {
                            if !paths.contains_key(&raw.file) {
                                paths.insert(raw.file.clone(), display_path(root, &raw.file));
                            }
                        }
                        let paths = &paths;
                        let outs = batch
                            .into_par_iter()
                            .map(|raw| {
                                let path = paths[&raw.file].clone();
                                Out::Item(Box::new(item(raw, path)))
                            })
                            .collect::<Vec<Out>>();
                        vec![outs]
                    }
                    Chunk::Lines(block) => {
                        let path = display_path(root, &block.rel);
                        let block = &block;
                        match fast {
                            None => vec![
                                block
                                    .lines
                                    .par_iter()
                                    .map(|(line_no, at)| {
                                        let raw = line_record(block, *line_no, at);
                                        Out::Item(Box::new(item(raw, path.clone())))
                                    })
                                    .collect::<Vec<Out>>(),
                            ],
                            Some(fast) => {
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
                                                item(line_record(block, line, at), path.clone())
                                            },
                                        )
                                    })
                                    .collect();
                                parts
                            }
                        }
                    }
                };
                // the reporter stopped (a write error): dropping `rx` stops the reader
                if done_tx.send(outs).is_err() {
                    return;
                }
            }
        });
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

/// Up to [`BATCH`] consecutive non-blank lines of one log.
struct LineBlock {
    /// The log, workspace-relative.
    rel: String,
    /// The lines' bytes, back to back.
    bytes: Vec<u8>,
    /// Per line: its 1-based number and its byte range in `bytes`, or why it is unusable
    /// (too long, a read error).
    lines: Vec<(usize, LineAt)>,
}

/// Where one line's bytes are in its [`LineBlock`], or why the line is unusable (boxed: a
/// block holds one per line, and a finding is hundreds of bytes).
type LineAt = Result<std::ops::Range<usize>, Box<Finding>>;

fn read_batches(
    files: &[PathBuf],
    rel: &(dyn Fn(&Path) -> String + Sync),
    max_bytes: u64,
    tx: &std::sync::mpsc::SyncSender<Chunk>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    // hands the pending records on; false when the receiver is gone
    let flush = |batch: &mut Vec<RawRecord>| {
        tx.send(Chunk::Records(std::mem::replace(
            batch,
            Vec::with_capacity(BATCH),
        )))
        .is_ok()
    };
    let mut i = 0;
    while i < files.len() {
        let is_log = |f: &PathBuf| f.extension().is_some_and(|e| e == "jsonl" || e == "ndjson");
        if is_log(&files[i]) {
            // what came before goes first, in order
            if !batch.is_empty() && !flush(&mut batch) {
                return;
            }
            let name = rel(&files[i]);
            let Ok((file, _)) = capture::open_regular(&files[i]) else {
                // not readable: the one INVALID_CAPTURE record `for_each_record` makes
                capture::for_each_record(&files[i], &name, max_bytes, |r| batch.push(r));
                i += 1;
                continue;
            };
            if !read_log_blocks(file, &name, max_bytes, tx) {
                return;
            }
            i += 1;
            continue;
        }
        // a run of one-record files: read them in parallel, in order
        let end = (i..files.len())
            .take_while(|j| !is_log(&files[*j]))
            .take(BATCH)
            .last()
            .map_or(i + 1, |j| j + 1);
        let read: Vec<Vec<RawRecord>> = files[i..end]
            .par_iter()
            .map(|f| capture::read_file(f, &rel(f), max_bytes))
            .collect();
        batch.extend(read.into_iter().flatten());
        if batch.len() >= BATCH && !flush(&mut batch) {
            return;
        }
        i = end;
    }
    if !batch.is_empty() {
        let _ = tx.send(Chunk::Records(batch));
    }
}

/// Reads one log into [`LineBlock`]s of up to [`BATCH`] lines and sends them; false when the
/// receiver is gone (stop reading).
fn read_log_blocks(
    file: std::fs::File,
    rel: &str,
    max_bytes: u64,
    tx: &std::sync::mpsc::SyncSender<Chunk>,
) -> bool {
    let fresh = || LineBlock {
        rel: rel.to_string(),
        bytes: Vec::with_capacity(256 * 1024),
        lines: Vec::with_capacity(BATCH),
    };
    let mut block = fresh();
    let mut open = true;
    capture::read_line_bytes(
        std::io::BufReader::with_capacity(256 * 1024, file),
        max_bytes,
        |line_no, line| {
            if !open {
                return;
            }
            let entry = line
                .map(|b| {
                    let start = block.bytes.len();
                    block.bytes.extend_from_slice(b);
                    start..block.bytes.len()
                })
                .map_err(Box::new);
            block.lines.push((line_no, entry));
            // at most BATCH lines, and sent once past 64 MiB (lines of large records)
            if (block.lines.len() >= BATCH || block.bytes.len() >= 64 << 20)
                && tx
                    .send(Chunk::Lines(std::mem::replace(&mut block, fresh())))
                    .is_err()
            {
                open = false;
            }
        },
    );
    if open && !block.lines.is_empty() {
        open = tx.send(Chunk::Lines(block)).is_ok();
    }
    open
}

fn workspace_mode(
    paths: &[PathBuf],
    render: Option<Render>,
    emit: &mut Emit<'_>,
) -> anyhow::Result<()> {
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
        let ws = Workspace::open(&root).map_err(CheckError::from)?;
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
                files.push(t.clone());
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
    for (root, ws, files) in opened {
        let max = ws.config.max_capture_bytes;
        let input = Input {
            root: &root,
            files,
            rel: &|f| ws.relative(f),
            max_bytes: max,
            records: true,
        };
        stream(input, &|raw| ws.check(raw), None, render.clone(), emit)?;
    }
    Ok(())
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
) -> anyhow::Result<()> {
    if !schema_file.exists() {
        return Err(CheckError::NoSuchPath(schema_file.to_path_buf()).into());
    }
    if !schema_file.is_file() {
        return Err(CheckError::Schema(format!(
            "{}: not a regular file (the --schema file must be a JSON Schema document)",
            schema_file.display()
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
        CheckError::Schema(format!("{}: not a schema file", schema_file.display()))
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
            };
            // a folder's files, but not the schema itself (`check --schema s.json` in the
            // folder that holds it would validate the schema against itself)
            let schema = schema_file.canonicalize().ok();
            let is_schema = |f: &Path| {
                f.file_name() == schema_file.file_name()
                    && schema.is_some()
                    && f.canonicalize().ok() == schema
            };
            files.extend(ws.capture_files().into_iter().filter(|f| !is_schema(f)));
        } else {
            files.push(p.clone());
        }
    }
    let rel = |f: &Path| {
        let rel = f.to_string_lossy().replace('\\', "/");
        rel.strip_prefix("./").unwrap_or(&rel).to_string()
    };
    // one definition of an instance's errors and verdict, for the fast path and the rest
    let errors = |text: &str| match &contract.compiled {
        Ok(validator) => instance_errors(text, validator),
        Err(errs) => errs.clone(),
    };
    let verdict = |source: String, errors: Vec<Finding>| {
        let mut v = Verdict::from_errors(source.clone(), source, Some(name.clone()), errors);
        v.warnings = warnings.clone();
        v
    };
    let check = |raw: &RawRecord| match &raw.text {
        Ok(text) => verdict(raw.source.clone(), errors(text)),
        Err(f) => verdict(raw.source.clone(), vec![f.clone()]),
    };
    let input = Input {
        root: Path::new(""),
        files,
        rel: &rel,
        max_bytes: crate::core::config::DEFAULT_MAX_CAPTURE_BYTES,
        records: false,
    };
    let fast = Fast {
        errors: &errors,
        verdict: &verdict,
    };
    stream(input, &check, Some(&fast), render, emit)?;
    Ok(())
}

fn instance_errors(text: &str, validator: &jsonschema::Validator) -> Vec<Finding> {
    if text.trim().is_empty() {
        return vec![Finding::new(
            Stage::Response,
            Reason::NO_OUTPUT,
            "the instance is empty",
        )];
    }
    match parse::parse_strict(text) {
        Ok(v) => schema::validate(validator, &v, Some(text)),
        Err(f) => vec![f],
    }
}
