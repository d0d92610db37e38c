//! Hostile and broken input in one workspace: binary files, empty files, invalid UTF-8,
//! 10,000-deep nesting in the output text and in the record itself, `1e400`, records over
//! `max_capture_bytes` (as a `.json` file and as one JSONL line), beside good captures.
//! Every item gets one clear verdict and nothing panics, in process and through the binary.

use crate::common::verdicts;
use serde_json::{Value, json};
use std::process::Command;
use tempfile::TempDir;
use verdict::core::verdict::Verdict;

const MAX: usize = 30_000;

const SCHEMA: &str = r#"{
  "type": "object",
  "required": ["order_id", "amount_minor"],
  "properties": {
    "order_id": {"type": "string"},
    "amount_minor": {"type": "integer", "minimum": 1}
  }
}"#;

const GOOD: &str = r#"{"order_id": "O-1", "amount_minor": 5000}"#;

/// Deterministic bytes: a NUL, an invalid UTF-8 lead byte, then pseudo-random bytes.
fn binary() -> Vec<u8> {
    let mut out = vec![0x00, 0xFF];
    let mut x: u32 = 0x2545_F491;
    for _ in 0..4096 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.push(x as u8);
    }
    out
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn record(id: &str, output: &str) -> String {
    json!({"id": id, "output": output}).to_string()
}

fn workspace() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<(&str, Vec<u8>)> = vec![
        (
            "verdict.toml",
            format!("max_capture_bytes = {MAX}\n").into_bytes(),
        ),
        ("schemas/refund.schema.json", SCHEMA.into()),
        ("captures/binary.json", binary()),
        ("captures/empty.json", Vec::new()),
        ("captures/whitespace.json", b" \n\t\n".to_vec()),
        (
            "captures/latin1.json",
            b"{\"id\": \"latin1\", \"output\": \"caf\xe9\"}".to_vec(),
        ),
        (
            "captures/deep-output.json",
            record("deep-output", &nested(10_000)).into_bytes(),
        ),
        (
            "captures/deep-record.json",
            format!(
                "{{\"id\": \"deep-record\", \"output\": \"{{}}\", \"meta\": {{\"x\": {}}}}}",
                nested(10_000)
            )
            .into_bytes(),
        ),
        (
            "captures/huge-number.json",
            record(
                "huge-number",
                r#"{"order_id": "O-1", "amount_minor": 1e400}"#,
            )
            .into_bytes(),
        ),
        (
            "captures/too-big.json",
            record("too-big", &format!("\"{}\"", "x".repeat(MAX))).into_bytes(),
        ),
        (
            "captures/log.jsonl",
            [
                record("line-1", GOOD),
                record("line-2", &format!("\"{}\"", "y".repeat(MAX))),
                String::new(),
                record("line-4", r#"{"order_id": "O-1", "amount_minor": 0}"#),
                "\u{0}\u{1}garbage".to_string(),
            ]
            .join("\n")
            .into_bytes(),
        ),
        ("captures/good.json", record("good", GOOD).into_bytes()),
        (
            "captures/structured.json",
            json!({"id": "structured", "output": {"order_id": "O-2", "amount_minor": 1}})
                .to_string()
                .into_bytes(),
        ),
    ];
    for (rel, bytes) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    dir
}

/// `(source, id, stage, decision, reason, line:column of the first finding)`.
fn row(v: &Verdict) -> String {
    let f = v.errors.first();
    format!(
        "{} {} {} {} {} {}",
        v.source,
        v.id,
        v.stage,
        v.decision,
        v.reason.as_ref().map_or("-", |r| r.as_str()),
        f.and_then(|f| f.at)
            .map_or("-".to_string(), |a| a.to_string()),
    )
}

const EXPECTED: [&str; 13] = [
    "captures/binary.json captures/binary.json input reject INVALID_CAPTURE -",
    "captures/deep-output.json deep-output parse regenerate TOO_DEEP 1:128",
    "captures/deep-record.json captures/deep-record.json input reject INVALID_CAPTURE -",
    "captures/empty.json captures/empty.json input reject INVALID_CAPTURE -",
    "captures/good.json good ready ready-for-commit - -",
    "captures/huge-number.json huge-number parse regenerate NON_STANDARD_NUMBER 1:37",
    "captures/latin1.json captures/latin1.json input reject INVALID_CAPTURE -",
    "captures/log.jsonl:1 line-1 ready ready-for-commit - -",
    "captures/log.jsonl:2 captures/log.jsonl:2 input reject INVALID_CAPTURE -",
    "captures/log.jsonl:4 line-4 schema regenerate SCHEMA_MISMATCH 1:37",
    "captures/log.jsonl:5 captures/log.jsonl:5 input reject INVALID_CAPTURE -",
    "captures/structured.json structured ready ready-for-commit - -",
    "captures/too-big.json captures/too-big.json input reject INVALID_CAPTURE -",
];

