//! Cohere v2 chat (`message` + an upper-case `finish_reason`), `docs/record-shapes.md#cohere`.
//!
//! Shape from the Cohere API reference, "Chat" v2 (docs.cohere.com/reference/chat) and the
//! SDK types (github.com/cohere-ai/cohere-python `src/cohere/types/chat_finish_reason.py`):
//! `{id, finish_reason, message: {role: "assistant", content: [{type: "text", text}],
//! tool_plan, tool_calls: [{id, type: "function", function: {name, arguments}}], citations},
//! usage: {billed_units, tokens}}`. Tool-call `arguments` are a JSON **string** (parsed
//! strictly); `message.content` may be absent (a tool-call turn); `tool_plan` is the
//! model's commentary, not a proposal. `finish_reason` (an open set): `COMPLETE`,
//! `STOP_SEQUENCE`, `TOOL_CALL` (finished), `MAX_TOKENS`, `ERROR`, `TIMEOUT`.

use super::{
    Adapted, Proposal, Provider, function_calls, invalid_capture, is_truncation, kind, non_null,
    note_tool, proposal, quote, response_finding, show, str_at, tokens,
};
use crate::core::verdict::{Decision, Finding, Reason, ResponseInfo};
use serde_json::Value;

/// Whether `v` is a Cohere v2 chat response: it has `message` and a `finish_reason` in
/// upper case (letters, digits and `_`, at least one letter), which OpenAI-shaped bodies
/// never have.
pub(crate) fn detects(v: &Value) -> bool {
    v.get("message").is_some() && str_at(v, "finish_reason").is_some_and(is_upper_case)
}

fn is_upper_case(s: &str) -> bool {
    s.chars().any(|c| c.is_ascii_uppercase())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Adapts a v2 chat response (also the one a v2 chat stream assembles to, see `stream`).
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut info = Provider::Cohere.info();
    info.usage = non_null(resp, "usage");
    let usage = resp.get("usage");
    info.tokens = tokens(
        usage.and_then(|u| u.get("tokens")),
        "input_tokens",
        "output_tokens",
        None,
    )
    .or_else(|| {
        tokens(
            usage.and_then(|u| u.get("billed_units")),
            "input_tokens",
            "output_tokens",
            None,
        )
    });
    let result = run(resp, tool, &mut info);
    Adapted { info, result }
}

