//! The validation worker: validation on a background thread for the TUI. It has no
//! terminal types: results leave through a callback as owned [`EngineEvent`]s, so any front
//! end can forward them into its own channel.
//!
//! Jobs coalesce (gitui's one-slot queue): pending jobs merge into one (a full run absorbs
//! everything before it; change batches union their paths), and a running full run stops
//! between batches as soon as a newer full run arrives. Change batches ([`Job::Apply`]) go
//! through [`Session::apply`], the incremental logic `watch --json` uses: a capture file is
//! re-validated alone, a schema or rules change re-validates that contract's captures.
//! Every event carries the job's generation, so a consumer can drop results of older jobs.

use crate::core::pipeline::Evaluation;
use crate::core::verdict::Verdict;
use crate::core::workspace::Workspace;
use crate::engine::session::{Change, Session, cause_of};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
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
}

impl Job {
    /// The job's generation.
    pub fn generation(&self) -> u64 {
        match self {
            Job::ValidateAll { generation, .. } | Job::Apply { generation, .. } => *generation,
        }
    }

    /// Merges a newer job into this pending one: a full run absorbs everything (and reloads
    /// the contracts if a change batch was pending), change batches union their paths.
    pub fn merge(self, newer: Job) -> Job {
        match (self, newer) {
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
    /// The new evaluation.
    pub evaluation: Evaluation,
    /// The verdict it replaced (`None` when the capture is new).
    pub previous: Option<Box<Verdict>>,
    /// The changed file (workspace-relative) that caused it.
    pub cause: Option<String>,
}

/// A capture that disappeared after a batch of file changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// Its id.
    pub id: String,
    /// Its source (the key the list uses).
    pub source: String,
    /// The changed file (workspace-relative) that caused it.
    pub cause: Option<String>,
}

/// What the engine reports. Events of one generation arrive in order:
/// `Started`, any number of `Batch`es, then `Finished` (or `Failed`).
#[derive(Debug)]
pub enum EngineEvent {
    /// A run began: the workspace it uses and how many records it will evaluate.
    Started {
        /// The job's generation.
        generation: u64,
        /// The workspace the results belong to (contracts, config).
        workspace: Arc<Workspace>,
        /// Number of capture records in this run.
        total: usize,
    },
    /// Some evaluated records, in no particular order.
    Batch {
        /// The job's generation.
        generation: u64,
        /// The evaluations.
        evaluations: Vec<Evaluation>,
    },
    /// The run evaluated every record.
    Finished {
        /// The job's generation.
        generation: u64,
        /// Wall time of the run.
        elapsed: Duration,
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
    },
    /// The run could not start (the workspace cannot be opened).
    Failed {
        /// The job's generation.
        generation: u64,
        /// What went wrong, for the status line.
        message: String,
    },
}

/// A handle on the engine thread. Dropping it ends the thread after its current batch.
pub struct Engine {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// How many evaluations go into one [`EngineEvent::Batch`] for a run of `total` records:
/// about 50 batches per run (so the consumer re-sorts a bounded number of times), never
/// fewer than 64 records.
pub fn batch_size(total: usize) -> usize {
    (total / 50).max(64)
}

impl Engine {
    /// Starts the engine thread for the workspace at `root`; `workspace` is the already
    /// opened workspace the first job may reuse. `emit` receives every event.
    pub fn spawn(
        root: PathBuf,
        workspace: Arc<Workspace>,
        emit: impl Fn(EngineEvent) -> bool + Send + 'static,
    ) -> Engine {
        let (tx, rx) = channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("verdict-engine".into())
            .spawn(move || run(root, workspace, rx, emit))
            .expect("spawn the engine thread");
        Engine {
            jobs: Some(tx),
            thread: Some(thread),
        }
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
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The job channel plus the one pending slot that coalesces jobs.
struct Queue {
    rx: Receiver<Job>,
    pending: Option<Job>,
}

impl Queue {
    /// Merges every job waiting in the channel into the pending slot, without waiting.
    /// Err when the channel closed and nothing is pending (the engine should stop).
    fn poll(&mut self) -> Result<(), ()> {
        loop {
            match self.rx.try_recv() {
                Ok(j) => {
                    self.pending = Some(match self.pending.take() {
                        Some(p) => p.merge(j),
                        None => j,
                    })
                }
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => {
                    return if self.pending.is_some() {
                        Ok(())
                    } else {
                        Err(())
                    };
                }
            }
        }
    }

    /// The next job (the pending one merged with anything newer), waiting if none.
    fn next(&mut self) -> Option<Job> {
        if self.pending.is_none() {
            self.pending = Some(self.rx.recv().ok()?);
        }
        self.poll().ok()?;
        self.pending.take()
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

fn run(
    root: PathBuf,
    mut workspace: Arc<Workspace>,
    rx: Receiver<Job>,
    emit: impl Fn(EngineEvent) -> bool,
) {
    let mut queue = Queue { rx, pending: None };
    let mut session: Option<Session> = None;
    while let Some(job) = queue.next() {
        let (generation, reload) = match job {
            Job::ValidateAll { generation, reload } => (generation, reload),
            Job::Apply { generation, paths } => match session.as_mut() {
                Some(s) => {
                    let event = apply(&root, s, generation, &paths);
                    if !emit(event) {
                        return;
                    }
                    continue;
                }
                // no complete first run to build on: run everything
                None => (generation, true),
            },
        };
        if reload {
            match Workspace::open(&root) {
                Ok(ws) => workspace = Arc::new(ws),
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
        match validate_all(&workspace, generation, &mut queue, &emit) {
            Outcome::Done(files) => {
                session = Some(Session::from_evaluations(workspace.clone(), files));
            }
            Outcome::Superseded => {}
            Outcome::Stop => return,
        }
    }
}

/// Applies one batch of changed paths to the session and describes the result.
fn apply(root: &Path, session: &mut Session, generation: u64, paths: &[PathBuf]) -> EngineEvent {
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
    let changes = match session.apply(paths) {
        Ok(c) => c,
        Err(e) => {
            return EngineEvent::Failed {
                generation,
                message: e.to_string(),
            };
        }
    };
    let mut updated = Vec::new();
    let mut removed = Vec::new();
    for ch in changes {
        match ch {
            Change::Updated { verdict, previous } => {
                let cause = cause_of(&verdict, &causes).cloned();
                if let Some(evaluation) = session.evaluation(&verdict.source) {
                    updated.push(Updated {
                        evaluation: evaluation.clone(),
                        previous,
                        cause,
                    });
                }
            }
            Change::Removed { verdict } => removed.push(Removed {
                cause: cause_of(&verdict, &causes).cloned(),
                id: verdict.id,
                source: verdict.source,
            }),
        }
    }
    EngineEvent::Applied {
        generation,
        workspace: session.ws.clone(),
        at,
        contracts: session.changed_contracts().to_vec(),
        causes,
        updated,
        removed,
    }
}

enum Outcome {
    /// Every record evaluated: the evaluations by capture file, for the session.
    Done(BTreeMap<String, Vec<Evaluation>>),
    Superseded,
    Stop,
}

fn validate_all(
    ws: &Arc<Workspace>,
    generation: u64,
    queue: &mut Queue,
    emit: &impl Fn(EngineEvent) -> bool,
) -> Outcome {
    let start = Instant::now();
    let files = ws.capture_files();
    let per_file: Vec<Vec<_>> = files.par_iter().map(|f| ws.read_file(f)).collect();
    let names: Vec<String> = files.iter().map(|f| ws.relative(f)).collect();
    let records: Vec<(usize, _)> = per_file
        .into_iter()
        .enumerate()
        .flat_map(|(i, rs)| rs.into_iter().map(move |r| (i, r)))
        .collect();
    let total = records.len();
    if !emit(EngineEvent::Started {
        generation,
        workspace: ws.clone(),
        total,
    }) {
        return Outcome::Stop;
    }
    let mut by_file: BTreeMap<String, Vec<Evaluation>> =
        names.iter().map(|n| (n.clone(), Vec::new())).collect();
    for chunk in records.chunks(batch_size(total)) {
        if queue.poll().is_err() {
            return Outcome::Stop;
        }
        if queue.full_run_pending() {
            return Outcome::Superseded;
        }
        let evaluations: Vec<Evaluation> = chunk.par_iter().map(|(_, r)| ws.evaluate(r)).collect();
        for ((i, _), ev) in chunk.iter().zip(&evaluations) {
            if let Some(v) = by_file.get_mut(&names[*i]) {
                v.push(ev.clone());
            }
        }
        if !emit(EngineEvent::Batch {
            generation,
            evaluations,
        }) {
            return Outcome::Stop;
        }
    }
    if !emit(EngineEvent::Finished {
        generation,
        elapsed: start.elapsed(),
    }) {
        return Outcome::Stop;
    }
    Outcome::Done(by_file)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let mut n = 0;
        loop {
            match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
                EngineEvent::Started { total, .. } => assert_eq!(total, 25),
                EngineEvent::Batch {
                    generation,
                    evaluations,
                } => {
                    assert_eq!(generation, 1);
                    n += evaluations.len();
                }
                EngineEvent::Finished { generation, .. } => {
                    assert_eq!(generation, 1);
                    break;
                }
                EngineEvent::Failed { message, .. } => panic!("{message}"),
                EngineEvent::Applied { .. } => panic!("no change was submitted"),
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
        assert_eq!(u.evaluation.verdict.id, "valid-proposal");
        assert!(u.previous.as_ref().unwrap().is_ready());
        assert!(!u.evaluation.verdict.is_ready());
        assert_eq!(u.cause.as_deref(), Some("captures/valid-proposal.json"));
        assert!(
            removed
                .iter()
                .all(|r| r.cause.as_deref() == Some("captures/cases.jsonl"))
        );
        assert!(removed.len() > 10);
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
