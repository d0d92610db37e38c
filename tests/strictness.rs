//! Strict readings that decide verdicts: every JSON the program reads is read as the parse
//! stage reads it (SSE `data:` payloads and `.sse` files too), a stream ends at its first
//! terminal event, a body that mixes providers' signals is decided by the most severe one,
//! and numbers are compared by their exact value (`docs/verdicts.md`,
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

/// A capture record whose `response` is the stream `events` (a JSON array).
fn stream(events: &[Value]) -> String {
    json!({"id": "s", "response": events}).to_string()
}

fn ended(i: usize, label: &str, end: usize, what: &str) -> String {
    format!(
        "stream continues after its end: event {i} ({label}) comes after the terminal event {end} ({what})"
    )
}

fn responses(kind: &str, status: &str, extra: Value) -> Value {
    let mut r = json!({"id": "resp_1", "object": "response", "status": status, "model": "gpt-4.1",
                       "output": [{"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": "{}"}]}]});
    if let (Some(r), Some(e)) = (r.as_object_mut(), extra.as_object()) {
        r.extend(e.clone());
    }
    json!({"type": kind, "response": r})
}

fn chat(delta: Value, finish: Value) -> Value {
    json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4.1",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn gemini(text: &str, finish: Option<&str>) -> Value {
    let mut c = json!({"content": {"role": "model", "parts": [{"text": text}]}});
    if let Some(f) = finish {
        c["finishReason"] = json!(f);
    }
    json!({"candidates": [c], "modelVersion": "gemini-2.5-flash"})
}

fn anthropic(stop: &str) -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {"input_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "{}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ]
}

fn bedrock() -> Vec<Value> {
    vec![
        json!({"messageStart": {"role": "assistant"}}),
        json!({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "{}"}}}),
        json!({"contentBlockStop": {"contentBlockIndex": 0}}),
        json!({"messageStop": {"stopReason": "end_turn"}}),
        json!({"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}}}),
    ]
}

