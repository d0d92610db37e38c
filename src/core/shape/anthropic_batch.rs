//! Anthropic Message Batches results lines (`docs/record-shapes.md#anthropic-batch`).
//!
//! Source: Anthropic "Batch processing" (docs.anthropic.com/en/docs/build-with-claude/batch-processing)
//! and the Python SDK's `MessageBatchIndividualResponse` / `MessageBatchErroredResult`: a line is
//! `{"custom_id": .., "result": {"type": "succeeded", "message": {..}} | {"type": "errored",
//! "error": {"type": "error", "error": {"type", "message"}}} | {"type": "canceled"} |
//! {"type": "expired"}}`. `succeeded`: the Messages adapter; `errored`: REQUEST_ERROR from
//! `error.error.type` (transient: rate limit, overloaded, api, timeout; the flattened
//! `error.type` is accepted too); `canceled`, `expired`: INCOMPLETE (retry).

use super::{Shape, broken, id_key, must_be, native, settled, str_at};
use crate::core::adapter::{request_error, response_finding};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Reason;
use serde_json::{Map, Value};

const FORMAT: &str = "anthropic-batch";

/// The `result.type` values of a results line.
const RESULT_TYPES: [&str; 4] = ["succeeded", "errored", "canceled", "expired"];

/// An Anthropic batch results line: `custom_id` and `result`.
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "an Anthropic Message Batches results line",
    keys: &["custom_id", "result"],
    detect: |v| v.get("custom_id").is_some() && v.get("result").is_some(),
    read,
};

fn read(mut obj: Map<String, Value>, _source: &RecordRef) -> Result<Capture, RecordError> {
    let id = id_key(FORMAT, &obj, "custom_id")?;
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, Some(id.clone()));
    let result = obj.remove("result").unwrap_or(Value::Null);
    let Value::Object(mut result) = result else {
        return Err(fail("result", &must_be("an object", &result)));
    };
    let mut meta = Map::new();
    let kind = match result.get("type") {
        Some(Value::String(t)) if RESULT_TYPES.contains(&t.as_str()) => t.clone(),
        Some(Value::String(t)) => {
            return Err(fail(
                "result.type",
                &format!("is {t:?}: expected one of {}", RESULT_TYPES.join(", ")),
            ));
        }
        Some(v) => return Err(fail("result.type", &must_be("a string", v))),
        None => return Err(fail("result.type", "is missing")),
    };
    let payload = match kind.as_str() {
        "succeeded" => {
            let message = result.remove("message").unwrap_or(Value::Null);
            if !message.is_object() {
                return Err(fail("result.message", &must_be("an object", &message)));
            }
            if let Some(r) = message.get("id").and_then(Value::as_str) {
                meta.insert("response_id".into(), r.into());
            }
            Payload::Response(message)
        }
        "errored" => {
            let error = result.remove("error").unwrap_or(Value::Null);
            let Value::Object(outer) = &error else {
                return Err(fail("result.error", &must_be("an object", &error)));
            };
            if let Some(r) = str_at(outer, "request_id") {
                meta.insert("request_id".into(), r.into());
            }
            // `{"type": "error", "error": {"type", "message"}}`, or flattened `{"type", "message"}`
            let (inner, place) = match outer.get("error") {
                Some(e @ Value::Object(_)) => (e, "result.error.error"),
                _ => (&error, "result.error"),
            };
            let stop = inner.get("type").and_then(Value::as_str).map(str::to_owned);
            settled(FORMAT, stop, request_error(inner, place))
        }
        _ => settled(
            FORMAT,
            Some(kind.clone()),
            response_finding(
                Reason::INCOMPLETE,
                format!(
                    "the batch request was not sent: result.type {kind:?}; send it again in a new batch"
                ),
            ),
        ),
    };
    Ok(native(FORMAT, id, payload, meta))
}
