//! A capture's free-form `meta` object (`docs/capture-record.md#meta`), read lazily.
//!
//! Nothing in the pipeline's stages reads `meta` (rules never see it), and most reports
//! never print it (`check` in its human or quiet form), yet building it as a map of
//! [`Value`]s was a tenth of the cost of reading a capture record, and dropping it again
//! after the verdict another share. A capture record's `meta` is therefore checked as
//! strictly as the rest of the record when the record is read (strict JSON, no repeated
//! member name, its depth, numbers held exactly: `crate::core::stage::parse`) and kept
//! as its JSON text; the map is built from that text the first time it is read
//! ([`Meta`] dereferences to it), exactly as the record's parse would have built it.

use crate::core::json_string::to_special;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// A `meta` object: a map of JSON values, held as its checked JSON text until it is first
/// read. It dereferences to the map ([`Map`]`<String, Value>`), building it then; equality,
/// `Debug`, serialization and deserialization are the map's.
#[derive(Clone, Default)]
pub struct Meta {
    /// The object's JSON text, already checked strict (a capture record's `meta` as read)
    /// or written here ([`MetaWriter`], [`Meta::insert_absent`]); `None` once the map is
    /// built or when it was given as a map.
    text: Option<String>,
    /// Where the members of a text [`MetaWriter`] wrote lie in it, by name.
    places: Places,
    /// The map, built on first read.
    map: OnceLock<Map<String, Value>>,
}

/// Declares [`MetaKey`]: each name once, with its member text `"name":`.
macro_rules! meta_keys {
    ($($key:ident = $name:literal,)*) => {
        /// A member name a [`MetaWriter`] writes (a span's `meta`,
        /// `docs/record-shapes.md#traces`) or the pipeline adds (`model`, `usage`:
        /// `docs/capture-record.md#meta`). A text written of these alone is indexed
        /// ([`Places`]): a member is found, or known absent, without reading the text.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum MetaKey {
            $(#[doc = concat!("`", $name, "`")] $key,)*
        }

        impl MetaKey {
            /// Every key, in the enum's order.
            const ALL: &[MetaKey] = &[$(MetaKey::$key,)*];

            /// The member's name.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $(MetaKey::$key => $name,)*
                }
            }

            /// `"name":`, as a member is written.
            const fn member(self) -> &'static str {
                match self {
                    $(MetaKey::$key => concat!("\"", $name, "\":"),)*
                }
            }
        }
    };
}

meta_keys! {
    TraceId = "trace_id",
    SpanId = "span_id",
    ParentSpanId = "parent_span_id",
    SpanName = "span_name",
    StartTime = "start_time",
    GenAiProvider = "gen_ai_provider",
    ResponseId = "response_id",
    ConversationId = "conversation_id",
    Operation = "operation",
    ToolCallId = "tool_call_id",
    SessionId = "session_id",
    Model = "model",
    Usage = "usage",
}

