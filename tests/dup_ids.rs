//! Captures that share an id (`DUPLICATE_ID`, docs/verdicts.md): `check` (human and json)
//! flags each copy naming the others, `watch --json` re-reports a capture whose id another
//! file starts or stops sharing, and the id the pipeline gives a record
//! (`Workspace::record_id`) is always one of the candidate ids the pre-pass reads from its
//! text (`ids::candidates`), on the samples and on hostile records of every shape. The
//! TUI's side is in `hostile_engine` (its engine harness).

use crate::common;
use common::watch::WatchJson;

use serde_json::Value;
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};
use verdict::core::capture::RawRecord;
use verdict::core::workspace::Workspace;
use verdict::engine::ids::{candidates, candidates_in, is_candidate, is_candidate_in};

/// The message of the warning on a capture with id `id` that `others` share.
fn msg(id: &str, others: &str) -> String {
    format!(
        "id `{id}` is also the id of {others}: `verdict feedback {id}` is ambiguous (give each \
         capture its own id, or name it by its source)"
    )
}

/// The candidate ids `ids::candidates` reads from `text` in the file `file`, sorted.
fn cands(text: &str, file: &str) -> Vec<String> {
    let mut out = Vec::new();
    candidates(text.as_bytes(), file, &mut |c| {
        out.push(String::from_utf8_lossy(c).into_owned())
    });
    out.sort();
    out
}

