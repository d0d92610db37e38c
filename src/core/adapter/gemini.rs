//! Google Gemini `generateContent` (`candidates[]` or `promptFeedback`).
//!
//! Shape from the Gemini API reference, "GenerateContentResponse"
//! (ai.google.dev/api/generate-content#generatecontentresponse): `candidates[]` with
//! `content.parts[]` (`text`, with `thought: true` on thought summaries, which are not the
//! answer; `functionCall` with `name`, `args` an object, already structured, and an optional
//! `id`), `finishReason` (`Candidate.FinishReason`: `STOP`, `MAX_TOKENS`, `SAFETY`,
//! `RECITATION`, `LANGUAGE`, `OTHER`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`,
//! `MALFORMED_FUNCTION_CALL`, `IMAGE_SAFETY`, `IMAGE_PROHIBITED_CONTENT`, `IMAGE_RECITATION`,
//! `UNEXPECTED_TOOL_CALL`, `TOO_MANY_TOOL_CALLS`, ...) and `finishMessage`;
//! `promptFeedback.blockReason` when the prompt itself was blocked (then there are no
//! candidates); `usageMetadata`; `modelVersion`.
//!
//! Only the first candidate is read; a response with several (`candidateCount` > 1) gets a
//! `CANDIDATES_IGNORED` warning naming the ones ignored.

use super::{
    Adapted, GEMINI_FILTERS, Proposal, Provider, ToolCall, args_text_or_value, invalid_capture,
    non_null, note_tool, proposal, quote, response_finding, str_at, tokens,
};
use crate::core::verdict::{Finding, Reason, ResponseInfo, Warning};
use serde_json::Value;

/// Adapts a `GenerateContentResponse` (also the one a stream of chunks assembles to).
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut info = Provider::Gemini.info();
    info.model = str_at(resp, "modelVersion").map(str::to_owned);
    info.usage = non_null(resp, "usageMetadata");
    info.tokens = tokens(
        resp.get("usageMetadata"),
        "promptTokenCount",
        "candidatesTokenCount",
        Some("totalTokenCount"),
    );
    let result = run(resp, tool, &mut info);
    Adapted { info, result }
}

/// The warning on a response of `n` > 1 candidates: `candidates[0]` is the proposal, the
/// others are named as ignored.
fn several_candidates(n: usize) -> Warning {
    let ignored = if n == 2 {
        "candidates[1] is ignored".to_string()
    } else {
        format!("candidates[1] to candidates[{}] are ignored", n - 1)
    };
    Warning::capture(
        "CANDIDATES_IGNORED",
        Some("/candidates/1".into()),
        format!(
            "the response holds {n} candidates: candidates[0] is validated, {ignored} \
             (request one candidate, or capture each candidate as its own record)"
        ),
    )
}

