//! `verdict watch --json [WORKSPACE]`: the engine headless. Validates everything once, then
//! watches the workspace and prints one JSON line per verdict that is new or changed,
//! one per capture that disappeared, and a summary line after each batch:
//!
//! ```text
//! {"type":"verdict","data":VERDICT,"cause":"captures/a.json","flipped_from":{"stage":..,"decision":..,"reason":..},"ts_ms":..}
//! {"type":"removed","data":{"id":..,"source":..},"cause":"captures/a.json","ts_ms":..}
//! {"type":"summary","data":SUMMARY,"cause":["captures/a.json"],"ts_ms":..}
//! {"type":"chain","data":CHAIN_ROW,"cause":["captures/a.json"],"ts_ms":..}
//! {"type":"chain_removed","data":{"chain":..},"cause":["verdict.toml"],"ts_ms":..}
//! {"type":"error","data":{"message":..},"ts_ms":..}
//! ```
//!
//! A `chain` line (`docs/chains.md#the-report`) comes before a batch's summary line for
//! every chain whose row is new or changed in that batch, under the `[budget]` of
//! `verdict.toml` as it is then; a `chain_removed` line for a chain printed before that no
//! capture is an attempt of any more (a changed `[chains]` re-linked its attempts, or they
//! were deleted).
//!
//! `cause` is the changed file (workspace-relative) that led to the line, `null` for the
//! first pass; `flipped_from` (the previous stage, decision and reason) is set when the
//! outcome flipped ([`Outcome::flip_from`](crate::core::outcome::Outcome::flip_from): the
//! stage, decision or reason changed, or whether the capture passes). `ts_ms` is
//! the Unix time in milliseconds when the line was written. A batch's lines are flushed
//! together with its summary line (one write for a first pass of 100,000 verdicts).

use crate::engine::session::{Change, Session};
use crate::engine::watcher::{self, WatchEvent};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn emit(out: &mut dyn Write, mut line: Value) -> std::io::Result<()> {
    line["ts_ms"] = json!(now_ms() as u64);
    serde_json::to_writer(&mut *out, &line)?;
    writeln!(out)
}

/// A `verdict` line, serialized straight from the verdict (no intermediate `Value`); the
/// fields in the order `json!` gives them (sorted), so every line reads the same.
#[derive(serde::Serialize)]
struct VerdictLine<'a> {
    cause: Option<&'a String>,
    data: &'a crate::core::verdict::Verdict,
    flipped_from: Value,
    ts_ms: u64,
    #[serde(rename = "type")]
    kind: &'static str,
}

