//! OpenAI Responses API (`"object": "response"`).
//!
//! Shape from the API reference, "The response object"
//! (platform.openai.com/docs/api-reference/responses/object): `status` one of
//! `completed`, `failed`, `in_progress`, `cancelled`, `queued`, `incomplete`;
//! `incomplete_details.reason` (`max_output_tokens`, `content_filter`); `error`
//! (`{code, message}`, e.g. `server_error`, `rate_limit_exceeded`, `invalid_prompt`) when
//! `failed`; `output[]` items of type `message` (`content[]` parts `output_text` with `text`,
//! or `refusal` with `refusal`) and `function_call` (`name`, `call_id`, `arguments` a JSON
//! *string*); other item types (`reasoning`, `web_search_call`, ...) are not proposals.

use super::{
    Adapted, Proposal, Provider, ToolCall, args_text_or_value, error_body, invalid_capture,
    is_filter, is_truncation, non_null, note_tool, proposal, quote, response_finding, str_at,
    tokens,
};
use crate::core::verdict::{Finding, Reason, ResponseInfo};
use serde_json::Value;

/// Adapts a Responses API object (also the one a stream of `response.*` events assembles to).
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut info = Provider::OpenAiResponses.info();
    info.model = str_at(resp, "model").map(str::to_owned);
    info.usage = non_null(resp, "usage");
    info.tokens = tokens(
        resp.get("usage"),
        "input_tokens",
        "output_tokens",
        Some("total_tokens"),
    );
    let result = run(resp, tool, &mut info);
    Adapted { info, result }
}