impl MetaKey {
    /// The key named `name`, if it is one.
    fn of(name: &str) -> Option<MetaKey> {
        MetaKey::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// Where each [`MetaKey`] member's value lies in a text [`MetaWriter`] wrote (`0..0`: no
/// such member; the text holds no other member), or not indexed (`indexed` false: a
/// record's own `meta`, or a text past 64 KiB).
#[derive(Clone, Copy, Default)]
struct Places {
    /// Whether `at` indexes the text.
    indexed: bool,
    /// The byte range of each key's value, by its place in [`MetaKey::ALL`].
    at: [(u16, u16); MetaKey::ALL.len()],
}

impl Places {
    /// An index of a text with no member yet.
    fn empty() -> Places {
        Places {
            indexed: true,
            ..Places::default()
        }
    }

    /// What the index says of `key`: `Some(None)` no such member, `Some(Some(range))` its
    /// value's bytes, `None` not known from the index.
    fn find(&self, key: &str) -> Option<Option<std::ops::Range<usize>>> {
        if !self.indexed {
            return None;
        }
        Some(MetaKey::of(key).and_then(|k| {
            let (start, end) = self.at[k as usize];
            (end > 0).then_some(start as usize..end as usize)
        }))
    }

    /// Notes that the member `key`'s value lies at `range` (the index is dropped when it
    /// cannot say so: past 64 KiB).
    fn note(&mut self, key: MetaKey, range: std::ops::Range<usize>) {
        match (u16::try_from(range.start), u16::try_from(range.end)) {
            (Ok(start), Ok(end)) => self.at[key as usize] = (start, end),
            _ => self.indexed = false,
        }
    }
}

impl Meta {
    /// A `meta` object held as its JSON `text`, which must be one JSON object that the
    /// record's strict parse accepts (checked by the caller): the map built from it later
    /// cannot fail. A text that is not one (a broken caller) builds an empty map.
    pub(crate) fn from_checked_text(text: &str) -> Meta {
        Meta {
            text: Some(text.into()),
            places: Places::default(),
            map: OnceLock::new(),
        }
    }

    /// The text while the map is not built.
    fn text(&self) -> Option<&str> {
        match self.map.get() {
            None => self.text.as_deref(),
            Some(_) => None,
        }
    }

    /// The JSON text of the member `key`'s value while the map is not built:
    /// `Found::Absent` when there is no such member, `Found::Unsure` when the text cannot
    /// say (then the map answers).
    fn token(&self, key: &str) -> Found<'_> {
        let Some(text) = self.text() else {
            return Found::Unsure;
        };
        match self.places.find(key) {
            Some(None) => Found::Absent,
            Some(Some(range)) => Found::Token(&text[range]),
            None => member(text, key),
        }
    }

    /// [`Meta::token`] of a known member (found in the index without comparing names).
    fn known_token(&self, key: MetaKey) -> Found<'_> {
        let Some(text) = self.text() else {
            return Found::Unsure;
        };
        if !self.places.indexed {
            return member(text, key.name());
        }
        match self.places.at[key as usize] {
            (_, 0) => Found::Absent,
            (start, end) => Found::Token(&text[start as usize..end as usize]),
        }
    }

