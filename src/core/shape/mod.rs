//! Record shapes (`docs/record-shapes.md#record-shapes`): every record is read where it lies,
//! as the shape it has. A parsed record is matched against [`SHAPES`] in order; the first
//! shape whose `detect` accepts it reads it into a [`Capture`] whose `format` names the
//! shape. A record that matches no shape is `INVALID_CAPTURE` naming the shapes tried and the
//! one it most resembles, with the key that broke it.
//!
//! A new record shape is one file in this folder and one row in [`SHAPES`].

mod anthropic_batch;
mod batch_input;
mod bedrock_batch;
mod capture;
mod gemini_batch;
mod langfuse;
mod langsmith;
mod litellm;
mod mcp;
mod openai_batch;
mod openinference;
pub mod otlp;
mod promptfoo;
mod response;
mod vertex_batch;

pub(crate) use response::{bare, event_response_id};

use crate::core::adapter::{self, Adapted};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::escape::quote;
use crate::core::hint::hint_for;
use crate::core::record_ref::RecordRef;
use crate::core::text::json_kind;
use crate::core::verdict::{Finding, Reason, ResponseInfo, Stage};
use serde_json::{Map, Value};

/// One record shape: how it is recognised and how a record of it becomes a capture.
pub struct Shape {
    /// The `format` name a verdict carries (`capture`, `openai-batch`, ...).
    pub format: &'static str,
    /// What the shape is, for messages ("an OpenAI Batch output line").
    pub describe: &'static str,
    /// The top-level keys the shape defines (for the "most resembles" hint).
    pub keys: &'static [&'static str],
    /// Whether a record (always a JSON object) has this shape: cheap checks of its marker
    /// keys, never a full read. A record that passes is read as this shape and no other.
    pub detect: fn(&Value) -> bool,
    /// Reads a record of this shape; an error is the record's `INVALID_CAPTURE` (naming
    /// the format and the key path), with whatever id and `expect` could be read.
    pub read: fn(Map<String, Value>, &RecordRef) -> Result<Capture, RecordError>,
}

/// Every record shape, in detection order: the containers with distinctive marker keys
/// first (a `jsonrpc` key is an MCP message whatever else it holds), then a bare provider
/// response, then the capture record. A Vertex line
/// (`request` + `response` + `status`) is matched before a Gemini line (`key` + `response`
/// or `error`); the batch containers come before a bare response, which would otherwise read
/// a failed Gemini or Bedrock line's `error` as an error body, and before the capture record,
/// which takes any record with `response`. The batch INPUT shapes (requests, not captures:
/// `docs/requests.md#batch-input-files`) have none of the result shapes' marker keys.
pub static SHAPES: &[Shape] = &[
    mcp::SHAPE,
    otlp::SHAPE,
    OPENINFERENCE_SHAPE,
    litellm::SHAPE,
    langfuse::SHAPE,
    langsmith::SHAPE,
    promptfoo::SHAPE,
    openai_batch::SHAPE,
    anthropic_batch::SHAPE,
    vertex_batch::SHAPE,
    gemini_batch::SHAPE,
    bedrock_batch::SHAPE,
    batch_input::OPENAI_SHAPE,
    batch_input::ANTHROPIC_SHAPE,
    batch_input::GEMINI_SHAPE,
    response::SHAPE,
    capture::SHAPE,
];

/// OpenInference spans: found inside an OTLP/JSON `TracesData` by the `otlp` row (a span's
/// `openinference.span.kind` decides its format), so this row detects nothing itself; it
/// names the format for `[[source]]` (`docs/record-shapes.md#openinference`), which reads
/// the record as the `otlp` row does.
const OPENINFERENCE_SHAPE: Shape = Shape {
    format: openinference::FORMAT,
    describe: "an OTLP/JSON TracesData of OpenInference spans",
    keys: &["resourceSpans"],
    detect: |_| false,
    read: otlp::SHAPE.read,
};

/// The `format` names, in detection order (`docs/record-shapes.md#record-shapes`).
pub fn formats() -> impl Iterator<Item = &'static str> {
    SHAPES.iter().map(|s| s.format)
}

/// The shape named `format`, if any.
pub fn by_format(format: &str) -> Option<&'static Shape> {
    SHAPES.iter().find(|s| s.format == format)
}

/// Reads one parsed record as the shape it has (or as `forced`, a `[[source]]`'s format).
/// `source` is where it was read (its default id).
///
/// # Errors
/// `INVALID_CAPTURE` when the record is not an object, breaks the shape it matched, or
/// matches none (the message names the shapes tried and the closest one).
pub fn read(
    value: Value,
    source: &RecordRef,
    forced: Option<&Shape>,
) -> Result<Capture, RecordError> {
    let shape = match (&value, forced) {
        (Value::Object(_), Some(shape)) => shape,
        (Value::Object(_), None) => match SHAPES.iter().find(|s| (s.detect)(&value)) {
            Some(shape) => shape,
            None => {
                // a record of no shape keeps a top-level string `id`, as a broken capture
                // record does
                let id = value
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned);
                return Err(RecordError {
                    id,
                    ..error(unmatched(&value))
                });
            }
        },
        (Value::Array(_), None) if adapter::recognise(&value).is_some() => {
            let Value::Array(events) = value else {
                unreachable!()
            };
            return Ok(response::read_stream(events, source));
        }
        _ => {
            return Err(error(invalid(format!(
                "a record must be a JSON object (or an array of stream events), found {}",
                json_kind(&value)
            ))));
        }
    };
    let Value::Object(obj) = value else {
        unreachable!("matched as an object above")
    };
    (shape.read)(obj, source)
}

