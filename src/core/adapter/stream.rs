//! Captured streams (`docs/record-shapes.md#streams`): a JSON array of events, or a string of SSE text
//! (`event: ...\ndata: {...}\n\n`). The deltas are assembled into the provider's
//! non-streamed response shape, which goes through the same completion logic; a stream
//! without its provider's terminal event is `INCOMPLETE`. The first terminal event decides:
//! an event after it that is not one of the provider's trailers (a Chat usage chunk,
//! Bedrock's `metadata`, Anthropic's `message_stop` after the `message_delta` with the stop
//! reason, a Gemini chunk with `usageMetadata` only) is `INVALID_CAPTURE`. SSE `data:` is
//! read as strictly as a capture record (`docs/record-shapes.md#streams`).
//!
//! Event shapes, from each provider's streaming documentation:
//! - Anthropic "Streaming Messages" (docs.anthropic.com/en/docs/build-with-claude/streaming):
//!   `message_start` (`message` with `model`, `usage`), `content_block_start` (`index`,
//!   `content_block`), `content_block_delta` (`delta` of type `text_delta` with `text`, or
//!   `input_json_delta` with `partial_json`), `content_block_stop`, `message_delta`
//!   (`delta.stop_reason`, `usage`), `message_stop` (terminal), `ping`, `error`
//!   (`{"type": "error", "error": {...}}`).
//! - OpenAI Chat Completions "The chat completion chunk object"
//!   (platform.openai.com/docs/api-reference/chat-streaming): `object:
//!   "chat.completion.chunk"`, `choices[].delta` with `content`, `refusal`, `tool_calls[]`
//!   (`index`, then `id`, `function.name`, `function.arguments` fragments);
//!   `choices[].finish_reason` (terminal when non-null); a last chunk with `usage` and
//!   empty `choices`; SSE ends with `data: [DONE]`.
//! - OpenAI Responses "Streaming events" (platform.openai.com/docs/api-reference/responses-streaming):
//!   `response.created` / `response.in_progress` (`response` snapshot),
//!   `response.output_item.added` / `.done` (`output_index`, `item`),
//!   `response.content_part.added` / `.done`, `response.output_text.delta` / `.done`,
//!   `response.refusal.delta` / `.done`, `response.function_call_arguments.delta` / `.done`,
//!   and the terminal `response.completed`, `response.incomplete`, `response.failed`
//!   (each with the final `response`); `error` events (`code`, `message`).
//! - Gemini `streamGenerateContent` (ai.google.dev/api/generate-content#method:-models.streamgeneratecontent):
//!   each chunk is a `GenerateContentResponse` holding the next parts; the last carries
//!   `finishReason` (terminal) and the final `usageMetadata`. With `alt=sse` each chunk is a
//!   `data:` line; without it the body is a JSON array of chunks.
//!
//! - Bedrock ConverseStream ("ConverseStreamOutput",
//!   docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html):
//!   each event is a union of one key: `messageStart` (`role`), `contentBlockStart`
//!   (`contentBlockIndex`, `start.toolUse` with `toolUseId`, `name`), `contentBlockDelta`
//!   (`contentBlockIndex`, `delta` with `text`, `toolUse.input` (a string fragment) or
//!   `reasoningContent`), `contentBlockStop`, `messageStop` (`stopReason`; terminal),
//!   `metadata` (`usage`, `metrics`, `trace`), and the exceptions
//!   `internalServerException` (500), `modelStreamErrorException` (424),
//!   `validationException` (400), `throttlingException` (429),
//!   `serviceUnavailableException` (503), each `{message}`.
//! - Ollama `/api/chat` with `stream: true` (github.com/ollama/ollama `docs/api.md`): NDJSON
//!   chunks shaped as the final response, `message.content` fragments with `done: false`,
//!   then a last chunk with `done: true` (terminal), `done_reason` and the counts; an
//!   `{"error": "..."}` line on failure.
//! - Cohere v2 chat streams (docs.cohere.com/docs/streaming): events by `type`:
//!   `message-start` (`id`), `content-start` / `content-delta` (`index`,
//!   `delta.message.content.text`), `content-end`, `tool-plan-delta`
//!   (`delta.message.tool_plan`), `tool-call-start` (`index`, `delta.message.tool_calls`
//!   with `id`, `function.name`), `tool-call-delta` (`function.arguments` fragments),
//!   `tool-call-end`, `citation-*`, and the terminal `message-end`
//!   (`delta.finish_reason`, `delta.usage`).
//! - Azure OpenAI: Chat chunks whose first has `choices: []` and `prompt_filter_results`
//!   (normal), later chunks with `content_filter_results` per choice.
//!
//! Streamed tool arguments (Anthropic `partial_json`, OpenAI argument deltas, Bedrock
//! `toolUse.input` fragments) assemble to text and are parsed strictly; Gemini streams
//! whole `functionCall` parts and Ollama whole `tool_calls`, so their arguments stay
//! structured.

use super::{
    Adapted, Provider, UNKNOWN_PROVIDER, adapt_object, chat_variant, error_body, invalid_capture,
    kind, ollama, quote, response_finding, str_at,
};
use crate::core::stage::parse;
use crate::core::verdict::{Finding, Reason, ResponseInfo};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The event names of a Bedrock ConverseStream (each event is an object with one of
/// these keys), the exceptions last.
const BEDROCK_EVENTS: [&str; 11] = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
];

/// The HTTP status of each Bedrock stream exception ("ConverseStreamOutput").
const BEDROCK_EXCEPTIONS: [(&str, u64); 5] = [
    ("internalServerException", 500),
    ("modelStreamErrorException", 424),
    ("validationException", 400),
    ("throttlingException", 429),
    ("serviceUnavailableException", 503),
];

/// The event types of a Cohere v2 chat stream (`type`, kebab-case).
const COHERE_EVENTS: [&str; 12] = [
    "message-start",
    "content-start",
    "content-delta",
    "content-end",
    "tool-plan-delta",
    "tool-call-start",
    "tool-call-delta",
    "tool-call-end",
    "citation-start",
    "citation-end",
    "message-end",
    "debug",
];

/// The Bedrock event name of `v`: its one key, when that is a ConverseStream event.
fn bedrock_event(v: &Value) -> Option<&'static str> {
    let m = v.as_object()?;
    if m.len() != 1 {
        return None;
    }
    let key = m.keys().next()?;
    BEDROCK_EVENTS.iter().copied().find(|e| e == key)
}

/// Whether a single object looks like one streamed event rather than a whole response.
pub(crate) fn looks_like_event(v: &Value) -> bool {
    bedrock_event(v).is_some()
        || str_at(v, "type").is_some_and(|t| COHERE_EVENTS.contains(&t))
        || str_at(v, "object") == Some("chat.completion.chunk")
        || str_at(v, "type").is_some_and(|t| {
            t.starts_with("response.")
                || matches!(
                    t,
                    "message_start"
                        | "content_block_start"
                        | "content_block_delta"
                        | "message_delta"
                        | "message_stop"
                )
        })
}

/// Adapts a captured stream: `response` is an array of events or a string of SSE text.
pub(crate) fn adapt(response: &Value, forced: Option<Provider>, tool: Option<&str>) -> Adapted {
    let parsed;
    let raw: Vec<&Value> = match response {
        Value::String(text) => match parse_sse(text) {
            Ok(events) => {
                parsed = events;
                parsed.iter().collect()
            }
            Err(f) => return fail(forced, f),
        },
        Value::Array(a) => a.iter().filter(|e| e.as_str() != Some("[DONE]")).collect(),
        other => {
            return fail(
                forced,
                invalid_capture(format!(
                    "a stream is an array or SSE text, not {}",
                    kind(other)
                )),
            );
        }
    };
    if let Some((i, e)) = raw.iter().enumerate().find(|(_, e)| !e.is_object()) {
        return fail(
            forced,
            invalid_capture(format!(
                "stream event {i} is {}: expected an object",
                kind(e)
            )),
        );
    }
    let events = raw;
    let provider = match forced {
        Some(p) => p,
        None => match events.first() {
            None => {
                return fail(
                    None,
                    invalid_capture("the stream holds no events, so its provider cannot be read")
                        .with_hint("set `provider`, or capture the whole stream"),
                );
            }
            Some(first) => match provider_of(first) {
                Some(p) => p,
                None if error_body::is_error_body(first) => return error_body::adapt(first, true),
                None => {
                    return fail(
                        None,
                        invalid_capture(format!(
                            "unrecognised stream: the first event ({}) is not message_start, a \
                             chat.completion.chunk, a response.* event, a Gemini chunk, a \
                             Bedrock ConverseStream event, an Ollama chunk or a Cohere event",
                            describe_event(first)
                        ))
                        .with_hint("set `provider` to force an adapter"),
                    );
                }
            },
        },
    };
    // a Chat stream's variant is read from every chunk (Azure's filter fields or a
    // compatible server's marker may first appear late), unless `provider` forced one
    let provider = match (forced, provider.is_chat()) {
        (None, true) => chat_stream_variant(&events),
        _ => provider,
    };
    let assembled = match provider {
        Provider::Anthropic => assemble_anthropic(&events),
        Provider::OpenAiChat | Provider::AzureOpenAi | Provider::OpenAiCompatible => {
            assemble_chat(&events)
        }
        Provider::OpenAiResponses => assemble_responses(&events),
        Provider::Gemini => assemble_gemini(&events),
        Provider::BedrockConverse => assemble_bedrock(&events),
        Provider::Ollama => assemble_ollama(&events),
        Provider::Cohere => assemble_cohere(&events),
    };
    let mut adapted = adapt_object(provider, &assembled.response, tool);
    adapted.info.stream = true;
    if let Some(f) = assembled.after_end {
        adapted.result = Err(f);
    } else if let Some((i, err)) = assembled.error {
        let e = error_body::error_object(&err);
        adapted.info.stop_reason = error_body::stop_name(e);
        adapted.result = Err(error_body::request_error(
            e,
            &format!("stream event {i} (error)"),
        ));
    } else if !assembled.terminal {
        adapted.result = Err(response_finding(
            Reason::INCOMPLETE,
            format!(
                "{} stream ended after {} event{} without {}: the stream was cut",
                provider.name(),
                events.len(),
                if events.len() == 1 { "" } else { "s" },
                terminal_name(provider)
            ),
        ));
    }
    adapted
}

