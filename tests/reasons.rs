//! One case per reason code, through the whole pipeline (`Workspace::open` + `check`), each
//! asserting the stage, decision, reason, pointer and line:column exactly, and the message
//! exactly where it is verdict's own. `every_built_in_reason_has_a_case` fails when a new
//! built-in reason has no case here.
//!
//! Then the workspace behaviours the reasons depend on: JSONL records one per line, `$ref`
//! resolution, boolean schema files, `format_assertion`, and a hostile `pattern`.

use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use tempfile::TempDir;
use verdict::core::verdict::{Decision, Finding, Reason, Stage, Verdict};
use verdict::core::workspace::Workspace;

// ---------------------------------------------------------------------------------------
// helpers

/// A refund-like contract: three typed fields, no others.
const REFUND: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://example.com/refund-v1",
  "type": "object",
  "required": ["order_id", "amount_minor"],
  "properties": {
    "order_id": {"type": "string", "pattern": "^O-[0-9]+$"},
    "amount_minor": {"type": "integer", "minimum": 1},
    "currency": {"enum": ["KRW", "USD"]}
  },
  "additionalProperties": false
}"#;

/// A valid refund proposal as text, pretty-printed over several lines.
const GOOD: &str =
    "{\n  \"order_id\": \"O-1042\",\n  \"amount_minor\": 5000,\n  \"currency\": \"KRW\"\n}";

/// Writes `files` (relative path, content) into a fresh temporary workspace.
fn tmp(files: &[(&str, &[u8])]) -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, content) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
    }
    dir
}

/// Every verdict of the workspace at `root`, in file and line order.
fn verdicts(root: &Path) -> Vec<Verdict> {
    let ws = Workspace::open(root).expect("workspace opens");
    ws.capture_files()
        .iter()
        .flat_map(|f| ws.read_file(f))
        .filter_map(|raw| ws.check(&raw))
        .collect()
}

/// The one verdict of a workspace with `schemas/refund-v1.schema.json` (plus `extra` files)
/// and the capture `captures/c.json`.
fn refund(record: &str, extra: &[(&str, &[u8])]) -> Verdict {
    let mut files: Vec<(&str, &[u8])> = vec![
        ("schemas/refund-v1.schema.json", REFUND.as_bytes()),
        ("captures/c.json", record.as_bytes()),
    ];
    files.extend_from_slice(extra);
    only(&tmp(&files))
}

fn only(dir: &TempDir) -> Verdict {
    let mut v = verdicts(dir.path());
    assert_eq!(v.len(), 1, "one verdict expected: {v:#?}");
    v.remove(0)
}

/// A record carrying `output` (text or structured) and optionally `status`/`status_detail`.
fn output(out: impl Into<serde_json::Value>) -> String {
    json!({ "output": out.into() }).to_string()
}

fn status(status: &str, detail: Option<&str>) -> String {
    let mut r = json!({"output": GOOD, "status": status});
    if let Some(d) = detail {
        r["status_detail"] = json!(d);
    }
    r.to_string()
}

/// Asserts the verdict is decided by its first finding with exactly this stage, decision,
/// reason, pointer and line:column, and returns that finding.
#[track_caller]
fn is<'v>(
    v: &'v Verdict,
    stage: Stage,
    decision: Decision,
    reason: &str,
    pointer: Option<&str>,
    at: Option<(u32, u32)>,
) -> &'v Finding {
    let f = v
        .errors
        .first()
        .unwrap_or_else(|| panic!("no finding: {v:#?}"));
    let got = (
        v.stage,
        v.decision,
        v.reason.as_ref().map(Reason::as_str),
        f.stage,
        f.decision,
        f.reason.as_str(),
        f.pointer.as_deref(),
        f.at.map(|a| (a.line, a.column)),
    );
    let want = (
        stage,
        decision,
        Some(reason),
        stage,
        decision,
        reason,
        pointer,
        at,
    );
    assert_eq!(got, want, "verdict: {v:#?}");
    f
}

// ---------------------------------------------------------------------------------------
// one case per reason

/// Declares one `#[test]` per case; each body returns the verdict it checked, whose reason
/// must be the declared one. `COVERED` lists every declared reason.
macro_rules! cases {
    ($($name:ident: $reason:literal => $body:block)*) => {
        $(
            #[test]
            fn $name() {
                let v: Verdict = $body;
                assert_eq!(v.reason.as_ref().map(Reason::as_str), Some($reason));
            }
        )*
        const COVERED: &[&str] = &[$($reason),*];
    };
}

#[test]
fn every_built_in_reason_has_a_case() {
    let missing: Vec<&str> = Reason::BUILT_IN
        .iter()
        .map(Reason::as_str)
        .filter(|r| !COVERED.contains(r))
        .collect();
    assert!(missing.is_empty(), "reasons without a case: {missing:?}");
    assert!(
        COVERED
            .iter()
            .any(|r| Reason::new(*r).builtin_stage().is_none()),
        "a rule's own reason needs a case too"
    );
}

