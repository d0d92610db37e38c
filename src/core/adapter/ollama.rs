//! Ollama's native `/api/chat` (`message` + `done`), `docs/record-shapes.md#ollama`.
//!
//! Shape from github.com/ollama/ollama `docs/api.md` ("Generate a chat completion"):
//! `model`, `created_at`, `message` (`role`, `content`, `thinking`, `tool_calls[]` of
//! `{function: {name, arguments}}` with `arguments` an **object**, already structured),
//! `done` (a boolean: `false` on every streamed chunk but the last), `done_reason`
//! (`stop`, `length`; `load` and `unload` for calls that only load or unload a model), and
//! on the final object the counts `prompt_eval_count`, `eval_count` and the durations
//! `total_duration`, `load_duration`, `prompt_eval_duration`, `eval_duration`
//! (nanoseconds). There is no response id and no `usage` object: the counts and durations
//! are shown as the usage. Older servers send no `done_reason`; `done: true` without one
//! is a normal finish.

use super::{
    Adapted, Proposal, Provider, count, function_calls, invalid_capture, kind, note_tool, proposal,
    quote, response_finding, show, str_at,
};
use crate::core::verdict::{Finding, Reason, ResponseInfo, TokenUsage};
use serde_json::{Map, Value};

/// The top-level counts and durations Ollama reports on its final object, shown as usage.
pub(crate) const USAGE_KEYS: [&str; 6] = [
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
];

/// Whether `v` is an Ollama chat response or stream chunk: it has `message` and `done`.
pub(crate) fn detects(v: &Value) -> bool {
    v.get("message").is_some() && v.get("done").is_some()
}

/// Adapts an `/api/chat` response (also the one a stream of chunks assembles to).
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut info = Provider::Ollama.info();
    info.model = str_at(resp, "model").map(str::to_owned);
    let usage: Map<String, Value> = USAGE_KEYS
        .iter()
        .filter_map(|k| resp.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    if !usage.is_empty() {
        info.usage = Some(Value::Object(usage));
    }
    let t = TokenUsage {
        input_tokens: resp.get("prompt_eval_count").and_then(count),
        output_tokens: resp.get("eval_count").and_then(count),
        total_tokens: None,
    };
    info.tokens = (t != TokenUsage::default()).then_some(t);
    let result = run(resp, tool, &mut info);
    Adapted { info, result }
}

