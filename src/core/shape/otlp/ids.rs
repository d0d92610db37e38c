//! The ids of an OTLP/JSON record's LLM and tool spans, read for the duplicate-id pre-pass
//! ([`super::span_ids`]) without building the record: a typed walk of the text that reads
//! only `resourceSpans[].scopeSpans[].spans[]` (or `instrumentationLibrarySpans`), each
//! span's `traceId`, `spanId`, `parentSpanId` (its natural chain key,
//! `TRACEID/PARENTSPANID`) and the attributes that decide what the span is
//! (`openinference.span.kind`, `gen_ai.operation.name`, `llm.request.type`: [`KIND_KEYS`]),
//! and skips everything else ([`IgnoredAny`]); member names and ids are borrowed from the
//! text unless they hold escapes.
//!
//! On strict JSON it gives exactly the ids the main pass names the record's captures by
//! (`capture_spans` on the parsed record): the same spans, in the same order, none when the
//! main pass finds the record broken (a span list that is not an array, a span that is not
//! an object, an LLM or tool span without a non-empty string `traceId` or `spanId`). The
//! skipped parts are not checked for duplicate member names or inexact numbers, so a record
//! that is not strict JSON may still give ids (the main pass names it by its source): only
//! more candidates, which the pre-pass allows (`crate::engine::ids`).

use super::{SpanKeys, kind};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The attributes that decide whether a span is an LLM or tool span ([`kind`]).
const KIND_KEYS: [&str; 3] = [
    "openinference.span.kind",
    "gen_ai.operation.name",
    "llm.request.type",
];

/// A part of the record the main pass rejects (its `INVALID_CAPTURE`): the record gives
/// no span ids.
struct Broken;

/// The spans read from a part of the record, or [`Broken`].
type Ids = Result<Vec<SpanKeys>, Broken>;

/// The ids of the LLM and tool spans of the OTLP/JSON record `text`, in file order; `None`
/// when the text is not a JSON object with `resourceSpans`, is not JSON, or is a record the
/// main pass finds broken.
pub(super) fn span_ids(text: &str) -> Option<Vec<String>> {
    Some(read(text)?.0?.ok()?.into_iter().map(|s| s.id).collect())
}

/// What the walk reads of a record that is a JSON object with `resourceSpans`: its LLM and
/// tool spans in file order (none when the main pass finds it broken), and whether it has
/// a `jsonrpc` member (which makes it an MCP message when shapes decide); `None` for any
/// other text.
pub(super) fn record_spans(text: &str) -> Option<(Vec<SpanKeys>, bool)> {
    match read(text)? {
        (Some(ids), jsonrpc) => Some((ids.unwrap_or_default(), jsonrpc)),
        (None, _) => None,
    }
}

/// [`Top`] of the whole text: `None` when it is not one JSON value.
fn read(text: &str) -> Option<(Option<Ids>, bool)> {
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Top.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(read)
}

/// Implements `DeserializeSeed` for each visitor named, as `deserialize_any` with itself (a
/// seed's value is its visitor's).
macro_rules! seeds_by_visitor {
    ($($t:ty),*) => {$(
        impl<'de> DeserializeSeed<'de> for $t {
            type Value = <$t as Visitor<'de>>::Value;
            fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
        }
    )*};
}

seeds_by_visitor!(Top, Resource, Scope, Span, Attributes, KeyValue);

/// The `Visitor::expecting` of every visitor here: any JSON value is taken.
macro_rules! expecting {
    () => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any valid JSON value")
        }
    };
}

/// Implements the `Visitor` methods of every scalar (and `null` unless `$unit` is given) to
/// return `$v`.
macro_rules! scalars {
    ($v:expr) => {
        scalars!(@ $v);
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
    (@ $v:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

/// Skips the rest of a sequence.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Skips the rest of a map.
fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A repeated member this walk reads: the record is not strict JSON.
fn repeated<E: de::Error>(name: &str) -> E {
    E::custom(format_args!("duplicate key {name:?}"))
}

/// A member name, borrowed from the text when it has no escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(StrVisitor).map(Key)
    }
}

/// A string, borrowed when it can be.
struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// A member that must be a string: the string, or `None` for any other value.
struct MaybeStr<'de>(Option<Cow<'de, str>>);

