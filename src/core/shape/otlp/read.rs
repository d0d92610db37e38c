//! The main pass's reading of an OTLP/JSON record text (`docs/record-shapes.md#traces`): a
//! typed walk of `resourceSpans[].scopeSpans[].spans[]` (or `instrumentationLibrarySpans`)
//! that builds each span as [`super::capture_spans`] gives it as far as the adapters read
//! it (the members in [`super::SPAN_MEMBERS`] as the strict parse builds them, the others
//! `null`; its `attributes` decoded straight into `{key: value}`) and builds nothing else:
//! the resource, the scope and every other member are walked as the strict
//! parse walks them ([`Skip`]: repeated member names, lone surrogates, numbers not held
//! exactly and nesting past [`crate::core::stage::parse::MAX_DEPTH`] are refused just the
//! same), without a `Value` for each `{key, value: {stringValue}}`.
//!
//! It gives the spans only when the record is one the shape detection reads as OTLP/JSON
//! and the whole text is strict JSON; any other record, and any record whose containers
//! are not what OTLP/JSON makes them (the cases [`super::capture_spans`] reports or reads
//! leniently: a list that is not an array, a span that is not an object, an LLM span
//! without a `traceId` or `spanId`, ...), gives `None`: the caller then reads it the
//! general way (the strict parse into a `Value`, then the shape), which gives the verdict
//! it always gave. So the two readings agree on every text: this one is only faster.

use super::{Fields, Kind, Span, SpanAt, any_value_owned, kind};
use crate::core::stage::parse::{
    StrictKey as Key, StrictNames as Names, StrictSeed, StrictSkip as Skip,
};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// The LLM and tool spans of the record `text` in file order, as [`super::capture_spans`]
/// gives them from the strictly parsed record; `None` when the text is not a strict JSON
/// object the shapes read as OTLP/JSON (`resourceSpans`, no `jsonrpc`), or is one this walk
/// leaves to the general reading (see the module doc).
pub(super) fn spans(text: &str) -> Option<Vec<(Kind, Span<'_>)>> {
    crate::core::stage::parse::strict_seed(text, Top).ok()
}

/// Leaves the record to the general reading.
fn general<E: de::Error>() -> E {
    E::custom("read the general way")
}

/// Implements `expecting` (naming `$what`) and the `Visitor` methods of every scalar but
/// `null` to leave the record to the general reading.
macro_rules! general_scalars {
    ($what:literal) => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str($what)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(general())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(general())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(general())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(general())
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(general())
        }
    };
}

/// Implements the `Visitor` methods of every scalar and of a sequence to leave the record
/// to the general reading (a container that is not an object where one is expected).
macro_rules! only_maps {
    () => {
        general_scalars!("an object");
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Err(general())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(general())
        }
    };
}

/// Implements `DeserializeSeed` for each visitor named, as `deserialize_any` with itself.
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

seeds_by_visitor!(Top, SpanSeed, Attributes, KeyValue, KeyName, AnyValue, List);

/// The record: an object with `resourceSpans` and no `jsonrpc`.
struct Top;

impl<'de> Visitor<'de> for Top {
    type Value = Vec<(Kind, Span<'de>)>;
    only_maps!();
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = Names::default();
        let mut out = None;
        while let Some(Key(k)) = map.next_key()? {
            names.add(k.clone())?;
            match &*k {
                "jsonrpc" => return Err(general()),
                "resourceSpans" => {
                    out = Some(map.next_value_seed(List {
                        at: SpanAt::default(),
                        of: Of::Resources,
                    })?)
                }
                _ => map.next_value_seed(Skip)?,
            }
        }
        out.ok_or_else(general)
    }
}

/// What a list holds.
#[derive(Clone, Copy)]
enum Of {
    Resources,
    Scopes,
    Spans,
}

/// A list of resources, of a resource's scopes or of a scope's spans, at `at` (the
/// indices above it): `null` is empty, an array gives its elements' spans in order;
/// anything else is left to the general reading (its `INVALID_CAPTURE`).
struct List {
    at: SpanAt,
    of: Of,
}

impl<'de> Visitor<'de> for List {
    type Value = Vec<(Kind, Span<'de>)>;
    general_scalars!("an array");
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(general())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        let mut at = self.at;
        for i in 0usize.. {
            let got = match self.of {
                Of::Resources => {
                    at.resource = i;
                    seq.next_element_seed(Resource { at })?
                }
                Of::Scopes => {
                    at.scope = i;
                    seq.next_element_seed(Scope { at })?
                }
                Of::Spans => {
                    at.span = i;
                    seq.next_element_seed(SpanSeed { at })?
                        .map(|s| s.into_iter().collect())
                }
            };
            let Some(spans) = got else { break };
            out.extend(spans);
        }
        Ok(out)
    }
}

/// A `resourceSpans` element: its `scopeSpans`, else its `instrumentationLibrarySpans`
/// (OTLP before 0.15).
#[derive(Clone, Copy)]
struct Resource {
    at: SpanAt,
}

impl<'de> Visitor<'de> for Resource {
    type Value = Vec<(Kind, Span<'de>)>;
    only_maps!();
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = Names::default();
        let (mut scope, mut library) = (None, None);
        while let Some(Key(k)) = map.next_key()? {
            names.add(k.clone())?;
            let (slot, is_library) = match &*k {
                "scopeSpans" => (&mut scope, false),
                "instrumentationLibrarySpans" => (&mut library, true),
                _ => {
                    map.next_value_seed(Skip)?;
                    continue;
                }
            };
            *slot = Some(map.next_value_seed(List {
                at: SpanAt {
                    library: is_library,
                    ..self.at
                },
                of: Of::Scopes,
            })?);
        }
        Ok(scope.or(library).unwrap_or_default())
    }
}

