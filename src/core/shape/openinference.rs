//! OpenInference spans (`docs/record-shapes.md#openinference`): the spans Arize Phoenix and
//! the OpenInference instrumentations write, inside an OTLP/JSON `TracesData`
//! ([`super::otlp`] finds them by their `openinference.span.kind` attribute).
//!
//! Sources: github.com/Arize-ai/openinference `spec/semantic_conventions.md` and
//! `spec/tool_calling.md`. Output is flattened:
//! `llm.output_messages.{i}.message.{role, content}`,
//! `.message.contents.{k}.message_content.{type, text}` and
//! `.message.tool_calls.{j}.tool_call.{id, function.name, function.arguments}` (arguments a
//! JSON string); `output.value` with `output.mime_type` (for OpenAI the full response
//! JSON). The request: `input.value` (the OpenAI instrumentation's full request JSON),
//! `llm.invocation_parameters` (a JSON string of the request without its messages and
//! tools, so `response_format` is there) and `llm.tools.{i}.tool.json_schema` (a JSON
//! string of each tool definition). Errors: span status and `exception.*` events.
//! `llm.finish_reason` is read when an instrumentation sets it.

use super::otlp::{
    Fields, Span, attr_str, broken_attr, finished, json_attr, request_failed, span_meta,
    span_payload, status_error, tool_result,
};
use super::{must_be, native_meta};
use crate::core::adapter::{self, ToolCall, response_finding};
use crate::core::capture::{Capture, CaptureRequest, Payload, RecordError};
use crate::core::verdict::{Reason, ResponseInfo, TokenUsage};
use serde_json::{Map, Value};

/// The `format` of an OpenInference span.
pub(crate) const FORMAT: &str = "openinference";

/// The `exception` event of a span: its `exception.type` and `exception.message`.
fn exception(span: &Span<'_>) -> Option<(String, String)> {
    let events = span.raw.get("events").and_then(Value::as_array)?;
    events.iter().find_map(|e| {
        if e.get("name").and_then(Value::as_str) != Some("exception") {
            return None;
        }
        let a = super::otlp::key_values(e.get("attributes"));
        Some((
            attr_str(&a, "exception.type")
                .unwrap_or_default()
                .to_owned(),
            attr_str(&a, "exception.message")
                .unwrap_or_default()
                .to_owned(),
        ))
    })
}