fn terminal_name(p: Provider) -> &'static str {
    match p {
        Provider::Anthropic => "message_stop",
        Provider::OpenAiChat => "a chunk with a non-null finish_reason",
        Provider::OpenAiResponses => {
            "response.completed (or response.incomplete / response.failed)"
        }
        Provider::Gemini => "a chunk with finishReason",
        Provider::AzureOpenAi | Provider::OpenAiCompatible => {
            "a chunk with a non-null finish_reason"
        }
        Provider::BedrockConverse => "messageStop",
        Provider::Ollama => "a chunk with done: true",
        Provider::Cohere => "message-end",
    }
}

/// The Chat variant of a stream: Azure OpenAI when any chunk carries its filter fields,
/// else an OpenAI-compatible server when any chunk carries a marker, else OpenAI Chat.
fn chat_stream_variant(events: &[&Value]) -> Provider {
    let mut out = Provider::OpenAiChat;
    for e in events {
        match chat_variant(e) {
            Provider::AzureOpenAi => return Provider::AzureOpenAi,
            Provider::OpenAiCompatible => out = Provider::OpenAiCompatible,
            _ => {}
        }
    }
    out
}

fn fail(forced: Option<Provider>, f: Finding) -> Adapted {
    Adapted {
        info: ResponseInfo {
            provider: forced.map_or(UNKNOWN_PROVIDER, Provider::name).to_owned(),
            stream: true,
            ..ResponseInfo::default()
        },
        result: Err(f),
    }
}

fn describe_event(e: &Value) -> String {
    match (str_at(e, "type"), str_at(e, "object")) {
        (Some(t), _) => format!("type {}", quote(t)),
        (None, Some(o)) => format!("object {}", quote(o)),
        _ => "an object without `type` or `object`".to_owned(),
    }
}

/// The provider of a stream, read from its first event.
pub(crate) fn provider_of(first: &Value) -> Option<Provider> {
    if str_at(first, "object") == Some("chat.completion.chunk") {
        return Some(Provider::OpenAiChat);
    }
    // Azure's first chunk: `choices: []`, `prompt_filter_results`, and `object: ""`
    if first.get("choices").is_some_and(Value::is_array)
        && (first.get("prompt_filter_results").is_some()
            || first.get("prompt_annotations").is_some())
    {
        return Some(Provider::AzureOpenAi);
    }
    if bedrock_event(first).is_some() {
        return Some(Provider::BedrockConverse);
    }
    if str_at(first, "type").is_some_and(|t| COHERE_EVENTS.contains(&t)) {
        return Some(Provider::Cohere);
    }
    if ollama::detects(first) {
        return Some(Provider::Ollama);
    }
    match str_at(first, "type") {
        Some(
            "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "message_delta"
            | "message_stop",
        ) => return Some(Provider::Anthropic),
        Some(t) if t.starts_with("response.") => return Some(Provider::OpenAiResponses),
        _ => {}
    }
    if first.get("candidates").is_some_and(Value::is_array) || first.get("promptFeedback").is_some()
    {
        return Some(Provider::Gemini);
    }
    None
}

/// Parses SSE text (WHATWG HTML, "Server-sent events", the event stream interpretation):
/// lines end in CRLF, LF or CR; `data:` lines of one event join with LF; a blank line
/// dispatches; `:` lines are comments; `event:`, `id:`, `retry:` are not needed here.
/// Each event's data is one strict JSON value, read by the parse stage's reader
/// ([`parse::parse_strict`]: duplicate keys, `NaN`, numbers a double cannot hold are
/// errors, as in a capture record); OpenAI's `[DONE]` sentinel is skipped. A last event cut
/// before its blank line is kept when its data is strict JSON, dropped (a cut stream) when
/// the text ends inside its value (or inside `[DONE]`), and any other problem is an error.
///
/// # Errors
/// `INVALID_CAPTURE`: no `data:` line at all, or an event whose data is not strict JSON
/// (`SSE event at line 3: data is not valid JSON at 3:22: duplicate key "a" at /a`; the
/// position is in the SSE text).
pub(crate) fn parse_sse(text: &str) -> Result<Vec<Value>, Finding> {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut events = Vec::new();
    let mut data = String::new();
    // each data line of the event: its 1-based line and the characters before its value
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut saw_data_line = false;
    for (n, line) in normalized.split('\n').enumerate() {
        if line.is_empty() {
            if !lines.is_empty() {
                push_event(&mut events, &data, &lines)?;
            }
            data.clear();
            lines.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            if !lines.is_empty() {
                data.push('\n');
            }
            data.push_str(value);
            lines.push((n + 1, line[..line.len() - value.len()].chars().count()));
            saw_data_line = true;
        }
    }
    if !lines.is_empty() {
        let cut =
            |f: &Finding| f.reason == Reason::TRUNCATED_JSON || "[DONE]".starts_with(data.trim());
        match strict_event(&data, &lines) {
            Ok(Some(v)) => events.push(v),
            Ok(None) => {}
            Err((f, _)) if cut(&f) => {}
            Err((_, e)) => return Err(e),
        }
    }
    if !saw_data_line {
        return Err(invalid_capture(
            "response is a string but holds no SSE `data:` lines: expected a captured stream",
        )
        .with_hint("store a provider's response body as a JSON object, not a string"));
    }
    Ok(events)
}

fn push_event(
    events: &mut Vec<Value>,
    data: &str,
    lines: &[(usize, usize)],
) -> Result<(), Finding> {
    if let Some(v) = strict_event(data, lines).map_err(|(_, e)| e)? {
        events.push(v);
    }
    Ok(())
}

/// One event's data read strictly: `None` for `[DONE]`; on error the parse finding and
/// the `INVALID_CAPTURE` it makes, positioned in the SSE text (`lines` as in [`parse_sse`]).
fn strict_event(data: &str, lines: &[(usize, usize)]) -> Result<Option<Value>, (Finding, Finding)> {
    if data.trim() == "[DONE]" {
        return Ok(None);
    }
    parse::parse_strict(data).map(Some).map_err(|f| {
        let first = lines.first().map_or(1, |l| l.0);
        let at =
            f.at.map(|at| {
                let (line, prefix) = lines
                    .get((at.line as usize).saturating_sub(1))
                    .copied()
                    .unwrap_or((first, 0));
                format!(" at {line}:{}", at.column as usize + prefix)
            })
            .unwrap_or_default();
        // valid JSON that is only too deep is not called invalid (as a capture record)
        let what = if f.reason == Reason::TOO_DEEP {
            "data"
        } else {
            "data is not valid JSON"
        };
        let e = invalid_capture(format!(
            "SSE event at line {first}: {what}{at}: {}",
            f.message
        ));
        (f, e)
    })
}

/// An assembled stream: the non-streamed response it amounts to, whether the terminal
/// event arrived, and the first error event (its index and the event).
struct Assembled {
    response: Value,
    terminal: bool,
    error: Option<(usize, Value)>,
    /// An event after the stream's end (its first terminal event) that is not one of the
    /// provider's trailers: the stream is `INVALID_CAPTURE` ([`after_end`]).
    after_end: Option<Finding>,
}

/// The end of a stream: the index of its first terminal event and what it was.
type End = Option<(usize, String)>;

/// The `INVALID_CAPTURE` of event `i` that comes after the terminal event `end`: the first
/// terminal event decides (`docs/record-shapes.md#streams`), and nothing may follow it but
/// the provider's trailers (a usage chunk, Bedrock's `metadata`, Anthropic's
/// `message_stop` after the `message_delta` that carried the stop reason).
fn after_end(i: usize, ev: &Value, end: &(usize, String)) -> Finding {
    invalid_capture(format!(
        "stream continues after its end: event {i} ({}) comes after the terminal event {} ({})",
        event_label(ev),
        end.0,
        end.1
    ))
    .with_hint("capture one stream per record: a stream ends at its first terminal event")
}

/// An event as a message names it: its `type`, `object`, Bedrock event name, else `a chunk`.
fn event_label(e: &Value) -> String {
    match (bedrock_event(e), str_at(e, "type"), str_at(e, "object")) {
        (Some(b), _, _) => b.to_owned(),
        (None, Some(t), _) => format!("type {}", quote(t)),
        (None, None, Some(o)) => format!("object {}", quote(o)),
        _ => "a chunk".to_owned(),
    }
}

/// Whether a Chat chunk adds nothing after the finish chunk: no error, and its first
/// choice (if any) has no text, refusal or tool-call delta and no `finish_reason` (a usage
/// chunk with `choices: []`, Azure's late `content_filter_results`).
fn chat_trailer(ev: &Value) -> bool {
    let piece = |d: &Value, k: &str| match d.get(k) {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(_) => true,
    };
    ev.get("error").is_none_or(Value::is_null)
        && ev
            .get("choices")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|c| index_of(c, "index") == 0)
            .all(|c| {
                let d = c.get("delta").unwrap_or(&Value::Null);
                c.get("finish_reason").is_none_or(Value::is_null)
                    && !["content", "refusal", "tool_calls", "function_call"]
                        .iter()
                        .any(|k| piece(d, k))
            })
}

/// Whether a Gemini chunk adds nothing after the finishing chunk: no error, no block, no
/// part with content, and no other `finishReason` (a last chunk with `usageMetadata` only).
fn gemini_trailer(ev: &Value, finish: Option<&Value>) -> bool {
    let first = ev
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    let parts_empty = first
        .and_then(|c| c.get("content"))
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
        .is_none_or(|parts| {
            parts.iter().all(|p| {
                p.as_object().is_some_and(|m| {
                    m.iter()
                        .all(|(k, v)| k == "text" && v.as_str() == Some("") || k == "thought")
                })
            })
        });
    let same_finish = first
        .and_then(|c| c.get("finishReason"))
        .is_none_or(|f| f.is_null() || Some(f) == finish);
    ev.get("error").is_none_or(Value::is_null)
        && ev
            .get("promptFeedback")
            .and_then(|p| p.get("blockReason"))
            .is_none_or(Value::is_null)
        && parts_empty
        && same_finish
}