fn run(resp: &Value, tool: Option<&str>, info: &mut ResponseInfo) -> Result<Proposal, Finding> {
    if let Some(block) = resp
        .get("promptFeedback")
        .and_then(|p| p.get("blockReason"))
        .and_then(Value::as_str)
    {
        info.stop_reason = Some(block.to_owned());
        return Err(response_finding(
            Reason::CONTENT_FILTERED,
            format!(
                "promptFeedback.blockReason {}: the prompt was blocked",
                quote(block)
            ),
        ));
    }
    let candidate = match resp.get("candidates") {
        None | Some(Value::Null) => None,
        Some(Value::Array(c)) => {
            if c.len() > 1 {
                info.warnings.push(several_candidates(c.len()));
            }
            c.first()
        }
        Some(other) => {
            return Err(invalid_capture(format!(
                "gemini `candidates` is {}: expected an array",
                super::kind(other)
            )));
        }
    };
    let Some(candidate) = candidate else {
        return Err(response_finding(
            Reason::INCOMPLETE,
            "the response holds no candidate and no promptFeedback.blockReason",
        ));
    };
    let finish = str_at(candidate, "finishReason");
    info.stop_reason = finish.map(str::to_owned);
    let parts: &[Value] = candidate
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut calls = Vec::new();
    let mut text: Option<String> = None;
    for part in parts {
        if let Some(fc) = part.get("functionCall").filter(|f| f.is_object()) {
            calls.push(ToolCall {
                name: str_at(fc, "name").map(str::to_owned),
                id: str_at(fc, "id").map(str::to_owned),
                args: match fc.get("args") {
                    None | Some(Value::Null) => {
                        Proposal::Structured(Value::Object(Default::default()))
                    }
                    a => args_text_or_value(a),
                },
            });
        } else if let Some(t) = str_at(part, "text")
            && part.get("thought").and_then(Value::as_bool) != Some(true)
        {
            text.get_or_insert_with(String::new).push_str(t);
        }
    }
    note_tool(info, &calls, tool);
    let said = str_at(candidate, "finishMessage")
        .map(|m| format!(" ({})", quote(m)))
        .unwrap_or_default();
    match finish {
        Some(f @ "STOP") => proposal(
            info,
            &calls,
            text,
            tool,
            &format!("finishReason {}", quote(f)),
            "candidates[0].content.parts[].text",
        ),
        Some(f) if super::is_truncation(f) => Err(response_finding(
            Reason::TRUNCATED_OUTPUT,
            format!(
                "candidates[0].finishReason {}: the output hit the token limit",
                quote(f)
            ),
        )),
        Some(f) if GEMINI_FILTERS.contains(&f) => Err(response_finding(
            Reason::CONTENT_FILTERED,
            format!(
                "candidates[0].finishReason {}: a filter stopped the output{said}",
                quote(f)
            ),
        )),
        Some(f @ ("MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL")) => Err(response_finding(
            Reason::MALFORMED_TOOL_CALL,
            format!(
                "candidates[0].finishReason {}: the provider rejected the tool call{said}",
                quote(f)
            ),
        )),
        Some(f) => Err(response_finding(
            Reason::INCOMPLETE,
            format!(
                "candidates[0].finishReason {} is not a normal finish{said}",
                quote(f)
            ),
        )),
        None => Err(response_finding(
            Reason::INCOMPLETE,
            "candidates[0] has no finishReason: generation did not finish",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::adapt_response;
    use super::super::test_support::*;
    use crate::core::verdict::{Decision, Reason, Stage};
    use serde_json::{Value, json};

    fn response(parts: Value, finish: Value) -> Value {
        json!({
            "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": finish, "index": 0}],
            "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 12, "totalTokenCount": 20},
            "modelVersion": "gemini-2.5-flash", "responseId": "abc"
        })
    }

    #[test]
    fn stop_text_skips_thoughts() {
        let r = response(
            json!([{"text": "thinking...", "thought": true}, {"text": "{\"a\":"}, {"text": "1}"}]),
            json!("STOP"),
        );
        let a = adapt_response(&r, None, None);
        text(&a, "{\"a\":1}");
        assert_eq!(a.info.provider, "gemini");
        assert_eq!(a.info.stop_reason.as_deref(), Some("STOP"));
        assert_eq!(a.info.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(
            a.info.usage.as_ref().and_then(|u| u.get("totalTokenCount")),
            Some(&json!(20))
        );
        assert_eq!(
            a.info.tokens,
            Some(crate::core::verdict::TokenUsage {
                input_tokens: Some(8),
                output_tokens: Some(12),
                total_tokens: Some(20)
            })
        );
    }

    #[test]
    fn function_call_args_are_structured() {
        let r = response(
            json!([{"text": "Filing."}, {"functionCall": {"name": "create_ticket", "args": {"title": "x", "priority": "high"}}}]),
            json!("STOP"),
        );
        let a = adapt_response(&r, None, None);
        structured(&a, json!({"title": "x", "priority": "high"}));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn several_function_calls() {
        let r = response(
            json!([{"functionCall": {"name": "a", "args": {"n": 1}}}, {"functionCall": {"name": "b", "args": {"n": 2}}}]),
            json!("STOP"),
        );
        let f = invalid(&adapt_response(&r, None, None));
        assert!(
            f.message.contains("2 tool calls (\"a\", \"b\")"),
            "{}",
            f.message
        );
        structured(&adapt_response(&r, None, Some("b")), json!({"n": 2}));
        invalid(&adapt_response(&r, None, Some("c")));
    }

    #[test]
    fn finish_reasons() {
        let cases = [
            ("MAX_TOKENS", Reason::TRUNCATED_OUTPUT, Decision::Retry),
            ("SAFETY", Reason::CONTENT_FILTERED, Decision::Reject),
            ("RECITATION", Reason::CONTENT_FILTERED, Decision::Reject),
            ("BLOCKLIST", Reason::CONTENT_FILTERED, Decision::Reject),
            (
                "PROHIBITED_CONTENT",
                Reason::CONTENT_FILTERED,
                Decision::Reject,
            ),
            ("SPII", Reason::CONTENT_FILTERED, Decision::Reject),
            ("IMAGE_SAFETY", Reason::CONTENT_FILTERED, Decision::Reject),
            (
                "MALFORMED_FUNCTION_CALL",
                Reason::MALFORMED_TOOL_CALL,
                Decision::Regenerate,
            ),
            (
                "UNEXPECTED_TOOL_CALL",
                Reason::MALFORMED_TOOL_CALL,
                Decision::Regenerate,
            ),
            ("OTHER", Reason::INCOMPLETE, Decision::Retry),
            ("LANGUAGE", Reason::INCOMPLETE, Decision::Retry),
            (
                "FINISH_REASON_UNSPECIFIED",
                Reason::INCOMPLETE,
                Decision::Retry,
            ),
        ];
        for (finish, reason, decision) in cases {
            let a = adapt_response(
                &response(json!([{"text": "{\"a\":"}]), json!(finish)),
                None,
                None,
            );
            let f = fails(&a, Stage::Response, reason, decision);
            assert!(
                f.message
                    .starts_with(&format!("candidates[0].finishReason \"{finish}\"")),
                "{}",
                f.message
            );
            assert_eq!(a.info.stop_reason.as_deref(), Some(finish));
        }
        let mut r = response(json!([]), json!("MALFORMED_FUNCTION_CALL"));
        r["candidates"][0]["finishMessage"] = json!("Malformed function call: print(x");
        let f = fails_with(&adapt_response(&r, None, None), Reason::MALFORMED_TOOL_CALL);
        assert!(
            f.message
                .ends_with("(\"Malformed function call: print(x\")"),
            "{}",
            f.message
        );
    }

    #[test]
    fn blocked_prompt() {
        let r = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
                       "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}, "modelVersion": "gemini-1.5-flash-002"});
        let a = adapt_response(&r, None, None);
        let f = fails(
            &a,
            Stage::Response,
            Reason::CONTENT_FILTERED,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "promptFeedback.blockReason \"PROHIBITED_CONTENT\": the prompt was blocked"
        );
        assert_eq!(a.info.stop_reason.as_deref(), Some("PROHIBITED_CONTENT"));
        assert_eq!(a.info.model.as_deref(), Some("gemini-1.5-flash-002"));
    }

    #[test]
    fn several_candidates_validate_the_first_and_warn_of_the_rest() {
        let mut r = response(json!([{"text": "{\"a\": 1}"}]), json!("STOP"));
        let second = r["candidates"][0].clone();
        r["candidates"].as_array_mut().unwrap().push(second.clone());
        let a = adapt_response(&r, None, None);
        assert!(a.result.is_ok(), "{:?}", a.result);
        assert_eq!(a.info.warnings.len(), 1);
        let w = &a.info.warnings[0];
        assert_eq!(w.code, "CANDIDATES_IGNORED");
        assert_eq!(w.pointer.as_deref(), Some("/candidates/1"));
        assert_eq!(
            w.message,
            "the response holds 2 candidates: candidates[0] is validated, candidates[1] is ignored \
             (request one candidate, or capture each candidate as its own record)"
        );
        r["candidates"].as_array_mut().unwrap().push(second);
        let a = adapt_response(&r, None, None);
        assert!(
            a.info.warnings[0]
                .message
                .contains("holds 3 candidates: candidates[0] is validated, candidates[1] to candidates[2] are ignored"),
            "{:?}",
            a.info.warnings
        );
        // one candidate: no warning
        let one = response(json!([{"text": "{}"}]), json!("STOP"));
        assert!(adapt_response(&one, None, None).info.warnings.is_empty());
    }

    #[test]
    fn missing_finish_and_candidates() {
        fails_with(
            &adapt_response(&response(json!([{"text": "{}"}]), Value::Null), None, None),
            Reason::INCOMPLETE,
        );
        fails_with(
            &adapt_response(&json!({"candidates": []}), None, None),
            Reason::INCOMPLETE,
        );
        fails_with(
            &adapt_response(&json!({"promptFeedback": {}}), None, None),
            Reason::INCOMPLETE,
        );
        invalid(&adapt_response(
            &json!({"candidates": {}}),
            Some("gemini"),
            None,
        ));
    }

    #[test]
    fn empty_is_no_output() {
        for parts in [
            json!([]),
            json!([{"text": ""}]),
            json!([{"text": "x", "thought": true}]),
        ] {
            let f = fails(
                &adapt_response(&response(parts, json!("STOP")), None, None),
                Stage::Response,
                Reason::NO_OUTPUT,
                Decision::Regenerate,
            );
            assert_eq!(
                f.message,
                "finishReason \"STOP\", but candidates[0].content.parts[].text is empty: nothing to validate"
            );
        }
        // a call without args has empty structured args
        structured(
            &adapt_response(
                &response(json!([{"functionCall": {"name": "f"}}]), json!("STOP")),
                None,
                None,
            ),
            json!({}),
        );
    }
}