#[test]
fn one_clear_verdict_per_item() {
    let dir = workspace();
    let vs = verdicts(dir.path());
    let rows: Vec<String> = vs.iter().map(row).collect();
    // whitespace.json is one more INVALID_CAPTURE, checked below with its message
    let (ws, rest): (Vec<&Verdict>, Vec<String>) = (
        vs.iter()
            .filter(|v| v.source == "captures/whitespace.json")
            .collect(),
        rows.into_iter()
            .filter(|r| !r.starts_with("captures/whitespace.json"))
            .collect(),
    );
    assert_eq!(rest, EXPECTED);
    assert_eq!(ws.len(), 1);

    let message = |source: &str| -> &str {
        let v = vs.iter().find(|v| v.source == source).unwrap();
        assert_eq!(v.errors.len(), 1, "{v:#?}");
        &v.errors[0].message
    };
    assert_eq!(
        message("captures/binary.json"),
        "record is not valid UTF-8 (invalid byte at offset 1)"
    );
    assert_eq!(
        message("captures/latin1.json"),
        "record is not valid UTF-8 (invalid byte at offset 31)"
    );
    assert_eq!(
        message("captures/empty.json"),
        "record is not valid JSON at 1:1: expected a JSON value, found the end of the text"
    );
    assert_eq!(
        message("captures/whitespace.json"),
        "record is not valid JSON at 3:1: expected a JSON value, found the end of the text"
    );
    assert_eq!(
        message("captures/deep-record.json"),
        "record at 1:178: nesting is too deep: expected at most 127 nested arrays and objects, found an array at level 128"
    );
    assert_eq!(
        message("captures/deep-output.json"),
        "nesting is too deep: expected at most 127 nested arrays and objects, found an array at level 128"
    );
    assert_eq!(
        message("captures/huge-number.json"),
        "number \"1e400\" is outside the range of an IEEE 754 double: expected a finite number"
    );
    let big = std::fs::metadata(dir.path().join("captures/too-big.json"))
        .unwrap()
        .len();
    assert_eq!(
        message("captures/too-big.json"),
        format!("capture record is {big} bytes, over max_capture_bytes ({MAX}); not parsed")
    );
    // the record's bytes, without its line's `\n`
    let line2 = record("line-2", &format!("\"{}\"", "y".repeat(MAX))).len();
    assert_eq!(
        message("captures/log.jsonl:2"),
        format!("capture record is {line2} bytes, over max_capture_bytes ({MAX}); not parsed")
    );
    for source in ["captures/too-big.json", "captures/log.jsonl:2"] {
        let v = vs.iter().find(|v| v.source == source).unwrap();
        assert_eq!(
            v.errors[0].hint.as_deref(),
            Some("raise max_capture_bytes in verdict.toml if this size is expected")
        );
    }
}

#[test]
fn the_binary_reports_every_item_and_exits_1() {
    let dir = workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["check", "--format", "json", "--color", "never"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    let verdicts: Vec<Verdict> = serde_json::from_value(doc["verdicts"].clone()).unwrap();
    let mut rows: Vec<String> = verdicts
        .iter()
        .filter(|v| v.source != "captures/whitespace.json")
        .map(row)
        .collect();
    rows.sort();
    assert_eq!(rows, EXPECTED);
    let summary = &doc["summary"];
    assert_eq!(summary["captures"], 14);
    assert_eq!(summary["funnel"]["ready"], 3);
    assert_eq!(summary["passed"], 3);
    assert_eq!(summary["failed"], 11);
}

/// A named pipe with a capture extension must not block the run: it is one
/// `INVALID_CAPTURE` and the other captures are still checked.
#[cfg(unix)]
#[test]
fn a_named_pipe_does_not_stall_the_run() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    std::fs::write(dir.path().join("schemas/refund.schema.json"), SCHEMA).unwrap();
    std::fs::write(dir.path().join("captures/good.json"), record("good", GOOD)).unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.path().join("captures/pipe.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["check", "--format", "jsonl", "--color", "never"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("verdict check blocked on a named pipe");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let rows: Vec<String> = crate::common::jsonl_verdicts(&String::from_utf8(out.stdout).unwrap())
        .into_iter()
        .map(|v| row(&serde_json::from_value(v).unwrap()))
        .collect();
    assert_eq!(
        rows,
        [
            "captures/good.json good ready ready-for-commit - -",
            "captures/pipe.json captures/pipe.json input reject INVALID_CAPTURE -",
        ]
    );
    let v = verdicts(dir.path());
    assert_eq!(
        v[1].errors[0].message,
        "cannot read captures/pipe.json: not a regular file (a FIFO, socket or device)"
    );
}

/// A capture file whose record sits after prose or inside a fence: the message names where
/// the value starts as the value's place, not as the place the record stops being JSON
/// (its first character, which the message quotes).
#[test]
fn a_record_after_prose_names_where_its_value_starts() {
    let dir = tempfile::tempdir().unwrap();
    let rec = r#"{"id": "x", "output": "{}"}"#;
    for (name, text) in [
        ("prose.json", format!("Here is the record:\n\n{rec}\n")),
        ("fenced.json", format!("```json\n{rec}\n```\n")),
    ] {
        let p = dir.path().join("captures").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::write(dir.path().join("schemas/s.schema.json"), SCHEMA).unwrap();
    let vs = verdicts(dir.path());
    let message = |source: &str| -> String {
        let v = vs.iter().find(|v| v.source == source).unwrap();
        v.errors[0].message.clone()
    };
    assert_eq!(
        message("captures/prose.json"),
        "record is not valid JSON: the JSON value at 3:1 is preceded by prose, with no fence or tag around it: expected the text to start with the value, found \"Here is the record:\""
    );
    assert_eq!(
        message("captures/fenced.json"),
        "record is not valid JSON: the JSON value at 2:1 is wrapped in a markdown code fence: expected the text to start with the value, found \"```json\""
    );
}
