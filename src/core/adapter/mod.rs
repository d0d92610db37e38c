//! The response stage: provider adapters (DESIGN 4).
//!
//! An adapter reads a provider's raw response (or a captured stream of its events) and
//! decides whether the provider finished normally; if so it hands on the proposal: the
//! named tool call's arguments, or the message text.

use crate::core::verdict::{Finding, ResponseInfo};
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

/// Runs the response stage on a record's `response` (an object, an array of stream events,
/// or a string of SSE lines). `provider` forces an adapter (`openai-responses`,
/// `openai-chat`, `anthropic`, `gemini`); `tool` names the tool call that is the proposal.
pub fn adapt_response(response: &Value, provider: Option<&str>, tool: Option<&str>) -> Adapted {
    let _ = (response, provider, tool);
    todo!("adapter")
}

/// Runs the response stage on a record that carries `output` directly, with its
/// `status` (`completed` default, `refusal`, `incomplete`, `request_error`) and
/// `status_detail` (`max_output_tokens`, `content_filter`, `rate_limit`, an HTTP status...).
pub fn adapt_output(output: &Value, status: Option<&str>, status_detail: Option<&str>) -> Adapted {
    let _ = (output, status, status_detail);
    todo!("adapter")
}