fn index_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn append(target: &mut Map<String, Value>, key: &str, piece: &str) {
    match target.get_mut(key) {
        Some(Value::String(s)) => s.push_str(piece),
        _ => {
            target.insert(key.to_owned(), Value::String(piece.to_owned()));
        }
    }
}

/// Merges `usage` objects key by key (Anthropic sends input usage in `message_start` and
/// the output count in `message_delta`).
fn merge_usage(usage: &mut Option<Value>, more: Option<&Value>) {
    let Some(Value::Object(more)) = more else {
        return;
    };
    match usage {
        Some(Value::Object(u)) => {
            for (k, v) in more {
                u.insert(k.clone(), v.clone());
            }
        }
        _ => *usage = Some(Value::Object(more.clone())),
    }
}

fn assemble_anthropic(events: &[&Value]) -> Assembled {
    let mut out = Assembled {
        response: Value::Null,
        terminal: false,
        error: None,
        after_end: None,
    };
    let mut message = Map::new();
    let mut usage: Option<Value> = None;
    let mut stop_reason = Value::Null;
    // index -> (block, partial_json fragments if any arrived)
    let mut blocks: BTreeMap<u64, (Map<String, Value>, Option<String>)> = BTreeMap::new();
    let mut end: End = None;
    for (i, ev) in events.iter().enumerate() {
        let t = str_at(ev, "type");
        if let Some(e) = &end {
            // after the stop reason: pings, usage-only deltas (or the same stop reason), and
            // message_stop once
            let delta_stop = ev.get("delta").and_then(|d| d.get("stop_reason"));
            let trailer = match t {
                Some("ping") => true,
                Some("message_delta") => {
                    !out.terminal && delta_stop.is_none_or(|s| s.is_null() || *s == stop_reason)
                }
                Some("message_stop") => !out.terminal,
                _ => false,
            };
            if !trailer {
                out.after_end = Some(after_end(i, ev, e));
                break;
            }
        }
        match t {
            Some("message_start") => {
                if let Some(Value::Object(m)) = ev.get("message") {
                    for key in ["id", "model", "role"] {
                        if let Some(v) = m.get(key) {
                            message.insert(key.to_owned(), v.clone());
                        }
                    }
                    merge_usage(&mut usage, m.get("usage"));
                }
            }
            Some("content_block_start") => {
                let block = match ev.get("content_block") {
                    Some(Value::Object(b)) => b.clone(),
                    _ => Map::new(),
                };
                blocks.insert(index_of(ev, "index"), (block, None));
            }
            Some("content_block_delta") => {
                let entry = blocks.entry(index_of(ev, "index")).or_default();
                let delta = ev.get("delta").unwrap_or(&Value::Null);
                match str_at(delta, "type") {
                    Some("text_delta") => {
                        entry
                            .0
                            .entry("type")
                            .or_insert_with(|| Value::String("text".into()));
                        append(
                            &mut entry.0,
                            "text",
                            str_at(delta, "text").unwrap_or_default(),
                        );
                    }
                    Some("input_json_delta") => entry
                        .1
                        .get_or_insert_with(String::new)
                        .push_str(str_at(delta, "partial_json").unwrap_or_default()),
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(s) = ev
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .filter(|s| !s.is_null())
                {
                    stop_reason = s.clone();
                    end.get_or_insert_with(|| (i, format!("message_delta with stop_reason {s}")));
                }
                merge_usage(&mut usage, ev.get("usage"));
            }
            Some("message_stop") => {
                out.terminal = true;
                end.get_or_insert_with(|| (i, "message_stop".to_owned()));
            }
            Some("error") if out.error.is_none() => out.error = Some((i, (*ev).clone())),
            _ => {}
        }
    }
    let content: Vec<Value> = blocks
        .into_values()
        .map(|(mut block, partial)| {
            if let Some(p) = partial {
                block.insert("input".into(), Value::String(p));
            }
            Value::Object(block)
        })
        .collect();
    message.insert("type".into(), Value::String("message".into()));
    message.insert("content".into(), Value::Array(content));
    message.insert("stop_reason".into(), stop_reason);
    if let Some(u) = usage {
        message.insert("usage".into(), u);
    }
    out.response = Value::Object(message);
    out
}

fn assemble_chat(events: &[&Value]) -> Assembled {
    let mut out = Assembled {
        response: Value::Null,
        terminal: false,
        error: None,
        after_end: None,
    };
    let mut model = None;
    let mut usage = None;
    let mut finish = Value::Null;
    let mut message = Map::new();
    let mut calls: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    let mut function_call: Option<Map<String, Value>> = None;
    // Azure's filter fields and the compatible servers' markers, kept for their adapters
    let mut prompt_filters: Vec<Value> = Vec::new();
    let mut content_filters: Option<Value> = None;
    let mut top = Map::new();
    let mut choice_extra = Map::new();
    let mut end: End = None;
    for (i, ev) in events.iter().enumerate() {
        if let Some(e) = &end
            && !chat_trailer(ev)
        {
            out.after_end = Some(after_end(i, ev, e));
            break;
        }
        if ev.get("error").is_some_and(Value::is_object) {
            if out.error.is_none() {
                out.error = Some((i, (*ev).clone()));
            }
            continue;
        }
        if let Some(m) = ev
            .get("model")
            .filter(|m| m.as_str().is_some_and(|m| !m.is_empty()))
        {
            model = Some(m.clone());
        }
        for key in ["prompt_filter_results", "prompt_annotations"] {
            match ev.get(key) {
                Some(Value::Array(a)) => prompt_filters.extend(a.iter().cloned()),
                // a broken field is kept as it is, for the adapter to name
                Some(other) if !other.is_null() => {
                    top.insert(key.to_owned(), other.clone());
                }
                _ => {}
            }
        }
        if let Some(p) = ev.get("provider").filter(|p| p.is_string()) {
            top.entry("provider").or_insert_with(|| p.clone());
        }
        if let Some(u) = ev.get("usage").filter(|u| !u.is_null()) {
            usage = Some(u.clone());
        }
        let choices = ev
            .get("choices")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for choice in choices.iter().filter(|c| index_of(c, "index") == 0) {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            for key in ["content", "refusal"] {
                if let Some(piece) = str_at(delta, key) {
                    append(&mut message, key, piece);
                }
            }
            let tool_deltas = delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            for (pos, tc) in tool_deltas.iter().enumerate() {
                let key = tc
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(pos as u64);
                let call = calls.entry(key).or_default();
                for k in ["id", "type"] {
                    if let Some(v) = tc.get(k).filter(|v| v.is_string()) {
                        call.insert(k.to_owned(), v.clone());
                    }
                }
                let f = tc.get("function").unwrap_or(&Value::Null);
                let func = match call
                    .entry("function")
                    .or_insert_with(|| Value::Object(Map::new()))
                {
                    Value::Object(m) => m,
                    _ => continue,
                };
                if let Some(name) = str_at(f, "name") {
                    func.insert("name".into(), Value::String(name.into()));
                }
                append(
                    func,
                    "arguments",
                    str_at(f, "arguments").unwrap_or_default(),
                );
            }
            if let Some(fc) = delta.get("function_call").filter(|f| f.is_object()) {
                let func = function_call.get_or_insert_with(Map::new);
                if let Some(name) = str_at(fc, "name") {
                    func.insert("name".into(), Value::String(name.into()));
                }
                append(
                    func,
                    "arguments",
                    str_at(fc, "arguments").unwrap_or_default(),
                );
            }
            if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
                finish = f.clone();
                out.terminal = true;
                end.get_or_insert_with(|| (i, format!("finish_reason {f}")));
            }
            merge_filters(&mut content_filters, choice.get("content_filter_results"));
            for key in ["native_finish_reason", "stop_reason", "error"] {
                if let Some(v) = choice.get(key).filter(|v| !v.is_null()) {
                    choice_extra.insert(key.to_owned(), v.clone());
                } else if choice.get(key).is_some() {
                    choice_extra.entry(key).or_insert(Value::Null);
                }
            }
        }
    }
    message.insert("role".into(), Value::String("assistant".into()));
    if !calls.is_empty() {
        message.insert(
            "tool_calls".into(),
            Value::Array(calls.into_values().map(Value::Object).collect()),
        );
    }
    if let Some(fc) = function_call {
        message.insert("function_call".into(), Value::Object(fc));
    }
    let mut resp = Map::new();
    resp.insert("object".into(), Value::String("chat.completion".into()));
    if let Some(m) = model {
        resp.insert("model".into(), m);
    }
    let mut choice = serde_json::json!({"index": 0, "message": message, "finish_reason": finish});
    if let Some(m) = choice.as_object_mut() {
        m.extend(choice_extra);
        if let Some(f) = content_filters {
            m.insert("content_filter_results".into(), f);
        }
    }
    resp.insert("choices".into(), Value::Array(vec![choice]));
    if let Some(u) = usage {
        resp.insert("usage".into(), u);
    }
    if !prompt_filters.is_empty() {
        resp.insert("prompt_filter_results".into(), Value::Array(prompt_filters));
    }
    resp.extend(top);
    out.response = Value::Object(resp);
    out
}

