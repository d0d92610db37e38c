//! `verdict check`: validate once, print a report, exit 0 / 1 / 2 (`docs/commands.md`). The pipeline
//! is [`crate::engine::batch`]; this chooses the report format, shows progress and decides
//! the exit code.

use crate::cli::args::{CheckArgs, Format};
use crate::engine::batch::{self, BatchError, BatchOptions, Deliver, InstanceOptions};
use crate::report::{self, Item, ReportOptions, Sink};
use std::io::Write;

pub use crate::engine::batch::CheckError;

/// Runs `check` and writes the report to `out`, streaming: records are read on one thread,
/// validated in parallel batches, and reported in capture order, so memory does not grow
/// with the number of captures. Returns whether every capture passed; when `out` is closed
/// (`verdict check | head -1`) the run stops there and returns whether every capture
/// checked until then passed, whatever the format.
///
/// # Errors
/// [`CheckError`] when the run cannot proceed; I/O errors writing the report other than a
/// closed pipe.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    use std::io::IsTerminal;
    let color = args.color.enabled();
    let opts = ReportOptions {
        color,
        quiet: args.quiet,
        instances: args.schema.is_some(),
    };
    let instances = opts.instances;
    // JSON formats: DEL and the C1 controls escaped too (`docs/commands.md#untrusted-text`)
    let mut json_safe;
    let out: &mut dyn Write = match args.format {
        Format::Json | Format::Jsonl | Format::Sarif => {
            json_safe = crate::core::escape::JsonSafe::new(out);
            &mut json_safe
        }
        _ => out,
    };
    let mut sink: Box<dyn Sink + '_> = match args.format {
        Format::Human => Box::new(report::human::Human::new(&mut *out, &opts)),
        Format::Json => Box::new(report::json::Json::new(&mut *out).instances(instances)),
        Format::Jsonl => Box::new(report::json::JsonLines::new(&mut *out).instances(instances)),
        Format::Junit => Box::new(report::junit::Junit::new(&mut *out)),
        Format::Sarif => Box::new(report::sarif::Sarif::new(&mut *out).instances(instances)),
        Format::Github => Box::new(report::github::Github::new(&mut *out).instances(instances)),
    };
    let batch_opts = BatchOptions {
        renderer: sink.renderer(),
        quiet: args.quiet,
        // `-q`: the human sink leaves out passing captures itself (it still counts them and
        // notes their contract's warnings), and so does the github one in workspace mode (it
        // annotates their contract's lint findings); the other formats never see them
        skip_passing: args.quiet
            && !(args.format == Format::Human || args.format == Format::Github && !instances),
        // only the JSON formats print the chain rows; the others their summary at most
        chain_rows: match args.format {
            Format::Json | Format::Jsonl => crate::core::chain::Keep::All,
            _ => crate::core::chain::Keep::None,
        },
    };
    let mut to_sink = ToSink {
        sink: &mut *sink,
        // progress on stderr for long runs, only when it cannot mix with the report
        progress: Progress::new(
            std::io::stderr().is_terminal() && !std::io::stdout().is_terminal(),
        ),
        failed: false,
    };
    let result = match &args.schema {
        Some(schema) => {
            let instances = InstanceOptions {
                schema: schema.clone(),
                format_assertion: args.format_assertion,
            };
            batch::check_instances(&instances, &args.paths, &batch_opts, &mut to_sink)
        }
        None => batch::check_workspaces(&args.paths, &batch_opts, &mut to_sink),
    };
    let summary = match result {
        Ok(summary) => summary,
        Err(BatchError::Check(e)) => return Err(e.into()),
        // every failing capture is delivered before its line is written
        Err(BatchError::Deliver(e)) if is_closed(&e) => {
            to_sink.progress.done();
            return Ok(!to_sink.failed);
        }
        Err(BatchError::Deliver(e)) => return Err(e.into()),
    };
    to_sink.progress.done();
    if summary.captures == 0 {
        // a wrong path must not pass CI silently
        return Err(CheckError::NoCaptures {
            searched: searched_captures(&args.paths),
        }
        .into());
    }
    let written = sink.finish(&summary);
    drop(sink);
    match written.and_then(|()| out.flush()) {
        Ok(()) => Ok(summary.failed == 0),
        Err(e) if is_closed(&e) => Ok(summary.failed == 0),
        Err(e) => Err(e.into()),
    }
}

/// The report's reader went away (`| head`): not an error, the run just stops.
fn is_closed(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// The report sink as the batch pipeline's delivery, with the progress counter.
struct ToSink<'a, 'b> {
    sink: &'a mut (dyn Sink + 'b),
    progress: Progress,
    /// A failing capture was delivered (the exit code when the report's reader goes away).
    failed: bool,
}

impl Deliver for ToSink<'_, '_> {
    fn item(&mut self, item: &Item) -> std::io::Result<()> {
        self.failed |= !item.verdict.passes();
        self.sink.item(item)
    }

    fn passes(&mut self, model: &Item, bytes: &[u8], n: usize) -> std::io::Result<()> {
        self.sink.passes(model, bytes, n)
    }

    fn progress(&mut self, checked: usize) {
        self.progress.tick(checked);
    }
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

/// The capture folders and files a run with no captures looked in: each PATH's workspace's
/// `captures` (from its `verdict.toml`), or the PATH itself when it is a file, with
/// `(missing)` after one that does not exist.
pub(crate) fn searched_captures(paths: &[std::path::PathBuf]) -> String {
    let dot = [std::path::PathBuf::from(".")];
    let paths = if paths.is_empty() { &dot[..] } else { paths };
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() || !p.exists() {
            out.push(crate::core::escape::path(p));
            continue;
        }
        let root = crate::core::workspace::find_root(p);
        let captures = crate::core::workspace::Workspace::load(&root)
            .map(|ws| ws.config.captures.clone())
            .unwrap_or_default();
        for c in captures {
            let at = root.join(&c);
            let missing = if at.exists() { "" } else { " (missing)" };
            out.push(format!("{}{missing}", crate::core::escape::path(&at)));
        }
    }
    if out.is_empty() {
        "nothing".to_string()
    } else {
        out.join(", ")
    }
}
