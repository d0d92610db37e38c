//! Record shapes read where they lie (`docs/record-shapes.md#record-shapes`): one case per
//! shape and per status value, each asserting id, format, provider, stage, decision, reason
//! and the message exactly.

use verdict::core::verdict::Verdict;
use verdict::core::workspace::Workspace;

/// A contract with one integer `a` and no other key.
const SCHEMA: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}"#;

/// Every verdict of a workspace holding [`SCHEMA`] and one log of `lines`.
fn verdicts(lines: &[&str]) -> Vec<Verdict> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    std::fs::write(dir.path().join("schemas/s.schema.json"), SCHEMA).unwrap();
    std::fs::write(dir.path().join("captures/log.jsonl"), lines.join("\n")).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    ws.capture_files()
        .iter()
        .flat_map(|f| ws.read_file(f))
        .filter_map(|raw| ws.check(&raw))
        .collect()
}

/// One line's verdict as `id format provider stage decision reason: message`.
fn row(v: &Verdict) -> String {
    let f = v.errors.first();
    format!(
        "{} {} {} {} {} {}: {}",
        v.id,
        v.format.as_deref().unwrap_or("-"),
        v.provider.as_deref().unwrap_or("-"),
        v.stage.as_str(),
        v.decision.as_str(),
        v.reason.as_ref().map_or("-", |r| r.as_str()),
        f.map_or("", |f| f.message.as_str())
    )
}

fn check(lines: &[&str], want: &[&str]) {
    let got: Vec<String> = verdicts(lines).iter().map(row).collect();
    assert_eq!(got, want);
}

#[test]
fn openai_batch_lines_by_status() {
    check(
        &[
            r#"{"id": "batch_req_1", "custom_id": "request-1", "response": {"status_code": 200, "request_id": "req_1", "body": {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"a\": 4}"}, "finish_reason": "stop"}]}}, "error": null}"#,
            r#"{"id": "batch_req_2", "custom_id": "request-2", "response": {"status_code": 200, "request_id": "req_2", "body": {"id": "resp_2", "object": "response", "status": "completed", "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "{\"a\": \"4\"}"}]}]}}, "error": null}"#,
            r#"{"id": "batch_req_3", "custom_id": "request-3", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}"#,
            r#"{"id": "batch_req_4", "custom_id": "request-4", "response": null, "error": {"code": "batch_cancelled", "message": "cancelled"}}"#,
            r#"{"id": "batch_req_5", "custom_id": "request-5", "response": null, "error": {"code": "request_timeout", "message": "timed out"}}"#,
            r#"{"id": "req_error", "custom_id": "request-6", "response": {"status_code": 400, "request_id": "abc123", "body": {"error": {"message": "Invalid request", "type": "invalid_request_error"}}}, "error": null}"#,
            r#"{"id": "req_error", "custom_id": "request-7", "response": {"status_code": 429, "body": {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}}, "error": null}"#,
            r#"{"id": "req_error", "custom_id": "request-8", "response": {"status_code": 429, "body": {"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}}}, "error": null}"#,
            r#"{"id": "req_error", "custom_id": "request-9", "response": {"status_code": 503, "body": {"error": {"message": "busy", "type": "server_error"}}}, "error": null}"#,
        ],
        &[
            "request-1 openai-batch openai-chat ready ready-for-commit -: ",
            "request-2 openai-batch openai-responses schema regenerate SCHEMA_MISMATCH: \"4\" is not of type \"integer\"",
            "request-3 openai-batch openai-batch response retry INCOMPLETE: the batch request did not run: error.code \"batch_expired\" (\"This request could not be executed before the completion window expired.\"); send it again in a new batch",
            "request-4 openai-batch openai-batch response retry INCOMPLETE: the batch request did not run: error.code \"batch_cancelled\" (\"cancelled\"); send it again in a new batch",
            "request-5 openai-batch openai-batch response retry REQUEST_ERROR: the model call timed out: error.code \"request_timeout\" (\"timed out\"): transient, retry",
            "request-6 openai-batch openai-batch response reject REQUEST_ERROR: HTTP 400, response.body.error: request failed with type \"invalid_request_error\" (\"Invalid request\"): not transient",
            "request-7 openai-batch openai-batch response retry REQUEST_ERROR: HTTP 429, response.body.error: request failed with type \"requests\", code \"rate_limit_exceeded\" (\"slow down\"): transient, retry",
            "request-8 openai-batch openai-batch response reject REQUEST_ERROR: HTTP 429, response.body.error: request failed with type \"insufficient_quota\", code \"insufficient_quota\" (\"quota\"): not transient",
            "request-9 openai-batch openai-batch response retry REQUEST_ERROR: HTTP 503, response.body.error: request failed with type \"server_error\" (\"busy\"): transient, retry",
        ],
    );
}

