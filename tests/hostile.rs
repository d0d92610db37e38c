//! Hostile inputs: each test here is a regression test for a way a capture, a schema or a
//! workspace could break one of verdict's promises (a clear verdict per capture and never a
//! panic, hang or out-of-memory; input files never written; no control characters from
//! model text on the terminal; deterministic output).

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A workspace in a temporary folder with one schema `c` and the given captures.
fn workspace(schema: &Value, captures: &[(&str, String)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("schemas")).unwrap();
    std::fs::create_dir_all(tmp.path().join("captures")).unwrap();
    std::fs::write(
        tmp.path().join("schemas/c.schema.json"),
        serde_json::to_string(schema).unwrap(),
    )
    .unwrap();
    for (name, text) in captures {
        let p = tmp.path().join("captures").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    tmp
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary with a deadline; a run that does not finish in time is a hang and fails.
fn run(args: &[&str], dir: &Path, deadline: Duration) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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

fn record(v: Value) -> String {
    serde_json::to_string(&v).unwrap()
}

/// No control character other than line breaks reaches the terminal.
fn assert_no_control(s: &str) {
    for (i, c) in s.char_indices() {
        assert!(
            c == '\n' || !(c.is_control()),
            "control character U+{:04X} at byte {i} in output:\n{s}",
            c as u32
        );
    }
}

#[test]
fn model_controlled_pointers_and_expect_are_escaped_in_human_and_github_output() {
    let key = "x\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let ws = workspace(
        &json!({"type": "object", "additionalProperties": {"type": "number"}}),
        &[
            (
                "schema.json",
                record(json!({"id": "s", "output": json!({key: "s"}).to_string()})),
            ),
            (
                "dup.json",
                record(json!({"id": "d", "output": "{\"k\\u001b[31m\":1,\"k\\u001b[31m\":2}"})),
            ),
            (
                "expect.json",
                record(json!({"id": "e", "output": "{}", "expect": {"reason": "X\u{1b}[41mRED"}})),
            ),
            (
                "intent.json",
                record(json!({"id": "i", "output": "{}", "intent": {"\u{1b}[5m": 1}})),
            ),
        ],
    );
    for format in ["human", "github"] {
        let r = run(
            &["check", "--format", format, "."],
            ws.path(),
            Duration::from_secs(60),
        );
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stdout.contains("DUPLICATE_KEY"), "{}", r.stdout);
        assert!(r.stdout.contains("INTENT_MISMATCH"), "{}", r.stdout);
        assert_no_control(&r.stdout);
    }
}

#[test]
fn a_fifo_named_like_a_capture_is_one_red_row_not_a_hang() {
    let ws = workspace(
        &json!({"type": "object"}),
        &[("ok.json", record(json!({"id": "ok", "output": "{}"})))],
    );
    for name in ["x.json", "x.jsonl"] {
        let fifo = ws.path().join("captures").join(name);
        let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
    }
    let r = run(
        &["check", "--format", "jsonl", "."],
        ws.path(),
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let verdicts: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), 3, "{}", r.stdout);
    for v in &verdicts[1..] {
        assert_eq!(v["reason"], "INVALID_CAPTURE", "{v}");
        let msg = v["errors"][0]["message"].as_str().unwrap();
        assert!(msg.contains("not a regular file"), "{msg}");
    }
    assert_eq!(verdicts[0]["stage"], "ready");
}

/// Every file below `dir`, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn many_schema_or_intent_errors_in_a_large_output_are_reported_in_linear_time() {
    // 60,000 array items that each fail: every error used to rescan the whole text to find
    // its line:column (quadratic: minutes, hours for a few MB)
    let n = 60_000usize;
    let numbers: Vec<usize> = (0..n).collect();
    let intent: serde_json::Map<String, Value> =
        (0..n).map(|i| (i.to_string(), json!(-1))).collect();
    let ws = workspace(
        &json!({"type": "array", "items": {"maxLength": 0}}),
        &[
            (
                "a-schema.json",
                record(
                    json!({"id": "schema", "output": serde_json::to_string(&vec!["a"; n]).unwrap()}),
                ),
            ),
            (
                "b-intent.json",
                record(json!({
                    "id": "intent",
                    "output": serde_json::to_string(&numbers).unwrap(),
                    "intent": intent,
                })),
            ),
        ],
    );
    let before = snapshot(ws.path());
    let r = run(
        &["check", "--format", "json", "."],
        ws.path(),
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    for (v, reason) in doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["SCHEMA_MISMATCH", "INTENT_MISMATCH"])
    {
        assert_eq!(v["reason"], reason);
        let errors = v["errors"].as_array().unwrap();
        assert_eq!(errors.len(), n);
        // the first errors still carry their line:column
        assert_eq!(
            errors[0]["at"],
            json!({"line": 1, "column": 2}),
            "{}",
            errors[0]
        );
    }
    assert_eq!(before, snapshot(ws.path()), "an input file was written");
}
