//! LangSmith run exports (`docs/record-shapes.md#langsmith`): one run a line, as the
//! LangSmith API and SDK give them (`client.list_runs`, the runs of a dataset export).
//!
//! Source: github.com/langchain-ai/langsmith-sdk `python/langsmith/schemas.py` (`RunBase`,
//! `Run`: `id`, `name`, `run_type` (`llm`, `chain`, `tool`, `retriever`, `embedding`,
//! `prompt`, `parser`), `inputs`, `outputs`, `error`, `extra`, `trace_id`,
//! `parent_run_id`, `dotted_order`) and `python/langsmith/wrappers/_openai.py`: a
//! `wrap_openai` run's `inputs` are the request kwargs as sent (`messages`, `model`,
//! `response_format`, `tools`), its `outputs` the ChatCompletion's `model_dump()`; a
//! LangChain chat-model run's `outputs.generations[0][0]` holds `text`,
//! `generation_info.finish_reason` and `message` (a serialized `AIMessage` whose `kwargs`
//! hold `content`, `tool_calls[{name, args, id}]` and `response_metadata`), with tools and
//! `response_format` in `extra.invocation_params`.

use super::otlp::{finished, request_failed};
use super::{Shape, broken, echoed, must_be, native, settled, str_at};
use crate::core::adapter::{self, Adapted, Proposal, ToolCall, quote, response_finding};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Reason, ResponseInfo};
use serde_json::{Map, Value};

/// The `format` of a LangSmith run.
pub(crate) const FORMAT: &str = "langsmith";

/// A LangSmith run: `run_type` with `inputs` or `outputs` (no other shape has `run_type`).
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "a LangSmith run",
    keys: &[
        "id",
        "name",
        "run_type",
        "start_time",
        "end_time",
        "inputs",
        "outputs",
        "error",
        "status",
        "extra",
        "events",
        "serialized",
        "tags",
        "parent_run_id",
        "trace_id",
        "dotted_order",
        "session_id",
        "reference_example_id",
    ],
    detect: |v| {
        v.get("run_type").is_some() && (v.get("inputs").is_some() || v.get("outputs").is_some())
    },
    read,
};

