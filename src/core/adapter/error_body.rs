//! Error bodies: what a provider returns instead of a response (`docs/record-shapes.md#error-bodies`, `REQUEST_ERROR`).
//!
//! Shapes, from each provider's error documentation:
//! - Anthropic "Errors" (docs.anthropic.com/en/api/errors):
//!   `{"type": "error", "error": {"type": "overloaded_error", "message": "..."}, "request_id": ...}`;
//!   types `invalid_request_error` 400, `authentication_error` 401, `billing_error` 402,
//!   `permission_error` 403, `not_found_error` 404, `request_too_large` 413,
//!   `rate_limit_error` 429, `api_error` 500, `timeout_error` 504, `overloaded_error` 529.
//!   The same object arrives as an `error` event inside a stream.
//! - OpenAI "Error codes" (platform.openai.com/docs/guides/error-codes):
//!   `{"error": {"message", "type", "param", "code"}}`, e.g. `code: "rate_limit_exceeded"`
//!   (429, transient) vs `type: "insufficient_quota"` (429, billing: not transient);
//!   Responses streams send `{"type": "error", "code", "message", "param"}` events.
//! - Gemini "Troubleshooting" (ai.google.dev/gemini-api/docs/troubleshooting), the
//!   google.rpc.Status shape: `{"error": {"code": 429, "message", "status": "RESOURCE_EXHAUSTED"}}`,
//!   500 `INTERNAL`, 503 `UNAVAILABLE`, 504 `DEADLINE_EXCEEDED`.

use super::{Adapted, response_finding, show, str_at};
use crate::core::verdict::{Decision, Finding, Reason, ResponseInfo};
use serde_json::Value;

/// Error `type` / `code` names that mean a transient failure (`docs/record-shapes.md#error-bodies`: rate limits,
/// overload, server errors). `rate_limit_exceeded` is OpenAI's code for HTTP 429 rate
/// limits; `timeout_error` is Anthropic's HTTP 504; `modelStreamErrorException` is
/// Bedrock's HTTP 424 stream exception, "A streaming error occurred. Retry your request."
/// ("ConverseStreamOutput").
const TRANSIENT_NAMES: [&str; 7] = [
    "rate_limit_error",
    "overloaded_error",
    "api_error",
    "server_error",
    "timeout_error",
    "rate_limit_exceeded",
    "modelStreamErrorException",
];

/// google.rpc status names that map to HTTP 429 and 5xx (Gemini error docs).
const TRANSIENT_RPC: [&str; 4] = [
    "RESOURCE_EXHAUSTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DEADLINE_EXCEEDED",
];

/// Whether `v` is an error body: `"type": "error"` (Anthropic), or a top-level `error`
/// object on something that is not an OpenAI Responses object (whose `error` field is
/// part of a `failed` response).
pub(crate) fn is_error_body(v: &Value) -> bool {
    str_at(v, "type") == Some("error")
        || (v.get("error").is_some_and(Value::is_object) && str_at(v, "object") != Some("response"))
}

/// The error object of an error body or error event: `error` when it is an object,
/// otherwise the body itself (a Responses stream `error` event carries `code` and
/// `message` at the top level).
pub(crate) fn error_object(v: &Value) -> &Value {
    match v.get("error") {
        Some(e @ Value::Object(_)) => e,
        _ => v,
    }
}

/// Adapts an error body: always `REQUEST_ERROR`, provider `error`.
pub(crate) fn adapt(body: &Value, stream: bool) -> Adapted {
    let e = error_object(body);
    Adapted {
        info: ResponseInfo {
            provider: "error".to_owned(),
            stream,
            stop_reason: stop_name(e),
            ..ResponseInfo::default()
        },
        result: Err(request_error(e, "error")),
    }
}

/// The most specific name of an error, verbatim, for `ResponseInfo::stop_reason`: a
/// string `code`, else `type`, else `status`, else a numeric `code`.
pub(crate) fn stop_name(e: &Value) -> Option<String> {
    let code = e.get("code");
    code.and_then(Value::as_str)
        .or_else(|| str_at(e, "type").filter(|t| *t != "error"))
        .or_else(|| str_at(e, "status"))
        .map(str::to_owned)
        .or_else(|| code.and_then(Value::as_u64).map(|c| c.to_string()))
}

/// Whether an HTTP status is transient (429, 5xx; 529 is Anthropic's overload status).
pub(crate) fn transient_http(code: u64) -> bool {
    code == 429 || (500..=599).contains(&code)
}

/// Whether an error object describes a transient failure (retry) rather than a
/// permanent one (reject).
pub(crate) fn is_transient(e: &Value) -> bool {
    let named = |k: &str| str_at(e, k).is_some_and(|s| TRANSIENT_NAMES.contains(&s));
    let numeric = e
        .get("code")
        .and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
        })
        .is_some_and(transient_http);
    named("type")
        || named("code")
        || numeric
        || str_at(e, "status").is_some_and(|s| TRANSIENT_RPC.contains(&s))
}