#[test]
fn events_after_the_terminal_event_are_invalid_capture_naming_the_event() {
    let invalid = |events: Vec<Value>, message: String| {
        expect(
            &one(&stream(&events)),
            "input",
            "reject",
            "INVALID_CAPTURE",
            None,
            &message,
        );
    };
    // Responses: incomplete at the token limit, then a snapshot that says completed
    invalid(
        vec![
            responses("response.created", "in_progress", json!({})),
            responses(
                "response.incomplete",
                "incomplete",
                json!({"incomplete_details": {"reason": "max_output_tokens"}}),
            ),
            responses("response.in_progress", "completed", json!({})),
        ],
        ended(2, "type \"response.in_progress\"", 1, "response.incomplete"),
    );
    // Responses: failed, then created again
    invalid(
        vec![
            responses(
                "response.failed",
                "failed",
                json!({"error": {"code": "server_error", "message": "boom"}}),
            ),
            responses("response.created", "completed", json!({})),
        ],
        ended(1, "type \"response.created\"", 0, "response.failed"),
    );
    // Chat: length, then stop
    invalid(
        vec![
            chat(json!({"role": "assistant", "content": "{"}), json!(null)),
            chat(json!({}), json!("length")),
            chat(json!({"content": "}"}), json!("stop")),
        ],
        ended(
            2,
            "object \"chat.completion.chunk\"",
            1,
            "finish_reason \"length\"",
        ),
    );
    // Chat: text after the finishing chunk
    invalid(
        vec![
            chat(json!({"role": "assistant", "content": "{}"}), json!("stop")),
            chat(json!({"content": " more"}), json!(null)),
        ],
        ended(
            1,
            "object \"chat.completion.chunk\"",
            0,
            "finish_reason \"stop\"",
        ),
    );
    // an OpenAI-compatible server's stream (OpenRouter's `provider` marker)
    let mut first = chat(
        json!({"role": "assistant", "content": "{}"}),
        json!("length"),
    );
    first["provider"] = json!("Mistral");
    invalid(
        vec![first, chat(json!({}), json!("stop"))],
        ended(
            1,
            "object \"chat.completion.chunk\"",
            0,
            "finish_reason \"length\"",
        ),
    );
    // Gemini: MAX_TOKENS or SAFETY, then STOP
    for first in ["MAX_TOKENS", "SAFETY"] {
        invalid(
            vec![gemini("{", Some(first)), gemini("}", Some("STOP"))],
            ended(1, "a chunk", 0, &format!("finishReason \"{first}\"")),
        );
    }
    // Anthropic: max_tokens or refusal, then end_turn
    for first in ["max_tokens", "refusal"] {
        let mut ev = anthropic(first);
        ev.insert(
            5,
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        );
        invalid(
            ev,
            ended(
                5,
                "type \"message_delta\"",
                4,
                &format!("message_delta with stop_reason \"{first}\""),
            ),
        );
    }
    // Anthropic: text after message_stop
    let mut ev = anthropic("end_turn");
    ev.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}));
    invalid(
        ev,
        ended(
            6,
            "type \"content_block_delta\"",
            4,
            "message_delta with stop_reason \"end_turn\"",
        ),
    );
    // Bedrock: more text after messageStop
    let mut ev = bedrock();
    ev.push(json!({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "x"}}}));
    invalid(ev, ended(5, "contentBlockDelta", 3, "messageStop"));
    // Cohere and Ollama
    invalid(
        vec![
            json!({"type": "message-start", "id": "c"}),
            json!({"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "{}"}}}}),
            json!({"type": "message-end", "delta": {"finish_reason": "MAX_TOKENS"}}),
            json!({"type": "message-end", "delta": {"finish_reason": "COMPLETE"}}),
        ],
        ended(3, "type \"message-end\"", 2, "message-end"),
    );
    invalid(
        vec![
            json!({"model": "llama3", "message": {"role": "assistant", "content": "{}"}, "done": true, "done_reason": "length"}),
            json!({"model": "llama3", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"}),
        ],
        ended(1, "a chunk", 0, "done: true"),
    );
}

#[test]
fn the_providers_trailers_after_the_terminal_event_are_kept() {
    let ready = |events: Vec<Value>| {
        let v = one(&stream(&events));
        expect(&v, "ready", "ready-for-commit", "-", None, "");
        v
    };
    // Chat: the usage chunk (empty choices) after the finish chunk
    let v = ready(vec![
        chat(json!({"role": "assistant", "content": "{}"}), json!("stop")),
        json!({"id": "c1", "object": "chat.completion.chunk", "choices": [],
               "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}),
    ]);
    assert_eq!(
        v.meta
            .as_ref()
            .and_then(|m| m.get("usage"))
            .map(|u| u["total_tokens"].clone()),
        Some(json!(3))
    );
    // Anthropic: message_delta then message_stop (and a ping)
    let mut ev = anthropic("end_turn");
    ev.insert(5, json!({"type": "ping"}));
    ready(ev);
    // Gemini: a last chunk with usageMetadata only
    ready(vec![
        gemini("{}", Some("STOP")),
        json!({"usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2, "totalTokenCount": 3}}),
    ]);
    // Bedrock: metadata after messageStop
    ready(bedrock());
}

#[test]
fn numbers_are_compared_by_their_exact_value() {
    let schema = json!({"type": "object"});
    let run = |record: Value| {
        let mut v = verdicts_of(&schema, &[("a.json", record.to_string())]);
        v.remove(0)
    };
    // a proposal number with more precision than a double holds: never equal to the intent
    let v = run(
        json!({"id": "p", "output": "{\"n\": 9007199254740993.0}", "intent": {"n": 9007199254740992u64}}),
    );
    expect(
        &v,
        "parse",
        "regenerate",
        "NON_STANDARD_NUMBER",
        None,
        "number \"9007199254740993.0\" has more precision than an IEEE 754 double holds: it would read as 9007199254740992 (expected an integer of 64 bits, or a number a double holds exactly)",
    );
    let v = run(
        json!({"id": "q", "output": "{\"n\": 123456789012345678901234567891}", "intent": {"n": 1}}),
    );
    expect(
        &v,
        "parse",
        "regenerate",
        "NON_STANDARD_NUMBER",
        None,
        "number \"123456789012345678901234567891\" has more precision than an IEEE 754 double holds: it would read as 1.2345678901234568e29 (expected an integer of 64 bits, or a number a double holds exactly)",
    );
    // the same number in the record's intent: the record is not read
    let record =
        r#"{"id": "r", "output": "{\"n\": 1}", "intent": {"n": 123456789012345678901234567890}}"#;
    let mut v = verdicts_of(&schema, &[("a.json", record.to_owned())]);
    expect(
        &v.remove(0),
        "input",
        "reject",
        "INVALID_CAPTURE",
        None,
        "record is not valid JSON at 1:53: number \"123456789012345678901234567890\" has more precision than an IEEE 754 double holds: it would read as 1.2345678901234568e29 (expected an integer of 64 bits, or a number a double holds exactly)",
    );
    // 64-bit integers beyond 2^53 are exact, against a fraction too
    let v = run(
        json!({"id": "s", "output": "{\"n\": 9007199254740992.0}", "intent": {"n": 9007199254740993u64}}),
    );
    expect(
        &v,
        "business",
        "recheck",
        "INTENT_MISMATCH",
        Some("/n"),
        "proposal 9007199254740992.0, confirmed intent 9007199254740993",
    );
    let v = run(
        json!({"id": "t", "output": "{\"n\": 9007199254740993}", "intent": {"n": 9007199254740993u64}}),
    );
    expect(&v, "ready", "ready-for-commit", "-", None, "");
}

#[test]
fn underflow_is_non_standard_like_overflow() {
    let schema =
        json!({"type": "object", "properties": {"x": {"type": "number", "exclusiveMinimum": 0}}});
    let run = |output: &str| {
        let mut v = verdicts_of(
            &schema,
            &[("a.json", json!({"id": "u", "output": output}).to_string())],
        );
        v.remove(0)
    };
    expect(
        &run("{\"x\": 1e-400}"),
        "parse",
        "regenerate",
        "NON_STANDARD_NUMBER",
        None,
        "number \"1e-400\" underflows an IEEE 754 double: it is not zero but would read as 0 (expected a number a double holds, or 0)",
    );
    expect(
        &run("{\"x\": 1e400}"),
        "parse",
        "regenerate",
        "NON_STANDARD_NUMBER",
        None,
        "number \"1e400\" is outside the range of an IEEE 754 double: expected a finite number",
    );
    expect(
        &run("{\"x\": 5e-324}"),
        "ready",
        "ready-for-commit",
        "-",
        None,
        "",
    );
}

#[test]
fn const_and_enum_compare_exact_values() {
    // a schema whose const a double cannot hold does not load
    let schema = r#"{"properties": {"n": {"const": 123456789012345678901234567890}}}"#;
    let ws = common::workspace_with(
        schema,
        &[("a.json", r#"{"id": "a", "output": "{\"n\": 1}"}"#)],
    );
    let v = common::verdicts(ws.path());
    let (stage, decision, reason, _, message) = outcome(&v[0]);
    assert_eq!(
        (stage.as_str(), decision.as_str(), reason.as_str()),
        ("input", "reject", "CONTRACT_ERROR")
    );
    assert!(message.contains("number \"123456789012345678901234567890\" has more precision than an IEEE 754 double holds"), "{message}");
    // 64-bit integers beyond 2^53 against doubles
    for (schema, output, ok) in [
        (
            json!({"properties": {"n": {"const": 9007199254740993u64}}}),
            "{\"n\": 9007199254740992.0}",
            false,
        ),
        (
            json!({"properties": {"n": {"const": 9007199254740993u64}}}),
            "{\"n\": 9007199254740993}",
            true,
        ),
        (
            json!({"properties": {"n": {"enum": [9007199254740993u64]}}}),
            "{\"n\": 9007199254740992}",
            false,
        ),
        (
            json!({"properties": {"n": {"enum": [9007199254740992.0]}}}),
            "{\"n\": 9007199254740993}",
            false,
        ),
        (
            json!({"properties": {"n": {"const": 1.0}}}),
            "{\"n\": 1}",
            true,
        ),
    ] {
        let mut v = verdicts_of(
            &schema,
            &[("a.json", json!({"id": "c", "output": output}).to_string())],
        );
        let v = v.remove(0);
        let (stage, _, reason, pointer, _) = outcome(&v);
        if ok {
            assert_eq!(stage, "ready", "{schema} {output}");
        } else {
            assert_eq!(
                (stage.as_str(), reason.as_str(), pointer.as_deref()),
                ("schema", "SCHEMA_MISMATCH", Some("/n")),
                "{schema} {output}"
            );
        }
    }
}

fn chat_completion(extra: Value) -> Value {
    let mut c = json!({"id": "c1", "object": "chat.completion", "model": "gpt-4.1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}", "refusal": null}, "finish_reason": "stop"}]});
    if let (Some(c), Some(e)) = (c.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    c
}

#[test]
fn a_body_mixing_signals_is_decided_by_the_most_severe() {
    let run = |response: Value| one(&json!({"id": "m", "response": response}).to_string());
    expect(
        &run(chat_completion(
            json!({"error": {"type": "server_error", "message": "boom"}}),
        )),
        "response",
        "retry",
        "REQUEST_ERROR",
        None,
        "top-level `error`: request failed with type \"server_error\" (\"boom\"): transient, retry (the body mixes signals, the most severe decides; also: openai-chat read it as finished (stop reason \"stop\"))",
    );
    expect(
        &run(chat_completion(json!({"stop_reason": "refusal"}))),
        "response",
        "reject",
        "REFUSAL",
        None,
        "stop_reason \"refusal\": the model declined (the body mixes signals, the most severe decides; also: openai-chat read it as finished (stop reason \"stop\"))",
    );
    expect(
        &run(chat_completion(
            json!({"candidates": [{"finishReason": "SAFETY"}]}),
        )),
        "response",
        "reject",
        "CONTENT_FILTERED",
        None,
        "candidates[0].finishReason \"SAFETY\": a safety filter stopped the output (the body mixes signals, the most severe decides; also: openai-chat read it as finished (stop reason \"stop\"))",
    );
    expect(
        &run(chat_completion(
            json!({"promptFeedback": {"blockReason": "SAFETY"}}),
        )),
        "response",
        "reject",
        "CONTENT_FILTERED",
        None,
        "promptFeedback.blockReason \"SAFETY\": the prompt was blocked (the body mixes signals, the most severe decides; also: openai-chat read it as finished (stop reason \"stop\"))",
    );
    // a truncation and a refusal: the refusal decides, the truncation is named
    let mut c = chat_completion(json!({"stop_reason": "refusal"}));
    c["choices"][0]["finish_reason"] = json!("length");
    expect(
        &run(c),
        "response",
        "reject",
        "REFUSAL",
        None,
        "stop_reason \"refusal\": the model declined (the body mixes signals, the most severe decides; also: choices[0].finish_reason \"length\": the output hit the token limit)",
    );
    // the adapter's own reading, when more severe, decides and names the milder signal
    let mut c = chat_completion(json!({"stop_reason": "max_tokens"}));
    c["choices"][0]["message"]["refusal"] = json!("no");
    expect(
        &run(c),
        "response",
        "reject",
        "REFUSAL",
        None,
        "choices[0].message.refusal is set: the model declined: \"no\" (the body mixes signals, the most severe decides; also: stop_reason \"max_tokens\": the output hit the token limit)",
    );
    // an Anthropic message that says end_turn while a Chat field says content_filter
    let msg = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": "{}"}], "stop_reason": "end_turn",
        "choices": [{"finish_reason": "content_filter"}]});
    expect(
        &run(msg),
        "response",
        "reject",
        "CONTENT_FILTERED",
        None,
        "choices[0].finish_reason \"content_filter\": a content filter stopped the output (the body mixes signals, the most severe decides; also: anthropic read it as finished (stop reason \"end_turn\"))",
    );
    // the same conflict read by the Chat adapter (a chat.completion): its own failure
    // decides, and the Anthropic field that says it finished is named
    let mut c = chat_completion(json!({"stop_reason": "end_turn"}));
    c["choices"][0]["finish_reason"] = json!("content_filter");
    expect(
        &run(c),
        "response",
        "reject",
        "CONTENT_FILTERED",
        None,
        "choices[0].finish_reason \"content_filter\": a content filter stopped the output (the body mixes signals, the most severe decides; also: stop_reason \"end_turn\" says it finished)",
    );
    // a Responses object that says completed with an error beside it
    let r = json!({"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4.1",
        "error": {"code": "rate_limit_exceeded", "message": "slow down"},
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "{}"}]}]});
    let (stage, decision, reason, _, _) = outcome(&run(r));
    assert_eq!(
        (stage.as_str(), decision.as_str(), reason.as_str()),
        ("response", "retry", "REQUEST_ERROR")
    );
    // agreeing signals are left alone
    expect(
        &run(chat_completion(
            json!({"error": null, "stop_reason": "end_turn"}),
        )),
        "ready",
        "ready-for-commit",
        "-",
        None,
        "",
    );
}