    /// The member `key` when it is a string, as [`Meta::get`] then [`Value::as_str`]; a
    /// `meta` held as text answers from the text without building the map when it can (its
    /// string without an escape).
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.str_of(key, self.token(key))
    }

    /// [`Meta::get_str`] of a known member (`crate::core::chain::link` asks every span's
    /// capture for its `trace_id` and `parent_span_id`).
    pub(crate) fn known_str(&self, key: MetaKey) -> Option<&str> {
        self.str_of(key.name(), self.known_token(key))
    }

    /// The string the member `key` found as `token` holds.
    fn str_of<'a>(&'a self, key: &str, token: Found<'a>) -> Option<&'a str> {
        match token {
            Found::Absent => None,
            Found::Token(t) => match t.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(s) if !s.contains('\\') => Some(s),
                Some(_) => self.map().get(key).and_then(Value::as_str),
                None => None,
            },
            Found::Unsure => self.map().get(key).and_then(Value::as_str),
        }
    }

    /// The member `key` when it is a number, as a double: [`Meta::get`] then
    /// [`Value::as_f64`], answered from the text when it is held as text (the number's
    /// text read as the nearest double, as the map's parse reads it).
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.f64_of(key, self.token(key))
    }

    /// [`Meta::get_f64`] of a known member (a span's `start_time`).
    pub(crate) fn known_f64(&self, key: MetaKey) -> Option<f64> {
        self.f64_of(key.name(), self.known_token(key))
    }

    /// The number the member `key` found as `token` holds.
    fn f64_of(&self, key: &str, token: Found<'_>) -> Option<f64> {
        match token {
            Found::Absent => None,
            Found::Token(t) => t
                .starts_with(|c: char| c == '-' || c.is_ascii_digit())
                .then(|| t.parse::<f64>().ok())
                .flatten(),
            Found::Unsure => self.map().get(key).and_then(Value::as_f64),
        }
    }

    /// Adds the member `key` with the string `value` unless `meta` has that member
    /// already (the map's `entry(key).or_insert(value)`). A `meta` held as text stays text:
    /// the member is written at its end (`crate::core::pipeline`'s `model` read from the
    /// response).
    pub(crate) fn insert_absent_str(&mut self, key: MetaKey, value: &str) {
        self.insert_absent_with(
            key,
            |text| push_string(text, value),
            || Value::String(value.to_owned()),
        );
    }

    /// Adds the member `key` with an object of the counts that are present in `counts`
    /// (names and non-negative integers, in that order) unless `meta` has that member
    /// already, as [`Meta::insert_absent_str`] (`meta.usage`).
    pub(crate) fn insert_absent_counts(&mut self, key: MetaKey, counts: &[(&str, Option<u64>)]) {
        self.insert_absent_with(
            key,
            |text| {
                text.push('{');
                let mut first = true;
                for (name, n) in counts {
                    if let Some(n) = n {
                        if !first {
                            text.push(',');
                        }
                        first = false;
                        push_string(text, name);
                        text.push(':');
                        text.push_str(itoa::Buffer::new().format(*n));
                    }
                }
                text.push('}');
            },
            || {
                Value::Object(
                    counts
                        .iter()
                        .filter_map(|(name, n)| Some(((*name).to_owned(), Value::from((*n)?))))
                        .collect(),
                )
            },
        );
    }

    /// Adds the member `key` unless `meta` has it: to the text, by `write` (the value's
    /// JSON text), or to the map, as `value()`.
    fn insert_absent_with(
        &mut self,
        key: MetaKey,
        write: impl FnOnce(&mut String),
        value: impl FnOnce() -> Value,
    ) {
        if self.map.get().is_none() {
            if self.text.is_none() {
                self.text = Some("{}".to_owned());
                self.places = Places::empty();
            }
            match self.known_token(key) {
                Found::Token(_) => return,
                Found::Absent => {
                    let text = self.text.as_mut().expect("set above");
                    // a record's text may end in white space
                    if let Some(open) = text.trim_end().strip_suffix('}') {
                        let (open, empty) = (open.len(), open.trim_end().ends_with('{'));
                        text.truncate(open);
                        if !empty {
                            text.push(',');
                        }
                        text.push_str(key.member());
                        let start = text.len();
                        write(text);
                        let end = text.len();
                        text.push('}');
                        self.places.note(key, start..end);
                        return;
                    }
                }
                Found::Unsure => {}
            }
        }
        self.entry(key.name()).or_insert_with(value);
    }

    /// The map, built from the text on first read.
    pub fn map(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| {
            self.text
                .as_deref()
                .and_then(|t| crate::core::stage::parse::from_str_no_duplicates(t).ok())
                .and_then(|v| match v {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .unwrap_or_default()
        })
    }

    /// The map, owned (built from the text when it was not yet).
    pub fn into_map(mut self) -> Map<String, Value> {
        self.map();
        self.map.take().unwrap_or_default()
    }

    /// The member `key`, as [`Map::get`]; a `meta` still held as text that cannot hold
    /// `key` (the text has no escape and no `"key"`) answers `None` without building the
    /// map (a report asks every failing verdict for `meta.promptfoo`).
    pub fn get(&self, key: &str) -> Option<&Value> {
        if self.text().is_some() && self.places.find(key) == Some(None) {
            return None;
        }
        if self.map.get().is_none()
            && let Some(text) = self.text.as_deref()
            && !text.contains('\\')
            && !contains_quoted(text, key)
        {
            return None;
        }
        self.map().get(key)
    }

    /// Whether the map is still held as text (not yet built).
    #[cfg(test)]
    pub(crate) fn is_text(&self) -> bool {
        self.map.get().is_none() && self.text.is_some()
    }
}

