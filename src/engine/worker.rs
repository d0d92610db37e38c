//! The validation worker: validation on a background thread for the TUI. It has no
//! terminal types: results leave through a callback as owned [`EngineEvent`]s, so any front
//! end can forward them into its own channel.
//!
//! Jobs coalesce (gitui's one-slot queue): pending jobs merge into one (a full run absorbs
//! everything before it; change batches union their paths), and a running full run stops
//! between batches as soon as a newer full run arrives. Change batches ([`Job::Apply`]) go
//! through [`Session::apply_each`], the incremental logic `watch --json` uses: a capture file
//! is re-validated alone, a schema or rules change re-validates that contract's captures.
//! Every event carries the job's generation, so a consumer can drop results of older jobs.
//!
//! Results are compact: a full run streams the capture files (one batch of records in
//! memory at a time) and sends a [`CaptureSummary`] per capture, never the records. The
//! one capture a front end shows is rebuilt on request ([`Job::Load`]: re-read from disk
//! at its offset and re-validated); load requests have their own one-slot queue (the
//! newest wins, so holding a key does not queue thousands) and are served first, also
//! between the batches of a running full run.

use crate::core::outcome::{FlipKind, Outcome};
use crate::core::pipeline::Evaluation;
use crate::core::verdict::Warning;
use crate::core::workspace::Workspace;
use crate::engine::ids::Shared;
use crate::engine::session::{Change, Session, cause_for, cause_of};
use crate::engine::summary::{
    CaptureSummary, Locator, UNKNOWN_OFFSET, for_each_located_as, load, verdict_hash,
};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Work for the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// Re-open the workspace (contracts included) and evaluate every capture.
    ValidateAll {
        /// The generation the results will carry; newer jobs have larger numbers.
        generation: u64,
        /// Re-read `verdict.toml` and the contracts first (false: reuse the workspace).
        reload: bool,
    },
    /// Re-validate what a batch of changed paths affects (see [`Session::apply`]).
    Apply {
        /// The generation the results will carry.
        generation: u64,
        /// The changed files and folders (absolute).
        paths: Vec<PathBuf>,
    },
    /// Re-read one capture and send its full evaluation ([`EngineEvent::Loaded`]). The
    /// engine also remembers it as the shown capture: a later [`EngineEvent::Applied`]
    /// that changes it carries its fresh evaluation.
    Load {
        /// The capture's source (the answer names it).
        source: String,
        /// Where it is.
        loc: Locator,
    },
    /// Re-read the attempts of one chain and send their proposals
    /// ([`EngineEvent::ChainLoaded`]), for the terminal workbench's Chain tab. Queued in a
    /// slot of its own (the newest wins), served before other work like a load.
    LoadChain {
        /// The chain's id (the answer names it).
        chain: String,
        /// Where its attempts are, in chain order (the caller keeps it to a few dozen).
        locs: Vec<Locator>,
    },
}

impl Job {
    /// The job's generation (0 for a load, which has none).
    pub fn generation(&self) -> u64 {
        match self {
            Job::ValidateAll { generation, .. } | Job::Apply { generation, .. } => *generation,
            Job::Load { .. } | Job::LoadChain { .. } => 0,
        }
    }

    /// Merges a newer job into this pending one: a full run absorbs everything (and reloads
    /// the contracts if a change batch was pending), change batches union their paths, a
    /// newer load replaces a load (loads are queued apart from the other jobs, and merging
    /// one with another kind keeps the other).
    pub fn merge(self, newer: Job) -> Job {
        match (self, newer) {
            (Job::Load { .. } | Job::LoadChain { .. }, j)
            | (j, Job::Load { .. } | Job::LoadChain { .. }) => j,
            (_, Job::ValidateAll { generation, reload }) => Job::ValidateAll { generation, reload },
            (Job::ValidateAll { .. }, Job::Apply { generation, .. }) => Job::ValidateAll {
                generation,
                reload: true,
            },
            (Job::Apply { paths: mut a, .. }, Job::Apply { generation, paths }) => {
                a.extend(paths);
                a.sort();
                a.dedup();
                Job::Apply {
                    generation,
                    paths: a,
                }
            }
        }
    }
}

/// A capture whose verdict is new or changed after a batch of file changes.
#[derive(Debug, Clone)]
pub struct Updated {
    /// The new verdict, summarised.
    pub summary: CaptureSummary,
    /// The outcome it replaced (`None` when the capture is new).
    pub previous: Option<Outcome>,
    /// How the outcome changed from `previous`, as the session decided it
    /// ([`Outcome::flip_from`]); `None` when new or not a flip.
    pub flip: Option<FlipKind>,
    /// The changed file (workspace-relative) that caused it.
    pub cause: Option<String>,
    /// The full fresh evaluation, for the capture last asked for with [`Job::Load`] (the
    /// one on screen) only.
    pub evaluation: Option<Box<Evaluation>>,
}

impl Updated {
    /// An update carrying a full evaluation (its location taken from its source).
    pub fn of(evaluation: Evaluation, previous: Option<Outcome>, cause: Option<String>) -> Updated {
        let flip = previous
            .as_ref()
            .and_then(|p| evaluation.verdict.outcome().flip_from(p));
        Updated {
            summary: CaptureSummary::of_evaluation(&evaluation),
            previous,
            flip,
            cause,
            evaluation: Some(Box::new(evaluation)),
        }
    }
}

/// A capture that disappeared after a batch of file changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// Its id (empty from the engine, which keeps no ids: the front end has it).
    pub id: String,
    /// Its source (the key the list uses).
    pub source: String,
    /// The changed file (workspace-relative) that caused it.
    pub cause: Option<String>,
}