/// Merges a chunk's `content_filter_results` into the stream's: per category, an entry
/// that says `filtered: true` is kept, otherwise the latest entry wins (Azure annotates
/// each streamed segment on its own). A value that is not an object is kept as it is
/// (and nothing more is merged), so the adapter names it.
fn merge_filters(merged: &mut Option<Value>, more: Option<&Value>) {
    let more = match more {
        None | Some(Value::Null) => return,
        Some(Value::Object(m)) => m,
        Some(other) => {
            *merged = Some(other.clone());
            return;
        }
    };
    let Value::Object(merged) = merged.get_or_insert_with(|| Value::Object(Map::new())) else {
        return;
    };
    for (k, v) in more {
        let keep = merged
            .get(k)
            .and_then(|old| old.get("filtered"))
            .is_some_and(|f| f == &Value::Bool(true));
        if !keep {
            merged.insert(k.clone(), v.clone());
        }
    }
}

/// One output item of a Responses stream under assembly.
#[derive(Default)]
struct Item {
    value: Map<String, Value>,
    parts: BTreeMap<u64, Map<String, Value>>,
}

impl Item {
    fn ensure_type(&mut self, t: &str) {
        self.value
            .entry("type")
            .or_insert_with(|| Value::String(t.to_owned()));
    }
}