/// README.md's "Stages, reasons, decisions" table names every built-in reason once, in its
/// stage's row, inside a group whose parenthesis names its default decision
/// (`` `REFUSAL`, `CONTENT_FILTERED`, `TOOL_ERROR` (reject) ``), and no other code.
#[test]
fn the_readme_table_lists_every_built_in_reason() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let table = readme
        .split("## Stages, reasons, decisions")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the README has the table");
    let mut listed: Vec<(String, Stage, String)> = Vec::new();
    for row in table.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let Some(stage) = Stage::parse(cells[0].trim_start_matches("| ")) else {
            continue;
        };
        // `A`, `B` (decision); `C` (decision): each group's codes and its parenthesis
        for group in cells[1].split("; ") {
            let (codes, decision) = group.split_once(" (").unwrap_or((group, ""));
            for code in codes.split('`').skip(1).step_by(2) {
                listed.push((code.to_owned(), stage, decision.to_owned()));
            }
        }
    }
    let mut codes: Vec<&str> = listed.iter().map(|(c, _, _)| c.as_str()).collect();
    codes.sort_unstable();
    let mut built_in: Vec<&str> = Reason::BUILT_IN.iter().map(Reason::as_str).collect();
    built_in.sort_unstable();
    assert_eq!(codes, built_in, "the README table");
    for (code, stage, decision) in &listed {
        let reason = Reason::new(code.as_str());
        assert_eq!(reason.builtin_stage(), Some(*stage), "{code}");
        let default = reason.default_decision();
        assert!(
            decision.contains(default.as_str()),
            "{code}: `({decision}` does not name {default}"
        );
    }
}

