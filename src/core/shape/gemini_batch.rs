//! Gemini API batch mode result file lines (`docs/record-shapes.md#gemini-batch`).
//!
//! Source: "Batch Mode" (ai.google.dev/gemini-api/docs/batch-mode): "each line is either a
//! `GenerateContentResponse` or a status object", written as `{"key": .., "response":
//! {GenerateContentResponse}}` or `{"key": .., "error": {"code", "message", "status",
//! "details"?}}` (a google.rpc.Status). `error` set: REQUEST_ERROR, transient for HTTP 429,
//! 500, 503 (gRPC `RESOURCE_EXHAUSTED`, `INTERNAL`, `UNAVAILABLE`); else `response` is read
//! by the Gemini adapter.

use super::{Shape, broken, id_key, must_be, native, settled, str_at};
use crate::core::adapter::{failed_request, quote, request_error_as};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Finding;
use serde_json::{Map, Value};

const FORMAT: &str = "gemini-batch";

/// A Gemini batch line: `key` with `response` or `error` (an OpenAI `custom_id` line is
/// matched before it, a Vertex line, which has `request` and `status`, too).
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "a Gemini API batch result line",
    keys: &["key", "response", "error"],
    detect: |v| v.get("key").is_some() && (v.get("response").is_some() || v.get("error").is_some()),
    read,
};

/// The HTTP statuses of a transient Gemini or Vertex error (429, 500, 503).
const TRANSIENT_CODES: [u64; 3] = [429, 500, 503];

/// The gRPC status names of a transient Gemini or Vertex error (the names of HTTP 429,
/// 500, 503 in google.rpc.Code).
const TRANSIENT_STATUSES: [&str; 3] = ["RESOURCE_EXHAUSTED", "INTERNAL", "UNAVAILABLE"];

/// Whether a google.rpc.Status error object is transient: a `code` (a number or a numeric
/// string) of 429, 500 or 503, or a `status` of `RESOURCE_EXHAUSTED`, `INTERNAL` or
/// `UNAVAILABLE` (`docs/record-shapes.md#gemini-batch`).
pub(super) fn rpc_transient(e: &Value) -> bool {
    let code = e.get("code").and_then(|c| {
        c.as_u64()
            .or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))
    });
    code.is_some_and(|c| TRANSIENT_CODES.contains(&c))
        || str_at_value(e, "status").is_some_and(|s| TRANSIENT_STATUSES.contains(&s))
}

/// Whether an error text names a transient failure: a word (letters, digits and `_`) that
/// is `429`, `500`, `503`, `RESOURCE_EXHAUSTED`, `INTERNAL` or `UNAVAILABLE`.
pub(super) fn text_transient(s: &str) -> bool {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| {
            TRANSIENT_STATUSES.contains(&w)
                || w.parse::<u64>().is_ok_and(|c| TRANSIENT_CODES.contains(&c))
        })
}

/// The stop reason of a google.rpc.Status: its `status` name, else its `code`.
pub(super) fn rpc_stop(e: &Value) -> Option<String> {
    str_at_value(e, "status")
        .map(str::to_owned)
        .or_else(|| match e.get("code") {
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        })
}

/// The REQUEST_ERROR of a google.rpc.Status found at `place`.
pub(super) fn rpc_error(e: &Value, place: &str) -> Finding {
    request_error_as(e, place, rpc_transient(e))
}

/// The REQUEST_ERROR of an error given only as text (`text` found at `place`), transient
/// when it names one of the transient codes or statuses.
pub(super) fn text_error(text: &str, place: &str) -> Finding {
    failed_request(
        format!("{place} {}: request failed", quote(text)),
        text_transient(text),
    )
}

/// The HTTP status of a google.rpc.Status, for `meta.status_code`.
pub(super) fn rpc_code(e: &Value) -> Option<u64> {
    e.get("code").and_then(Value::as_u64)
}

fn read(mut obj: Map<String, Value>, _source: &RecordRef) -> Result<Capture, RecordError> {
    let id = id_key(FORMAT, &obj, "key")?;
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, Some(id.clone()));
    let mut meta = Map::new();
    let error = obj.remove("error").filter(|e| !e.is_null());
    let response = obj.remove("response").filter(|r| !r.is_null());
    if let Some(error) = error {
        if !error.is_object() {
            return Err(fail("error", &must_be("an object or null", &error)));
        }
        if let Some(code) = rpc_code(&error) {
            meta.insert("status_code".into(), code.into());
        }
        let payload = settled(FORMAT, rpc_stop(&error), rpc_error(&error, "error"));
        return Ok(native(FORMAT, id, payload, meta));
    }
    let Some(response) = response else {
        return Err(fail(
            "response",
            "and `error` are both null or missing: a batch line has one of them",
        ));
    };
    let Value::Object(body) = &response else {
        return Err(fail("response", &must_be("an object or null", &response)));
    };
    if let Some(r) = str_at(body, "responseId") {
        meta.insert("response_id".into(), r.into());
    }
    Ok(gemini(native(
        FORMAT,
        id,
        Payload::Response(response),
        meta,
    )))
}

/// `capture` with the Gemini adapter forced: the container says what the body is.
pub(super) fn gemini(mut capture: Capture) -> Capture {
    capture.provider = Some("gemini".to_owned());
    capture
}

fn str_at_value<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}
