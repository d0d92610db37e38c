//! `verdict watch --json` as a child process whose lines arrive on a channel.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

/// A running `verdict watch --json`; killed when dropped.
pub struct WatchJson {
    child: Child,
    /// Its stdout, one parsed JSON line per message (the channel closes when it exits).
    pub lines: Receiver<Value>,
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
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
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
        WatchJson { child, lines }
    }
}

impl Drop for WatchJson {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
