//! Langfuse observation exports (`docs/record-shapes.md#langfuse`): one observation a line
//! (`GET /api/public/observations`' `data[]` items, an export of them), or an ingestion
//! event that carries one (`{"id", "type": "generation-create", "body", "timestamp"}`).
//!
//! Sources: the Langfuse public API (`Observation`, `ObservationType`, `ObservationLevel`;
//! langfuse.com/docs/observability/features/observation-types): `id`, `traceId`, `type`
//! (`GENERATION`, `SPAN`, `EVENT`, `AGENT`, `TOOL`, `CHAIN`, ...), `name`, `model`,
//! `input`, `output` (free-form: the OpenAI integration stores the assistant message
//! `{role, content, tool_calls}`, or only the content when streaming), `metadata` (its
//! `response_format` / `text_format` in the current OpenAI integration, `finish_reason` for
//! streamed calls), `level` (`DEBUG`, `DEFAULT`, `WARNING`, `ERROR`) with `statusMessage`,
//! `parentObservationId`; the ingestion event from the fixture in github.com/BerriAI/litellm
//! `tests/logging_callback_tests/langfuse_expected_request_body/completion.json`.

use super::otlp::{finished, openai_tool_calls, request_failed};
use super::{Shape, broken, must_be, native, str_at};
use crate::core::adapter::{self, Adapted, Proposal, quote, response_finding};
use crate::core::capture::{Capture, CaptureRequest, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Reason, ResponseInfo};
use serde_json::{Map, Value};

/// The `format` of a Langfuse observation.
pub(crate) const FORMAT: &str = "langfuse";

/// The observation `type`s Langfuse defines.
const TYPES: [&str; 10] = [
    "SPAN",
    "GENERATION",
    "EVENT",
    "AGENT",
    "TOOL",
    "CHAIN",
    "RETRIEVER",
    "EVALUATOR",
    "EMBEDDING",
    "GUARDRAIL",
];

/// A Langfuse observation: `traceId` and a `type` of [`TYPES`]; or an ingestion event, a
/// `type` ending in `-create` or `-update` with a `body` object.
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "a Langfuse observation",
    keys: &[
        "id",
        "traceId",
        "type",
        "name",
        "startTime",
        "endTime",
        "completionStartTime",
        "model",
        "modelParameters",
        "input",
        "output",
        "metadata",
        "usage",
        "usageDetails",
        "costDetails",
        "level",
        "statusMessage",
        "parentObservationId",
        "promptId",
        "version",
        "environment",
        "body",
        "timestamp",
    ],
    detect: |v| {
        let ty = v.get("type").and_then(Value::as_str);
        (v.get("traceId").is_some() && ty.is_some_and(|t| TYPES.contains(&t)))
            || (ty.is_some_and(|t| t.ends_with("-create") || t.ends_with("-update"))
                && v.get("body").is_some_and(Value::is_object))
    },
    read,
};

