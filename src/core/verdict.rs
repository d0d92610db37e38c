//! The verdict model: the one vocabulary every front end (`check`, the TUI, `watch --json`)
//! prints. Shapes: `docs/verdicts.md`.
//!
//! A [`Verdict`] is decided by the FIRST stage that fails ([`Stage`] order:
//! input < response < parse < schema < business < ready). Its [`Decision`] says what an
//! agent loop or a person should do next. Each problem is a [`Finding`] that names its
//! [`Reason`] code and, where one exists, the JSON Pointer (RFC 6901) at fault.

use crate::core::record_ref::RecordRef;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The pipeline stages in the order they run. `Input` is a capture that could not be
/// read or has no usable contract; `Ready` is a capture that passed every stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The capture record or its contract could not be used.
    Input,
    /// The provider's response: finished normally, no refusal, truncation or error.
    Response,
    /// The output text is one strict RFC 8259 JSON value.
    Parse,
    /// The value meets the JSON Schema contract.
    Schema,
    /// CEL business rules and the confirmed-intent comparison.
    Business,
    /// Every stage passed.
    Ready,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 6] = [
        Stage::Input,
        Stage::Response,
        Stage::Parse,
        Stage::Schema,
        Stage::Business,
        Stage::Ready,
    ];

    /// The lower-case name used in every output format (`"schema"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Input => "input",
            Stage::Response => "response",
            Stage::Parse => "parse",
            Stage::Schema => "schema",
            Stage::Business => "business",
            Stage::Ready => "ready",
        }
    }

    /// Parses a stage name as written in `expect` or a filter (`"parse"`).
    pub fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do next with a capture (`docs/verdicts.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Do not execute; surface to a person.
    Reject,
    /// Re-fetch state or confirm with the user before anything else.
    Recheck,
    /// Structural failure: ask the model again with the error and the contract as feedback.
    Regenerate,
    /// Transient: send the same request again, bounded.
    Retry,
    /// Every stage passed: a candidate for the write step, not a completed write.
    ReadyForCommit,
}

impl Decision {
    /// Every decision, most severe first.
    pub const ALL: [Decision; 5] = [
        Decision::Reject,
        Decision::Recheck,
        Decision::Regenerate,
        Decision::Retry,
        Decision::ReadyForCommit,
    ];

    /// The kebab-case name used in every output format (`"ready-for-commit"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Reject => "reject",
            Decision::Recheck => "recheck",
            Decision::Regenerate => "regenerate",
            Decision::Retry => "retry",
            Decision::ReadyForCommit => "ready-for-commit",
        }
    }

    /// Parses a decision name (`"retry"`).
    pub fn parse(s: &str) -> Option<Decision> {
        Decision::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// The one-character mark every front end shows beside a verdict: `✓` ready, `↻` retry,
    /// `✗` regenerate, `?` recheck, `⊘` reject.
    pub fn glyph(self) -> &'static str {
        match self {
            Decision::ReadyForCommit => "✓",
            Decision::Retry => "↻",
            Decision::Regenerate => "✗",
            Decision::Recheck => "?",
            Decision::Reject => "⊘",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reason code. The built-in codes of `docs/verdicts.md#reasons` are associated constants; a business
/// rule may name its own code (`EXCEEDS_REMAINING`). Codes are SCREAMING_SNAKE_CASE strings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Reason(pub std::borrow::Cow<'static, str>);

/// Declares every built-in reason once: its doc, its stage and its default decision
/// (the tables of `docs/verdicts.md#reasons`). Generates the associated constants, [`Reason::BUILT_IN`]
/// and the lookup behind [`Reason::builtin_stage`] and [`Reason::default_decision`].
macro_rules! reasons {
    ($($(#[$doc:meta])* $name:ident => $stage:ident, $decision:ident;)*) => {
        impl Reason {
            $($(#[$doc])* pub const $name: Reason = Reason(std::borrow::Cow::Borrowed(stringify!($name)));)*
            /// Every built-in reason code.
            pub const BUILT_IN: &'static [Reason] = &[$(Reason::$name,)*];
            /// Every built-in reason code with its stage and default decision, in declaration order.
            const TABLE: &'static [(&'static str, Stage, Decision)] =
                &[$((stringify!($name), Stage::$stage, Decision::$decision),)*];
        }
    };
}

reasons! {
    /// input: the capture record is not JSON or breaks the record table (`docs/capture-record.md`).
    INVALID_CAPTURE => Input, Reject;
    /// input: the capture names a contract the workspace does not have.
    UNKNOWN_CONTRACT => Input, Reject;
    /// input: the contract's schema or rules file is broken.
    CONTRACT_ERROR => Input, Reject;
    /// response: the model declined.
    REFUSAL => Response, Reject;
    /// response: a provider filter stopped the output.
    CONTENT_FILTERED => Response, Reject;
    /// response: the output hit the token limit.
    TRUNCATED_OUTPUT => Response, Retry;
    /// response: the provider says the tool call itself was malformed.
    MALFORMED_TOOL_CALL => Response, Regenerate;
    /// response: any other unfinished state.
    INCOMPLETE => Response, Retry;
    /// response: an error body or a failed response. Defaults to `reject`; the response
    /// adapter sets `retry` on the finding when the error is transient.
    REQUEST_ERROR => Response, Reject;
    /// response: completed, but empty or whitespace-only output.
    NO_OUTPUT => Response, Regenerate;
    /// response: an MCP tool reported a tool execution error (`result.isError: true`;
    /// `docs/record-shapes.md#mcp`): its output is not checked.
    TOOL_ERROR => Response, Reject;
    /// parse: not JSON (line:column).
    INVALID_JSON => Parse, Regenerate;
    /// parse: the text ends in the middle of a value.
    TRUNCATED_JSON => Parse, Regenerate;
    /// parse: an object repeats a key (pointer).
    DUPLICATE_KEY => Parse, Regenerate;
    /// parse: NaN, Infinity, or a number outside the IEEE 754 double range.
    NON_STANDARD_NUMBER => Parse, Regenerate;
    /// parse: anything after one complete value.
    TRAILING_CONTENT => Parse, Regenerate;
    /// parse: the text does not start with a value but holds one inside a fence or prose.
    FENCED_JSON => Parse, Regenerate;
    /// parse: nesting deeper than the parser's limit.
    TOO_DEEP => Parse, Regenerate;
    /// schema: a JSON Schema keyword failed.
    SCHEMA_MISMATCH => Schema, Regenerate;
    /// business: the proposal differs from the confirmed intent.
    INTENT_MISMATCH => Business, Recheck;
    /// business: a rule could not be evaluated (fails closed).
    RULE_ERROR => Business, Reject;
}

impl Reason {
    /// A reason from a rules file or an `expect` (any code).
    pub fn new(code: impl Into<String>) -> Reason {
        let code: String = code.into();
        match Reason::BUILT_IN.iter().find(|r| r.0 == code) {
            Some(r) => r.clone(),
            None => Reason(std::borrow::Cow::Owned(code)),
        }
    }

    /// The code as written (`"SCHEMA_MISMATCH"`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn built_in(&self) -> Option<&'static (&'static str, Stage, Decision)> {
        Reason::TABLE
            .iter()
            .find(|(name, _, _)| *name == self.as_str())
    }

    /// The stage a built-in reason belongs to; `None` for a rule's own code (business).
    pub fn builtin_stage(&self) -> Option<Stage> {
        self.built_in().map(|&(_, stage, _)| stage)
    }

    /// The default decision of a reason (`docs/verdicts.md#reasons`). `REQUEST_ERROR` defaults to
    /// `reject`; the response adapter sets `retry` on the finding when the error is transient.
    /// A rule's own code defaults to `reject` unless its rule says otherwise.
    pub fn default_decision(&self) -> Decision {
        self.built_in()
            .map_or(Decision::Reject, |&(_, _, decision)| decision)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A byte range `start..end` into a text (the raw output, or a contract file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// First byte, inclusive.
    pub start: usize,
    /// Last byte, exclusive.
    pub end: usize,
}

/// A 1-based line and column; the column counts characters (Unicode scalar values), not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LineCol {
    /// 1-based line.
    pub line: u32,
    /// 1-based column in characters.
    pub column: u32,
}

impl fmt::Display for LineCol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One problem found in a capture. Serialized as `docs/verdicts.md#the-verdict-as-json` shows, with extra optional keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The stage that produced it.
    pub stage: Stage,
    /// The reason code.
    pub reason: Reason,
    /// The decision this finding calls for (the reason's default unless a rule overrides it).
    pub decision: Decision,
    /// JSON Pointer (RFC 6901) into the proposal: the JSON Schema *instance location*,
    /// the duplicated key, the rule's `field`, the intent leaf. `None` when no value is at fault.
    pub pointer: Option<String>,
    /// The JSON Schema *keyword location* (`/properties/amount_minor/anyOf/0/minimum`),
    /// without `$ref` hops; for a rule, `None`.
    pub schema_path: Option<String>,
    /// The failing JSON Schema keyword (`minimum`), or the CEL rule's index as `rule[2]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    /// Human-readable message, lower-case start where it is ours.
    pub message: String,
    /// Where in the raw output text (line and column in characters) the offending value
    /// or token starts. `None` when there is no text (structured output) or no position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<LineCol>,
    /// Byte span of the offending value or token in the raw output text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// For `anyOf`/`oneOf`: each branch's own errors, best-matching branch first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<Branch>,
    /// A fix hint ("did you mean `intent`?").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The errors of one `anyOf`/`oneOf` branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// Index of the subschema in the `anyOf`/`oneOf` array.
    pub index: usize,
    /// Its errors (each with pointer, keyword location and message).
    pub errors: Vec<Finding>,
}

/// The most findings a verdict keeps of its failing stage (`docs/verdicts.md#limits`): the
/// first 100 the stage reports, then one more finding of the same reason that counts the
/// rest ([`Finding::omitted`]): the same in every front end (human, json, jsonl, github, the
/// TUI). An `anyOf` / `oneOf` branch keeps as many. Memory per capture stays bounded
/// whatever the number of errors (a 5,000,000-item array, every item invalid).
pub const MAX_ERRORS: usize = 100;

/// Keeps the first [`MAX_ERRORS`] of `findings` and, when there were more, appends the
/// [`Finding::omitted`] finding counting the rest (like the last kept one: its stage,
/// reason and decision).
pub fn cap_findings(mut findings: Vec<Finding>) -> Vec<Finding> {
    if findings.len() > MAX_ERRORS {
        let rest = (findings.len() - MAX_ERRORS) as u64;
        findings.truncate(MAX_ERRORS);
        let more = Finding::omitted(&findings[MAX_ERRORS - 1], rest);
        findings.push(more);
    }
    findings
}

impl Finding {
    /// The finding that stands for `count` findings not kept after [`MAX_ERRORS`]: the
    /// stage, reason and decision of `like`, no location, the message
    /// `N more errors not kept (a verdict keeps the first 100: docs/verdicts.md#limits)`.
    pub fn omitted(like: &Finding, count: u64) -> Finding {
        let mut f = Finding::new(
            like.stage,
            like.reason.clone(),
            format!(
                "{count} more error{} not kept (a verdict keeps the first {MAX_ERRORS}: docs/verdicts.md#limits)",
                if count == 1 { "" } else { "s" }
            ),
        );
        f.decision = like.decision;
        f
    }

    /// A finding with the reason's stage and default decision and no location.
    pub fn new(stage: Stage, reason: Reason, message: impl Into<String>) -> Finding {
        let decision = reason.default_decision();
        Finding {
            stage,
            reason,
            decision,
            pointer: None,
            schema_path: None,
            keyword: None,
            message: message.into(),
            at: None,
            span: None,
            branches: Vec::new(),
            hint: None,
        }
    }

    /// Sets the JSON Pointer at fault.
    pub fn with_pointer(mut self, pointer: impl Into<String>) -> Finding {
        self.pointer = Some(pointer.into());
        self
    }

    /// Sets the decision (a rule's override, or `retry` for a transient request error).
    pub fn with_decision(mut self, decision: Decision) -> Finding {
        self.decision = decision;
        self
    }

    /// Sets a fix hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Finding {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the byte span and its line:column.
    pub fn with_span(mut self, span: Span, at: LineCol) -> Finding {
        self.span = Some(span);
        self.at = Some(at);
        self
    }
}

/// A lint finding attached to every verdict of a contract (`docs/commands.md#lint`). Shown, not failing,
/// unless `strict_schemas` is on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Stable code (`FORMAT_NOT_ASSERTED`; see `core::lint::codes`).
    pub code: String,
    /// `error`, `warning` or `info` (the lint finding's severity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// The contract file it is about, relative to the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// JSON Pointer inside the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Line:column of the value at `pointer` in the schema file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<LineCol>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Warning {
    /// The proposal meets the generation schema (the schema its request sent) but fails the
    /// server contract's schema: the request asked for less than the server requires, so
    /// constrained decoding could never have caught it; the request schema, not the model,
    /// needs the fix (`docs/requests.md#both-contracts`).
    pub const GENERATION_GAP: &'static str = "GENERATION_GAP";
    /// The request was `strict` (constrained decoding promised conformance) and the proposal
    /// still breaks the schema it sent (`docs/requests.md#both-contracts`).
    pub const STRICT_VIOLATION: &'static str = "STRICT_VIOLATION";
    /// The capture's own request (its record's `request`, or the one its response echoes,
    /// which is used) and the batch input request it joins sent different schemas for the
    /// proposal (`docs/requests.md#where-a-captures-request-comes-from`).
    pub const REQUEST_CONFLICT: &'static str = "REQUEST_CONFLICT";
    /// Every warning code the pipeline itself puts on a verdict, in `docs/verdicts.md` order
    /// (the contract's lint codes are `core::lint::codes`; the workspace warnings are
    /// `UNMATCHED_JOIN`, `UNMATCHED_REQUEST`, `DUPLICATE_REQUEST`).
    pub const CAPTURE_CODES: &'static [&'static str] = &[
        "CANDIDATES_IGNORED",
        "DUPLICATE_ID",
        Warning::GENERATION_GAP,
        Warning::STRICT_VIOLATION,
        Warning::REQUEST_CONFLICT,
    ];

    /// A warning that is not a contract's lint finding (no `file`, no line:column), severity
    /// `warning`: about one capture (`pointer` into its record or response, or `None`), or
    /// about a chain of captures (`docs/chains.md`). The one constructor of such warnings.
    pub fn capture(code: &str, pointer: Option<String>, message: String) -> Warning {
        Warning {
            code: code.to_owned(),
            severity: Some("warning".into()),
            file: None,
            pointer,
            at: None,
            message,
        }
    }
}

/// The expected verdict of a capture (`expect` in the record); a left-out key is not checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Expect {
    /// Expected stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    /// Expected decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Expected reason: `Some(None)` is an explicit `null` (a ready capture), `None` is not checked.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "explicit_null"
    )]
    pub reason: Option<Option<Reason>>,
}

