//! Records that carry the output directly (`docs/capture-record.md`: `output`, `status`, `status_detail`).
//!
//! The status vocabulary is verdict's own (`docs/capture-record.md`), with details that quote the
//! providers' own values: `max_output_tokens` (OpenAI Responses), `length` (Chat
//! Completions), `max_tokens` / `model_context_window_exceeded` (Anthropic), `MAX_TOKENS`
//! (Gemini), `content_filter` and Gemini's filter reasons; for request errors `rate_limit`,
//! `overloaded`, the providers' error types, or an HTTP status (`429`, `503`, `5xx`, `529`).

use super::{
    Adapted, Proposal, STATUSES, did_you_mean, error_body, invalid_capture, is_filter,
    is_truncation, quote, response_finding,
};
use crate::core::verdict::{Decision, Finding, Reason, ResponseInfo};
use serde_json::Value;

/// `status_detail` values of a `request_error` that mean a transient failure (retry).
const TRANSIENT_DETAILS: [&str; 9] = [
    "rate_limit",
    "overloaded",
    "server_error",
    "5xx",
    "rate_limit_error",
    "overloaded_error",
    "api_error",
    "timeout_error",
    "rate_limit_exceeded",
];

/// Adapts a record's `output` with its `status` and `status_detail`.
pub(crate) fn adapt(output: &Value, status: Option<&str>, detail: Option<&str>) -> Adapted {
    let status_name = status.unwrap_or("completed");
    let info = ResponseInfo {
        provider: "output".to_owned(),
        stop_reason: Some(detail.unwrap_or(status_name).to_owned()),
        ..ResponseInfo::default()
    };
    Adapted {
        info,
        result: run(output, status_name, detail),
    }
}

fn detail_part(detail: Option<&str>) -> String {
    detail
        .map(|d| format!(", status_detail {}", quote(d)))
        .unwrap_or_default()
}

/// Whether a request-error detail is transient: a named rate limit / overload / server
/// error, or an HTTP status 429 or 5xx (529 included).
fn transient_detail(d: &str) -> bool {
    let lower = d.trim().to_ascii_lowercase();
    TRANSIENT_DETAILS.contains(&lower.as_str())
        || lower.parse::<u64>().is_ok_and(error_body::transient_http)
}

