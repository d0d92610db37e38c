//! Running the binary with a deadline (shared by the hostile-input tests).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run printed and how it ended.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the binary with a deadline; a run that does not finish in time is a hang and fails.
pub fn run(args: &[&str], dir: &Path, deadline: Duration) -> Run {
    run_with(args, dir, deadline, |_| {})
}

/// [`run`], with `setup` applied to the command first (another user, another environment).
pub fn run_with(
    args: &[&str],
    dir: &Path,
    deadline: Duration,
    setup: impl FnOnce(&mut Command),
) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_verdict"));
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    setup(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut s).ok();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut s).ok();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("verdict {args:?} did not finish within {deadline:?} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&t_out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().unwrap()).into_owned(),
    }
}