/// What the engine reports. Events of one generation arrive in order:
/// any number of `Reading`s and `Listed`s, `Started`, any number of `Batch`es, then
/// `Finished` (or `Failed`).
#[derive(Debug)]
pub enum EngineEvent {
    /// Records a full run's pre-pass has read, before their verdicts: a front end lists
    /// each as pending until a [`EngineEvent::Batch`] gives its verdict, or names it in
    /// its `cleared` (`docs/commands.md#while-it-loads`). Sent with each `Reading`, and once
    /// more when the pre-pass ends (before `Started`).
    Listed {
        /// The job's generation.
        generation: u64,
        /// Runs of record lines, per file.
        records: Vec<crate::core::prescan::Listed>,
    },
    /// A full run's pre-pass is reading the capture files (`docs/commands.md#the-pre-pass`):
    /// sent when it starts and about every 50 ms until `Started`.
    Reading {
        /// The job's generation.
        generation: u64,
        /// Files read completely so far.
        files_done: usize,
        /// Files to read.
        files: usize,
        /// Records read so far.
        records: u64,
    },
    /// A run began: the workspace it uses and how many records it will evaluate.
    Started {
        /// The job's generation.
        generation: u64,
        /// The workspace the results belong to (contracts, config).
        workspace: Arc<Workspace>,
        /// Number of records in this run (non-blank JSONL lines plus `.json` files, as the
        /// pre-pass read them).
        total: usize,
    },
    /// Some evaluated records, summarised, in file order within a file.
    Batch {
        /// The job's generation.
        generation: u64,
        /// The summaries.
        captures: Vec<CaptureSummary>,
        /// The bytes of the records' texts the batch held in memory at once: at most
        /// [`batch_bytes`], or one record alone.
        bytes: u64,
        /// The records of the batch that have no capture of their own at their line (file,
        /// line: 0 for a one-record file): no capture at all (an MCP message other than a
        /// `tools/call`, a batch input request) or the parts of a record of several
        /// captures (`#1`, `#2`, ...). Their pending rows ([`EngineEvent::Listed`]) go.
        cleared: Vec<(Arc<str>, u32)>,
    },
    /// The run evaluated every record.
    Finished {
        /// The job's generation.
        generation: u64,
        /// Wall time of the run.
        elapsed: Duration,
        /// The workspace's own warnings after the run, as `check` gives them after its
        /// verdicts: an `UNMATCHED_JOIN` per `[[join]]` line no capture has
        /// ([`Session::workspace_warnings`]).
        warnings: Vec<Warning>,
    },
    /// A batch of file changes was applied.
    Applied {
        /// The job's generation.
        generation: u64,
        /// The workspace after the change (contracts reloaded if they changed).
        workspace: Arc<Workspace>,
        /// Local wall-clock time of the change, `HH:MM:SS`.
        at: String,
        /// The changed paths, workspace-relative.
        causes: Vec<String>,
        /// Contracts whose schema or rules changed (empty for capture edits).
        contracts: Vec<String>,
        /// New or changed verdicts.
        updated: Vec<Updated>,
        /// Captures that disappeared.
        removed: Vec<Removed>,
        /// The workspace's own warnings after the change (as in [`EngineEvent::Finished`]).
        warnings: Vec<Warning>,
    },
    /// The run could not start (the workspace cannot be opened).
    Failed {
        /// The job's generation.
        generation: u64,
        /// What went wrong, for the status line.
        message: String,
    },
    /// The chains after a run (sent before its `Finished`) or a batch of changes (after its
    /// `Applied`), when the workspace has or had some (`docs/chains.md#in-the-terminal-workbench`):
    /// computed here, off the front end's thread, from the same core as `check`'s.
    Chains {
        /// The job's generation.
        generation: u64,
        /// The rows, the summary and every chain's attempts.
        chains: Arc<crate::engine::chains::ChainsView>,
    },
    /// The answer to a [`Job::LoadChain`]: each attempt's proposal as it is on disk now
    /// (`None`: the attempt has none, or its record is gone), in the order asked.
    ChainLoaded {
        /// The chain asked for.
        chain: String,
        /// The proposals.
        proposals: Vec<Option<serde_json::Value>>,
    },
    /// The answer to a [`Job::Load`]: the capture's full evaluation as it is on disk now,
    /// or `None` when its record is gone.
    Loaded {
        /// The source the load asked for.
        source: String,
        /// The evaluation.
        evaluation: Option<Box<Evaluation>>,
    },
}

/// A handle on the engine thread. Dropping it asks the thread to stop (a full run stops
/// before its next capture: the validation threads skip the rest of their batch) and waits
/// for it at most [`STOP_GRACE`]: a capture that takes longer to validate (one with a
/// million errors, say) is left to finish on its own, or to end with the process, so
/// quitting never waits for it (`docs/commands.md#quitting`).
pub struct Engine {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    /// Set on drop: the running job stops at its next check.
    cancel: Arc<AtomicBool>,
    /// The batch queue's bound, for an engine from [`Engine::spawn_bounded`].
    acks: Option<Acks>,
}

/// The acknowledged queue between the engine and a front end:
/// the engine sends an [`EngineEvent::Batch`] only while fewer than `limit` of the batches it
/// sent are unconsumed, and waits otherwise; the front end calls [`Acks::applied`] once for
/// each batch it took off its channel (applied or dropped as stale), which wakes the engine.
/// The wait also ends when the engine is dropped (quit, or the front end going away): the
/// run then stops. Only batches are counted; every other event goes out at once. Cloning
/// gives another handle on the same counter.
#[derive(Clone, Debug)]
pub struct Acks {
    inner: Arc<AcksInner>,
}

#[derive(Debug)]
struct AcksInner {
    /// Batches sent and not yet acknowledged.
    unconsumed: Mutex<usize>,
    /// Signalled on an acknowledgement and on cancel.
    changed: Condvar,
    /// The most batches unconsumed at once (at least 1).
    limit: usize,
}

impl Acks {
    /// A counter that lets at most `limit` batches (at least 1) be unconsumed at once.
    pub fn new(limit: usize) -> Acks {
        Acks {
            inner: Arc::new(AcksInner {
                unconsumed: Mutex::new(0),
                changed: Condvar::new(),
                limit: limit.max(1),
            }),
        }
    }