/// A `scopeSpans` element: its `spans`.
#[derive(Clone, Copy)]
struct Scope {
    at: SpanAt,
}

impl<'de> Visitor<'de> for Scope {
    type Value = Vec<(Kind, Span<'de>)>;
    only_maps!();
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = Names::default();
        let mut spans = None;
        while let Some(Key(k)) = map.next_key()? {
            names.add(k.clone())?;
            if k == "spans" {
                spans = Some(map.next_value_seed(List {
                    at: self.at,
                    of: Of::Spans,
                })?);
            } else {
                map.next_value_seed(Skip)?;
            }
        }
        Ok(spans.unwrap_or_default())
    }
}

seeds_by_visitor!(Resource, Scope);

/// A span at `at`: `Some` when it is an LLM or tool span ([`kind`]) with a non-empty
/// string `traceId` and `spanId`, `None` for any other span; anything else is left to the
/// general reading.
struct SpanSeed {
    at: SpanAt,
}

impl<'de> Visitor<'de> for SpanSeed {
    type Value = Option<(Kind, Span<'de>)>;
    only_maps!();
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut raw = Fields::default();
        let mut attrs = None;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            if k == "attributes" {
                if attrs.is_some() {
                    return Err(general());
                }
                attrs = Some(map.next_value_seed(Attributes)?);
                continue;
            }
            if raw.contains(&k) {
                return Err(general());
            }
            if super::SPAN_MEMBERS.contains(&&*k) {
                raw.push(k, map.next_value_seed(StrictSeed)?);
            } else {
                // read by no adapter: only walked, its name kept for the repeat check
                map.next_value_seed(Skip)?;
                raw.push(k, Value::Null);
            }
        }
        let attrs = attrs.unwrap_or_default();
        let Some(kind) = kind(&attrs) else {
            return Ok(None);
        };
        let Some(id) = super::span_id(&raw) else {
            return Err(general());
        };
        Ok(Some((
            kind,
            Span {
                at: self.at,
                id,
                raw,
                attrs,
                messages: None,
            },
        )))
    }
}

/// A span's `attributes`, decoded as [`super::key_values_owned`] decodes them: a list of
/// `{key, value}` (an element that is not an object, or whose `key` is not a string, left
/// out; a later key wins), an object taken as it is, anything else none.
struct Attributes;

impl<'de> Visitor<'de> for Attributes {
    type Value = Fields<'de>;
    scalars_give!(Fields::default());
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Fields::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Fields::default();
        while let Some(kv) = seq.next_element_seed(KeyValue)? {
            if let Some((k, v)) = kv {
                out.push(k, v);
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Fields::default();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let v = map.next_value_seed(StrictSeed)?;
            if out.contains(&k) {
                return Err(general());
            }
            out.push(k, any_value_owned(v));
        }
        Ok(out)
    }
}

/// One element of a list of attributes: `Some((key, decoded value))` for an object with a
/// string `key` (a missing `value` is `null`), `None` for any other element.
struct KeyValue;

impl<'de> Visitor<'de> for KeyValue {
    type Value = Option<(Cow<'de, str>, Value)>;
    scalars_give!(None);
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // the names besides `key` and `value` (rare: no list of them unless one comes)
        let mut others = Names::default();
        let (mut key, mut value) = (None, None);
        while let Some(Key(k)) = map.next_key()? {
            match &*k {
                "key" if key.is_none() => key = Some(map.next_value_seed(KeyName)?),
                "value" if value.is_none() => value = Some(map.next_value_seed(AnyValue)?),
                "key" | "value" => return Err(general()),
                _ => {
                    others.add(k)?;
                    map.next_value_seed(Skip)?;
                }
            }
        }
        Ok(key.flatten().map(|k| (k, value.unwrap_or(Value::Null))))
    }
}

/// A `KeyValue`'s `key`: the string (borrowed from the text when it has no escape), `None`
/// for any other value (walked as the strict parse walks it).
struct KeyName;

impl<'de> Visitor<'de> for KeyName {
    type Value = Option<Cow<'de, str>>;
    scalars_give!(None);
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Skip.visit_seq(seq).map(|()| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Skip.visit_map(map).map(|()| None)
    }
}

/// An AnyValue, decoded as [`super::any_value_owned`] decodes it: built as the strict parse
/// builds it, except an object of one `stringValue`, which is its string at once.
struct AnyValue;

impl<'de> Visitor<'de> for AnyValue {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        StrictSeed.visit_bool(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        StrictSeed.visit_i64(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        StrictSeed.visit_u64(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        StrictSeed.visit_f64(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        StrictSeed.visit_str(v)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        StrictSeed.visit_string(v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        StrictSeed.visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        StrictSeed.visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(Key(first)) = map.next_key::<Key<'de>>()? else {
            return Ok(Value::Null);
        };
        let v = map.next_value_seed(StrictSeed)?;
        let Some(Key(second)) = map.next_key::<Key<'de>>()? else {
            // one member: the common `{"stringValue": "..."}` needs no object
            if first == "stringValue" {
                return Ok(v);
            }
            let mut o = Map::new();
            o.insert(first.into_owned(), v);
            return Ok(any_value_owned(Value::Object(o)));
        };
        let mut o = Map::new();
        o.insert(first.into_owned(), v);
        let mut k = second;
        loop {
            let v = map.next_value_seed(StrictSeed)?;
            if o.contains_key(&*k) {
                return Err(general());
            }
            o.insert(k.into_owned(), v);
            match map.next_key::<Key<'de>>()? {
                Some(Key(next)) => k = next,
                None => break,
            }
        }
        Ok(any_value_owned(Value::Object(o)))
    }
}
