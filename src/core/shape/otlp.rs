//! OTLP/JSON traces (`docs/record-shapes.md#traces`): a `TracesData` object, one per line of
//! the OpenTelemetry file exporter's JSON Lines, or a single exported document.
//!
//! Sources: the OTLP specification's JSON encoding and the file exporter
//! (opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding,
//! opentelemetry.io/docs/specs/otel/protocol/file-exporter/; the messages in
//! github.com/open-telemetry/opentelemetry-proto `opentelemetry/proto/trace/v1/trace.proto`
//! and `common/v1/common.proto`): `resourceSpans[].scopeSpans[].spans[]`, hex `traceId` and
//! `spanId`, `attributes` as `[{key, value: AnyValue}]` where an AnyValue is one of
//! `stringValue`, `intValue` (a string under ProtoJSON, a number from many emitters),
//! `doubleValue`, `boolValue`, `arrayValue{values}`, `kvlistValue{values}`, `bytesValue`;
//! `status.code` an integer (0 unset, 1 ok, 2 error) or its enum name `STATUS_CODE_*`.
//!
//! Which spans are captures, and how a GenAI span is read, follow the OpenTelemetry
//! semantic conventions for generative AI (github.com/open-telemetry/semantic-conventions,
//! `docs/gen-ai/gen-ai-spans.md`, `docs/registry/attributes/gen-ai.md`,
//! `docs/gen-ai/gen-ai-output-messages.json`): an inference span has
//! `gen_ai.operation.name` `chat`, `generate_content` or `text_completion` (and real
//! emitters write `completion`); an `execute_tool` span is a tool's run. A span with an
//! `openinference.span.kind` attribute is an OpenInference span (`shape/openinference.rs`).
//! Every other span (HTTP, agent, workflow, embeddings, retrieval) is not a capture.
//!
//! A `TracesData` holding one LLM or tool span is that span's capture, one holding none is
//! not a capture at all (as a batch input line is not), and one holding several gives one
//! capture per such span, each a part of the record ([`Payload::Parts`]: its source is
//! `FILE:LINE#PART`, the 1-based index among the record's LLM and tool spans in file order;
//! `docs/record-shapes.md#traces`).

use super::{Shape, broken, must_be, native, native_meta};
use crate::core::adapter::{self, Adapted, Proposal, ToolCall, quote, response_finding};
use crate::core::capture::{Capture, CaptureRequest, Payload, RecordError};
use crate::core::meta::{MetaKey, MetaWriter};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Finding, Reason, ResponseInfo, TokenUsage};
use serde_json::{Map, Value};

/// Implements `expecting` and the `Visitor` methods of a boolean, an integer, a double (noted
/// as the strict parse notes one) and `null` to give `$v`: the value of a visitor that reads
/// no such scalar.
/// (For the typed walks of the `read` and `messages` modules, which name `StrictSeed`,
/// `fmt` and `de` where they use it.)
macro_rules! scalars_give {
    ($v:expr) => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any valid JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            StrictSeed.visit_f64::<E>(v)?;
            Ok($v)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

mod cursor;
mod escaped;
mod ids;
mod messages;
mod quick;
mod read;
mod scan;

/// The `format` of a GenAI span of an OTLP/JSON export.
pub(crate) const FORMAT: &str = "otlp";

/// An OTLP/JSON `TracesData`: it has `resourceSpans`.
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "an OTLP/JSON TracesData (OpenTelemetry GenAI spans)",
    keys: &["resourceSpans"],
    detect: |v| v.get("resourceSpans").is_some(),
    read,
};

/// The `gen_ai.operation.name` values of an inference span: the conventions' `chat`,
/// `generate_content`, `text_completion`, and `completion`, which real emitters write.
pub(crate) const INFERENCE_OPERATIONS: [&str; 4] =
    ["chat", "generate_content", "text_completion", "completion"];

/// One span of a `TracesData`, with its attributes decoded; its names and values borrow
/// from the record text `'a` where they can ([`Fields`]).
pub(super) struct Span<'a> {
    /// Where it is in the record ([`SpanAt`]: `resourceSpans[0].scopeSpans[0].spans[1]`).
    pub at: SpanAt,
    /// `traceId/spanId` (`docs/record-shapes.md#traces`).
    pub id: String,
    /// The span object's members as written, without its `attributes` (moved into
    /// `attrs`).
    pub raw: Fields<'a>,
    /// `attributes`, each AnyValue decoded ([`any_value`]), except one: see `messages`.
    pub attrs: Fields<'a>,
    /// The byte scan's `gen_ai.output.messages` string kept as its raw text (the body of
    /// the JSON string token, escapes and all) and its place in `attrs`, which holds `null`
    /// there until [`Span::decode_messages`] or the inference adapter reads it.
    pub messages: Option<(usize, &'a str)>,
}

impl Span<'_> {
    /// Puts the decoded `gen_ai.output.messages` string in its place in `attrs`, when the
    /// scan kept it raw.
    fn decode_messages(&mut self) {
        if let Some((at, raw)) = self.messages.take() {
            self.attrs.set(at, Value::String(scan::decode_token(raw)));
        }
    }
}

/// Where a span is in its record: `resourceSpans[R].scopeSpans[S].spans[K]` (or
/// `instrumentationLibrarySpans[S]`, OTLP before 0.15), written out only when an error
/// names it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SpanAt {
    /// The index `R` in `resourceSpans`.
    pub resource: usize,
    /// Whether the scopes are `instrumentationLibrarySpans`.
    pub library: bool,
    /// The index `S` among the resource's scopes.
    pub scope: usize,
    /// The index `K` among the scope's spans.
    pub span: usize,
}

impl std::fmt::Display for SpanAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = if self.library {
            "instrumentationLibrarySpans"
        } else {
            "scopeSpans"
        };
        write!(
            f,
            "resourceSpans[{}].{key}[{}].spans[{}]",
            self.resource, self.scope, self.span
        )
    }
}

/// Named JSON values in the order read: a span's members or its decoded attributes, an
/// event's attributes. A name given twice is read as its last value (a later attribute
/// wins, as OTLP's `KeyValue` lists are read); names borrow from the record text when
/// they have no escape. A handful of names per span: a linear search beats a map, up to
/// [`Fields::LINEAR`] names; past that (a hostile span of a million attributes) a map
/// of each name's last place, built at the first lookup, keeps every lookup O(1).
#[derive(Debug, Default, Clone)]
pub(super) struct Fields<'a> {
    list: Vec<(std::borrow::Cow<'a, str>, Value)>,
    /// Past [`Fields::LINEAR`] names: each name's last place.
    index: std::cell::OnceCell<std::collections::HashMap<String, usize>>,
}

