//! The response stage: provider adapters (`docs/record-shapes.md`).
//!
//! An adapter reads a provider's raw response (or a captured stream of its events) and
//! decides whether the provider finished normally; if so it hands on the proposal: the
//! named tool call's arguments, or the message text.
//!
//! Detection is by shape (`docs/record-shapes.md#detection`), in this order; a record's `provider` key overrides it:
//!
//! | shape | adapter |
//! |---|---|
//! | an array of events, or a string of SSE lines | a stream (provider read from the first event) |
//! | `"object": "response"` | `openai-responses` |
//! | the Chat shape with `prompt_filter_results`, `prompt_annotations` or a choice's `content_filter_results` | `azure-openai` |
//! | the Chat shape with a non-OpenAI marker (`docs/record-shapes.md#detection`) | `openai-compatible` |
//! | `"object": "chat.completion"` or `choices[].message` | `openai-chat` |
//! | `"type": "message"` | `anthropic` |
//! | `candidates[]` or `promptFeedback` | `gemini` |
//! | `stopReason`, or `output.message` | `bedrock-converse` |
//! | `message` and `done` | `ollama` |
//! | `message` and an upper-case `finish_reason` | `cohere` |
//! | an error body with `innererror.code: ResponsibleAIPolicyViolation` | `azure-openai` |
//! | `"type": "error"` or a top-level `error` object | `error` |
//!
//! Anything else is an input-stage `INVALID_CAPTURE`.

// The interface (`Adapted::result: Result<Proposal, Finding>`) is prescribed by the verdict
// model; a `Finding` is large by design, and it is built once per capture.
#![allow(clippy::result_large_err)]

mod anthropic;
mod azure_openai;
mod bedrock_converse;
mod cohere;
mod conflict;
mod error_body;
mod gemini;
mod ollama;
mod openai_chat;
mod openai_compatible;
mod openai_responses;
mod output;
mod stream;

pub use conflict::REASON_ORDER;
pub(crate) use error_body::{failed_request, request_error, request_error_as, transient_http};

use crate::core::verdict::{Finding, Reason, ResponseInfo, Stage, TokenUsage};
use serde_json::Value;

/// What the response stage hands to the parse stage.
#[derive(Debug, Clone, PartialEq)]
pub enum Proposal {
    /// Text to be parsed strictly: `output_text`, `message.content`, a tool call's
    /// `arguments` string, assembled stream deltas, or a record's string `output`.
    Text(String),
    /// An already-structured value (Anthropic `tool_use.input`, Gemini `functionCall.args`,
    /// a record's non-string `output`); the parse stage is skipped.
    Structured(Value),
}

/// The outcome of the response stage.
#[derive(Debug, Clone, PartialEq)]
pub struct Adapted {
    /// What was read from the response (provider, stop reason, usage, model, tool).
    pub info: ResponseInfo,
    /// The proposal, or the finding that stops the pipeline: a response-stage finding
    /// (`REFUSAL`, `TRUNCATED_OUTPUT`, ...), or an input-stage `INVALID_CAPTURE`
    /// (unrecognised shape, unknown `provider`, several tool calls and no `tool`).
    pub result: Result<Proposal, Finding>,
}

/// The provider names a record's `provider` key may hold (`docs/capture-record.md`), in the order of `docs/capture-record.md`.
pub const PROVIDERS: [&str; 9] = [
    "openai-responses",
    "openai-chat",
    "anthropic",
    "gemini",
    "bedrock-converse",
    "ollama",
    "cohere",
    "azure-openai",
    "openai-compatible",
];

/// The statuses a record's `status` key may hold (`docs/capture-record.md`); `completed` is the default.
pub const STATUSES: [&str; 4] = ["completed", "refusal", "incomplete", "request_error"];

/// `ResponseInfo::provider` when no adapter could be chosen (unknown shape or `provider`).
pub const UNKNOWN_PROVIDER: &str = "unknown";

