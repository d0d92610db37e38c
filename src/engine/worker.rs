//! The validation worker: validation on a background thread for the TUI. It has no
//! terminal types: results leave through a callback as owned [`EngineEvent`]s, so any front
//! end can forward them into its own channel.
//!
//! Jobs coalesce (gitui's one-slot queue): when several jobs are pending, only the newest
//! runs, and a running job stops between batches as soon as a newer one arrives. Every
//! event carries the job's generation, so a consumer can drop results of older runs.

use crate::core::pipeline::Evaluation;
use crate::core::workspace::Workspace;
use rayon::prelude::*;
use std::path::PathBuf;
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

/// Newest pending job, if any, without waiting.
fn newest(rx: &Receiver<Job>) -> Result<Option<Job>, ()> {
    let mut last = None;
    loop {
        match rx.try_recv() {
            Ok(j) => last = Some(j),
            Err(TryRecvError::Empty) => return Ok(last),
            Err(TryRecvError::Disconnected) => {
                return if last.is_some() { Ok(last) } else { Err(()) };
            }
        }
    }
}

fn run(
    root: PathBuf,
    mut workspace: Arc<Workspace>,
    rx: Receiver<Job>,
    emit: impl Fn(EngineEvent) -> bool,
) {
    let Ok(mut job) = rx.recv() else { return };
    loop {
        if let Ok(Some(newer)) = newest(&rx) {
            job = newer;
        }
        let Job::ValidateAll { generation, reload } = job.clone();
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
                    match rx.recv() {
                        Ok(j) => {
                            job = j;
                            continue;
                        }
                        Err(_) => return,
                    }
                }
            }
        }
        match validate_all(&workspace, generation, &rx, &emit) {
            Outcome::Done => match rx.recv() {
                Ok(j) => job = j,
                Err(_) => return,
            },
            Outcome::Superseded(j) => job = j,
            Outcome::Stop => return,
        }
    }
}

enum Outcome {
    Done,
    Superseded(Job),
    Stop,
}

fn validate_all(
    ws: &Arc<Workspace>,
    generation: u64,
    rx: &Receiver<Job>,
    emit: &impl Fn(EngineEvent) -> bool,
) -> Outcome {
    let start = Instant::now();
    let files = ws.capture_files();
    let records: Vec<_> = files
        .par_iter()
        .map(|f| ws.read_file(f))
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .collect();
    let total = records.len();
    if !emit(EngineEvent::Started {
        generation,
        workspace: ws.clone(),
        total,
    }) {
        return Outcome::Stop;
    }
    for chunk in records.chunks(batch_size(total)) {
        match newest(rx) {
            Ok(Some(j)) => return Outcome::Superseded(j),
            Ok(None) => {}
            Err(()) => return Outcome::Stop,
        }
        let evaluations: Vec<Evaluation> = chunk.par_iter().map(|r| ws.evaluate(r)).collect();
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
    Outcome::Done
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
            }
        }
        assert_eq!(n, 25);
    }
}
