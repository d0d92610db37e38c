//! Strict readings that decide verdicts: every JSON the program reads is read as the parse
//! stage reads it (SSE `data:` payloads and `.sse` files too; `docs/verdicts.md`,
//! `docs/record-shapes.md#streams`).

use crate::common;
use serde_json::{Value, json};
use verdict::core::verdict::Verdict;

/// The verdicts of a workspace whose contract `c` is `schema`, with `captures` (file name,
/// text), in file order.
fn verdicts_of(schema: &Value, captures: &[(&str, String)]) -> Vec<Verdict> {
    let captures: Vec<(&str, &str)> = captures.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let ws = common::workspace_with(&schema.to_string(), &captures);
    common::verdicts(ws.path())
}

/// One capture record's verdict against the schema `{}`.
fn one(record: &str) -> Verdict {
    let mut v = verdicts_of(&json!({}), &[("a.json", record.to_owned())]);
    assert_eq!(v.len(), 1);
    v.remove(0)
}

/// The verdict's stage, decision, reason, first pointer and first message.
fn outcome(v: &Verdict) -> (String, String, String, Option<String>, String) {
    let first = v.errors.first();
    (
        v.stage.as_str().to_owned(),
        v.decision.as_str().to_owned(),
        v.reason.as_ref().map_or("-", |r| r.as_str()).to_owned(),
        first.and_then(|f| f.pointer.clone()),
        first.map_or(String::new(), |f| f.message.clone()),
    )
}

fn expect(
    v: &Verdict,
    stage: &str,
    decision: &str,
    reason: &str,
    pointer: Option<&str>,
    message: &str,
) {
    assert_eq!(
        outcome(v),
        (
            stage.to_owned(),
            decision.to_owned(),
            reason.to_owned(),
            pointer.map(str::to_owned),
            message.to_owned()
        ),
        "{}",
        v.id
    );
}

/// A finished Anthropic text stream whose `message_delta` is `delta` (raw JSON text).
fn anthropic_sse(delta: &str) -> String {
    [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        delta,
        r#"{"type":"message_stop"}"#,
    ]
    .iter()
    .map(|e| format!("event: x\ndata: {e}\n\n"))
    .collect()
}

const DUP_STOP: &str =
    r#"{"type":"message_delta","delta":{"stop_reason":"refusal","stop_reason":"end_turn"}}"#;

#[test]
fn sse_data_with_a_duplicate_key_is_invalid_capture_as_the_same_events_as_an_array_are() {
    // as a JSON array inside the record: the record's strict reading
    let events: Vec<String> = anthropic_sse(DUP_STOP)
        .lines()
        .filter_map(|l| l.strip_prefix("data: ").map(str::to_owned))
        .collect();
    let array = format!(r#"{{"id":"arr","response":[{}]}}"#, events.join(","));
    let v = one(&array);
    assert_eq!(outcome(&v).2, "INVALID_CAPTURE");
    assert!(
        outcome(&v).4.contains("duplicate key \"stop_reason\""),
        "{}",
        outcome(&v).4
    );
    // as SSE text in `response`
    let record = json!({"id": "sse", "response": anthropic_sse(DUP_STOP)}).to_string();
    expect(
        &one(&record),
        "input",
        "reject",
        "INVALID_CAPTURE",
        None,
        "SSE event at line 14: data is not valid JSON at 14:64: duplicate key \"stop_reason\" at /delta/stop_reason",
    );
    // as a .sse file
    let v = verdicts_of(&json!({}), &[("s.sse", anthropic_sse(DUP_STOP))]);
    expect(
        &v[0],
        "input",
        "reject",
        "INVALID_CAPTURE",
        None,
        "SSE event at line 14: data is not valid JSON at 14:64: duplicate key \"stop_reason\" at /delta/stop_reason",
    );
    // the same stream without the repeat is ready (the test reads what it means to)
    let fine = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#;
    let v = verdicts_of(&json!({}), &[("s.sse", anthropic_sse(fine))]);
    expect(&v[0], "ready", "ready-for-commit", "-", None, "");
    assert_eq!(v[0].id, "msg_1");
}

#[test]
fn sse_data_with_nan_or_a_lone_surrogate_is_invalid_capture() {
    let nan = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":NaN}}"#;
    let record = json!({"id": "nan", "response": anthropic_sse(nan)}).to_string();
    let (stage, _, reason, _, message) = outcome(&one(&record));
    assert_eq!(
        (stage.as_str(), reason.as_str()),
        ("input", "INVALID_CAPTURE")
    );
    assert!(
        message.starts_with("SSE event at line 14: data is not valid JSON at 14:"),
        "{message}"
    );
    // a .sse file whose first event repeats a key: named by its source, not the id inside
    let first = r#"{"type":"message_start","message":{"id":"msg_1","id":"msg_2"}}"#;
    let text = format!(
        "data: {first}\n\n{}",
        anthropic_sse(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#)
    );
    let v = verdicts_of(&json!({}), &[("s.sse", text)]);
    assert_eq!(v[0].id, "captures/s.sse");
    expect(
        &v[0],
        "input",
        "reject",
        "INVALID_CAPTURE",
        None,
        "SSE event at line 1: data is not valid JSON at 1:55: duplicate key \"id\" at /message/id",
    );
}