/// Runs the response stage on a record's `response` (an object, an array of stream events,
/// or a string of SSE lines). `provider` forces an adapter (one of [`PROVIDERS`]); `tool` names the tool call that is the proposal
/// (by function name, or by call id when several calls share a name).
///
/// The rules per provider, and the documents they come from:
/// - OpenAI Responses ("The response object", platform.openai.com/docs/api-reference/responses):
///   finished when `status` is `completed` and no content part is a `refusal`;
///   `incomplete_details.reason` `max_output_tokens` is `TRUNCATED_OUTPUT`, `content_filter`
///   is `CONTENT_FILTERED`; `failed` is `REQUEST_ERROR` from `error.code`.
/// - OpenAI Chat Completions ("The chat completion object"): finished when `finish_reason`
///   is `stop`, `tool_calls` or `function_call` and `message.refusal` is null; `length` is
///   `TRUNCATED_OUTPUT`, `content_filter` is `CONTENT_FILTERED`.
/// - Anthropic Messages ("Handling stop reasons", docs.anthropic.com): finished on
///   `end_turn`, `stop_sequence`, `tool_use`; `max_tokens` and `model_context_window_exceeded`
///   are `TRUNCATED_OUTPUT`, `refusal` is `REFUSAL`, `pause_turn` is `INCOMPLETE`.
/// - Gemini ("GenerateContentResponse", ai.google.dev/api/generate-content): finished on
///   `finishReason` `STOP`; `MAX_TOKENS` is `TRUNCATED_OUTPUT`; `SAFETY`, `RECITATION`,
///   `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `IMAGE_*` filters and any
///   `promptFeedback.blockReason` are `CONTENT_FILTERED`; `MALFORMED_FUNCTION_CALL` and
///   `UNEXPECTED_TOOL_CALL` are `MALFORMED_TOOL_CALL`; anything else is `INCOMPLETE`.
/// - Bedrock Converse ("Converse", docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html):
///   finished on `stopReason` `end_turn`, `tool_use`, `stop_sequence`; `max_tokens`,
///   `model_context_window_exceeded` are `TRUNCATED_OUTPUT`; `guardrail_intervened`,
///   `content_filtered` are `CONTENT_FILTERED`; `malformed_tool_use`,
///   `malformed_model_output` are `MALFORMED_TOOL_CALL`; ConverseStream events too.
/// - Ollama `/api/chat` (github.com/ollama/ollama `docs/api.md`): `done: false` is
///   `INCOMPLETE`, `done_reason` `length` is `TRUNCATED_OUTPUT`; tool arguments are objects.
/// - Cohere v2 chat (docs.cohere.com/reference/chat): `COMPLETE`, `STOP_SEQUENCE`,
///   `TOOL_CALL` are finished; `MAX_TOKENS` is `TRUNCATED_OUTPUT`; `TIMEOUT` is a transient
///   `REQUEST_ERROR`, `ERROR` a `REQUEST_ERROR`.
/// - Azure OpenAI ("Content filtering", learn.microsoft.com/azure/ai-services/openai/concepts/content-filter):
///   the Chat rules, and any `filtered: true` on the prompt or the choice, or an HTTP 400
///   `ResponsibleAIPolicyViolation` error body, is `CONTENT_FILTERED` naming the categories.
/// - OpenAI-compatible servers (vLLM, OpenRouter, Mistral): the Chat rules; `model_length`
///   is `TRUNCATED_OUTPUT`; `error` and `abort` are `REQUEST_ERROR`.
/// - Error bodies (Anthropic "Errors", OpenAI "Error codes", Gemini "Troubleshooting"):
///   always `REQUEST_ERROR`, `retry` for rate limits, overload and server errors
///   (`rate_limit_error`, `overloaded_error`, `api_error`, `server_error`, HTTP 429, 5xx,
///   529), else `reject`.
/// - Streams (each provider's streaming reference): the deltas are assembled and judged as
///   above; without the terminal event (`message_stop`, a non-null `finish_reason`,
///   `response.completed` / `.incomplete` / `.failed`, a Gemini `finishReason`, Bedrock
///   `messageStop`, an Ollama chunk with `done: true`, Cohere `message-end`) the
///   stream is `INCOMPLETE`. Streamed tool arguments are text, parsed strictly.
///
/// A finished response with an empty or whitespace-only proposal is `NO_OUTPUT`. When a
/// message holds tool calls, the call is the proposal; several calls and no `tool`, or a
/// `tool` that names no call, are input-stage `INVALID_CAPTURE`, as are an unknown
/// `provider` and a shape no adapter recognises. Findings carry no `pointer`: the place in
/// the response is named in the message.
///
/// Never panics: a response of any JSON shape gives either a proposal or a finding.
pub fn adapt_response(response: &Value, provider: Option<&str>, tool: Option<&str>) -> Adapted {
    let forced = match provider {
        None => None,
        Some(name) => match Provider::from_name(name) {
            Some(p) => Some(p),
            None => {
                let mut f = invalid_capture(format!(
                    "unknown provider {}: expected one of {}",
                    quote(name),
                    PROVIDERS.join(", ")
                ));
                if let Some(best) = did_you_mean(name, PROVIDERS.iter().copied()) {
                    f = f.with_hint(format!("did you mean `{best}`?"));
                }
                return unknown(f);
            }
        },
    };
    match response {
        Value::Array(_) | Value::String(_) => stream::adapt(response, forced, tool),
        Value::Object(_) => {
            if azure_openai::is_policy_violation(response) {
                return azure_openai::adapt_policy_violation(response);
            }
            let chosen = match forced {
                Some(_) if error_body::is_error_body(response) => None,
                Some(p) => Some(p),
                None => match detect(response) {
                    Some(p) => Some(p),
                    None if error_body::is_error_body(response) => None,
                    None => return unknown(unrecognised_object(response)),
                },
            };
            match chosen {
                Some(p) => conflict::resolve(p, response, adapt_object(p, response, tool)),
                None => error_body::adapt(response, false),
            }
        }
        other => unknown(invalid_capture(format!(
            "response is {}: expected a provider response object, an array of stream events \
             or a string of SSE lines",
            kind(other)
        ))),
    }
}