#[test]
fn candidates_are_every_id_member_decoded_at_any_depth() {
    let f = "captures/l.jsonl";
    // top-level and nested, in text order; a member name inside a string value is not one
    assert_eq!(
        cands(
            r#"{"id":"a","output":"{\"id\":\"x\", \"custom_id\": \"y\"}","meta":{"id":"m"}}"#,
            f
        ),
        ["a", "m"]
    );
    // escapes decoded, in values and in member names; whitespace around the colon
    assert_eq!(
        cands(
            r#"{"id" :  "q\"uote\u00e9\\\/\n", "\u0069d": "named", "k\"ey": "no"}"#,
            f
        ),
        ["named", "q\"uoteé\\/\n"]
    );
    assert_eq!(
        cands(r#"{"id":"\ud83d\ude00","key":"\ud800x"}"#, f),
        ["\\ud800x", "😀"],
        "a surrogate pair is one character; a lone surrogate is kept as written"
    );
    // every id member of every shape: an OpenAI batch line (its `id`, `custom_id` and the
    // body's id), a Gemini batch line, a Bedrock batch line, a Gemini response, a Bedrock
    // Converse response, an Anthropic stream
    assert_eq!(
        cands(
            r#"{"id":"batch_req_1","custom_id":"req-1","response":{"status_code":200,"body":{"id":"chatcmpl-1"}}}"#,
            f
        ),
        ["batch_req_1", "chatcmpl-1", "req-1"]
    );
    assert_eq!(
        cands(
            r#"{"key":"k1","recordId":"r1","responseId":"g1","ResponseMetadata":{"RequestId":"b1"}}"#,
            f
        ),
        ["b1", "g1", "k1", "r1"]
    );
    assert_eq!(
        cands(
            r#"[{"type":"message_start","message":{"id":"msg_1","content":[]}},{"type":"message_stop"}]"#,
            f
        ),
        ["msg_1"]
    );
    // values that are not strings name nothing (outside an MCP message), nor do keys that
    // are not id members, nor strings that are not member names
    assert_eq!(
        cands(
            r#"{"id":7,"custom_id":null,"ids":"x","name":"id","list":["id","key"]}"#,
            f
        ),
        Vec::<String>::new()
    );
    // not JSON: whatever members it seems to have (harmless: such a record's id is its
    // source); a string cut by a line break resynchronises on the next line, as an SSE
    // file's comment lines need
    assert_eq!(cands(r#"{"id":"a""#, f), ["a"]);
    assert_eq!(cands("not json", f), Vec::<String>::new());
    assert_eq!(
        cands(
            ": a \"stray quote\n: another \"\ndata: {\"response\":{\"id\":\"resp_1\"}}\n",
            f
        ),
        ["resp_1"]
    );
    assert_eq!(cands("{\"id\":\"cut\\", f), Vec::<String>::new());
}

#[test]
fn candidates_of_an_mcp_message_are_its_file_and_json_rpc_id() {
    let f = "captures/session.jsonl";
    let forms =
        |id: &str| ["", "/error", "/result"].map(|t| format!("captures/session.jsonl#{id}{t}"));
    assert_eq!(
        cands(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#, f),
        forms("7")
    );
    let mut want = vec!["abc".to_string()];
    want.extend(forms("abc"));
    assert_eq!(
        cands(r#"{"jsonrpc":"2.0","id":"abc","result":{}}"#, f),
        want
    );
    // a number as written and as JSON reads it
    let mut want = forms("100.0").to_vec();
    want.extend(forms("1e2"));
    assert_eq!(cands(r#"{"id":1e2,"jsonrpc":"2.0","error":{}}"#, f), want);
}

/// Workspaces of every sample folder (`samples/*` holding `verdict.toml`).
fn sample_workspaces() -> Vec<(String, Workspace)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut out: Vec<(String, Workspace)> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("verdict.toml").is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let ws = Workspace::open(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, ws)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The invariant the duplicate-id pre-pass rests on: the id the pipeline gives a record
/// (`Workspace::record_id`, the verdict's id) is one of the candidates the byte scan reads
/// from its text, or its source; on every capture of every sample workspace, and on
/// hostile records of every shape.
#[test]
fn every_exact_id_is_a_candidate() {
    let mut counts = Vec::new();
    for (name, ws) in sample_workspaces() {
        let mut n = 0;
        for f in ws.capture_files() {
            for raw in ws.read_file(&f) {
                let id = ws.record_id(&raw);
                // an MCP message that is no capture (`initialize`, `tools/list`) has no id
                let Some(v) = ws.check(&raw) else { continue };
                assert_eq!(v.id, id, "{}", raw.source);
                assert!(is_candidate(&id, &raw), "{name}: {id:?} of {}", raw.source);
                assert!(
                    is_candidate_in(&ws, &id, &raw),
                    "{name}: {id:?} of {}",
                    raw.source
                );
                n += 1;
            }
        }
        counts.push((name, n));
    }
    for (name, n) in [("logs", 36), ("providers", 107), ("refund", 25)] {
        assert!(
            counts.contains(&(name.to_string(), n)),
            "every capture of samples/{name}: {counts:?}"
        );
    }
    let deep = format!(
        r#"{{"id":"a","output":{}{}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let chat = r#"{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"a\": 4}"}, "finish_reason": "stop"}]}"#;
    let batch = format!(
        r#"{{"id": "batch_req_1", "custom_id": "req-\u00e9\"1", "response": {{"status_code": 200, "request_id": "r1", "body": {chat}}}, "error": null}}"#
    );
    // (record, the id the pipeline gives it; None: its source)
    let hostile: Vec<(String, Option<&str>)> = vec![
        (r#"{"id":"a","output":"{}"}"#.into(), Some("a")),
        (r#"{"id":"","output":"{}"}"#.into(), Some("")),
        (r#"{"id":7,"output":"{}"}"#.into(), None),
        (r#"{"id":"a","intnet":{}}"#.into(), Some("a")),
        (r#"{"id":"a","id":"b","output":"{}"}"#.into(), None),
        (r#"{"id":"a","output":"{}","meta":{"k":1,"k":2}}"#.into(), None),
        (r#"{"id":"a","output":{"n":1e400}}"#.into(), None),
        (r#"{"id":"a","output":"\ud800"}"#.into(), None),
        (r#"{"id":"a","output":"{}"} trailing"#.into(), None),
        (r#"{"output":"{}"}"#.into(), None),
        ("[1]".into(), None),
        ("not json".into(), None),
        (deep.clone(), None),
        // escapes, in the id and in its member name; a key inside a string value; nested ids
        (r#"{"id":"q\"uote\u00e9","output":"{}"}"#.into(), Some("q\"uoteé")),
        (r#"{"\u0069d":"esc","output":"{}"}"#.into(), Some("esc")),
        (
            r#"{"output":"{\"id\": \"inner\"}","meta":{"id":"m","custom_id":"c"}}"#.into(),
            None,
        ),
        // a batch line: its custom_id, not its `id` nor the body's; broken ones keep it
        (batch.clone(), Some("req-é\"1")),
        (
            r#"{"id": "batch_req_2", "custom_id": "both-null", "response": null, "error": null}"#
                .into(),
            Some("both-null"),
        ),
        (
            r#"{"id": "batch_req_3", "custom_id": "", "response": null, "error": null}"#.into(),
            None,
        ),
        (
            r#"{"custom_id": "anth-1", "result": {"type": "succeeded", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "{}"}], "stop_reason": "end_turn"}}}"#.into(),
            Some("anth-1"),
        ),
        // a bare chat completion, an Anthropic stream array, a Bedrock response, a Gemini
        // response, an Ollama body (no id: its source)
        (chat.into(), Some("chatcmpl-1")),
        (
            r#"[{"type":"message_start","message":{"id":"msg_s","type":"message","role":"assistant","content":[],"model":"claude"}},{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{}"}},{"type":"message_delta","delta":{"stop_reason":"end_turn"}},{"type":"message_stop"}]"#.into(),
            Some("msg_s"),
        ),
        (
            r#"{"output": {"message": {"role": "assistant", "content": [{"text": "{}"}]}}, "stopReason": "end_turn", "ResponseMetadata": {"RequestId": "5d7c-\u00e9", "HTTPStatusCode": 200}}"#.into(),
            Some("5d7c-é"),
        ),
        (
            r#"{"candidates": [{"content": {"parts": [{"text": "{}"}], "role": "model"}, "finishReason": "STOP"}], "responseId": "g-1"}"#.into(),
            Some("g-1"),
        ),
        (
            r#"{"model": "llama3", "message": {"role": "assistant", "content": "{}"}, "done": true}"#.into(),
            None,
        ),
    ];
    let ws_dir = common::workspace_with(r#"{"type":"object"}"#, &[]);
    let ws = Workspace::open(ws_dir.path()).unwrap();
    for (i, (text, want)) in hostile.iter().enumerate() {
        for line in [None, Some(i + 1)] {
            let raw = RawRecord {
                source: verdict::core::record_ref::RecordRef::new("captures/h.jsonl", line),
                text: Ok(text.to_string()),
                kind: Default::default(),
            };
            let id = ws.record_id(&raw);
            let want = want.map_or_else(|| raw.source.to_string(), str::to_string);
            assert_eq!(id, want, "{text}");
            assert_eq!(ws.check(&raw).expect("a capture").id, id, "{text}");
            assert!(is_candidate(&id, &raw), "{id:?} of {text}");
            assert!(is_candidate_in(&ws, &id, &raw), "{id:?} of {text}");
        }
    }
    // MCP messages (`FILE#ID`, `FILE#ID/result`, `FILE#ID/error`, or the source) and an
    // `.sse` file (its first event's response id): the pipeline's id is a candidate
    let mcp = [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":"a b","method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":[]}"#,
        r#"{"jsonrpc":"1.0","id":5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1e2,"method":"tools/call","params":{"name":"t"}}"#,
    ];
    let sse = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_\\u00e9\",\"status\":\"in_progress\"}}\n\n";
    let records = mcp
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (
                t.to_string(),
                Some(i + 1),
                verdict::core::capture::RecordKind::Json,
            )
        })
        .chain([(
            sse.to_string(),
            None,
            verdict::core::capture::RecordKind::Sse,
        )]);
    let mut ids = Vec::new();
    for (text, line, kind) in records {
        let raw = RawRecord {
            source: verdict::core::record_ref::RecordRef::new("captures/h.jsonl", line),
            text: Ok(text.clone()),
            kind,
        };
        let id = ws.record_id(&raw);
        assert_eq!(ws.check(&raw).expect("a capture").id, id, "{text}");
        assert!(is_candidate(&id, &raw), "{id:?} of {text}");
        ids.push(id);
    }
    assert_eq!(ids.first().map(String::as_str), Some("captures/h.jsonl#5"));
    assert_eq!(ids.last().map(String::as_str), Some("resp_é"));
    // a record that could not be read is named by its source, which is a candidate
    let raw = RawRecord {
        source: verdict::core::record_ref::RecordRef::new("captures/h.jsonl", Some(3)),
        text: Err(verdict::core::verdict::Finding::new(
            verdict::core::verdict::Stage::Input,
            verdict::core::verdict::Reason::INVALID_CAPTURE,
            "unreadable",
        )),
        kind: Default::default(),
    };
    assert_eq!(ws.record_id(&raw), "captures/h.jsonl:3");
    assert!(is_candidate("captures/h.jsonl:3", &raw));
    assert!(!is_candidate("x", &raw));
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

impl Watch {
    /// The DUPLICATE_ID warnings (source, message) of the first pass, sorted by source.
    fn first_pass_warnings(&self) -> Vec<(String, String)> {
        let mut got: Vec<(String, String)> = flagged(&self.batch("the first pass"))
            .into_iter()
            .filter_map(|(s, m)| Some((s, m?)))
            .collect();
        got.sort();
        got
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

/// An OpenAI Batch output line with `id` `line_id` and `custom_id` `custom_id`, whose
/// body passes the `{"type":"object"}` contract.
pub fn batch_line(line_id: &str, custom_id: &str) -> String {
    format!(
        r#"{{"id": "{line_id}", "custom_id": "{custom_id}", "response": {{"status_code": 200, "request_id": "r_{line_id}", "body": {{"id": "chatcmpl-{line_id}", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{{"index": 0, "message": {{"role": "assistant", "content": "{{}}"}}, "finish_reason": "stop"}}]}}}}, "error": null}}"#
    )
}

/// Two OpenAI batch output files: `req-1` is the `custom_id` of a line of each; the line
/// id `req_error` is shared too (OpenAI gives failed requests one), which is no capture id.
pub fn two_batch_files() -> (String, String) {
    let a = format!(
        "{}\n{}\n",
        batch_line("batch_req_a1", "req-1"),
        batch_line("req_error", "req-2")
    );
    let b = format!(
        "{}\n{}\n",
        batch_line("req_error", "req-3"),
        batch_line("batch_req_b2", "req-1")
    );
    (a, b)
}

/// The DUPLICATE_ID warnings of `check --format json` by source.
fn check_dups(root: &Path) -> Vec<(String, String)> {
    let o = common::verdict_in(root, &["check", "--format", "json", "."]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["verdicts"]
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
                .map(move |w| (source.clone(), w["message"].as_str().unwrap().to_string()))
        })
        .collect()
}

/// Two OpenAI batch files with a `custom_id` in common: the two lines are flagged, by
/// their `custom_id` (the verdict's id), in check and in watch --json alike; lines that
/// only share the line `id` (OpenAI gives failed requests one) or a body id are not.
#[test]
fn batch_lines_sharing_a_custom_id_are_flagged_by_it_in_check_and_watch() {
    let (a, b) = two_batch_files();
    let ws = common::workspace_with(r#"{"type":"object"}"#, &[("a.jsonl", &a), ("b.jsonl", &b)]);
    let want = vec![
        (
            "captures/a.jsonl:1".to_string(),
            msg("req-1", "captures/b.jsonl:2"),
        ),
        (
            "captures/b.jsonl:2".to_string(),
            msg("req-1", "captures/a.jsonl:1"),
        ),
    ];
    assert_eq!(check_dups(ws.path()), want);

    // watch: the first pass, then a third file taking `req-2` (and a line id `req_error`)
    let w = Watch(WatchJson::start(ws.path(), &["--debounce-ms", "150"]));
    assert_eq!(w.first_pass_warnings(), want);
    std::fs::write(
        ws.path().join("captures/c.jsonl"),
        format!("{}\n", batch_line("req_error", "req-2")),
    )
    .unwrap();
    let batch = w.batch("the third file");
    let mut got = flagged(&batch);
    got.sort();
    assert_eq!(
        got,
        [
            (
                "captures/a.jsonl:2".to_string(),
                Some(msg("req-2", "captures/c.jsonl:1"))
            ),
            (
                "captures/c.jsonl:1".to_string(),
                Some(msg("req-2", "captures/a.jsonl:2"))
            ),
        ],
        "{batch:?}"
    );
    let mut want = want;
    want.push((
        "captures/a.jsonl:2".to_string(),
        msg("req-2", "captures/c.jsonl:1"),
    ));
    want.push((
        "captures/c.jsonl:1".to_string(),
        msg("req-2", "captures/a.jsonl:2"),
    ));
    want.sort();
    assert_eq!(check_dups(ws.path()), want);
}

/// A compressed log is read as `check` reads it (inflated): a `custom_id` shared by a line
/// of a `.jsonl.gz` log and one of a `.jsonl.zst` log is flagged on both, and a line of
/// the `.gz` log sharing it with a plain log too.
#[test]
fn ids_in_compressed_logs_are_compared_inflated() {
    use std::io::Write as _;
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(
            format!(
                "{}\n{}\n",
                batch_line("b1", "req-1"),
                batch_line("b2", "req-2")
            )
            .as_bytes(),
        )
        .unwrap();
        e.finish().unwrap()
    };
    let zst = zstd::encode_all(format!("{}\n", batch_line("b3", "req-1")).as_bytes(), 3).unwrap();
    let ws = common::workspace_with(
        r#"{"type":"object"}"#,
        &[("plain.jsonl", &format!("{}\n", batch_line("b4", "req-2")))],
    );
    std::fs::write(ws.path().join("captures/a.jsonl.gz"), gz).unwrap();
    std::fs::write(ws.path().join("captures/b.jsonl.zst"), zst).unwrap();
    assert_eq!(
        check_dups(ws.path()),
        [
            (
                "captures/a.jsonl.gz:1".to_string(),
                msg("req-1", "captures/b.jsonl.zst:1")
            ),
            (
                "captures/a.jsonl.gz:2".to_string(),
                msg("req-2", "captures/plain.jsonl:1")
            ),
            (
                "captures/b.jsonl.zst:1".to_string(),
                msg("req-1", "captures/a.jsonl.gz:1")
            ),
            (
                "captures/plain.jsonl:1".to_string(),
                msg("req-2", "captures/a.jsonl.gz:2")
            ),
        ]
    );
}

/// A record whose id is the source of an id-less log line (`captures/l.jsonl:2`) shares it
/// with that line: found by the pre-pass in one log, and by the live session when another
/// file takes that id later (the source is compared, not only the candidates' strings).
#[test]
fn an_id_spelling_an_id_less_lines_source_is_shared_with_it() {
    let log = "{\"id\": \"captures/l.jsonl:2\", \"output\": \"{}\"}\n{\"output\": \"{}\"}\n{\"output\": \"{}\"}\n";
    let ws = common::workspace_with(r#"{"type":"object"}"#, &[("l.jsonl", log)]);
    let want = vec![
        (
            "captures/l.jsonl:1".to_string(),
            msg("captures/l.jsonl:2", "captures/l.jsonl:2"),
        ),
        (
            "captures/l.jsonl:2".to_string(),
            msg("captures/l.jsonl:2", "captures/l.jsonl:1"),
        ),
    ];
    assert_eq!(check_dups(ws.path()), want);
    let w = Watch(WatchJson::start(ws.path(), &["--debounce-ms", "150"]));
    assert_eq!(w.first_pass_warnings(), want);
    std::fs::write(
        ws.path().join("captures/m.json"),
        r#"{"id": "captures/l.jsonl:3", "output": "{}"}"#,
    )
    .unwrap();
    let mut got = flagged(&w.batch("m.json names line 3"));
    got.sort();
    assert_eq!(
        got,
        [
            (
                "captures/l.jsonl:3".to_string(),
                Some(msg("captures/l.jsonl:3", "captures/m.json"))
            ),
            (
                "captures/m.json".to_string(),
                Some(msg("captures/l.jsonl:3", "captures/l.jsonl:3"))
            ),
        ]
    );
}

/// An OTLP/JSON record read as the shape it has is named by its LLM and tool spans only:
/// its candidates in such a file are their `TRACEID/SPANID`s, not the `key` of every
/// attribute (shared by every OTLP record of a workspace, they would make each a suspect to
/// parse); where a `[[source]]` may force another shape, and for an MCP message holding
/// `resourceSpans`, every id member is still a candidate.
#[test]
fn otlp_records_are_named_by_their_spans_only() {
    let f = "captures/t.jsonl";
    let all = |text: &str, shaped: bool| {
        let mut out = Vec::new();
        candidates_in(text.as_bytes(), f, shaped, &mut |c| {
            out.push(String::from_utf8_lossy(c).into_owned())
        });
        out
    };
    let otlp = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeSpans":[{"spans":[{"traceId":"t1","spanId":"s1","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]},{"traceId":"t1","spanId":"h1","attributes":[{"key":"http.request.method","value":{"stringValue":"GET"}}]}]}]}]}"#;
    // an exporter's line is read by the pre-pass's byte scan: every span's id is a
    // candidate (a superset: the http span's too); any other line by the walk, which gives
    // the LLM and tool spans' only (here: the line with a `\u` escape)
    assert_eq!(all(otlp, true), ["t1/s1", "t1/h1"]);
    let escaped = otlp.replace(r#""svc""#, r#""sv\u0063""#);
    assert_eq!(all(&escaped, true), ["t1/s1"]);
    assert_eq!(
        all(otlp, false),
        [
            "t1/s1",
            "t1/h1",
            "service.name",
            "gen_ai.operation.name",
            "http.request.method"
        ]
    );
    assert_eq!(
        all(&escaped, false),
        [
            "t1/s1",
            "service.name",
            "gen_ai.operation.name",
            "http.request.method"
        ]
    );
    // broken (a capture span without its spanId): named by its source, no candidate
    let broken = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t1","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]}]}]}],"id":"x"}"#;
    assert!(all(broken, true).is_empty());
    // an MCP message is read as MCP whatever else it holds
    let mcp = r#"{"jsonrpc":"2.0","id":"r1","result":{},"resourceSpans":[]}"#;
    assert_eq!(all(mcp, true), all(mcp, false));
    assert!(all(mcp, true).contains(&"r1".to_owned()));
}

/// The pre-pass reads a log in blocks of at most 4,096 lines or 4 MiB
/// (`core::prescan::BLOCK_BYTES`): two records with one id in different blocks of a log of
/// long lines (3 MB each) are both flagged, and a record between them that is unique is not.
#[test]
fn an_id_shared_across_the_pre_pass_blocks_of_long_lines_is_flagged() {
    let pad = "x".repeat(3_000_000);
    let line = |id: &str| format!(r#"{{"id":"{id}","output":"{{}}","meta":{{"pad":"{pad}"}}}}"#);
    let log = [line("same"), line("other"), line("third"), line("same")].join("\n") + "\n";
    let ws = common::workspace_with(r#"{"type":"object"}"#, &[("long.jsonl", &log)]);
    assert_eq!(
        check_dups(ws.path()),
        [
            (
                "captures/long.jsonl:1".to_string(),
                msg("same", "captures/long.jsonl:4")
            ),
            (
                "captures/long.jsonl:4".to_string(),
                msg("same", "captures/long.jsonl:1")
            ),
        ]
    );
}

/// A trace run that is not an LLM call (a LangSmith `chain` run) holds no capture, so no
/// id: an LLM run with the same `id` is not flagged, by `check` nor by `watch --json`'s
/// first pass, whose last word on it is the same (it used to flag it, then take the
/// warning back).
#[test]
fn a_record_that_holds_no_capture_shares_no_id() {
    let llm = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces/langsmith/runs.jsonl"),
    )
    .unwrap()
    .lines()
    .next()
    .unwrap()
    .to_string();
    let id: Value = serde_json::from_str(&llm).unwrap();
    let id = id["id"].as_str().unwrap().to_string();
    let chain = serde_json::json!({"id": id, "name": "RunnableSequence", "run_type": "chain",
        "inputs": {}, "outputs": {}, "trace_id": "0c1d2e3f-aaaa-4bbb-8ccc-1d2e3f4a5b6c"});
    let ws = common::workspace_with(
        r#"{"type":"object"}"#,
        &[("runs.jsonl", &format!("{llm}\n{chain}\n"))],
    );
    assert_eq!(check_dups(ws.path()), Vec::<(String, String)>::new());
    let w = Watch(WatchJson::start(ws.path(), &["--debounce-ms", "150"]));
    let first = w.batch("the first pass");
    assert_eq!(
        flagged(&first),
        vec![("captures/runs.jsonl:1".to_string(), None)],
        "{first:?}"
    );
}