impl PartialEq for Fields<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.list == other.list
    }
}

impl<'a> Fields<'a> {
    /// The most names searched one by one.
    const LINEAR: usize = 32;

    /// Where the last value of `name` is.
    #[inline]
    pub fn last_index(&self, name: &str) -> Option<usize> {
        if self.list.len() <= Self::LINEAR {
            return self.list.iter().rposition(|(n, _)| n == name);
        }
        self.index
            .get_or_init(|| {
                let mut m = std::collections::HashMap::with_capacity(self.list.len());
                for (i, (n, _)) in self.list.iter().enumerate() {
                    m.insert(n.to_string(), i);
                }
                m
            })
            .get(name)
            .copied()
    }

    /// The value of `name` (its last one).
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.last_index(name).map(|i| &self.list[i].1)
    }

    /// Whether `name` is there.
    #[inline]
    pub fn contains(&self, name: &str) -> bool {
        self.last_index(name).is_some()
    }

    /// The names, in the order read (a repeated name each time).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|(n, _)| &**n)
    }

    /// Room for `n` names.
    #[inline]
    pub fn with_capacity(n: usize) -> Self {
        Fields {
            list: Vec::with_capacity(n),
            index: std::cell::OnceCell::new(),
        }
    }

    /// Adds `name` (a later value of a name wins in [`Fields::get`]).
    #[inline]
    pub fn push(&mut self, name: impl Into<std::borrow::Cow<'a, str>>, value: Value) {
        let name = name.into();
        if self.list.len() >= Self::LINEAR
            && let Some(m) = self.index.get_mut()
        {
            m.insert(name.to_string(), self.list.len());
        }
        self.list.push((name, value));
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Replaces the value at place `i`.
    pub fn set(&mut self, i: usize, value: Value) {
        self.list[i].1 = value;
    }
}

impl From<Map<String, Value>> for Fields<'static> {
    fn from(map: Map<String, Value>) -> Self {
        let mut out = Fields::with_capacity(map.len());
        for (k, v) in map {
            out.push(k, v);
        }
        out
    }
}

/// The members of a span object the adapters read (`span_meta`, `status_error`, the
/// `events` of `choice_event` and OpenInference's `exception`); the typed reading
/// (`read.rs`) builds only these, the others read as `null`.
pub(super) const SPAN_MEMBERS: [&str; 7] = [
    "traceId",
    "spanId",
    "parentSpanId",
    "name",
    "startTimeUnixNano",
    "status",
    "events",
];

/// What a span is to verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A GenAI inference span.
    Inference,
    /// A GenAI `execute_tool` span.
    Tool,
    /// An OpenInference `LLM` span.
    OpenInferenceLlm,
    /// An OpenInference `TOOL` span.
    OpenInferenceTool,
}

/// An OTLP AnyValue as plain JSON: `stringValue` a string, `intValue` a number (a numeric
/// string, as ProtoJSON writes int64, is read as the number), `doubleValue` a number,
/// `boolValue` a boolean, `arrayValue.values` an array, `kvlistValue.values` an object,
/// `bytesValue` its (base64) string, an empty AnyValue null. A value that is not an
/// AnyValue object is kept as it is (some exporters write plain values).
pub(crate) fn any_value(v: &Value) -> Value {
    any_value_owned(v.clone())
}

/// [`any_value`] of a value the caller gives up: its strings and lists are moved, not
/// copied.
fn any_value_owned(v: Value) -> Value {
    let Value::Object(mut o) = v else {
        return v;
    };
    if let Some(s) = o.remove("stringValue") {
        return s;
    }
    if let Some(i) = o.remove("intValue") {
        return match i {
            Value::String(s) => match s.trim().parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(s),
            },
            other => other,
        };
    }
    if let Some(d) = o.remove("doubleValue") {
        return match d {
            Value::String(s) => match s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(n) => Value::Number(n),
                None => Value::String(s),
            },
            other => other,
        };
    }
    if let Some(b) = o.remove("boolValue") {
        return b;
    }
    if let Some(a) = o.remove("arrayValue") {
        return Value::Array(match a {
            Value::Object(mut a) => match a.remove("values") {
                Some(Value::Array(vs)) => vs.into_iter().map(any_value_owned).collect(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        });
    }
    if let Some(kv) = o.remove("kvlistValue") {
        return Value::Object(kvlist_owned(match kv {
            Value::Object(mut kv) => kv.remove("values"),
            _ => None,
        }));
    }
    if let Some(b) = o.remove("bytesValue") {
        return b;
    }
    if o.is_empty() {
        return Value::Null;
    }
    Value::Object(o)
}

/// A list of OTLP `KeyValue`s (`[{key, value}]`) as an object, each value decoded; an
/// object given instead of the list is taken as it is, its values decoded.
pub(super) fn key_values(list: Option<&Value>) -> Fields<'static> {
    key_values_owned(list.cloned())
}

/// [`key_values`] of a list the caller gives up (its values are moved, not copied).
fn key_values_owned(list: Option<Value>) -> Fields<'static> {
    let mut out = Fields::default();
    for_key_values(list, |k, v| out.push(k, v));
    out
}

/// A `kvlistValue`'s `values` as an object (a later key wins), each value decoded.
fn kvlist_owned(list: Option<Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for_key_values(list, |k, v| {
        out.insert(k, v);
    });
    out
}

/// Each `{key, value}` of a list of OTLP `KeyValue`s (an element that is not an object,
/// or whose `key` is not a string, left out; a missing `value` is `null`), or each member
/// of an object given instead of the list, to `each`, its value decoded.
fn for_key_values(list: Option<Value>, mut each: impl FnMut(String, Value)) {
    match list {
        Some(Value::Array(items)) => {
            for kv in items {
                if let Value::Object(mut kv) = kv
                    && let Some(Value::String(k)) = kv.remove("key")
                {
                    let v = kv.remove("value").map_or(Value::Null, any_value_owned);
                    each(k, v);
                }
            }
        }
        Some(Value::Object(o)) => {
            for (k, v) in o {
                each(k, any_value_owned(v));
            }
        }
        _ => {}
    }
}