/// Runs the response stage on a record that carries `output` directly, with its
/// `status` (`completed` default, `refusal`, `incomplete`, `request_error`) and
/// `status_detail` (`max_output_tokens`, `content_filter`, `rate_limit`, an HTTP status...).
///
/// A string `output` is [`Proposal::Text`] (empty or whitespace-only is `NO_OUTPUT`), any
/// other JSON is [`Proposal::Structured`]. `incomplete` with a token-limit detail
/// (`max_output_tokens`, `length`, `max_tokens`, `MAX_TOKENS`,
/// `model_context_window_exceeded`) is `TRUNCATED_OUTPUT`, with `content_filter` (or a Gemini
/// filter reason) `CONTENT_FILTERED`, otherwise `INCOMPLETE`; `request_error` is
/// `REQUEST_ERROR`, `retry` for `rate_limit`, `overloaded`, `server_error`, `429`, `5xx`
/// (any 5xx status) and `529`. An unknown status is `INVALID_CAPTURE` with a "did you
/// mean" hint. `ResponseInfo::provider` is `output`.
pub fn adapt_output(output: &Value, status: Option<&str>, status_detail: Option<&str>) -> Adapted {
    output::adapt(output, status, status_detail)
}

/// The provider adapters (the names of [`PROVIDERS`] and `docs/capture-record.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    OpenAiResponses,
    OpenAiChat,
    Anthropic,
    Gemini,
    BedrockConverse,
    Ollama,
    Cohere,
    AzureOpenAi,
    OpenAiCompatible,
}

impl Provider {
    /// Every adapter, in the order of [`PROVIDERS`].
    const ALL: [Provider; 9] = [
        Provider::OpenAiResponses,
        Provider::OpenAiChat,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::BedrockConverse,
        Provider::Ollama,
        Provider::Cohere,
        Provider::AzureOpenAi,
        Provider::OpenAiCompatible,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Provider::OpenAiResponses => "openai-responses",
            Provider::OpenAiChat => "openai-chat",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::BedrockConverse => "bedrock-converse",
            Provider::Ollama => "ollama",
            Provider::Cohere => "cohere",
            Provider::AzureOpenAi => "azure-openai",
            Provider::OpenAiCompatible => "openai-compatible",
        }
    }

    fn from_name(name: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether the adapter reads the OpenAI Chat shape (the Chat adapter and its variants).
    pub(crate) fn is_chat(self) -> bool {
        matches!(
            self,
            Provider::OpenAiChat | Provider::AzureOpenAi | Provider::OpenAiCompatible
        )
    }

    pub(crate) fn info(self) -> ResponseInfo {
        ResponseInfo {
            provider: self.name().to_owned(),
            ..ResponseInfo::default()
        }
    }
}

/// The adapter a bare response would be read with, by shape (the detection table of
/// `docs/record-shapes.md`), or `None` when no adapter recognises it: `error` for an error
/// body. A JSON array is a stream when its first element is a stream event; its provider is
/// read from that event.
pub fn recognise(v: &Value) -> Option<&'static str> {
    match v {
        Value::Array(events) => events
            .first()
            .and_then(stream::provider_of)
            .map(Provider::name),
        _ => match detect(v) {
            Some(p) => Some(p.name()),
            None if error_body::is_error_body(v) => Some("error"),
            None => None,
        },
    }
}

/// Detection by shape, the detection table of `docs/record-shapes.md` (error bodies are checked by the caller).
fn detect(v: &Value) -> Option<Provider> {
    let object = str_at(v, "object");
    if object == Some("response") {
        return Some(Provider::OpenAiResponses);
    }
    let choice_has_message = v
        .get("choices")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|c| c.get("message").is_some()));
    if object == Some("chat.completion") || choice_has_message {
        return Some(chat_variant(v));
    }
    if str_at(v, "type") == Some("message") {
        return Some(Provider::Anthropic);
    }
    if v.get("candidates").is_some_and(Value::is_array) || v.get("promptFeedback").is_some() {
        return Some(Provider::Gemini);
    }
    if bedrock_converse::detects(v) {
        return Some(Provider::BedrockConverse);
    }
    if ollama::detects(v) {
        return Some(Provider::Ollama);
    }
    if cohere::detects(v) {
        return Some(Provider::Cohere);
    }
    None
}

/// Which adapter reads a Chat-shaped object (a completion, or a stream's chunk): Azure
/// OpenAI when it carries content-filter fields, an OpenAI-compatible server when it
/// carries a non-OpenAI marker, else OpenAI Chat (`docs/record-shapes.md#detection`).
pub(crate) fn chat_variant(v: &Value) -> Provider {
    if azure_openai::has_filter_fields(v) {
        Provider::AzureOpenAi
    } else if openai_compatible::has_marker(v) {
        Provider::OpenAiCompatible
    } else {
        Provider::OpenAiChat
    }
}