fn run(output: &Value, status: &str, detail: Option<&str>) -> Result<Proposal, Finding> {
    // made only for a status that is a finding (a completed output is most records)
    let head = || format!("status {}{}", quote(status), detail_part(detail));
    match status {
        "completed" => match output {
            Value::String(s) if s.trim().is_empty() => Err(response_finding(
                Reason::NO_OUTPUT,
                format!(
                    "status {}, but the output is empty: nothing to validate",
                    quote(status)
                ),
            )),
            Value::String(s) => Ok(Proposal::Text(s.clone())),
            other => Ok(Proposal::Structured(other.clone())),
        },
        "refusal" => Err(response_finding(
            Reason::REFUSAL,
            format!("{}: the model declined", head()),
        )),
        "incomplete" => Err(match detail {
            Some(d) if is_truncation(d.trim()) || is_truncation(&d.trim().to_ascii_lowercase()) => {
                response_finding(
                    Reason::TRUNCATED_OUTPUT,
                    format!("{}: the output hit the token limit", head()),
                )
            }
            Some(d) if is_filter(d.trim()) || is_filter(&d.trim().to_ascii_uppercase()) => {
                response_finding(
                    Reason::CONTENT_FILTERED,
                    format!("{}: a content filter stopped the output", head()),
                )
            }
            _ => response_finding(
                Reason::INCOMPLETE,
                format!("{}: the output did not finish", head()),
            ),
        }),
        "request_error" => {
            let f = response_finding(
                Reason::REQUEST_ERROR,
                format!("{}: the request failed", head()),
            );
            Err(match detail {
                Some(d) if transient_detail(d) => f.with_decision(Decision::Retry),
                _ => f,
            })
        }
        other => {
            let mut f = invalid_capture(format!(
                "unknown status {}: expected one of {}",
                quote(other),
                STATUSES.join(", ")
            ));
            if let Some(best) = did_you_mean(other, STATUSES.iter().copied()) {
                f = f.with_hint(format!("did you mean `{best}`?"));
            }
            Err(f)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Adapted, adapt_output};
    use crate::core::verdict::{Decision, Reason, Stage};
    use serde_json::json;

    fn out(status: Option<&str>, detail: Option<&str>) -> Adapted {
        adapt_output(&json!("{\"a\": 1}"), status, detail)
    }

    #[test]
    fn completed_by_default() {
        let a = out(None, None);
        text(&a, "{\"a\": 1}");
        assert_eq!(a.info.provider, "output");
        assert_eq!(a.info.stop_reason.as_deref(), Some("completed"));
        assert!(!a.info.stream);
        text(&out(Some("completed"), Some("ignored")), "{\"a\": 1}");
    }

    #[test]
    fn structured_output_skips_parse() {
        structured(&adapt_output(&json!({"a": 1}), None, None), json!({"a": 1}));
        structured(&adapt_output(&json!(null), None, None), json!(null));
        structured(&adapt_output(&json!(3), Some("completed"), None), json!(3));
        // a string holding only spaces is nothing; a bare `""` JSON-encoded is text
        text(&adapt_output(&json!("\"\""), None, None), "\"\"");
    }

    #[test]
    fn empty_text_is_no_output() {
        for s in ["", " \n\t"] {
            let f = fails(
                &adapt_output(&json!(s), None, None),
                Stage::Response,
                Reason::NO_OUTPUT,
                Decision::Regenerate,
            );
            assert_eq!(
                f.message,
                "status \"completed\", but the output is empty: nothing to validate"
            );
        }
    }

    #[test]
    fn refusal() {
        let a = out(Some("refusal"), None);
        let f = fails(&a, Stage::Response, Reason::REFUSAL, Decision::Reject);
        assert_eq!(f.message, "status \"refusal\": the model declined");
        assert_eq!(a.info.stop_reason.as_deref(), Some("refusal"));
    }

    #[test]
    fn incomplete_details() {
        for d in [
            "max_output_tokens",
            "length",
            "max_tokens",
            "MAX_TOKENS",
            "model_context_window_exceeded",
        ] {
            let a = out(Some("incomplete"), Some(d));
            let f = fails(
                &a,
                Stage::Response,
                Reason::TRUNCATED_OUTPUT,
                Decision::Retry,
            );
            assert_eq!(
                f.message,
                format!(
                    "status \"incomplete\", status_detail \"{d}\": the output hit the token limit"
                )
            );
            assert_eq!(a.info.stop_reason.as_deref(), Some(d));
        }
        for d in ["content_filter", "SAFETY", "recitation"] {
            fails(
                &out(Some("incomplete"), Some(d)),
                Stage::Response,
                Reason::CONTENT_FILTERED,
                Decision::Reject,
            );
        }
        for d in [Some("pause_turn"), Some("in_progress"), None] {
            fails(
                &out(Some("incomplete"), d),
                Stage::Response,
                Reason::INCOMPLETE,
                Decision::Retry,
            );
        }
    }

    #[test]
    fn request_errors() {
        for d in [
            "rate_limit",
            "overloaded",
            "429",
            "500",
            "503",
            "5xx",
            "529",
            "server_error",
            "overloaded_error",
        ] {
            let f = fails(
                &out(Some("request_error"), Some(d)),
                Stage::Response,
                Reason::REQUEST_ERROR,
                Decision::Retry,
            );
            assert_eq!(
                f.message,
                format!("status \"request_error\", status_detail \"{d}\": the request failed")
            );
        }
        for d in [
            Some("400"),
            Some("invalid_request_error"),
            Some("401"),
            Some("insufficient_quota"),
            None,
        ] {
            fails(
                &out(Some("request_error"), d),
                Stage::Response,
                Reason::REQUEST_ERROR,
                Decision::Reject,
            );
        }
    }

    #[test]
    fn unknown_status_has_a_hint() {
        let a = out(Some("complete"), None);
        let f = invalid(&a);
        assert_eq!(
            f.message,
            "unknown status \"complete\": expected one of completed, refusal, incomplete, request_error"
        );
        assert_eq!(f.hint.as_deref(), Some("did you mean `completed`?"));
        let f = invalid(&out(Some("request-error"), None));
        assert_eq!(f.hint.as_deref(), Some("did you mean `request_error`?"));
        let f = invalid(&out(Some("zzz"), None));
        assert_eq!(f.hint, None);
    }
}