#[test]
fn openai_batch_lines_that_break_the_shape() {
    check(
        &[
            r#"{"id": "batch_req_1", "custom_id": "both-null", "response": null, "error": null}"#,
            r#"{"id": "batch_req_2", "custom_id": "string-body", "response": {"status_code": 200, "body": "{\"a\": 1}"}, "error": null}"#,
            r#"{"id": "batch_req_3", "custom_id": "string-status", "response": {"status_code": "200", "body": {}}, "error": null}"#,
            r#"{"id": "batch_req_4", "custom_id": 7, "response": null, "error": {"code": "batch_expired"}}"#,
        ],
        &[
            "both-null openai-batch - input reject INVALID_CAPTURE: openai-batch record: `response` and `error` are both null or missing: a batch line has one of them",
            "string-body openai-batch - input reject INVALID_CAPTURE: openai-batch record: `response.body` must be an object, found a string",
            "string-status openai-batch - input reject INVALID_CAPTURE: openai-batch record: `response.status_code` must be an integer, found a string",
            "captures/log.jsonl:4 openai-batch - input reject INVALID_CAPTURE: openai-batch record: `custom_id` must be a string, found a number",
        ],
    );
}

#[test]
fn anthropic_batch_results_by_type() {
    check(
        &[
            r#"{"custom_id":"my-second-request","result":{"type":"succeeded","message":{"id":"msg_014","type":"message","role":"assistant","model":"claude-3-7-sonnet-20250219","content":[{"type":"text","text":"{\"a\": 1}"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":36}}}}"#,
            r#"{"custom_id":"l1","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"private detail"}}}}"#,
            r#"{"custom_id":"l1b","result":{"type":"errored","error":{"type":"overloaded_error","message":"busy"}}}"#,
            r#"{"custom_id":"l2","result":{"type":"expired"}}"#,
            r#"{"custom_id":"l3","result":{"type":"canceled"}}"#,
            r#"{"custom_id":"l4","result":{"type":"done"}}"#,
            r#"{"custom_id":"l5","result":{"type":"succeeded","message":{"id":"msg_2","type":"message","role":"assistant","content":[{"type":"text","text":"{\"a\": 1"}],"stop_reason":"max_tokens"}}}"#,
        ],
        &[
            "my-second-request anthropic-batch anthropic ready ready-for-commit -: ",
            "l1 anthropic-batch anthropic-batch response reject REQUEST_ERROR: result.error.error: request failed with type \"invalid_request_error\" (\"private detail\"): not transient",
            "l1b anthropic-batch anthropic-batch response retry REQUEST_ERROR: result.error: request failed with type \"overloaded_error\" (\"busy\"): transient, retry",
            "l2 anthropic-batch anthropic-batch response retry INCOMPLETE: the batch request was not sent: result.type \"expired\"; send it again in a new batch",
            "l3 anthropic-batch anthropic-batch response retry INCOMPLETE: the batch request was not sent: result.type \"canceled\"; send it again in a new batch",
            "l4 anthropic-batch - input reject INVALID_CAPTURE: anthropic-batch record: `result.type` is \"done\": expected one of succeeded, errored, canceled, expired",
            "l5 anthropic-batch anthropic response retry TRUNCATED_OUTPUT: stop_reason \"max_tokens\": the output hit the token limit",
        ],
    );
}

#[test]
fn bare_responses_and_records_of_no_shape() {
    check(
        &[
            r#"{"id": "chatcmpl-9", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"a\": 4, \"b\": 1}"}, "finish_reason": "stop"}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": "{\"a\": 2}"}]}, "finishReason": "STOP"}], "responseId": "gem-1"}"#,
            r#"[{"type": "message_start", "message": {"id": "msg_s1", "type": "message", "role": "assistant", "content": []}}, {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}, {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "{\"a\": 3}"}}, {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}, {"type": "message_stop"}]"#,
            r#"{"amount": 5}"#,
            r#"{"id": "x", "outptu": "{}"}"#,
            r#"[1, 2]"#,
        ],
        &[
            "chatcmpl-9 response openai-chat schema regenerate SCHEMA_MISMATCH: Additional properties are not allowed ('b' was unexpected)",
            "gem-1 response gemini ready ready-for-commit -: ",
            "msg_s1 response anthropic ready ready-for-commit -: ",
            "captures/log.jsonl:4 - - input reject INVALID_CAPTURE: the record matches no known shape (keys \"amount\"); tried mcp, openai-batch, anthropic-batch, response, capture",
            "x - - input reject INVALID_CAPTURE: the record matches no known shape (keys \"id\", \"outptu\"); tried mcp, openai-batch, anthropic-batch, response, capture; closest: capture (a capture record), which has no key \"outptu\"",
            "captures/log.jsonl:6 - - input reject INVALID_CAPTURE: a record must be a JSON object (or an array of stream events), found an array",
        ],
    );
    let v = verdicts(&[r#"{"id": "x", "outptu": "{}"}"#]);
    assert_eq!(
        v[0].errors[0].hint.as_deref(),
        Some("did you mean `output`?")
    );
}