fn kind(attrs: &Fields<'_>) -> Option<Kind> {
    if let Some(k) = attrs.get("openinference.span.kind") {
        return match k.as_str() {
            Some("LLM") => Some(Kind::OpenInferenceLlm),
            Some("TOOL") => Some(Kind::OpenInferenceTool),
            _ => None,
        };
    }
    let op = attrs
        .get("gen_ai.operation.name")
        // OpenLLMetry's spans, before the operation name existed
        .or_else(|| attrs.get("llm.request.type"))
        .and_then(Value::as_str)?;
    if INFERENCE_OPERATIONS.contains(&op) {
        Some(Kind::Inference)
    } else if op == "execute_tool" {
        Some(Kind::Tool)
    } else {
        None
    }
}

/// The LLM and tool spans of a `TracesData` (its captures), in file order, moved out of
/// the record (the other spans are dropped).
///
/// # Errors
/// A container that is not what OTLP/JSON makes it (`resourceSpans` not an array, a span
/// without a hex `traceId` or `spanId`), as the `INVALID_CAPTURE` of the record.
fn capture_spans(mut obj: Map<String, Value>) -> Result<Vec<(Kind, Span<'static>)>, RecordError> {
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, None);
    fn list(
        v: Option<Value>,
        path: &str,
        fail: &dyn Fn(&str, &str) -> RecordError,
    ) -> Result<Vec<Value>, RecordError> {
        match v {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a),
            Some(v) => Err(fail(path, &must_be("an array", &v))),
        }
    }
    let mut out = Vec::new();
    for (r, rs) in list(obj.remove("resourceSpans"), "resourceSpans", &fail)?
        .into_iter()
        .enumerate()
    {
        let rpath = format!("resourceSpans[{r}]");
        // `instrumentationLibrarySpans`: OTLP before 0.15, still in old exports
        let (key, scopes) = match rs {
            Value::Object(mut rs) => match rs.remove("scopeSpans") {
                Some(s) => ("scopeSpans", Some(s)),
                None => (
                    "instrumentationLibrarySpans",
                    rs.remove("instrumentationLibrarySpans"),
                ),
            },
            _ => ("scopeSpans", None),
        };
        for (s, ss) in list(scopes, &format!("{rpath}.{key}"), &fail)?
            .into_iter()
            .enumerate()
        {
            let spath = format!("{rpath}.{key}[{s}].spans");
            let spans = match ss {
                Value::Object(mut ss) => ss.remove("spans"),
                _ => None,
            };
            for (k, span) in list(spans, &spath, &fail)?.into_iter().enumerate() {
                let path = format!("{spath}[{k}]");
                let Value::Object(mut span) = span else {
                    return Err(fail(&path, &must_be("an object", &span)));
                };
                let attrs = key_values_owned(span.remove("attributes"));
                let Some(kind) = kind(&attrs) else {
                    continue;
                };
                let hex = |key: &str| -> Result<&str, RecordError> {
                    match span.get(key) {
                        Some(Value::String(s)) if !s.is_empty() => Ok(s),
                        Some(Value::String(_)) => {
                            Err(fail(&format!("{path}.{key}"), "must not be empty"))
                        }
                        Some(v) => Err(fail(&format!("{path}.{key}"), &must_be("a string", v))),
                        None => Err(fail(&format!("{path}.{key}"), "is missing")),
                    }
                };
                let id = format!("{}/{}", hex("traceId")?, hex("spanId")?);
                let at = SpanAt {
                    resource: r,
                    library: key != "scopeSpans",
                    scope: s,
                    span: k,
                };
                out.push((
                    kind,
                    Span {
                        at,
                        id,
                        raw: span.into(),
                        attrs,
                        messages: None,
                    },
                ));
            }
        }
    }
    Ok(out)
}

/// The ids the LLM and tool spans of an OTLP/JSON record text would get
/// (`TRACEID/SPANID`), in file order, for the duplicate-id pre-pass; none when the text is
/// not such a record or the main pass finds it broken. Read without building the record:
/// only the spans' ids and the attributes that decide what a span is are read (the `ids`
/// module); on a text that is not strict JSON it may give ids the main pass does not
/// (more candidates, which the pre-pass allows).
pub fn span_ids(text: &[u8]) -> Vec<String> {
    std::str::from_utf8(text)
        .ok()
        .and_then(ids::span_ids)
        .unwrap_or_default()
}

/// The ids the main pass names the captures of the record `text` by, when it reads the
/// record as the shape it has and that shape is OTLP/JSON (a JSON object with
/// `resourceSpans` and no `jsonrpc`): its LLM and tool spans' `TRACEID/SPANID` ([`span_ids`];
/// none when it holds no such span or is broken, when it is named by its source). `None`
/// for a text that is not such a record. Every other member of the record (the attributes'
/// `key`s, ids in resource attributes) names none of its captures.
pub fn record_span_ids(text: &[u8]) -> Option<Vec<String>> {
    let (spans, jsonrpc) = record_spans(text)?;
    (!jsonrpc).then(|| spans.into_iter().map(|s| s.id).collect())
}

/// An LLM or tool span of an OTLP/JSON record text, as the duplicate-id pre-pass reads it
/// ([`record_spans`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanKeys {
    /// The span's capture id, `TRACEID/SPANID`.
    pub id: String,
    /// Its natural chain key, `TRACEID/PARENTSPANID` (`docs/chains.md#natural-links`), when
    /// it has a parent (a non-empty string `parentSpanId`): the chain id the main pass
    /// links an LLM span by (a tool span's key is read too: it is only one more key).
    pub key: Option<String>,
}

/// The LLM and tool spans of the record `text` when it is a JSON object with
/// `resourceSpans` ([`span_ids`]' spans, with their chain keys; none when the main pass
/// finds the record broken), and whether the record has a `jsonrpc` member (then the shape
/// detection reads it as an MCP message, not as OTLP/JSON). `None` for any other text
/// (not JSON, not an object, no `resourceSpans`). Every span capture the main pass reads
/// from the record, as OTLP/JSON or OpenInference (its shape, or a `[[source]]` format),
/// is one of these spans, its chain key the one given here.
pub fn record_spans(text: &[u8]) -> Option<(Vec<SpanKeys>, bool)> {
    std::str::from_utf8(text).ok().and_then(ids::record_spans)
}