fn adapt_object(p: Provider, v: &Value, tool: Option<&str>) -> Adapted {
    match p {
        Provider::OpenAiResponses => openai_responses::adapt(v, tool),
        Provider::OpenAiChat => openai_chat::adapt(v, tool),
        Provider::Anthropic => anthropic::adapt(v, tool),
        Provider::Gemini => gemini::adapt(v, tool),
        Provider::BedrockConverse => bedrock_converse::adapt(v, tool),
        Provider::Ollama => ollama::adapt(v, tool),
        Provider::Cohere => cohere::adapt(v, tool),
        Provider::AzureOpenAi => azure_openai::adapt(v, tool),
        Provider::OpenAiCompatible => openai_compatible::adapt(v, tool),
    }
}

/// The INVALID_CAPTURE for an object no adapter recognises, with a hint when it looks
/// like a single stream event.
fn unrecognised_object(v: &Value) -> Finding {
    let keys: Vec<String> = v
        .as_object()
        .map(|m| m.keys().take(8).map(|k| quote(k)).collect())
        .unwrap_or_default();
    let mut f = invalid_capture(format!(
        "unrecognised response shape (keys {}): expected an OpenAI Responses object \
         (\"object\": \"response\"), a chat completion, an Anthropic message, a Gemini \
         response, a Bedrock Converse response, an Ollama or Cohere chat response or an \
         error body",
        if keys.is_empty() {
            "none".to_owned()
        } else {
            keys.join(", ")
        }
    ));
    if stream::looks_like_event(v) {
        f = f.with_hint(
            "this is a single stream event: capture the whole stream as an array of events",
        );
    } else {
        f = f.with_hint("set `provider` to force an adapter");
    }
    f
}

/// The function calls of a chat message's `tool_calls` array (`[{id, function: {name,
/// arguments}}]`, as Ollama and Cohere v2 write them; arguments a string or an object).
/// `provider` names the shape in the error.
///
/// # Errors
/// `INVALID_CAPTURE` when `tool_calls` is neither an array nor null.
pub(crate) fn function_calls(message: &Value, provider: &str) -> Result<Vec<ToolCall>, Finding> {
    match message.get("tool_calls") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a
            .iter()
            .map(|c| {
                let f = c.get("function").unwrap_or(&Value::Null);
                ToolCall {
                    name: str_at(f, "name").map(str::to_owned),
                    id: str_at(c, "id").map(str::to_owned),
                    args: args_text_or_value(f.get("arguments")),
                }
            })
            .collect()),
        Some(other) => Err(invalid_capture(format!(
            "{provider} `message.tool_calls` is {}: expected an array",
            kind(other)
        ))),
    }
}

/// An `Adapted` for a response no adapter was chosen for.
fn unknown(f: Finding) -> Adapted {
    Adapted {
        info: ResponseInfo {
            provider: UNKNOWN_PROVIDER.to_owned(),
            ..ResponseInfo::default()
        },
        result: Err(f),
    }
}

/// One tool / function call found in a response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    /// The function / tool name.
    pub name: Option<String>,
    /// The call id (`call_...`, `toolu_...`), when the provider gives one.
    pub id: Option<String>,
    /// Its arguments: text for OpenAI and streamed arguments, structured otherwise.
    pub args: Proposal,
}

impl ToolCall {
    fn label(&self) -> String {
        let name = self
            .name
            .as_deref()
            .map_or_else(|| "(unnamed)".to_owned(), quote);
        match &self.id {
            Some(id) => format!("{name} ({id})"),
            None => name,
        }
    }
}

/// A response-stage finding with the reason's default decision.
pub(crate) fn response_finding(reason: Reason, message: impl Into<String>) -> Finding {
    Finding::new(Stage::Response, reason, message)
}

/// An input-stage `INVALID_CAPTURE`.
pub(crate) fn invalid_capture(message: impl Into<String>) -> Finding {
    Finding::new(Stage::Input, Reason::INVALID_CAPTURE, message)
}

/// A provider string for a message: quoted, cut to 120 characters, control characters
/// escaped ([`crate::core::escape::quote`]).
pub(crate) fn quote(s: &str) -> String {
    crate::core::escape::quote(s, 120)
}

/// A provider value for a message: strings quoted, scalars as JSON, containers by kind.
pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Null | Value::Bool(_) | Value::Number(_) => v.to_string(),
        other => kind(other).to_owned(),
    }
}

pub(crate) use crate::core::text::json_kind as kind;

/// `v[key]` as a string slice, if it is one.
pub(crate) fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// `v[key]` cloned, unless missing or null.
pub(crate) fn non_null(v: &Value, key: &str) -> Option<Value> {
    v.get(key).filter(|x| !x.is_null()).cloned()
}

