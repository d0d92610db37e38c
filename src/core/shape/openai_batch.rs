//! OpenAI Batch API output and error file lines (`docs/record-shapes.md#openai-batch`).
//!
//! Source: "The request output object" (platform.openai.com/docs/api-reference/batch/request-output)
//! and the Batch guide's "Batch expiration": a line is
//! `{"id": "batch_req_..", "custom_id": .., "response": {"status_code", "request_id", "body"} | null,
//! "error": {"code", "message"} | null}`. `error` set: the request did not run (`batch_expired`,
//! `batch_cancelled`: INCOMPLETE, retry; `request_timeout`: REQUEST_ERROR, transient). A
//! `status_code` other than 200: REQUEST_ERROR from `body.error` (transient for 429 and 5xx,
//! except `insufficient_quota`). Else `body` is a Chat Completions or Responses object, read
//! by its adapter.

use super::{Shape, broken, id_key, must_be, native, settled, str_at};
use crate::core::adapter::{request_error, request_error_as, response_finding, transient_http};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Decision, Reason};
use serde_json::{Map, Value};

const FORMAT: &str = "openai-batch";

/// An OpenAI Batch line: `custom_id` with `response` or `error`, and no Anthropic `result`.
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "an OpenAI Batch output or error file line",
    keys: &["id", "custom_id", "response", "error"],
    detect: |v| {
        v.get("custom_id").is_some()
            && (v.get("response").is_some() || v.get("error").is_some())
            && v.get("result").is_none()
    },
    read,
};

fn read(mut obj: Map<String, Value>, _source: &RecordRef) -> Result<Capture, RecordError> {
    let id = id_key(FORMAT, &obj, "custom_id")?;
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, Some(id.clone()));
    let mut meta = Map::new();
    if let Some(line_id) = str_at(&obj, "id") {
        meta.insert("batch_request_id".into(), line_id.into());
    }
    let error = obj.remove("error").filter(|e| !e.is_null());
    let response = obj.remove("response").filter(|r| !r.is_null());
    if let Some(error) = error {
        let Value::Object(e) = &error else {
            return Err(fail("error", &must_be("an object or null", &error)));
        };
        let code = str_at(e, "code").unwrap_or_default();
        let message = str_at(e, "message").unwrap_or_default();
        let finding = match code {
            "batch_expired" | "batch_cancelled" => response_finding(
                Reason::INCOMPLETE,
                format!(
                    "the batch request did not run: error.code {code:?} ({message:?}); send it again in a new batch"
                ),
            ),
            "request_timeout" => response_finding(
                Reason::REQUEST_ERROR,
                format!(
                    "the model call timed out: error.code {code:?} ({message:?}): transient, retry"
                ),
            )
            .with_decision(Decision::Retry),
            _ => request_error(&error, "error"),
        };
        let payload = settled(
            FORMAT,
            Some(code.to_owned()).filter(|c| !c.is_empty()),
            finding,
        );
        return Ok(native(FORMAT, id, payload, meta));
    }
    let Some(response) = response else {
        return Err(fail(
            "response",
            "and `error` are both null or missing: a batch line has one of them",
        ));
    };
    let Value::Object(mut response) = response else {
        return Err(fail("response", &must_be("an object or null", &response)));
    };
    if let Some(r) = str_at(&response, "request_id") {
        meta.insert("request_id".into(), r.into());
    }
    let status = match response.get("status_code") {
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or_default(),
        Some(v) => return Err(fail("response.status_code", &must_be("an integer", v))),
        None => return Err(fail("response.status_code", "is missing")),
    };
    meta.insert("status_code".into(), status.into());
    let body = response.remove("body").unwrap_or(Value::Null);
    if !body.is_object() {
        return Err(fail("response.body", &must_be("an object", &body)));
    }
    if status != 200 {
        let e = body.get("error").filter(|e| e.is_object()).unwrap_or(&body);
        // `insufficient_quota` is HTTP 429 too, but no retry can fix it
        let quota = [str_at_value(e, "code"), str_at_value(e, "type")]
            .contains(&Some("insufficient_quota"));
        let transient = transient_http(status) && !quota;
        let finding =
            request_error_as(e, &format!("HTTP {status}, response.body.error"), transient);
        let payload = settled(FORMAT, Some(status.to_string()), finding);
        return Ok(native(FORMAT, id, payload, meta));
    }
    if let Some(r) = body.get("id").and_then(Value::as_str) {
        meta.insert("response_id".into(), r.into());
    }
    Ok(native(FORMAT, id, Payload::Response(body), meta))
}

fn str_at_value<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}
