//! Record shapes read where they lie (`docs/record-shapes.md#record-shapes`): one case per
//! shape and per status value, each asserting id, format, provider, stage, decision, reason
//! and the message exactly.

use crate::common;
use crate::common::verdicts as all_verdicts;
use verdict::core::verdict::Verdict;

/// A contract with one integer `a` and no other key.
const SCHEMA: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}"#;

/// Every verdict of a workspace holding [`SCHEMA`] and one log of `lines`.
fn verdicts(lines: &[&str]) -> Vec<Verdict> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    std::fs::write(dir.path().join("schemas/s.schema.json"), SCHEMA).unwrap();
    std::fs::write(dir.path().join("captures/log.jsonl"), lines.join("\n")).unwrap();
    all_verdicts(dir.path())
}

/// One line's verdict as `id format provider stage decision reason: message`.
use common::row;

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
            "captures/log.jsonl:4 - - input reject INVALID_CAPTURE: the record matches no known shape (keys \"amount\"); tried mcp, otlp, openinference, litellm, langfuse, langsmith, promptfoo, openai-batch, anthropic-batch, vertex-batch, gemini-batch, bedrock-batch, openai-batch-input, anthropic-batch-input, gemini-batch-input, response, capture",
            "x - - input reject INVALID_CAPTURE: the record matches no known shape (keys \"id\", \"outptu\"); tried mcp, otlp, openinference, litellm, langfuse, langsmith, promptfoo, openai-batch, anthropic-batch, vertex-batch, gemini-batch, bedrock-batch, openai-batch-input, anthropic-batch-input, gemini-batch-input, response, capture; closest: capture (a capture record), which has no key \"outptu\"",
            "captures/log.jsonl:6 - - input reject INVALID_CAPTURE: a record must be a JSON object (or an array of stream events), found an array",
        ],
    );
    let v = verdicts(&[r#"{"id": "x", "outptu": "{}"}"#]);
    assert_eq!(
        v[0].errors[0].hint.as_deref(),
        Some("did you mean `output`?")
    );
}

/// What a differential comparison keeps of a verdict: stage, decision, reason, and each
/// finding's pointer.
fn outcome(v: &Verdict) -> String {
    let pointers: Vec<&str> = v
        .errors
        .iter()
        .map(|f| f.pointer.as_deref().unwrap_or("-"))
        .collect();
    format!(
        "{} {} {} [{}]",
        v.stage.as_str(),
        v.decision.as_str(),
        v.reason.as_ref().map_or("-", |r| r.as_str()),
        pointers.join(" ")
    )
}

/// Every capture of `samples/providers` whose `response` is an object or an array of events
/// (and that names no `provider` or `tool` to force the reading), re-written as the bare
/// response a provider SDK dumps and as a batch line of its provider, gives the same stage,
/// decision, reason and pointers as the capture record.
#[test]
fn provider_samples_read_the_same_bare_and_as_batch_lines() {
    use serde_json::{Value, json};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/providers");
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&root.join("schemas"), &dir.path().join("schemas"));
    std::fs::copy(root.join("verdict.toml"), dir.path().join("verdict.toml")).unwrap();
    let mut want = Vec::new();
    let mut batch_lines: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    let mut bare = 0;
    for v in all_verdicts(&root) {
        let path = root.join(v.source.file().as_ref());
        let record: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let Some(response) = record.get("response") else {
            continue;
        };
        if !(response.is_object() || response.is_array())
            || record.get("provider").is_some()
            || record.get("tool").is_some()
        {
            continue;
        }
        let name = v.id.replace('/', "-");
        std::fs::create_dir_all(dir.path().join("captures/bare")).unwrap();
        std::fs::write(
            dir.path().join(format!("captures/bare/{name}.json")),
            response.to_string(),
        )
        .unwrap();
        want.push((format!("captures/bare/{name}.json"), outcome(&v)));
        bare += 1;
        // a batch line of its provider: only for a finished (non-stream) response body
        let provider = v.provider.as_deref().unwrap_or("-");
        let line = match (provider, response.is_object()) {
            ("openai-chat" | "openai-responses", true) => json!({
                "id": format!("batch_req_{name}"),
                "custom_id": name,
                "response": {"status_code": 200, "request_id": "req_1", "body": response},
                "error": null
            }),
            ("anthropic", true) => json!({
                "custom_id": name,
                "result": {"type": "succeeded", "message": response}
            }),
            ("gemini", true) => json!({"key": name, "response": response}),
            ("bedrock-converse", true) => json!({
                "recordId": name,
                "modelInput": {},
                "modelOutput": response
            }),
            _ => continue,
        };
        let file = match provider {
            "anthropic" => "captures/anthropic-batch.jsonl",
            "gemini" => "captures/gemini-batch.jsonl",
            "bedrock-converse" => "captures/bedrock-batch.jsonl",
            _ => "captures/openai-batch.jsonl",
        };
        let lines = batch_lines.entry(file).or_default();
        lines.push(line.to_string());
        want.push((format!("{file}:{}", lines.len()), outcome(&v)));
    }
    for (file, lines) in &batch_lines {
        std::fs::write(dir.path().join(file), lines.join("\n") + "\n").unwrap();
    }
    assert!(bare >= 60, "only {bare} samples re-written");
    assert!(batch_lines.values().map(Vec::len).sum::<usize>() >= 20);
    let got: std::collections::BTreeMap<String, String> = all_verdicts(dir.path())
        .iter()
        .map(|v| (v.source.to_string(), outcome(v)))
        .collect();
    for (source, outcome) in &want {
        assert_eq!(got.get(source), Some(outcome), "{source}");
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn gemini_batch_lines_by_status() {
    check(
        &[
            // a Gemini batch fixture line of github.com/maximhq/bifrost, its text a JSON document
            r#"{"key":"request-1","response":{"candidates":[{"content":{"parts":[{"text":"{\"a\": 1}"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2,"totalTokenCount":9}}}"#,
            r#"{"key":"request-2","response":{"candidates":[{"content":{"parts":[{"text":"{\"a\": \"1\"}"}],"role":"model"},"finishReason":"STOP"}],"responseId":"gem-2","modelVersion":"gemini-2.5-flash"}}"#,
            r#"{"key":"request-3","response":{"candidates":[{"content":{"parts":[{"text":"{\"a\": 1"}]},"finishReason":"MAX_TOKENS"}]}}"#,
            r#"{"key":"request-4","response":{"candidates":[{"finishReason":"SAFETY"}]}}"#,
            r#"{"key":"request-5","response":{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}}"#,
            r#"{"key":"request-6","error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}"#,
            r#"{"key":"request-7","error":{"code":500,"message":"An internal error has occurred","status":"INTERNAL"}}"#,
            r#"{"key":"request-8","error":{"code":503,"message":"The model is overloaded","status":"UNAVAILABLE"}}"#,
            r#"{"key":"request-9","error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}"#,
            r#"{"key":"request-10","error":{"code":504,"message":"Deadline exceeded","status":"DEADLINE_EXCEEDED"}}"#,
            r#"{"key":"request-11","error":{"code":429,"message":"rate limited"}}"#,
        ],
        &[
            "request-1 gemini-batch gemini ready ready-for-commit -: ",
            "request-2 gemini-batch gemini schema regenerate SCHEMA_MISMATCH: \"1\" is not of type \"integer\"",
            "request-3 gemini-batch gemini response retry TRUNCATED_OUTPUT: candidates[0].finishReason \"MAX_TOKENS\": the output hit the token limit",
            "request-4 gemini-batch gemini response reject CONTENT_FILTERED: candidates[0].finishReason \"SAFETY\": a filter stopped the output",
            "request-5 gemini-batch gemini response reject CONTENT_FILTERED: promptFeedback.blockReason \"PROHIBITED_CONTENT\": the prompt was blocked",
            "request-6 gemini-batch gemini-batch response retry REQUEST_ERROR: error: request failed with code 429, status \"RESOURCE_EXHAUSTED\" (\"Resource has been exhausted\"): transient, retry",
            "request-7 gemini-batch gemini-batch response retry REQUEST_ERROR: error: request failed with code 500, status \"INTERNAL\" (\"An internal error has occurred\"): transient, retry",
            "request-8 gemini-batch gemini-batch response retry REQUEST_ERROR: error: request failed with code 503, status \"UNAVAILABLE\" (\"The model is overloaded\"): transient, retry",
            "request-9 gemini-batch gemini-batch response reject REQUEST_ERROR: error: request failed with code 400, status \"INVALID_ARGUMENT\" (\"Invalid JSON payload\"): not transient",
            "request-10 gemini-batch gemini-batch response reject REQUEST_ERROR: error: request failed with code 504, status \"DEADLINE_EXCEEDED\" (\"Deadline exceeded\"): not transient",
            "request-11 gemini-batch gemini-batch response retry REQUEST_ERROR: error: request failed with code 429 (\"rate limited\"): transient, retry",
        ],
    );
}

#[test]
fn gemini_batch_lines_that_break_the_shape() {
    check(
        &[
            r#"{"key":"string-response","response":"{\"a\": 1}"}"#,
            r#"{"key":7,"response":{"candidates":[{"content":{"parts":[{"text":"{\"a\": 1}"}]},"finishReason":"STOP"}]}}"#,
            r#"{"key":"","error":{"code":429}}"#,
            r#"{"key":"both-null","response":null,"error":null}"#,
            r#"{"key":"string-error","error":"rate limited"}"#,
            r#"{"key":"empty-response","response":{}}"#,
        ],
        &[
            "string-response gemini-batch - input reject INVALID_CAPTURE: gemini-batch record: `response` must be an object or null, found a string",
            "captures/log.jsonl:2 gemini-batch - input reject INVALID_CAPTURE: gemini-batch record: `key` must be a string, found a number",
            "captures/log.jsonl:3 gemini-batch - input reject INVALID_CAPTURE: gemini-batch record: `key` must not be empty",
            "both-null gemini-batch - input reject INVALID_CAPTURE: gemini-batch record: `response` and `error` are both null or missing: a batch line has one of them",
            "string-error gemini-batch - input reject INVALID_CAPTURE: gemini-batch record: `error` must be an object or null, found a string",
            "empty-response gemini-batch gemini response retry INCOMPLETE: the response holds no candidate and no promptFeedback.blockReason",
        ],
    );
}

#[test]
fn vertex_batch_lines_by_status() {
    check(
        &[
            // the two examples of the Vertex AI batch prediction docs, the first one's
            // text a JSON document
            r#"{"status": "", "processed_time": "2024-11-01T18:13:16.826+00:00", "request": {"contents": [{"parts": [{"fileData": null, "text": "What is the relation between the following video and image samples?"}], "role": "user"}]}, "response": {"candidates": [{"avgLogprobs": -0.5782725546095107, "content": {"parts": [{"text": "{\"a\": 1}"}], "role": "model"}, "finishReason": "STOP"}], "modelVersion": "gemini-2.0-flash-001@default", "usageMetadata": {"candidatesTokenCount": 36, "promptTokenCount": 29180, "totalTokenCount": 29216}}}"#,
            r#"{"status": "Bad Request: {\"error\": {\"code\": 400, \"message\": \"Please use a valid role: user, model.\", \"status\": \"INVALID_ARGUMENT\"}}", "processed_time": "2025-07-09T19:57:43.558+00:00", "request": {"contents": [{"parts": [{"text": "Explain how AI works in a few words"}], "role": "tester"}]}, "response": {}}"#,
            r#"{"status": "Too Many Requests: {\"error\": {\"code\": 429, \"message\": \"Quota exceeded\", \"status\": \"RESOURCE_EXHAUSTED\"}}", "request": {}, "response": {}}"#,
            r#"{"status": "Service Unavailable: 503", "request": {}, "response": {}}"#,
            r#"{"status": "Internal error encountered.", "request": {}, "response": {}}"#,
            r#"{"status": "", "request": {}, "response": {"candidates": [{"content": {"parts": [{"text": "{\"a\": 1"}]}, "finishReason": "MAX_TOKENS"}]}}"#,
            r#"{"status": null, "request": {}, "response": {"candidates": [{"content": {"parts": [{"text": "{\"a\": \"x\"}"}]}, "finishReason": "STOP"}]}}"#,
            r#"{"status": "", "error": {"code": 500, "message": "boom", "status": "INTERNAL"}, "request": {}, "response": {}}"#,
        ],
        &[
            "captures/log.jsonl:1 vertex-batch gemini ready ready-for-commit -: ",
            "captures/log.jsonl:2 vertex-batch vertex-batch response reject REQUEST_ERROR: status \"Bad Request\": request failed with code 400, status \"INVALID_ARGUMENT\" (\"Please use a valid role: user, model.\"): not transient",
            "captures/log.jsonl:3 vertex-batch vertex-batch response retry REQUEST_ERROR: status \"Too Many Requests\": request failed with code 429, status \"RESOURCE_EXHAUSTED\" (\"Quota exceeded\"): transient, retry",
            "captures/log.jsonl:4 vertex-batch vertex-batch response retry REQUEST_ERROR: status \"Service Unavailable: 503\": request failed: transient, retry",
            "captures/log.jsonl:5 vertex-batch vertex-batch response reject REQUEST_ERROR: status \"Internal error encountered.\": request failed: not transient",
            "captures/log.jsonl:6 vertex-batch gemini response retry TRUNCATED_OUTPUT: candidates[0].finishReason \"MAX_TOKENS\": the output hit the token limit",
            "captures/log.jsonl:7 vertex-batch gemini schema regenerate SCHEMA_MISMATCH: \"x\" is not of type \"integer\"",
            "captures/log.jsonl:8 vertex-batch vertex-batch response retry REQUEST_ERROR: error: request failed with code 500, status \"INTERNAL\" (\"boom\"): transient, retry",
        ],
    );
}

#[test]
fn vertex_batch_lines_that_break_the_shape() {
    check(
        &[
            r#"{"status": {"code": 400}, "request": {}, "response": {}}"#,
            r#"{"status": "", "request": {}, "response": "{\"a\": 1}"}"#,
            r#"{"status": "", "request": {}, "response": {}}"#,
            r#"{"status": "", "error": 5, "request": {}, "response": {}}"#,
        ],
        &[
            "captures/log.jsonl:1 vertex-batch - input reject INVALID_CAPTURE: vertex-batch record: `status` must be a string, found an object",
            "captures/log.jsonl:2 vertex-batch - input reject INVALID_CAPTURE: vertex-batch record: `response` must be an object, found a string (`status` is empty)",
            "captures/log.jsonl:3 vertex-batch gemini response retry INCOMPLETE: the response holds no candidate and no promptFeedback.blockReason",
            "captures/log.jsonl:4 vertex-batch - input reject INVALID_CAPTURE: vertex-batch record: `error` must be a string, an object or null, found a number",
        ],
    );
}

#[test]
fn bedrock_batch_lines_by_status() {
    check(
        &[
            // a Claude line of github.com/ybalbert001/intelligent-bedrock-batch-inference,
            // its text a JSON document and its prompt cut
            r#"{"modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":2048,"stop_sequences":["</translation>"],"messages":[{"role":"user","content":[{"type":"text","text":"translate"}]}]},"modelOutput":{"id":"msg_bdrk_018FaiigbPq6PehfhWM2GMBv","type":"message","role":"assistant","model":"claude-3-haiku-20240307","content":[{"type":"text","text":"{\"a\": 1}"}],"stop_reason":"stop_sequence","stop_sequence":"</translation>","usage":{"input_tokens":111,"output_tokens":73}},"recordId":"meta_Appliances_0_0"}"#,
            r#"{"recordId":"claude-long","modelInput":{},"modelOutput":{"id":"msg_2","type":"message","role":"assistant","content":[{"type":"text","text":"{\"a\": 1"}],"stop_reason":"max_tokens"}}"#,
            r#"{"recordId":"converse-1","modelInput":{},"modelOutput":{"output":{"message":{"role":"assistant","content":[{"text":"{\"a\": \"1\"}"}]}},"stopReason":"end_turn","usage":{"inputTokens":5,"outputTokens":4,"totalTokens":9}}}"#,
            r#"{"recordId":"converse-2","modelInput":{},"modelOutput":{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"propose","input":{"a":2}}}]}},"stopReason":"tool_use"}}"#,
            r#"{"recordId":"1223213ABCD","modelInput":{},"error":{"errorCode":400,"errorMessage":"bad request"}}"#,
            r#"{"recordId":"throttled","modelInput":{},"error":{"errorCode":429,"errorMessage":"Too many requests"}}"#,
            r#"{"recordId":"string-code","modelInput":{},"error":{"errorCode":"429","errorMessage":"Too many requests"}}"#,
            r#"{"recordId":"server","modelInput":{},"error":{"errorCode":500,"errorMessage":"internal"}}"#,
            r#"{"recordId":"no-code","modelInput":{},"error":{"errorMessage":"unknown"}}"#,
        ],
        &[
            "meta_Appliances_0_0 bedrock-batch anthropic ready ready-for-commit -: ",
            "claude-long bedrock-batch anthropic response retry TRUNCATED_OUTPUT: stop_reason \"max_tokens\": the output hit the token limit",
            "converse-1 bedrock-batch bedrock-converse schema regenerate SCHEMA_MISMATCH: \"1\" is not of type \"integer\"",
            "converse-2 bedrock-batch bedrock-converse ready ready-for-commit -: ",
            "1223213ABCD bedrock-batch bedrock-batch response reject REQUEST_ERROR: error: request failed with errorCode 400 (\"bad request\"): not transient",
            "throttled bedrock-batch bedrock-batch response retry REQUEST_ERROR: error: request failed with errorCode 429 (\"Too many requests\"): transient, retry",
            "string-code bedrock-batch bedrock-batch response retry REQUEST_ERROR: error: request failed with errorCode \"429\" (\"Too many requests\"): transient, retry",
            "server bedrock-batch bedrock-batch response retry REQUEST_ERROR: error: request failed with errorCode 500 (\"internal\"): transient, retry",
            "no-code bedrock-batch bedrock-batch response reject REQUEST_ERROR: error: request failed with no errorCode (\"unknown\"): not transient",
        ],
    );
}

#[test]
fn bedrock_batch_lines_that_break_the_shape() {
    check(
        &[
            r#"{"recordId":"null-output","modelInput":{},"modelOutput":null}"#,
            r#"{"recordId":"string-output","modelInput":{},"modelOutput":"{\"a\": 1}"}"#,
            r#"{"recordId":"titan","modelInput":{},"modelOutput":{"inputTextTokenCount":5,"results":[{"tokenCount":3,"outputText":"{\"a\": 1}","completionReason":"FINISH"}]}}"#,
            r#"{"recordId":12,"modelInput":{},"modelOutput":{"id":"msg_1","type":"message","content":[],"stop_reason":"end_turn"}}"#,
            r#"{"recordId":"object-code","modelInput":{},"error":{"errorCode":{"n":429}}}"#,
            r#"{"recordId":"string-error","modelInput":{},"error":"throttled"}"#,
        ],
        &[
            "null-output bedrock-batch - input reject INVALID_CAPTURE: bedrock-batch record: `modelOutput` and `error` are both null or missing: a batch line has one of them",
            "string-output bedrock-batch - input reject INVALID_CAPTURE: bedrock-batch record: `modelOutput` must be an object or null, found a string",
            "titan bedrock-batch - input reject INVALID_CAPTURE: bedrock-batch record: `modelOutput` is no model body verdict reads (keys \"inputTextTokenCount\", \"results\"): expected an Anthropic Messages body (`\"type\": \"message\"`) or a Converse body (`output.message`, `stopReason`)",
            "captures/log.jsonl:4 bedrock-batch - input reject INVALID_CAPTURE: bedrock-batch record: `recordId` must be a string, found a number",
            "object-code bedrock-batch - input reject INVALID_CAPTURE: bedrock-batch record: `error.errorCode` must be a number or a string, found an object",
            "string-error bedrock-batch - input reject INVALID_CAPTURE: bedrock-batch record: `error` must be an object or null, found a string",
        ],
    );
}

/// The `meta` a batch line's capture carries: the provider's ids, timestamps and status
/// codes; `format` and the forced adapter.
#[test]
fn batch_lines_copy_their_metadata_into_meta() {
    use verdict::core::capture::parse_record;
    use verdict::core::record_ref::RecordRef;
    let at = RecordRef::new("captures/log.jsonl", Some(3));
    let read = |line: &str| {
        let c = parse_record(line, &at).unwrap_or_else(|e| panic!("{}", e.finding.message));
        let meta = c.meta.map(|m| serde_json::Value::Object(m.into_map()));
        (c.id, c.format, c.provider, meta.map(|m| m.to_string()))
    };
    let s = |x: &str| Some(x.to_owned());
    assert_eq!(
        read(
            r#"{"key":"k1","response":{"candidates":[{"content":{"parts":[{"text":"{}"}]},"finishReason":"STOP"}],"responseId":"gem-1"}}"#
        ),
        (
            s("k1").unwrap(),
            "gemini-batch",
            s("gemini"),
            s(r#"{"response_id":"gem-1"}"#)
        )
    );
    assert_eq!(
        read(r#"{"key":"k2","error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}"#),
        (
            s("k2").unwrap(),
            "gemini-batch",
            None,
            s(r#"{"status_code":429}"#)
        )
    );
    assert_eq!(
        read(
            r#"{"status": "", "processed_time": "2024-11-01T18:13:16.826+00:00", "request": {"contents": []}, "response": {"candidates": [], "responseId": "v-1"}}"#
        ),
        (
            s("captures/log.jsonl:3").unwrap(),
            "vertex-batch",
            s("gemini"),
            s(r#"{"processed_time":"2024-11-01T18:13:16.826+00:00","response_id":"v-1"}"#)
        )
    );
    assert_eq!(
        read(
            r#"{"status": "Bad Request: {\"error\": {\"code\": 400, \"message\": \"m\", \"status\": \"INVALID_ARGUMENT\"}}", "processed_time": "2025-07-09T19:57:43.558+00:00", "request": {}, "response": {}}"#
        ),
        (
            s("captures/log.jsonl:3").unwrap(),
            "vertex-batch",
            None,
            s(r#"{"processed_time":"2025-07-09T19:57:43.558+00:00","status_code":400}"#)
        )
    );
    assert_eq!(
        read(
            r#"{"recordId":"r1","modelInput":{"messages":[]},"modelOutput":{"id":"msg_bdrk_1","type":"message","content":[],"stop_reason":"end_turn"}}"#
        ),
        (
            s("r1").unwrap(),
            "bedrock-batch",
            None,
            s(r#"{"response_id":"msg_bdrk_1"}"#)
        )
    );
    assert_eq!(
        read(r#"{"recordId":"r2","modelInput":{},"error":{"errorCode":"503","errorMessage":"m"}}"#),
        (
            s("r2").unwrap(),
            "bedrock-batch",
            None,
            s(r#"{"status_code":503}"#)
        )
    );
    assert_eq!(
        read(
            r#"{"recordId":"r3","modelInput":{},"modelOutput":{"output":{"message":{"content":[]}},"stopReason":"end_turn"}}"#
        ),
        (s("r3").unwrap(), "bedrock-batch", None, None)
    );
}

/// `docs/record-shapes.md#record-shapes` lists every shape of the detection table, in its
/// order, each with its own section.
#[test]
fn the_docs_list_every_shape_in_detection_order() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/record-shapes.md"),
    )
    .unwrap();
    let start = doc
        .find("\n## Record shapes\n")
        .expect("a Record shapes section");
    let section = &doc[start..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |e| e + 1)];
    let listed: Vec<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .map(|l| l.split(" | ").collect::<Vec<_>>())
        .filter(|cells| cells[0].parse::<usize>().is_ok())
        .filter_map(|cells| cells.get(1).copied())
        .filter_map(|c| c.strip_prefix('`')?.split('`').next())
        .filter(|f| verdict::core::shape::by_format(f).is_some())
        .collect();
    let want: Vec<&str> = verdict::core::shape::formats().collect();
    assert_eq!(listed, want);
    for format in want.iter().filter(|f| **f != "capture") {
        assert!(
            section.contains(&format!("\n### `{format}`")) || format == &"response",
            "no section for {format}"
        );
    }
}

/// The README's "one line of each" example: every line is read as the shape its table row
/// says, in order.
#[test]
fn the_readme_example_lines_read_as_their_shapes() {
    use verdict::core::capture::parse_record;
    use verdict::core::record_ref::RecordRef;
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let start = readme.find("```jsonl\n").expect("a jsonl block") + "```jsonl\n".len();
    let block = &readme[start..start + readme[start..].find("```").unwrap()];
    let formats: Vec<&str> = block
        .lines()
        .enumerate()
        .map(
            |(i, line)| match parse_record(line, &RecordRef::new("README.md", Some(i + 1))) {
                Ok(c) => c.format,
                Err(e) => panic!("line {}: {}", i + 1, e.finding.message),
            },
        )
        .collect();
    assert_eq!(
        formats,
        [
            "openai-batch",
            "openai-batch",
            "anthropic-batch",
            "gemini-batch",
            "bedrock-batch",
            "bedrock-converse",
            "ollama",
            "cohere"
        ]
    );
}