fn run(resp: &Value, tool: Option<&str>, info: &mut ResponseInfo) -> Result<Proposal, Finding> {
    let status = str_at(resp, "status");
    let reason = resp
        .get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    info.stop_reason = match (status, reason) {
        (Some("incomplete"), Some(r)) => Some(r.to_owned()),
        (s, _) => s.map(str::to_owned),
    };
    let output: &[Value] = match resp.get("output") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(invalid_capture(format!(
                "openai-responses `output` is {}: expected an array",
                super::kind(other)
            )));
        }
    };
    let mut calls = Vec::new();
    let mut text: Option<String> = None;
    let mut refusal: Option<(usize, usize, String)> = None;
    for (i, item) in output.iter().enumerate() {
        match str_at(item, "type") {
            Some("message") => {
                let parts = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for (j, part) in parts.iter().enumerate() {
                    match str_at(part, "type") {
                        Some("output_text") => text
                            .get_or_insert_with(String::new)
                            .push_str(str_at(part, "text").unwrap_or_default()),
                        Some("refusal") if refusal.is_none() => {
                            refusal =
                                Some((i, j, str_at(part, "refusal").unwrap_or_default().to_owned()))
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => calls.push(ToolCall {
                name: str_at(item, "name").map(str::to_owned),
                id: str_at(item, "call_id")
                    .or_else(|| str_at(item, "id"))
                    .map(str::to_owned),
                args: args_text_or_value(item.get("arguments")),
            }),
            _ => {}
        }
    }
    note_tool(info, &calls, tool);

    if status == Some("failed") {
        return Err(match resp.get("error").filter(|e| e.is_object()) {
            Some(e) => error_body::request_error(e, "status \"failed\", error"),
            None => response_finding(
                Reason::REQUEST_ERROR,
                "status \"failed\" without an `error` object",
            ),
        });
    }
    if let Some((i, j, said)) = refusal {
        return Err(response_finding(
            Reason::REFUSAL,
            format!(
                "output[{i}].content[{j}] is a refusal part: the model declined: {}",
                quote(&said)
            ),
        ));
    }
    match status {
        Some("completed") => proposal(
            info,
            &calls,
            text,
            tool,
            "status \"completed\"",
            "the output_text",
        ),
        Some("incomplete") => Err(match reason {
            Some(r) if is_truncation(r) => response_finding(
                Reason::TRUNCATED_OUTPUT,
                format!(
                    "status \"incomplete\", incomplete_details.reason {}: the output hit the token limit",
                    quote(r)
                ),
            ),
            Some(r) if is_filter(r) => response_finding(
                Reason::CONTENT_FILTERED,
                format!(
                    "status \"incomplete\", incomplete_details.reason {}: a content filter stopped the output",
                    quote(r)
                ),
            ),
            Some(r) => response_finding(
                Reason::INCOMPLETE,
                format!(
                    "status \"incomplete\", incomplete_details.reason {}",
                    quote(r)
                ),
            ),
            None => response_finding(
                Reason::INCOMPLETE,
                "status \"incomplete\" without incomplete_details.reason",
            ),
        }),
        Some(s) => Err(response_finding(
            Reason::INCOMPLETE,
            format!("status {}: the response did not finish", quote(s)),
        )),
        None => Err(response_finding(
            Reason::INCOMPLETE,
            "the response has no `status`: it did not say it finished",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::adapt_response;
    use super::super::test_support::*;
    use crate::core::verdict::{Decision, Reason, Stage};
    use serde_json::{Value, json};

    fn response(status: &str, output: Value) -> Value {
        json!({
            "id": "resp_1", "object": "response", "created_at": 1741476542, "status": status,
            "error": null, "incomplete_details": null, "model": "gpt-4.1-2025-04-14",
            "output": output,
            "usage": {"input_tokens": 36, "output_tokens": 87, "total_tokens": 123}
        })
    }

    fn message(parts: Value) -> Value {
        json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": parts})
    }

    fn out_text(t: &str) -> Value {
        json!({"type": "output_text", "text": t, "annotations": []})
    }

    fn fcall(name: &str, call_id: &str, args: &str) -> Value {
        json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": name,
               "arguments": args, "status": "completed"})
    }

    #[test]
    fn completed_text_concatenates_output_text_parts() {
        let r = response(
            "completed",
            json!([{"type": "reasoning", "id": "rs_1", "summary": []}, message(json!([out_text("{\"a\":"), out_text("1}")]))]),
        );
        let a = adapt_response(&r, None, None);
        text(&a, "{\"a\":1}");
        assert_eq!(a.info.provider, "openai-responses");
        assert_eq!(a.info.stop_reason.as_deref(), Some("completed"));
        assert_eq!(a.info.model.as_deref(), Some("gpt-4.1-2025-04-14"));
        assert_eq!(
            a.info.usage.as_ref().and_then(|u| u.get("total_tokens")),
            Some(&json!(123))
        );
        assert_eq!(
            a.info.tokens,
            Some(crate::core::verdict::TokenUsage {
                input_tokens: Some(36),
                output_tokens: Some(87),
                total_tokens: Some(123)
            })
        );
    }

    #[test]
    fn function_call_is_the_proposal_text_beside_it_is_commentary() {
        let r = response(
            "completed",
            json!([
                message(json!([out_text("Filing it.")])),
                fcall("create_ticket", "call_1", "{\"x\":1}")
            ]),
        );
        let a = adapt_response(&r, None, None);
        text(&a, "{\"x\":1}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn named_function_call_among_several() {
        let r = response(
            "completed",
            json!([
                fcall("lookup", "call_1", "{}"),
                fcall("create_ticket", "call_2", "{\"y\":2}")
            ]),
        );
        invalid(&adapt_response(&r, None, None));
        text(
            &adapt_response(&r, None, Some("create_ticket")),
            "{\"y\":2}",
        );
        text(&adapt_response(&r, None, Some("call_1")), "{}");
        invalid(&adapt_response(&r, None, Some("delete_ticket")));
    }

    #[test]
    fn refusal_part() {
        let r = response(
            "completed",
            json!([message(
                json!([{"type": "refusal", "refusal": "I can't assist with that."}])
            )]),
        );
        let f = fails(
            &adapt_response(&r, None, None),
            Stage::Response,
            Reason::REFUSAL,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "output[0].content[0] is a refusal part: the model declined: \"I can't assist with that.\""
        );
    }

    #[test]
    fn incomplete_reasons() {
        let mut r = response("incomplete", json!([message(json!([out_text("{\"a\":")]))]));
        r["incomplete_details"] = json!({"reason": "max_output_tokens"});
        let a = adapt_response(&r, None, None);
        let f = fails(
            &a,
            Stage::Response,
            Reason::TRUNCATED_OUTPUT,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "status \"incomplete\", incomplete_details.reason \"max_output_tokens\": the output hit the token limit"
        );
        assert_eq!(a.info.stop_reason.as_deref(), Some("max_output_tokens"));
        r["incomplete_details"] = json!({"reason": "content_filter"});
        fails(
            &adapt_response(&r, None, None),
            Stage::Response,
            Reason::CONTENT_FILTERED,
            Decision::Reject,
        );
        r["incomplete_details"] = Value::Null;
        fails(
            &adapt_response(&r, None, None),
            Stage::Response,
            Reason::INCOMPLETE,
            Decision::Retry,
        );
    }

    #[test]
    fn unfinished_statuses() {
        for s in ["in_progress", "queued", "cancelled"] {
            let a = adapt_response(&response(s, json!([])), None, None);
            let f = fails_with(&a, Reason::INCOMPLETE);
            assert_eq!(
                f.message,
                format!("status \"{s}\": the response did not finish")
            );
            assert_eq!(a.info.stop_reason.as_deref(), Some(s));
        }
        fails_with(
            &adapt_response(&json!({"object": "response", "output": []}), None, None),
            Reason::INCOMPLETE,
        );
    }

    #[test]
    fn failed_is_a_request_error() {
        let mut r = response("failed", json!([]));
        r["error"] =
            json!({"code": "server_error", "message": "The model failed to generate a response."});
        fails(
            &adapt_response(&r, None, None),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Retry,
        );
        r["error"] = json!({"code": "rate_limit_exceeded", "message": "slow down"});
        fails(
            &adapt_response(&r, None, None),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Retry,
        );
        r["error"] = json!({"code": "invalid_prompt", "message": "no"});
        let f = fails(
            &adapt_response(&r, None, None),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "status \"failed\", error: request failed with code \"invalid_prompt\" (\"no\"): not transient"
        );
        r["error"] = Value::Null;
        fails(
            &adapt_response(&r, None, None),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Reject,
        );
    }

    #[test]
    fn empty_output_is_no_output() {
        for out in [json!([]), json!([message(json!([out_text("   ")]))])] {
            let f = fails(
                &adapt_response(&response("completed", out), None, None),
                Stage::Response,
                Reason::NO_OUTPUT,
                Decision::Regenerate,
            );
            assert_eq!(
                f.message,
                "status \"completed\", but the output_text is empty: nothing to validate"
            );
        }
        fails_with(
            &adapt_response(
                &response("completed", json!([fcall("f", "c", "")])),
                None,
                None,
            ),
            Reason::NO_OUTPUT,
        );
    }

    #[test]
    fn odd_output_is_invalid_capture() {
        invalid(&adapt_response(
            &response("completed", json!("text")),
            None,
            None,
        ));
        // junk items are skipped, not crashed on
        let a = adapt_response(
            &response(
                "completed",
                json!([1, null, {"type": 3}, {"type": "message", "content": 7}]),
            ),
            None,
            None,
        );
        fails_with(&a, Reason::NO_OUTPUT);
    }
}
