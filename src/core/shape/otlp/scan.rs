//! The main pass's first reading of an OTLP/JSON record text (`docs/record-shapes.md#traces`):
//! a byte scan of the common exporter line that builds each span as the typed walk
//! ([`super::read`]) builds it, about four times faster than serde_json's visitors on
//! these `{key, value: {stringValue}}`-dense texts.
//!
//! It reads only what it can read exactly as the strict parse reads it, and gives the text
//! to the typed walk (`None`) at the first thing it is not sure of:
//! - any escape `\u` (a lone surrogate, an escaped member name) and any raw control
//!   character in a string;
//! - any number that is not an integer of at most 18 digits (a double, which the strict
//!   parse checks is held exactly; `-0`, which serde_json reads as a double);
//! - an object with more than [`MAX_KEYS`](super::cursor::MAX_KEYS) members, nesting deeper than [`MAX_DEPTH`], a
//!   member name with an escape;
//! - anything the typed walk leaves to the general reading (no `resourceSpans`, a
//!   `jsonrpc` member, containers that are not what OTLP/JSON makes them, an LLM span
//!   without its ids) or reads in a rarer way (attributes given as an object, a
//!   `KeyValue` that is not `{key, value}`).
//!
//! Everything else is checked as strict JSON is (RFC 8259: the grammar, white space,
//! escapes; a repeated member name in any object refused), so on every text it reads the
//! two readings agree, which a test checks on every sample and on mutated lines.