fn assemble_responses(events: &[&Value]) -> Assembled {
    let mut out = Assembled {
        response: Value::Null,
        terminal: false,
        error: None,
        after_end: None,
    };
    let mut snapshot: Map<String, Value> = Map::new();
    let mut items: BTreeMap<u64, Item> = BTreeMap::new();
    let mut end: End = None;
    for (i, ev) in events.iter().enumerate() {
        let t = str_at(ev, "type").unwrap_or_default();
        if let Some(e) = &end {
            out.after_end = Some(after_end(i, ev, e));
            break;
        }
        let idx = index_of(ev, "output_index");
        let cidx = index_of(ev, "content_index");
        match t {
            "response.created"
            | "response.in_progress"
            | "response.queued"
            | "response.completed"
            | "response.incomplete"
            | "response.failed" => {
                if let Some(Value::Object(r)) = ev.get("response") {
                    snapshot = r.clone();
                }
                if matches!(
                    t,
                    "response.completed" | "response.incomplete" | "response.failed"
                ) {
                    out.terminal = true;
                    end = Some((i, t.to_owned()));
                }
            }
            "error" if out.error.is_none() => out.error = Some((i, (*ev).clone())),
            "response.output_item.added" | "response.output_item.done" => {
                if let Some(Value::Object(item)) = ev.get("item") {
                    items.insert(
                        idx,
                        Item {
                            value: item.clone(),
                            parts: BTreeMap::new(),
                        },
                    );
                }
            }
            "response.content_part.added" | "response.content_part.done" => {
                if let Some(Value::Object(part)) = ev.get("part") {
                    let item = items.entry(idx).or_default();
                    item.ensure_type("message");
                    item.parts.insert(cidx, part.clone());
                }
            }
            "response.output_text.delta"
            | "response.output_text.done"
            | "response.refusal.delta"
            | "response.refusal.done" => {
                let (part_type, key) = if t.starts_with("response.output_text") {
                    ("output_text", "text")
                } else {
                    ("refusal", "refusal")
                };
                let item = items.entry(idx).or_default();
                item.ensure_type("message");
                let part = item.parts.entry(cidx).or_default();
                part.entry("type")
                    .or_insert_with(|| Value::String(part_type.into()));
                if t.ends_with(".delta") {
                    append(part, key, str_at(ev, "delta").unwrap_or_default());
                } else if let Some(full) = str_at(ev, key) {
                    part.insert(key.into(), Value::String(full.into()));
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                let item = items.entry(idx).or_default();
                item.ensure_type("function_call");
                if t.ends_with(".delta") {
                    append(
                        &mut item.value,
                        "arguments",
                        str_at(ev, "delta").unwrap_or_default(),
                    );
                } else if let Some(full) = str_at(ev, "arguments") {
                    item.value
                        .insert("arguments".into(), Value::String(full.into()));
                }
            }
            _ => {}
        }
    }
    if !items.is_empty() {
        let output: Vec<Value> = items
            .into_values()
            .map(|mut item| {
                if !item.parts.is_empty() {
                    let parts = item.parts.into_values().map(Value::Object).collect();
                    item.value.insert("content".into(), Value::Array(parts));
                }
                Value::Object(item.value)
            })
            .collect();
        snapshot.insert("output".into(), Value::Array(output));
    }
    snapshot.insert("object".into(), Value::String("response".into()));
    out.response = Value::Object(snapshot);
    out
}

fn assemble_gemini(events: &[&Value]) -> Assembled {
    let mut out = Assembled {
        response: Value::Null,
        terminal: false,
        error: None,
        after_end: None,
    };
    let mut resp = Map::new();
    let mut parts: Vec<Value> = Vec::new();
    let mut candidate = Map::new();
    let mut saw_candidate = false;
    let mut end: End = None;
    for (i, ev) in events.iter().enumerate() {
        if let Some(e) = &end
            && !gemini_trailer(ev, candidate.get("finishReason"))
        {
            out.after_end = Some(after_end(i, ev, e));
            break;
        }
        if ev.get("error").is_some_and(Value::is_object) {
            if out.error.is_none() {
                out.error = Some((i, (*ev).clone()));
            }
            continue;
        }
        for key in [
            "modelVersion",
            "usageMetadata",
            "promptFeedback",
            "responseId",
        ] {
            if let Some(v) = ev.get(key).filter(|v| !v.is_null()) {
                resp.insert(key.to_owned(), v.clone());
            }
        }
        if ev
            .get("promptFeedback")
            .and_then(|p| p.get("blockReason"))
            .is_some_and(|b| !b.is_null())
        {
            out.terminal = true;
            end.get_or_insert_with(|| (i, "promptFeedback.blockReason".to_owned()));
        }
        let first = ev
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        if let Some(c) = first {
            saw_candidate = true;
            if let Some(p) = c
                .get("content")
                .and_then(|c| c.get("parts"))
                .and_then(Value::as_array)
            {
                parts.extend(p.iter().cloned());
            }
            for key in ["finishReason", "finishMessage", "safetyRatings"] {
                if let Some(v) = c.get(key).filter(|v| !v.is_null()) {
                    candidate.insert(key.to_owned(), v.clone());
                }
            }
            if let Some(f) = c.get("finishReason").filter(|f| !f.is_null()) {
                out.terminal = true;
                end.get_or_insert_with(|| (i, format!("finishReason {f}")));
            }
        }
    }
    if saw_candidate {
        candidate.insert(
            "content".into(),
            serde_json::json!({"role": "model", "parts": parts}),
        );
        resp.insert(
            "candidates".into(),
            Value::Array(vec![Value::Object(candidate)]),
        );
    }
    out.response = Value::Object(resp);
    out
}

fn assemble_bedrock(events: &[&Value]) -> Assembled {
    let mut out = Assembled {
        response: Value::Null,
        terminal: false,
        error: None,
        after_end: None,
    };
    let mut role = Value::String("assistant".into());
    let mut blocks: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    let mut inputs: BTreeMap<u64, String> = BTreeMap::new();
    let mut resp = Map::new();
    let mut stop = Value::Null;
    let mut end: End = None;
    for (i, ev) in events.iter().enumerate() {
        if let Some(e) = &end
            && bedrock_event(ev) != Some("metadata")
        {
            out.after_end = Some(after_end(i, ev, e));
            break;
        }
        let Some(name) = bedrock_event(ev) else {
            continue;
        };
        let body = &ev[name];
        match name {
            "messageStart" => {
                if let Some(r) = body.get("role").filter(|r| r.is_string()) {
                    role = r.clone();
                }
            }
            "contentBlockStart" => {
                if let Some(Value::Object(t)) = body.get("start").and_then(|s| s.get("toolUse")) {
                    let mut tool_use = Map::new();
                    for k in ["toolUseId", "name"] {
                        if let Some(v) = t.get(k) {
                            tool_use.insert(k.to_owned(), v.clone());
                        }
                    }
                    let mut block = Map::new();
                    block.insert("toolUse".into(), Value::Object(tool_use));
                    blocks.insert(index_of(body, "contentBlockIndex"), block);
                }
            }
            "contentBlockDelta" => {
                let idx = index_of(body, "contentBlockIndex");
                let delta = body.get("delta").unwrap_or(&Value::Null);
                if let Some(t) = str_at(delta, "text") {
                    append(blocks.entry(idx).or_default(), "text", t);
                } else if let Some(t) = delta.get("toolUse") {
                    blocks
                        .entry(idx)
                        .or_default()
                        .entry("toolUse")
                        .or_insert_with(|| Value::Object(Map::new()));
                    inputs
                        .entry(idx)
                        .or_default()
                        .push_str(str_at(t, "input").unwrap_or_default());
                }
                // reasoningContent and citation deltas are not proposals
            }
            "messageStop" => {
                if let Some(s) = body.get("stopReason") {
                    stop = s.clone();
                }
                out.terminal = true;
                end = Some((i, "messageStop".to_owned()));
            }
            "metadata" => {
                for key in ["usage", "metrics", "trace"] {
                    if let Some(v) = body.get(key).filter(|v| !v.is_null()) {
                        resp.insert(key.to_owned(), v.clone());
                    }
                }
            }
            "contentBlockStop" => {}
            exception => {
                if out.error.is_none() {
                    let code = BEDROCK_EXCEPTIONS
                        .iter()
                        .find(|(n, _)| *n == exception)
                        .map_or(0, |(_, c)| *c);
                    let mut e = Map::new();
                    e.insert("type".into(), Value::String(exception.to_owned()));
                    e.insert("code".into(), Value::from(code));
                    if let Some(m) = body.get("message").filter(|m| m.is_string()) {
                        e.insert("message".into(), m.clone());
                    }
                    out.error = Some((i, Value::Object(e)));
                }
            }
        }
    }
    let content: Vec<Value> = blocks
        .into_iter()
        .map(|(idx, mut block)| {
            if let (Some(input), Some(Value::Object(t))) =
                (inputs.remove(&idx), block.get_mut("toolUse"))
            {
                t.insert("input".into(), Value::String(input));
            }
            Value::Object(block)
        })
        .collect();
    resp.insert(
        "output".into(),
        serde_json::json!({"message": {"role": role, "content": content}}),
    );
    resp.insert("stopReason".into(), stop);
    out.response = Value::Object(resp);
    out
}

fn assemble_cohere(events: &[&Value]) -> Assembled {
    let mut out = Assembled {
        response: Value::Null,
        terminal: false,
        error: None,
        after_end: None,
    };
    let mut resp = Map::new();
    let mut blocks: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    let mut calls: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    let mut tool_plan: Option<String> = None;
    let mut finish = Value::Null;
    let mut end: End = None;
    for (i, ev) in events.iter().enumerate() {
        if let Some(e) = &end {
            out.after_end = Some(after_end(i, ev, e));
            break;
        }
        let message = ev
            .get("delta")
            .and_then(|d| d.get("message"))
            .unwrap_or(&Value::Null);
        let idx = index_of(ev, "index");
        match str_at(ev, "type") {
            Some("message-start") => {
                if let Some(id) = ev.get("id").filter(|i| i.is_string()) {
                    resp.insert("id".into(), id.clone());
                }
            }
            Some("content-start") => {
                if let Some(Value::Object(c)) = message.get("content") {
                    blocks.insert(idx, c.clone());
                }
            }
            Some("content-delta") => {
                if let Some(t) = message.get("content").and_then(|c| str_at(c, "text")) {
                    let block = blocks.entry(idx).or_default();
                    block
                        .entry("type")
                        .or_insert_with(|| Value::String("text".into()));
                    append(block, "text", t);
                }
            }
            Some("tool-plan-delta") => {
                if let Some(t) = str_at(message, "tool_plan") {
                    tool_plan.get_or_insert_with(String::new).push_str(t);
                }
            }
            Some("tool-call-start") => {
                if let Some(Value::Object(c)) = message.get("tool_calls") {
                    calls.insert(idx, c.clone());
                }
            }
            Some("tool-call-delta") => {
                let piece = message
                    .get("tool_calls")
                    .and_then(|c| c.get("function"))
                    .and_then(|f| str_at(f, "arguments"))
                    .unwrap_or_default();
                let call = calls.entry(idx).or_default();
                if let Value::Object(f) = call
                    .entry("function")
                    .or_insert_with(|| Value::Object(Map::new()))
                {
                    append(f, "arguments", piece);
                }
            }
            Some("message-end") => {
                let delta = ev.get("delta").unwrap_or(&Value::Null);
                if let Some(f) = delta.get("finish_reason") {
                    finish = f.clone();
                }
                if let Some(u) = delta.get("usage").filter(|u| !u.is_null()) {
                    resp.insert("usage".into(), u.clone());
                }
                out.terminal = true;
                end = Some((i, "message-end".to_owned()));
            }
            _ => {}
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), Value::String("assistant".into()));
    if !blocks.is_empty() {
        message.insert(
            "content".into(),
            Value::Array(blocks.into_values().map(Value::Object).collect()),
        );
    }
    if let Some(t) = tool_plan {
        message.insert("tool_plan".into(), Value::String(t));
    }
    if !calls.is_empty() {
        message.insert(
            "tool_calls".into(),
            Value::Array(calls.into_values().map(Value::Object).collect()),
        );
    }
    resp.insert("finish_reason".into(), finish);
    resp.insert("message".into(), Value::Object(message));
    out.response = Value::Object(resp);
    out
}

fn assemble_ollama(events: &[&Value]) -> Assembled {
    let mut out = Assembled {
        response: Value::Null,
        terminal: false,
        error: None,
        after_end: None,
    };
    let mut resp = Map::new();
    let mut content = String::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut end: End = None;
    for (i, ev) in events.iter().enumerate() {
        if let Some(e) = &end {
            out.after_end = Some(after_end(i, ev, e));
            break;
        }
        if let Some(e) = ev.get("error").filter(|e| !e.is_null()) {
            if out.error.is_none() {
                let e = match e {
                    Value::Object(_) => (*ev).clone(),
                    Value::String(s) => serde_json::json!({"message": s}),
                    other => serde_json::json!({"message": other.to_string()}),
                };
                out.error = Some((i, e));
            }
            continue;
        }
        for key in ["model", "created_at", "done_reason"]
            .iter()
            .chain(ollama::USAGE_KEYS.iter())
        {
            if let Some(v) = ev.get(*key).filter(|v| !v.is_null()) {
                resp.insert((*key).to_owned(), v.clone());
            }
        }
        if let Some(m) = ev.get("message") {
            if let Some(c) = str_at(m, "content") {
                content.push_str(c);
            }
            if let Some(Value::Array(tc)) = m.get("tool_calls") {
                calls.extend(tc.iter().cloned());
            }
        }
        if ev.get("done") == Some(&Value::Bool(true)) {
            out.terminal = true;
            end = Some((i, "done: true".to_owned()));
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), Value::String("assistant".into()));
    message.insert("content".into(), Value::String(content));
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    resp.insert("message".into(), Value::Object(message));
    resp.insert("done".into(), Value::Bool(out.terminal));
    out.response = Value::Object(resp);
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Adapted, Proposal, adapt_response};
    use super::parse_sse;
    use crate::core::verdict::{Decision, Reason, Stage, TokenUsage};
    use serde_json::{Value, json};

    /// SSE text for events, with `event:` lines named after `type` when there is one.
    fn sse(events: &[Value], named: bool) -> Value {
        let mut s = String::new();
        for e in events {
            if named && let Some(t) = e.get("type").and_then(Value::as_str) {
                s.push_str(&format!("event: {t}\n"));
            }
            s.push_str(&format!("data: {e}\n\n"));
        }
        Value::String(s)
    }

    /// Runs both forms (array and SSE) and checks they agree; returns the array result.
    fn both(events: &[Value], named: bool, tool: Option<&str>) -> Adapted {
        let a = adapt_response(&Value::Array(events.to_vec()), None, tool);
        let b = adapt_response(&sse(events, named), None, tool);
        assert_eq!(a, b, "array and SSE forms differ");
        assert!(a.info.stream);
        a
    }

    fn cut(events: &[Value], n: usize) -> Vec<Value> {
        events[..events.len() - n].to_vec()
    }

    // ---------- Anthropic ----------

    fn anthropic_text() -> Vec<Value> {
        vec![
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                   "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null,
                   "usage": {"input_tokens": 25, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "{\"title\": "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "\"x\"}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 15}}),
            json!({"type": "message_stop"}),
        ]
    }

    fn anthropic_tool() -> Vec<Value> {
        vec![
            json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "content": [],
                   "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 400, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Filing it."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "create_ticket", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"title\": \"x\","}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": " \"priority\": \"low\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}}),
            json!({"type": "message_stop"}),
        ]
    }

    #[test]
    fn anthropic_text_stream() {
        let a = both(&anthropic_text(), true, None);
        text(&a, "{\"title\": \"x\"}");
        assert_eq!(a.info.provider, "anthropic");
        assert_eq!(a.info.stop_reason.as_deref(), Some("end_turn"));
        assert_eq!(a.info.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(
            a.info.usage,
            Some(json!({"input_tokens": 25, "output_tokens": 15}))
        );
    }

    #[test]
    fn anthropic_streamed_tool_input_is_text() {
        let a = both(&anthropic_tool(), true, None);
        text(&a, "{\"title\": \"x\", \"priority\": \"low\"}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        text(
            &both(&anthropic_tool(), false, Some("create_ticket")),
            "{\"title\": \"x\", \"priority\": \"low\"}",
        );
        invalid(&both(&anthropic_tool(), true, Some("other")));
    }

    #[test]
    fn anthropic_cut_stream_is_incomplete() {
        for n in [1, 3, 10] {
            let a = both(&cut(&anthropic_tool(), n), true, None);
            let f = fails(&a, Stage::Response, Reason::INCOMPLETE, Decision::Retry);
            assert!(
                f.message.starts_with("anthropic stream ended after"),
                "{}",
                f.message
            );
            assert!(
                f.message
                    .ends_with("without message_stop: the stream was cut"),
                "{}",
                f.message
            );
            assert_eq!(a.info.provider, "anthropic");
            assert_eq!(a.info.model.as_deref(), Some("claude-sonnet-4-5"));
        }
    }

    #[test]
    fn anthropic_stream_stop_reasons() {
        for (stop, reason) in [
            ("max_tokens", Reason::TRUNCATED_OUTPUT),
            ("refusal", Reason::REFUSAL),
            ("pause_turn", Reason::INCOMPLETE),
            ("model_context_window_exceeded", Reason::TRUNCATED_OUTPUT),
        ] {
            let mut ev = anthropic_text();
            ev[6] = json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 3}});
            let a = both(&ev, true, None);
            fails_with(&a, reason);
            assert_eq!(a.info.stop_reason.as_deref(), Some(stop));
        }
    }

    #[test]
    fn anthropic_error_event() {
        let mut ev = cut(&anthropic_text(), 3);
        ev.push(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        let a = both(&ev, true, None);
        let f = fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Retry);
        assert_eq!(
            f.message,
            "stream event 5 (error): request failed with type \"overloaded_error\" (\"Overloaded\"): transient, retry"
        );
        assert_eq!(a.info.provider, "anthropic");
        assert_eq!(a.info.stop_reason.as_deref(), Some("overloaded_error"));
        // an error as the very first event
        let a = both(
            &[
                json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
            ],
            true,
            None,
        );
        assert_eq!(a.info.provider, "error");
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Reject);
    }

    #[test]
    fn anthropic_tool_without_deltas_keeps_its_structured_input() {
        let ev = vec![
            json!({"type": "message_start", "message": {"model": "m", "usage": {}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
            json!({"type": "message_stop"}),
        ];
        structured(&both(&ev, true, None), json!({"a": 1}));
    }

    // ---------- OpenAI Chat ----------

    fn chunk(delta: Value, finish: Value) -> Value {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1694268190, "model": "gpt-4o-mini",
               "system_fingerprint": "fp_1", "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    }

    fn chat_text() -> Vec<Value> {
        vec![
            chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            ),
            chunk(json!({"content": "{\"title\":"}), Value::Null),
            chunk(json!({"content": "\"x\"}"}), Value::Null),
            chunk(json!({}), json!("stop")),
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [],
                   "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}}),
        ]
    }

    fn chat_tools() -> Vec<Value> {
        vec![
            chunk(
                json!({"role": "assistant", "content": null, "tool_calls": [
                {"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": ""}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "create_ticket", "arguments": ""}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"title\":\"x\"}"}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
        ]
    }

    #[test]
    fn chat_text_stream_with_done_sentinel() {
        let a = both(&chat_text(), false, None);
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "openai-chat");
        assert_eq!(a.info.stop_reason.as_deref(), Some("stop"));
        assert_eq!(a.info.model.as_deref(), Some("gpt-4o-mini"));
        assert_eq!(
            a.info.usage,
            Some(json!({"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}))
        );
        let Value::String(mut s) = sse(&chat_text(), false) else {
            unreachable!()
        };
        s.push_str("data: [DONE]\n\n");
        assert_eq!(adapt_response(&Value::String(s), None, None), a);
        let mut arr = chat_text();
        arr.push(json!("[DONE]"));
        assert_eq!(adapt_response(&Value::Array(arr), None, None), a);
    }

    #[test]
    fn chat_streamed_tool_calls() {
        let f = invalid(&both(&chat_tools(), false, None));
        assert!(
            f.message
                .contains("\"lookup\" (call_1), \"create_ticket\" (call_2)"),
            "{}",
            f.message
        );
        let a = both(&chat_tools(), false, Some("create_ticket"));
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        text(&both(&chat_tools(), false, Some("lookup")), "{\"q\":1}");
    }

    #[test]
    fn chat_cut_and_finish_reasons() {
        let a = both(&cut(&chat_text(), 2), false, None);
        let f = fails_with(&a, Reason::INCOMPLETE);
        assert_eq!(
            f.message,
            "openai-chat stream ended after 3 events without a chunk with a non-null finish_reason: the stream was cut"
        );
        for (finish, reason) in [
            ("length", Reason::TRUNCATED_OUTPUT),
            ("content_filter", Reason::CONTENT_FILTERED),
        ] {
            let mut ev = chat_text();
            ev[3] = chunk(json!({}), json!(finish));
            fails_with(&both(&ev, false, None), reason);
        }
        let ev = vec![
            chunk(
                json!({"role": "assistant", "content": null, "refusal": ""}),
                Value::Null,
            ),
            chunk(json!({"refusal": "I can't help"}), Value::Null),
            chunk(json!({}), json!("stop")),
        ];
        let f = fails_with(&both(&ev, false, None), Reason::REFUSAL);
        assert!(f.message.contains("\"I can't help\""), "{}", f.message);
    }

    #[test]
    fn chat_error_chunk() {
        let mut ev = cut(&chat_text(), 2);
        ev.push(json!({"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}));
        let a = both(&ev, false, None);
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Retry);
        assert_eq!(a.info.provider, "openai-chat");
    }

    // ---------- OpenAI Responses ----------

    fn snapshot(status: &str) -> Value {
        json!({"id": "resp_1", "object": "response", "created_at": 1741290958, "status": status, "error": null,
               "incomplete_details": null, "model": "gpt-4.1-2025-04-14", "output": [], "usage": null})
    }

    fn responses_text() -> Vec<Value> {
        let mut done = snapshot("completed");
        done["usage"] = json!({"input_tokens": 37, "output_tokens": 11, "total_tokens": 48});
        done["output"] = json!([{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                                  "content": [{"type": "output_text", "text": "{\"title\":\"x\"}", "annotations": []}]}]);
        vec![
            json!({"type": "response.created", "sequence_number": 0, "response": snapshot("in_progress")}),
            json!({"type": "response.in_progress", "sequence_number": 1, "response": snapshot("in_progress")}),
            json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
                   "item": {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
            json!({"type": "response.content_part.added", "sequence_number": 3, "item_id": "msg_1", "output_index": 0, "content_index": 0,
                   "part": {"type": "output_text", "text": "", "annotations": []}}),
            json!({"type": "response.output_text.delta", "sequence_number": 4, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "{\"title\":"}),
            json!({"type": "response.output_text.delta", "sequence_number": 5, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "\"x\"}"}),
            json!({"type": "response.output_text.done", "sequence_number": 6, "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "{\"title\":\"x\"}"}),
            json!({"type": "response.completed", "sequence_number": 7, "response": done}),
        ]
    }

    fn responses_tool() -> Vec<Value> {
        let mut done = snapshot("completed");
        done["output"] = json!([{"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
                                  "name": "create_ticket", "arguments": "{\"title\":\"x\"}"}]);
        vec![
            json!({"type": "response.created", "sequence_number": 0, "response": snapshot("in_progress")}),
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                   "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": "call_1", "name": "create_ticket", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": "fc_1", "output_index": 0, "delta": "{\"title\":"}),
            json!({"type": "response.function_call_arguments.delta", "sequence_number": 3, "item_id": "fc_1", "output_index": 0, "delta": "\"x\"}"}),
            json!({"type": "response.completed", "sequence_number": 4, "response": done}),
        ]
    }

    #[test]
    fn responses_text_stream() {
        let a = both(&responses_text(), true, None);
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "openai-responses");
        assert_eq!(a.info.stop_reason.as_deref(), Some("completed"));
        assert_eq!(
            a.info.usage.as_ref().and_then(|u| u.get("total_tokens")),
            Some(&json!(48))
        );
    }

    #[test]
    fn responses_deltas_are_assembled_without_a_final_output() {
        // the terminal snapshot without `output`: the deltas are the proposal
        let mut ev = responses_tool();
        ev[4] = json!({"type": "response.completed", "response": snapshot("completed")});
        let a = both(&ev, true, None);
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn responses_cut_incomplete_failed() {
        let a = both(&cut(&responses_text(), 1), true, None);
        let f = fails_with(&a, Reason::INCOMPLETE);
        assert!(
            f.message.contains("without response.completed"),
            "{}",
            f.message
        );
        assert_eq!(a.info.stop_reason.as_deref(), Some("in_progress"));

        let mut ev = cut(&responses_text(), 1);
        let mut inc = snapshot("incomplete");
        inc["incomplete_details"] = json!({"reason": "max_output_tokens"});
        ev.push(json!({"type": "response.incomplete", "response": inc}));
        fails_with(&both(&ev, true, None), Reason::TRUNCATED_OUTPUT);

        let mut ev = cut(&responses_text(), 1);
        let mut failed = snapshot("failed");
        failed["error"] = json!({"code": "server_error", "message": "boom"});
        ev.push(json!({"type": "response.failed", "response": failed}));
        fails(
            &both(&ev, true, None),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Retry,
        );

        let mut ev = cut(&responses_text(), 1);
        ev.push(json!({"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": null, "sequence_number": 7}));
        let a = both(&ev, true, None);
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Retry);
        assert_eq!(a.info.stop_reason.as_deref(), Some("rate_limit_exceeded"));
    }

    #[test]
    fn responses_refusal_stream() {
        let mut ev = responses_text()[..3].to_vec();
        ev.push(json!({"type": "response.content_part.added", "output_index": 0, "content_index": 0, "part": {"type": "refusal", "refusal": ""}}));
        ev.push(json!({"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "I can't"}));
        ev.push(json!({"type": "response.refusal.done", "output_index": 0, "content_index": 0, "refusal": "I can't help."}));
        ev.push(json!({"type": "response.completed", "response": snapshot("completed")}));
        let f = fails_with(&both(&ev, true, None), Reason::REFUSAL);
        assert!(f.message.contains("\"I can't help.\""), "{}", f.message);
    }

    // ---------- Gemini ----------

    fn gchunk(parts: Value, finish: Option<&str>) -> Value {
        let mut c = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(f) = finish {
            c["finishReason"] = json!(f);
        }
        json!({"candidates": [c], "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}, "modelVersion": "gemini-2.5-flash", "responseId": "r1"})
    }

    fn gemini_text() -> Vec<Value> {
        vec![
            gchunk(json!([{"text": "{\"title\":"}]), None),
            gchunk(json!([{"text": "\"x\"}"}]), None),
            {
                let mut c = gchunk(json!([{"text": ""}]), Some("STOP"));
                c["usageMetadata"] = json!({"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12});
                c
            },
        ]
    }

    #[test]
    fn gemini_text_stream() {
        let a = both(&gemini_text(), false, None);
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "gemini");
        assert_eq!(a.info.stop_reason.as_deref(), Some("STOP"));
        assert_eq!(a.info.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(
            a.info.usage,
            Some(json!({"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12}))
        );
    }

    #[test]
    fn gemini_function_call_stream_stays_structured() {
        let ev = vec![gchunk(
            json!([{"functionCall": {"name": "create_ticket", "args": {"title": "x", "priority": "low"}}}]),
            Some("STOP"),
        )];
        let a = both(&ev, false, None);
        assert_eq!(
            a.result,
            Ok(Proposal::Structured(
                json!({"title": "x", "priority": "low"})
            ))
        );
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn gemini_cut_blocked_and_error() {
        let a = both(&cut(&gemini_text(), 1), false, None);
        let f = fails_with(&a, Reason::INCOMPLETE);
        assert_eq!(
            f.message,
            "gemini stream ended after 2 events without a chunk with finishReason: the stream was cut"
        );
        let mut ev = gemini_text();
        ev[2] = gchunk(json!([]), Some("MAX_TOKENS"));
        fails_with(&both(&ev, false, None), Reason::TRUNCATED_OUTPUT);
        ev[2] = gchunk(json!([]), Some("SAFETY"));
        fails_with(&both(&ev, false, None), Reason::CONTENT_FILTERED);
        let blocked = vec![
            json!({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}}),
        ];
        fails_with(&both(&blocked, false, None), Reason::CONTENT_FILTERED);
        let mut ev = cut(&gemini_text(), 1);
        ev.push(json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}));
        let a = both(&ev, false, None);
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Retry);
        assert_eq!(a.info.stop_reason.as_deref(), Some("UNAVAILABLE"));
    }

    // ---------- SSE and junk ----------

    #[test]
    fn sse_parsing_rules() {
        let text = ": comment\r\nevent: message_start\r\ndata: {\"a\":\r\ndata: 1}\r\nid: 7\r\n\r\ndata:{\"b\":2}\n\ndata: [DONE]\n\n";
        assert_eq!(
            parse_sse(text).ok(),
            Some(vec![json!({"a": 1}), json!({"b": 2})])
        );
        // a last event without its blank line is kept when complete, dropped when cut
        assert_eq!(
            parse_sse("data: {\"a\":1}").ok(),
            Some(vec![json!({"a": 1})])
        );
        assert_eq!(
            parse_sse("data: {\"a\":1}\n\ndata: {\"b\":").ok(),
            Some(vec![json!({"a": 1})])
        );
        // a complete event whose data is not JSON is a broken capture
        let f = parse_sse("data: {\"a\":1}\n\ndata: nope\n\n")
            .err()
            .unwrap_or_else(|| panic!("not json"));
        assert_eq!(
            f.message,
            "SSE event at line 3: data is not valid JSON at 3:7: expected a JSON value, found \"nope\""
        );
        // read as strictly as a record: a repeated key, positioned in the SSE text
        let f = parse_sse("data: {\"a\":1}\n\nevent: e\ndata: {\"b\": 1,\ndata:  \"b\": 2}\n\n")
            .err()
            .unwrap_or_else(|| panic!("duplicate key"));
        assert_eq!(
            f.message,
            "SSE event at line 4: data is not valid JSON at 5:8: duplicate key \"b\" at /b"
        );
        // a last event that is complete but not strict is an error too, not a cut
        assert!(parse_sse("data: {\"a\":1,\"a\":2}").is_err());
        assert_eq!(
            parse_sse("data: {\"a\":1}\n\ndata: [DON").ok(),
            Some(vec![json!({"a": 1})])
        );
        assert!(parse_sse("hello world").is_err());
        assert!(parse_sse("").is_err());
    }

    #[test]
    fn forced_provider_on_streams() {
        // forced provider with no events: cut
        let a = adapt_response(&json!([]), Some("anthropic"), None);
        fails_with(&a, Reason::INCOMPLETE);
        assert!(a.info.stream);
        // no provider and no events: cannot tell
        invalid(&adapt_response(&json!([]), None, None));
        // an unrecognised first event
        let f = invalid(&adapt_response(&json!([{"type": "hello"}]), None, None));
        assert!(
            f.message.contains("first event (type \"hello\")"),
            "{}",
            f.message
        );
        // non-object events
        let f = invalid(&adapt_response(
            &json!([chat_text()[0].clone(), 3]),
            None,
            None,
        ));
        assert_eq!(f.message, "stream event 1 is a number: expected an object");
        // forcing a provider reads the stream as that provider
        let a = adapt_response(&Value::Array(anthropic_text()), Some("gemini"), None);
        assert_eq!(a.info.provider, "gemini");
        fails_with(&a, Reason::INCOMPLETE);
    }

    #[test]
    fn junk_events_do_not_panic() {
        let junk = json!([
            {"type": "message_start", "message": 3},
            {"type": "content_block_start", "index": "x", "content_block": []},
            {"type": "content_block_delta", "index": 99999999999u64, "delta": {"type": "input_json_delta", "partial_json": 5}},
            {"type": "content_block_delta", "delta": null},
            {"type": "message_delta", "delta": [], "usage": 4},
            {"type": "message_stop"}
        ]);
        assert!(adapt_response(&junk, None, None).result.is_err());
        for p in ["openai-chat", "openai-responses", "gemini"] {
            let junk = json!([
                {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": 3}, 7, {"function": {"arguments": 1}}]}}, 4, null]},
                {"object": "chat.completion.chunk", "choices": [{"delta": {"tool_calls": "x"}, "finish_reason": "stop"}]},
                {"type": "response.output_text.delta", "output_index": -1, "delta": 3},
                {"type": "response.output_item.added", "item": 4},
                {"type": "response.completed", "response": "x"},
                {"candidates": [{"content": {"parts": "x"}, "finishReason": "STOP"}], "promptFeedback": 1},
                {"candidates": 5}
            ]);
            assert!(adapt_response(&junk, Some(p), None).result.is_err(), "{p}");
        }
    }

    // ---------- Bedrock ConverseStream ----------

    /// ConverseStream events as boto3 yields them (one key per event), values made up.
    fn bedrock_tool() -> Vec<Value> {
        vec![
            json!({"messageStart": {"role": "assistant"}}),
            json!({"contentBlockDelta": {"delta": {"text": "Filing it."}, "contentBlockIndex": 0}}),
            json!({"contentBlockStop": {"contentBlockIndex": 0}}),
            json!({"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_1", "name": "create_ticket"}}, "contentBlockIndex": 1}}),
            json!({"contentBlockDelta": {"delta": {"toolUse": {"input": "{\"title\": \"x\","}}, "contentBlockIndex": 1}}),
            json!({"contentBlockDelta": {"delta": {"toolUse": {"input": " \"priority\": \"low\"}"}}, "contentBlockIndex": 1}}),
            json!({"contentBlockStop": {"contentBlockIndex": 1}}),
            json!({"messageStop": {"stopReason": "tool_use"}}),
            json!({"metadata": {"usage": {"inputTokens": 410, "outputTokens": 52, "totalTokens": 462}, "metrics": {"latencyMs": 1203}}}),
        ]
    }

    fn bedrock_text(stop: &str) -> Vec<Value> {
        vec![
            json!({"messageStart": {"role": "assistant"}}),
            json!({"contentBlockDelta": {"delta": {"reasoningContent": {"text": "hmm"}}, "contentBlockIndex": 0}}),
            json!({"contentBlockDelta": {"delta": {"text": "{\"title\":"}, "contentBlockIndex": 1}}),
            json!({"contentBlockDelta": {"delta": {"text": "\"x\"}"}, "contentBlockIndex": 1}}),
            json!({"contentBlockStop": {"contentBlockIndex": 1}}),
            json!({"messageStop": {"stopReason": stop}}),
            json!({"metadata": {"usage": {"inputTokens": 20, "outputTokens": 6, "totalTokens": 26}, "metrics": {"latencyMs": 300}}}),
        ]
    }

    #[test]
    fn bedrock_streamed_tool_input_is_text() {
        let a = both(&bedrock_tool(), false, None);
        text(&a, "{\"title\": \"x\", \"priority\": \"low\"}");
        assert_eq!(a.info.provider, "bedrock-converse");
        assert_eq!(a.info.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        assert_eq!(
            a.info.tokens,
            Some(TokenUsage {
                input_tokens: Some(410),
                output_tokens: Some(52),
                total_tokens: Some(462)
            })
        );
        let a = both(&bedrock_text("end_turn"), false, None);
        text(&a, "{\"title\":\"x\"}");
        let f = fails_with(
            &both(&bedrock_text("max_tokens"), false, None),
            Reason::TRUNCATED_OUTPUT,
        );
        assert_eq!(
            f.message,
            "stopReason \"max_tokens\": the output hit the token limit"
        );
        // a single event is not a response
        let f = invalid(&adapt_response(&bedrock_tool()[0], None, None));
        assert_eq!(
            f.hint.as_deref(),
            Some("this is a single stream event: capture the whole stream as an array of events")
        );
    }

    #[test]
    fn bedrock_stream_without_message_stop_is_incomplete() {
        let events = cut(&bedrock_tool(), 2);
        let a = both(&events, false, None);
        let f = fails(&a, Stage::Response, Reason::INCOMPLETE, Decision::Retry);
        assert_eq!(
            f.message,
            "bedrock-converse stream ended after 7 events without messageStop: the stream was cut"
        );
        assert_eq!(a.info.provider, "bedrock-converse");
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn bedrock_stream_exceptions() {
        for (name, decision, tail) in [
            (
                "throttlingException",
                Decision::Retry,
                "code 429 (\"slow down\"): transient, retry",
            ),
            (
                "internalServerException",
                Decision::Retry,
                "code 500 (\"slow down\"): transient, retry",
            ),
            (
                "serviceUnavailableException",
                Decision::Retry,
                "code 503 (\"slow down\"): transient, retry",
            ),
            (
                "modelStreamErrorException",
                Decision::Retry,
                "code 424 (\"slow down\"): transient, retry",
            ),
            (
                "validationException",
                Decision::Reject,
                "code 400 (\"slow down\"): not transient",
            ),
        ] {
            let mut events = cut(&bedrock_tool(), 4);
            events.push(json!({name: {"message": "slow down"}}));
            let a = both(&events, false, None);
            let f = fails(&a, Stage::Response, Reason::REQUEST_ERROR, decision);
            assert_eq!(
                f.message,
                format!("stream event 5 (error): request failed with type \"{name}\", {tail}")
            );
            assert_eq!(a.info.stop_reason.as_deref(), Some(name));
            assert_eq!(a.info.provider, "bedrock-converse");
        }
    }

    // ---------- Ollama ----------

    fn ochunk(content: &str, done: bool) -> Value {
        json!({"model": "llama3.2", "created_at": "2026-09-07T00:00:00Z", "message": {"role": "assistant", "content": content}, "done": done})
    }

    fn ollama_text(reason: &str) -> Vec<Value> {
        let mut last = ochunk("", true);
        let extra = json!({"done_reason": reason, "total_duration": 4883583458u64, "load_duration": 1334875,
                           "prompt_eval_count": 26, "prompt_eval_duration": 342546000, "eval_count": 12, "eval_duration": 4709213000u64});
        if let (Some(m), Some(e)) = (last.as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        vec![ochunk("{\"title\":", false), ochunk("\"x\"}", false), last]
    }

    #[test]
    fn ollama_chunks_assemble() {
        let a = both(&ollama_text("stop"), false, None);
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "ollama");
        assert_eq!(a.info.stop_reason.as_deref(), Some("stop"));
        assert_eq!(a.info.model.as_deref(), Some("llama3.2"));
        assert_eq!(
            a.info.tokens,
            Some(TokenUsage {
                input_tokens: Some(26),
                output_tokens: Some(12),
                total_tokens: None
            })
        );
        let f = fails_with(
            &both(&ollama_text("length"), false, None),
            Reason::TRUNCATED_OUTPUT,
        );
        assert!(
            f.message.starts_with("done_reason \"length\""),
            "{}",
            f.message
        );
        // tool calls arrive whole, so their arguments stay structured
        let mut events = ollama_text("stop");
        events.insert(
            2,
            json!({"model": "llama3.2", "message": {"role": "assistant", "content": "",
                   "tool_calls": [{"function": {"name": "create_ticket", "arguments": {"title": "x", "priority": "low"}}}]}, "done": false}),
        );
        let a = both(&events, false, None);
        structured(&a, json!({"title": "x", "priority": "low"}));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }

    #[test]
    fn ollama_cut_and_error_streams() {
        let a = both(&cut(&ollama_text("stop"), 1), false, None);
        let f = fails(&a, Stage::Response, Reason::INCOMPLETE, Decision::Retry);
        assert_eq!(
            f.message,
            "ollama stream ended after 2 events without a chunk with done: true: the stream was cut"
        );
        let mut events = cut(&ollama_text("stop"), 1);
        events.push(json!({"error": "an error was encountered while running the model"}));
        let f = fails(
            &both(&events, false, None),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "stream event 2 (error): request failed with no type or code (\"an error was encountered while running the model\"): not transient"
        );
        // a chunk whose `done` is a string never ends the stream
        let mut events = ollama_text("stop");
        events[2]["done"] = json!("true");
        fails_with(&both(&events, false, None), Reason::INCOMPLETE);
    }

    // ---------- Azure OpenAI and OpenAI-compatible chunks ----------

    fn safe_filters() -> Value {
        json!({"hate": {"filtered": false, "severity": "safe"}, "self_harm": {"filtered": false, "severity": "safe"},
               "sexual": {"filtered": false, "severity": "safe"}, "violence": {"filtered": false, "severity": "safe"}})
    }

    fn azure_chunk(delta: Value, finish: Value, filters: Value) -> Value {
        json!({"choices": [{"content_filter_results": filters, "delta": delta, "finish_reason": finish, "index": 0, "logprobs": null}],
               "created": 1727000000, "id": "chatcmpl-A1", "model": "gpt-4o-2024-08-06", "object": "chat.completion.chunk", "system_fingerprint": "fp_1"})
    }

    /// Azure's stream: a first chunk with `choices: []` and only `prompt_filter_results`.
    fn azure_stream(last_filters: Value, finish: &str) -> Vec<Value> {
        vec![
            json!({"choices": [], "created": 0, "id": "", "model": "", "object": "",
                   "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": safe_filters()}]}),
            azure_chunk(
                json!({"content": "", "role": "assistant"}),
                Value::Null,
                json!({}),
            ),
            azure_chunk(
                json!({"content": "{\"title\":\"x\"}"}),
                Value::Null,
                safe_filters(),
            ),
            azure_chunk(json!({}), json!(finish), last_filters),
        ]
    }

    #[test]
    fn azure_stream_with_an_empty_first_chunk_is_normal() {
        let a = both(&azure_stream(json!({}), "stop"), false, None);
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "azure-openai");
        assert_eq!(a.info.model.as_deref(), Some("gpt-4o-2024-08-06"));
        assert_eq!(a.info.stop_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn azure_stream_filtered_late_names_the_category() {
        let mut filters = safe_filters();
        filters["violence"] = json!({"filtered": true, "severity": "medium"});
        let a = both(&azure_stream(filters, "content_filter"), false, None);
        let f = fails(
            &a,
            Stage::Response,
            Reason::CONTENT_FILTERED,
            Decision::Reject,
        );
        assert_eq!(
            f.message,
            "choices[0].content_filter_results: Azure's content filter filtered the output: violence (severity medium)"
        );
        // a stream that starts with an ordinary chunk is Azure's too once a chunk has filters
        let mut events = azure_stream(
            json!({"hate": {"filtered": true, "severity": "high"}}),
            "content_filter",
        );
        events.remove(0);
        let a = both(&events, false, None);
        assert_eq!(a.info.provider, "azure-openai");
        fails_with(&a, Reason::CONTENT_FILTERED);
        // a filtered prompt in the first chunk
        let mut events = azure_stream(json!({}), "stop");
        events[0]["prompt_filter_results"][0]["content_filter_results"]["jailbreak"] =
            json!({"filtered": true, "detected": true});
        let f = fails_with(&both(&events, false, None), Reason::CONTENT_FILTERED);
        assert_eq!(
            f.message,
            "prompt_filter_results: Azure's content filter flagged the prompt: jailbreak (detected)"
        );
    }

    #[test]
    fn compatible_server_streams() {
        // vLLM: `stop_reason` on every choice, `abort` when the request was aborted
        let vllm = |finish: Value| {
            let mut c = chunk(json!({"content": "{\"ti"}), finish);
            c["choices"][0]["stop_reason"] = Value::Null;
            c
        };
        let events = vec![vllm(Value::Null), vllm(json!("abort"))];
        let a = both(&events, false, None);
        assert_eq!(a.info.provider, "openai-compatible");
        let f = fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Reject);
        assert_eq!(
            f.message,
            "choices[0].finish_reason \"abort\": the server aborted the request: not transient"
        );
        // OpenRouter: native_finish_reason on the last chunk
        let mut last = chunk(json!({}), json!("stop"));
        last["choices"][0]["native_finish_reason"] = json!("end_turn");
        let events = vec![
            chunk(json!({"content": "{\"title\":\"x\"}"}), Value::Null),
            last,
        ];
        let a = both(&events, false, None);
        text(&a, "{\"title\":\"x\"}");
        assert_eq!(a.info.provider, "openai-compatible");
        assert_eq!(a.info.native_stop_reason.as_deref(), Some("end_turn"));
        // plain OpenAI chunks stay openai-chat
        assert_eq!(both(&chat_text(), false, None).info.provider, "openai-chat");
        // a forced provider is kept
        let a = adapt_response(&Value::Array(events), Some("openai-chat"), None);
        assert_eq!(a.info.provider, "openai-chat");
        assert_eq!(a.info.native_stop_reason, None);
    }

    // ---------- Cohere ----------

    /// A Cohere v2 stream (docs.cohere.com "A Guide to Streaming Responses"), values made up.
    fn cohere_tool() -> Vec<Value> {
        vec![
            json!({"type": "message-start", "id": "29f14a5a-11de-4cae-9800-25e4747408ea", "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}}}),
            json!({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will file a ticket."}}}),
            json!({"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": {"id": "create_ticket_1", "type": "function", "function": {"name": "create_ticket", "arguments": ""}}}}}),
            json!({"type": "tool-call-delta", "index": 0, "delta": {"message": {"tool_calls": {"function": {"arguments": "{\"title\": \"x\","}}}}}),
            json!({"type": "tool-call-delta", "index": 0, "delta": {"message": {"tool_calls": {"function": {"arguments": " \"priority\": \"low\"}"}}}}}),
            json!({"type": "tool-call-end", "index": 0}),
            json!({"type": "message-end", "delta": {"finish_reason": "TOOL_CALL", "usage": {"billed_units": {"input_tokens": 37, "output_tokens": 21}, "tokens": {"input_tokens": 1002, "output_tokens": 55}}}}),
        ]
    }

    fn cohere_text(finish: &str) -> Vec<Value> {
        vec![
            json!({"type": "message-start", "id": "c1", "delta": {"message": {"role": "assistant", "content": []}}}),
            json!({"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}}),
            json!({"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "{\"title\":"}}}}),
            json!({"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "\"x\"}"}}}}),
            json!({"type": "content-end", "index": 0}),
            json!({"type": "message-end", "delta": {"finish_reason": finish, "usage": {"tokens": {"input_tokens": 9, "output_tokens": 5}}}}),
        ]
    }

    #[test]
    fn cohere_streams_assemble() {
        let a = both(&cohere_tool(), true, None);
        text(&a, "{\"title\": \"x\", \"priority\": \"low\"}");
        assert_eq!(a.info.provider, "cohere");
        assert_eq!(a.info.stop_reason.as_deref(), Some("TOOL_CALL"));
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
        assert_eq!(
            a.info.tokens,
            Some(TokenUsage {
                input_tokens: Some(1002),
                output_tokens: Some(55),
                total_tokens: None
            })
        );
        text(
            &both(&cohere_text("COMPLETE"), true, None),
            "{\"title\":\"x\"}",
        );
        let f = fails_with(
            &both(&cohere_text("MAX_TOKENS"), false, None),
            Reason::TRUNCATED_OUTPUT,
        );
        assert_eq!(
            f.message,
            "finish_reason \"MAX_TOKENS\": the output hit the token limit"
        );
        fails(
            &both(&cohere_text("TIMEOUT"), false, None),
            Stage::Response,
            Reason::REQUEST_ERROR,
            Decision::Retry,
        );
    }

    #[test]
    fn cohere_stream_without_message_end_is_incomplete() {
        let a = both(&cut(&cohere_tool(), 1), true, None);
        let f = fails(&a, Stage::Response, Reason::INCOMPLETE, Decision::Retry);
        assert_eq!(
            f.message,
            "cohere stream ended after 6 events without message-end: the stream was cut"
        );
        let f = invalid(&adapt_response(&cohere_tool()[0], None, None));
        assert_eq!(
            f.hint.as_deref(),
            Some("this is a single stream event: capture the whole stream as an array of events")
        );
        assert_eq!(a.info.tool.as_deref(), Some("create_ticket"));
    }
}