mod explicit_null {
    use super::Reason;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    pub fn serialize<S: Serializer>(v: &Option<Option<Reason>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<Reason>>, D::Error> {
        Ok(Some(Option::<Reason>::deserialize(d)?))
    }
}

/// An `expect` with its outcome, as printed in the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectOutcome {
    /// What was expected.
    #[serde(flatten)]
    pub expect: Expect,
    /// Whether the verdict met every given key.
    pub met: bool,
}

/// Token counts read from a provider's usage report, under one set of names
/// (`docs/verdicts.md#token-usage`). Each count is present only when the provider reported
/// it: nothing is computed (`total_tokens` is not the sum of the other two when the provider
/// gives no total). Where each count is read, per provider: `docs/record-shapes.md`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt (input) tokens: OpenAI Chat `prompt_tokens`, Responses and Anthropic
    /// `input_tokens`, Gemini `promptTokenCount`, Bedrock `inputTokens`, Ollama
    /// `prompt_eval_count`, Cohere `tokens.input_tokens` (else `billed_units.input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Generated (output) tokens: `completion_tokens`, `output_tokens`,
    /// `candidatesTokenCount`, `outputTokens`, `eval_count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// The provider's own total: `total_tokens`, `totalTokenCount`, `totalTokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
}

/// What the response stage read from the provider's response (for screens and reports).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseInfo {
    /// Adapter used: `openai-responses`, `openai-chat`, `anthropic`, `gemini`,
    /// `bedrock-converse`, `ollama`, `cohere`, `azure-openai`, `openai-compatible`, `error`,
    /// or `output` for a record that carries the output text directly.
    pub provider: String,
    /// Whether the response was a captured stream (array of events or SSE text).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// The provider's own status / finish / stop reason, verbatim (`end_turn`, `length`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The upstream provider's own stop value when a gateway normalised `stop_reason`
    /// (OpenRouter `choices[].native_finish_reason`), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_stop_reason: Option<String>,
    /// The model named in the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Token usage as the provider reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<serde_json::Value>,
    /// The token counts of `usage` under one set of names; `None` when the provider
    /// reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenUsage>,
    /// The tool call whose arguments are the proposal, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What the adapter noticed but did not fail on (several Gemini candidates, of which
    /// the first is the proposal). The pipeline moves them into [`Verdict::warnings`].
    #[serde(skip)]
    pub warnings: Vec<Warning>,
}

