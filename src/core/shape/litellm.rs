//! LiteLLM's `StandardLoggingPayload` (`docs/record-shapes.md#litellm`): the record LiteLLM
//! hands its loggers (S3, GCS, Pub/Sub, a custom callback's
//! `kwargs["standard_logging_object"]`), one a line.
//!
//! Sources: docs.litellm.ai/docs/proxy/logging_spec and github.com/BerriAI/litellm
//! `litellm/types/utils.py` (`StandardLoggingPayload`, `StandardLoggingPayloadErrorInformation`,
//! `StandardLoggingPayloadStatusFields`), fixture
//! `tests/logging_callback_tests/gcs_pub_sub_body/standard_logging_payload.json`: `id`,
//! `trace_id` ("trace multiple LLM calls belonging to same overall request (e.g.
//! fallbacks/retries)"), `call_type`, `status` (`success` | `failure`), `status_fields`
//! (`llm_api_status`, `guardrail_status`: `success`, `guardrail_intervened`,
//! `guardrail_failed_to_respond`, `not_run`), `response` (an OpenAI-shaped ChatCompletion
//! whatever the provider), `model_parameters` (the request's optional params:
//! `response_format`, `tools`), `error_str` and `error_information.{error_code,
//! error_class, llm_provider, error_message}`.

use super::otlp::request_failed;
use super::{Shape, broken, echoed, must_be, native, settled, str_at};
use crate::core::adapter::{quote, response_finding};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Reason;
use serde_json::{Map, Value};

/// The `format` of a LiteLLM StandardLoggingPayload.
pub(crate) const FORMAT: &str = "litellm";

/// A StandardLoggingPayload: `call_type` with `status` and `response`, `error_str` or
/// `error_information` (no provider body or other shape has `call_type`).
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "a LiteLLM StandardLoggingPayload",
    keys: &[
        "id",
        "trace_id",
        "call_id",
        "call_type",
        "stream",
        "status",
        "status_fields",
        "custom_llm_provider",
        "model",
        "messages",
        "response",
        "model_parameters",
        "error_str",
        "error_information",
        "metadata",
        "hidden_params",
    ],
    detect: |v| {
        v.get("call_type").is_some()
            && v.get("status").is_some()
            && (v.get("response").is_some()
                || v.get("error_str").is_some()
                || v.get("error_information").is_some())
    },
    read,
};

/// The `call_type`s whose response is a completion (the others, embeddings, images,
/// speech, are not captures).
const COMPLETION_CALLS: [&str; 8] = [
    "completion",
    "acompletion",
    "text_completion",
    "atext_completion",
    "responses",
    "aresponses",
    "anthropic_messages",
    "generate_content",
];

fn read(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        None | Some(Value::Null) => source.as_str().to_owned(),
        Some(Value::String(_)) => return Err(broken(FORMAT, "id", "must not be empty", None)),
        Some(v) => return Err(broken(FORMAT, "id", &must_be("a string", v), None)),
    };
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, Some(id.clone()));
    let mut meta = Map::new();
    for key in [
        "trace_id",
        "call_id",
        "call_type",
        "custom_llm_provider",
        "model",
    ] {
        if let Some(v) = str_at(&obj, key).filter(|s| !s.is_empty()) {
            meta.insert(key.into(), v.into());
        }
    }
    // `startTime`: seconds since the Unix epoch (a float), the order of a trace's calls
    if let Some(t) = obj
        .get("startTime")
        .filter(|t| t.as_f64().is_some_and(f64::is_finite))
    {
        meta.insert("start_time".into(), t.clone());
    }
    let call_type = str_at(&obj, "call_type").unwrap_or_default().to_owned();
    if !COMPLETION_CALLS.contains(&call_type.as_str()) {
        return Ok(native(FORMAT, id, Payload::NotACapture, Map::new()));
    }
    let request = match obj.remove("model_parameters") {
        Some(v @ Value::Object(_)) => echoed(Some(v), "/model_parameters"),
        None | Some(Value::Null) => None,
        Some(v) => return Err(fail("model_parameters", &must_be("an object", &v))),
    };
    let status = match obj.get("status") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => return Err(fail("status", &must_be("a string", v))),
        None => unreachable!("detected by `status`"),
    };
    let guardrail = obj
        .get("status_fields")
        .and_then(|s| s.get("guardrail_status"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let payload = match status.as_str() {
        "failure" => failure(&obj),
        "success" if guardrail.as_deref() == Some("guardrail_intervened") => settled(
            FORMAT,
            Some("guardrail_intervened".into()),
            response_finding(
                Reason::CONTENT_FILTERED,
                "status_fields.guardrail_status \"guardrail_intervened\": a LiteLLM guardrail blocked or changed the output",
            ),
        ),
        "success" => match obj.remove("response") {
            Some(r @ Value::Object(_)) => Payload::Response(r),
            Some(Value::String(s)) => Payload::Output {
                output: Value::String(s),
                status: None,
                status_detail: None,
            },
            None | Some(Value::Null) => settled(
                FORMAT,
                None,
                response_finding(
                    Reason::NO_OUTPUT,
                    "status \"success\", but `response` is null: nothing to validate",
                ),
            ),
            Some(v) => return Err(fail("response", &must_be("an object or a string", &v))),
        },
        other => {
            return Err(fail(
                "status",
                &format!("is {}: expected \"success\" or \"failure\"", quote(other)),
            ));
        }
    };
    let mut c = native(FORMAT, id, payload, meta);
    c.request = request;
    Ok(c)
}

/// The `REQUEST_ERROR` of a `failure` payload, from `error_information` (its
/// `error_class`, `error_code` and `error_message`), else `error_str`; transient for a
/// rate limit, timeout, overload, connection failure or HTTP 429 / 5xx.
fn failure(obj: &Map<String, Value>) -> Payload {
    let info = obj.get("error_information");
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let class = field("error_class");
    let code = field("error_code");
    let message = field("error_message").or_else(|| str_at(obj, "error_str"));
    let mut what = "status \"failure\"".to_owned();
    if let Some(c) = class {
        what.push_str(&format!(", error_class {}", quote(c)));
    }
    if let Some(c) = code {
        what.push_str(&format!(", error_code {}", quote(c)));
    }
    if let Some(m) = message {
        what.push_str(&format!(": {}", quote(m)));
    }
    let words = format!("{} {}", class.unwrap_or_default(), code.unwrap_or_default());
    let f = request_failed(what, &words);
    settled(FORMAT, class.or(code).map(str::to_owned), f)
}
