//! Captures that share an id (`DUPLICATE_ID`, docs/verdicts.md): `check` (human and json)
//! flags each copy naming the others, `watch --json` re-reports a capture whose id another
//! file starts or stops sharing, and the id `check` reads before the first verdict
//! (`capture::record_id`) is the id the pipeline gives, on the samples and on hostile
//! records. The TUI's side is in `hostile_engine` (its engine harness).

use crate::common;
use common::watch::WatchJson;

use serde_json::Value;
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};
use verdict::core::capture::{RawRecord, record_id};
use verdict::core::workspace::Workspace;
use verdict::engine::ids::verdict_id;

/// The message of the warning on a capture with id `id` that `others` share.
fn msg(id: &str, others: &str) -> String {
    format!(
        "id `{id}` is also the id of {others}: `verdict feedback {id}` is ambiguous (give each \
         capture its own id, or name it by its source)"
    )
}

#[test]
fn record_id_reads_the_top_level_string_id_of_strict_json_only() {
    assert_eq!(
        record_id(r#"{"id":"a","output":"{}"}"#).as_deref(),
        Some("a")
    );
    assert_eq!(
        record_id(r#"  {"output":"{\"id\":\"x\"}","meta":{"id":"m"},"id":"b"}"#).as_deref(),
        Some("b")
    );
    assert_eq!(
        record_id(r#"{"id":"q\"uote\u00e9"}"#).as_deref(),
        Some("q\"uoteé")
    );
    assert_eq!(record_id(r#"{"id":""}"#).as_deref(), Some(""));
    // not a string, absent, nested only, not an object
    assert_eq!(record_id(r#"{"id":7}"#), None);
    assert_eq!(record_id(r#"{"output":"{}"}"#), None);
    assert_eq!(record_id(r#"{"meta":{"id":"inner"}}"#), None);
    assert_eq!(record_id(r#"["id","a"]"#), None);
    // not strict JSON: the pipeline names such a record by its source
    assert_eq!(record_id(r#"{"id":"a""#), None);
    assert_eq!(record_id(r#"{"id":"a"} x"#), None);
    assert_eq!(record_id(r#"{"id":"a","id":"b"}"#), None);
    assert_eq!(record_id(r#"{"id":"a","meta":{"k":1,"k":2}}"#), None);
    assert_eq!(record_id(r#"{"id":"a","meta":{"n":1e400}}"#), None);
    assert_eq!(record_id(r#"{"id":"a","meta":{"s":"\ud800"}}"#), None);
    let deep = format!(
        r#"{{"id":"a","meta":{}{}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    assert_eq!(record_id(&deep), None);
    let ok_deep = format!(
        r#"{{"id":"a","meta":{}{}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    assert_eq!(record_id(&ok_deep).as_deref(), Some("a"));
    // a repeated key among many (the sorted check) is found too
    let many: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
    let wide = format!(r#"{{"id":"a","meta":{{{},"k7":0}}}}"#, many.join(","));
    assert_eq!(record_id(&wide), None);
}

/// The records whose id `record_id` must read as the pipeline gives it: every capture of
/// the samples, and hostile ones (the cases above, as records of a log and of files).
#[test]
fn record_id_gives_every_verdict_id() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut checked = 0;
    for sample in ["refund", "providers"] {
        let ws = Workspace::open(&root.join(sample)).unwrap();
        for f in ws.capture_files() {
            for raw in ws.read_file(&f) {
                let v = ws.check(&raw).expect("every sample record is a capture");
                assert_eq!(v.id, verdict_id(&raw), "{}", raw.source);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 25 + 107, "every capture of the two samples");
    let deep = format!(
        r#"{{"id":"a","output":{}{}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let hostile = [
        r#"{"id":"a","output":"{}"}"#,
        r#"{"id":"","output":"{}"}"#,
        r#"{"id":7,"output":"{}"}"#,
        r#"{"id":"a","intnet":{}}"#,
        r#"{"id":"a","id":"b","output":"{}"}"#,
        r#"{"id":"a","output":"{}","meta":{"k":1,"k":2}}"#,
        r#"{"id":"a","output":{"n":1e400}}"#,
        r#"{"id":"a","output":"\ud800"}"#,
        r#"{"id":"a","output":"{}"} trailing"#,
        r#"{"output":"{}"}"#,
        "[1]",
        "not json",
        &deep,
        // MCP messages: `FILE#ID`, `FILE#ID/result`, `FILE#ID/error`, or the source
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":"a b","method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":[]}"#,
        r#"{"jsonrpc":"1.0","id":5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t"}}"#,
    ];
    let ws_dir = common::workspace_with(r#"{"type":"object"}"#, &[]);
    let ws = Workspace::open(ws_dir.path()).unwrap();
    for (i, text) in hostile.iter().enumerate() {
        for line in [None, Some(i + 1)] {
            let raw = RawRecord {
                source: verdict::core::record_ref::RecordRef::new("captures/h.jsonl", line),
                text: Ok(text.to_string()),
                kind: Default::default(),
            };
            let v = ws.check(&raw).expect("a capture");
            assert_eq!(v.id, verdict_id(&raw), "{text}");
        }
    }
}

#[test]
fn check_flags_both_copies_naming_each_other_in_human_and_json() {
    let ws = common::workspace_with(
        r#"{"type":"object"}"#,
        &[
            ("a.json", r#"{"id": "dup", "output": "{}"}"#),
            ("b.json", r#"{"id": "dup", "output": "{}"}"#),
            ("solo.json", r#"{"id": "solo", "output": "{}"}"#),
            // an id that is another capture's source: that capture, which has no id, is
            // named by its source, so the two verdicts have the same id
            ("c.json", r#"{"id": "captures/d.json", "output": "{}"}"#),
            ("d.json", r#"{"output": "{}"}"#),
        ],
    );
    let o = common::verdict_in(ws.path(), &["check", "--color", "never", "."]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a warning does not fail a capture"
    );
    let human = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = human.lines().collect();
    let after = |row: &str| {
        let i = lines
            .iter()
            .position(|l| *l == row)
            .unwrap_or_else(|| panic!("{human}"));
        lines[i + 1]
    };
    let line =
        |id: &str, others: &str| format!("      warning[DUPLICATE_ID] /id  {}", msg(id, others));
    assert_eq!(
        after("  ✓ dup  ready-for-commit  captures/a.json"),
        line("dup", "captures/b.json")
    );
    assert_eq!(
        after("  ✓ dup  ready-for-commit  captures/b.json"),
        line("dup", "captures/a.json")
    );
    assert_eq!(
        after("  ✓ captures/d.json  ready-for-commit  captures/c.json"),
        line("captures/d.json", "captures/d.json")
    );
    assert_eq!(
        after("  ✓ captures/d.json  ready-for-commit  captures/d.json"),
        line("captures/d.json", "captures/c.json")
    );
    assert_eq!(human.matches("DUPLICATE_ID").count(), 4, "{human}");

    let o = common::verdict_in(ws.path(), &["check", "--format", "json", "."]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let dups: Vec<(String, Value)> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| {
            let source = v["source"].as_str().unwrap().to_string();
            v["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|w| w["code"] == "DUPLICATE_ID")
                .map(move |w| (source.clone(), w.clone()))
        })
        .collect();
    let warning = |id: &str, others: &str| {
        serde_json::json!({"code": "DUPLICATE_ID", "severity": "warning", "pointer": "/id",
            "message": msg(id, others)})
    };
    assert_eq!(
        dups,
        [
            (
                "captures/a.json".to_string(),
                warning("dup", "captures/b.json")
            ),
            (
                "captures/b.json".to_string(),
                warning("dup", "captures/a.json")
            ),
            (
                "captures/c.json".to_string(),
                warning("captures/d.json", "captures/d.json")
            ),
            (
                "captures/d.json".to_string(),
                warning("captures/d.json", "captures/c.json")
            ),
        ]
    );
}

/// `watch --json` on a workspace, its lines read batch by batch (a batch ends with its
/// summary line).
struct Watch(WatchJson);

impl Watch {
    fn batch(&self, what: &str) -> Vec<Value> {
        let within = Duration::from_secs(20);
        let deadline = Instant::now() + within;
        let mut got = Vec::new();
        loop {
            match self
                .0
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(v) => {
                    let end = v["type"] == "summary";
                    got.push(v);
                    if end {
                        return got;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{what}: no summary in {within:?}: {got:?}")
                }
                Err(e) => panic!("{what}: watch ended: {e}: {got:?}"),
            }
        }
    }
}

/// The verdict lines of a batch: (source, its DUPLICATE_ID message if any), in order.
fn flagged(batch: &[Value]) -> Vec<(String, Option<String>)> {
    batch
        .iter()
        .filter(|l| l["type"] == "verdict")
        .map(|l| {
            let d = &l["data"];
            let w = d["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["code"] == "DUPLICATE_ID")
                .map(|w| w["message"].as_str().unwrap().to_string());
            (d["source"].as_str().unwrap().to_string(), w)
        })
        .collect()
}

#[test]
fn watch_re_reports_a_capture_whose_id_another_file_starts_and_stops_sharing() {
    let ws = common::workspace_with(
        r#"{"type":"object"}"#,
        &[
            ("a.json", r#"{"id": "dup", "output": "{}"}"#),
            (
                "log.jsonl",
                "{\"id\": \"x\", \"output\": \"{}\"}\n{\"id\": \"y\", \"output\": \"{}\"}\n",
            ),
        ],
    );
    let w = Watch(WatchJson::start(ws.path(), &["--debounce-ms", "150"]));
    let first = w.batch("the first pass");
    assert_eq!(
        flagged(&first),
        [
            ("captures/a.json".to_string(), None),
            ("captures/log.jsonl:1".to_string(), None),
            ("captures/log.jsonl:2".to_string(), None),
        ]
    );
    // a second file with the same id: its verdict carries the warning when first
    // reported, and the first one's verdict is reported again, with the warning
    std::fs::write(
        ws.path().join("captures/b.json"),
        r#"{"id": "dup", "output": "[]"}"#,
    )
    .unwrap();
    let batch = w.batch("the second file");
    let mut got = flagged(&batch);
    got.sort();
    assert_eq!(
        got,
        [
            (
                "captures/a.json".to_string(),
                Some(msg("dup", "captures/b.json"))
            ),
            (
                "captures/b.json".to_string(),
                Some(msg("dup", "captures/a.json"))
            ),
        ],
        "{batch:?}"
    );
    let a = batch
        .iter()
        .find(|l| l["data"]["source"] == "captures/a.json")
        .unwrap();
    assert!(a["flipped_from"].is_null(), "a warning is not a flip: {a}");
    assert_eq!(a["data"]["stage"], "ready");
    // a log line taking the id too: both files' verdicts name it
    std::fs::write(
        ws.path().join("captures/log.jsonl"),
        "{\"id\": \"x\", \"output\": \"{}\"}\n{\"id\": \"dup\", \"output\": \"{}\"}\n",
    )
    .unwrap();
    let batch = w.batch("the log line");
    let mut got = flagged(&batch);
    got.sort();
    assert_eq!(
        got,
        [
            (
                "captures/a.json".to_string(),
                Some(msg("dup", "captures/b.json, captures/log.jsonl:2"))
            ),
            (
                "captures/b.json".to_string(),
                Some(msg("dup", "captures/a.json, captures/log.jsonl:2"))
            ),
            (
                "captures/log.jsonl:2".to_string(),
                Some(msg("dup", "captures/a.json, captures/b.json"))
            ),
        ],
        "{batch:?}"
    );
    // the log line back to its own id, and the second file deleted: the first file's
    // verdict is reported without the warning
    std::fs::write(
        ws.path().join("captures/log.jsonl"),
        "{\"id\": \"x\", \"output\": \"{}\"}\n{\"id\": \"y\", \"output\": \"{}\"}\n",
    )
    .unwrap();
    let batch = w.batch("the log line back");
    let mut got = flagged(&batch);
    got.sort();
    assert_eq!(
        got,
        [
            (
                "captures/a.json".to_string(),
                Some(msg("dup", "captures/b.json"))
            ),
            (
                "captures/b.json".to_string(),
                Some(msg("dup", "captures/a.json"))
            ),
            ("captures/log.jsonl:2".to_string(), None),
        ],
        "{batch:?}"
    );
    std::fs::remove_file(ws.path().join("captures/b.json")).unwrap();
    let batch = w.batch("the deletion");
    assert_eq!(
        flagged(&batch),
        [("captures/a.json".to_string(), None)],
        "{batch:?}"
    );
    let removed: Vec<&Value> = batch.iter().filter(|l| l["type"] == "removed").collect();
    assert_eq!(removed.len(), 1, "{batch:?}");
    assert_eq!(removed[0]["data"]["source"], "captures/b.json");
    // and what watch says now is what a fresh check says
    let o = common::verdict_in(ws.path(), &["check", "--format", "jsonl", "."]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("DUPLICATE_ID"));
}

/// A `[[source]]` that forces a format reads a record as another shape, with another id
/// (`docs/config.md#source`): the duplicate-id pre-pass reads it the same way, so a record
/// that would be `c1` unforced shares no id with the capture `c1`.
#[test]
fn the_pre_pass_reads_ids_as_a_source_forces_them() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let line = r#"{"id":"c1","output":"{}"}"#;
    std::fs::create_dir_all(ws.join("schemas")).unwrap();
    std::fs::create_dir_all(ws.join("captures")).unwrap();
    std::fs::write(ws.join("schemas/s.schema.json"), r#"{"type":"object"}"#).unwrap();
    std::fs::write(
        ws.join("verdict.toml"),
        "[[source]]\npath = \"captures/forced.jsonl\"\nformat = \"openai-batch\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("captures/a.jsonl"), format!("{line}\n")).unwrap();
    std::fs::write(ws.join("captures/forced.jsonl"), format!("{line}\n")).unwrap();
    let out = common::verdict(&["check", "--format", "json", ws.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(String, String, usize)> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["id"].as_str().unwrap().to_owned(),
                v["stage"].as_str().unwrap().to_owned(),
                v["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|w| w["code"] == "DUPLICATE_ID")
                    .count(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("c1".to_owned(), "ready".to_owned(), 0),
            ("captures/forced.jsonl:1".to_owned(), "input".to_owned(), 0)
        ]
    );
}