/// The verdict of one capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The capture's id (`valid-proposal`, or `captures/log.jsonl:9`).
    pub id: String,
    /// Where it came from, relative to the workspace: `captures/a.json` or `captures/log.jsonl:9`
    /// (a [`RecordRef`], serialized as that text; `docs/capture-record.md`).
    pub source: RecordRef,
    /// The contract it was checked against, when one was found.
    pub contract: Option<String>,
    /// Which step chose the contract (`docs/verdicts.md#contract-from`): `record`, `join`,
    /// `source N`, `route N`, `tool` or `default`; `None` when no contract was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_from: Option<String>,
    /// The record shape it was read as (`capture`, `response`, `openai-batch`, ...;
    /// `docs/record-shapes.md#record-shapes`); `None` when the record could not be read as any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The response adapter that read it (`openai-chat`, `anthropic`, ..., `output` for a
    /// record that carries its output, or the container's format for a batch line the
    /// container decided); `None` when the response stage did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The first failing stage, or `ready`.
    pub stage: Stage,
    /// What to do next.
    pub decision: Decision,
    /// The first failure's reason; `None` when ready.
    pub reason: Option<Reason>,
    /// The findings of the failing stage (the first one decides): at most [`MAX_ERRORS`], then
    /// one counting the rest ([`Finding::omitted`]).
    pub errors: Vec<Finding>,
    /// Lint warnings of the contract.
    pub warnings: Vec<Warning>,
    /// The capture's `expect`, with whether it was met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ExpectOutcome>,
    /// The first repair (`docs/repairs.md#the-table`) whose repaired copy would have another
    /// outcome, and that outcome: `{"name", "would_be": {stage, decision, reason}}`
    /// (`docs/verdicts.md#repair`). Only a capture that fails at the parse or schema stage
    /// can have one; the verdict's own stage, decision and reason are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<crate::core::repair::Repair>,
    /// What the response stage read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseInfo>,
    /// The capture's `meta`: the record's own, with the provider's `model` and `usage`
    /// (`{input_tokens, output_tokens, total_tokens}`) added where it lacks them
    /// (`docs/capture-record.md#meta`). Never seen by rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::core::meta::Meta>,
    /// The schema the request sent for the proposal: the verdict's contract when
    /// `contract_from` is `"request"` (`docs/requests.md#zero-config`), else checked beside
    /// the server contract (`docs/requests.md#both-contracts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<Generation>,
    /// The self-correction chain the capture is an attempt of, when it is linked to one
    /// (`docs/chains.md#on-the-verdict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<crate::core::chain::ChainLink>,
    /// One sentence: what to do next (from the decision and reason).
    pub next_action: String,
}

