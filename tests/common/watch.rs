//! `verdict watch --json` as a child process whose lines arrive on a channel.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// A running `verdict watch --json`; killed when dropped.
pub struct WatchJson {
    child: Child,
    /// Its stdout, one parsed JSON line per message (the channel closes when it exits).
    pub lines: Receiver<Value>,
    /// Its stderr, line by line.
    pub errors: Receiver<String>,
}

impl WatchJson {
    /// Runs `verdict watch --json EXTRA.. .` in the workspace folder `root`.
    pub fn start(root: &Path, extra: &[&str]) -> WatchJson {
        let mut child = Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["watch", "--json"])
            .args(extra)
            .arg(".")
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = child.stderr.take().unwrap();
        let (err_tx, errors) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if err_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line).unwrap();
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        WatchJson {
            child,
            lines,
            errors,
        }
    }

    /// Lines up to and including the next summary, or a panic after `within` (naming
    /// what was awaited and the lines that did arrive).
    pub fn batch(&self, what: &str, within: Duration) -> Vec<Value> {
        let start = Instant::now();
        let deadline = start + within;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    let end = v["type"] == "summary";
                    got.push(v);
                    if end {
                        return got;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{what}: no summary line within {within:?}; got {got:?}")
                }
                Err(e) => panic!(
                    "{what}: watch ended after {:?}: {e}; got {got:?}",
                    start.elapsed()
                ),
            }
        }
    }
}

impl Drop for WatchJson {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