use super::cursor::{Cursor, Scanned, Unsure};
use super::{Fields, Kind, Message, Span, SpanAt, any_value_owned, kind};
use crate::core::json_string::to_special;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The deepest nesting the scan reads (serde_json's limit is 128).
const MAX_DEPTH: u32 = 64;

/// The LLM and tool spans of the record `text`, as [`super::read::spans`] gives them;
/// `None` when the scan leaves the text to it (see the module doc).
pub(super) fn spans(text: &str) -> Option<Vec<(Kind, Span<'_>)>> {
    let mut s = Scan {
        t: text,
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let out = s.top().ok()?;
    s.ws();
    (s.i == s.b.len()).then_some(out)
}

/// The first message of the JSON array `text` (the text of a `gen_ai.output.messages`
/// string) as [`super::message_of`] reads it, `None` inside when the array is empty, as
/// [`super::messages::first`] gives it; `None` when the scan leaves the text to that walk
/// (see the module doc: the same rules).
pub(super) fn first_message(text: &str) -> Option<Option<Message>> {
    let mut s = Scan {
        t: text,
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let out = s.first_message().ok()?;
    s.ws();
    (s.i == s.b.len()).then_some(out)
}

/// The string the body `raw` of a string token the scan checked stands for.
pub(super) fn decode_token(raw: &str) -> String {
    Str { raw, escaped: true }.decode().into_owned()
}

/// A string token: its text between the quotes, and whether that has an escape (one of
/// `\" \\ \/ \b \f \n \r \t`: the scan reads no `\u`).
#[derive(Clone, Copy)]
struct Str<'a> {
    raw: &'a str,
    escaped: bool,
}

impl<'a> Str<'a> {
    /// The string the token stands for.
    fn decode(self) -> Cow<'a, str> {
        if !self.escaped {
            return Cow::Borrowed(self.raw);
        }
        let (t, b) = (self.raw, self.raw.as_bytes());
        let mut out = String::with_capacity(b.len());
        let mut i = 0;
        while let Some(n) = memchr::memchr(b'\\', &b[i..]) {
            // the runs between escapes end at ASCII bytes: char boundaries
            out.push_str(&t[i..i + n]);
            out.push(escaped(b[i + n + 1]).unwrap_or('\u{fffd}'));
            i += n + 2;
        }
        out.push_str(&t[i..]);
        Cow::Owned(out)
    }
}

/// The character the two-character escape `\c` stands for; `None` for `\u` and for what
/// is no escape.
#[inline]
fn escaped(c: u8) -> Option<char> {
    Some(match c {
        b'"' | b'\\' | b'/' => char::from(c),
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// What a list holds.
#[derive(Clone, Copy)]
enum Of {
    Resources,
    Scopes,
    Spans,
}

struct Scan<'a> {
    t: &'a str,
    b: &'a [u8],
    i: usize,
    depth: u32,
}

impl<'a> Scan<'a> {
    /// Skips JSON white space.
    #[inline]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.i += 1;
        }
    }

    /// A string token at the cursor, checked.
    #[inline]
    fn string(&mut self) -> Scanned<Str<'a>> {
        if self.peek()? != b'"' {
            return Err(Unsure);
        }
        let start = self.i + 1;
        let mut j = start;
        let mut escapes = false;
        loop {
            j = to_special(self.b, j);
            match self.b.get(j) {
                Some(b'"') => break,
                Some(b'\\') if self.b.get(j + 1).and_then(|&c| escaped(c)).is_some() => {
                    escapes = true;
                    j += 2;
                }
                _ => return Err(Unsure),
            }
        }
        self.i = j + 1;
        Ok(Str {
            raw: &self.t[start..j],
            escaped: escapes,
        })
    }

    /// The string a string token at the cursor stands for: borrowed from the text when it
    /// has no escape, else decoded as it is scanned.
    #[inline]
    fn text(&mut self) -> Scanned<Cow<'a, str>> {
        if self.peek()? != b'"' {
            return Err(Unsure);
        }
        let start = self.i + 1;
        let (mut j, mut run) = (start, start);
        let mut out: Option<String> = None;
        loop {
            j = to_special(self.b, j);
            match self.b.get(j) {
                Some(b'"') => break,
                Some(b'\\') => {
                    let c = self.b.get(j + 1).and_then(|&c| escaped(c)).ok_or(Unsure)?;
                    let o = out.get_or_insert_with(|| {
                        String::with_capacity((self.b.len() - start).min(1024))
                    });
                    // the runs between escapes end at ASCII bytes: char boundaries
                    o.push_str(&self.t[run..j]);
                    o.push(c);
                    j += 2;
                    run = j;
                }
                _ => return Err(Unsure),
            }
        }
        self.i = j + 1;
        Ok(match out {
            None => Cow::Borrowed(&self.t[start..j]),
            Some(mut o) => {
                o.push_str(&self.t[run..j]);
                Cow::Owned(o)
            }
        })
    }

    /// The record: an object with `resourceSpans` and no `jsonrpc`.
    fn top(&mut self) -> Scanned<Vec<(Kind, Span<'a>)>> {
        let mut out = None;
        self.object(|s, k| match k {
            "jsonrpc" => Err(Unsure),
            "resourceSpans" => {
                out = Some(s.list(SpanAt::default(), Of::Resources)?);
                Ok(())
            }
            _ => s.skip(),
        })?;
        out.ok_or(Unsure)
    }

    /// A list of resources, scopes or spans at `at`: `null` is empty, an array gives its
    /// elements' spans in order.
    fn list(&mut self, at: SpanAt, of: Of) -> Scanned<Vec<(Kind, Span<'a>)>> {
        let mut out = Vec::new();
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Ok(out);
        }
        self.array(|s, k| {
            let mut at = at;
            match of {
                Of::Resources => {
                    at.resource = k;
                    out.extend(s.resource(at)?);
                }
                Of::Scopes => {
                    at.scope = k;
                    out.extend(s.scope(at)?);
                }
                Of::Spans => {
                    at.span = k;
                    out.extend(s.span(at)?);
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// A `resourceSpans` element: its `scopeSpans`, else its `instrumentationLibrarySpans`.
    fn resource(&mut self, at: SpanAt) -> Scanned<Vec<(Kind, Span<'a>)>> {
        let (mut scope, mut library) = (None, None);
        self.object(|s, k| {
            match k {
                "scopeSpans" => {
                    let at = SpanAt {
                        library: false,
                        ..at
                    };
                    scope = Some(s.list(at, Of::Scopes)?);
                }
                "instrumentationLibrarySpans" => {
                    let at = SpanAt {
                        library: true,
                        ..at
                    };
                    library = Some(s.list(at, Of::Scopes)?);
                }
                _ => s.skip()?,
            }
            Ok(())
        })?;
        Ok(scope.or(library).unwrap_or_default())
    }

    /// A `scopeSpans` element: its `spans`.
    fn scope(&mut self, at: SpanAt) -> Scanned<Vec<(Kind, Span<'a>)>> {
        let mut spans = None;
        self.object(|s, k| {
            if k == "spans" {
                spans = Some(s.list(at, Of::Spans)?);
                Ok(())
            } else {
                s.skip()
            }
        })?;
        Ok(spans.unwrap_or_default())
    }

    /// A span: `Some` when it is an LLM or tool span with a non-empty string `traceId`
    /// and `spanId`, `None` for any other span.
    fn span(&mut self, at: SpanAt) -> Scanned<Option<(Kind, Span<'a>)>> {
        let mut raw = Fields::with_capacity(8);
        let mut attrs = None;
        let mut messages = None;
        self.object(|s, k| {
            if k == "attributes" {
                messages = None;
                attrs = Some(s.attributes(&mut messages)?);
            } else if super::SPAN_MEMBERS.contains(&k) {
                raw.push(k, s.value()?);
            } else {
                s.skip()?;
            }
            Ok(())
        })?;
        let attrs = attrs.unwrap_or_default();
        let Some(kind) = kind(&attrs) else {
            return Ok(None);
        };
        let Some(id) = super::span_id(&raw) else {
            return Err(Unsure);
        };
        Ok(Some((
            kind,
            Span {
                at,
                id,
                raw,
                attrs,
                messages,
            },
        )))
    }

    /// A span's `attributes`: `null` none, an array of `{key, value}` objects (a string
    /// `key`, a `value` or none) decoded; any other form is the typed walk's.
    fn attributes(&mut self, messages: &mut Option<(usize, &'a str)>) -> Scanned<Fields<'a>> {
        let mut out = Fields::with_capacity(16);
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Ok(out);
        }
        self.array(|s, _| {
            if let Some((k, raw)) = s.raw_messages()? {
                if let Some((at, earlier)) = messages.take() {
                    out.set(at, Value::String(decode_token(earlier)));
                }
                *messages = Some((out.len(), raw));
                out.push(k, Value::Null);
                return Ok(());
            }
            if let Some((k, v)) = s.key_value()? {
                out.push(k, v);
                return Ok(());
            }
            let (mut key, mut value) = (None, None);
            s.object(|s, k| {
                match k {
                    "key" => key = Some(s.text()?),
                    "value" => value = Some(s.any_value()?),
                    _ => return Err(Unsure),
                }
                Ok(())
            })?;
            out.push(key.ok_or(Unsure)?, value.unwrap_or(Value::Null));
            Ok(())
        })?;
        Ok(out)
    }

    /// The GenAI instrumentations' `{"key":"gen_ai.output.messages","value":{"stringValue":
    /// "..."}}` at the cursor: `Some` with the key and the string token's raw body (checked,
    /// not decoded); `None`, the cursor left where it was, for any other form.
    #[inline]
    fn raw_messages(&mut self) -> Scanned<Option<(&'a str, &'a str)>> {
        const HEAD: &[u8] = b"{\"key\":\"gen_ai.output.messages\",\"value\":{\"stringValue\":\"";
        if !self.b[self.i..].starts_with(HEAD) {
            return Ok(None);
        }
        let start = self.i;
        self.i += HEAD.len() - 1;
        self.enter()?;
        self.enter()?;
        let token = self.string()?;
        if self.b[self.i..].starts_with(b"}}") {
            self.i += 2;
            self.depth -= 2;
            return Ok(Some(("gen_ai.output.messages", token.raw)));
        }
        self.depth -= 2;
        self.i = start;
        Ok(None)
    }

    /// The exporters' `{"key":"K","value":V}` (no white space, in that order) at the cursor:
    /// `Some` with the key and the decoded value, read as [`Scan::object`] would read it;
    /// `None`, the cursor left where it was, for any other form.
    #[inline]
    fn key_value(&mut self) -> Scanned<Option<(Cow<'a, str>, Value)>> {
        const KEY: &[u8] = b"{\"key\":";
        const VALUE: &[u8] = b",\"value\":";
        let start = self.i;
        if !self.b[start..].starts_with(KEY) {
            return Ok(None);
        }
        self.i += KEY.len();
        self.enter()?;
        let key = self.text()?;
        if !self.b[self.i..].starts_with(VALUE) {
            self.depth -= 1;
            self.i = start;
            return Ok(None);
        }
        self.i += VALUE.len();
        let value = self.any_value()?;
        if self.peek()? != b'}' {
            return Err(Unsure);
        }
        self.i += 1;
        self.depth -= 1;
        Ok(Some((key, value)))
    }

    /// The exporters' `{"arrayValue":{"values":[...]}}` and `{"intValue":"N"}` at the cursor,
    /// decoded as [`Scan::any_value`] decodes them when read member by member; `None`, the
    /// cursor left where it was, for any other form.
    fn list_or_int(&mut self) -> Scanned<Option<Value>> {
        const ARRAY: &[u8] = b"{\"arrayValue\":{\"values\":";
        const INT: &[u8] = b"{\"intValue\":";
        let (start, depth) = (self.i, self.depth);
        let rest = &self.b[start..];
        let got = if rest.starts_with(ARRAY) && rest.get(ARRAY.len()) == Some(&b'[') {
            self.i += ARRAY.len();
            self.enter()?;
            self.enter()?;
            let mut items = Vec::new();
            let read = self.array(|s, _| {
                items.push(s.any_value()?);
                Ok(())
            });
            (read.is_ok() && self.b[self.i..].starts_with(b"}}")).then(|| {
                self.i += 2;
                Value::Array(items)
            })
        } else if rest.starts_with(INT) && rest.get(INT.len()) == Some(&b'"') {
            self.i += INT.len();
            self.enter()?;
            let n = self.text()?;
            (self.b.get(self.i) == Some(&b'}')).then(|| {
                self.i += 1;
                match n.trim().parse::<i64>() {
                    Ok(n) => Value::from(n),
                    Err(_) => Value::String(n.into_owned()),
                }
            })
        } else {
            None
        };
        self.depth = depth;
        if got.is_none() {
            self.i = start;
        }
        Ok(got)
    }

    /// An AnyValue, decoded as [`super::any_value_owned`] decodes it: `{"stringValue":
    /// "..."}` its string at once, any other object built and decoded, any other value as
    /// it is.
    fn any_value(&mut self) -> Scanned<Value> {
        const STRING: &[u8] = b"{\"stringValue\":";
        if self.peek()? != b'{' {
            return self.value();
        }
        if self.b[self.i..].starts_with(STRING) && self.b.get(self.i + STRING.len()) == Some(&b'"')
        {
            // `{"stringValue":"..."}`: its string, when the object ends there
            let start = self.i;
            self.i += STRING.len();
            self.enter()?;
            let v = self.text()?;
            if self.peek()? == b'}' {
                self.i += 1;
                self.depth -= 1;
                return Ok(Value::String(v.into_owned()));
            }
            self.depth -= 1;
            self.i = start;
        }
        if let Some(v) = self.list_or_int()? {
            return Ok(v);
        }
        let mut one: Option<(&'a str, Value)> = None;
        let mut more: Option<Map<String, Value>> = None;
        self.object(|s, k| {
            let v = s.value()?;
            match (&mut more, one.take()) {
                (Some(m), _) => {
                    m.insert(k.to_owned(), v);
                }
                (None, None) => one = Some((k, v)),
                (None, Some((k0, v0))) => {
                    let mut m = Map::new();
                    m.insert(k0.to_owned(), v0);
                    m.insert(k.to_owned(), v);
                    more = Some(m);
                }
            }
            Ok(())
        })?;
        Ok(match (more, one) {
            (Some(m), _) => any_value_owned(Value::Object(m)),
            (None, Some(("stringValue", v))) => v,
            // ProtoJSON's int64 as a numeric string
            (None, Some(("intValue", Value::String(n)))) => match n.trim().parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(n),
            },
            (None, Some((k, v))) => {
                let mut m = Map::new();
                m.insert(k.to_owned(), v);
                any_value_owned(Value::Object(m))
            }
            (None, None) => Value::Null,
        })
    }
}

impl<'a> Cursor<'a> for Scan<'a> {
    /// The next byte that is not white space (the cursor put on it).
    #[inline]
    fn peek(&mut self) -> Scanned<u8> {
        self.ws();
        self.b.get(self.i).copied().ok_or(Unsure)
    }
    #[inline]
    fn eat(&mut self, c: u8) -> Scanned<()> {
        if self.peek()? != c {
            return Err(Unsure);
        }
        self.i += 1;
        Ok(())
    }

    #[inline]
    fn enter(&mut self) -> Scanned<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unsure);
        }
        Ok(())
    }

    #[inline]
    fn leave(&mut self) {
        self.depth -= 1;
    }

    #[inline]
    fn name(&mut self) -> Scanned<&'a str> {
        let k = self.string()?;
        if k.escaped {
            return Err(Unsure);
        }
        Ok(k.raw)
    }

    fn owned_text(&mut self) -> Scanned<String> {
        self.text().map(Cow::into_owned)
    }

    fn skip_text(&mut self) -> Scanned<()> {
        self.string().map(|_| ())
    }

    fn position(&mut self) -> (&'a str, &mut usize) {
        (self.t, &mut self.i)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{read, read_spans};
    use crate::core::record_ref::RecordRef;

    /// Every OTLP record of `samples/traces` (each line of a log, each `.json` file whole).
    fn sample_records() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces");
        let mut out = Vec::new();
        for sub in ["otel", "openinference", "retries", "joins"] {
            let mut entries: Vec<_> = std::fs::read_dir(dir.join(sub))
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            entries.sort();
            for p in entries {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                if p.extension().is_some_and(|x| x == "json") {
                    out.push(text);
                } else {
                    out.extend(text.lines().map(str::to_owned));
                }
            }
        }
        out.retain(|r| r.contains("resourceSpans"));
        out
    }

    /// Whether the scan reads `text`; when it does, its capture is the typed walk's.
    fn agrees(text: &str) -> bool {
        let source = RecordRef::new("captures/t.jsonl", Some(3));
        let Some(scanned) = super::spans(text) else {
            return false;
        };
        let walked = read::spans(text).map(|s| read_spans(s, &source));
        assert_eq!(Some(read_spans(scanned, &source)), walked, "{text}");
        true
    }

    /// The scan reads every sample record (none holds a `\u` escape or a double), giving
    /// the typed walk's capture.
    #[test]
    fn the_scan_is_the_typed_walk_on_the_samples() {
        let records = sample_records();
        assert_eq!(records.len(), 18);
        for r in &records {
            assert!(agrees(r), "left to the walk: {r}");
        }
    }

    /// The scan's first output message is the typed walk's (`messages.rs`) on every text it
    /// reads: texts built to trip it, and a typical text with a byte deleted or a
    /// character put in at every place.
    #[test]
    fn the_first_message_is_the_walks() {
        let typical = r#"[{"role":"assistant","parts":[{"type":"text","content":"{\"a\":1,\"b\":[true,null]}"},{"type":"tool_call","id":"c1","name":"refund","arguments":{"amount":12}}],"finish_reason":"stop"},{"role":"x"}]"#;
        let texts = [
            typical,
            "[]",
            r#"[{"parts":[{"type":"text","content":"ab"},{"type":"text","content":"cd"},{"type":"text","content":7},{"type":"text"}]}]"#,
            r#"[{"parts":[{"type":"tool_call","name":7,"arguments":"{\"x\":1}"},{"type":"tool_call","arguments":null}]}]"#,
            r#"[{"parts":[{"type":"reasoning","content":"hm"},"text",7,null,[1,{"a":2}],{"content":"no type"}]}]"#,
            r#"[{"parts":{"type":"text","content":"not a list"},"finish_reason":["stop"]}]"#,
            r#"["a string", {"parts":[{"type":"text","content":"second"}]}]"#,
            r#"[7]"#,
            r#"[null]"#,
            r#"[{"finish_reason":"length"},{"x":1}]"#,
        ];
        let mut read = 0;
        for t in texts {
            let scanned = super::first_message(t);
            assert!(scanned.is_some(), "left to the walk: {t}");
            assert_eq!(scanned, super::super::messages::first(t), "{t}");
        }
        for t in [
            r#"{"parts":[]}"#,
            r#"[{"parts":[],"parts":[]}]"#,
            r#"[0.5]"#,
            r#"["\u00e9"]"#,
        ] {
            assert_eq!(super::first_message(t), None, "{t}");
        }
        let bounds: Vec<usize> = (0..=typical.len()).collect();
        for &i in &bounds[..typical.len()] {
            let mut mutated = vec![format!("{}{}", &typical[..i], &typical[i + 1..])];
            for c in ["\"", "{", "}", "[", "]", ",", ":", "\\", "0", "a", " "] {
                mutated.push(format!("{}{c}{}", &typical[..i], &typical[i..]));
            }
            for t in &mutated {
                if let Some(m) = super::first_message(t) {
                    assert_eq!(Some(m), super::super::messages::first(t), "{t}");
                    read += 1;
                }
            }
        }
        assert!(read > 500, "{read} mutated texts read");
    }

    /// The eight-bytes-a-step search finds what a byte-by-byte one finds, at every offset
    /// and alignment.
    /// Records built to trip the scan: it reads each one the typed walk reads alike, and
    /// leaves to the walk each one it must.
    #[test]
    fn the_scan_reads_what_it_is_sure_of() {
        let span = |extra: &str, members: &str| {
            format!(
                r#"{{"resourceSpans": [{{"resource": {{"attributes": [{{"key": "service.name", "value": {{"stringValue": "svc"}}}}]}}, "scopeSpans": [{{"scope": {{"name": "s"}}, "spans": [{{"traceId": "t1", "spanId": "s1", "parentSpanId": "p1", "kind": 3, "startTimeUnixNano": "1764583200000000000", "attributes": [{{"key": "gen_ai.operation.name", "value": {{"stringValue": "chat"}}}}{extra}], "status": {{"code": 1}}{members}}}]}}]}}]}}"#
            )
        };
        let msgs = r#", {"key": "gen_ai.output.messages", "value": {"stringValue": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"{\\\"a\\\": \\\"x\\/y\\n\\\"}\"}], \"finish_reason\": \"stop\"}]"}}"#;
        let sure = [
            span(msgs, ""),
            span("", ""),
            span(r#", {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "310"}}, {"key": "gen_ai.usage.output_tokens", "value": {"intValue": -42}}"#, ""),
            span(r#", {"key": "gen_ai.response.finish_reasons", "value": {"arrayValue": {"values": [{"stringValue": "length"}]}}}"#, ""),
            span(r#", {"key": "x", "value": {"boolValue": true, "stringValue": "both"}}, {"key": "y", "value": {}}, {"key": "z"}, {"key": "p", "value": "plain"}, {"key": "n", "value": null}"#, ""),
            span(msgs, r#", "events": [{"name": "gen_ai.choice", "attributes": [{"key": "finish_reason", "value": {"stringValue": "stop"}}]}], "links": [], "droppedAttributesCount": 0"#),
            span(msgs, "").replace("scopeSpans", "instrumentationLibrarySpans"),
            format!(" \n{}\r\n", span(msgs, ""))
                .replace(r#""spans": [{"#, "\"spans\" :\r\n [ {\t")
                .replace(r#""code": 1}"#, "\"code\":1 }\n"),
            span(r#", {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}, {"key": "gen_ai.tool.call.result", "value": {"stringValue": "{\"ok\": true}"}}"#, ""),
            r#"{"resourceSpans": null}"#.into(),
            r#"{"resourceSpans": [], "other": {"a": [1, -2, "x", true, false, null, {}, []]}}"#.into(),
            r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "http", "attributes": [{"key": "http.method", "value": {"stringValue": "GET"}}]}]}]}]}"#.into(),
        ];
        for t in &sure {
            assert!(agrees(t), "left to the walk: {t}");
        }
        let unsure = [
            span(msgs, "").replace("\"svc\"", "\"\\u0073vc\""),
            span(msgs, r#", "x": 0.5"#),
            span(msgs, r#", "x": 1e3"#),
            span(msgs, r#", "x": -0"#),
            span(msgs, r#", "x": 1234567890123456789"#),
            span(msgs, r#", "x": 01"#),
            span(msgs, r#", "kind": 4"#),
            span(msgs, r#", "x": "tab	in a string""#),
            span(msgs, r#", "x": "\x""#),
            span(msgs, r#", "x": tru"#),
            span(msgs, r#", "x": [1,]"#),
            span(msgs, r#", "x": {"a": 1,}"#),
            span(msgs, "").replacen('{', r#"{"jsonrpc": "2.0", "#, 1),
            span(r#", {"key": 7, "value": {"stringValue": "no key"}}"#, ""),
            span(r#", "not a pair""#, ""),
            span(
                r#", {"key": "w", "value": {"boolValue": true}, "extra": 1}"#,
                "",
            ),
            span(
                r#", {"key": "w", "value": {"stringValue": "a", "stringValue": "b"}}"#,
                "",
            ),
            span(msgs, "").replace(r#""attributes": ["#, r#""attributes": {"a": 1}, "x": ["#),
            span(msgs, "").replace(r#""spanId": "s1""#, r#""spanId": """#),
            format!("{}{}", span(msgs, ""), " x"),
            format!("{}{}", "[".repeat(70), "]".repeat(70)),
            r#"{"other": 1}"#.into(),
            r#"{"resourceSpans": {}}"#.into(),
            r#"{"resourceSpans": [7]}"#.into(),
            String::new(),
        ];
        for t in &unsure {
            assert!(!agrees(t), "read: {t}");
        }
    }

    /// On every sample record with a byte deleted or a character put in, here and there,
    /// the scan either leaves the text to the typed walk or gives the walk's capture.
    #[test]
    fn mutated_records_read_alike() {
        let mut read = 0;
        for r in sample_records() {
            let bounds: Vec<usize> = (0..r.len()).filter(|&i| r.is_char_boundary(i)).collect();
            for (n, &i) in bounds.iter().enumerate().step_by(11) {
                let next = bounds.get(n + 1).copied().unwrap_or(r.len());
                let mut texts = vec![format!("{}{}", &r[..i], &r[next..])];
                for c in [
                    "\"", "{", "}", "[", "]", ",", ":", "\\", "0", "-", "a", " ", "\u{1}",
                ] {
                    texts.push(format!("{}{c}{}", &r[..i], &r[i..]));
                }
                for t in &texts {
                    read += usize::from(agrees(t));
                }
            }
        }
        assert!(read > 10_000, "{read} mutated records read");
    }
}