/// The duplicate-id pre-pass's byte scan of a common OTLP/JSON line (`otlp/quick.rs`): a
/// superset of [`record_spans`]' ids and keys, to `each` and `keys`, and `true`; `false`
/// (nothing called) for a line it is not sure of, which [`record_spans`] then reads.
pub fn quick_spans(
    text: &[u8],
    sniff: crate::core::prescan::Sniff,
    each: &mut dyn FnMut(&[u8]),
    keys: &mut dyn FnMut(&[u8]),
) -> bool {
    quick::spans(text, sniff, each, keys)
}

fn read(obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    read_spans(capture_spans(obj)?, source)
}

/// The record `text` read as the shapes read its strict parse when they find it an
/// OTLP/JSON `TracesData` (`resourceSpans`, no `jsonrpc`), without building its parse: a
/// byte scan of the common exporter line (the `scan` module), else a typed walk of its
/// spans (the `read` module), each giving the same capture, and `None` for
/// any text it leaves to the general reading (not such a record, not strict JSON, or
/// containers that are not what OTLP/JSON makes them: then the strict parse and the shape
/// give its verdict, as they always did).
pub(crate) fn read_text(text: &str, source: &RecordRef) -> Option<Result<Capture, RecordError>> {
    scan::spans(text)
        .or_else(|| read::spans(text))
        .map(|spans| read_spans(spans, source))
}

/// The capture of a record whose LLM and tool spans are `spans`.
fn read_spans(
    mut spans: Vec<(Kind, Span<'_>)>,
    source: &RecordRef,
) -> Result<Capture, RecordError> {
    let read_span = |(kind, mut span): (Kind, Span<'_>)| {
        if kind != Kind::Inference {
            // only the inference adapter reads the output messages straight from the raw text
            span.decode_messages();
        }
        match kind {
            Kind::Inference => inference(span),
            Kind::Tool => tool(span),
            Kind::OpenInferenceLlm => super::openinference::llm(span),
            Kind::OpenInferenceTool => super::openinference::tool(span),
        }
    };
    match spans.len() {
        0 => Ok(native(
            FORMAT,
            source.as_str().to_owned(),
            Payload::NotACapture,
            Map::new(),
        )),
        1 => read_span(spans.pop().expect("one span")),
        // several: each span is a capture of its own, a part of the record
        _ => Ok(native(
            FORMAT,
            source.as_str().to_owned(),
            Payload::Parts(spans.into_iter().map(read_span).collect()),
            Map::new(),
        )),
    }
}

/// A span's capture id `TRACEID/SPANID` (`docs/record-shapes.md#otlp`), `None` when its
/// `traceId` or `spanId` is not a non-empty string (such a span is read the general way).
pub(super) fn span_id(raw: &Fields<'_>) -> Option<String> {
    let hex = |key: &str| match raw.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.as_str()),
        _ => None,
    };
    let (t, s) = (hex("traceId")?, hex("spanId")?);
    let mut id = String::with_capacity(t.len() + 1 + s.len());
    id.push_str(t);
    id.push('/');
    id.push_str(s);
    Some(id)
}

/// The metadata every span capture carries: `trace_id`, `span_id`, `parent_span_id`, the
/// span `name` and `start_time`, written as the text of its `meta` (`crate::core::meta`:
/// no map is built unless a report reads it).
pub(super) fn span_meta(span: &Span<'_>) -> MetaWriter {
    let mut meta = MetaWriter::new();
    for (from, to) in [
        ("traceId", MetaKey::TraceId),
        ("spanId", MetaKey::SpanId),
        ("parentSpanId", MetaKey::ParentSpanId),
        ("name", MetaKey::SpanName),
    ] {
        if let Some(Value::String(v)) = span.raw.get(from)
            && !v.is_empty()
        {
            meta.string(to, v);
        }
    }
    // `startTimeUnixNano` (a fixed64: a string under ProtoJSON, a number from some
    // emitters) as seconds since the Unix epoch: the order of a chain of retried spans
    let nanos = match span.raw.get("startTimeUnixNano") {
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        Some(v) => v.as_u64(),
        None => None,
    };
    if let Some(n) = nanos.filter(|n| *n > 0) {
        meta.double(MetaKey::StartTime, n as f64 / 1e9);
    }
    meta
}

/// The span's status: `status.code` 2 or `STATUS_CODE_ERROR` is an error (its
/// `status.message` with it); anything else is not.
pub(super) fn status_error(span: &Span<'_>) -> Option<String> {
    let status = span.raw.get("status")?;
    let code = status.get("code")?;
    let error = match code {
        Value::Number(n) => n.as_u64() == Some(2),
        Value::String(s) => s == "STATUS_CODE_ERROR" || s == "ERROR" || s == "2",
        _ => false,
    };
    error.then(|| {
        status
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    })
}

/// Words of an error type or message that mean a transient failure: rate limits,
/// overload, timeouts, connection failures and HTTP 429 / 5xx.
const TRANSIENT_WORDS: [&str; 8] = [
    "ratelimit",
    "rate_limit",
    "timeout",
    "overloaded",
    "serviceunavailable",
    "service_unavailable",
    "internalserver",
    "apiconnection",
];

/// Whether an error's type or message names a transient failure: one of
/// [`TRANSIENT_WORDS`] (case and `_` / `-` ignored as the providers' SDKs spell them:
/// `RateLimitError`, `APITimeoutError`, `overloaded_error`), or a word that is HTTP 429 or
/// a 5xx status.
pub(super) fn transient_text(s: &str) -> bool {
    let lower: String = s
        .chars()
        .filter(|c| *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    let squashed = lower.replace('_', "");
    TRANSIENT_WORDS
        .iter()
        .any(|w| lower.contains(w) || squashed.contains(&w.replace('_', "")))
        || s.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w.parse::<u64>().is_ok_and(adapter::transient_http))
}

/// The calls of an OpenAI-shaped assistant message's `tool_calls` (`[{id, function: {name,
/// arguments}}]`, arguments as JSON text or a value), as the trace shapes store them.
pub(super) fn openai_tool_calls(calls: Option<&Value>) -> Vec<ToolCall> {
    calls
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| ToolCall {
            name: c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            id: c.get("id").and_then(Value::as_str).map(str::to_owned),
            args: adapter::args_text_or_value(c.pointer("/function/arguments")),
        })
        .collect()
}

/// The `REQUEST_ERROR` of a failed span: what failed (`what`, quoting the span's own
/// values), transient ([`transient_text`]) or not.
pub(super) fn request_failed(what: String, words: &str) -> Finding {
    adapter::failed_request(format!("{what}: the request failed"), transient_text(words))
}