fn run(resp: &Value, tool: Option<&str>, info: &mut ResponseInfo) -> Result<Proposal, Finding> {
    let finish = resp.get("finish_reason").unwrap_or(&Value::Null);
    info.stop_reason = finish.as_str().map(str::to_owned);
    let message = match resp.get("message") {
        Some(m @ Value::Object(_)) => m,
        None => {
            return Err(invalid_capture(
                "cohere response has no `message`: expected {\"role\", \"content\", \"tool_calls\"}",
            ));
        }
        Some(other) => {
            return Err(invalid_capture(format!(
                "cohere `message` is {}: expected an object",
                kind(other)
            )));
        }
    };
    let text = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::Array(blocks)) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| str_at(b, "type") == Some("text"))
                .filter_map(|b| str_at(b, "text"))
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        Some(other) => {
            return Err(invalid_capture(format!(
                "cohere `message.content` is {}: expected an array of content blocks \
                 ({{\"type\": \"text\", \"text\": ...}})",
                kind(other)
            )));
        }
    };
    let calls = function_calls(message, "cohere")?;
    note_tool(info, &calls, tool);
    let said = |s: &str| format!("finish_reason {}", quote(s));
    match finish.as_str() {
        Some(f @ ("COMPLETE" | "STOP_SEQUENCE" | "TOOL_CALL")) => proposal(
            info,
            &calls,
            text,
            tool,
            &said(f),
            "the text of message.content",
        ),
        Some(f) if is_truncation(f) => Err(response_finding(
            Reason::TRUNCATED_OUTPUT,
            format!("{}: the output hit the token limit", said(f)),
        )),
        Some(f @ "TIMEOUT") => Err(response_finding(
            Reason::REQUEST_ERROR,
            format!("{}: the request timed out: transient, retry", said(f)),
        )
        .with_decision(Decision::Retry)),
        Some(f @ "ERROR") => Err(response_finding(
            Reason::REQUEST_ERROR,
            format!("{}: the generation failed: not transient", said(f)),
        )),
        Some(f) => Err(response_finding(
            Reason::INCOMPLETE,
            format!("{} is not a normal finish", said(f)),
        )),
        None => Err(response_finding(
            Reason::INCOMPLETE,
            format!(
                "finish_reason is {}: the response did not finish",
                show(finish)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Adapted, adapt_response};
    use crate::core::verdict::{Decision, Reason, Stage, TokenUsage};
    use serde_json::{Value, json};

    /// The response shape of Cohere's v2 Chat API reference (docs.cohere.com), values made up.
    fn chat(message: Value, finish: &str) -> Value {
        json!({
            "id": "c14c80c3-18eb-4519-9460-6c92edd8cfb4",
            "finish_reason": finish,
            "message": message,
            "usage": {"billed_units": {"input_tokens": 5, "output_tokens": 10},
                      "tokens": {"input_tokens": 71, "output_tokens": 10}}
        })
    }

    fn text_message(t: &str) -> Value {
        json!({"role": "assistant", "content": [{"type": "text", "text": t}]})
    }

    fn tool_message(calls: Value) -> Value {
        json!({"role": "assistant", "tool_plan": "I will file a ticket.", "tool_calls": calls})
    }

    fn call(id: &str, name: &str, args: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
    }

    fn run(v: &Value) -> Adapted {
        adapt_response(v, None, None)
    }

    #[test]
    fn finished_values_give_the_text_and_info() {
        for f in ["COMPLETE", "STOP_SEQUENCE"] {
            let a = run(&chat(text_message("{\"title\":\"x\"}"), f));
            text(&a, "{\"title\":\"x\"}");
            assert_eq!(a.info.provider, "cohere");
            assert_eq!(a.info.stop_reason.as_deref(), Some(f));
            assert_eq!(
                a.info.tokens,
                Some(TokenUsage {
                    input_tokens: Some(71),
                    output_tokens: Some(10),
                    total_tokens: None
                })
            );
        }
        // only billed_units (counts as floats, as the SDK types them)
        let mut v = chat(text_message("{}"), "COMPLETE");
        v["usage"] = json!({"billed_units": {"input_tokens": 5.0, "output_tokens": 2.0}});
        assert_eq!(
            run(&v).info.tokens,
            Some(TokenUsage {
                input_tokens: Some(5),
                output_tokens: Some(2),
                total_tokens: None
            })
        );
    }

    #[test]
    fn tool_call_arguments_are_text() {
        let a = run(&chat(
            tool_message(json!([call(
                "create_ticket_1",
                "create_ticket",
                "{\"title\":\"x\",\"priority\":\"low\"}"
            )])),
            "TOOL_CALL",
        ));
        text(&a, "{\"title\":\"x\",\"priority\":\"low\"}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        let two = chat(
            tool_message(json!([
                call("c1", "lookup", "{}"),
                call("c2", "create_ticket", "{\"a\":1}")
            ])),
            "TOOL_CALL",
        );
        let f = invalid(&run(&two));
        assert_eq!(
            f.message,
            "2 tool calls (\"lookup\" (c1), \"create_ticket\" (c2)) and no `tool` key: the proposal is ambiguous"
        );
        text(&adapt_response(&two, None, Some("c2")), "{\"a\":1}");
    }

    #[test]
    fn max_tokens_is_truncated() {
        let a = run(&chat(text_message("{\"ti"), "MAX_TOKENS"));
        let f = fails(
            &a,
            Stage::Response,
            Reason::TRUNCATED_OUTPUT,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "finish_reason \"MAX_TOKENS\": the output hit the token limit"
        );
    }

    #[test]
    fn timeout_is_a_transient_request_error_and_error_is_not() {
        let f = fails(
            &run(&chat(text_message(""), "TIMEOUT")),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "finish_reason \"TIMEOUT\": the request timed out: transient, retry"
        );
        let f = fails(
            &run(&chat(text_message(""), "ERROR")),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "finish_reason \"ERROR\": the generation failed: not transient"
        );
    }

    #[test]
    fn unknown_finish_is_incomplete_and_empty_is_no_output() {
        let f = fails_with(
            &run(&chat(text_message("{}"), "USER_CANCEL")),
            Reason::INCOMPLETE,
        );
        assert_eq!(
            f.message,
            "finish_reason \"USER_CANCEL\" is not a normal finish"
        );
        // no content at all (a tool-call turn without calls)
        let f = fails_with(
            &run(&chat(json!({"role": "assistant"}), "COMPLETE")),
            Reason::NO_OUTPUT,
        );
        assert_eq!(
            f.message,
            "finish_reason \"COMPLETE\", but the text of message.content is empty: nothing to validate"
        );
        // forced on a body without finish_reason
        let a = adapt_response(
            &json!({"message": text_message("{}")}),
            Some("cohere"),
            None,
        );
        let f = fails_with(&a, Reason::INCOMPLETE);
        assert_eq!(
            f.message,
            "finish_reason is null: the response did not finish"
        );
    }

    #[test]
    fn detection_needs_an_upper_case_finish_reason() {
        assert_eq!(
            run(&chat(json!({"role": "assistant"}), "COMPLETE"))
                .info
                .provider,
            "cohere"
        );
        // lower case: not Cohere (and no other shape)
        let a = run(&json!({"message": text_message("{}"), "finish_reason": "complete"}));
        assert_eq!(a.info.provider, "unknown");
        invalid(&a);
    }

    #[test]
    fn hostile_shapes_are_one_invalid_capture() {
        let cases = [
            (
                chat(
                    json!({"role": "assistant", "content": "{\"title\":\"x\"}"}),
                    "COMPLETE",
                ),
                "cohere `message.content` is a string: expected an array of content blocks ({\"type\": \"text\", \"text\": ...})",
            ),
            (
                chat(json!("hi"), "COMPLETE"),
                "cohere `message` is a string: expected an object",
            ),
            (
                chat(json!({"tool_calls": "x"}), "TOOL_CALL"),
                "cohere `message.tool_calls` is a string: expected an array",
            ),
        ];
        for (v, msg) in cases {
            let a = run(&v);
            assert_eq!(a.info.provider, "cohere", "{v}");
            assert_eq!(invalid(&a).message, msg, "{v}");
        }
    }
}