/// The `INVALID_CAPTURE` of a record no shape accepts: the shapes tried, the closest one
/// (most top-level keys in common) and the first key that shape does not define.
fn unmatched(value: &Value) -> Finding {
    let empty = Map::new();
    let obj = value.as_object().unwrap_or(&empty);
    let (best, shared) = SHAPES
        .iter()
        .map(|s| {
            (
                s,
                obj.keys().filter(|k| s.keys.contains(&k.as_str())).count(),
            )
        })
        .max_by_key(|(_, n)| *n)
        .expect("SHAPES is not empty");
    let tried: Vec<&str> = formats().collect();
    let keys: Vec<String> = obj.keys().take(8).map(|k| quote(k, 60)).collect();
    let mut message = format!(
        "the record matches no known shape (keys {}); tried {}",
        if keys.is_empty() {
            "none".to_owned()
        } else {
            keys.join(", ")
        },
        tried.join(", ")
    );
    let mut hint = None;
    if shared > 0 {
        let stray = obj.keys().find(|k| !best.keys.contains(&k.as_str()));
        message.push_str(&format!("; closest: {} ({})", best.format, best.describe));
        if let Some(k) = stray {
            message.push_str(&format!(", which has no key {}", quote(k, 60)));
            hint = hint_for(k, best.keys.iter().copied());
        }
    } else {
        hint = Some(
            "this looks like a plain JSON value, not a capture record or a provider log record: to validate plain JSON files, run `verdict check --schema SCHEMA FILE..`".to_owned(),
        );
    }
    let f = invalid(message);
    match hint {
        Some(h) => f.with_hint(h),
        None => f,
    }
}

/// An input-stage `INVALID_CAPTURE` finding.
pub(crate) fn invalid(message: impl Into<String>) -> Finding {
    Finding::new(Stage::Input, Reason::INVALID_CAPTURE, message)
}

/// A record error with no id or `expect` known.
pub(crate) fn error(finding: Finding) -> RecordError {
    RecordError {
        finding,
        id: None,
        expect: None,
        format: None,
    }
}

/// `obj[key]` as a string, if it is one.
pub(crate) fn str_at<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// A capture read from a native record: `format`, `id`, `payload`, and the provider's
/// metadata in `meta`; nothing trusted (a `[[join]]` line supplies that).
pub(crate) fn native(
    format: &'static str,
    id: String,
    payload: Payload,
    meta: Map<String, Value>,
) -> Capture {
    native_meta(format, id, payload, (!meta.is_empty()).then(|| meta.into()))
}

/// [`native`] with its `meta` given as a [`crate::core::meta::Meta`] (a span's, written as
/// text), `None` for none.
pub(crate) fn native_meta(
    format: &'static str,
    id: String,
    payload: Payload,
    meta: Option<crate::core::meta::Meta>,
) -> Capture {
    Capture {
        id,
        format,
        contract: None,
        payload,
        provider: None,
        tool: None,
        context: None,
        intent: None,
        expect: None,
        meta,
        request: None,
        chain: None,
        attempt: None,
    }
}

/// The request a batch line echoes (`request` at `base` in the record), when it is an
/// object (`docs/requests.md#echoed-requests`).
pub(crate) fn echoed(
    v: Option<Value>,
    base: &'static str,
) -> Option<crate::core::capture::CaptureRequest> {
    match v {
        Some(body @ Value::Object(_)) => Some(crate::core::capture::CaptureRequest {
            body,
            base,
            echoed: true,
        }),
        _ => None,
    }
}

/// The payload of a record whose container decided the response stage: `finding`, with
/// `provider` (the container's format) and the container's own status word as the stop reason.
pub(crate) fn settled(provider: &str, stop_reason: Option<String>, finding: Finding) -> Payload {
    Payload::Settled(Box::new(Adapted {
        info: ResponseInfo {
            provider: provider.to_owned(),
            stop_reason,
            ..ResponseInfo::default()
        },
        result: Err(finding),
    }))
}

/// The `INVALID_CAPTURE` of a record that matched `format` but breaks it at `path` (a
/// dotted key path into the record, as the provider's docs write it), keeping `id`.
pub(crate) fn broken(
    format: &'static str,
    path: &str,
    problem: &str,
    id: Option<String>,
) -> RecordError {
    RecordError {
        finding: invalid(format!("{format} record: `{path}` {problem}")),
        id,
        expect: None,
        format: Some(format),
    }
}

/// `what` for a value of the wrong type: "must be an object, found string".
pub(crate) fn must_be(kind: &str, v: &Value) -> String {
    format!("must be {kind}, found {}", json_kind(v))
}

/// The record's id from a string key (`custom_id`, `key`, `recordId`).
///
/// # Errors
/// The key is missing, not a string, or empty.
pub(crate) fn id_key(
    format: &'static str,
    obj: &Map<String, Value>,
    key: &str,
) -> Result<String, RecordError> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(broken(format, key, "must not be empty", None)),
        Some(v) => Err(broken(format, key, &must_be("a string", v), None)),
        None => Err(broken(format, key, "is missing", None)),
    }
}
