//! AWS Bedrock Converse (`output.message` + `stopReason`), `docs/record-shapes.md#bedrock-converse`.
//!
//! Shape from the Bedrock API reference, "Converse"
//! (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html): `output.message`
//! with `role` and `content[]`, each block a union of one key: `text` (a string),
//! `toolUse` (`toolUseId`, `name`, `input`: an object, already structured),
//! `reasoningContent`, `image`, `document`, `citationsContent`, ... (not proposals);
//! `stopReason` (the AWS SDK's `StopReason` model, aws-sdk-cpp
//! `aws-cpp-sdk-bedrock-runtime/source/model/StopReason.cpp`): `end_turn`, `tool_use`,
//! `stop_sequence` (finished), `max_tokens`, `model_context_window_exceeded` (truncated),
//! `guardrail_intervened` (a guardrail blocked the prompt or the output; the text is the
//! guardrail's message and `trace.guardrail` the assessments when trace is on),
//! `content_filtered`, `malformed_tool_use`, `malformed_model_output`; `usage`
//! (`inputTokens`, `outputTokens`, `totalTokens`), `metrics.latencyMs`; boto3 dumps add
//! `ResponseMetadata` (`RequestId`). There is no model in the body.
//!
//! A `toolUse.input` that is a *string* is the text a ConverseStream's `toolUse.input`
//! deltas assembled to (see `stream`): it is text to parse strictly, not a value.

use super::{
    Adapted, Proposal, Provider, ToolCall, args_text_or_value, invalid_capture, is_truncation,
    kind, non_null, note_tool, proposal, quote, response_finding, show, str_at, tokens,
};
use crate::core::verdict::{Finding, Reason, ResponseInfo};
use serde_json::Value;

/// Whether `v` is a Converse response: it has `stopReason`, or `output.message`.
pub(crate) fn detects(v: &Value) -> bool {
    v.get("stopReason").is_some() || v.get("output").and_then(|o| o.get("message")).is_some()
}

/// Adapts a Converse response (also the one a ConverseStream assembles to).
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut info = Provider::BedrockConverse.info();
    info.usage = non_null(resp, "usage");
    info.tokens = tokens(
        resp.get("usage"),
        "inputTokens",
        "outputTokens",
        Some("totalTokens"),
    );
    let result = run(resp, tool, &mut info);
    Adapted { info, result }
}

