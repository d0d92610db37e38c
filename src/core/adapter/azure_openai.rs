//! Azure OpenAI chat completions with content-filter fields, `docs/record-shapes.md#azure-openai`.
//!
//! Shape from Microsoft's "Content filtering" and "Content filter annotations" pages
//! (learn.microsoft.com/azure/ai-services/openai/concepts/content-filter, older revision in
//! github.com/MicrosoftDocs/azure-docs `articles/ai-services/openai/concepts/content-filter.md`):
//! the OpenAI Chat shape (read by the Chat adapter) plus
//! - `choices[].content_filter_results`: per category (`hate`, `sexual`, `violence`,
//!   `self_harm`: `{filtered, severity: safe|low|medium|high}`; `profanity`, `jailbreak`,
//!   `protected_material_text`, `protected_material_code`: `{filtered, detected}`;
//!   `custom_blocklists`: `{filtered, details: [{filtered, id}]}`, earlier an array of
//!   `{filtered, id}`), and `error: {code: "content_filter_error", message}` when the
//!   filter did not run (the call still returns 200);
//! - `prompt_filter_results[]` (`prompt_annotations` in 2023-06-01-preview):
//!   `{prompt_index, content_filter_results}`;
//! - a blocked prompt: HTTP 400 `{"error": {"code": "content_filter", "status": 400,
//!   "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {...}}}}`
//!   (singular `content_filter_result`; the docs' example spells a category `self-harm`);
//! - streams: a first chunk with `choices: []` and `prompt_filter_results`, which is normal.

use super::{
    Adapted, Provider, error_body, invalid_capture, kind, openai_chat, quote, response_finding,
    str_at,
};
use crate::core::verdict::{Finding, Reason, ResponseInfo, Warning};
use serde_json::Value;

/// Whether a Chat-shaped object (a completion or a stream chunk) carries Azure's filter
/// fields: `prompt_filter_results`, `prompt_annotations`, or a choice's
/// `content_filter_results`.
pub(crate) fn has_filter_fields(v: &Value) -> bool {
    v.get("prompt_filter_results").is_some()
        || v.get("prompt_annotations").is_some()
        || v.get("choices")
            .and_then(Value::as_array)
            .is_some_and(|cs| cs.iter().any(|c| c.get("content_filter_results").is_some()))
}

/// Whether `v` is Azure's HTTP 400 body for a prompt its content filter blocked
/// (`error.innererror.code` is `ResponsibleAIPolicyViolation`).
pub(crate) fn is_policy_violation(v: &Value) -> bool {
    v.get("error")
        .and_then(|e| e.get("innererror"))
        .and_then(|i| str_at(i, "code"))
        == Some("ResponsibleAIPolicyViolation")
}

/// Adapts the blocked-prompt error body: `CONTENT_FILTERED` naming the filtered categories
/// of `innererror.content_filter_result`.
pub(crate) fn adapt_policy_violation(body: &Value) -> Adapted {
    let e = &body["error"];
    let mut info = Provider::AzureOpenAi.info();
    info.stop_reason = error_body::stop_name(e);
    let inner = &e["innererror"];
    let (key, results) = match inner.get("content_filter_result") {
        Some(r) => ("content_filter_result", r),
        None => (
            "content_filter_results",
            inner.get("content_filter_results").unwrap_or(&Value::Null),
        ),
    };
    let place = format!("error.innererror.{key}");
    let result = match filtered(results, &place, &mut info) {
        Err(f) => Err(f),
        Ok(cats) => {
            let mut facts = Vec::new();
            for k in ["code", "status"] {
                match e.get(k) {
                    Some(Value::String(s)) => facts.push(format!("{k} {}", quote(s))),
                    Some(n @ Value::Number(_)) => facts.push(format!("{k} {n}")),
                    _ => {}
                }
            }
            facts.push("innererror.code \"ResponsibleAIPolicyViolation\"".to_owned());
            Err(response_finding(
                Reason::CONTENT_FILTERED,
                format!(
                    "error ({}): Azure's content filter blocked the prompt: {}",
                    facts.join(", "),
                    named(&cats)
                ),
            ))
        }
    };
    Adapted { info, result }
}