/// The `REQUEST_ERROR` finding for an error object found at `place` in the response;
/// `retry` when transient, else `reject`.
pub(crate) fn request_error(e: &Value, place: &str) -> Finding {
    request_error_as(e, place, is_transient(e))
}

/// The `REQUEST_ERROR` finding for an error object found at `place`, whose transience the
/// caller decided (a batch line's HTTP status, say): `retry` when `transient`, else `reject`.
pub(crate) fn request_error_as(e: &Value, place: &str, transient: bool) -> Finding {
    let mut facts = Vec::new();
    for key in ["type", "code", "status"] {
        match e.get(key) {
            Some(Value::String(s)) if key == "type" && s == "error" => {}
            Some(v @ (Value::String(_) | Value::Number(_))) => {
                facts.push(format!("{key} {}", show(v)))
            }
            _ => {}
        }
    }
    let what = if facts.is_empty() {
        "no type or code".to_owned()
    } else {
        facts.join(", ")
    };
    let said = str_at(e, "message")
        .map(|m| format!(" ({})", super::quote(m)))
        .unwrap_or_default();
    failed_request(
        format!("{place}: request failed with {what}{said}"),
        transient,
    )
}

/// The `REQUEST_ERROR` finding of a failed request, whose transience the caller decided:
/// `what` (what failed and how, quoting the record's own values) then `: transient, retry`
/// (decision `retry`) or `: not transient` (`reject`). The one builder of every shape's and
/// adapter's request failures (`docs/verdicts.md`, `REQUEST_ERROR`).
pub(crate) fn failed_request(what: String, transient: bool) -> Finding {
    let tail = if transient {
        "transient, retry"
    } else {
        "not transient"
    };
    let f = response_finding(Reason::REQUEST_ERROR, format!("{what}: {tail}"));
    if transient {
        f.with_decision(Decision::Retry)
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::super::adapt_response;
    use super::super::test_support::*;
    use crate::core::verdict::{Decision, Reason, Stage};
    use serde_json::json;

    fn check(body: serde_json::Value, decision: Decision, stop: &str) -> String {
        let a = adapt_response(&body, None, None);
        assert_eq!(a.info.provider, "error", "{body}");
        assert_eq!(a.info.stop_reason.as_deref(), Some(stop), "{body}");
        assert!(!a.info.stream);
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, decision).message
    }

    #[test]
    fn anthropic_error_types() {
        for (t, d) in [
            ("rate_limit_error", Decision::Retry),
            ("overloaded_error", Decision::Retry),
            ("api_error", Decision::Retry),
            ("timeout_error", Decision::Retry),
            ("invalid_request_error", Decision::Reject),
            ("authentication_error", Decision::Reject),
            ("permission_error", Decision::Reject),
            ("not_found_error", Decision::Reject),
            ("request_too_large", Decision::Reject),
        ] {
            let m = check(
                json!({"type": "error", "error": {"type": t, "message": "Overloaded"}, "request_id": "req_1"}),
                d,
                t,
            );
            assert!(m.contains(&format!("type \"{t}\"")), "{m}");
            assert!(m.contains("\"Overloaded\""), "{m}");
        }
    }

    #[test]
    fn openai_error_bodies() {
        let m = check(
            json!({"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}),
            Decision::Retry,
            "rate_limit_exceeded",
        );
        assert_eq!(
            m,
            "error: request failed with type \"requests\", code \"rate_limit_exceeded\" (\"Rate limit reached\"): transient, retry"
        );
        check(
            json!({"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}),
            Decision::Retry,
            "server_error",
        );
        check(
            json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}),
            Decision::Reject,
            "insufficient_quota",
        );
        check(
            json!({"error": {"message": "bad", "type": "invalid_request_error", "param": "model", "code": "model_not_found"}}),
            Decision::Reject,
            "model_not_found",
        );
    }

    #[test]
    fn gemini_error_bodies() {
        for (code, status, d) in [
            (429, "RESOURCE_EXHAUSTED", Decision::Retry),
            (500, "INTERNAL", Decision::Retry),
            (503, "UNAVAILABLE", Decision::Retry),
            (504, "DEADLINE_EXCEEDED", Decision::Retry),
            (400, "INVALID_ARGUMENT", Decision::Reject),
            (403, "PERMISSION_DENIED", Decision::Reject),
        ] {
            let m = check(
                json!({"error": {"code": code, "message": "m", "status": status}}),
                d,
                status,
            );
            assert!(m.contains(&format!("code {code}")), "{m}");
        }
        // a bare HTTP status: 529 and 5xx retry, 4xx reject
        check(json!({"error": {"code": 529}}), Decision::Retry, "529");
        check(json!({"error": {"code": 404}}), Decision::Reject, "404");
    }

    #[test]
    fn error_without_details() {
        let a = adapt_response(&json!({"type": "error"}), None, None);
        let f = fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Reject);
        assert!(f.message.contains("no type or code"), "{}", f.message);
        assert_eq!(a.info.stop_reason, None);
    }
}
