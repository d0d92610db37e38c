//! A bare provider response (or a captured stream of its events) as an SDK dumps it
//! (`docs/record-shapes.md#bare-responses`): read by the response adapters, with nothing
//! trusted beside it (no `context`, `intent` or `expect`: those come from a `[[join]]`).

use super::Shape;
use crate::core::adapter;
use crate::core::capture::{Capture, Payload, RECORD_KEYS, RecordError};
use crate::core::record_ref::RecordRef;
use serde_json::{Map, Value};

/// A bare response: an adapter recognises it, and it is not a capture record (no
/// `response` key, and some key outside the capture record's table).
pub(super) const SHAPE: Shape = Shape {
    format: "response",
    describe: "a bare provider response",
    keys: &[
        "id",
        "object",
        "model",
        "choices",
        "type",
        "role",
        "content",
        "stop_reason",
        "candidates",
        "promptFeedback",
        "usage",
        "usageMetadata",
        "error",
        "status",
        "output",
    ],
    detect,
    read,
};

fn detect(v: &Value) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    if obj.contains_key("response") || obj.keys().all(|k| RECORD_KEYS.contains(&k.as_str())) {
        return false;
    }
    adapter::recognise(v).is_some()
}

fn read(obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let id = response_id(&obj).unwrap_or_else(|| source.as_str().to_owned());
    Ok(bare(Value::Object(obj), id))
}

/// The `format` of a bare response read by `provider`: Bedrock Converse, Ollama and Cohere
/// bodies are their own formats; every other provider's (Azure and OpenAI-compatible
/// servers included) is `response` (`docs/record-shapes.md#record-shapes`).
pub(crate) fn format_of(provider: Option<&str>) -> &'static str {
    match provider {
        Some("bedrock-converse") => "bedrock-converse",
        Some("ollama") => "ollama",
        Some("cohere") => "cohere",
        _ => "response",
    }
}

/// A capture of a bare response or stream `response` with id `id`.
pub(crate) fn bare(response: Value, id: String) -> Capture {
    Capture {
        id,
        format: format_of(adapter::recognise(&response)),
        contract: None,
        payload: Payload::Response(response),
        provider: None,
        tool: None,
        context: None,
        intent: None,
        expect: None,
        meta: None,
        request: None,
        chain: None,
        attempt: None,
    }
}

/// A bare stream: a JSON array whose first element is a stream event. Its id is the
/// response id its first event carries, else `source`.
pub(super) fn read_stream(events: Vec<Value>, source: &RecordRef) -> Capture {
    let id = events
        .first()
        .and_then(event_response_id)
        .unwrap_or_else(|| source.as_str().to_owned());
    bare(Value::Array(events), id)
}

/// The response id of a bare response: `id` (OpenAI, Anthropic, Cohere), Gemini's
/// `responseId`, Bedrock's `ResponseMetadata.RequestId`.
pub(crate) fn response_id(obj: &Map<String, Value>) -> Option<String> {
    fn s(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str).filter(|s| !s.is_empty())
    }
    s(obj.get("id"))
        .or_else(|| s(obj.get("responseId")))
        .or_else(|| s(obj.get("ResponseMetadata").and_then(|m| m.get("RequestId"))))
        .map(str::to_owned)
}

/// The response id a stream's first event carries: Anthropic `message_start.message.id`,
/// OpenAI Responses `response.created.response.id`, a Chat chunk's `id`, Gemini's
/// `responseId`.
pub(crate) fn event_response_id(event: &Value) -> Option<String> {
    let obj = event.as_object()?;
    for inner in ["message", "response"] {
        if let Some(Value::Object(m)) = obj.get(inner)
            && let Some(id) = response_id(m)
        {
            return Some(id);
        }
    }
    response_id(obj)
}
