//! OpenAI-compatible servers (vLLM, OpenRouter, Mistral, ...): the Chat shape with a
//! non-OpenAI marker, `docs/record-shapes.md#openai-compatible-servers`.
//!
//! Shapes and values, from each server's reference:
//! - OpenRouter (openrouter.ai/docs, "Standardized finish reasons"): the Chat shape plus
//!   `choices[].native_finish_reason` (the upstream provider's raw value),
//!   `choices[].error` (`{code, message, metadata}`), a top-level `provider` (the upstream
//!   provider's name); `finish_reason` one of `stop`, `length`, `tool_calls`,
//!   `content_filter`, `error`.
//! - vLLM (vllm-project/vllm `vllm/entrypoints/openai/protocol.py`): `finish_reason` a
//!   free string (`stop`, `length`, `tool_calls`, `abort`, ...) and the non-standard
//!   `choices[].stop_reason` (the stop token id or string, or null); `message.reasoning_content`
//!   (or `reasoning`).
//! - Mistral (its OpenAPI, as generated in docs.rs `mistral-openapi-client`): `finish_reason`
//!   `stop`, `length`, `model_length`, `error`, `tool_calls`.
//!
//! Read with the Chat rules; then `model_length` is `TRUNCATED_OUTPUT`, `error` and
//! `abort` are `REQUEST_ERROR` (`error` with a `choices[0].error` object is transient as an
//! error body is: HTTP 429 and 5xx codes; `abort` and a bare `error` are not), and
//! OpenRouter's `native_finish_reason` is kept in `ResponseInfo::native_stop_reason` and
//! named in every response-stage message.

use super::{Adapted, Provider, error_body, openai_chat, quote, response_finding, str_at};
use crate::core::verdict::{Finding, Reason, Stage};
use serde_json::Value;

/// Whether a Chat-shaped object (a completion or a stream chunk) carries a marker no
/// OpenAI response has: a top-level string `provider` (OpenRouter), or a choice with
/// `native_finish_reason` (OpenRouter), `stop_reason` (vLLM), `error` (OpenRouter), a
/// string `finish_reason` outside OpenAI's set (`model_length`, `abort`, `error`, ...), or
/// a message / delta with `reasoning_content` or `reasoning` (vLLM, OpenRouter).
pub(crate) fn has_marker(v: &Value) -> bool {
    if v.get("provider").is_some_and(Value::is_string) {
        return true;
    }
    let Some(choices) = v.get("choices").and_then(Value::as_array) else {
        return false;
    };
    choices.iter().any(|c| {
        ["native_finish_reason", "stop_reason", "error"]
            .iter()
            .any(|k| c.get(*k).is_some())
            || str_at(c, "finish_reason")
                .is_some_and(|f| !openai_chat::OPENAI_FINISH_REASONS.contains(&f))
            || ["message", "delta"].iter().any(|m| {
                c.get(*m).is_some_and(|m| {
                    m.get("reasoning_content").is_some() || m.get("reasoning").is_some()
                })
            })
    })
}

/// Adapts a Chat-shaped body of an OpenAI-compatible server.
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut a = openai_chat::adapt_as(Provider::OpenAiCompatible, resp, tool, &extra);
    let native = resp
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| str_at(c, "native_finish_reason"));
    if let Some(n) = native {
        a.info.native_stop_reason = Some(n.to_owned());
        if let Err(f) = &mut a.result
            && f.stage == Stage::Response
        {
            f.message
                .push_str(&format!(" (native_finish_reason {})", quote(n)));
        }
    }
    a
}

