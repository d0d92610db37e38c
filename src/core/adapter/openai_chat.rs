//! OpenAI Chat Completions (`"object": "chat.completion"`).
//!
//! Shape from the API reference, "The chat completion object"
//! (platform.openai.com/docs/api-reference/chat/object): `choices[].message` with
//! `content` (string or null), `refusal` (string or null), `tool_calls[]`
//! (`{id, type: "function", function: {name, arguments}}`, `arguments` a JSON *string*),
//! the deprecated `function_call` (`{name, arguments}`); `choices[].finish_reason` one of
//! `stop`, `length`, `tool_calls`, `content_filter`, `function_call`; `model`; `usage`.
//!
//! Only the first choice is read (`n > 1` requests are not a proposal source).

use super::{
    Adapted, Proposal, Provider, ToolCall, args_text_or_value, invalid_capture, non_null,
    note_tool, proposal, quote, response_finding, show, str_at, tokens,
};
use crate::core::verdict::{Finding, Reason, ResponseInfo};
use serde_json::Value;

/// OpenAI's own `finish_reason` values ("The chat completion object"); any other value
/// marks an OpenAI-compatible server (`docs/record-shapes.md#detection`).
pub(crate) const OPENAI_FINISH_REASONS: [&str; 5] = [
    "stop",
    "length",
    "tool_calls",
    "content_filter",
    "function_call",
];

/// A variant's reading of a `finish_reason` outside OpenAI's set (the value and the
/// choice); `None` leaves it `INCOMPLETE`.
pub(crate) type ExtraFinish<'a> = &'a dyn Fn(&str, &Value) -> Option<Finding>;

/// Adapts a chat completion (also the one a stream of `chat.completion.chunk`s assembles to).
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    adapt_as(Provider::OpenAiChat, resp, tool, &|_, _| None)
}

/// The Chat rules under the name of `provider` (a Chat variant: Azure OpenAI, an
/// OpenAI-compatible server), with `extra` reading the finish reasons OpenAI does not have.
pub(crate) fn adapt_as(
    provider: Provider,
    resp: &Value,
    tool: Option<&str>,
    extra: ExtraFinish<'_>,
) -> Adapted {
    let mut info = provider.info();
    info.model = str_at(resp, "model").map(str::to_owned);
    info.usage = non_null(resp, "usage");
    info.tokens = tokens(
        resp.get("usage"),
        "prompt_tokens",
        "completion_tokens",
        Some("total_tokens"),
    );
    let result = run(resp, tool, &mut info, extra);
    Adapted { info, result }
}

/// The tool calls of a message: `tool_calls[].function` and the deprecated `function_call`.
fn calls_of(message: &Value) -> Vec<ToolCall> {
    let mut calls: Vec<ToolCall> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let f = c.get("function").unwrap_or(&Value::Null);
            ToolCall {
                name: str_at(f, "name").map(str::to_owned),
                id: str_at(c, "id").map(str::to_owned),
                args: args_text_or_value(f.get("arguments")),
            }
        })
        .collect();
    if let Some(f) = message.get("function_call").filter(|f| f.is_object()) {
        calls.push(ToolCall {
            name: str_at(f, "name").map(str::to_owned),
            id: None,
            args: args_text_or_value(f.get("arguments")),
        });
    }
    calls
}