/// A `meta` object written member by member as JSON text (a span's metadata): what
/// [`Meta`] holds as text, with no map built unless a report reads it, and where each
/// member lies in it.
pub(crate) struct MetaWriter {
    /// `{` and the members written so far.
    text: String,
    /// Where they lie.
    places: Places,
}

impl MetaWriter {
    /// An empty object.
    pub(crate) fn new() -> MetaWriter {
        let mut text = String::with_capacity(384);
        text.push('{');
        MetaWriter {
            text,
            places: Places::empty(),
        }
    }

    /// Writes the member `key` with the string `value`. `key` must not have been written
    /// (a repeated name is not a JSON object the map's parse accepts).
    pub(crate) fn string(&mut self, key: MetaKey, value: &str) {
        self.write(key, |text| push_string(text, value));
    }

    /// Writes the member `key` with the number `value` as serde_json writes a double (the
    /// shortest text that reads back as `value`); a value that is not finite (no JSON
    /// number) is not written.
    pub(crate) fn double(&mut self, key: MetaKey, value: f64) {
        if value.is_finite() {
            self.write(key, |text| {
                text.push_str(zmij::Buffer::new().format_finite(value));
            });
        }
    }

    /// Writes `"key":` after a comma when a member is before it, then the value by
    /// `write`, and notes its place.
    fn write(&mut self, key: MetaKey, write: impl FnOnce(&mut String)) {
        debug_assert!(
            !matches!(self.places.find(key.name()), Some(Some(_))),
            "{key:?} written twice"
        );
        if self.text.len() > 1 {
            self.text.push(',');
        }
        self.text.push_str(key.member());
        let start = self.text.len();
        write(&mut self.text);
        self.places.note(key, start..self.text.len());
    }

    /// The object, `None` when no member was written.
    pub(crate) fn finish(mut self) -> Option<Meta> {
        if self.text.len() == 1 {
            return None;
        }
        self.text.push('}');
        Some(Meta {
            text: Some(self.text),
            places: self.places,
            map: OnceLock::new(),
        })
    }
}

/// Writes `s` as a JSON string (RFC 8259 section 7) at the end of `text`: its plain runs
/// as they are, `"` and `\` escaped with a backslash, control characters as `\u00XX`.
fn push_string(text: &mut String, s: &str) {
    let b = s.as_bytes();
    text.push('"');
    let mut i = 0;
    loop {
        let j = to_special(b, i);
        text.push_str(&s[i..j]);
        let Some(&c) = b.get(j) else { break };
        match c {
            b'"' => text.push_str("\\\""),
            b'\\' => text.push_str("\\\\"),
            c => {
                use std::fmt::Write;
                let _ = write!(text, "\\u{c:04x}");
            }
        }
        i = j + 1;
    }
    text.push('"');
}

/// What [`member`] found.
enum Found<'a> {
    /// The member's value, its JSON text as written.
    Token(&'a str),
    /// No member of that name.
    Absent,
    /// Not known from the text (a name written with an escape): ask the map.
    Unsure,
}

/// The member `key` of the JSON object `text` (checked JSON: strict, no repeated name),
/// found by walking its members without building any value.
fn member<'a>(text: &'a str, key: &str) -> Found<'a> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Found::Unsure;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b'}') => return Found::Absent,
            Some(b'"') => {}
            _ => return Found::Unsure,
        }
        let Some(end) = string_end(b, i) else {
            return Found::Unsure;
        };
        let name = &text[i + 1..end - 1];
        i = skip_ws(b, end);
        if b.get(i) != Some(&b':') {
            return Found::Unsure;
        }
        let start = skip_ws(b, i + 1);
        let Some(end) = value_end(b, start) else {
            return Found::Unsure;
        };
        if name.contains('\\') {
            // a name with an escape may stand for `key`
            return Found::Unsure;
        }
        if name == key {
            return Found::Token(&text[start..end]);
        }
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Found::Absent,
            _ => return Found::Unsure,
        }
    }
}