fn read(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        None | Some(Value::Null) => source.as_str().to_owned(),
        Some(Value::String(_)) => return Err(broken(FORMAT, "id", "must not be empty", None)),
        Some(v) => return Err(broken(FORMAT, "id", &must_be("a string", v), None)),
    };
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, Some(id.clone()));
    let run_type = match obj.get("run_type") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => return Err(fail("run_type", &must_be("a string", v))),
        None => unreachable!("detected by `run_type`"),
    };
    if run_type != "llm" && run_type != "tool" {
        return Ok(native(FORMAT, id, Payload::NotACapture, Map::new()));
    }
    let mut meta = Map::new();
    for key in [
        "trace_id",
        "parent_run_id",
        "dotted_order",
        "name",
        "session_id",
    ] {
        if let Some(v) = str_at(&obj, key).filter(|s| !s.is_empty()) {
            meta.insert(key.into(), v.into());
        }
    }
    let error = match obj.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => return Err(fail("error", &must_be("a string or null", v))),
    };
    let outputs = obj.remove("outputs").filter(|o| !o.is_null());
    if let Some(o) = &outputs
        && !o.is_object()
    {
        return Err(fail("outputs", &must_be("an object or null", o)));
    }
    let name = str_at(&obj, "name").map(str::to_owned);
    if run_type == "tool" {
        let mut info = ResponseInfo {
            provider: FORMAT.to_owned(),
            tool: name.clone(),
            ..ResponseInfo::default()
        };
        let result = match (&error, outputs.as_ref().and_then(|o| o.get("output"))) {
            (Some(e), _) => {
                info.stop_reason = Some("error".into());
                Err(response_finding(
                    Reason::TOOL_ERROR,
                    format!(
                        "tool {} failed: error {}",
                        name.as_deref()
                            .map_or_else(|| "(unnamed)".to_owned(), quote),
                        quote(e)
                    ),
                ))
            }
            (None, None | Some(Value::Null)) => Err(response_finding(
                Reason::NO_OUTPUT,
                "the tool run has no outputs.output: nothing to validate",
            )),
            (None, Some(Value::String(s))) => Ok(Proposal::Text(s.clone())),
            (None, Some(v)) => Ok(Proposal::Structured(v.clone())),
        };
        let mut c = native(
            FORMAT,
            id,
            Payload::Settled(Box::new(Adapted { info, result })),
            meta,
        );
        c.tool = name;
        return Ok(c);
    }
    // the request: `inputs` as sent (wrap_openai), else LangChain's invocation params
    let wants = |v: &Value| v.get("response_format").is_some() || v.get("tools").is_some();
    let request = match obj.get("inputs") {
        Some(i) if wants(i) => echoed(Some(i.clone()), "/inputs"),
        _ => match obj.get("extra").and_then(|e| e.get("invocation_params")) {
            Some(p) if wants(p) => echoed(Some(p.clone()), "/extra/invocation_params"),
            _ => None,
        },
    };
    let payload = if let Some(e) = error {
        let f = request_failed(format!("error {}", quote(&e)), &e);
        settled(FORMAT, Some("error".into()), f)
    } else {
        match outputs {
            None => settled(
                FORMAT,
                None,
                response_finding(
                    Reason::NO_OUTPUT,
                    "the run has no outputs and no error: nothing to validate",
                ),
            ),
            Some(o) if adapter::recognise(&o).is_some() => Payload::Response(o),
            Some(o) => match generation(&o) {
                Some(g) => g,
                None => match o.get("output") {
                    Some(Value::String(s)) => {
                        let mut info = info();
                        let result =
                            finished(&mut info, None, &[], Some(s.clone()), "outputs.output");
                        Payload::Settled(Box::new(Adapted { info, result }))
                    }
                    Some(v @ (Value::Object(_) | Value::Array(_))) => {
                        Payload::Settled(Box::new(Adapted {
                            info: info(),
                            result: Ok(Proposal::Structured(v.clone())),
                        }))
                    }
                    _ => {
                        return Err(fail(
                            "outputs",
                            "holds no `choices`, `generations` or `output`: not an LLM run's output",
                        ));
                    }
                },
            },
        }
    };
    let mut c = native(FORMAT, id, payload, meta);
    c.request = request;
    Ok(c)
}

fn info() -> ResponseInfo {
    ResponseInfo {
        provider: FORMAT.to_owned(),
        ..ResponseInfo::default()
    }
}

/// A LangChain chat-model run's output, `outputs.generations[0][0]`: the serialized
/// message's `kwargs.content` (else the generation's `text`) and `kwargs.tool_calls`
/// (`args` an object), finishing with `generation_info.finish_reason`, else the message's
/// `response_metadata.finish_reason` or `stop_reason`. `None` when there are no
/// generations.
fn generation(outputs: &Value) -> Option<Payload> {
    let g = outputs.pointer("/generations/0/0")?;
    let kwargs = g.pointer("/message/kwargs");
    let text = kwargs
        .and_then(|k| k.get("content"))
        .and_then(Value::as_str)
        .or_else(|| g.get("text").and_then(Value::as_str))
        .map(str::to_owned);
    let calls: Vec<ToolCall> = kwargs
        .and_then(|k| k.get("tool_calls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| ToolCall {
            name: c.get("name").and_then(Value::as_str).map(str::to_owned),
            id: c.get("id").and_then(Value::as_str).map(str::to_owned),
            args: adapter::args_text_or_value(c.get("args")),
        })
        .collect();
    let finish = [
        (
            "/generation_info/finish_reason",
            "generations[0][0].generation_info.finish_reason",
        ),
        (
            "/message/kwargs/response_metadata/finish_reason",
            "generations[0][0].message.kwargs.response_metadata.finish_reason",
        ),
        (
            "/message/kwargs/response_metadata/stop_reason",
            "generations[0][0].message.kwargs.response_metadata.stop_reason",
        ),
    ]
    .iter()
    .find_map(|(p, place)| {
        g.pointer(p)
            .and_then(Value::as_str)
            .map(|f| (f, (*place).to_owned()))
    });
    let mut info = info();
    let result = finished(
        &mut info,
        finish,
        &calls,
        text,
        "generations[0][0].message.kwargs.content",
    );
    Some(Payload::Settled(Box::new(Adapted { info, result })))
}