fn run(resp: &Value, tool: Option<&str>, info: &mut ResponseInfo) -> Result<Proposal, Finding> {
    let stop = resp.get("stopReason").unwrap_or(&Value::Null);
    info.stop_reason = stop.as_str().map(str::to_owned);
    let message = match resp.get("output") {
        Some(o @ Value::Object(_)) => match o.get("message") {
            Some(m @ Value::Object(_)) => m,
            None => {
                return Err(invalid_capture(
                    "bedrock-converse `output` has no `message`: expected {\"message\": {\"role\", \"content\"}}",
                ));
            }
            Some(other) => {
                return Err(invalid_capture(format!(
                    "bedrock-converse `output.message` is {}: expected an object with `content`",
                    kind(other)
                )));
            }
        },
        None => {
            return Err(invalid_capture(
                "bedrock-converse response has no `output`: expected {\"output\": {\"message\": ...}}",
            ));
        }
        Some(other) => {
            return Err(invalid_capture(format!(
                "bedrock-converse `output` is {}: expected an object holding `message`",
                kind(other)
            )));
        }
    };
    let blocks: &[Value] = match message.get("content") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(invalid_capture(format!(
                "bedrock-converse `output.message.content` is {}: expected an array of blocks",
                kind(other)
            )));
        }
    };
    let mut calls = Vec::new();
    let mut text: Option<String> = None;
    for block in blocks {
        if let Some(t) = str_at(block, "text") {
            text.get_or_insert_with(String::new).push_str(t);
        } else if let Some(u) = block.get("toolUse").filter(|u| u.is_object()) {
            calls.push(ToolCall {
                name: str_at(u, "name").map(str::to_owned),
                id: str_at(u, "toolUseId").map(str::to_owned),
                args: args_text_or_value(u.get("input")),
            });
        }
    }
    note_tool(info, &calls, tool);
    let said = |s: &str| format!("stopReason {}", quote(s));
    match stop.as_str() {
        Some(s @ ("end_turn" | "tool_use" | "stop_sequence")) => proposal(
            info,
            &calls,
            text,
            tool,
            &said(s),
            "the text of output.message.content",
        ),
        Some(s) if is_truncation(s) => Err(response_finding(
            Reason::TRUNCATED_OUTPUT,
            format!("{}: the output hit the token limit", said(s)),
        )),
        Some(s @ "guardrail_intervened") => {
            let mut m = format!("{}: a guardrail blocked the prompt or the output", said(s));
            let blocked = guardrail_blocks(resp.get("trace").and_then(|t| t.get("guardrail")));
            if !blocked.is_empty() {
                m.push_str(&format!(" ({})", blocked.join(", ")));
            }
            if let Some(t) = text.as_deref().filter(|t| !t.trim().is_empty()) {
                m.push_str(&format!("; the guardrail's message: {}", quote(t)));
            }
            Err(response_finding(Reason::CONTENT_FILTERED, m))
        }
        Some(s @ "content_filtered") => Err(response_finding(
            Reason::CONTENT_FILTERED,
            format!("{}: a content filter stopped the output", said(s)),
        )),
        Some(s @ "malformed_tool_use") => Err(response_finding(
            Reason::MALFORMED_TOOL_CALL,
            format!("{}: the model's tool call could not be parsed", said(s)),
        )),
        Some(s @ "malformed_model_output") => Err(response_finding(
            Reason::MALFORMED_TOOL_CALL,
            format!("{}: the model's output could not be parsed", said(s)),
        )),
        Some(s) => Err(response_finding(
            Reason::INCOMPLETE,
            format!("{} is not a normal finish", said(s)),
        )),
        None => Err(response_finding(
            Reason::INCOMPLETE,
            match resp.get("stopReason") {
                None => "the response has no stopReason: it did not finish".to_owned(),
                Some(v) => format!("stopReason is {}: the response did not finish", show(v)),
            },
        )),
    }
}