/// Adapts a Chat-shaped body with filter fields: the Chat rules, then any `filtered: true`
/// on the prompt (`prompt_filter_results`) or the first choice (`content_filter_results`)
/// is `CONTENT_FILTERED` naming the categories, whatever the Chat rules said.
pub(crate) fn adapt(resp: &Value, tool: Option<&str>) -> Adapted {
    let mut a = openai_chat::adapt_as(Provider::AzureOpenAi, resp, tool, &|_, _| None);
    let found =
        prompt_filtered(resp, &mut a.info).and_then(|()| choice_filtered(resp, &mut a.info));
    if let Err(f) = found {
        a.result = Err(f);
    }
    a
}

/// `Err` with the finding when the prompt was filtered (or its filter fields are broken).
fn prompt_filtered(resp: &Value, info: &mut ResponseInfo) -> Result<(), Finding> {
    let (key, list) = match (
        resp.get("prompt_filter_results"),
        resp.get("prompt_annotations"),
    ) {
        (Some(l), _) => ("prompt_filter_results", l),
        (None, Some(l)) => ("prompt_annotations", l),
        (None, None) => return Ok(()),
    };
    let entries: &[Value] = match list {
        Value::Null => &[],
        Value::Array(a) => a,
        other => {
            return Err(invalid_capture(format!(
                "azure-openai `{key}` is {}: expected an array",
                kind(other)
            )));
        }
    };
    let mut cats = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let results = entry.get("content_filter_results").unwrap_or(&Value::Null);
        cats.extend(filtered(
            results,
            &format!("{key}[{i}].content_filter_results"),
            info,
        )?);
    }
    if cats.is_empty() {
        return Ok(());
    }
    Err(response_finding(
        Reason::CONTENT_FILTERED,
        format!(
            "{key}: Azure's content filter flagged the prompt: {}",
            named(&cats)
        ),
    ))
}

/// `Err` with the finding when the first choice's output was filtered.
fn choice_filtered(resp: &Value, info: &mut ResponseInfo) -> Result<(), Finding> {
    let Some(results) = resp
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("content_filter_results"))
    else {
        return Ok(());
    };
    let cats = filtered(results, "choices[0].content_filter_results", info)?;
    if cats.is_empty() {
        return Ok(());
    }
    Err(response_finding(
        Reason::CONTENT_FILTERED,
        format!(
            "choices[0].content_filter_results: Azure's content filter filtered the output: {}",
            named(&cats)
        ),
    ))
}

fn named(cats: &[String]) -> String {
    if cats.is_empty() {
        "no category named".to_owned()
    } else {
        cats.join(", ")
    }
}