/// The first place from `i` that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The place after the string that starts at `i` (a `"`).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
        if b[j] == b'"' {
            return Some(j + 1);
        }
        j += 2;
    }
}

/// The place after the JSON value that starts at `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => Some(
            b[i..]
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .map_or(b.len(), |n| i + n),
        ),
    }
}

/// Whether `text` holds `"key"` (the key between double quotes).
fn contains_quoted(text: &str, key: &str) -> bool {
    let (t, k) = (text.as_bytes(), key.as_bytes());
    let Some(&first) = k.first() else {
        return text.contains("\"\"");
    };
    // by the key's first letter: rarer in a text than its quotes
    memchr::memchr_iter(first, t).any(|i| {
        i > 0 && t[i - 1] == b'"' && t[i..].starts_with(k) && t.get(i + k.len()) == Some(&b'"')
    })
}

impl From<Map<String, Value>> for Meta {
    fn from(map: Map<String, Value>) -> Meta {
        Meta {
            text: None,
            places: Places::default(),
            map: OnceLock::from(map),
        }
    }
}

impl From<Meta> for Map<String, Value> {
    fn from(meta: Meta) -> Map<String, Value> {
        meta.into_map()
    }
}

impl Deref for Meta {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Map<String, Value> {
        self.map()
    }
}

impl DerefMut for Meta {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.map();
        self.text = None;
        self.map.get_mut().expect("built just above")
    }
}

impl PartialEq for Meta {
    fn eq(&self, other: &Meta) -> bool {
        self.map() == other.map()
    }
}

impl std::fmt::Debug for Meta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.map().fmt(f)
    }
}