fn run(resp: &Value, tool: Option<&str>, info: &mut ResponseInfo) -> Result<Proposal, Finding> {
    let reason = resp.get("done_reason").unwrap_or(&Value::Null);
    info.stop_reason = reason.as_str().map(str::to_owned);
    let done = match resp.get("done") {
        Some(Value::Bool(b)) => *b,
        None => {
            return Err(invalid_capture(
                "ollama response has no `done`: expected true or false",
            ));
        }
        Some(other @ (Value::Array(_) | Value::Object(_))) => {
            return Err(invalid_capture(format!(
                "ollama `done` is {}: expected true or false",
                kind(other)
            )));
        }
        Some(other) => {
            return Err(invalid_capture(format!(
                "ollama `done` is {} ({}): expected true or false",
                kind(other),
                show(other)
            )));
        }
    };
    let message = match resp.get("message") {
        Some(m @ Value::Object(_)) => m,
        None => {
            return Err(invalid_capture(
                "ollama response has no `message`: expected {\"role\", \"content\"}",
            ));
        }
        Some(other) => {
            return Err(invalid_capture(format!(
                "ollama `message` is {}: expected an object with `content`",
                kind(other)
            )));
        }
    };
    let text = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(invalid_capture(format!(
                "ollama `message.content` is {}: expected a string",
                kind(other)
            )));
        }
    };
    let calls = function_calls(message, "ollama")?;
    note_tool(info, &calls, tool);
    if !done {
        return Err(response_finding(
            Reason::INCOMPLETE,
            "done is false: the response did not finish (a stream chunk, or a cut generation)",
        ));
    }
    match reason.as_str() {
        None if reason.is_null() => {
            proposal(info, &calls, text, tool, "done is true", "message.content")
        }
        Some(r @ "stop") => proposal(
            info,
            &calls,
            text,
            tool,
            &format!("done_reason {}", quote(r)),
            "message.content",
        ),
        Some(r @ "length") => Err(response_finding(
            Reason::TRUNCATED_OUTPUT,
            format!(
                "done_reason {}: the output hit the token limit (num_predict or the context length)",
                quote(r)
            ),
        )),
        Some(r @ ("load" | "unload")) => Err(response_finding(
            Reason::NO_OUTPUT,
            format!(
                "done_reason {}: a call that loads or unloads a model, not a generation: nothing to validate",
                quote(r)
            ),
        )),
        Some(r) => Err(response_finding(
            Reason::INCOMPLETE,
            format!("done_reason {} is not a normal finish", quote(r)),
        )),
        None => Err(invalid_capture(format!(
            "ollama `done_reason` is {}: expected a string",
            kind(reason)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Adapted, adapt_response};
    use crate::core::verdict::{Decision, Reason, Stage, TokenUsage};
    use serde_json::{Value, json};

    /// The final object of Ollama's `/api/chat` docs (github.com/ollama/ollama, docs/api.md), verbatim but for `message.content` and the counts.
    fn chat(content: Value, reason: Value) -> Value {
        json!({"model": "qwen3.5:9b", "created_at": "2026-09-07T00:00:00Z", "message": {"role": "assistant", "content": content}, "done_reason": reason, "done": true, "total_duration": 5589157167u64, "load_duration": 3013701500u64, "prompt_eval_count": 214, "prompt_eval_duration": 342546000, "eval_count": 49, "eval_duration": 4799921000u64})
    }

    fn run(v: &Value) -> Adapted {
        adapt_response(v, None, None)
    }

    #[test]
    fn stop_gives_the_content_and_info() {
        let a = run(&chat(
            json!("{\"title\":\"x\",\"priority\":\"low\"}"),
            json!("stop"),
        ));
        text(&a, "{\"title\":\"x\",\"priority\":\"low\"}");
        assert_eq!(a.info.provider, "ollama");
        assert_eq!(a.info.stop_reason.as_deref(), Some("stop"));
        assert_eq!(a.info.model.as_deref(), Some("qwen3.5:9b"));
        assert_eq!(
            a.info.tokens,
            Some(TokenUsage {
                input_tokens: Some(214),
                output_tokens: Some(49),
                total_tokens: None
            })
        );
        assert_eq!(
            a.info.usage,
            Some(json!({"prompt_eval_count": 214, "eval_count": 49,
                        "total_duration": 5589157167u64, "load_duration": 3013701500u64,
                        "prompt_eval_duration": 342546000, "eval_duration": 4799921000u64}))
        );
    }

    #[test]
    fn done_without_done_reason_is_a_normal_finish() {
        let mut v = chat(json!("{}"), Value::Null);
        v.as_object_mut().map(|m| m.remove("done_reason"));
        let a = run(&v);
        text(&a, "{}");
        assert_eq!(a.info.stop_reason, None);
        let mut v = chat(json!(""), Value::Null);
        v.as_object_mut().map(|m| m.remove("done_reason"));
        let f = fails_with(&run(&v), Reason::NO_OUTPUT);
        assert_eq!(
            f.message,
            "done is true, but message.content is empty: nothing to validate"
        );
    }

    #[test]
    fn tool_call_arguments_are_structured() {
        let mut v = chat(json!(""), json!("stop"));
        v["message"]["tool_calls"] = json!([{"function": {"name": "create_ticket", "arguments": {"title": "x", "priority": "high"}}}]);
        let a = run(&v);
        structured(&a, json!({"title": "x", "priority": "high"}));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        v["message"]["tool_calls"] = json!([
            {"function": {"name": "lookup", "arguments": {}}},
            {"function": {"name": "create_ticket", "arguments": {"a": 1}}}
        ]);
        let f = invalid(&run(&v));
        assert_eq!(
            f.message,
            "2 tool calls (\"lookup\", \"create_ticket\") and no `tool` key: the proposal is ambiguous"
        );
        structured(
            &adapt_response(&v, None, Some("create_ticket")),
            json!({"a": 1}),
        );
    }

    #[test]
    fn done_false_is_incomplete() {
        let mut v = chat(json!("{\"ti"), Value::Null);
        v["done"] = json!(false);
        let a = run(&v);
        let f = fails(&a, Stage::Response, Reason::INCOMPLETE, Decision::Retry);
        assert_eq!(
            f.message,
            "done is false: the response did not finish (a stream chunk, or a cut generation)"
        );
        assert_eq!(a.info.provider, "ollama");
    }

    #[test]
    fn length_is_truncated() {
        let a = run(&chat(json!("{\"title\":\"x"), json!("length")));
        let f = fails(
            &a,
            Stage::Response,
            Reason::TRUNCATED_OUTPUT,
            Decision::Retry,
        );
        assert_eq!(
            f.message,
            "done_reason \"length\": the output hit the token limit (num_predict or the context length)"
        );
        assert_eq!(a.info.stop_reason.as_deref(), Some("length"));
    }

    #[test]
    fn load_unload_and_unknown_reasons() {
        for r in ["load", "unload"] {
            let f = fails(
                &run(&chat(json!(""), json!(r))),
                Stage::Response,
                Reason::NO_OUTPUT,
                Decision::Regenerate,
            );
            assert_eq!(
                f.message,
                format!(
                    "done_reason \"{r}\": a call that loads or unloads a model, not a generation: nothing to validate"
                )
            );
        }
        let f = fails_with(
            &run(&chat(json!("{}"), json!("cancelled"))),
            Reason::INCOMPLETE,
        );
        assert_eq!(
            f.message,
            "done_reason \"cancelled\" is not a normal finish"
        );
    }

    #[test]
    fn hostile_shapes_are_one_invalid_capture() {
        let mut as_string = chat(json!("{}"), json!("stop"));
        as_string["done"] = json!("true");
        let content = chat(json!({"title": "x"}), json!("stop"));
        let mut as_array = chat(json!("{}"), json!("stop"));
        as_array["done"] = json!([true]);
        let cases = [
            (
                as_string,
                "ollama `done` is a string (\"true\"): expected true or false",
            ),
            (
                as_array,
                "ollama `done` is an array: expected true or false",
            ),
            (
                json!({"message": null, "done": true}),
                "ollama `message` is null: expected an object with `content`",
            ),
            (
                content,
                "ollama `message.content` is an object: expected a string",
            ),
            (
                json!({"message": {"content": "{}", "tool_calls": {}}, "done": true}),
                "ollama `message.tool_calls` is an object: expected an array",
            ),
            (
                json!({"message": {"content": "{}"}, "done": true, "done_reason": 3}),
                "ollama `done_reason` is a number: expected a string",
            ),
        ];
        for (v, msg) in cases {
            let a = run(&v);
            assert_eq!(a.info.provider, "ollama", "{v}");
            assert_eq!(invalid(&a).message, msg, "{v}");
        }
        let a = adapt_response(&json!({"message": {"content": "{}"}}), Some("ollama"), None);
        assert_eq!(
            invalid(&a).message,
            "ollama response has no `done`: expected true or false"
        );
    }
}