/// The categories of a `content_filter_results` object marked `filtered: true`, labelled
/// `hate (severity medium)`, `jailbreak (detected)`, `custom_blocklists (ID)`. An `error`
/// entry (the filter did not run) adds a `CONTENT_FILTER_ERROR` warning to `info`. A
/// `filtered` that is not a boolean, or results that are not an object, are
/// `INVALID_CAPTURE`: a broken filter field must not read as "not filtered".
fn filtered(results: &Value, place: &str, info: &mut ResponseInfo) -> Result<Vec<String>, Finding> {
    let map = match results {
        Value::Null => return Ok(Vec::new()),
        Value::Object(m) => m,
        other => {
            return Err(invalid_capture(format!(
                "azure-openai `{place}` is {}: expected an object of categories",
                kind(other)
            )));
        }
    };
    let flag = |v: &Value, at: &str| -> Result<bool, Finding> {
        match v.get("filtered") {
            None | Some(Value::Bool(false)) => Ok(false),
            Some(Value::Bool(true)) => Ok(true),
            Some(other) => Err(invalid_capture(format!(
                "azure-openai `{place}.{at}.filtered` is {}: expected true or false",
                kind(other)
            ))),
        }
    };
    let mut out = Vec::new();
    for (name, entry) in map {
        let shown = category_name(name);
        if name == "error" {
            info.warnings.push(filter_error(place, entry));
            continue;
        }
        match entry {
            Value::Object(o) => {
                if !flag(entry, name)? {
                    continue;
                }
                let detail = if let Some(s) = o.get("severity").and_then(Value::as_str) {
                    format!(" (severity {})", category_name(s))
                } else if let Some(details) = o.get("details").and_then(Value::as_array) {
                    ids(details)
                } else if o.get("detected") == Some(&Value::Bool(true)) {
                    " (detected)".to_owned()
                } else {
                    String::new()
                };
                out.push(format!("{shown}{detail}"));
            }
            Value::Array(items) => {
                let mut hit = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    if flag(item, &format!("{name}[{i}]"))? {
                        hit.push(item.clone());
                    }
                }
                if !hit.is_empty() {
                    out.push(format!("{shown}{}", ids(&hit)));
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// ` (ID, ID)` for the filtered blocklist entries that name an `id`.
fn ids(entries: &[Value]) -> String {
    let ids: Vec<String> = entries
        .iter()
        .filter(|d| d.get("filtered") == Some(&Value::Bool(true)))
        .filter_map(|d| str_at(d, "id"))
        .map(category_name)
        .collect();
    if ids.is_empty() {
        String::new()
    } else {
        format!(" ({})", ids.join(", "))
    }
}

/// A category or severity name as the message shows it: plain when it is a plain word
/// (`self_harm`, `self-harm`), else quoted and escaped.
fn category_name(s: &str) -> String {
    if !s.is_empty()
        && s.len() <= 60
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        s.to_owned()
    } else {
        quote(s)
    }
}

fn filter_error(place: &str, entry: &Value) -> Warning {
    let mut message = format!("{place}.error");
    if let Some(c) = str_at(entry, "code") {
        message.push_str(&format!(" {}", quote(c)));
    }
    if let Some(m) = str_at(entry, "message") {
        message.push_str(&format!(": {}", quote(m)));
    }
    message.push_str(
        ": Azure's content filter did not run on this text, so nothing here says it passed",
    );
    Warning::capture("CONTENT_FILTER_ERROR", None, message)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Adapted, adapt_response};
    use crate::core::verdict::{Decision, Reason, Stage, TokenUsage};
    use serde_json::{Value, json};

    /// The chat completion of Azure OpenAI's content-filtering docs (learn.microsoft.com, "Content filtering"), verbatim but for the content and the filter results.
    fn completion(
        content: &str,
        finish: &str,
        choice_filters: Value,
        prompt_filters: Value,
    ) -> Value {
        json!({"id": "chatcmpl-abc", "object": "chat.completion", "created": 1, "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish, "content_filter_results": choice_filters}], "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}, "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": prompt_filters}]})
    }

    fn safe() -> Value {
        json!({"hate": {"filtered": false, "severity": "safe"}, "self_harm": {"filtered": false, "severity": "safe"},
               "sexual": {"filtered": false, "severity": "safe"}, "violence": {"filtered": false, "severity": "safe"}})
    }

    fn run(v: &Value) -> Adapted {
        adapt_response(v, None, None)
    }

    #[test]
    fn unfiltered_completion_is_read_as_chat() {
        let a = run(&completion("{\"title\":\"x\"}", "stop", safe(), json!({})));
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "azure-openai");
        assert_eq!(a.info.stop_reason.as_deref(), Some("stop"));
        assert_eq!(a.info.model.as_deref(), Some("gpt-4o"));
        assert_eq!(
            a.info.tokens,
            Some(TokenUsage {
                input_tokens: Some(10),
                output_tokens: Some(3),
                total_tokens: Some(13)
            })
        );
        assert!(a.info.warnings.is_empty());
        // the response of Azure OpenAI's content-filtering docs, verbatim
        let v = json!({"id": "chatcmpl-abc", "object": "chat.completion", "created": 1, "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"}, "finish_reason": "stop", "content_filter_results": {"hate": {"filtered": false, "severity": "safe"}}}], "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}, "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]});
        let a = run(&v);
        text(&a, "Paris");
        assert_eq!(a.info.provider, "azure-openai");
    }

    #[test]
    fn a_filtered_choice_names_its_categories() {
        let mut filters = safe();
        filters["hate"] = json!({"filtered": true, "severity": "medium"});
        filters["violence"] = json!({"filtered": true, "severity": "high"});
        let a = run(&completion("", "content_filter", filters, json!({})));
        let f = fails(
            &a,
            Stage::Response,
            Reason::CONTENT_FILTERED,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "choices[0].content_filter_results: Azure's content filter filtered the output: \
             hate (severity medium), violence (severity high)"
        );
        assert_eq!(a.info.stop_reason.as_deref(), Some("content_filter"));
        // a filtered choice wins over a finish_reason that looks normal
        let mut filters = safe();
        filters["protected_material_code"] = json!({"filtered": true, "detected": true, "citation": {"URL": "https://example.com", "license": "MIT"}});
        filters["custom_blocklists"] = json!({"filtered": true, "details": [{"filtered": true, "id": "refund-words"}, {"filtered": false, "id": "other"}]});
        let f = fails_with(
            &run(&completion("{}", "stop", filters, json!({}))),
            Reason::CONTENT_FILTERED,
        );
        assert_eq!(
            f.message,
            "choices[0].content_filter_results: Azure's content filter filtered the output: \
             custom_blocklists (refund-words), protected_material_code (detected)"
        );
    }

    #[test]
    fn a_filtered_prompt_is_content_filtered() {
        let a = run(&completion(
            "{}",
            "stop",
            safe(),
            json!({"jailbreak": {"filtered": true, "detected": true}, "hate": {"filtered": false, "severity": "safe"}}),
        ));
        let f = fails_with(&a, Reason::CONTENT_FILTERED);
        assert_eq!(
            f.message,
            "prompt_filter_results: Azure's content filter flagged the prompt: jailbreak (detected)"
        );
        // the 2023-06-01-preview name, and the older array of custom blocklists
        let mut v = completion("{}", "stop", safe(), json!({}));
        let m = v.as_object_mut().unwrap_or_else(|| unreachable!());
        m.remove("prompt_filter_results");
        m.insert(
            "prompt_annotations".into(),
            json!([{"prompt_index": 0, "content_filter_results": {"custom_blocklists": [{"filtered": true, "id": "b1"}]}}]),
        );
        let f = fails_with(&run(&v), Reason::CONTENT_FILTERED);
        assert_eq!(
            f.message,
            "prompt_annotations: Azure's content filter flagged the prompt: custom_blocklists (b1)"
        );
    }

    #[test]
    fn the_blocked_prompt_error_body_is_content_filtered() {
        // the HTTP 400 body of Azure OpenAI's content-filtering docs, the message cut
        let v = json!({"error": {"message": "The response was filtered due to the prompt triggering Azure Content management policy. …", "type": null, "param": "prompt", "code": "content_filter", "status": 400, "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {"hate": {"filtered": true, "severity": "high"}, "self-harm": {"filtered": true, "severity": "high"}, "sexual": {"filtered": false, "severity": "safe"}, "violence": {"filtered": true, "severity": "medium"}}}}});
        for forced in [None, Some("azure-openai"), Some("openai-chat")] {
            let a = adapt_response(&v, forced, None);
            let f = fails(
                &a,
                Stage::Response,
                Reason::CONTENT_FILTERED,
                Decision::Reject,
            );
            assert_eq!(
                f.message,
                "error (code \"content_filter\", status 400, innererror.code \
                 \"ResponsibleAIPolicyViolation\"): Azure's content filter blocked the prompt: \
                 hate (severity high), self-harm (severity high), violence (severity medium)"
            );
            assert_eq!(a.info.provider, "azure-openai");
            assert_eq!(a.info.stop_reason.as_deref(), Some("content_filter"));
        }
        // any other Azure error stays an error body
        let v = json!({"error": {"code": "429", "message": "Requests to the ChatCompletions_Create Operation have exceeded call rate limit."}});
        let a = run(&v);
        assert_eq!(a.info.provider, "error");
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Retry);
    }

    #[test]
    fn a_filter_that_did_not_run_is_a_warning() {
        let filters = json!({"error": {"code": "content_filter_error", "message": "The contents are not filtered"}});
        let a = run(&completion("{}", "stop", filters, json!({})));
        text(&a, "{}");
        assert_eq!(a.info.warnings.len(), 1);
        assert_eq!(a.info.warnings[0].code, "CONTENT_FILTER_ERROR");
        assert_eq!(
            a.info.warnings[0].message,
            "choices[0].content_filter_results.error \"content_filter_error\": \"The contents are \
             not filtered\": Azure's content filter did not run on this text, so nothing here says \
             it passed"
        );
    }

    #[test]
    fn broken_filter_fields_are_invalid_capture() {
        let cases = [
            (
                completion(
                    "{}",
                    "stop",
                    json!({"hate": {"filtered": "true"}}),
                    json!({}),
                ),
                "azure-openai `choices[0].content_filter_results.hate.filtered` is a string: expected true or false",
            ),
            (
                completion("{}", "stop", json!("none"), json!({})),
                "azure-openai `choices[0].content_filter_results` is a string: expected an object of categories",
            ),
            (
                {
                    let mut v = completion("{}", "stop", safe(), json!({}));
                    v["prompt_filter_results"] = json!({"prompt_index": 0});
                    v
                },
                "azure-openai `prompt_filter_results` is an object: expected an array",
            ),
        ];
        for (v, msg) in cases {
            let a = run(&v);
            assert_eq!(a.info.provider, "azure-openai", "{v}");
            assert_eq!(invalid(&a).message, msg);
        }
    }
}