/// The finish reasons these servers add to OpenAI's set.
fn extra(finish: &str, choice: &Value) -> Option<Finding> {
    let said = format!("choices[0].finish_reason {}", quote(finish));
    match finish {
        "model_length" => Some(response_finding(
            Reason::TRUNCATED_OUTPUT,
            format!("{said}: the output hit the model's context length"),
        )),
        "error" => Some(match choice.get("error").filter(|e| e.is_object()) {
            Some(e) => error_body::request_error(e, &format!("{said}, choices[0].error")),
            None => response_finding(
                Reason::REQUEST_ERROR,
                format!("{said}: the server failed the generation: not transient"),
            ),
        }),
        "abort" => Some(response_finding(
            Reason::REQUEST_ERROR,
            format!("{said}: the server aborted the request: not transient"),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Adapted, adapt_response};
    use crate::core::verdict::{Decision, Reason, Stage, TokenUsage};
    use serde_json::{Value, json};

    fn completion(choice: Value) -> Value {
        json!({"id": "gen-1748000000-AbCdEfGh", "object": "chat.completion", "created": 1748000000,
               "model": "mistral-small-latest", "choices": [choice],
               "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}})
    }

    fn choice(content: &str, finish: &str) -> Value {
        json!({"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish})
    }

    fn run(v: &Value) -> Adapted {
        adapt_response(v, None, None)
    }

    #[test]
    fn markers_pick_openai_compatible_and_plain_chat_stays_openai_chat() {
        let mut vllm = choice("{}", "stop");
        vllm["stop_reason"] = Value::Null;
        let mut openrouter = choice("{}", "stop");
        openrouter["native_finish_reason"] = json!("STOP");
        let mut reasoning = choice("{}", "stop");
        reasoning["message"]["reasoning_content"] = json!("thinking");
        let mut provider = completion(choice("{}", "stop"));
        provider["provider"] = json!("Google");
        for v in [
            completion(vllm),
            completion(openrouter),
            completion(reasoning),
            completion(choice("{}", "model_length")),
            completion(choice("{}", "abort")),
            provider,
        ] {
            assert_eq!(run(&v).info.provider, "openai-compatible", "{v}");
        }
        for f in [
            "stop",
            "length",
            "tool_calls",
            "content_filter",
            "function_call",
        ] {
            assert_eq!(
                run(&completion(choice("{}", f))).info.provider,
                "openai-chat",
                "{f}"
            );
        }
        let mut null_finish = choice("{}", "stop");
        null_finish["finish_reason"] = Value::Null;
        assert_eq!(run(&completion(null_finish)).info.provider, "openai-chat");
    }

    #[test]
    fn openrouter_native_finish_reason_is_shown() {
        let mut c = choice("{\"title\":\"x\"}", "stop");
        c["native_finish_reason"] = json!("STOP");
        let a = run(&completion(c));
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "openai-compatible");
        assert_eq!(a.info.stop_reason.as_deref(), Some("stop"));
        assert_eq!(a.info.native_stop_reason.as_deref(), Some("STOP"));
        assert_eq!(
            a.info.tokens,
            Some(TokenUsage {
                input_tokens: Some(20),
                output_tokens: Some(9),
                total_tokens: Some(29)
            })
        );
        let mut c = choice("{\"ti", "length");
        c["native_finish_reason"] = json!("MAX_TOKENS");
        let f = fails(
            &run(&completion(c)),
            Stage::Response,
            Reason::TRUNCATED_OUTPUT,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"length\": the output hit the token limit \
             (native_finish_reason \"MAX_TOKENS\")"
        );
    }

    #[test]
    fn mistral_model_length_is_truncated() {
        let a = run(&completion(choice("{\"title\":\"x", "model_length")));
        let f = fails(
            &a,
            Stage::Response,
            Reason::TRUNCATED_OUTPUT,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"model_length\": the output hit the model's context length"
        );
        assert_eq!(a.info.stop_reason.as_deref(), Some("model_length"));
    }

    #[test]
    fn error_and_abort_are_request_errors() {
        // Mistral: a bare error
        let f = fails(
            &run(&completion(choice("", "error"))),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"error\": the server failed the generation: not transient"
        );
        // OpenRouter: the error object decides
        let mut c = choice("", "error");
        c["native_finish_reason"] = json!("error");
        c["error"] = json!({"code": 502, "message": "Upstream provider error"});
        let f = fails(
            &run(&completion(c)),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"error\", choices[0].error: request failed with code 502 \
             (\"Upstream provider error\"): transient, retry (native_finish_reason \"error\")"
        );
        let mut c = choice("", "error");
        c["error"] = json!({"code": 400, "message": "bad"});
        fails(
            &run(&completion(c)),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Reject,
        );
        // vLLM abort
        let mut c = choice("{\"ti", "abort");
        c["stop_reason"] = Value::Null;
        let f = fails(
            &run(&completion(c)),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"abort\": the server aborted the request: not transient"
        );
    }

    #[test]
    fn other_values_are_incomplete_and_chat_rules_hold() {
        let f = fails_with(
            &run(&completion(choice("{}", "paused"))),
            Reason::INCOMPLETE,
        );
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"paused\" is not a normal finish"
        );
        let mut c = choice("", "tool_calls");
        c["stop_reason"] = Value::Null;
        c["message"]["tool_calls"] = json!([{"id": "chatcmpl-tool-1", "type": "function", "function": {"name": "create_ticket", "arguments": "{\"title\":\"x\",\"priority\":\"low\"}"}}]);
        let a = run(&completion(c));
        text(&a, "{\"title\":\"x\",\"priority\":\"low\"}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        assert_eq!(a.info.provider, "openai-compatible");
        // forced on a body without choices
        let a = adapt_response(&json!({"id": "x"}), Some("openai-compatible"), None);
        assert_eq!(
            invalid(&a).message,
            "openai-compatible response has no `choices` array"
        );
    }
}