cases! {
    // ---- input
    invalid_capture_not_json: "INVALID_CAPTURE" => {
        let v = refund("{\"output\": \"{}\",}", &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "record is not valid JSON at 1:16: trailing comma before \"}\""
        );
        assert_eq!(v.id, "captures/c.json");
        assert_eq!(v.source, "captures/c.json");
        v
    }
    invalid_capture_not_an_object: "INVALID_CAPTURE" => {
        let v = refund("[{\"output\": \"{}\"}]", &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "a record must be a JSON object (or an array of stream events), found an array"
        );
        v
    }
    invalid_capture_unknown_key_with_hint: "INVALID_CAPTURE" => {
        let record = json!({"id": "typo", "output": GOOD, "intnet": {"amount_minor": 1}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "unknown key `intnet` in capture record (free-form data belongs in `meta`)"
        );
        assert_eq!(f.hint.as_deref(), Some("did you mean `intent`?"));
        // the broken record keeps its id
        assert_eq!(v.id, "typo");
        v
    }
    invalid_capture_response_and_output: "INVALID_CAPTURE" => {
        let record = json!({"output": GOOD, "response": {"object": "response"}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "a capture record has exactly one of `response` and `output`, found both"
        );
        v
    }
    invalid_capture_neither_response_nor_output: "INVALID_CAPTURE" => {
        let v = refund("{\"id\": \"x\"}", &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "a capture record needs `response` (the provider's raw response) or `output` (the model's text)"
        );
        v
    }
    invalid_capture_wrong_type_object: "INVALID_CAPTURE" => {
        let v = refund(&json!({"output": GOOD, "context": [1]}).to_string(), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(f.message, "`context` must be an object, found an array");
        v
    }
    invalid_capture_wrong_type_string: "INVALID_CAPTURE" => {
        let v = refund(&json!({"output": GOOD, "contract": 7}).to_string(), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(f.message, "`contract` must be a string, found a number");
        v
    }
    invalid_capture_wrong_type_response: "INVALID_CAPTURE" => {
        let v = refund(&json!({"response": 3}).to_string(), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "`response` must be an object, an array of stream events or SSE text, found a number"
        );
        v
    }
    invalid_capture_status_with_response: "INVALID_CAPTURE" => {
        let record = json!({"response": {"object": "response"}, "status": "refusal"});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "`status` and `status_detail` go with `output`; a `response` carries its own status"
        );
        v
    }
    invalid_capture_unknown_status_with_hint: "INVALID_CAPTURE" => {
        let v = refund(&status("refused", None), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            "unknown status \"refused\": expected one of completed, refusal, incomplete, request_error"
        );
        assert_eq!(f.hint.as_deref(), Some("did you mean `refusal`?"));
        v
    }
    invalid_capture_invalid_utf8: "INVALID_CAPTURE" => {
        let mut bytes = b"{\"output\": \"{\\\"order_id\\\": \\\"O-".to_vec();
        let off = bytes.len();
        bytes.extend_from_slice(b"\xC3\x28\\\"}\"}");
        let dir = tmp(&[
            ("schemas/refund-v1.schema.json", REFUND.as_bytes()),
            ("captures/c.json", &bytes),
        ]);
        let v = only(&dir);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert_eq!(
            f.message,
            format!("record is not valid UTF-8 (invalid byte at offset {off})")
        );
        v
    }
    invalid_capture_several_tool_calls: "INVALID_CAPTURE" => {
        let call = |id: &str, name: &str| {
            json!({"id": id, "type": "function",
                   "function": {"name": name, "arguments": "{}"}})
        };
        let record = json!({"response": {
            "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [call("call_1", "refund"), call("call_2", "notify")]}}]}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Input, Decision::Reject, "INVALID_CAPTURE", None, None);
        assert!(
            f.message.contains("refund") && f.message.contains("notify"),
            "names the calls: {}",
            f.message
        );
        v
    }
    unknown_contract_with_hint: "UNKNOWN_CONTRACT" => {
        let record = json!({"contract": "refund-v2", "output": GOOD});
        let v = refund(
            &record.to_string(),
            &[("schemas/ticket.schema.json", b"{\"type\": \"object\"}")],
        );
        let f = is(&v, Stage::Input, Decision::Reject, "UNKNOWN_CONTRACT", None, None);
        assert_eq!(
            f.message,
            "unknown contract \"refund-v2\"; contracts: refund-v1, ticket"
        );
        assert_eq!(f.hint.as_deref(), Some("did you mean `refund-v1`?"));
        assert_eq!(v.contract.as_deref(), Some("refund-v2"));
        v
    }
    unknown_contract_several_and_none_named: "UNKNOWN_CONTRACT" => {
        let v = refund(
            &output(GOOD),
            &[("schemas/ticket.schema.json", b"{\"type\": \"object\"}")],
        );
        let f = is(&v, Stage::Input, Decision::Reject, "UNKNOWN_CONTRACT", None, None);
        assert_eq!(
            f.message,
            "the capture names no `contract` and the workspace has several; set `contract` in the record or `default_contract` in verdict.toml"
        );
        v
    }
    contract_error_every_meta_schema_error: "CONTRACT_ERROR" => {
        let schema = "{\n  \"type\": \"objekt\",\n  \"properties\": {\n    \"a\": {\"minimum\": \"zero\"}\n  },\n  \"required\": \"a\"\n}";
        let dir = tmp(&[
            ("schemas/broken.schema.json", schema.as_bytes()),
            ("captures/c.json", output(GOOD).as_bytes()),
        ]);
        let v = only(&dir);
        is(&v, Stage::Input, Decision::Reject, "CONTRACT_ERROR", None, None);
        assert_eq!(v.contract.as_deref(), Some("broken"));
        let mut places: Vec<(&str, &str)> = v
            .errors
            .iter()
            .map(|f| {
                assert_eq!((f.stage, f.decision), (Stage::Input, Decision::Reject));
                assert_eq!(f.reason, Reason::CONTRACT_ERROR);
                let head = f.message.split(" does not meet its meta-schema: ").next().unwrap();
                (head, f.schema_path.as_deref().unwrap())
            })
            .collect();
        places.sort();
        places.dedup();
        assert_eq!(
            places,
            [
                ("schemas/broken.schema.json:2:11 at /type", "/type"),
                ("schemas/broken.schema.json:4:22 at /properties/a/minimum", "/properties/a/minimum"),
                ("schemas/broken.schema.json:6:15 at /required", "/required"),
            ],
            "{:#?}",
            v.errors
        );
        v
    }
    contract_error_remote_ref_names_the_uri: "CONTRACT_ERROR" => {
        let schema = r#"{"type": "object", "properties": {"m": {"$ref": "https://schemas.example.net/money.json"}}}"#;
        let dir = tmp(&[
            ("schemas/remote.schema.json", schema.as_bytes()),
            ("schemas/fine.schema.json", b"{\"type\": \"object\"}"),
            ("captures/c.json", json!({"contract": "remote", "output": "{}"}).to_string().as_bytes()),
            ("captures/d.json", json!({"contract": "fine", "output": "{}"}).to_string().as_bytes()),
        ]);
        let mut vs = verdicts(dir.path());
        assert_eq!(vs.len(), 2);
        // the other contract's capture is unaffected
        assert_eq!((vs[1].stage, vs[1].reason.clone()), (Stage::Ready, None), "{:#?}", vs[1]);
        let v = vs.remove(0);
        let f = is(&v, Stage::Input, Decision::Reject, "CONTRACT_ERROR", None, None);
        assert_eq!(
            f.message,
            "schemas/remote.schema.json:1:1 remote reference https://schemas.example.net/money.json \
             is not available offline: verdict resolves $ref only within the schemas folder \
             (by $id or relative path)"
        );
        v
    }
    contract_error_rules_cel_syntax: "CONTRACT_ERROR" => {
        let rules = "# refund rules\n\n[[rule]]\nreason = \"TOO_MUCH\"\nrule = \"proposal.amount_minor <=\"\n";
        let v = refund(&output(GOOD), &[("schemas/refund-v1.rules.toml", rules.as_bytes())]);
        let f = is(&v, Stage::Input, Decision::Reject, "CONTRACT_ERROR", None, None);
        assert!(
            f.message.starts_with(
                "schemas/refund-v1.rules.toml:5:33: rule 1 (TOO_MUCH): `rule` does not compile at expression line 1, column 25: "
            ),
            "{}",
            f.message
        );
        v
    }
    contract_error_rules_multi_line_cel_syntax: "CONTRACT_ERROR" => {
        // TOML drops the newline right after `'''`: expression line 3 (the end) is file line 6
        let rules = "[[rule]]\nreason = \"TOO_MUCH\"\nrule = '''\nproposal.amount_minor > 0 &&\n  proposal.amount_minor <=\n'''\n";
        let v = refund(&output(GOOD), &[("schemas/refund-v1.rules.toml", rules.as_bytes())]);
        let f = is(&v, Stage::Input, Decision::Reject, "CONTRACT_ERROR", None, None);
        assert!(
            f.message.starts_with(
                "schemas/refund-v1.rules.toml:6:1: rule 1 (TOO_MUCH): `rule` does not compile at expression line 3, column 1: "
            ),
            "{}",
            f.message
        );
        v
    }
    contract_error_rules_toml_syntax: "CONTRACT_ERROR" => {
        let rules = "[[rule]]\nreason = \"A\"\nrule = \"true\"\nfield = /amount_minor\n";
        let v = refund(&output(GOOD), &[("schemas/refund-v1.rules.toml", rules.as_bytes())]);
        let f = is(&v, Stage::Input, Decision::Reject, "CONTRACT_ERROR", None, None);
        assert!(
            f.message.starts_with("schemas/refund-v1.rules.toml:4:9: "),
            "{}",
            f.message
        );
        v
    }
    contract_error_rules_unknown_key: "CONTRACT_ERROR" => {
        let rules = "[[rule]]\nreason = \"A\"\nrule = \"true\"\nmesage = \"m\"\n";
        let v = refund(&output(GOOD), &[("schemas/refund-v1.rules.toml", rules.as_bytes())]);
        let f = is(&v, Stage::Input, Decision::Reject, "CONTRACT_ERROR", None, None);
        assert_eq!(
            f.message,
            "schemas/refund-v1.rules.toml:4:1: unknown key `mesage` (did you mean `message`?)"
        );
        v
    }

    // ---- response
    refusal_output_status: "REFUSAL" => {
        let v = refund(&status("refusal", None), &[]);
        let f = is(&v, Stage::Response, Decision::Reject, "REFUSAL", None, None);
        assert_eq!(f.message, "status \"refusal\": the model declined");
        v
    }
    refusal_openai_chat: "REFUSAL" => {
        let record = json!({"response": {"object": "chat.completion", "choices": [{
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}]}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Reject, "REFUSAL", None, None);
        assert_eq!(f.message, "choices[0].message.refusal is set: the model declined: \"I can't help with that.\"");
        assert_eq!(v.response.as_ref().unwrap().provider, "openai-chat");
        v
    }
    content_filtered: "CONTENT_FILTERED" => {
        let v = refund(&status("incomplete", Some("content_filter")), &[]);
        let f = is(&v, Stage::Response, Decision::Reject, "CONTENT_FILTERED", None, None);
        assert_eq!(
            f.message,
            "status \"incomplete\", status_detail \"content_filter\": a content filter stopped the output"
        );
        v
    }
    content_filtered_gemini_safety: "CONTENT_FILTERED" => {
        let record = json!({"response": {"candidates": [{"content": {"parts": [], "role": "model"},
            "finishReason": "SAFETY", "index": 0}]}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Reject, "CONTENT_FILTERED", None, None);
        assert_eq!(f.message, "candidates[0].finishReason \"SAFETY\": a filter stopped the output");
        v
    }
    truncated_output: "TRUNCATED_OUTPUT" => {
        let v = refund(&status("incomplete", Some("max_output_tokens")), &[]);
        let f = is(&v, Stage::Response, Decision::Retry, "TRUNCATED_OUTPUT", None, None);
        assert_eq!(
            f.message,
            "status \"incomplete\", status_detail \"max_output_tokens\": the output hit the token limit"
        );
        v
    }
    truncated_output_anthropic_max_tokens: "TRUNCATED_OUTPUT" => {
        let record = json!({"response": {"type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "{\"order_id\": \"O-1"}],
            "stop_reason": "max_tokens"}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Retry, "TRUNCATED_OUTPUT", None, None);
        assert_eq!(f.message, "stop_reason \"max_tokens\": the output hit the token limit");
        v
    }
    malformed_tool_call: "MALFORMED_TOOL_CALL" => {
        let record = json!({"response": {"candidates": [{"content": {"parts": [], "role": "model"},
            "finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}]}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Regenerate, "MALFORMED_TOOL_CALL", None, None);
        assert_eq!(f.message, "candidates[0].finishReason \"MALFORMED_FUNCTION_CALL\": the provider rejected the tool call");
        v
    }
    incomplete: "INCOMPLETE" => {
        let v = refund(&status("incomplete", None), &[]);
        let f = is(&v, Stage::Response, Decision::Retry, "INCOMPLETE", None, None);
        assert_eq!(f.message, "status \"incomplete\": the output did not finish");
        v
    }
    incomplete_stream_without_terminal_event: "INCOMPLETE" => {
        let events = json!([
            {"type": "message_start", "message": {"type": "message", "role": "assistant", "content": []}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "{\"order_id\""}}
        ]);
        let v = refund(&json!({"response": events}).to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Retry, "INCOMPLETE", None, None);
        assert_eq!(f.message, "anthropic stream ended after 3 events without message_stop: the stream was cut");
        v
    }
    request_error_transient_retries: "REQUEST_ERROR" => {
        let v = refund(&status("request_error", Some("429")), &[]);
        let f = is(&v, Stage::Response, Decision::Retry, "REQUEST_ERROR", None, None);
        assert_eq!(
            f.message,
            "status \"request_error\", status_detail \"429\": the request failed"
        );
        v
    }
    request_error_transient_error_body: "REQUEST_ERROR" => {
        let record = json!({"response": {"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Retry, "REQUEST_ERROR", None, None);
        assert_eq!(f.message, "error: request failed with type \"overloaded_error\" (\"Overloaded\"): transient, retry");
        v
    }
    tool_error_is_error_result: "TOOL_ERROR" => {
        // an MCP tools/call whose result says isError: the tool's text, escaped
        let log = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"quota \"x\"\u0007"}],"isError":true}}"#,
        ]
        .join("\n");
        let dir = tmp(&[("captures/s.jsonl", log.as_bytes())]);
        let mut vs = verdicts(dir.path());
        assert_eq!(vs.len(), 2, "the tools/list result is no capture: {vs:#?}");
        let v = vs.remove(1);
        let f = is(&v, Stage::Response, Decision::Reject, "TOOL_ERROR", None, None);
        assert_eq!(
            f.message,
            "the tool reported an error (result.isError is true): \"quota \\\"x\\\"\\u0007\""
        );
        assert_eq!(v.id, "captures/s.jsonl#2/result");
        v
    }
    request_error_non_transient_rejects: "REQUEST_ERROR" => {
        let v = refund(&status("request_error", Some("400")), &[]);
        let f = is(&v, Stage::Response, Decision::Reject, "REQUEST_ERROR", None, None);
        assert_eq!(
            f.message,
            "status \"request_error\", status_detail \"400\": the request failed"
        );
        v
    }
    request_error_non_transient_error_body: "REQUEST_ERROR" => {
        let record = json!({"response": {"type": "error",
            "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Reject, "REQUEST_ERROR", None, None);
        assert_eq!(f.message, "error: request failed with type \"invalid_request_error\" (\"max_tokens: too large\"): not transient");
        v
    }
    no_output: "NO_OUTPUT" => {
        let v = refund(&output(" \n\t "), &[]);
        let f = is(&v, Stage::Response, Decision::Regenerate, "NO_OUTPUT", None, None);
        assert_eq!(
            f.message,
            "status \"completed\", but the output is empty: nothing to validate"
        );
        v
    }
    no_output_provider_response: "NO_OUTPUT" => {
        let record = json!({"response": {"type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "  "}], "stop_reason": "end_turn"}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Response, Decision::Regenerate, "NO_OUTPUT", None, None);
        assert_eq!(f.message, "stop_reason \"end_turn\", but the text is empty: nothing to validate");
        v
    }

    // ---- parse
    invalid_json: "INVALID_JSON" => {
        let v = refund(&output("{\n  \"order_id\" \"O-1\"\n}"), &[]);
        let f = is(&v, Stage::Parse, Decision::Regenerate, "INVALID_JSON", None, Some((2, 14)));
        assert_eq!(f.message, "expected \":\" after the object key, found \"\\\"\"");
        v
    }
    truncated_json: "TRUNCATED_JSON" => {
        let v = refund(&output("{\n  \"order_id\": \"O-1\",\n  \"amount_minor\": 50"), &[]);
        // the innermost unclosed value is the object: its span runs to the end of the text,
        // and the position is where the text was cut
        let f = is(&v, Stage::Parse, Decision::Regenerate, "TRUNCATED_JSON", None, Some((3, 21)));
        assert_eq!(
            f.message,
            "the text ends inside an object opened at 1:1: expected \",\" or \"}\", found the end of the text"
        );
        assert_eq!(f.span.map(|s| (s.start, s.end)), Some((0, 43)));
        v
    }
    duplicate_key: "DUPLICATE_KEY" => {
        let text = "{\"order_id\": \"O-1\",\n \"amount_minor\": 1,\n \"amount_minor\": 9000}";
        let v = refund(&output(text), &[]);
        let f = is(&v, Stage::Parse, Decision::Regenerate, "DUPLICATE_KEY", Some("/amount_minor"), Some((3, 2)));
        assert_eq!(f.message, "duplicate key \"amount_minor\" at /amount_minor");
        v
    }
    non_standard_number_nan: "NON_STANDARD_NUMBER" => {
        let v = refund(&output("{\"order_id\": \"O-1\", \"amount_minor\": NaN}"), &[]);
        let f = is(&v, Stage::Parse, Decision::Regenerate, "NON_STANDARD_NUMBER", None, Some((1, 37)));
        assert_eq!(f.message, "non-standard number \"NaN\": JSON has no NaN or Infinity, expected a finite number");
        v
    }
    trailing_content: "TRAILING_CONTENT" => {
        let v = refund(&output("{\"order_id\": \"O-1\", \"amount_minor\": 1}\n{\"x\": 2}"), &[]);
        let f = is(&v, Stage::Parse, Decision::Regenerate, "TRAILING_CONTENT", None, Some((2, 1)));
        assert_eq!(f.message, "expected the end of the text after the JSON value, found \"{\\\"x\\\": 2}\"");
        v
    }
    fenced_json: "FENCED_JSON" => {
        let text = "Here is the refund:\n```json\n{\"order_id\": \"O-1\", \"amount_minor\": 1}\n```";
        let v = refund(&output(text), &[]);
        // located at the value inside the fence
        let f = is(&v, Stage::Parse, Decision::Regenerate, "FENCED_JSON", None, Some((3, 1)));
        assert_eq!(f.message, "the JSON value is wrapped in a markdown code fence: expected the text to start with the value, found \"Here is the refund:\"");
        v
    }
    too_deep: "TOO_DEEP" => {
        let text = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let v = refund(&output(text), &[]);
        let f = is(&v, Stage::Parse, Decision::Regenerate, "TOO_DEEP", None, Some((1, 128)));
        assert_eq!(f.message, "nesting is too deep: expected at most 127 nested arrays and objects, found an array at level 128");
        v
    }

    // ---- schema
    schema_mismatch: "SCHEMA_MISMATCH" => {
        let text = "{\n  \"order_id\": \"O-1042\",\n  \"amount_minor\": 0\n}";
        let v = refund(&output(text), &[]);
        let f = is(&v, Stage::Schema, Decision::Regenerate, "SCHEMA_MISMATCH", Some("/amount_minor"), Some((3, 19)));
        assert_eq!(f.schema_path.as_deref(), Some("/properties/amount_minor/minimum"));
        assert_eq!(f.keyword.as_deref(), Some("minimum"));
        assert_eq!(f.span.map(|s| (s.start, s.end)), Some((44, 45)));
        assert_eq!(v.errors.len(), 1, "{:#?}", v.errors);
        v
    }
    schema_mismatch_every_keyword: "SCHEMA_MISMATCH" => {
        // one finding per violated keyword, each located; columns count characters
        let text = "{\"order_id\": \"é-1\", \"amount_minor\": \"5\", \"extra\": true}";
        let v = refund(&output(text), &[]);
        // reading order: the first value at fault decides; root-level errors come last
        is(&v, Stage::Schema, Decision::Regenerate, "SCHEMA_MISMATCH", Some("/order_id"), Some((1, 14)));
        let mut got: Vec<String> = v
            .errors
            .iter()
            .map(|f| format!(
                "{} {} {}",
                f.pointer.as_deref().unwrap(),
                f.schema_path.as_deref().unwrap(),
                f.at.unwrap(),
            ))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                " /additionalProperties 1:1",
                "/amount_minor /properties/amount_minor/type 1:37",
                "/order_id /properties/order_id/pattern 1:14",
            ]
        );
        v
    }
    schema_mismatch_any_of_best_branch_first: "SCHEMA_MISMATCH" => {
        let schema = r#"{"type": "object", "properties": {"amount": {"anyOf": [
            {"type": "string"},
            {"type": "integer", "minimum": 1},
            {"type": "object", "required": ["value"]}
        ]}}}"#;
        let dir = tmp(&[
            ("schemas/money.schema.json", schema.as_bytes()),
            ("captures/c.json", output("{\"amount\":\n   0}").as_bytes()),
        ]);
        let v = only(&dir);
        let f = is(&v, Stage::Schema, Decision::Regenerate, "SCHEMA_MISMATCH", Some("/amount"), Some((2, 4)));
        assert_eq!(f.keyword.as_deref(), Some("anyOf"));
        assert_eq!(f.schema_path.as_deref(), Some("/properties/amount/anyOf"));
        let order: Vec<usize> = f.branches.iter().map(|b| b.index).collect();
        assert_eq!(order, [1, 0, 2], "{:#?}", f.branches);
        let best = &f.branches[0].errors[0];
        assert_eq!(best.keyword.as_deref(), Some("minimum"));
        assert_eq!(best.schema_path.as_deref(), Some("/properties/amount/anyOf/1/minimum"));
        assert_eq!(best.pointer.as_deref(), Some("/amount"));
        assert_eq!(best.at.map(|a| (a.line, a.column)), Some((2, 4)));
        v
    }

    // ---- business
    intent_mismatch: "INTENT_MISMATCH" => {
        let text = "{\n  \"order_id\": \"O-1042\",\n  \"amount_minor\": 8000\n}";
        let record = json!({"output": text, "intent": {"order_id": "O-1042", "amount_minor": 5000}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Business, Decision::Recheck, "INTENT_MISMATCH", Some("/amount_minor"), Some((3, 19)));
        assert_eq!(f.message, "proposal 8000, confirmed intent 5000");
        assert_eq!(v.errors.len(), 1);
        v
    }
    intent_mismatch_structured_output_has_no_position: "INTENT_MISMATCH" => {
        let record = json!({"output": {"order_id": "O-1", "amount_minor": 8000},
                            "intent": {"amount_minor": 5000.0}});
        let v = refund(&record.to_string(), &[]);
        let f = is(&v, Stage::Business, Decision::Recheck, "INTENT_MISMATCH", Some("/amount_minor"), None);
        assert_eq!(f.message, "proposal 8000, confirmed intent 5000.0");
        v
    }
    rule_error_fails_closed: "RULE_ERROR" => {
        let rules = "[[rule]]\nreason = \"EXCEEDS_REMAINING\"\nrule = \"proposal.amount_minor <= context.order.remaining\"\nfield = \"/amount_minor\"\n";
        let record = json!({"output": GOOD, "context": {}});
        let v = refund(&record.to_string(), &[("schemas/refund-v1.rules.toml", rules.as_bytes())]);
        let f = is(&v, Stage::Business, Decision::Reject, "RULE_ERROR", Some("/amount_minor"), Some((3, 19)));
        assert_eq!(
            f.message,
            "rule 1 (EXCEEDS_REMAINING) could not be evaluated: No such key: order; fails closed"
        );
        assert_eq!(f.keyword.as_deref(), Some("rule[1]"));
        v
    }
    custom_rule_reason_with_decision_override: "EXCEEDS_REMAINING" => {
        let rules = "[[rule]]\nreason = \"NOT_AUTHORIZED\"\nrule = \"'refund' in context.actor.allowed\"\n\n\
                     [[rule]]\nreason = \"EXCEEDS_REMAINING\"\nrule = \"proposal.amount_minor <= context.order.remaining\"\n\
                     message = \"the amount exceeds what is left to refund\"\ndecision = \"recheck\"\nfield = \"/amount_minor\"\n";
        let record = json!({"output": GOOD,
            "context": {"actor": {"allowed": ["refund"]}, "order": {"remaining": 4999}},
            "intent": {"amount_minor": 1}});
        let v = refund(&record.to_string(), &[("schemas/refund-v1.rules.toml", rules.as_bytes())]);
        let f = is(&v, Stage::Business, Decision::Recheck, "EXCEEDS_REMAINING", Some("/amount_minor"), Some((3, 19)));
        assert_eq!(f.message, "the amount exceeds what is left to refund");
        assert_eq!(f.keyword.as_deref(), Some("rule[2]"));
        // the rule decides before the intent comparison
        assert_eq!(v.errors.len(), 1);
        v
    }
}

#[test]
fn custom_rule_reason_defaults_to_reject_without_field() {
    let rules = "[[rule]]\nreason = \"NOT_AUTHORIZED\"\nrule = \"'refund' in context.actor.allowed\"\nmessage = \"actor may not refund\"\n";
    let record = json!({"output": GOOD, "context": {"actor": {"allowed": []}}});
    let v = refund(
        &record.to_string(),
        &[("schemas/refund-v1.rules.toml", rules.as_bytes())],
    );
    let f = is(
        &v,
        Stage::Business,
        Decision::Reject,
        "NOT_AUTHORIZED",
        None,
        None,
    );
    assert_eq!(f.message, "actor may not refund");
}

#[test]
fn ready_capture_passes_every_stage() {
    let record = json!({"output": GOOD, "intent": {"amount_minor": 5000}});
    let v = refund(&record.to_string(), &[]);
    assert_eq!(
        (v.stage, v.decision, v.reason.clone()),
        (Stage::Ready, Decision::ReadyForCommit, None)
    );
    assert!(v.errors.is_empty());
}

// ---------------------------------------------------------------------------------------
// JSONL: one verdict per line

#[test]
fn jsonl_broken_line_gets_its_own_verdict_and_blank_lines_are_skipped() {
    let lines = [
        output(GOOD),
        String::new(),
        "{\"output\": \"{}\"".to_string(), // line 3: cut off
        "   ".to_string(),
        json!({"id": "named", "output": "{\"order_id\": \"O-1\", \"amount_minor\": 0}"})
            .to_string(),
        json!({"output": "{\"order_id\": \"O-2\", \"amount_minor\": 7}"}).to_string(),
    ];
    let text = lines.join("\n") + "\r\n";
    let dir = tmp(&[
        ("schemas/refund-v1.schema.json", REFUND.as_bytes()),
        ("captures/log.jsonl", text.as_bytes()),
    ]);
    let vs = verdicts(dir.path());
    let got: Vec<(&str, &str, Stage, Option<&str>)> = vs
        .iter()
        .map(|v| {
            (
                v.id.as_str(),
                v.source.as_str(),
                v.stage,
                v.reason.as_ref().map(Reason::as_str),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "captures/log.jsonl:1",
                "captures/log.jsonl:1",
                Stage::Ready,
                None
            ),
            (
                "captures/log.jsonl:3",
                "captures/log.jsonl:3",
                Stage::Input,
                Some("INVALID_CAPTURE")
            ),
            (
                "named",
                "captures/log.jsonl:5",
                Stage::Schema,
                Some("SCHEMA_MISMATCH")
            ),
            (
                "captures/log.jsonl:6",
                "captures/log.jsonl:6",
                Stage::Ready,
                None
            ),
        ]
    );
    let f = is(
        &vs[1],
        Stage::Input,
        Decision::Reject,
        "INVALID_CAPTURE",
        None,
        None,
    );
    assert_eq!(
        f.message,
        "record is not valid JSON at 1:16: the text ends inside an object opened at 1:1: expected \",\" or \"}\", found the end of the text"
    );
}

#[test]
fn ndjson_is_read_one_record_per_line() {
    let text = format!("{}\n{}\n", output(GOOD), output("nope"));
    let dir = tmp(&[
        ("schemas/refund-v1.schema.json", REFUND.as_bytes()),
        ("captures/sub/x.ndjson", text.as_bytes()),
    ]);
    let vs = verdicts(dir.path());
    assert_eq!(vs.len(), 2);
    assert_eq!(vs[0].id, "captures/sub/x.ndjson:1");
    assert!(vs[0].is_ready());
    is(
        &vs[1],
        Stage::Parse,
        Decision::Regenerate,
        "INVALID_JSON",
        None,
        Some((1, 1)),
    );
}

// ---------------------------------------------------------------------------------------
// $ref resolution, boolean schemas, format, hostile patterns

/// The verdicts of `captures` (contract name, output text) against `schemas`.
fn against(schemas: &[(&str, &str)], captures: &[(&str, &str)]) -> Vec<Verdict> {
    let mut files: Vec<(String, Vec<u8>)> = schemas
        .iter()
        .map(|(p, s)| (format!("schemas/{p}"), s.as_bytes().to_vec()))
        .collect();
    for (i, (contract, out)) in captures.iter().enumerate() {
        let record = json!({"id": format!("c{i}"), "contract": contract, "output": out});
        files.push((
            format!("captures/c{i}.json"),
            record.to_string().into_bytes(),
        ));
    }
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    let dir = tmp(&refs);
    verdicts(dir.path())
}

#[track_caller]
fn stages(vs: &[Verdict]) -> Vec<(Stage, Option<&str>)> {
    vs.iter()
        .map(|v| (v.stage, v.reason.as_ref().map(Reason::as_str)))
        .collect()
}

#[test]
fn ref_by_id_across_files() {
    let money = r#"{"$id": "https://example.com/money", "type": "integer", "minimum": 1}"#;
    let order =
        r#"{"type": "object", "properties": {"amount": {"$ref": "https://example.com/money"}}}"#;
    let vs = against(
        &[("money.schema.json", money), ("order.schema.json", order)],
        &[("order", "{\"amount\": 5}"), ("order", "{\"amount\": 0}")],
    );
    assert_eq!(
        stages(&vs),
        [
            (Stage::Ready, None),
            (Stage::Schema, Some("SCHEMA_MISMATCH"))
        ]
    );
    let f = &vs[1].errors[0];
    assert_eq!(f.pointer.as_deref(), Some("/amount"));
    assert_eq!(f.keyword.as_deref(), Some("minimum"));
    assert_eq!(f.at.map(|a| (a.line, a.column)), Some((1, 12)));
    // the contract can also be named by its $id
    let vs = against(
        &[("money.schema.json", money)],
        &[("https://example.com/money", "3")],
    );
    assert_eq!(stages(&vs), [(Stage::Ready, None)]);
    assert_eq!(vs[0].contract.as_deref(), Some("money"));
}

#[test]
fn ref_by_nested_id() {
    let defs = r#"{"$id": "https://example.com/defs", "$defs": {
        "currency": {"$id": "https://example.com/currency", "enum": ["KRW", "USD"]}}}"#;
    let order = r#"{"type": "object", "properties": {"currency": {"$ref": "https://example.com/currency"}}}"#;
    let vs = against(
        &[("defs.schema.json", defs), ("order.schema.json", order)],
        &[
            ("order", "{\"currency\": \"KRW\"}"),
            ("order", "{\"currency\": \"EUR\"}"),
        ],
    );
    assert_eq!(
        stages(&vs),
        [
            (Stage::Ready, None),
            (Stage::Schema, Some("SCHEMA_MISMATCH"))
        ]
    );
    assert_eq!(vs[1].errors[0].keyword.as_deref(), Some("enum"));
    assert_eq!(vs[1].errors[0].pointer.as_deref(), Some("/currency"));
}

#[test]
fn ref_by_relative_path() {
    let money = r#"{"type": "integer", "minimum": 1}"#;
    let order = r##"{"type": "object", "properties": {
        "amount": {"$ref": "common/money.json"},
        "fee": {"$ref": "order.schema.json#/$defs/fee"}},
        "$defs": {"fee": {"type": "integer", "maximum": 10}}}"##;
    let vs = against(
        &[("common/money.json", money), ("order.schema.json", order)],
        &[
            ("order", "{\"amount\": 5, \"fee\": 1}"),
            ("order", "{\"amount\": 0}"),
            ("order", "{\"fee\": 11}"),
        ],
    );
    assert_eq!(
        stages(&vs),
        [
            (Stage::Ready, None),
            (Stage::Schema, Some("SCHEMA_MISMATCH")),
            (Stage::Schema, Some("SCHEMA_MISMATCH")),
        ],
        "{vs:#?}"
    );
    assert_eq!(vs[1].errors[0].keyword.as_deref(), Some("minimum"));
    assert_eq!(vs[2].errors[0].keyword.as_deref(), Some("maximum"));
}

#[test]
fn boolean_schema_files() {
    let vs = against(
        &[("yes.schema.json", "true"), ("no.schema.json", " false\n")],
        &[
            ("yes", "{\"anything\": [1]}"),
            ("no", "{\"anything\": [1]}"),
        ],
    );
    assert_eq!(
        stages(&vs),
        [
            (Stage::Ready, None),
            (Stage::Schema, Some("SCHEMA_MISMATCH"))
        ]
    );
    is(
        &vs[1],
        Stage::Schema,
        Decision::Regenerate,
        "SCHEMA_MISMATCH",
        Some(""),
        Some((1, 1)),
    );
    assert_eq!(vs[1].errors[0].schema_path.as_deref(), Some(""));
}

#[test]
fn format_assertion_off_and_on() {
    let schema =
        r#"{"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}"#;
    let record = json!({"output": "{\"email\": \"not an email\"}"}).to_string();
    let files = |toml: &'static str| {
        tmp(&[
            ("verdict.toml", toml.as_bytes()),
            ("schemas/user.schema.json", schema.as_bytes()),
            ("captures/c.json", record.as_bytes()),
        ])
    };
    let off = only(&files(""));
    assert!(off.is_ready(), "{off:#?}");
    let off = only(&files("format_assertion = false\n"));
    assert!(off.is_ready(), "{off:#?}");
    let on = only(&files("format_assertion = true\n"));
    let f = is(
        &on,
        Stage::Schema,
        Decision::Regenerate,
        "SCHEMA_MISMATCH",
        Some("/email"),
        Some((1, 11)),
    );
    assert_eq!(f.keyword.as_deref(), Some("format"));
    assert_eq!(f.schema_path.as_deref(), Some("/properties/email/format"));
}

#[test]
fn hostile_pattern_gives_a_finding_promptly() {
    let schema = r#"{"type": "string", "pattern": "^(?:(a|a)+)(?<!b)$"}"#;
    let text = format!("\"{}!\"", "a".repeat(28));
    let start = Instant::now();
    let vs = against(&[("evil.schema.json", schema)], &[("evil", &text)]);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    // the contract could not judge the value: its fault, not the model's
    let f = is(
        &vs[0],
        Stage::Input,
        Decision::Reject,
        "CONTRACT_ERROR",
        Some(""),
        Some((1, 1)),
    );
    assert_eq!(f.schema_path.as_deref(), Some("/pattern"));
    assert_eq!(
        f.message,
        "the schema's `pattern` at /pattern exceeded the regex backtrack limit (10000) on this value, \
         so the contract cannot judge it; simplify the pattern (no lookaround or backreferences)"
    );
}