/// A token count: a non-negative integer, or a float with no fraction (Cohere's SDK types
/// its counts as floats: `5.0`); anything else is no count.
pub(crate) fn count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    })
}

/// The [`TokenUsage`] of a usage object read under the provider's own key names (`total`
/// when the provider reports one); `None` when no count is there.
pub(crate) fn tokens(
    usage: Option<&Value>,
    input: &str,
    output: &str,
    total: Option<&str>,
) -> Option<TokenUsage> {
    let usage = usage?;
    let at = |k: &str| usage.get(k).and_then(count);
    let t = TokenUsage {
        input_tokens: at(input),
        output_tokens: at(output),
        total_tokens: total.and_then(at),
    };
    (t != TokenUsage::default()).then_some(t)
}

/// Arguments given as a string are text to parse; any other value is already structured;
/// missing or null arguments are empty text.
pub(crate) fn args_text_or_value(v: Option<&Value>) -> Proposal {
    match v {
        Some(Value::String(s)) => Proposal::Text(s.clone()),
        None | Some(Value::Null) => Proposal::Text(String::new()),
        Some(other) => Proposal::Structured(other.clone()),
    }
}

/// Whether a provider's stop value means the token limit (`TRUNCATED_OUTPUT` in `docs/verdicts.md#reasons`).
pub(crate) fn is_truncation(reason: &str) -> bool {
    matches!(
        reason,
        "max_output_tokens"
            | "length"
            | "max_tokens"
            | "MAX_TOKENS"
            | "model_context_window_exceeded"
    )
}

/// Gemini `finishReason` values that mean a filter stopped the output (`docs/record-shapes.md`
/// `CONTENT_FILTERED`; Gemini API reference, `Candidate.FinishReason`).
pub(crate) const GEMINI_FILTERS: [&str; 8] = [
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
];

/// Whether a stop value means a content filter (`content_filter`, or a Gemini filter).
pub(crate) fn is_filter(reason: &str) -> bool {
    reason == "content_filter" || GEMINI_FILTERS.contains(&reason)
}

/// Records in `info.tool` the call that is (or would be) the proposal, when that is
/// unambiguous, so screens show it even when the stage fails.
pub(crate) fn note_tool(info: &mut ResponseInfo, calls: &[ToolCall], tool: Option<&str>) {
    if let Ok(Some(call)) = select(calls, tool) {
        info.tool = call.name.clone();
    }
}