impl Serialize for Meta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.map().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Meta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Meta, D::Error> {
        Map::deserialize(d).map(Meta::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The map a text stands for, parsed by serde.
    fn parsed(m: &Meta) -> Map<String, Value> {
        serde_json::from_str(m.text.as_deref().expect("held as text")).unwrap()
    }

    #[test]
    fn a_written_meta_is_the_map_of_its_members() {
        let mut w = MetaWriter::new();
        w.string(MetaKey::TraceId, "0af7651916cd43dd8448eb211c80319c");
        w.string(MetaKey::ParentSpanId, "");
        // a name that quotes a member, escapes, a control character, non-ASCII
        w.string(
            MetaKey::SpanName,
            "chat \"trace_id\":\"x\" \\ \u{1}\n\u{7f} é 😀",
        );
        w.double(MetaKey::StartTime, 1_733_400_000.123_456_7);
        w.double(MetaKey::ResponseId, f64::NAN);
        let mut m = w.finish().unwrap();
        assert!(m.is_text());
        let want = json!({
            "trace_id": "0af7651916cd43dd8448eb211c80319c",
            "parent_span_id": "",
            "span_name": "chat \"trace_id\":\"x\" \\ \u{1}\n\u{7f} é 😀",
            "start_time": 1_733_400_000.123_456_7,
        });
        assert_eq!(Value::Object(parsed(&m)), want);
        assert_eq!(
            m.get_str("trace_id"),
            Some("0af7651916cd43dd8448eb211c80319c")
        );
        assert_eq!(m.get_str("parent_span_id"), Some(""));
        assert_eq!(
            m.known_str(MetaKey::TraceId),
            Some("0af7651916cd43dd8448eb211c80319c")
        );
        assert_eq!(m.known_str(MetaKey::SpanId), None);
        assert_eq!(
            m.known_f64(MetaKey::StartTime),
            Some(1_733_400_000.123_456_7)
        );
        assert_eq!(m.get_f64("start_time"), Some(1_733_400_000.123_456_7));
        assert_eq!(m.get_str("start_time"), None, "a number is no string");
        assert_eq!(m.get_f64("trace_id"), None, "a string is no number");
        assert_eq!(m.get_str("span_id"), None, "a known name not written");
        assert_eq!(m.get_str("model"), None);
        assert_eq!(m.get("other"), None, "a name no writer writes");
        assert!(m.is_text(), "answered without the map");
        // the pipeline's members go on the text
        m.insert_absent_str(MetaKey::Model, "gpt-4o-mini");
        m.insert_absent_counts(
            MetaKey::Usage,
            &[("input_tokens", Some(12)), ("output_tokens", None)],
        );
        m.insert_absent_str(MetaKey::Model, "not kept: model is there");
        assert!(m.is_text());
        assert_eq!(m.get_str("model"), Some("gpt-4o-mini"));
        let mut want = want;
        want["model"] = json!("gpt-4o-mini");
        want["usage"] = json!({"input_tokens": 12});
        assert_eq!(Value::Object(parsed(&m)), want);
        // a string with an escape is read from the map
        assert_eq!(
            m.get_str("span_name"),
            want["span_name"].as_str(),
            "the escaped name"
        );
        assert!(!m.is_text());
        assert_eq!(Value::Object(m.map().clone()), want);
    }

    #[test]
    fn a_records_meta_text_is_read_by_walking_its_members() {
        let text = r#" { "a" : [1, {"trace_id": "no"}, "]"] , "s":"x\"y" ,"model" : "m1",
            "start_time": -2.5e3, "e": {} } "#;
        let want: Map<String, Value> = serde_json::from_str(text).unwrap();
        let mut m = Meta::from_checked_text(text);
        assert_eq!(
            m.get_str("trace_id"),
            None,
            "a nested member is not the object's"
        );
        assert_eq!(m.get_f64("start_time"), Some(-2500.0));
        assert_eq!(m.get_str("model"), Some("m1"));
        assert_eq!(m.known_str(MetaKey::Model), Some("m1"));
        assert_eq!(m.known_f64(MetaKey::StartTime), Some(-2500.0));
        assert_eq!(m.known_str(MetaKey::TraceId), None);
        assert!(m.is_text());
        m.insert_absent_str(MetaKey::Model, "m2");
        m.insert_absent_counts(MetaKey::Usage, &[("total_tokens", Some(7))]);
        assert!(m.is_text());
        let mut want = want;
        want.insert("usage".into(), json!({"total_tokens": 7}));
        assert_eq!(parsed(&m), want);
        assert_eq!(
            m.get_str("s"),
            Some("x\"y"),
            "an escaped string, from the map"
        );
        assert_eq!(*m, want);
        // an empty object, with space inside
        let mut m = Meta::from_checked_text("{ }");
        m.insert_absent_str(MetaKey::Model, "m");
        assert_eq!(
            parsed(&m),
            json!({"model": "m"}).as_object().cloned().unwrap()
        );
        // a name written with an escape is only known from the map
        let mut m = Meta::from_checked_text(r#"{"\u006dodel":"m1"}"#);
        assert_eq!(m.get_str("model"), Some("m1"));
        m.insert_absent_str(MetaKey::Model, "m2");
        assert_eq!(m.get_str("model"), Some("m1"));
        let mut m = Meta::from_checked_text(r#"{"\u0061":1}"#);
        m.insert_absent_str(MetaKey::Model, "m2");
        assert_eq!(
            *m,
            json!({"a": 1, "model": "m2"}).as_object().cloned().unwrap()
        );
    }

    #[test]
    fn a_text_past_64_kib_is_walked_not_indexed() {
        let long = "n".repeat(70_000);
        let mut w = MetaWriter::new();
        w.string(MetaKey::SpanName, &long);
        w.string(MetaKey::TraceId, "t");
        let mut m = w.finish().unwrap();
        assert!(!m.places.indexed);
        assert_eq!(m.get_str("trace_id"), Some("t"));
        assert_eq!(m.known_str(MetaKey::TraceId), Some("t"));
        assert_eq!(m.known_str(MetaKey::SpanId), None);
        assert_eq!(m.get_str("span_name"), Some(long.as_str()));
        m.insert_absent_str(MetaKey::Model, "m");
        m.insert_absent_str(MetaKey::TraceId, "not kept");
        assert!(m.is_text());
        assert_eq!(
            Value::Object(parsed(&m)),
            json!({"span_name": long, "trace_id": "t", "model": "m"})
        );
    }

    #[test]
    fn a_double_is_written_as_serde_json_writes_it() {
        for x in [
            1_733_400_000.123_456_7,
            1_733_400_000.0,
            0.1,
            1e21,
            5e-324,
            1.7e308,
        ] {
            let mut w = MetaWriter::new();
            w.double(MetaKey::StartTime, x);
            let m = w.finish().unwrap();
            let want = format!("{{\"start_time\":{}}}", serde_json::to_string(&x).unwrap());
            assert_eq!(m.text.as_deref(), Some(want.as_str()));
            assert_eq!(m.get_f64("start_time"), Some(x));
            assert_eq!(m.get("start_time").and_then(Value::as_f64), Some(x));
        }
        let mut w = MetaWriter::new();
        w.double(MetaKey::StartTime, f64::INFINITY);
        assert!(w.finish().is_none(), "no JSON number, not written");
    }

    #[test]
    fn an_empty_writer_is_no_meta() {
        assert!(MetaWriter::new().finish().is_none());
        let mut m = Meta::default();
        m.insert_absent_counts(MetaKey::Usage, &[("input_tokens", None)]);
        assert_eq!(*m, json!({"usage": {}}).as_object().cloned().unwrap());
    }

    #[test]
    fn a_meta_held_as_text_reads_as_its_map() {
        let text = r#"{"b":[1,2.5,null],"a":{"x":"y\u00e9"},"promptfoo":true}"#;
        let m = Meta::from_checked_text(text);
        assert!(m.is_text());
        let want: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(m.get("b"), Some(&serde_json::json!([1, 2.5, null])));
        assert!(!m.is_text());
        assert_eq!(*m, want);
        assert_eq!(m, Meta::from(want.clone()));
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            serde_json::to_string(&want).unwrap()
        );
        assert_eq!(format!("{m:?}"), format!("{want:?}"));
        assert_eq!(m.clone().into_map(), want);
        let back: Meta = serde_json::from_str(text).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn get_answers_none_without_building_only_when_the_key_cannot_be_there() {
        let m = Meta::from_checked_text(r#"{"model":"m","note":"a promptfoo run"}"#);
        assert_eq!(m.get("promptfoo"), None);
        assert!(
            m.is_text(),
            "a key that is not there as \"key\" builds nothing"
        );
        assert_eq!(m.get("mode"), None);
        assert!(m.is_text(), "`mode` is only a prefix of `model`");
        // an escaped key is only found by building the map
        let m = Meta::from_checked_text(r#"{"\u0070romptfoo":{"a":1}}"#);
        assert_eq!(m.get("promptfoo"), Some(&serde_json::json!({"a": 1})));
        let m = Meta::from_checked_text(r#"{"promptfoo":1}"#);
        assert_eq!(m.get("promptfoo"), Some(&Value::from(1)));
        // a value that reads `"promptfoo"` is not the key, and the map says so
        let m = Meta::from_checked_text(r#"{"k":"promptfoo"}"#);
        assert_eq!(m.get("promptfoo"), None);
        assert!(!m.is_text());
    }

    #[test]
    fn a_changed_meta_is_its_map() {
        let mut m = Meta::from_checked_text(r#"{"a":1}"#);
        m.insert("b".into(), Value::from(2));
        m.entry("a").or_insert(Value::from(9));
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"a":1,"b":2}"#.to_string()
        );
        assert_eq!(Meta::default().len(), 0);
        // the empty key
        assert_eq!(Meta::from_checked_text(r#"{"a":1}"#).get(""), None);
        assert_eq!(
            Meta::from_checked_text(r#"{"":1}"#).get(""),
            Some(&Value::from(1))
        );
    }
}