/// The generation schema of a capture: the schema its request sent for the proposal
/// (`docs/requests.md#the-generation-schema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    /// The tool's name, or the text format's name (`response` when it has none).
    pub schema: String,
    /// `tool` (the called tool's parameters) or `text` (the text format).
    pub source: crate::core::generation::SchemaSource,
    /// Whether the request said `strict: true` beside the schema.
    pub strict: bool,
    /// Where the request is: `record` (the capture record's `request`), `echo` (the
    /// response or batch line echoes it), or the input file's `FILE:LINE`.
    pub request: String,
    /// JSON Pointer of the schema in the request's record
    /// (`/body/response_format/json_schema/schema`).
    pub pointer: String,
    /// With a server contract: whether the proposal meets the generation schema; `None`
    /// (left out) when it was not checked: the generation schema is the contract itself,
    /// there is no proposal (an earlier stage failed), or the schema cannot be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// With a server contract: the proposal's findings against the generation schema
    /// (`SCHEMA_MISMATCH`, instance `pointer` and `schema_path` into the generation schema),
    /// or the `CONTRACT_ERROR` of a generation schema that cannot be used; empty (left out)
    /// otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Finding>,
}

impl Generation {
    /// Where an input request is (`request` read as `FILE:LINE`); `None` for `record` and
    /// `echo`: the request is in the capture's own record.
    pub fn request_ref(&self) -> Option<RecordRef> {
        match self.request.as_str() {
            "record" | "echo" => None,
            r => Some(RecordRef::parse(r)),
        }
    }
}