fn rel(root: &Path, p: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    p.strip_prefix(&root)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Writes the line for one change. `causes` are the changed paths, workspace-relative
/// (empty for the first pass).
pub fn write_change(out: &mut dyn Write, ch: &Change, causes: &[String]) -> std::io::Result<()> {
    match ch {
        Change::Updated {
            evaluation,
            previous,
            flip,
            ..
        } => {
            let verdict = &evaluation.verdict;
            let flipped = previous.as_ref().filter(|_| flip.is_some()).map_or(
                Value::Null,
                |p| json!({"stage": p.stage, "decision": p.decision, "reason": p.reason}),
            );
            let line = VerdictLine {
                cause: crate::engine::session::cause_of(verdict, causes),
                data: verdict,
                flipped_from: flipped,
                ts_ms: now_ms() as u64,
                kind: "verdict",
            };
            serde_json::to_writer(&mut *out, &line)?;
            writeln!(out)
        }
        Change::Removed {
            id,
            source,
            contract,
        } => {
            let cause = crate::engine::session::cause_for(source, contract.as_deref(), causes)
                .map_or(Value::Null, |c| json!(c));
            emit(
                out,
                json!({"type": "removed", "data": {"id": id, "source": source}, "cause": cause}),
            )
        }
    }
}

/// Writes the summary line that ends a batch: the session's counts and workspace
/// warnings, then `chain_warnings` (`CHAIN_ATTEMPTS`, `CHAIN_ORDER`), in `check`'s order.
pub fn write_summary(
    out: &mut dyn Write,
    session: &Session,
    chain_warnings: Vec<crate::core::verdict::Warning>,
    causes: &[String],
) -> std::io::Result<()> {
    let mut summary = session.summary();
    summary.warnings.extend(chain_warnings);
    emit(
        out,
        json!({"type": "summary", "data": summary, "cause": causes}),
    )?;
    out.flush()
}

/// The chains of the watched workspace, fed every change (`docs/chains.md`), and a hash
/// of each row last printed (a row is printed again only when it changed).
struct Chains {
    set: crate::engine::chains::LiveChains,
    printed: std::collections::HashMap<String, u64>,
}

/// A hash of a chain row as printed.
fn row_hash(row: &crate::core::chain::outcome::ChainRow) -> u64 {
    use std::hash::Hasher as _;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if let Ok(bytes) = serde_json::to_vec(row) {
        h.write(&bytes);
    }
    h.finish()
}

impl Chains {
    fn new() -> Chains {
        Chains {
            set: Default::default(),
            printed: std::collections::HashMap::new(),
        }
    }

    fn feed(&mut self, ch: &Change) {
        match ch {
            Change::Updated { evaluation, .. } => {
                let v = &evaluation.verdict;
                // a verdict in no chain (any more) takes its step out; a batch line whose id
                // no other capture has keeps none
                self.set.add(v);
            }
            Change::Removed { source, .. } => {
                self.set.remove(source);
            }
        }
    }

    /// Writes a `chain` line for every row that is new or changed since the last call
    /// under the workspace's `[budget]` as it is now (`verdict.toml` may have changed it),
    /// and a `chain_removed` line for every chain printed before that is no chain any more
    /// (its attempts re-linked by a changed `[chains]`, or gone). Returns the chains'
    /// warnings, for the summary line (`check` gives them among its workspace warnings).
    fn write(
        &mut self,
        out: &mut dyn Write,
        causes: &[String],
        budget: &crate::core::config::Budget,
    ) -> std::io::Result<Vec<crate::core::verdict::Warning>> {
        if self.set.is_empty() && self.printed.is_empty() {
            return Ok(Vec::new());
        }
        let report = self.set.report(budget);
        let mut seen = std::collections::HashSet::new();
        for row in report.rows {
            seen.insert(row.chain.clone());
            let h = row_hash(&row);
            if self.printed.get(&row.chain) == Some(&h) {
                continue;
            }
            emit(out, json!({"type": "chain", "data": &row, "cause": causes}))?;
            self.printed.insert(row.chain.clone(), h);
        }
        let mut gone: Vec<String> = self
            .printed
            .keys()
            .filter(|c| !seen.contains(*c))
            .cloned()
            .collect();
        gone.sort();
        for chain in gone {
            self.printed.remove(&chain);
            emit(
                out,
                json!({"type": "chain_removed", "data": {"chain": chain}, "cause": causes}),
            )?;
        }
        Ok(report.warnings)
    }
}

/// A change sink that writes each change at once, feeds the chains, and keeps the first
/// write error.
fn writer<'a>(
    out: &'a mut dyn Write,
    causes: &'a [String],
    chains: &'a mut Chains,
    failed: &'a mut Option<std::io::Error>,
) -> impl FnMut(Change) + 'a {
    move |ch| {
        chains.feed(&ch);
        if failed.is_none()
            && let Err(e) = write_change(out, &ch, causes)
        {
            *failed = Some(e);
        }
    }
}

/// How often a quiet watch asks whether its output was closed ([`stdout_closed`]): a
/// `watch --json WS | head -1` ends within this of `head` exiting, not at its next write.
pub const CLOSED_POLL: Duration = Duration::from_millis(250);

/// Whether this process's stdout is a pipe or socket whose reader is gone (`poll` says
/// `POLLERR` or `POLLHUP` on it, without waiting or writing); never for a file or on other
/// platforms (there the next write tells).
pub fn stdout_closed() -> bool {
    #[cfg(unix)]
    {
        let mut fd = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a zero timeout; poll reads and sets only `fd`
        let n = unsafe { libc::poll(&mut fd, 1, 0) };
        n > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
    }
    #[cfg(not(unix))]
    false
}