/// A string attribute.
pub(super) fn attr_str<'a>(attrs: &'a Fields<'_>, key: &str) -> Option<&'a str> {
    attrs
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// An attribute that holds JSON: a structured value as it is, a string parsed as JSON.
///
/// # Errors
/// A string that is not JSON, read strictly as the parse stage reads (a repeated key is
/// not JSON here either): the problem, for the record's `INVALID_CAPTURE`.
pub(super) fn json_attr(attrs: &Fields<'_>, key: &str) -> Result<Option<Value>, String> {
    match attrs.get(key) {
        None | Some(Value::Null) => Ok(None),
        // read as every JSON is: strictly (a repeated key, `NaN`, a lone surrogate refused)
        Some(Value::String(s)) => crate::core::stage::parse::parse_strict(s)
            .map(Some)
            .map_err(|f| {
                let at = f.at.map(|a| format!(" at {a}")).unwrap_or_default();
                format!("is a string that is not JSON ({}{at})", f.message)
            }),
        Some(v) => Ok(Some(v.clone())),
    }
}

/// The finish reasons a span completes with: the conventions' `stop` and `tool_call`, and
/// the providers' own words for a normal end (OpenAI `tool_calls`, `function_call`;
/// Anthropic `end_turn`, `tool_use`, `stop_sequence`; Gemini `STOP`; Cohere `COMPLETE`,
/// `TOOL_CALL`, `STOP_SEQUENCE`).
const COMPLETE: [&str; 11] = [
    "stop",
    "tool_call",
    "tool_calls",
    "function_call",
    "end_turn",
    "tool_use",
    "stop_sequence",
    "STOP",
    "COMPLETE",
    "TOOL_CALL",
    "STOP_SEQUENCE",
];

/// The response stage of a span that did not fail: its finish reason (`place` names where
/// it was read) decides, then the proposal is the one tool call's arguments, else the
/// text. No finish reason is a normal end (the attribute is only recommended);
/// `length`-like values are `TRUNCATED_OUTPUT`, filter values `CONTENT_FILTERED`,
/// `refusal` `REFUSAL`, `error` `REQUEST_ERROR`, any other value `INCOMPLETE`.
pub(super) fn finished(
    info: &mut ResponseInfo,
    finish: Option<(&str, String)>,
    calls: &[ToolCall],
    text: Option<String>,
    text_place: &str,
) -> Result<Proposal, Finding> {
    if let Some((f, place)) = &finish {
        info.stop_reason = Some((*f).to_owned());
        let fail = |reason: Reason, why: &str| {
            Err(response_finding(
                reason,
                format!("{place} {}: {why}", quote(f)),
            ))
        };
        if adapter::is_truncation(f) {
            return fail(Reason::TRUNCATED_OUTPUT, "the output hit the token limit");
        }
        if adapter::is_filter(f) {
            return fail(
                Reason::CONTENT_FILTERED,
                "a content filter stopped the output",
            );
        }
        if *f == "refusal" {
            return fail(Reason::REFUSAL, "the model declined");
        }
        if *f == "error" {
            return fail(Reason::REQUEST_ERROR, "the request failed: not transient");
        }
        if !COMPLETE.contains(f) {
            return fail(Reason::INCOMPLETE, "not a normal finish");
        }
    }
    // the common end, a text and no call, without the words a finding would need
    if calls.is_empty() && text.as_deref().is_some_and(|t| !t.trim().is_empty()) {
        return Ok(Proposal::Text(text.unwrap_or_default()));
    }
    let said = finish.as_ref().map_or_else(
        || "no finish reason".to_owned(),
        |(f, place)| format!("{place} {}", quote(f)),
    );
    adapter::note_tool(info, calls, None);
    adapter::proposal(info, calls, text, None, &said, text_place)
}

/// The settled payload of a span whose response stage is `result`.
pub(super) fn span_payload(info: ResponseInfo, result: Result<Proposal, Finding>) -> Payload {
    Payload::Settled(Box::new(Adapted { info, result }))
}

/// An input-stage `INVALID_CAPTURE` of the span at `span.path`, attribute `key`.
pub(super) fn broken_attr(
    format: &'static str,
    span: &Span<'_>,
    key: &str,
    problem: &str,
) -> RecordError {
    broken(
        format,
        &format!("{}.attributes.{key}", span.at),
        problem,
        Some(span.id.clone()),
    )
}

/// One output message of the conventions' output-messages schema: `{role, parts[],
/// finish_reason}`; its `text` parts joined, its `tool_call` parts (`{id, name,
/// arguments}`) as calls.
#[derive(Debug, PartialEq)]
struct Message {
    text: Option<String>,
    calls: Vec<ToolCall>,
    finish: Option<String>,
}

fn message_of(m: &Value) -> Message {
    let mut text: Option<String> = None;
    let mut calls = Vec::new();
    for part in m
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(c) = part.get("content").and_then(Value::as_str) {
                    text.get_or_insert_with(String::new).push_str(c);
                }
            }
            Some("tool_call") => calls.push(ToolCall {
                name: part.get("name").and_then(Value::as_str).map(str::to_owned),
                id: part.get("id").and_then(Value::as_str).map(str::to_owned),
                args: adapter::args_text_or_value(part.get("arguments")),
            }),
            _ => {}
        }
    }
    Message {
        text,
        calls,
        finish: m
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

/// The deprecated flattened completion attributes: `gen_ai.completion.0.content`,
/// `.finish_reason` and `.tool_calls.N.{id, name, arguments}` (OpenLLMetry's
/// instrumentations write them).
fn deprecated_completion(attrs: &Fields<'_>) -> Option<Message> {
    const P: &str = "gen_ai.completion.0.";
    if !attrs.keys().any(|k| k.starts_with(P)) {
        return None;
    }
    let at = |k: &str| attrs.get(&format!("{P}{k}"));
    let mut calls = Vec::new();
    for n in 0.. {
        let name = at(&format!("tool_calls.{n}.name"));
        let args = at(&format!("tool_calls.{n}.arguments"));
        if name.is_none() && args.is_none() {
            break;
        }
        calls.push(ToolCall {
            name: name.and_then(Value::as_str).map(str::to_owned),
            id: at(&format!("tool_calls.{n}.id"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            args: adapter::args_text_or_value(args),
        });
    }
    Some(Message {
        text: at("content").and_then(Value::as_str).map(str::to_owned),
        calls,
        finish: at("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The deprecated `gen_ai.choice` span event of choice 0 (its `index` 0 or absent): its
/// `finish_reason` and its `message` (a JSON string or a map of `content` and OpenAI-shaped
/// `tool_calls[].function.{name, arguments}`).
fn choice_event(span: &Span<'_>) -> Result<Option<Message>, String> {
    let events = span.raw.get("events").and_then(Value::as_array);
    for e in events.into_iter().flatten() {
        if e.get("name").and_then(Value::as_str) != Some("gen_ai.choice") {
            continue;
        }
        let attrs = key_values(e.get("attributes"));
        if attrs.get("index").and_then(Value::as_i64).unwrap_or(0) != 0 {
            continue;
        }
        let message = json_attr(&attrs, "message")
            .map_err(|p| format!("gen_ai.choice event attribute `message` {p}"))?
            .unwrap_or(Value::Null);
        let content = message
            .get("content")
            .or_else(|| attrs.get("content"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let calls = openai_tool_calls(message.get("tool_calls"));
        return Ok(Some(Message {
            text: content,
            calls,
            finish: attrs
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }));
    }
    Ok(None)
}

/// The model, tokens and provider name of a GenAI span, into `info` and `meta`.
fn gen_ai_info(span: &Span<'_>, meta: &mut MetaWriter) -> ResponseInfo {
    let a = &span.attrs;
    let model = attr_str(a, "gen_ai.response.model")
        .or_else(|| attr_str(a, "gen_ai.request.model"))
        .map(str::to_owned);
    let count = |keys: &[&str]| keys.iter().find_map(|k| a.get(k).and_then(adapter::count));
    let tokens = TokenUsage {
        // `prompt_tokens` / `completion_tokens`: the deprecated names
        input_tokens: count(&["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"]),
        output_tokens: count(&[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
        ]),
        total_tokens: None,
    };
    // `gen_ai.system`: the deprecated name of `gen_ai.provider.name`
    if let Some(v) = attr_str(a, "gen_ai.provider.name").or_else(|| attr_str(a, "gen_ai.system")) {
        meta.string(MetaKey::GenAiProvider, v);
    }
    for (from, to) in [
        ("gen_ai.response.id", MetaKey::ResponseId),
        ("gen_ai.conversation.id", MetaKey::ConversationId),
        ("gen_ai.operation.name", MetaKey::Operation),
    ] {
        if let Some(v) = attr_str(a, from) {
            meta.string(to, v);
        }
    }
    ResponseInfo {
        provider: FORMAT.to_owned(),
        model,
        tokens: (tokens != TokenUsage::default()).then_some(tokens),
        ..ResponseInfo::default()
    }
}

/// A GenAI inference span's capture (`docs/record-shapes.md#otlp`).
fn inference(mut span: Span<'_>) -> Result<Capture, RecordError> {
    let mut meta = span_meta(&span);
    let mut info = gen_ai_info(&span, &mut meta);
    let a = &span.attrs;
    let request = match json_attr(a, "gen_ai.tool.definitions") {
        Ok(Some(defs @ Value::Array(_))) => Some(CaptureRequest {
            body: serde_json::json!({ "tools": defs }),
            base: "",
            echoed: true,
        }),
        Ok(Some(v)) => {
            return Err(broken_attr(
                FORMAT,
                &span,
                "gen_ai.tool.definitions",
                &must_be("an array", &v),
            ));
        }
        Ok(None) => None,
        Err(p) => return Err(broken_attr(FORMAT, &span, "gen_ai.tool.definitions", &p)),
    };
    let finish_reasons = match json_attr(a, "gen_ai.response.finish_reasons") {
        Ok(v) => v,
        Err(p) => {
            return Err(broken_attr(
                FORMAT,
                &span,
                "gen_ai.response.finish_reasons",
                &p,
            ));
        }
    };
    let first_reason = match &finish_reasons {
        Some(Value::Array(a)) => a.first().and_then(Value::as_str).map(str::to_owned),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let error_type = attr_str(a, "error.type").map(str::to_owned);
    let status = status_error(&span);
    let result = if status.is_some() || error_type.is_some() {
        let mut what = match &status {
            Some(m) if !m.is_empty() => format!("span status ERROR ({})", quote(m)),
            Some(_) => "span status ERROR".to_owned(),
            None => "the span".to_owned(),
        };
        if let Some(t) = &error_type {
            what.push_str(&format!(", error.type {}", quote(t)));
            info.stop_reason = Some(t.clone());
        }
        Err(request_failed(
            what,
            &format!(
                "{} {}",
                error_type.as_deref().unwrap_or_default(),
                status.as_deref().unwrap_or_default()
            ),
        ))
    } else {
        // the common case, a JSON string of an array, read without building it: straight
        // from the record's text when the scan kept it raw and it is the last of its name
        let mut first = None;
        if let Some((at, raw)) = span.messages
            && a.last_index("gen_ai.output.messages") == Some(at)
        {
            first = escaped::first_message(raw);
        }
        if first.is_none() && span.messages.is_some() {
            span.decode_messages();
        }
        let a = &span.attrs;
        let first = first.or_else(|| match a.get("gen_ai.output.messages") {
            Some(Value::String(s)) => scan::first_message(s).or_else(|| messages::first(s)),
            _ => None,
        });
        let output = match first {
            Some(_) => None,
            None => match json_attr(a, "gen_ai.output.messages") {
                Ok(v) => v,
                Err(p) => return Err(broken_attr(FORMAT, &span, "gen_ai.output.messages", &p)),
            },
        };
        let (message, place) = match (first, output) {
            (Some(first), _) => (first, "gen_ai.output.messages[0].finish_reason"),
            (None, Some(Value::Array(ms))) => (
                ms.first().map(message_of),
                "gen_ai.output.messages[0].finish_reason",
            ),
            (None, Some(v)) => {
                return Err(broken_attr(
                    FORMAT,
                    &span,
                    "gen_ai.output.messages",
                    &must_be("an array of messages", &v),
                ));
            }
            (None, None) => match deprecated_completion(a) {
                Some(m) => (Some(m), "gen_ai.completion.0.finish_reason"),
                None => match choice_event(&span) {
                    Ok(m) => (m, "gen_ai.choice event finish_reason"),
                    Err(p) => {
                        return Err(broken(
                            FORMAT,
                            &format!("{}.events", span.at),
                            &p,
                            Some(span.id.clone()),
                        ));
                    }
                },
            },
        };
        match message {
            None => {
                if let Some(f) = &first_reason {
                    info.stop_reason = Some(f.clone());
                }
                Err(response_finding(
                    Reason::NO_OUTPUT,
                    "the span has no output messages (gen_ai.output.messages, gen_ai.completion.0.*, gen_ai.choice events): content capture is opt-in in the GenAI instrumentations; nothing to validate",
                ))
            }
            Some(m) => {
                let finish = match (&m.finish, &first_reason) {
                    (Some(f), _) => Some((f.as_str(), place.to_owned())),
                    (None, Some(f)) => {
                        Some((f.as_str(), "gen_ai.response.finish_reasons[0]".to_owned()))
                    }
                    (None, None) => None,
                };
                finished(
                    &mut info,
                    finish,
                    &m.calls,
                    m.text,
                    "the output message's text",
                )
            }
        }
    };
    let mut c = native_meta(
        FORMAT,
        span.id.clone(),
        span_payload(info, result),
        meta.finish(),
    );
    c.request = request;
    Ok(c)
}

/// A GenAI `execute_tool` span's capture: the tool's result `gen_ai.tool.call.result` (a
/// JSON string parsed strictly, or a structured value) is the proposal, checked against the
/// tool's contract; a failed span is `TOOL_ERROR`.
fn tool(span: Span<'_>) -> Result<Capture, RecordError> {
    let mut meta = span_meta(&span);
    let a = &span.attrs;
    let name = attr_str(a, "gen_ai.tool.name").map(str::to_owned);
    if let Some(id) = attr_str(a, "gen_ai.tool.call.id") {
        meta.string(MetaKey::ToolCallId, id);
    }
    let mut info = ResponseInfo {
        provider: FORMAT.to_owned(),
        tool: name.clone(),
        ..ResponseInfo::default()
    };
    let result = tool_result(
        &span,
        &mut info,
        a.get("gen_ai.tool.call.result"),
        attr_str(a, "error.type"),
        "gen_ai.tool.call.result",
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

/// The response stage of a tool span: a failed span (status ERROR, or `error_type` set) is
/// `TOOL_ERROR`; no result is `NO_OUTPUT`; a string result is text to parse, any other
/// value structured.
pub(super) fn tool_result(
    span: &Span<'_>,
    info: &mut ResponseInfo,
    result: Option<&Value>,
    error_type: Option<&str>,
    place: &str,
) -> Result<Proposal, Finding> {
    let error = status_error(span);
    if error.is_some() || error_type.is_some() {
        let mut what = format!(
            "tool {} failed",
            info.tool
                .as_deref()
                .map_or_else(|| "(unnamed)".to_owned(), quote)
        );
        if let Some(m) = error.filter(|m| !m.is_empty()) {
            what.push_str(&format!(": span status ERROR ({})", quote(&m)));
        }
        if let Some(t) = error_type {
            what.push_str(&format!(", error.type {}", quote(t)));
            info.stop_reason = Some(t.to_owned());
        }
        return Err(response_finding(Reason::TOOL_ERROR, what));
    }
    match result {
        None | Some(Value::Null) => Err(response_finding(
            Reason::NO_OUTPUT,
            format!("the tool span has no {place}: nothing to validate"),
        )),
        Some(Value::String(s)) if s.trim().is_empty() => Err(response_finding(
            Reason::NO_OUTPUT,
            format!("the tool span's {place} is empty: nothing to validate"),
        )),
        Some(Value::String(s)) => Ok(Proposal::Text(s.clone())),
        Some(v) => Ok(Proposal::Structured(v.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Fields read the same below and past the linear search's limit: the last value of
    /// a name wins, before and after the map is built, and after a push or a take.
    #[test]
    fn fields_read_alike_at_every_size() {
        for n in [1, Fields::LINEAR, Fields::LINEAR + 1, 1000] {
            let mut f = Fields::default();
            for i in 0..n {
                f.push(format!("k{}", i % 7), json!(i));
            }
            let last = |k: usize| (0..n).rev().find(|i| i % 7 == k).map(|i| json!(i));
            for k in 0..7 {
                assert_eq!(f.get(&format!("k{k}")).cloned(), last(k), "{n} k{k}");
            }
            assert_eq!(f.get("absent"), None);
            f.push("k0", json!("later"));
            assert_eq!(f.get("k0"), Some(&json!("later")), "{n}");
            assert!(f.contains("k0") && !f.contains("k7"));
            assert_eq!(f.last_index("k0"), Some(n));
            assert_eq!(f.keys().count(), n + 1);
        }
    }

    #[test]
    fn any_values_decode() {
        assert_eq!(any_value(&json!({"intValue": "57"})), json!(57));
        assert_eq!(any_value(&json!({"intValue": 57})), json!(57));
        assert_eq!(any_value(&json!({"doubleValue": 0.5})), json!(0.5));
        assert_eq!(any_value(&json!({"boolValue": true})), json!(true));
        assert_eq!(
            any_value(&json!({"arrayValue": {"values": [{"stringValue": "stop"}]}})),
            json!(["stop"])
        );
        assert_eq!(
            any_value(
                &json!({"kvlistValue": {"values": [{"key": "a", "value": {"intValue": "1"}}]}})
            ),
            json!({"a": 1})
        );
        assert_eq!(any_value(&json!({})), Value::Null);
        assert_eq!(any_value(&json!({"arrayValue": {}})), json!([]));
    }

    /// The typed reading of a record text ([`read_text`]) gives what the strict parse and
    /// the shape give, on every OTLP record of `samples/traces` and on records built to trip
    /// it (each AnyValue kind, the quirks the shape reads, what the strict parse refuses
    /// in parts the typed reading only walks); the records it leaves to the general reading
    /// are those listed as such.
    #[test]
    fn the_typed_reading_is_the_general_one() {
        let source = RecordRef::new("captures/t.jsonl", Some(3));
        let general = |text: &str| {
            crate::core::stage::parse::parse_strict(text)
                .map_err(|f| crate::core::capture::record_parse_error(&f))
                .and_then(|v| crate::core::shape::read(v, &source, None))
        };
        let span = |extra: &str| {
            format!(
                r#"{{"resourceSpans": [{{"resource": {{"attributes": [{{"key": "service.name", "value": {{"stringValue": "svc"}}}}]}}, "scopeSpans": [{{"scope": {{"name": "s"}}, "spans": [{{"traceId": "t1", "spanId": "s1", "parentSpanId": "p1", "startTimeUnixNano": "1764583200000000000", "attributes": [{{"key": "gen_ai.operation.name", "value": {{"stringValue": "chat"}}}}{extra}], "status": {{"code": 1}}}}]}}]}}]}}"#
            )
        };
        let msgs = r#", {"key": "gen_ai.output.messages", "value": {"stringValue": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"{}\"}], \"finish_reason\": \"stop\"}]"}}"#;
        let mut typed: Vec<String> = vec![
            span(msgs),
            span(""),
            span(r#", {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "310"}}, {"key": "gen_ai.usage.output_tokens", "value": {"intValue": 42}}"#),
            span(r#", {"key": "gen_ai.response.finish_reasons", "value": {"arrayValue": {"values": [{"stringValue": "length"}]}}}"#),
            span(r#", {"key": "gen_ai.output.messages", "value": {"arrayValue": {"values": [{"kvlistValue": {"values": [{"key": "role", "value": {"stringValue": "assistant"}}, {"key": "content", "value": {"stringValue": "{}"}}]}}]}}}"#),
            span(r#", {"key": "gen_ai.completion.0.content", "value": {"stringValue": "{}"}}, {"key": "gen_ai.completion.0.finish_reason", "value": {"stringValue": "stop"}}"#),
            span(r#", {"key": "x", "value": {"doubleValue": 0.5, "stringValue": "both"}}, {"key": "y", "value": {}}, {"key": "z"}, {"key": 7, "value": {"stringValue": "no key"}}, "not a pair", {"key": "w", "value": {"boolValue": true}, "extra": [1, {"a": null}]}"#),
            span(r#", {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}, {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}}, {"key": "gen_ai.tool.call.result", "value": {"stringValue": "{\"ok\": true}"}}"#),
            span(r#", {"key": "plain", "value": "a plain value"}, {"key": "num", "value": 1.5}"#),
            span(msgs).replace(r#""status": {"code": 1}"#, r#""status": {"code": "STATUS_CODE_ERROR", "message": "Rate limit reached"}"#),
            span(msgs).replace(r#""status": {"code": 1}"#, r#""events": [{"name": "gen_ai.choice", "attributes": [{"key": "finish_reason", "value": {"stringValue": "stop"}}]}]"#),
            span(msgs).replace("scopeSpans", "instrumentationLibrarySpans"),
            span(msgs).replace(r#""attributes": [{"key": "gen_ai"#, r#""attributes": null, "x": [{"key": "gen_ai"#),
            span(r#", {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}}, {"key": "output.value", "value": {"stringValue": "{}"}}"#),
            r#"{"resourceSpans": null}"#.into(),
            r#"{"resourceSpans": [], "other": {"a": [1, 2.5, "\u00e9"]}}"#.into(),
            r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "http", "attributes": [{"key": "http.method", "value": {"stringValue": "GET"}}]}]}]}]}"#.into(),
        ];
        // two spans: a record of two parts
        typed.push(span(msgs).replace(r#"}]}]}]}"#, &format!(r#"}}, {}]}}]}}]}}"#, r#"{"traceId": "t1", "spanId": "s2", "attributes": {"gen_ai.operation.name": {"stringValue": "chat"}}}"#)));
        for t in &typed {
            let got =
                read_text(t, &source).unwrap_or_else(|| panic!("left to the general reading: {t}"));
            assert_eq!(got, general(t), "{t}");
        }
        // refused by the strict parse (anywhere), or not what OTLP/JSON makes it: the
        // general reading gives the verdict
        let general_only: Vec<String> = vec![
            span(msgs).replace(r#""name": "s""#, r#""name": "s", "name": "t""#),
            span(msgs).replace(r#""svc""#, r#""\ud800""#),
            span(msgs).replace(r#""name": "s""#, r#""n": 1e400"#),
            span(msgs).replace(r#""name": "s""#, r#""n": 12345678901234567890123.5"#),
            span(msgs).replace(
                r#""name": "s""#,
                &format!(r#""n": {}{}"#, "[".repeat(130), "]".repeat(130)),
            ),
            span(msgs).replace(r#""spanId": "s1""#, r#""spanId": "s1", "spanId": "s2""#),
            span(msgs).replace(
                r#"{"stringValue": "chat"}"#,
                r#"{"stringValue": "chat", "stringValue": "x"}"#,
            ),
            span(msgs).replace(r#""spanId": "s1""#, r#""spanId": """#),
            span(msgs).replace(r#""traceId": "t1", "#, ""),
            span(msgs) + " x",
            span(msgs)
                .replace(r#""scopeSpans": ["#, r#""scopeSpans": {"a": ["#)
                .replace(r#"}]}]}"#, r#"}]}]}}"#),
            r#"{"resourceSpans": 3}"#.into(),
            r#"{"resourceSpans": [3]}"#.into(),
            r#"{"resourceSpans": [{"scopeSpans": [{"spans": ["x"]}]}]}"#.into(),
            r#"{"jsonrpc": "2.0", "resourceSpans": []}"#.into(),
            r#"{"id": "x", "output": "{}"}"#.into(),
            "[1]".into(),
            "{".into(),
        ];
        for t in &general_only {
            assert!(read_text(t, &source).is_none(), "read typed: {t}");
        }
        // every OTLP record of the samples, as they are
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces");
        let mut seen = 0;
        for sub in ["otel", "openinference", "retries", "joins"] {
            let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                continue;
            };
            for e in entries.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                // a `.json` file is one record, a log one per line
                let records: Vec<&str> = if e.path().extension().is_some_and(|x| x == "json") {
                    vec![text.as_str()]
                } else {
                    text.lines().collect()
                };
                for line in records.into_iter().filter(|l| l.contains("resourceSpans")) {
                    if let Some(got) = read_text(line, &source) {
                        assert_eq!(got, general(line), "{line}");
                        seen += 1;
                    }
                }
            }
        }
        assert!(seen >= 10, "{seen} sample records");
    }

    #[test]
    fn transient_words() {
        for t in [
            "RateLimitError",
            "APITimeoutError",
            "overloaded_error",
            "503",
            "HTTP 429",
        ] {
            assert!(transient_text(t), "{t}");
        }
        for t in ["BadRequestError", "invalid_request_error", "400", ""] {
            assert!(!transient_text(t), "{t}");
        }
    }
}