/// Choice 0 of the flattened output messages: its text (`message.content`, else the
/// `text` contents joined) and its tool calls; `None` when the span has none.
fn output_message(a: &Fields<'_>) -> Option<(Option<String>, Vec<ToolCall>)> {
    const P: &str = "llm.output_messages.0.message.";
    if !a.keys().any(|k| k.starts_with(P)) {
        return None;
    }
    let at = |k: &str| a.get(&format!("{P}{k}"));
    let mut text = at("content").and_then(Value::as_str).map(str::to_owned);
    if text.is_none() {
        for k in 0.. {
            let kind = at(&format!("contents.{k}.message_content.type"));
            let t = at(&format!("contents.{k}.message_content.text"));
            if kind.is_none() && t.is_none() {
                break;
            }
            if kind.and_then(Value::as_str).is_none_or(|k| k == "text")
                && let Some(t) = t.and_then(Value::as_str)
            {
                text.get_or_insert_with(String::new).push_str(t);
            }
        }
    }
    let mut calls = Vec::new();
    for j in 0.. {
        let c = |k: &str| at(&format!("tool_calls.{j}.tool_call.{k}"));
        if c("function.name").is_none() && c("function.arguments").is_none() && c("id").is_none() {
            break;
        }
        calls.push(ToolCall {
            name: c("function.name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            id: c("id").and_then(Value::as_str).map(str::to_owned),
            args: adapter::args_text_or_value(c("function.arguments")),
        });
    }
    Some((text, calls))
}

/// The request the span records: `input.value` when it is a JSON object with
/// `response_format` or `tools` (the full request), else `llm.invocation_parameters` with
/// the `llm.tools.{i}.tool.json_schema` definitions as its `tools`. `None` when neither
/// names a schema.
///
/// # Errors
/// `llm.invocation_parameters` or a tool's `json_schema` is a string that is not JSON.
fn request(span: &Span<'_>) -> Result<Option<CaptureRequest>, RecordError> {
    let a = &span.attrs;
    if let Some(Value::String(s)) = a.get("input.value")
        && let Ok(Value::Object(body)) = crate::core::stage::parse::parse_strict(s)
        && (body.contains_key("response_format") || body.contains_key("tools"))
    {
        return Ok(Some(CaptureRequest {
            body: Value::Object(body),
            base: "",
            echoed: true,
        }));
    }
    let mut body = match json_attr(a, "llm.invocation_parameters") {
        Ok(Some(Value::Object(o))) => o,
        Ok(Some(v)) => {
            return Err(broken_attr(
                FORMAT,
                span,
                "llm.invocation_parameters",
                &must_be("a JSON object", &v),
            ));
        }
        Ok(None) => Map::new(),
        Err(p) => return Err(broken_attr(FORMAT, span, "llm.invocation_parameters", &p)),
    };
    let mut tools = Vec::new();
    for i in 0.. {
        let key = format!("llm.tools.{i}.tool.json_schema");
        match json_attr(a, &key) {
            Ok(Some(t)) => tools.push(t),
            Ok(None) => break,
            Err(p) => return Err(broken_attr(FORMAT, span, &key, &p)),
        }
    }
    if !tools.is_empty() && !body.contains_key("tools") {
        body.insert("tools".into(), Value::Array(tools));
    }
    if body.contains_key("tools") || body.contains_key("response_format") {
        Ok(Some(CaptureRequest {
            body: Value::Object(body),
            base: "",
            echoed: true,
        }))
    } else {
        Ok(None)
    }
}

fn info(span: &Span<'_>) -> ResponseInfo {
    let a = &span.attrs;
    let count = |k: &str| a.get(k).and_then(adapter::count);
    let tokens = TokenUsage {
        input_tokens: count("llm.token_count.prompt"),
        output_tokens: count("llm.token_count.completion"),
        total_tokens: count("llm.token_count.total"),
    };
    ResponseInfo {
        provider: FORMAT.to_owned(),
        model: attr_str(a, "llm.model_name").map(str::to_owned),
        tokens: (tokens != TokenUsage::default()).then_some(tokens),
        ..ResponseInfo::default()
    }
}

/// An OpenInference `LLM` span's capture. A failed span (status ERROR, or an `exception`
/// event) is `REQUEST_ERROR`; else the flattened output message of choice 0 with
/// `llm.finish_reason`; else `output.value`: a provider response JSON (OpenAI's, as the
/// OpenAI instrumentation writes it) is read by that provider's adapter, any other text
/// is the proposal; no output at all is `NO_OUTPUT`.
pub(super) fn llm(span: Span<'_>) -> Result<Capture, RecordError> {
    let mut meta = span_meta(&span);
    if let Some(s) = attr_str(&span.attrs, "session.id") {
        meta.string(crate::core::meta::MetaKey::SessionId, s);
    }
    let request = request(&span)?;
    let mut info = info(&span);
    let a = &span.attrs;
    let failed = status_error(&span);
    let exc = exception(&span);
    let payload = if failed.is_some() || exc.is_some() {
        let mut what = match failed.as_deref() {
            Some("") => "span status ERROR".to_owned(),
            Some(m) => format!("span status ERROR ({})", adapter::quote(m)),
            None => "the span".to_owned(),
        };
        let mut words = failed.clone().unwrap_or_default();
        if let Some((t, m)) = &exc {
            what.push_str(&format!(", exception {}", adapter::quote(t)));
            if !m.is_empty() {
                what.push_str(&format!(" ({})", adapter::quote(m)));
            }
            info.stop_reason = Some(t.clone()).filter(|t| !t.is_empty());
            words.push(' ');
            words.push_str(t);
            words.push(' ');
            words.push_str(m);
        }
        span_payload(info, Err(request_failed(what, &words)))
    } else if let Some((text, calls)) = output_message(a) {
        let finish = attr_str(a, "llm.finish_reason").map(|f| (f, "llm.finish_reason".to_owned()));
        let result = finished(
            &mut info,
            finish,
            &calls,
            text,
            "llm.output_messages.0.message.content",
        );
        span_payload(info, result)
    } else if let Some(Value::String(out)) = a.get("output.value") {
        let response = (attr_str(a, "output.mime_type") == Some("application/json"))
            .then(|| crate::core::stage::parse::parse_strict(out).ok())
            .flatten()
            .filter(|v| adapter::recognise(v).is_some());
        match response {
            Some(r) => Payload::Response(r),
            None => {
                let finish =
                    attr_str(a, "llm.finish_reason").map(|f| (f, "llm.finish_reason".to_owned()));
                let result = finished(&mut info, finish, &[], Some(out.clone()), "output.value");
                span_payload(info, result)
            }
        }
    } else {
        span_payload(
            info,
            Err(response_finding(
                Reason::NO_OUTPUT,
                "the span has no output (llm.output_messages, output.value): nothing to validate",
            )),
        )
    };
    let mut c = native_meta(FORMAT, span.id.clone(), payload, meta.finish());
    c.request = request;
    Ok(c)
}

/// An OpenInference `TOOL` span's capture: its `output.value` (a JSON string parsed
/// strictly, or a structured value) is the proposal, checked against the contract of the
/// tool `tool.name`; a failed span is `TOOL_ERROR`.
pub(super) fn tool(span: Span<'_>) -> Result<Capture, RecordError> {
    let meta = span_meta(&span);
    let a = &span.attrs;
    let name = attr_str(a, "tool.name").map(str::to_owned);
    let mut info = ResponseInfo {
        provider: FORMAT.to_owned(),
        tool: name.clone(),
        ..ResponseInfo::default()
    };
    let exc = exception(&span).map(|(t, _)| t).filter(|t| !t.is_empty());
    let result = tool_result(
        &span,
        &mut info,
        a.get("output.value"),
        exc.as_deref(),
        "output.value",
    );
    let mut c = native_meta(
        FORMAT,
        span.id.clone(),
        span_payload(info, result),
        meta.finish(),
    );
    c.tool = name;
    Ok(c)
}