/// What a guardrail trace blocked: every object under `trace.guardrail` whose `action` is
/// `BLOCKED` (content filters, denied topics, words, sensitive information), named by its
/// `type` (else `name`, else `match`), with its `confidence` when given; sorted, without
/// repeats, at most 8. The trace is optional (only with `trace: enabled`).
fn guardrail_blocks(trace: Option<&Value>) -> Vec<String> {
    fn walk(v: &Value, depth: u32, out: &mut Vec<String>) {
        if depth > 12 {
            return;
        }
        match v {
            Value::Object(m) => {
                if m.get("action").and_then(Value::as_str) == Some("BLOCKED") {
                    let name = ["type", "name", "match"]
                        .iter()
                        .find_map(|k| m.get(*k).and_then(Value::as_str))
                        .unwrap_or("(unnamed)");
                    let mut label = crate::core::escape::quote(name, 60);
                    if let Some(c) = m.get("confidence").and_then(Value::as_str) {
                        label.push_str(&format!(" confidence {}", quote(c)));
                    }
                    out.push(label);
                }
                for x in m.values() {
                    walk(x, depth + 1, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, depth + 1, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(t) = trace {
        walk(t, 0, &mut out);
    }
    out.sort();
    out.dedup();
    out.truncate(8);
    out
}

#[cfg(test)]
mod tests {
    use super::super::adapt_response;
    use super::super::test_support::*;
    use crate::core::verdict::{Decision, Reason, Stage, TokenUsage};
    use serde_json::{Value, json};

    /// The documented response structure (the Amazon Nova user guide's
    /// complete response schema), values made up.
    fn converse(content: Value, stop: &str) -> Value {
        json!({
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": {"inputTokens": 30, "outputTokens": 12, "totalTokens": 42},
            "metrics": {"latencyMs": 410},
            "ResponseMetadata": {"RequestId": "5d7c1c1e-6f2a-4b61-9a0e-2f3c1f0b9a11", "HTTPStatusCode": 200}
        })
    }

    fn tool_use(id: &str, name: &str, input: Value) -> Value {
        json!({"toolUse": {"toolUseId": id, "name": name, "input": input}})
    }

    #[test]
    fn finished_stop_reasons_give_the_text_and_info() {
        for stop in ["end_turn", "stop_sequence"] {
            let a = adapt_response(
                &converse(
                    json!([{"reasoningContent": {"reasoningText": {"text": "thinking"}}},
                           {"text": "{\"title\":"}, {"text": "\"x\"}"}]),
                    stop,
                ),
                None,
                None,
            );
            text(&a, "{\"title\":\"x\"}");
            assert_eq!(a.info.provider, "bedrock-converse");
            assert_eq!(a.info.stop_reason.as_deref(), Some(stop));
            assert_eq!(
                a.info.usage,
                Some(json!({"inputTokens": 30, "outputTokens": 12, "totalTokens": 42}))
            );
            assert_eq!(
                a.info.tokens,
                Some(TokenUsage {
                    input_tokens: Some(30),
                    output_tokens: Some(12),
                    total_tokens: Some(42)
                })
            );
            assert_eq!(a.info.model, None);
            assert!(!a.info.stream);
        }
    }

    #[test]
    fn tool_use_input_is_structured_and_named() {
        let c = converse(
            json!([{"text": "Filing it."}, tool_use("tooluse_1", "create_ticket", json!({"title": "x", "priority": "low"}))]),
            "tool_use",
        );
        let a = adapt_response(&c, None, None);
        structured(&a, json!({"title": "x", "priority": "low"}));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        let two = converse(
            json!([
                tool_use("tooluse_1", "lookup", json!({})),
                tool_use("tooluse_2", "create_ticket", json!({"a": 1}))
            ]),
            "tool_use",
        );
        let f = invalid(&adapt_response(&two, None, None));
        assert_eq!(
            f.message,
            "2 tool calls (\"lookup\" (tooluse_1), \"create_ticket\" (tooluse_2)) and no `tool` key: the proposal is ambiguous"
        );
        structured(
            &adapt_response(&two, None, Some("create_ticket")),
            json!({"a": 1}),
        );
        structured(&adapt_response(&two, None, Some("tooluse_1")), json!({}));
    }

    #[test]
    fn truncation_values() {
        for stop in ["max_tokens", "model_context_window_exceeded"] {
            let a = adapt_response(&converse(json!([{"text": "{\"ti"}]), stop), None, None);
            let f = fails(
                &a,
                Stage::Response,
                Reason::TRUNCATED_OUTPUT,
                Decision::Retry,
            );
            assert_eq!(
                f.message,
                format!("stopReason \"{stop}\": the output hit the token limit")
            );
            assert_eq!(a.info.stop_reason.as_deref(), Some(stop));
        }
    }

    #[test]
    fn guardrail_names_what_it_blocked() {
        // the guardrail block of the Bedrock Converse API reference, verbatim
        let v = json!({"output": {"message": {"content": [{"text": "Blocked."}]}}, "stopReason": "guardrail_intervened", "usage": {"inputTokens": 12, "outputTokens": 0}, "trace": {"guardrail": {"inputAssessment": {"gr-123": {"contentPolicy": {"filters": [{"type": "PROMPT_ATTACK", "confidence": "HIGH", "action": "BLOCKED"}]}}}}}});
        let a = adapt_response(&v, None, None);
        let f = fails(
            &a,
            Stage::Response,
            Reason::CONTENT_FILTERED,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "stopReason \"guardrail_intervened\": a guardrail blocked the prompt or the output \
             (\"PROMPT_ATTACK\" confidence \"HIGH\"); the guardrail's message: \"Blocked.\""
        );
        assert_eq!(
            a.info.tokens,
            Some(TokenUsage {
                input_tokens: Some(12),
                output_tokens: Some(0),
                total_tokens: None
            })
        );
        // without a trace
        let a = adapt_response(
            &converse(json!([{"text": "Sorry, blocked."}]), "guardrail_intervened"),
            None,
            None,
        );
        let f = fails_with(&a, Reason::CONTENT_FILTERED);
        assert_eq!(
            f.message,
            "stopReason \"guardrail_intervened\": a guardrail blocked the prompt or the output; \
             the guardrail's message: \"Sorry, blocked.\""
        );
    }

    #[test]
    fn content_filtered() {
        let a = adapt_response(&converse(json!([]), "content_filtered"), None, None);
        let f = fails(
            &a,
            Stage::Response,
            Reason::CONTENT_FILTERED,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "stopReason \"content_filtered\": a content filter stopped the output"
        );
    }

    #[test]
    fn malformed_values() {
        for (stop, what) in [
            ("malformed_tool_use", "tool call"),
            ("malformed_model_output", "output"),
        ] {
            let a = adapt_response(
                &converse(json!([tool_use("t", "create_ticket", json!({}))]), stop),
                None,
                None,
            );
            let f = fails(
                &a,
                Stage::Response,
                Reason::MALFORMED_TOOL_CALL,
                Decision::Regenerate,
            );
            assert_eq!(
                f.message,
                format!("stopReason \"{stop}\": the model's {what} could not be parsed")
            );
            assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        }
    }

    #[test]
    fn unknown_or_missing_stop_reason_is_incomplete() {
        let a = adapt_response(&converse(json!([{"text": "{}"}]), "paused"), None, None);
        let f = fails(&a, Stage::Response, Reason::INCOMPLETE, Decision::Retry);
        assert_eq!(f.message, "stopReason \"paused\" is not a normal finish");
        let mut v = converse(json!([{"text": "{}"}]), "x");
        v.as_object_mut().map(|m| m.remove("stopReason"));
        let f = fails_with(&adapt_response(&v, None, None), Reason::INCOMPLETE);
        assert_eq!(
            f.message,
            "the response has no stopReason: it did not finish"
        );
        v["stopReason"] = Value::Null;
        let f = fails_with(&adapt_response(&v, None, None), Reason::INCOMPLETE);
        assert_eq!(f.message, "stopReason is null: the response did not finish");
    }

    #[test]
    fn empty_text_is_no_output() {
        let a = adapt_response(&converse(json!([{"text": " "}]), "end_turn"), None, None);
        let f = fails(&a, Stage::Response, Reason::NO_OUTPUT, Decision::Regenerate);
        assert_eq!(
            f.message,
            "stopReason \"end_turn\", but the text of output.message.content is empty: nothing to validate"
        );
    }

    #[test]
    fn hostile_shapes_are_one_invalid_capture() {
        let cases = [
            (
                json!({"output": null, "stopReason": "end_turn"}),
                "bedrock-converse `output` is null: expected an object holding `message`",
            ),
            (
                json!({"stopReason": "end_turn"}),
                "bedrock-converse response has no `output`: expected {\"output\": {\"message\": ...}}",
            ),
            (
                json!({"output": {}, "stopReason": "end_turn"}),
                "bedrock-converse `output` has no `message`: expected {\"message\": {\"role\", \"content\"}}",
            ),
            (
                json!({"output": {"message": "hi"}, "stopReason": "end_turn"}),
                "bedrock-converse `output.message` is a string: expected an object with `content`",
            ),
            (
                json!({"output": {"message": {"content": {"text": "x"}}}, "stopReason": "end_turn"}),
                "bedrock-converse `output.message.content` is an object: expected an array of blocks",
            ),
        ];
        for (v, msg) in cases {
            let a = adapt_response(&v, None, None);
            assert_eq!(a.info.provider, "bedrock-converse", "{v}");
            assert_eq!(invalid(&a).message, msg, "{v}");
        }
    }
}