impl Verdict {
    /// A verdict to be overwritten: no id, nothing allocated (not even its next action),
    /// `READY` (the pipeline makes each evaluation's verdict in its place).
    pub(crate) fn placeholder(source: RecordRef) -> Verdict {
        Verdict {
            id: String::new(),
            source,
            contract: None,
            contract_from: None,
            format: None,
            provider: None,
            stage: Stage::Ready,
            decision: Decision::ReadyForCommit,
            reason: None,
            errors: Vec::new(),
            warnings: Vec::new(),
            expect: None,
            repair: None,
            response: None,
            meta: None,
            generation: None,
            chain: None,
            next_action: String::new(),
        }
    }

    /// A verdict decided by `errors[0]` (which must exist), or ready when `errors` is empty.
    pub fn from_errors(
        id: String,
        source: RecordRef,
        contract: Option<String>,
        errors: Vec<Finding>,
    ) -> Verdict {
        let (stage, decision, reason) = match errors.first() {
            Some(f) => (f.stage, f.decision, Some(f.reason.clone())),
            None => (Stage::Ready, Decision::ReadyForCommit, None),
        };
        Verdict {
            id,
            contract,
            stage,
            decision,
            errors,
            next_action: crate::core::feedback::next_action(decision, reason.as_ref()).to_string(),
            reason,
            ..Verdict::placeholder(source)
        }
    }

    /// Whether every stage passed.
    pub fn is_ready(&self) -> bool {
        self.stage == Stage::Ready
    }

    /// Records `expect` and whether this verdict meets it.
    pub fn apply_expect(&mut self, expect: Expect) {
        let met = expect.stage.is_none_or(|s| s == self.stage)
            && expect.decision.is_none_or(|d| d == self.decision)
            && expect.reason.as_ref().is_none_or(|r| *r == self.reason);
        self.expect = Some(ExpectOutcome { expect, met });
    }

    /// Whether the capture counts as passing a `check` run: it meets its `expect`, or it has
    /// none and is ready.
    pub fn passes(&self) -> bool {
        crate::core::outcome::passes(self.stage, self.expect.as_ref().map(|e| e.met))
    }

    /// Its [`Outcome`](crate::core::outcome::Outcome): stage, decision, reason, `expect` met.
    pub fn outcome(&self) -> crate::core::outcome::Outcome {
        crate::core::outcome::Outcome::of(self)
    }
}
