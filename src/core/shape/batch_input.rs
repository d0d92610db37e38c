//! Batch INPUT files (`docs/requests.md#batch-input-files`): the requests a batch was
//! created with. They are not captures: the pipeline gives them no verdict and does not
//! count them; the workspace indexes them ([`crate::core::request::Requests`]) so that each
//! result finds the schema it was generated under, by id.
//!
//! Sources: OpenAI "Batch API" guide and "The request input object"
//! (platform.openai.com/docs/api-reference/batch/request-input): a line is `{"custom_id",
//! "method": "POST", "url": "/v1/chat/completions" | "/v1/responses" | .., "body"}`.
//! Anthropic "Batch processing" (platform.claude.com/docs/en/build-with-claude/batch-processing):
//! the create body is `{"requests": [{"custom_id", "params"}]}`, and one request a line is
//! the same `{custom_id, params}`. Gemini "Batch Mode" (ai.google.dev/gemini-api/docs/batch-mode):
//! an input file line is `{"key", "request": GenerateContentRequest}`.

use super::{Shape, broken, id_key, must_be, native};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::request::{Family, InputRecord, InputRequest};
use serde_json::{Map, Value};

/// The `format` of an OpenAI batch input line.
pub(crate) const OPENAI: &str = "openai-batch-input";
/// The `format` of an Anthropic batch request (a line, or a create body).
pub(crate) const ANTHROPIC: &str = "anthropic-batch-input";
/// The `format` of a Gemini batch input line.
pub(crate) const GEMINI: &str = "gemini-batch-input";

/// An OpenAI batch input line: `custom_id` and `body`, with `method` or `url`, and neither
/// `response` nor `error` (an output line has them).
pub(super) const OPENAI_SHAPE: Shape = Shape {
    format: OPENAI,
    describe: "an OpenAI Batch input file line (a request, not a capture)",
    keys: &["custom_id", "method", "url", "body"],
    detect: |v| {
        v.get("custom_id").is_some()
            && v.get("body").is_some()
            && (v.get("method").is_some() || v.get("url").is_some())
            && v.get("response").is_none()
            && v.get("error").is_none()
    },
    read: read_openai,
};

/// An Anthropic batch request: `{custom_id, params}` (no `result`), or a create body whose
/// one key is `requests`.
pub(super) const ANTHROPIC_SHAPE: Shape = Shape {
    format: ANTHROPIC,
    describe: "an Anthropic Message Batches request (a request, not a capture)",
    keys: &["custom_id", "params", "requests"],
    detect: |v| {
        let Some(obj) = v.as_object() else {
            return false;
        };
        (obj.contains_key("custom_id") && obj.contains_key("params") && !obj.contains_key("result"))
            || (obj.len() == 1 && obj.get("requests").is_some_and(Value::is_array))
    },
    read: read_anthropic,
};

/// A Gemini batch input line: `key` and `request`, and neither `response` nor `error`.
pub(super) const GEMINI_SHAPE: Shape = Shape {
    format: GEMINI,
    describe: "a Gemini API batch input file line (a request, not a capture)",
    keys: &["key", "request"],
    detect: |v| {
        v.get("key").is_some()
            && v.get("request").is_some()
            && v.get("response").is_none()
            && v.get("error").is_none()
    },
    read: read_gemini,
};

/// The not-a-capture of an input record (named by its source, as every non-capture is).
fn input(
    format: &'static str,
    family: Family,
    requests: Vec<InputRequest>,
    source: &RecordRef,
) -> Capture {
    native(
        format,
        source.as_str().to_owned(),
        Payload::Requests(Box::new(InputRecord { family, requests })),
        Map::new(),
    )
}

/// `obj[key]` as the request body object.
fn body(
    format: &'static str,
    obj: &mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Value, RecordError> {
    match obj.remove(key) {
        Some(v @ Value::Object(_)) => Ok(v),
        Some(v) => Err(broken(format, path, &must_be("an object", &v), None)),
        None => Err(broken(format, path, "is missing", None)),
    }
}

fn read_openai(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let id = id_key(OPENAI, &obj, "custom_id")?;
    let body = body(OPENAI, &mut obj, "body", "body")?;
    let request = InputRequest {
        id,
        base: "/body".into(),
        body,
    };
    Ok(input(OPENAI, Family::OpenAi, vec![request], source))
}

fn read_anthropic(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    if obj.contains_key("custom_id") {
        let id = id_key(ANTHROPIC, &obj, "custom_id")?;
        let params = body(ANTHROPIC, &mut obj, "params", "params")?;
        let request = InputRequest {
            id,
            base: "/params".into(),
            body: params,
        };
        return Ok(input(ANTHROPIC, Family::Anthropic, vec![request], source));
    }
    let Some(Value::Array(list)) = obj.remove("requests") else {
        unreachable!("detected by a `requests` array")
    };
    let mut requests = Vec::with_capacity(list.len());
    for (i, r) in list.into_iter().enumerate() {
        let Value::Object(mut r) = r else {
            return Err(broken(
                ANTHROPIC,
                &format!("requests[{i}]"),
                "must be an object",
                None,
            ));
        };
        let id = id_key(ANTHROPIC, &r, "custom_id").map_err(|mut e| {
            e.finding.message =
                e.finding
                    .message
                    .replacen("`custom_id`", &format!("`requests[{i}].custom_id`"), 1);
            e
        })?;
        let params = body(
            ANTHROPIC,
            &mut r,
            "params",
            &format!("requests[{i}].params"),
        )?;
        requests.push(InputRequest {
            id,
            base: format!("/requests/{i}/params"),
            body: params,
        });
    }
    Ok(input(ANTHROPIC, Family::Anthropic, requests, source))
}

fn read_gemini(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let id = id_key(GEMINI, &obj, "key")?;
    let request = body(GEMINI, &mut obj, "request", "request")?;
    let request = InputRequest {
        id,
        base: "/request".into(),
        body: request,
    };
    Ok(input(GEMINI, Family::Gemini, vec![request], source))
}
