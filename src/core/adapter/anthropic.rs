//! Anthropic Messages (`"type": "message"`).
//!
//! Shape from the Messages API reference (docs.anthropic.com/en/api/messages) and
//! "Handling stop reasons" (docs.anthropic.com/en/docs/build-with-claude/handling-stop-reasons):
//! `content[]` blocks `text` (`text`) and `tool_use` (`id`, `name`, `input`: an object,
//! already structured); other blocks (`thinking`, `server_tool_use`, ...) are not proposals.
//! `stop_reason`: `end_turn`, `stop_sequence`, `tool_use` (finished); `max_tokens`,
//! `model_context_window_exceeded` (truncated); `refusal`; `pause_turn` (a server-tool loop
//! paused; the turn must be continued). `model`, `usage`.
//!
//! A `tool_use.input` that is a *string* is the text a stream's `input_json_delta`
//! fragments assembled to (see `stream`): it is text to parse strictly, not a value.

use super::{
    Adapted, Proposal, Provider, ToolCall, args_text_or_value, invalid_capture, is_truncation,
    non_null, note_tool, proposal, quote, response_finding, show, str_at, tokens,
};
use crate::core::verdict::{Finding, Reason, ResponseInfo};
use serde_json::Value;

/// Adapts a Message (also the one a stream of Messages events assembles to).
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut info = Provider::Anthropic.info();
    info.model = str_at(resp, "model").map(str::to_owned);
    info.usage = non_null(resp, "usage");
    info.tokens = tokens(resp.get("usage"), "input_tokens", "output_tokens", None);
    let result = run(resp, tool, &mut info);
    Adapted { info, result }
}