fn read(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    // an ingestion event: its `body` is the observation, its type in the event's name
    let mut ty = str_at(&obj, "type").unwrap_or_default().to_owned();
    if let Some(event) = ty
        .strip_suffix("-create")
        .or_else(|| ty.strip_suffix("-update"))
        .map(str::to_owned)
        && let Some(Value::Object(body)) = obj.remove("body")
    {
        obj = body;
        ty = event.to_ascii_uppercase();
    }
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        None | Some(Value::Null) => source.as_str().to_owned(),
        Some(Value::String(_)) => return Err(broken(FORMAT, "id", "must not be empty", None)),
        Some(v) => return Err(broken(FORMAT, "id", &must_be("a string", v), None)),
    };
    if ty != "GENERATION" && ty != "TOOL" {
        return Ok(native(FORMAT, id, Payload::NotACapture, Map::new()));
    }
    let mut meta = Map::new();
    for (from, to) in [
        ("traceId", "trace_id"),
        ("parentObservationId", "parent_observation_id"),
        ("name", "name"),
        ("level", "level"),
    ] {
        if let Some(v) = str_at(&obj, from).filter(|s| !s.is_empty()) {
            meta.insert(to.into(), v.into());
        }
    }
    let mut info = ResponseInfo {
        provider: FORMAT.to_owned(),
        model: str_at(&obj, "model").map(str::to_owned),
        ..ResponseInfo::default()
    };
    let name = str_at(&obj, "name").map(str::to_owned);
    let level = str_at(&obj, "level").unwrap_or("DEFAULT").to_owned();
    let status = str_at(&obj, "statusMessage").unwrap_or_default().to_owned();
    let output = obj.remove("output").filter(|o| !o.is_null());
    if ty == "TOOL" {
        info.tool = name.clone();
        let result = if level == "ERROR" {
            info.stop_reason = Some(level);
            Err(response_finding(
                Reason::TOOL_ERROR,
                format!(
                    "tool {} failed: level \"ERROR\"{}",
                    name.as_deref()
                        .map_or_else(|| "(unnamed)".to_owned(), quote),
                    shown(&status)
                ),
            ))
        } else {
            match output {
                None => Err(response_finding(
                    Reason::NO_OUTPUT,
                    "the tool observation has no output: nothing to validate",
                )),
                Some(Value::String(s)) => Ok(Proposal::Text(s)),
                Some(v) => Ok(Proposal::Structured(v)),
            }
        };
        let mut c = native(FORMAT, id, settled(info, result), meta);
        c.tool = name;
        return Ok(c);
    }
    let request = request(&obj);
    let payload = if level == "ERROR" {
        info.stop_reason = Some(level);
        let what = format!("level \"ERROR\"{}", shown(&status));
        settled(info, Err(request_failed(what, &status)))
    } else {
        let finish = obj
            .get("metadata")
            .and_then(|m| m.get("finish_reason"))
            .and_then(Value::as_str)
            .map(|f| (f, "metadata.finish_reason".to_owned()));
        match output {
            None => settled(
                info,
                Err(response_finding(
                    Reason::NO_OUTPUT,
                    "the generation has no output: nothing to validate",
                )),
            ),
            Some(Value::String(s)) => {
                let result = finished(&mut info, finish, &[], Some(s), "output");
                settled(info, result)
            }
            Some(o) if adapter::recognise(&o).is_some() => Payload::Response(o),
            // the assistant message the OpenAI integration stores
            Some(o) if o.get("role").is_some() => {
                let calls = openai_tool_calls(o.get("tool_calls"));
                let text = o.get("content").and_then(Value::as_str).map(str::to_owned);
                let result = finished(&mut info, finish, &calls, text, "output.content");
                settled(info, result)
            }
            Some(o) => settled(info, Ok(Proposal::Structured(o))),
        }
    };
    let mut c = native(FORMAT, id, payload, meta);
    c.request = request;
    Ok(c)
}

/// ` ("MESSAGE")` for a non-empty status message.
fn shown(status: &str) -> String {
    if status.is_empty() {
        String::new()
    } else {
        format!(" ({})", quote(status))
    }
}

fn settled(info: ResponseInfo, result: Result<Proposal, crate::core::verdict::Finding>) -> Payload {
    Payload::Settled(Box::new(Adapted { info, result }))
}

/// The request the observation kept: `metadata.response_format` (the current OpenAI
/// integration copies it there) and the `tools` of an `input` of `{tools, messages}`,
/// rebuilt as one request body; `None` when neither is there.
fn request(obj: &Map<String, Value>) -> Option<CaptureRequest> {
    let mut body = Map::new();
    if let Some(f) = obj
        .get("metadata")
        .and_then(|m| m.get("response_format"))
        .filter(|f| f.is_object())
    {
        body.insert("response_format".into(), f.clone());
    }
    if let Some(t) = obj
        .get("input")
        .and_then(|i| i.get("tools"))
        .filter(|t| t.is_array())
    {
        body.insert("tools".into(), t.clone());
    }
    if body.is_empty() {
        return None;
    }
    Some(CaptureRequest {
        body: Value::Object(body),
        base: "",
        echoed: true,
    })
}