    /// The front end took one batch off its channel: one more may be sent.
    pub fn applied(&self) {
        let mut n = self
            .inner
            .unconsumed
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *n = n.saturating_sub(1);
        self.inner.changed.notify_all();
    }

    /// How many batches are sent and not yet acknowledged.
    pub fn unconsumed(&self) -> usize {
        *self
            .inner
            .unconsumed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The engine's side: waits until fewer than the limit are unconsumed, then counts one
    /// more. False (nothing counted) when `cancel` is set, before or during the wait.
    fn acquire(&self, cancel: &AtomicBool) -> bool {
        let mut n = self
            .inner
            .unconsumed
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        loop {
            // read under the lock: [`Acks::wake`] takes it before it notifies, so a cancel
            // set after this check wakes the wait below
            if cancel.load(Ordering::SeqCst) {
                return false;
            }
            if *n < self.inner.limit {
                *n += 1;
                return true;
            }
            n = self
                .inner
                .changed
                .wait(n)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Wakes a waiting engine (after its cancel flag was set).
    fn wake(&self) {
        let _n = self
            .inner
            .unconsumed
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.inner.changed.notify_all();
    }
}

/// How many [`EngineEvent::Batch`]es the terminal workbench lets wait unconsumed
/// ([`Acks`]): at most 4 x 2,048 summaries between the engine and the model.
pub const TUI_BATCHES_IN_FLIGHT: usize = 4;

/// How long dropping an [`Engine`] waits for its thread to stop.
pub const STOP_GRACE: Duration = Duration::from_millis(50);

/// How many records go into one [`EngineEvent::Batch`] for a run of `total` records:
/// about 50 batches per run (so the consumer merges a bounded number of times), never
/// fewer than 64 records nor more than 2,048 (a batch's records are in memory at once; their
/// bytes are bounded too: [`batch_bytes`]).
pub fn batch_size(total: usize) -> usize {
    (total / 50).clamp(64, 2048)
}

/// The most bytes of record text (a `.json` or `.sse` file, a log's line, each at most
/// `max_capture_bytes`) one batch of the engine holds at once, with `workers` validation
/// threads: half of `check`'s in-flight budget
/// ([`IN_FLIGHT`](crate::engine::batch::IN_FLIGHT) x `max_capture_bytes` x `workers`), at
/// most 64 MiB, as `check` cuts its chunks: 32 MiB at the defaults on 2 cores. A record that
/// would take a batch past it starts the next batch; a record larger than it (up to
/// `max_capture_bytes`) is a batch alone. The same bound holds the chunks `watch --json`
/// re-reads a file in ([`Session`]), so the engine's memory, like `check`'s, is a multiple of
/// `max_capture_bytes` x threads whatever the size and number of the files
/// (`docs/verdicts.md#limits`).
pub fn batch_bytes(max_capture_bytes: u64, workers: u64) -> u64 {
    (crate::engine::batch::IN_FLIGHT
        .saturating_mul(max_capture_bytes)
        .saturating_mul(workers.max(1))
        / 2)
    .clamp(1, 64 << 20)
}

/// [`batch_bytes`] for this process's validation threads (rayon's pool).
pub(crate) fn batch_bytes_here(max_capture_bytes: u64) -> u64 {
    batch_bytes(max_capture_bytes, rayon::current_num_threads() as u64)
}

/// The bytes of a record's text (0 for one that could not be read).
pub(crate) fn record_bytes(r: &crate::core::capture::RawRecord) -> u64 {
    r.text.as_ref().map_or(0, |t| t.len() as u64)
}

impl Engine {
    /// Starts the engine thread for the workspace at `root`; `workspace` is the already
    /// opened workspace the first job may reuse. `emit` receives every event.
    pub fn spawn(
        root: PathBuf,
        workspace: Arc<Workspace>,
        emit: impl Fn(EngineEvent) -> bool + Send + 'static,
    ) -> Engine {
        Engine::start(root, workspace, None, emit)
    }

    /// [`Engine::spawn`] with an acknowledged batch queue ([`Acks`]): at most `limit`
    /// batches (at least 1) sent and not yet acknowledged through [`Engine::acks`]; the
    /// engine waits for an acknowledgement (or its drop) before sending another.
    pub fn spawn_bounded(
        root: PathBuf,
        workspace: Arc<Workspace>,
        limit: usize,
        emit: impl Fn(EngineEvent) -> bool + Send + 'static,
    ) -> Engine {
        Engine::start(root, workspace, Some(Acks::new(limit)), emit)
    }

    fn start(
        root: PathBuf,
        workspace: Arc<Workspace>,
        acks: Option<Acks>,
        emit: impl Fn(EngineEvent) -> bool + Send + 'static,
    ) -> Engine {
        let (tx, rx) = channel::<Job>();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = cancel.clone();
        let gate = acks.clone();
        let thread = std::thread::Builder::new()
            .name("verdict-engine".into())
            .spawn(move || run(root, workspace, rx, stop, gate, emit))
            .expect("spawn the engine thread");
        Engine {
            jobs: Some(tx),
            thread: Some(thread),
            cancel,
            acks,
        }
    }

    /// The batch queue's counter, for an engine from [`Engine::spawn_bounded`]; `None` for
    /// an unbounded one.
    pub fn acks(&self) -> Option<Acks> {
        self.acks.clone()
    }

    /// Whether the engine thread has ended (it ends when the engine is dropped, or when
    /// `emit` returns false).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Queues a job. A job still pending when a newer one arrives is replaced.
    pub fn submit(&self, job: Job) {
        if let Some(tx) = &self.jobs {
            let _ = tx.send(job);
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        // an engine waiting for the front end to take a batch stops waiting
        if let Some(a) = &self.acks {
            a.wake();
        }
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let deadline = Instant::now() + STOP_GRACE;
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            if t.is_finished() {
                let _ = t.join();
            }
            // else the thread is detached: it stops at its next check
        }
    }
}

/// The job channel plus the one pending slot that coalesces jobs, and one for loads.
struct Queue {
    rx: Receiver<Job>,
    pending: Option<Job>,
    load: Option<Job>,
    chain: Option<Job>,
}

impl Queue {
    /// Merges every job waiting in the channel into the pending slots, without waiting.
    /// Err when the channel closed and nothing is pending (the engine should stop).
    fn poll(&mut self) -> Result<(), ()> {
        loop {
            match self.rx.try_recv() {
                Ok(j @ Job::Load { .. }) => self.load = Some(j),
                Ok(j @ Job::LoadChain { .. }) => self.chain = Some(j),
                Ok(j) => {
                    self.pending = Some(match self.pending.take() {
                        Some(p) => p.merge(j),
                        None => j,
                    })
                }
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => {
                    return if self.pending.is_some() || self.load.is_some() || self.chain.is_some()
                    {
                        Ok(())
                    } else {
                        Err(())
                    };
                }
            }
        }
    }

    /// The next job (a load first, else the pending one merged with anything newer),
    /// waiting if none.
    fn next(&mut self) -> Option<Job> {
        if self.pending.is_none() && self.load.is_none() && self.chain.is_none() {
            match self.rx.recv().ok()? {
                j @ Job::Load { .. } => self.load = Some(j),
                j @ Job::LoadChain { .. } => self.chain = Some(j),
                j => self.pending = Some(j),
            }
        }
        self.poll().ok()?;
        self.load
            .take()
            .or_else(|| self.chain.take())
            .or_else(|| self.pending.take())
    }

    /// Whether a full run is waiting (a running full run should give way to it).
    fn full_run_pending(&self) -> bool {
        matches!(self.pending, Some(Job::ValidateAll { .. }))
    }
}

/// The local wall-clock time, `HH:MM:SS`.
pub fn clock() -> String {
    chrono::Local::now().format("%H:%M:%S").to_string()
}

/// What the engine thread knows between jobs.
struct State {
    root: PathBuf,
    /// The workspace of the last run (or the one given at start).
    workspace: Arc<Workspace>,
    session: Option<Session>,
    /// The capture last asked for (the one on screen).
    shown: Option<String>,
    /// The shared ids of the running full run (the session's once it is done).
    run_shared: Shared,
    /// The chains of the session's verdicts (`docs/chains.md#in-the-terminal-workbench`).
    chains: crate::engine::chains::LiveChains,
    /// Set when the engine is dropped: stop before the next capture.
    cancel: Arc<AtomicBool>,
    /// The bound on unconsumed batches, if any.
    acks: Option<Acks>,
}

impl State {
    fn ws(&self) -> &Arc<Workspace> {
        self.session.as_ref().map_or(&self.workspace, |s| &s.ws)
    }

    /// The ids several captures share, as the verdicts on screen know them.
    fn shared(&self) -> &Shared {
        self.session
            .as_ref()
            .map_or(&self.run_shared, |s| s.shared())
    }

    /// Answers a load.
    fn load(&mut self, source: String, loc: &Locator) -> EngineEvent {
        let ws = self.ws().clone();
        let load = |ws: &Workspace, loc: &Locator| {
            load(ws, loc).map(|mut ev| {
                // as the run marked it: the verdict on screen is the one check gives
                self.shared().mark(&mut ev.verdict);
                ev
            })
        };
        let mut evaluation = load(&ws, loc);
        // A front end keeps a row's offset until the row's verdict changes, so after a log
        // was rewritten with the same verdicts (whitespace normalised) the offset may start
        // another line, and re-reading from it gives that line's record. The session knows
        // what the line's verdict is: a record that does not match it is looked up by its
        // line instead.
        if let (Some(ev), Some(line), Some(session)) = (&evaluation, loc.line, &self.session)
            && loc.offset != UNKNOWN_OFFSET
            && session.hash_of(&loc.file, line, loc.part) != Some(verdict_hash(&ev.verdict))
        {
            let scan = Locator {
                offset: UNKNOWN_OFFSET,
                ..loc.clone()
            };
            evaluation = load(&ws, &scan);
        }
        let evaluation = evaluation.map(Box::new);
        self.shown = Some(source.clone());
        EngineEvent::Loaded { source, evaluation }
    }

    /// Answers a chain load: each attempt's proposal.
    fn load_chain(&self, chain: String, locs: &[Locator]) -> EngineEvent {
        let ws = self.ws().clone();
        let proposals = locs
            .iter()
            .map(|loc| load(&ws, loc).and_then(|ev| ev.proposal))
            .collect();
        EngineEvent::ChainLoaded { chain, proposals }
    }

    /// The chains event after a run (always: a front end then knows there are none) or a
    /// change (when the workspace has or had chains).
    fn chains_event(&self, generation: u64, had: bool) -> Option<EngineEvent> {
        if self.chains.is_empty() && !had {
            return None;
        }
        Some(EngineEvent::Chains {
            generation,
            chains: Arc::new(self.chains.view(&self.ws().config.budget)),
        })
    }
}

fn run(
    root: PathBuf,
    workspace: Arc<Workspace>,
    rx: Receiver<Job>,
    cancel: Arc<AtomicBool>,
    acks: Option<Acks>,
    emit: impl Fn(EngineEvent) -> bool,
) {
    let mut queue = Queue {
        rx,
        pending: None,
        load: None,
        chain: None,
    };
    let mut st = State {
        root,
        workspace,
        session: None,
        shown: None,
        run_shared: Shared::default(),
        chains: Default::default(),
        cancel,
        acks,
    };
    while let Some(job) = queue.next() {
        let (generation, reload) = match job {
            Job::Load { source, loc } => {
                if !emit(st.load(source, &loc)) {
                    return;
                }
                continue;
            }
            Job::LoadChain { chain, locs } => {
                if !emit(st.load_chain(chain, &locs)) {
                    return;
                }
                continue;
            }
            Job::ValidateAll { generation, reload } => (generation, reload),
            Job::Apply { generation, paths } => match st.session.as_mut() {
                Some(s) => {
                    let had = !st.chains.is_empty();
                    let event = apply(
                        &st.root,
                        s,
                        st.shown.as_deref(),
                        generation,
                        &paths,
                        &mut st.chains,
                    );
                    if !emit(event) {
                        return;
                    }
                    if let Some(e) = st.chains_event(generation, had)
                        && !emit(e)
                    {
                        return;
                    }
                    continue;
                }
                // no complete first run to build on: run everything
                None => (generation, true),
            },
        };
        if reload {
            // the config, schemas and joins only: the run's pre-pass reads the capture files
            match Workspace::load(&st.root) {
                Ok(ws) => st.workspace = Arc::new(ws),
                Err(e) => {
                    if !emit(EngineEvent::Failed {
                        generation,
                        message: e.to_string(),
                    }) {
                        return;
                    }
                    continue;
                }
            }
        }
        st.session = None;
        match validate_all(&mut st, generation, &mut queue, &emit) {
            RunEnd::Done(session) => st.session = Some(session),
            RunEnd::Superseded => {}
            RunEnd::Stop => return,
        }
    }
}

/// Applies one batch of changed paths to the session and describes the result; `shown`
/// is the capture on screen (its update carries the full evaluation).
fn apply(
    root: &Path,
    session: &mut Session,
    shown: Option<&str>,
    generation: u64,
    paths: &[PathBuf],
    chains: &mut crate::engine::chains::LiveChains,
) -> EngineEvent {
    let at = clock();
    let base = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let causes: Vec<String> = paths
        .iter()
        .map(|p| {
            p.strip_prefix(&base)
                .or_else(|_| p.strip_prefix(root))
                .unwrap_or(p)
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let mut updated = Vec::new();
    let mut removed = Vec::new();
    let result = session.apply_each(paths, &mut |ch| match ch {
        Change::Updated {
            evaluation,
            previous,
            flip,
            loc,
        } => {
            let cause = cause_of(&evaluation.verdict, &causes).cloned();
            chains.add(&evaluation.verdict);
            let summary = CaptureSummary::of(&evaluation, loc);
            let full = shown
                .is_some_and(|s| evaluation.verdict.source == s)
                .then_some(evaluation);
            updated.push(Updated {
                summary,
                previous,
                flip,
                cause,
                evaluation: full,
            });
        }
        Change::Removed {
            id,
            source,
            contract,
        } => removed.push({
            chains.remove(&source);
            Removed {
                cause: cause_for(&source, contract.as_deref(), &causes).cloned(),
                id,
                source: source.to_string(),
            }
        }),
    });
    if let Err(e) = result {
        return EngineEvent::Failed {
            generation,
            message: e.to_string(),
        };
    }
    EngineEvent::Applied {
        generation,
        workspace: session.ws.clone(),
        at,
        contracts: session.changed_contracts().to_vec(),
        causes,
        updated,
        removed,
        warnings: session.workspace_warnings(),
    }
}

enum RunEnd {
    /// Every record evaluated: the session to build on.
    Done(Session),
    Superseded,
    Stop,
}

/// A full run: every capture file streamed, records evaluated in parallel batches, one
/// [`EngineEvent::Batch`] of summaries per batch; pending loads are answered between
/// batches.
fn validate_all(
    st: &mut State,
    generation: u64,
    queue: &mut Queue,
    emit: &impl Fn(EngineEvent) -> bool,
) -> RunEnd {
    let start = Instant::now();
    let files = st.workspace.capture_files();
    // the pre-pass (`docs/commands.md#the-pre-pass`), behind the front end's first frame:
    // the workspace's MCP facts and batch requests, the duplicate-id candidates and the
    // record counts, one read of each file
    let pre = match prepass(&st.workspace, &files, generation, queue, emit) {
        Ok(pre) => pre,
        Err(end) => return end,
    };
    let ws = Arc::new(st.workspace.with_facts(pre.mcp, pre.requests));
    // a config error only the facts show: reported as a workspace that cannot be opened,
    // and the next change runs again
    if let Some(e) = ws.request_glob_error() {
        return match emit(EngineEvent::Failed {
            generation,
            message: e.to_string(),
        }) {
            true => RunEnd::Superseded,
            false => RunEnd::Stop,
        };
    }
    st.workspace = ws.clone();
    let counts: Vec<usize> = pre.records.iter().map(|r| r.1).collect();
    let total: usize = counts.iter().sum();
    if !emit(EngineEvent::Started {
        generation,
        workspace: ws.clone(),
        total,
    }) {
        return RunEnd::Stop;
    }
    // the ids several captures share, known before the first verdict (as `check` knows them)
    st.run_shared = pre.ids.exact(&ws, None).shared();
    // the front end knows the ids: removals name the source only
    let mut session = Session::empty(ws.clone()).without_ids();
    st.chains = Default::default();
    let size = batch_size(total);
    let cut = batch_bytes_here(ws.config.max_capture_bytes);
    let mut end: Option<RunEnd> = None;
    let mut batch = |chunk: &mut Vec<(crate::core::capture::RawRecord, Locator)>,
                     bytes: u64,
                     session: &mut Session,
                     st: &mut State|
     -> Option<RunEnd> {
        if queue.poll().is_err() {
            return Some(RunEnd::Stop);
        }
        if let Some(Job::Load { source, loc }) = queue.load.take()
            && !emit(st.load(source, &loc))
        {
            return Some(RunEnd::Stop);
        }
        if let Some(Job::LoadChain { chain, locs }) = queue.chain.take()
            && !emit(st.load_chain(chain, &locs))
        {
            return Some(RunEnd::Stop);
        }
        if queue.full_run_pending() {
            return Some(RunEnd::Superseded);
        }
        let shared = &st.run_shared;
        let cancel = &*st.cancel;
        // a capture's summary, verdict hash, verdict (of a chain's attempt) and record print
        type Done = (
            CaptureSummary,
            u64,
            Option<crate::core::verdict::Verdict>,
            u64,
        );
        // per record: its captures, and whether none of them is the record itself (its
        // pending row goes)
        let done: Vec<(Vec<Done>, Option<Locator>)> = chunk
            .par_drain(..)
            .filter_map(|(r, loc)| {
                // the engine is dropped (the front end quits): the rest of the batch is
                // skipped, each worker checking before each capture
                if cancel.load(Ordering::Relaxed) {
                    return None;
                }
                // a record that is not a capture (an MCP message other than a tools/call)
                // has no row, as `check` gives it no verdict; a record of several captures
                // a row per part
                let print = crate::engine::session::text_print(&r);
                let done: Vec<Done> = ws
                    .evaluate_all(&r)
                    .into_iter()
                    .map(|mut ev| {
                        shared.mark(&mut ev.verdict);
                        let s = CaptureSummary::of(&ev, loc.clone());
                        let h = verdict_hash(&ev.verdict);
                        // the verdict of an attempt of a chain goes on to the chain set
                        let chained =
                            ev.verdict.chain.is_some() && !crate::engine::chains::lone(&ev.verdict);
                        (s, h, chained.then_some(ev.verdict), print)
                    })
                    .collect();
                let whole = done.iter().any(|(s, ..)| s.loc.part.is_none());
                Some((done, (!whole).then_some(loc)))
            })
            .collect();
        if cancel.load(Ordering::Relaxed) {
            return Some(RunEnd::Stop);
        }
        let mut cleared = Vec::new();
        let mut captures = Vec::with_capacity(done.len());
        for (record, gone) in done {
            if let Some(loc) = gone {
                cleared.push((loc.file, loc.line.unwrap_or(0)));
            }
            for (s, h, v, print) in record {
                session.record(&s.loc.file, Some((&s, h)), print);
                if let Some(v) = v {
                    st.chains.add(&v);
                }
                captures.push(s);
            }
        }
        // the acknowledged queue: wait while the front end has enough batches unconsumed
        if let Some(a) = &st.acks
            && !a.acquire(&st.cancel)
        {
            return Some(RunEnd::Stop);
        }
        if !emit(EngineEvent::Batch {
            generation,
            captures,
            bytes,
            cleared,
        }) {
            return Some(RunEnd::Stop);
        }
        None
    };
    let mut chunk = Vec::with_capacity(size);
    // the bytes of the records in `chunk` (at most `cut`, or one record)
    let mut held = 0u64;
    // the pre-pass counts the files in the order given (each file once: the list has no
    // repeats)
    for (f, &count) in files.iter().zip(&counts) {
        let rel: Arc<str> = Arc::from(ws.relative(f));
        session.reserve(&rel, count);
        for_each_located_as(
            f,
            &rel,
            ws.config.max_capture_bytes,
            ws.is_log_file(f),
            |r, loc| {
                let n = record_bytes(&r);
                if !chunk.is_empty() && held.saturating_add(n) > cut {
                    end = batch(&mut chunk, std::mem::take(&mut held), &mut session, st);
                    if end.is_some() {
                        return false;
                    }
                }
                held += n;
                chunk.push((r, loc));
                if chunk.len() >= size {
                    end = batch(&mut chunk, std::mem::take(&mut held), &mut session, st);
                }
                end.is_none()
            },
        );
        if end.is_some() {
            break;
        }
    }
    if end.is_none() && !chunk.is_empty() {
        end = batch(&mut chunk, held, &mut session, st);
    }
    if let Some(e) = end {
        return e;
    }
    session.set_shared(std::mem::take(&mut st.run_shared));
    // the chains before `Finished`, which ends the run's events
    if let Some(e) = st.chains_event(generation, true)
        && !emit(e)
    {
        return RunEnd::Stop;
    }
    if !emit(EngineEvent::Finished {
        generation,
        elapsed: start.elapsed(),
        warnings: session.workspace_warnings(),
    }) {
        return RunEnd::Stop;
    }
    RunEnd::Done(session)
}

/// How often the engine reports a running pre-pass ([`EngineEvent::Reading`]) and looks at
/// its jobs meanwhile.
const READING_TICK: Duration = Duration::from_millis(50);

/// Runs the pre-pass of a full run on another thread while this one reports its progress
/// every [`READING_TICK`] ([`EngineEvent::Reading`]) and watches the jobs: the engine
/// closing, or a newer full run, stops it between blocks (`Err` with how the run ends).
fn prepass(
    ws: &Workspace,
    files: &[PathBuf],
    generation: u64,
    queue: &mut Queue,
    emit: &impl Fn(EngineEvent) -> bool,
) -> Result<crate::engine::prescan::PrePass, RunEnd> {
    let progress = crate::core::prescan::Progress::listing();
    // the records read so far, for the front end's pending rows
    let listed = |progress: &crate::core::prescan::Progress| {
        let records = progress.take_listed();
        records.is_empty()
            || emit(EngineEvent::Listed {
                generation,
                records,
            })
    };
    std::thread::scope(|s| {
        let (tx, rx) = channel();
        let progress = &progress;
        let reader = std::thread::Builder::new()
            .name("verdict-prepass".into())
            .spawn_scoped(s, move || {
                let _ = tx.send(crate::engine::prescan::run(ws, files, files, progress));
            });
        let reader = match reader {
            Ok(r) => r,
            // no thread to spare: read here, without progress
            Err(_) => return Ok(crate::engine::prescan::run(ws, files, files, progress)),
        };
        let mut end = None;
        let pre = loop {
            if end.is_none() {
                if !listed(progress) {
                    end = Some(RunEnd::Stop);
                    progress.stop();
                    continue;
                }
                let reading = EngineEvent::Reading {
                    generation,
                    files_done: progress.files_done(),
                    files: files.len(),
                    records: progress.records(),
                };
                if !emit(reading) || queue.poll().is_err() {
                    end = Some(RunEnd::Stop);
                } else if queue.full_run_pending() {
                    end = Some(RunEnd::Superseded);
                }
                if end.is_some() {
                    progress.stop();
                }
            }
            match rx.recv_timeout(READING_TICK) {
                Ok(pre) => break Some(pre),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break None,
            }
        };
        let _ = reader.join();
        if end.is_none() && !listed(progress) {
            end = Some(RunEnd::Stop);
        }
        match (end, pre) {
            (Some(end), _) => Err(end),
            (None, Some(pre)) if pre.complete => Ok(pre),
            // the reader thread died (a panic: already reported on stderr)
            _ => Err(RunEnd::Stop),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::verdict::Stage;
    use std::path::Path;

    #[test]
    fn a_run_reports_started_batches_and_finished() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund");
        let ws = Arc::new(Workspace::open(&root).unwrap());
        let (tx, rx) = channel();
        let engine = Engine::spawn(root, ws, move |e| tx.send(e).is_ok());
        engine.submit(Job::ValidateAll {
            generation: 1,
            reload: true,
        });
        let (mut n, mut listed) = (0, 0);
        loop {
            match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
                EngineEvent::Reading { generation, .. } => assert_eq!(generation, 1),
                EngineEvent::Listed {
                    generation,
                    records,
                } => {
                    assert_eq!(generation, 1);
                    assert_eq!(n, 0, "every record is listed before the first verdict");
                    listed += records
                        .iter()
                        .map(|r| (r.last - r.first + 1) as usize)
                        .sum::<usize>();
                }
                EngineEvent::Started { total, .. } => {
                    assert_eq!(total, 25);
                    assert_eq!(listed, 25, "the pre-pass listed every record");
                }
                EngineEvent::Batch {
                    generation,
                    captures,
                    ..
                } => {
                    assert_eq!(generation, 1);
                    n += captures.len();
                }
                EngineEvent::Finished { generation, .. } => {
                    assert_eq!(generation, 1);
                    break;
                }
                EngineEvent::Failed { message, .. } => panic!("{message}"),
                EngineEvent::Applied { .. } => panic!("no change was submitted"),
                EngineEvent::Loaded { .. } | EngineEvent::ChainLoaded { .. } => {
                    panic!("no load was asked for")
                }
                EngineEvent::Chains { chains, .. } => assert!(chains.is_empty()),
            }
        }
        assert_eq!(n, 25);
    }

    fn until_finished(rx: &Receiver<EngineEvent>) {
        loop {
            match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
                EngineEvent::Finished { .. } => return,
                EngineEvent::Failed { message, .. } => panic!("{message}"),
                _ => {}
            }
        }
    }

    #[test]
    fn a_change_batch_revalidates_incrementally_and_reports_flips() {
        let dir = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund");
        copy_dir(&src, dir.path());
        let root = dir.path().to_path_buf();
        let ws = Arc::new(Workspace::open(&root).unwrap());
        let (tx, rx) = channel();
        let engine = Engine::spawn(root.clone(), ws, move |e| tx.send(e).is_ok());
        engine.submit(Job::ValidateAll {
            generation: 1,
            reload: false,
        });
        until_finished(&rx);
        // show the capture that will change: its update carries the full evaluation
        engine.submit(Job::Load {
            source: "captures/valid-proposal.json".into(),
            loc: Locator::of_source("captures/valid-proposal.json"),
        });
        match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
            EngineEvent::Loaded { source, evaluation } => {
                assert_eq!(source, "captures/valid-proposal.json");
                assert!(evaluation.unwrap().verdict.is_ready());
            }
            other => panic!("unexpected {other:?}"),
        }
        let file = root.join("captures/valid-proposal.json");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(
            &file,
            text.replacen(r#"\"amount_minor\":5000"#, r#"\"amount_minor\":90000"#, 1),
        )
        .unwrap();
        let gone = root.join("captures/cases.jsonl");
        std::fs::remove_file(&gone).unwrap();
        engine.submit(Job::Apply {
            generation: 2,
            paths: vec![file.clone()],
        });
        engine.submit(Job::Apply {
            generation: 3,
            paths: vec![gone],
        });
        let mut updated = Vec::new();
        let mut removed = Vec::new();
        while removed.is_empty() || updated.is_empty() {
            match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
                EngineEvent::Applied {
                    updated: u,
                    removed: r,
                    contracts,
                    ..
                } => {
                    assert!(contracts.is_empty());
                    updated.extend(u);
                    removed.extend(r);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(updated.len(), 1, "only the edited capture is re-validated");
        let u = &updated[0];
        assert_eq!(u.summary.id, "valid-proposal");
        assert_eq!(u.previous.as_ref().unwrap().stage, Stage::Ready);
        assert_ne!(u.summary.outcome.stage, Stage::Ready);
        assert!(!u.evaluation.as_ref().unwrap().verdict.is_ready());
        assert_eq!(u.cause.as_deref(), Some("captures/valid-proposal.json"));
        assert!(
            removed
                .iter()
                .all(|r| r.cause.as_deref() == Some("captures/cases.jsonl"))
        );
        assert!(removed.len() > 10);
    }

    #[test]
    fn the_batch_bound_is_half_of_checks_in_flight_budget_at_most_64_mib() {
        // 2 x 16 MiB x 2 threads / 2
        assert_eq!(batch_bytes(16 << 20, 2), 32 << 20);
        assert_eq!(batch_bytes(16 << 20, 64), 64 << 20);
        assert_eq!(batch_bytes(1, 0), 1);
    }

    /// A run of large one-record files: each batch holds at most [`batch_bytes`] of record
    /// text. It used to take 64 records a batch whatever their size (`batch_size`): 13
    /// files of 32 KiB in one batch of 416 KiB on 2 threads, where the bound is 128 KiB.
    #[test]
    fn a_batch_of_large_records_is_bounded_by_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let max: u64 = 64 << 10;
        std::fs::write(
            root.join("verdict.toml"),
            format!("max_capture_bytes = {max}\n"),
        )
        .unwrap();
        std::fs::create_dir_all(root.join("schemas")).unwrap();
        std::fs::write(root.join("schemas/c.json"), r#"{"type": "string"}"#).unwrap();
        std::fs::create_dir_all(root.join("captures")).unwrap();
        let cut = batch_bytes_here(max);
        let size: u64 = 32 << 10;
        // three batches' worth and one more
        let files = 3 * cut / size + 1;
        for i in 0..files {
            let head = format!(r#"{{"id": "r{i:04}", "output": ""#);
            let pad = size as usize - head.len() - 2;
            let text = format!("{head}{}\"}}", "x".repeat(pad));
            assert_eq!(text.len() as u64, size);
            std::fs::write(root.join(format!("captures/r{i:04}.json")), text).unwrap();
        }
        let ws = Arc::new(Workspace::open(root).unwrap());
        let (tx, rx) = channel();
        let engine = Engine::spawn(root.to_path_buf(), ws, move |e| tx.send(e).is_ok());
        engine.submit(Job::ValidateAll {
            generation: 1,
            reload: false,
        });
        let mut batches = Vec::new();
        loop {
            match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
                EngineEvent::Batch {
                    captures, bytes, ..
                } => {
                    // every record has `size` bytes: the count is honest
                    assert_eq!(bytes, captures.len() as u64 * size);
                    assert!(captures.iter().all(|c| c.outcome.stage == Stage::Parse));
                    batches.push(captures.len() as u64);
                }
                EngineEvent::Finished { .. } => break,
                EngineEvent::Failed { message, .. } => panic!("{message}"),
                _ => {}
            }
        }
        assert_eq!(batches.iter().sum::<u64>(), files, "{batches:?}");
        let per = cut / size;
        assert!(
            batches.iter().all(|&n| n <= per),
            "batches of {batches:?} records of {size} bytes, over {cut} bytes"
        );
        assert_eq!(batches.len() as u64, files.div_ceil(per), "{batches:?}");
    }

    /// A copy of the refund sample with 400 more log lines (7 batches of 64 records).
    fn many_records() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund");
        copy_dir(&src, dir.path());
        let cases = std::fs::read_to_string(src.join("captures/cases.jsonl")).unwrap();
        let line = cases.lines().next().unwrap();
        let many: String = (0..400).map(|_| format!("{line}\n")).collect();
        std::fs::write(dir.path().join("captures/many.jsonl"), many).unwrap();
        dir
    }

    /// An engine over `many_records` that lets `limit` batches wait unconsumed, validating
    /// everything (generation 1): the folder (kept alive), the engine, its acknowledgements
    /// and its events.
    fn bounded_run(
        limit: usize,
    ) -> (
        tempfile::TempDir,
        Engine,
        Acks,
        std::sync::mpsc::Receiver<EngineEvent>,
    ) {
        let dir = many_records();
        let ws = Arc::new(Workspace::open(dir.path()).unwrap());
        let (tx, rx) = channel();
        let engine = Engine::spawn_bounded(dir.path().to_path_buf(), ws, limit, move |e| {
            tx.send(e).is_ok()
        });
        let acks = engine.acks().unwrap();
        engine.submit(Job::ValidateAll {
            generation: 1,
            reload: true,
        });
        (dir, engine, acks, rx)
    }

    #[test]
    fn a_bounded_engine_stops_while_batches_are_unconsumed_and_resumes_when_applied() {
        let (_dir, _engine, acks, rx) = bounded_run(2);
        let (mut received, mut acked, mut captures) = (0usize, 0usize, 0usize);
        loop {
            match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
                EngineEvent::Batch { captures: c, .. } => {
                    received += 1;
                    captures += c.len();
                    // never a third batch while two are unacknowledged
                    assert!(received - acked <= 2, "{received} sent, {acked} applied");
                    assert_eq!(acks.unconsumed(), received - acked);
                    if received - acked == 2 {
                        // the engine waits now: acknowledge one, it sends one more
                        acked += 1;
                        acks.applied();
                    }
                }
                EngineEvent::Finished { .. } => break,
                EngineEvent::Failed { message, .. } => panic!("{message}"),
                _ => {}
            }
        }
        assert_eq!(captures, 425);
        assert_eq!(received, 7);
        assert_eq!(acked, 6);
    }

    #[test]
    fn dropping_an_engine_waiting_for_acknowledgements_ends_its_thread() {
        let (_dir, engine, acks, rx) = bounded_run(1);
        loop {
            if let EngineEvent::Batch { .. } = rx.recv_timeout(Duration::from_secs(60)).unwrap() {
                break;
            }
        }
        // one batch unacknowledged: the engine waits and sends nothing more
        assert_eq!(acks.unconsumed(), 1);
        drop(engine);
        // the thread ends (dropping `emit`, which holds the sender): the channel closes
        // with no further batch and no `Finished`
        loop {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(e) => panic!("the engine did not stop: {e}"),
                Ok(EngineEvent::Batch { .. } | EngineEvent::Finished { .. }) => {
                    panic!("the engine went on after its drop")
                }
                Ok(_) => {}
            }
        }
    }

    #[test]
    fn pending_jobs_merge() {
        let a = Job::Apply {
            generation: 2,
            paths: vec!["b".into()],
        };
        let b = Job::Apply {
            generation: 3,
            paths: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            a.clone().merge(b),
            Job::Apply {
                generation: 3,
                paths: vec!["a".into(), "b".into()]
            }
        );
        let full = Job::ValidateAll {
            generation: 4,
            reload: false,
        };
        assert_eq!(a.clone().merge(full.clone()), full);
        assert_eq!(
            full.merge(a),
            Job::ValidateAll {
                generation: 2,
                reload: true
            }
        );
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let t = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &t);
            } else {
                std::fs::copy(e.path(), t).unwrap();
            }
        }
    }
}