/// Chooses the tool call that is the proposal: the one `tool` names (by name, else by id),
/// or the only call. `Ok(None)`: no calls and no `tool`, the text is the proposal.
pub(crate) fn select<'a>(
    calls: &'a [ToolCall],
    tool: Option<&str>,
) -> Result<Option<&'a ToolCall>, Finding> {
    let list = || {
        calls
            .iter()
            .map(ToolCall::label)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match tool {
        None => match calls {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            many => Err(invalid_capture(format!(
                "{} tool calls ({}) and no `tool` key: the proposal is ambiguous",
                many.len(),
                list()
            ))
            .with_hint("set `tool` to the name (or call id) of the call that is the proposal")),
        },
        Some(t) => {
            if calls.is_empty() {
                return Err(invalid_capture(format!(
                    "`tool` is {} but the response holds no tool call",
                    quote(t)
                )));
            }
            let named: Vec<&ToolCall> = calls
                .iter()
                .filter(|c| c.name.as_deref() == Some(t))
                .collect();
            match named.as_slice() {
                [one] => Ok(Some(one)),
                [] => match calls.iter().find(|c| c.id.as_deref() == Some(t)) {
                    Some(c) => Ok(Some(c)),
                    None => {
                        let mut f = invalid_capture(format!(
                            "`tool` {} names no call; the response calls {}",
                            quote(t),
                            list()
                        ));
                        let names: Vec<&str> =
                            calls.iter().filter_map(|c| c.name.as_deref()).collect();
                        if let Some(best) = did_you_mean(t, names.iter().copied()) {
                            f = f.with_hint(format!("did you mean `{best}`?"));
                        }
                        Err(f)
                    }
                },
                many => Err(invalid_capture(format!(
                    "`tool` {} names {} calls ({}): the proposal is ambiguous",
                    quote(t),
                    many.len(),
                    many.iter()
                        .map(|c| c.label())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .with_hint("set `tool` to the call id instead of the name")),
            }
        }
    }
}

/// The proposal of a response that finished normally: the selected tool call's arguments,
/// else the text. Empty or whitespace-only is `NO_OUTPUT`. `finished` quotes the
/// provider's own completion value; `text_place` names where the text was read.
pub(crate) fn proposal(
    info: &mut ResponseInfo,
    calls: &[ToolCall],
    text: Option<String>,
    tool: Option<&str>,
    finished: &str,
    text_place: &str,
) -> Result<Proposal, Finding> {
    match select(calls, tool)? {
        Some(call) => {
            info.tool = call.name.clone();
            match &call.args {
                Proposal::Text(s) if s.trim().is_empty() => Err(response_finding(
                    Reason::NO_OUTPUT,
                    format!(
                        "{finished}, but tool call {} has empty arguments: nothing to validate",
                        call.label()
                    ),
                )),
                args => Ok(args.clone()),
            }
        }
        None => {
            let text = text.unwrap_or_default();
            if text.trim().is_empty() {
                Err(response_finding(
                    Reason::NO_OUTPUT,
                    format!("{finished}, but {text_place} is empty: nothing to validate"),
                ))
            } else {
                Ok(Proposal::Text(text))
            }
        }
    }
}

pub(crate) use crate::core::hint::did_you_mean;

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::core::verdict::Decision;

    /// Asserts the finding's stage, reason and decision, and returns it.
    pub fn fails(a: &Adapted, stage: Stage, reason: Reason, decision: Decision) -> Finding {
        match &a.result {
            Err(f) => {
                assert_eq!(
                    (f.stage, &f.reason, f.decision),
                    (stage, &reason, decision),
                    "{f:?}"
                );
                assert!(
                    f.pointer.is_none(),
                    "pointer is reserved for the proposal: {f:?}"
                );
                f.clone()
            }
            Ok(p) => panic!("expected {reason}, got proposal {p:?}"),
        }
    }

    /// Asserts a response-stage finding with the reason's default decision.
    pub fn fails_with(a: &Adapted, reason: Reason) -> Finding {
        let d = reason.default_decision();
        fails(a, Stage::Response, reason, d)
    }

    /// Asserts an input-stage INVALID_CAPTURE.
    pub fn invalid(a: &Adapted) -> Finding {
        fails(a, Stage::Input, Reason::INVALID_CAPTURE, Decision::Reject)
    }

    /// Asserts a text proposal.
    pub fn text(a: &Adapted, expected: &str) {
        assert_eq!(
            a.result,
            Ok(Proposal::Text(expected.to_owned())),
            "{:?}",
            a.info
        );
    }

    /// Asserts a structured proposal.
    pub fn structured(a: &Adapted, expected: Value) {
        assert_eq!(a.result, Ok(Proposal::Structured(expected)), "{:?}", a.info);
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::core::verdict::Decision;
    use serde_json::json;

    #[test]
    fn detects_each_shape() {
        let cases = [
            (
                json!({"object": "response", "status": "completed", "output": []}),
                "openai-responses",
            ),
            (
                json!({"object": "chat.completion", "choices": []}),
                "openai-chat",
            ),
            (
                json!({"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}),
                "openai-chat",
            ),
            (
                json!({"type": "message", "content": [], "stop_reason": "end_turn"}),
                "anthropic",
            ),
            (json!({"candidates": []}), "gemini"),
            (
                json!({"promptFeedback": {"blockReason": "SAFETY"}}),
                "gemini",
            ),
            (
                json!({"type": "error", "error": {"type": "api_error"}}),
                "error",
            ),
            (json!({"error": {"code": 500}}), "error"),
            (
                json!({"output": {"message": {"content": []}}, "stopReason": "end_turn"}),
                "bedrock-converse",
            ),
            (
                json!({"stopReason": "end_turn", "output": null}),
                "bedrock-converse",
            ),
            (json!({"message": {"content": "x"}, "done": true}), "ollama"),
            (
                json!({"message": {}, "finish_reason": "TOOL_CALL"}),
                "cohere",
            ),
            (
                json!({"choices": [{"message": {}, "finish_reason": "stop", "content_filter_results": {}}]}),
                "azure-openai",
            ),
            (
                json!({"object": "chat.completion", "choices": [], "prompt_filter_results": []}),
                "azure-openai",
            ),
            (
                json!({"error": {"code": "content_filter", "innererror": {"code": "ResponsibleAIPolicyViolation"}}}),
                "azure-openai",
            ),
            (
                json!({"choices": [{"message": {}, "finish_reason": "model_length"}]}),
                "openai-compatible",
            ),
            (
                json!({"choices": [{"message": {}, "finish_reason": "stop"}], "provider": "Mistral"}),
                "openai-compatible",
            ),
        ];
        for (v, p) in cases {
            assert_eq!(adapt_response(&v, None, None).info.provider, p, "{v}");
        }
    }

    #[test]
    fn responses_object_with_error_is_not_an_error_body() {
        let v = json!({"object": "response", "status": "failed", "output": [],
                       "error": {"code": "server_error", "message": "boom"}});
        let a = adapt_response(&v, None, None);
        assert_eq!(a.info.provider, "openai-responses");
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Retry);
    }

    #[test]
    fn provider_key_overrides_detection() {
        // a Chat-shaped body read as Gemini: no candidates, so not finished
        let v = json!({"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]});
        let a = adapt_response(&v, Some("gemini"), None);
        assert_eq!(a.info.provider, "gemini");
        fails_with(&a, Reason::INCOMPLETE);
        // a minimal Anthropic message without `type` is accepted when forced
        let v =
            json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "stop_reason": "end_turn"});
        assert_eq!(
            adapt_response(&v, None, None).info.provider,
            UNKNOWN_PROVIDER
        );
        let a = adapt_response(&v, Some("anthropic"), None);
        text(&a, "{\"a\":1}");
    }

    #[test]
    fn forced_provider_on_an_error_body_reads_the_error() {
        let v = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        let a = adapt_response(&v, Some("anthropic"), None);
        assert_eq!(a.info.provider, "error");
        fails(&a, Stage::Response, Reason::REQUEST_ERROR, Decision::Retry);
    }

    #[test]
    fn unknown_provider_name_is_invalid_capture_with_hint() {
        let a = adapt_response(&json!({}), Some("antropic"), None);
        let f = invalid(&a);
        assert!(
            f.message.contains("unknown provider \"antropic\""),
            "{}",
            f.message
        );
        assert_eq!(f.hint.as_deref(), Some("did you mean `anthropic`?"));
        assert_eq!(a.info.provider, UNKNOWN_PROVIDER);
    }

    #[test]
    fn unrecognised_shapes_are_invalid_capture_not_panics() {
        let deep = (0..100).fold(json!(1), |acc, _| json!([acc]));
        let junk = [
            json!(3),
            json!(null),
            json!(true),
            json!({}),
            json!({"foo": 1}),
            json!([1, 2, 3]),
            json!([]),
            json!(""),
            json!("not sse"),
            json!([[[[{}]]]]),
            deep.clone(),
            json!({"choices": 3}),
            json!({"choices": [3]}),
            json!({"error": "text"}),
        ];
        for v in junk {
            let a = adapt_response(&v, None, None);
            invalid(&a);
        }
        // forced providers on junk: findings, never panics
        for p in PROVIDERS {
            for v in [
                json!({}),
                json!({"output": 3, "content": "x", "candidates": {}, "choices": [null]}),
                json!([{}]),
                deep.clone(),
                json!("data: 1\n\n"),
            ] {
                let a = adapt_response(&v, Some(p), Some("t"));
                assert!(a.result.is_err(), "{p} {v}");
            }
        }
    }

    #[test]
    fn a_single_stream_event_gets_a_hint() {
        let v =
            json!({"object": "chat.completion.chunk", "choices": [{"delta": {"content": "x"}}]});
        let f = invalid(&adapt_response(&v, None, None));
        assert!(f.hint.unwrap_or_default().contains("array of events"));
    }

    fn call(name: &str, id: &str) -> ToolCall {
        ToolCall {
            name: Some(name.into()),
            id: Some(id.into()),
            args: Proposal::Text("{}".into()),
        }
    }

    #[test]
    fn tool_selection() {
        let calls = [call("a", "c1"), call("b", "c2"), call("b", "c3")];
        assert_eq!(select(&calls, Some("a")).ok().flatten(), Some(&calls[0]));
        assert_eq!(select(&calls, Some("c3")).ok().flatten(), Some(&calls[2]));
        let f = select(&calls, None)
            .err()
            .unwrap_or_else(|| panic!("ambiguous"));
        assert_eq!(f.reason, Reason::INVALID_CAPTURE);
        assert!(
            f.message
                .contains("3 tool calls (\"a\" (c1), \"b\" (c2), \"b\" (c3))"),
            "{}",
            f.message
        );
        let f = select(&calls, Some("b"))
            .err()
            .unwrap_or_else(|| panic!("two named b"));
        assert!(f.message.contains("names 2 calls"), "{}", f.message);
        let f = select(&calls, Some("bb"))
            .err()
            .unwrap_or_else(|| panic!("no bb"));
        assert!(f.message.contains("names no call"), "{}", f.message);
        let f = select(&[], Some("a"))
            .err()
            .unwrap_or_else(|| panic!("none"));
        assert!(f.message.contains("holds no tool call"), "{}", f.message);
        assert_eq!(select(&[], None).ok(), Some(None));
    }

    /// A tiny deterministic generator of JSON built from the providers' own vocabulary, so
    /// that random values hit the adapters' real branches.
    struct Junk(u64);

    impl Junk {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[(self.next() as usize) % xs.len()]
        }
        fn value(&mut self, depth: u32) -> Value {
            const KEYS: &[&str] = &[
                "type",
                "object",
                "choices",
                "message",
                "content",
                "delta",
                "candidates",
                "parts",
                "error",
                "status",
                "output",
                "index",
                "finish_reason",
                "stop_reason",
                "tool_calls",
                "function",
                "arguments",
                "name",
                "text",
                "partial_json",
                "functionCall",
                "args",
                "promptFeedback",
                "blockReason",
                "finishReason",
                "content_block",
                "item",
                "output_index",
                "content_index",
                "response",
                "incomplete_details",
                "reason",
                "refusal",
                "code",
                "usage",
                "model",
                "input",
                "id",
                "call_id",
                "thought",
                "stopReason",
                "toolUse",
                "toolUseId",
                "messageStart",
                "contentBlockStart",
                "contentBlockDelta",
                "messageStop",
                "contentBlockIndex",
                "start",
                "metadata",
                "throttlingException",
                "trace",
                "guardrail",
                "action",
                "done",
                "done_reason",
                "eval_count",
                "tool_plan",
                "prompt_filter_results",
                "content_filter_results",
                "content_filter_result",
                "filtered",
                "severity",
                "details",
                "innererror",
                "native_finish_reason",
                "provider",
                "reasoning_content",
            ];
            const STRS: &[&str] = &[
                "message_start",
                "content_block_start",
                "content_block_delta",
                "message_delta",
                "message_stop",
                "text_delta",
                "input_json_delta",
                "tool_use",
                "text",
                "end_turn",
                "max_tokens",
                "refusal",
                "error",
                "response",
                "response.created",
                "response.completed",
                "response.output_text.delta",
                "response.function_call_arguments.delta",
                "response.output_item.added",
                "completed",
                "incomplete",
                "failed",
                "message",
                "function_call",
                "output_text",
                "chat.completion",
                "chat.completion.chunk",
                "stop",
                "length",
                "tool_calls",
                "STOP",
                "MAX_TOKENS",
                "SAFETY",
                "MALFORMED_FUNCTION_CALL",
                "{",
                "{\"a\":1}",
                "",
                " ",
                "[DONE]",
                "overloaded_error",
                "429",
                "tool_use",
                "guardrail_intervened",
                "malformed_tool_use",
                "BLOCKED",
                "COMPLETE",
                "TOOL_CALL",
                "TIMEOUT",
                "ERROR",
                "load",
                "model_length",
                "abort",
                "ResponsibleAIPolicyViolation",
                "high",
            ];
            let roll = if depth == 0 {
                self.next() % 4
            } else {
                self.next() % 7
            };
            match roll {
                0 => Value::Null,
                1 => Value::from(self.next() % 600),
                2 => Value::from(self.pick(STRS)),
                3 => Value::Bool(self.next().is_multiple_of(2)),
                4 => Value::Array(
                    (0..self.next() % 4)
                        .map(|_| self.value(depth - 1))
                        .collect(),
                ),
                _ => {
                    let mut m = serde_json::Map::new();
                    for _ in 0..self.next() % 6 {
                        let k = self.pick(KEYS).to_owned();
                        let v = self.value(depth - 1);
                        m.insert(k, v);
                    }
                    Value::Object(m)
                }
            }
        }
    }

    #[test]
    fn random_provider_shaped_junk_never_panics() {
        let mut junk = Junk(7);
        let providers: Vec<Option<&str>> = std::iter::once(None)
            .chain(PROVIDERS.iter().copied().map(Some))
            .collect();
        for _ in 0..4000 {
            let v = junk.value(5);
            let events: Vec<Value> = (0..junk.next() % 6).map(|_| junk.value(4)).collect();
            let sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            for &p in &providers {
                for tool in [None, Some("f")] {
                    let _ = adapt_response(&v, p, tool);
                    let _ = adapt_response(&Value::Array(events.clone()), p, tool);
                    let _ = adapt_response(&Value::String(sse.clone()), p, tool);
                }
            }
            let _ = adapt_output(
                &v,
                Some(junk.pick(&["completed", "refusal", "incomplete", "request_error", "x"])),
                None,
            );
        }
    }

    #[test]
    fn token_counts_are_read_never_computed() {
        let u = json!({"a": 3, "b": 4.0, "c": -1, "d": "5", "e": 2.5});
        assert_eq!(
            tokens(Some(&u), "a", "b", Some("c")),
            Some(TokenUsage {
                input_tokens: Some(3),
                output_tokens: Some(4),
                total_tokens: None
            })
        );
        assert_eq!(tokens(Some(&u), "d", "e", Some("x")), None);
        assert_eq!(tokens(None, "a", "b", None), None);
        assert_eq!(tokens(Some(&json!(7)), "a", "b", None), None);
        // a response without usage has no tokens, and its JSON has no `tokens` key
        let a = adapt_response(
            &json!({"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}),
            None,
            None,
        );
        assert_eq!(a.info.tokens, None);
        let shown = serde_json::to_value(&a.info).unwrap_or_default();
        assert_eq!(
            shown,
            json!({"provider": "openai-chat", "stop_reason": "stop"})
        );
    }

    #[test]
    fn quote_escapes_and_truncates() {
        assert_eq!(quote("a\u{1b}[31m"), "\"a\\u001b[31m\"");
        let long = "x".repeat(500);
        assert_eq!(quote(&long).chars().count(), 120 + 3);
    }
}
