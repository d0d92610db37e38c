//! Vertex AI batch prediction output lines (`predictions.jsonl`;
//! `docs/record-shapes.md#vertex-batch`).
//!
//! Source: "Batch prediction from Cloud Storage"
//! (cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-from-cloud-storage):
//! "For successful rows, model responses are stored in the response field. Otherwise, error
//! details are stored in the status field". A line is `{"status": "", "processed_time": ..,
//! "request": {GenerateContentRequest}, "response": {GenerateContentResponse}}`; a failed one
//! has a non-empty `status` string (a JSON google.rpc.Status after a prefix such as `Bad
//! Request: `) and `response: {}`. There is no id: a line is named by its source
//! (`path:LINE`). A non-empty `status` (or an `error`) is REQUEST_ERROR, transient for HTTP
//! 429, 500, 503 (`RESOURCE_EXHAUSTED`, `INTERNAL`, `UNAVAILABLE`); else `response` is read
//! by the Gemini adapter. `request` (the echoed request) is kept as it is.

use super::gemini_batch::{gemini, rpc_code, rpc_error, rpc_stop, text_error};
use super::{Shape, broken, must_be, native, settled, str_at};
use crate::core::adapter::quote;
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Finding;
use serde_json::{Map, Value};

const FORMAT: &str = "vertex-batch";

/// A Vertex batch line: `request`, `response` and `status` (a capture record never has
/// `status` beside `response`).
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "a Vertex AI batch prediction output line",
    keys: &["request", "response", "status", "processed_time", "error"],
    detect: |v| {
        v.get("request").is_some() && v.get("response").is_some() && v.get("status").is_some()
    },
    read,
};

fn read(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let id = source.as_str().to_owned();
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, None);
    let mut meta = Map::new();
    if let Some(t) = obj.get("processed_time").filter(|t| !t.is_null()) {
        meta.insert("processed_time".into(), t.clone());
    }
    let status = match obj.get("status") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(fail("status", &must_be("a string", v))),
    };
    if !status.is_empty() {
        let (stop, finding) = text_status(status, "status", &mut meta);
        let payload = settled(FORMAT, stop, finding);
        return Ok(native(FORMAT, id, payload, meta));
    }
    match obj.get("error") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(Value::String(s)) => {
            let (stop, finding) = text_status(s, "error", &mut meta);
            return Ok(native(FORMAT, id, settled(FORMAT, stop, finding), meta));
        }
        Some(e @ Value::Object(_)) => {
            if let Some(code) = rpc_code(e) {
                meta.insert("status_code".into(), code.into());
            }
            let payload = settled(FORMAT, rpc_stop(e), rpc_error(e, "error"));
            return Ok(native(FORMAT, id, payload, meta));
        }
        Some(v) => return Err(fail("error", &must_be("a string, an object or null", v))),
    }
    let response = obj.remove("response").unwrap_or(Value::Null);
    let Value::Object(body) = &response else {
        return Err(fail(
            "response",
            &format!("{} (`status` is empty)", must_be("an object", &response)),
        ));
    };
    if let Some(r) = str_at(body, "responseId") {
        meta.insert("response_id".into(), r.into());
    }
    let mut c = gemini(native(FORMAT, id, Payload::Response(response), meta));
    c.request = super::echoed(obj.remove("request"), "/request");
    Ok(c)
}

/// The stop reason and REQUEST_ERROR of an error string at `place`: the google.rpc.Status
/// it holds after its prefix (`Bad Request: {"error": {..}}`), when there is one, else the
/// text itself.
fn text_status(
    text: &str,
    place: &str,
    meta: &mut Map<String, Value>,
) -> (Option<String>, Finding) {
    let embedded = text.find('{').and_then(|at| {
        let v = crate::core::stage::parse::from_str_no_duplicates(&text[at..]).ok()?;
        let e = match v.get("error") {
            Some(e @ Value::Object(_)) => e.clone(),
            _ if v.get("code").is_some() || v.get("status").is_some() => v,
            _ => return None,
        };
        Some((text[..at].trim().trim_end_matches(':').trim_end(), e))
    });
    match embedded {
        Some((prefix, e)) => {
            if let Some(code) = rpc_code(&e) {
                meta.insert("status_code".into(), code.into());
            }
            let place = if prefix.is_empty() {
                place.to_owned()
            } else {
                format!("{place} {}", quote(prefix))
            };
            (rpc_stop(&e), rpc_error(&e, &place))
        }
        None => (None, text_error(text, place)),
    }
}