/// Runs `watch` until the watcher stops or the output is closed: `closed` is asked every
/// [`CLOSED_POLL`] without a batch ([`stdout_closed`] for stdout).
///
/// # Errors
/// The workspace cannot be opened or watched; the output is closed (`BrokenPipe`).
pub fn run(
    root: &Path,
    debounce: Duration,
    out: &mut dyn Write,
    closed: &dyn Fn() -> bool,
) -> anyhow::Result<()> {
    // stdout is line-buffered: buffer a batch, flush it with its summary (or error) line
    // DEL and the C1 controls escaped too (`docs/commands.md#untrusted-text`)
    let mut buffered =
        std::io::BufWriter::with_capacity(1 << 16, crate::core::escape::JsonSafe::new(out));
    let out: &mut dyn Write = &mut buffered;
    // no capture file read yet: the session's first pass reads each once (its pre-pass)
    let ws = std::sync::Arc::new(crate::core::workspace::Workspace::load(root)?);
    // watch before the first pass, so nothing saved meanwhile is missed
    let (tx, rx) = std::sync::mpsc::channel();
    let _watcher = watcher::watch(root, debounce, tx)?;
    let mut failed = None;
    let mut chains = Chains::new();
    let mut session = Session::open_with(ws, &mut writer(out, &[], &mut chains, &mut failed));
    if let Some(e) = failed {
        return Err(e.into());
    }
    if let Some(e) = session.ws.request_glob_error() {
        return Err(e.into());
    }
    let warnings = chains.write(out, &[], &session.ws.config.budget)?;
    write_summary(out, &session, warnings, &[])?;
    if session.is_empty() {
        // stdout keeps its JSON lines; the person who started it is told why they are empty
        eprintln!("{}", no_captures_yet(root));
    }
    loop {
        let event = match rx.recv_timeout(CLOSED_POLL) {
            Ok(event) => event,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if closed() {
                    return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe).into());
                }
                continue;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match event {
            WatchEvent::Changed(paths) => {
                let causes: Vec<String> = paths.iter().map(|p| rel(root, p)).collect();
                let mut failed = None;
                let result =
                    session.apply_each(&paths, &mut writer(out, &causes, &mut chains, &mut failed));
                if let Some(e) = failed {
                    return Err(e.into());
                }
                match result {
                    Ok(()) => {
                        let warnings = chains.write(out, &causes, &session.ws.config.budget)?;
                        write_summary(out, &session, warnings, &causes)?
                    }
                    Err(e) => {
                        emit(
                            out,
                            json!({"type": "error", "data": {"message": e.to_string()}, "cause": causes}),
                        )?;
                        out.flush()?;
                    }
                }
            }
            WatchEvent::Error(message) => {
                emit(out, json!({"type": "error", "data": {"message": message}}))?;
                out.flush()?;
            }
        }
    }
    Ok(())
}

/// What `watch --json` says on stderr when the workspace holds no capture when it starts
/// (`check` stops there, exit 2; `watch` goes on): where it looked, and that it waits.
pub fn no_captures_yet(root: &Path) -> String {
    format!(
        "verdict: no captures yet (searched {}); watching: files that appear there are checked as they come",
        crate::cli::check::searched_captures(&[root.to_path_buf()])
    )
}

/// What `watch` without `--json` is told (exit 2): it would otherwise run without a word
/// (its JSON lines wait for the first batch) for someone who may have wanted the live view.
pub const NEEDS_JSON: &str = "`watch` prints JSON lines for scripts and needs `--json` (`verdict watch --json WORKSPACE`); for a live view in the terminal, run the workbench: `verdict WORKSPACE`";

/// The workspace folder for `watch`: the given path's workspace root (default `.`).
pub fn root_of(path: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let p = path.unwrap_or_else(|| PathBuf::from("."));
    if !p.exists() {
        anyhow::bail!("{}: no such file or folder", crate::core::escape::path(&p));
    }
    Ok(crate::core::workspace::find_root(&p))
}