fn run(
    resp: &Value,
    tool: Option<&str>,
    info: &mut ResponseInfo,
    extra: ExtraFinish<'_>,
) -> Result<Proposal, Finding> {
    let Some(choices) = resp.get("choices").and_then(Value::as_array) else {
        return Err(invalid_capture(format!(
            "{} response has no `choices` array",
            info.provider
        )));
    };
    let Some(choice) = choices.first() else {
        return Err(response_finding(
            Reason::INCOMPLETE,
            "choices is empty: the completion holds no message",
        ));
    };
    let finish = choice.get("finish_reason").unwrap_or(&Value::Null);
    info.stop_reason = finish.as_str().map(str::to_owned);
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return Err(invalid_capture("choices[0] has no `message` object"));
    };
    let calls = calls_of(message);
    note_tool(info, &calls, tool);

    if let Some(r) = message.get("refusal").filter(|r| !r.is_null()) {
        let said = r.as_str().map_or_else(|| show(r), quote);
        return Err(response_finding(
            Reason::REFUSAL,
            format!("choices[0].message.refusal is set: the model declined: {said}"),
        ));
    }
    let text = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(invalid_capture(format!(
                "choices[0].message.content is {}: expected a string or null",
                super::kind(other)
            )));
        }
    };
    match finish.as_str() {
        Some(f @ ("stop" | "tool_calls" | "function_call")) => proposal(
            info,
            &calls,
            text,
            tool,
            &format!("finish_reason {}", quote(f)),
            "choices[0].message.content",
        ),
        Some(f) if super::is_truncation(f) => Err(response_finding(
            Reason::TRUNCATED_OUTPUT,
            format!(
                "choices[0].finish_reason {}: the output hit the token limit",
                quote(f)
            ),
        )),
        Some(f @ "content_filter") => Err(response_finding(
            Reason::CONTENT_FILTERED,
            format!(
                "choices[0].finish_reason {}: a content filter stopped the output",
                quote(f)
            ),
        )),
        Some(f) => Err(extra(f, choice).unwrap_or_else(|| {
            response_finding(
                Reason::INCOMPLETE,
                format!(
                    "choices[0].finish_reason {} is not a normal finish",
                    quote(f)
                ),
            )
        })),
        None => Err(response_finding(
            Reason::INCOMPLETE,
            format!(
                "choices[0].finish_reason is {}: the completion did not finish",
                show(finish)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Proposal, adapt_response};
    use crate::core::verdict::{Decision, Reason, Stage};
    use serde_json::{Value, json};

    fn completion(message: Value, finish: Value) -> Value {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1741569952,
            "model": "gpt-4.1-2025-04-14",
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}
        })
    }

    fn msg(content: Value) -> Value {
        json!({"role": "assistant", "content": content, "refusal": null, "annotations": []})
    }

    fn tool_call(id: &str, name: &str, args: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
    }

    #[test]
    fn stop_gives_the_content_and_info() {
        let a = adapt_response(
            &completion(msg(json!("{\"title\":\"x\"}")), json!("stop")),
            None,
            None,
        );
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "openai-chat");
        assert_eq!(a.info.stop_reason.as_deref(), Some("stop"));
        assert_eq!(a.info.model.as_deref(), Some("gpt-4.1-2025-04-14"));
        assert_eq!(
            a.info.usage,
            Some(json!({"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}))
        );
        assert_eq!(
            a.info.tokens,
            Some(crate::core::verdict::TokenUsage {
                input_tokens: Some(19),
                output_tokens: Some(10),
                total_tokens: Some(29)
            })
        );
        assert_eq!(a.info.tool, None);
        assert!(!a.info.stream);
    }

    #[test]
    fn tool_calls_are_the_proposal_as_text() {
        let mut m = msg(json!("Let me file that."));
        m["tool_calls"] = json!([tool_call(
            "call_1",
            "create_ticket",
            "{\"title\":\"x\",\"priority\":\"low\"}"
        )]);
        let a = adapt_response(&completion(m, json!("tool_calls")), None, None);
        text(&a, "{\"title\":\"x\",\"priority\":\"low\"}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn several_tool_calls_need_a_tool_key() {
        let mut m = msg(Value::Null);
        m["tool_calls"] = json!([
            tool_call("call_1", "lookup", "{}"),
            tool_call("call_2", "create_ticket", "{\"a\":1}")
        ]);
        let c = completion(m, json!("tool_calls"));
        let f = invalid(&adapt_response(&c, None, None));
        assert!(
            f.message
                .contains("2 tool calls (\"lookup\" (call_1), \"create_ticket\" (call_2))"),
            "{}",
            f.message
        );
        let a = adapt_response(&c, None, Some("create_ticket"));
        text(&a, "{\"a\":1}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        let f = invalid(&adapt_response(&c, None, Some("create_tiket")));
        assert_eq!(f.hint.as_deref(), Some("did you mean `create_ticket`?"));
    }

    #[test]
    fn tool_key_without_calls_is_invalid_capture() {
        let f = invalid(&adapt_response(
            &completion(msg(json!("{}")), json!("stop")),
            None,
            Some("x"),
        ));
        assert!(f.message.contains("holds no tool call"));
    }

    #[test]
    fn legacy_function_call() {
        let mut m = msg(Value::Null);
        m["function_call"] = json!({"name": "create_ticket", "arguments": "{\"b\":2}"});
        let a = adapt_response(&completion(m, json!("function_call")), None, None);
        text(&a, "{\"b\":2}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn length_is_truncated() {
        let mut m = msg(json!("{\"title\":\"x"));
        m["tool_calls"] = json!([tool_call("call_1", "create_ticket", "{\"ti")]);
        let a = adapt_response(&completion(m, json!("length")), None, None);
        let f = fails(
            &a,
            Stage::Response,
            Reason::TRUNCATED_OUTPUT,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"length\": the output hit the token limit"
        );
        assert_eq!(a.info.stop_reason.as_deref(), Some("length"));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn content_filter() {
        let a = adapt_response(
            &completion(msg(Value::Null), json!("content_filter")),
            None,
            None,
        );
        fails(
            &a,
            Stage::Response,
            Reason::CONTENT_FILTERED,
            Decision::Reject,
        );
    }

    #[test]
    fn refusal_is_never_repaired() {
        let mut m = msg(Value::Null);
        m["refusal"] = json!("I'm sorry, I can't help with that.");
        let a = adapt_response(&completion(m, json!("stop")), None, None);
        let f = fails(&a, Stage::Response, Reason::REFUSAL, Decision::Reject);
        assert!(
            f.message.contains("\"I'm sorry, I can't help with that.\""),
            "{}",
            f.message
        );
    }

    #[test]
    fn null_or_odd_finish_reason_is_incomplete() {
        let a = adapt_response(&completion(msg(json!("{}")), Value::Null), None, None);
        let f = fails_with(&a, Reason::INCOMPLETE);
        assert!(f.message.contains("finish_reason is null"), "{}", f.message);
        let a = adapt_response(&completion(msg(json!("{}")), json!("paused")), None, None);
        fails_with(&a, Reason::INCOMPLETE);
        assert_eq!(a.info.stop_reason.as_deref(), Some("paused"));
    }

    #[test]
    fn empty_content_is_no_output() {
        for c in [json!(""), json!("  \n"), Value::Null] {
            let a = adapt_response(&completion(msg(c), json!("stop")), None, None);
            let f = fails(&a, Stage::Response, Reason::NO_OUTPUT, Decision::Regenerate);
            assert!(
                f.message
                    .starts_with("finish_reason \"stop\", but choices[0].message.content is empty"),
                "{}",
                f.message
            );
        }
        let mut m = msg(Value::Null);
        m["tool_calls"] = json!([tool_call("call_1", "create_ticket", " ")]);
        let a = adapt_response(&completion(m, json!("tool_calls")), None, None);
        let f = fails_with(&a, Reason::NO_OUTPUT);
        assert!(
            f.message
                .contains("\"create_ticket\" (call_1) has empty arguments"),
            "{}",
            f.message
        );
    }

    #[test]
    fn malformed_shapes() {
        invalid(&adapt_response(
            &json!({"object": "chat.completion"}),
            None,
            None,
        ));
        fails_with(
            &adapt_response(
                &json!({"object": "chat.completion", "choices": []}),
                None,
                None,
            ),
            Reason::INCOMPLETE,
        );
        invalid(&adapt_response(
            &json!({"object": "chat.completion", "choices": [{"finish_reason": "stop"}]}),
            None,
            None,
        ));
        invalid(&adapt_response(
            &completion(msg(json!(3)), json!("stop")),
            None,
            None,
        ));
        // structured arguments from an OpenAI-compatible server are kept structured
        let mut m = msg(Value::Null);
        m["tool_calls"] = json!([{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]);
        let a = adapt_response(&completion(m, json!("tool_calls")), None, None);
        assert_eq!(a.result, Ok(Proposal::Structured(json!({"a": 1}))));
    }
}