fn run(resp: &Value, tool: Option<&str>, info: &mut ResponseInfo) -> Result<Proposal, Finding> {
    let stop = resp.get("stop_reason").unwrap_or(&Value::Null);
    info.stop_reason = stop.as_str().map(str::to_owned);
    let blocks: &[Value] = match resp.get("content") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(invalid_capture(format!(
                "anthropic `content` is {}: expected an array of blocks",
                super::kind(other)
            )));
        }
    };
    let mut calls = Vec::new();
    let mut text: Option<String> = None;
    for block in blocks {
        match str_at(block, "type") {
            Some("text") => text
                .get_or_insert_with(String::new)
                .push_str(str_at(block, "text").unwrap_or_default()),
            Some("tool_use") => calls.push(ToolCall {
                name: str_at(block, "name").map(str::to_owned),
                id: str_at(block, "id").map(str::to_owned),
                args: args_text_or_value(block.get("input")),
            }),
            _ => {}
        }
    }
    note_tool(info, &calls, tool);
    match stop.as_str() {
        Some(s @ ("end_turn" | "stop_sequence" | "tool_use")) => proposal(
            info,
            &calls,
            text,
            tool,
            &format!("stop_reason {}", quote(s)),
            "the text",
        ),
        Some(s) if is_truncation(s) => Err(response_finding(
            Reason::TRUNCATED_OUTPUT,
            format!("stop_reason {}: the output hit the token limit", quote(s)),
        )),
        Some(s @ "refusal") => Err(response_finding(
            Reason::REFUSAL,
            format!("stop_reason {}: the model declined", quote(s)),
        )),
        Some(s @ "pause_turn") => Err(response_finding(
            Reason::INCOMPLETE,
            format!(
                "stop_reason {}: a server-tool loop paused the turn before it finished",
                quote(s)
            ),
        )),
        Some(s) => Err(response_finding(
            Reason::INCOMPLETE,
            format!("stop_reason {} is not a normal finish", quote(s)),
        )),
        None => Err(response_finding(
            Reason::INCOMPLETE,
            format!("stop_reason is {}: the message did not finish", show(stop)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::adapt_response;
    use super::super::test_support::*;
    use crate::core::verdict::{Decision, Reason, Stage};
    use serde_json::{Value, json};

    fn message(content: Value, stop: Value) -> Value {
        json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 6}
        })
    }

    fn tool_use(id: &str, name: &str, input: Value) -> Value {
        json!({"type": "tool_use", "id": id, "name": name, "input": input})
    }

    #[test]
    fn end_turn_text() {
        for stop in ["end_turn", "stop_sequence"] {
            let a = adapt_response(
                &message(
                    json!([{"type": "text", "text": "{\"a\":"}, {"type": "text", "text": "1}"}]),
                    json!(stop),
                ),
                None,
                None,
            );
            text(&a, "{\"a\":1}");
            assert_eq!(a.info.provider, "anthropic");
            assert_eq!(a.info.stop_reason.as_deref(), Some(stop));
            assert_eq!(a.info.model.as_deref(), Some("claude-sonnet-4-5"));
            assert_eq!(
                a.info.usage,
                Some(json!({"input_tokens": 12, "output_tokens": 6}))
            );
            assert_eq!(
                a.info.tokens,
                Some(crate::core::verdict::TokenUsage {
                    input_tokens: Some(12),
                    output_tokens: Some(6),
                    total_tokens: None
                })
            );
        }
    }

    #[test]
    fn tool_use_input_is_structured() {
        let m = message(
            json!([{"type": "text", "text": "I'll file it."}, tool_use("toolu_1", "create_ticket", json!({"title": "x", "priority": "low"}))]),
            json!("tool_use"),
        );
        let a = adapt_response(&m, None, None);
        structured(&a, json!({"title": "x", "priority": "low"}));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn several_tool_uses() {
        let m = message(
            json!([
                tool_use("toolu_1", "lookup", json!({"q": 1})),
                tool_use("toolu_2", "create_ticket", json!({"t": 2}))
            ]),
            json!("tool_use"),
        );
        let f = invalid(&adapt_response(&m, None, None));
        assert!(
            f.message
                .contains("\"lookup\" (toolu_1), \"create_ticket\" (toolu_2)"),
            "{}",
            f.message
        );
        structured(&adapt_response(&m, None, Some("lookup")), json!({"q": 1}));
        invalid(&adapt_response(&m, None, Some("nope")));
    }

    #[test]
    fn stop_reasons() {
        let cases = [
            ("max_tokens", Reason::TRUNCATED_OUTPUT, Decision::Retry),
            (
                "model_context_window_exceeded",
                Reason::TRUNCATED_OUTPUT,
                Decision::Retry,
            ),
            ("refusal", Reason::REFUSAL, Decision::Reject),
            ("pause_turn", Reason::INCOMPLETE, Decision::Retry),
            ("something_new", Reason::INCOMPLETE, Decision::Retry),
        ];
        for (stop, reason, decision) in cases {
            let a = adapt_response(
                &message(json!([{"type": "text", "text": "{\"a\":"}]), json!(stop)),
                None,
                None,
            );
            let f = fails(&a, Stage::Response, reason, decision);
            assert!(
                f.message.starts_with(&format!("stop_reason \"{stop}\"")),
                "{}",
                f.message
            );
            assert_eq!(a.info.stop_reason.as_deref(), Some(stop));
        }
        let a = adapt_response(&message(json!([]), Value::Null), None, None);
        let f = fails_with(&a, Reason::INCOMPLETE);
        assert_eq!(f.message, "stop_reason is null: the message did not finish");
    }

    #[test]
    fn refusal_message_text_is_not_a_proposal() {
        let m = message(
            json!([{"type": "text", "text": "{\"title\": \"I can't\"}"}]),
            json!("refusal"),
        );
        fails_with(&adapt_response(&m, None, None), Reason::REFUSAL);
    }

    #[test]
    fn empty_content_is_no_output() {
        for c in [
            json!([]),
            json!([{"type": "text", "text": " "}]),
            json!([{"type": "thinking", "thinking": "{}"}]),
        ] {
            let f = fails(
                &adapt_response(&message(c, json!("end_turn")), None, None),
                Stage::Response,
                Reason::NO_OUTPUT,
                Decision::Regenerate,
            );
            assert_eq!(
                f.message,
                "stop_reason \"end_turn\", but the text is empty: nothing to validate"
            );
        }
        // `{}` is a value, not nothing
        structured(
            &adapt_response(
                &message(json!([tool_use("t", "f", json!({}))]), json!("tool_use")),
                None,
                None,
            ),
            json!({}),
        );
    }

    #[test]
    fn junk_content() {
        invalid(&adapt_response(
            &json!({"type": "message", "content": "hi", "stop_reason": "end_turn"}),
            None,
            None,
        ));
        let a = adapt_response(
            &json!({"type": "message", "content": [1, [], {"type": {}}], "stop_reason": "end_turn"}),
            None,
            None,
        );
        fails_with(&a, Reason::NO_OUTPUT);
    }
}