impl<'de> de::Deserialize<'de> for MaybeStr<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(MaybeStr(Some(Cow::Borrowed(v))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(MaybeStr(Some(Cow::Owned(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MaybeStr(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeStr(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeStr(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeStr(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeStr(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(MaybeStr(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq).map(|()| MaybeStr(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                drain_map(map).map(|()| MaybeStr(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The record: `resourceSpans`, if it has it, and whether it has a `jsonrpc` member.
struct Top;

impl<'de> Visitor<'de> for Top {
    type Value = (Option<Ids>, bool);
    expecting!();
    scalars!((None, false));
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|()| (None, false))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = None;
        let mut jsonrpc = false;
        while let Some(Key(k)) = map.next_key()? {
            if k == "jsonrpc" {
                jsonrpc = true;
                map.next_value::<IgnoredAny>()?;
            } else if k == "resourceSpans" {
                if out.is_some() {
                    return Err(repeated(&k));
                }
                out = Some(map.next_value_seed(List(Resource))?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok((out, jsonrpc))
    }
}

/// A list of `T`s: `null` (or absent) is empty, an array gives its elements' ids in order,
/// anything else is [`Broken`], as is a list with a broken element.
struct List<T>(T);

impl<'de, T: DeserializeSeed<'de, Value = Ids> + Copy> DeserializeSeed<'de> for List<T> {
    type Value = Ids;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Ids, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: DeserializeSeed<'de, Value = Ids> + Copy> Visitor<'de> for List<T> {
    type Value = Ids;
    expecting!();
    scalars!(@ Err(Broken));
    fn visit_unit<E>(self) -> Result<Ids, E> {
        Ok(Ok(Vec::new()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ids, A::Error> {
        let mut out = Ok(Vec::new());
        while let Some(ids) = seq.next_element_seed(self.0)? {
            // the rest is still walked: a record that is not JSON gives none
            if let (Ok(all), Ok(ids)) = (&mut out, ids) {
                all.extend(ids);
            } else {
                out = Err(Broken);
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Ids, A::Error> {
        drain_map(map).map(|()| Err(Broken))
    }
}

/// A `resourceSpans` element: its `scopeSpans`, else its `instrumentationLibrarySpans`
/// (OTLP before 0.15); one that is not an object holds none.
#[derive(Clone, Copy)]
struct Resource;

impl<'de> Visitor<'de> for Resource {
    type Value = Ids;
    expecting!();
    scalars!(Ok(Vec::new()));
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Ids, A::Error> {
        drain_seq(seq).map(|()| Ok(Vec::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ids, A::Error> {
        let (mut scope, mut library) = (None, None);
        while let Some(Key(k)) = map.next_key()? {
            let slot = match &*k {
                "scopeSpans" => &mut scope,
                "instrumentationLibrarySpans" => &mut library,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(repeated(&k));
            }
            *slot = Some(map.next_value_seed(List(Scope))?);
        }
        Ok(scope.or(library).unwrap_or(Ok(Vec::new())))
    }
}

/// A `scopeSpans` element: its `spans`; one that is not an object holds none.
#[derive(Clone, Copy)]
struct Scope;

impl<'de> Visitor<'de> for Scope {
    type Value = Ids;
    expecting!();
    scalars!(Ok(Vec::new()));
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Ids, A::Error> {
        drain_seq(seq).map(|()| Ok(Vec::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ids, A::Error> {
        let mut spans = None;
        while let Some(Key(k)) = map.next_key()? {
            if k == "spans" {
                if spans.is_some() {
                    return Err(repeated(&k));
                }
                spans = Some(map.next_value_seed(List(Span))?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(spans.unwrap_or(Ok(Vec::new())))
    }
}

/// A span: its id `TRACEID/SPANID` (and its chain key) when it is an LLM or tool span ([`kind`]), none when
/// it is another span; a span that is not an object, or an LLM or tool span without a
/// non-empty string `traceId` and `spanId`, is [`Broken`].
#[derive(Clone, Copy)]
struct Span;

impl<'de> Visitor<'de> for Span {
    type Value = Ids;
    expecting!();
    scalars!(Err(Broken));
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Ids, A::Error> {
        drain_seq(seq).map(|()| Err(Broken))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ids, A::Error> {
        let (mut trace, mut span, mut parent, mut attrs) = (None, None, None, None);
        while let Some(Key(k)) = map.next_key()? {
            match &*k {
                "traceId" | "spanId" | "parentSpanId" => {
                    let slot = match &*k {
                        "traceId" => &mut trace,
                        "spanId" => &mut span,
                        _ => &mut parent,
                    };
                    if slot.is_some() {
                        return Err(repeated(&k));
                    }
                    *slot = Some(map.next_value::<MaybeStr<'de>>()?.0);
                }
                "attributes" => {
                    if attrs.is_some() {
                        return Err(repeated(&k));
                    }
                    attrs = Some(map.next_value_seed(Attributes)?);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if kind(&attrs.unwrap_or_default()).is_none() {
            return Ok(Ok(Vec::new()));
        }
        match (trace.flatten(), span.flatten()) {
            (Some(t), Some(s)) if !t.is_empty() && !s.is_empty() => {
                let key = parent
                    .flatten()
                    .filter(|p| !p.is_empty())
                    .map(|p| format!("{t}/{p}"));
                Ok(Ok(vec![SpanKeys {
                    id: format!("{t}/{s}"),
                    key,
                }]))
            }
            _ => Ok(Err(Broken)),
        }
    }
}

/// A span's `attributes` (a list of `{key, value}`, or an object), only the [`KIND_KEYS`],
/// each value decoded as [`super::key_values`] decodes it (a later one of a key wins).
struct Attributes;

/// The decoded value of the raw AnyValue `raw` ([`super::any_value`]).
fn decode<E: de::Error>(raw: &RawValue) -> Result<Value, E> {
    let v: Value = serde_json::from_str(raw.get()).map_err(E::custom)?;
    Ok(super::any_value(&v))
}

impl<'de> Visitor<'de> for Attributes {
    type Value = super::Fields<'static>;
    expecting!();
    scalars!(super::Fields::default());
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = super::Fields::default();
        while let Some(kv) = seq.next_element_seed(KeyValue)? {
            if let Some((k, v)) = kv {
                out.push(k, v);
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = super::Fields::default();
        while let Some(Key(k)) = map.next_key()? {
            if KIND_KEYS.contains(&&*k) {
                let v: Value = map.next_value()?;
                out.push(k.into_owned(), super::any_value(&v));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

/// One `{key, value}` of a span's attributes: the key and its decoded value when the key
/// is one of the [`KIND_KEYS`] (a missing value is `null`); `None` for any other key, a
/// key that is not a string, or an element that is not an object.
#[derive(Clone, Copy)]
struct KeyValue;

impl<'de> Visitor<'de> for KeyValue {
    type Value = Option<(String, Value)>;
    expecting!();
    scalars!(None);
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|()| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // the key decides whether the value is read; a value before its key is kept raw
        let mut key: Option<Option<Cow<'de, str>>> = None;
        let mut value: Option<Result<Value, &'de RawValue>> = None;
        while let Some(Key(k)) = map.next_key()? {
            match &*k {
                "key" => {
                    if key.is_some() {
                        return Err(repeated(&k));
                    }
                    key = Some(map.next_value::<MaybeStr<'de>>()?.0);
                }
                "value" => {
                    if value.is_some() {
                        return Err(repeated(&k));
                    }
                    value = Some(match &key {
                        Some(Some(name)) if KIND_KEYS.contains(&&**name) => {
                            Ok(super::any_value(&map.next_value::<Value>()?))
                        }
                        Some(_) => {
                            map.next_value::<IgnoredAny>()?;
                            Ok(Value::Null)
                        }
                        None => Err(map.next_value::<&'de RawValue>()?),
                    });
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(Some(name)) = key else {
            return Ok(None);
        };
        if !KIND_KEYS.contains(&&*name) {
            return Ok(None);
        }
        let value = match value {
            None => Value::Null,
            Some(Ok(v)) => v,
            Some(Err(raw)) => decode(raw)?,
        };
        Ok(Some((name.into_owned(), value)))
    }
}
