//! The fast path: `serde_json` into a [`Value`] through a small seed that rejects
//! duplicate object member names (RFC 8259 section 4: "the names within an object
//! SHOULD be unique"; we require it, because a repeated key is ambiguous).
//!
//! It builds exactly the `Value` that `serde_json::from_str::<Value>` builds, with the
//! same recursion limit and the same number handling, so a text it accepts is a text
//! `serde_json` accepts and has no duplicate keys.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::fmt;

/// Builds a [`Value`] and fails on the first duplicate key of any object.
#[derive(Clone, Copy)]
pub(crate) struct StrictSeed;

impl<'de> DeserializeSeed<'de> for StrictSeed {
    type Value = Value;

    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    #[inline]
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    #[inline]
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    #[inline]
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    #[inline]
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        saw_double();
        // serde_json never hands a non-finite float to a visitor; mirror `Value` anyway
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    #[inline]
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    #[inline]
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    #[inline]
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    #[inline]
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictSeed)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = access.next_value_seed(StrictSeed)?;
            match map.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(slot) => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key {:?}",
                        slot.key()
                    )));
                }
            }
        }
        Ok(Value::Object(map))
    }
}

thread_local! {
    /// Whether the value being read holds a number `serde_json` read as a double.
    static DOUBLES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[inline]
fn saw_double() {
    DOUBLES.with(|d| d.set(true));
}

/// Reads `text` with `read` (one value to its end), then, when a number was read as a
/// double, checks every number token is held exactly ([`super::number`]): the same error
/// as a duplicate key (a data error) otherwise.
fn exactly<'de, T>(
    text: &'de str,
    read: impl FnOnce(
        &mut serde_json::Deserializer<serde_json::de::StrRead<'de>>,
    ) -> Result<T, serde_json::Error>,
) -> Result<T, serde_json::Error> {
    DOUBLES.with(|d| d.set(false));
    let mut de = serde_json::Deserializer::from_str(text);
    let value = read(&mut de)?;
    de.end()?;
    if DOUBLES.with(std::cell::Cell::get) {
        inexact_number(text)?;
    }
    Ok(value)
}

/// The first number token of the strict JSON `text` that is not held exactly, as an error.
fn inexact_number(text: &str) -> Result<(), serde_json::Error> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                // to the closing quote (the text is valid JSON: escapes are well formed)
                i += 1;
                while let Some(n) = memchr::memchr2(b'"', b'\\', &b[i..]) {
                    i += n;
                    if b[i] == b'\\' {
                        i += 2;
                    } else {
                        break;
                    }
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let token = &text[start..i];
                if super::number::loss(token).is_some() {
                    return Err(de::Error::custom(format_args!(
                        "number {token:?} is not held exactly"
                    )));
                }
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// `serde_json::from_str::<Value>` that also rejects duplicate keys and numbers that would
/// not be held exactly ([`super::number`]).
pub(super) fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    exactly(text, |de| StrictSeed.deserialize(de))
}

/// Reads `text` with `seed` (one value to its end) under the limits of [`from_str`]: the
/// seed builds what it needs, with [`StrictSeed`] and [`Skip`] for the rest, and a number
/// read as a double makes every number token checked to be held exactly.
pub(crate) fn seeded<'de, S: DeserializeSeed<'de>>(
    text: &'de str,
    seed: S,
) -> Result<S::Value, serde_json::Error> {
    exactly(text, |de| seed.deserialize(de))
}

/// What [`pruned`] read of a record: its top-level object with each of the `bodies`
/// members that is an object replaced by `{}`, and of each of those, the members named in
/// `keep`, as their raw text, in text order.
#[derive(Debug)]
pub(crate) struct Pruned<'a> {
    /// The record with each body object emptied (every other member built as
    /// [`from_str`] builds it).
    pub(crate) skeleton: Map<String, Value>,
    /// Per body object (its top-level key), its kept members: (name, raw JSON text).
    pub(crate) kept: Vec<(String, Vec<(String, &'a str)>)>,
}

/// Reads `text` as [`from_str`] does (the same errors, the same limits: strict JSON, no
/// repeated member name outside the kept members, numbers held exactly), without building
/// the members of its `bodies` objects: those named in `keep` are kept as raw text, to be
/// checked when they are parsed (their duplicate keys, their depth and their numbers), the
/// others are only walked. `Ok(None)`: the text is not a JSON object.
pub(crate) fn pruned<'a>(
    text: &'a str,
    bodies: &[&str],
    keep: &[&str],
) -> Result<Option<Pruned<'a>>, serde_json::Error> {
    exactly(text, |de| Top { bodies, keep }.deserialize(de))
}

/// A member name, borrowed from the text when it has no escape.
pub(crate) struct Key<'de>(pub(crate) std::borrow::Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The member names of one object seen so far: a repeated one is an error, as in
/// [`StrictSeed`].
#[derive(Default)]
pub(crate) struct Names<'de> {
    few: Vec<std::borrow::Cow<'de, str>>,
    many: std::collections::HashSet<std::borrow::Cow<'de, str>>,
}

impl<'de> Names<'de> {
    /// Adds the name `k`; a name added before is an error.
    pub(crate) fn add<E: de::Error>(&mut self, k: std::borrow::Cow<'de, str>) -> Result<(), E> {
        let repeated = if self.many.is_empty() {
            let r = self.few.contains(&k);
            if !r && self.few.len() >= 16 {
                self.many.extend(self.few.drain(..));
                self.many.insert(k.clone());
            } else if !r {
                self.few.push(k.clone());
            }
            r
        } else {
            !self.many.insert(k.clone())
        };
        if repeated {
            return Err(de::Error::custom(format_args!("duplicate key {:?}", &*k)));
        }
        Ok(())
    }
}

/// A walk that is its own seed: it reads the value it is given as any JSON value.
macro_rules! walk_seed {
    ($walk:ty) => {
        impl<'de> DeserializeSeed<'de> for $walk {
            type Value = ();
            fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_any(self)
            }
        }
    };
}

/// The value type, `expecting` and scalar arms of a visitor that walks a value building nothing ([`Skip`], and the
/// depth-counting walk of a `meta` object): every scalar is accepted as it is read, a double
/// noted with `saw_double` (the strict reading's number rule), an option's content walked.
macro_rules! walk_scalars {
    () => {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any valid JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            saw_double();
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_none<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    };
}

/// Walks a value as [`StrictSeed`] reads it, building nothing.
#[derive(Clone, Copy)]
pub(crate) struct Skip;

walk_seed!(Skip);

impl<'de> Visitor<'de> for Skip {
    walk_scalars!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let mut names = Names::default();
        while let Some(Key(k)) = access.next_key::<Key<'de>>()? {
            names.add(k)?;
            access.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

/// A body member's value: an object's kept members, or any other value built.
enum Body<'de> {
    Object(Vec<(String, &'de str)>),
    Other(Value),
}

struct BodySeed<'k> {
    keep: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for BodySeed<'_> {
    type Value = Body<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Body<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BodySeed<'_> {
    type Value = Body<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Body<'de>, E> {
        StrictSeed.visit_bool(v).map(Body::Other)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Body<'de>, E> {
        StrictSeed.visit_i64(v).map(Body::Other)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Body<'de>, E> {
        StrictSeed.visit_u64(v).map(Body::Other)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Body<'de>, E> {
        StrictSeed.visit_f64(v).map(Body::Other)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Body<'de>, E> {
        StrictSeed.visit_str(v).map(Body::Other)
    }
    fn visit_unit<E>(self) -> Result<Body<'de>, E> {
        Ok(Body::Other(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Body<'de>, E> {
        Ok(Body::Other(Value::Null))
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Body<'de>, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Body<'de>, A::Error> {
        StrictSeed.visit_seq(seq).map(Body::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Body<'de>, A::Error> {
        let mut names = Names::default();
        let mut kept = Vec::new();
        while let Some(Key(k)) = access.next_key::<Key<'de>>()? {
            names.add(k.clone())?;
            if self.keep.contains(&&*k) {
                let raw: &'de serde_json::value::RawValue = access.next_value()?;
                kept.push((k.into_owned(), raw.get()));
            } else {
                access.next_value_seed(Skip)?;
            }
        }
        Ok(Body::Object(kept))
    }
}

/// The top-level object of [`pruned`].
struct Top<'k> {
    bodies: &'k [&'k str],
    keep: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = Option<Pruned<'de>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Option<Pruned<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        saw_double();
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Skip.visit_seq(seq).map(|()| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut skeleton = Map::new();
        let mut kept = Vec::new();
        while let Some(key) = access.next_key::<String>()? {
            if skeleton.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            let value = if self.bodies.contains(&key.as_str()) {
                match access.next_value_seed(BodySeed { keep: self.keep })? {
                    Body::Object(members) => {
                        kept.push((key.clone(), members));
                        Value::Object(Map::new())
                    }
                    Body::Other(v) => v,
                }
            } else {
                access.next_value_seed(StrictSeed)?
            };
            skeleton.insert(key, value);
        }
        Ok(Some(Pruned { skeleton, kept }))
    }
}

/// What [`record_members`] read: the members of a top-level object whose every member name
/// is one of `names`, by the name's place in `names`; or, for any other text that parses,
/// the [`Value`] [`from_str`] builds.
#[derive(Debug)]
pub(crate) enum Members<'a, const N: usize> {
    /// A top-level object, every member name one of the names, none repeated: each
    /// member's value (built as [`from_str`] builds it) at its name's place; the member at
    /// the `lazy` place, when it is an object, is not built but left as its JSON text
    /// (checked as [`from_str`] checks it), its place `None`.
    Named(Box<[Option<Value>; N]>, Option<&'a str>),
    /// Any other value (an object with another member name included), as [`from_str`]
    /// builds it.
    Other(Value),
}

/// Reads `text` as [`from_str`] does (the same limits, the same checks), a top-level object
/// whose member names are all among `names` read into their places, without a map of its
/// members (a capture record's members are known: `crate::core::capture::RECORD_KEYS`).
/// An error is [`from_str`]'s error of the text only in that both fail on the same texts:
/// the caller reports a failing text's problem by reading it again.
///
/// The member at the place `lazy` of `names` (a capture record's `meta`), when it is an
/// object, is checked without being built and handed back as its JSON text
/// ([`Members::Named`]).
pub(crate) fn record_members<'a, const N: usize>(
    text: &'a str,
    names: &'static [&'static str; N],
    lazy: Option<usize>,
) -> Result<Members<'a, N>, serde_json::Error> {
    exactly(text, |de| MembersSeed { names, lazy }.deserialize(de))
}

struct MembersSeed<const N: usize> {
    names: &'static [&'static str; N],
    lazy: Option<usize>,
}

/// The value of the raw JSON text `raw` of a member of the top-level object (one value, as
/// `serde_json`'s `RawValue` holds it: JSON, but not checked for repeated member names,
/// depth, lone surrogates or the range of numbers), checked and built as [`from_str`] builds
/// it one level down in a document: the text is read again inside `[` `]`, at the same
/// depth. A number read as a double marks the text for [`exactly`]'s check.
fn member_value(raw: &str) -> Result<Value, serde_json::Error> {
    let wrapped = format!("[{raw}]");
    let mut de = serde_json::Deserializer::from_str(&wrapped);
    match StrictSeed.deserialize(&mut de)? {
        Value::Array(mut items) if items.len() == 1 => Ok(items.pop().unwrap_or(Value::Null)),
        _ => Err(de::Error::custom("not one value")),
    }
}

/// Checks the raw JSON text `raw` of an object that is a member of the top-level object, as
/// [`from_str`] checks it there, building nothing: strict JSON, no repeated member name, no
/// lone surrogate, numbers in range (and a number read as a double marks the text for
/// [`exactly`]'s check), and its depth: the top-level object is one level, so the member
/// may nest [`super::MAX_DEPTH`] - 1 levels.
fn check_member(raw: &str) -> Result<(), serde_json::Error> {
    if flat_object(raw.as_bytes()) {
        return Ok(());
    }
    let mut de = serde_json::Deserializer::from_str(raw);
    Depth(super::MAX_DEPTH - 1).deserialize(&mut de)?;
    de.end()
}

/// Whether `raw` (the text of one JSON value, as `serde_json`'s `RawValue` holds it) is an
/// object that [`from_str`] accepts for certain, seen in one pass over its bytes: at most
/// 16 members, no two of the same name, no escape and no control character in its text
/// (nor tab or line break between its tokens), each value a string, `true`, `false`, `null`
/// or an integer of at most 18 digits (held exactly, never read as a double). `false` says nothing: the text is
/// then checked by `serde_json` ([`check_member`]).
fn flat_object(raw: &[u8]) -> bool {
    let ws = |i: &mut usize| {
        while raw.get(*i) == Some(&b' ') {
            *i += 1;
        }
    };
    // no escape and no control character anywhere (whitespace included: a compact text has
    // none), so a string ends at the next quote; one pass over the bytes without an early
    // exit, which the compiler widens
    if raw
        .iter()
        .fold(false, |bad, &c| bad | (c < 0x20) | (c == b'\\'))
    {
        return false;
    }
    // a string from its opening quote at `i`: its contents, `i` past its closing quote
    let string = |i: &mut usize| -> Option<&[u8]> {
        let start = *i + 1;
        let len = memchr::memchr(b'"', raw.get(start..)?)?;
        *i = start + len + 1;
        Some(&raw[start..start + len])
    };
    let mut names: [&[u8]; 16] = [&[]; 16];
    let mut n = 0;
    let mut i = 0;
    ws(&mut i);
    if raw.get(i) != Some(&b'{') {
        return false;
    }
    i += 1;
    ws(&mut i);
    if raw.get(i) == Some(&b'}') {
        i += 1;
        ws(&mut i);
        return i == raw.len();
    }
    loop {
        if raw.get(i) != Some(&b'"') || n == names.len() {
            return false;
        }
        let Some(name) = string(&mut i) else {
            return false;
        };
        if names[..n].contains(&name) {
            return false;
        }
        names[n] = name;
        n += 1;
        ws(&mut i);
        if raw.get(i) != Some(&b':') {
            return false;
        }
        i += 1;
        ws(&mut i);
        match raw.get(i) {
            Some(b'"') => {
                if string(&mut i).is_none() {
                    return false;
                }
            }
            Some(b't') if raw[i..].starts_with(b"true") => i += 4,
            Some(b'f') if raw[i..].starts_with(b"false") => i += 5,
            Some(b'n') if raw[i..].starts_with(b"null") => i += 4,
            Some(b'-' | b'0'..=b'9') => {
                let neg = usize::from(raw[i] == b'-');
                let start = i + neg;
                let mut j = start;
                while raw.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
                let digits = j - start;
                // JSON: no leading zero but `0` itself
                if digits == 0 || digits > 18 || (digits > 1 && raw[start] == b'0') {
                    return false;
                }
                i = j;
            }
            _ => return false,
        }
        ws(&mut i);
        match raw.get(i) {
            Some(b',') => {
                i += 1;
                ws(&mut i);
            }
            Some(b'}') => {
                i += 1;
                ws(&mut i);
                return i == raw.len();
            }
            _ => return false,
        }
    }
}

/// [`Skip`] that fails on a value nesting more than its levels of arrays and objects.
#[derive(Clone, Copy)]
struct Depth(usize);

impl Depth {
    fn down<E: de::Error>(self) -> Result<Depth, E> {
        match self.0.checked_sub(1) {
            Some(left) => Ok(Depth(left)),
            None => Err(de::Error::custom("recursion limit exceeded")),
        }
    }
}

walk_seed!(Depth);

impl<'de> Visitor<'de> for Depth {
    walk_scalars!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.down()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let inner = self.down()?;
        let mut names = Names::default();
        while let Some(Key(k)) = access.next_key::<Key<'de>>()? {
            names.add(k)?;
            access.next_value_seed(inner)?;
        }
        Ok(())
    }
}

impl<'de, const N: usize> DeserializeSeed<'de> for MembersSeed<N> {
    type Value = Members<'de, N>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Members<'de, N>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, const N: usize> Visitor<'de> for MembersSeed<N> {
    type Value = Members<'de, N>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Members<'de, N>, E> {
        StrictSeed.visit_bool(v).map(Members::Other)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Members<'de, N>, E> {
        StrictSeed.visit_i64(v).map(Members::Other)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Members<'de, N>, E> {
        StrictSeed.visit_u64(v).map(Members::Other)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Members<'de, N>, E> {
        StrictSeed.visit_f64(v).map(Members::Other)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Members<'de, N>, E> {
        StrictSeed.visit_str(v).map(Members::Other)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Members<'de, N>, E> {
        StrictSeed.visit_string(v).map(Members::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Members<'de, N>, E> {
        StrictSeed.visit_unit().map(Members::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Members<'de, N>, A::Error> {
        StrictSeed.visit_seq(seq).map(Members::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Members<'de, N>, A::Error> {
        let mut slots: Box<[Option<Value>; N]> = Box::new(std::array::from_fn(|_| None));
        let mut lazy: Option<&'de str> = None;
        while let Some(key) = access.next_key::<Key<'de>>()? {
            let Some(i) = self.names.iter().position(|n| *n == key.0) else {
                // another name: the whole object as a map, as `StrictSeed` builds it
                let mut map = Map::new();
                if let (Some(text), Some(at)) = (lazy, self.lazy) {
                    slots[at] = Some(member_value(text).map_err(de::Error::custom)?);
                }
                for (i, v) in slots.iter_mut().enumerate() {
                    if let Some(v) = v.take() {
                        map.insert(self.names[i].to_owned(), v);
                    }
                }
                let value = access.next_value_seed(StrictSeed)?;
                map.insert(key.0.into_owned(), value);
                while let Some(key) = access.next_key::<String>()? {
                    let value = access.next_value_seed(StrictSeed)?;
                    match map.entry(key) {
                        Entry::Vacant(slot) => {
                            slot.insert(value);
                        }
                        Entry::Occupied(slot) => {
                            return Err(de::Error::custom(format_args!(
                                "duplicate key {:?}",
                                slot.key()
                            )));
                        }
                    }
                }
                return Ok(Members::Other(Value::Object(map)));
            };
            if slots[i].is_some() || (self.lazy == Some(i) && lazy.is_some()) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key {:?}",
                    self.names[i]
                )));
            }
            if self.lazy == Some(i) {
                let raw: &'de serde_json::value::RawValue = access.next_value()?;
                let raw = raw.get();
                if raw.starts_with('{') {
                    check_member(raw).map_err(de::Error::custom)?;
                    lazy = Some(raw);
                } else {
                    slots[i] = Some(member_value(raw).map_err(de::Error::custom)?);
                }
                continue;
            }
            slots[i] = Some(access.next_value_seed(StrictSeed)?);
        }
        Ok(Members::Named(slots, lazy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_pass_check_accepts_only_objects_the_strict_parse_accepts() {
        let accepted = [
            r#"{}"#,
            r#"{"a":"b"}"#,
            r#"{ "a" : 1 , "b":-0,"c":true,"d":false,"e":null,"f":"" }"#,
            r#"{"n":999999999999999999,"m":-999999999999999999}"#,
            "{\"\u{e9}\":\"\u{1F600}\"}",
        ];
        let left = [
            // valid, but left to `serde_json`: a tab or line break between tokens
            "{ \"a\" :\t1 ,\n\"b\":\r-0}",
            r#"{"a":1,"a":2}"#,
            r#"{"a":"\n"}"#,
            r#"{"\u0061":1}"#,
            r#"{"n":1000000000000000000}"#,
            r#"{"n":1.5}"#,
            r#"{"n":1e2}"#,
            r#"{"n":01}"#,
            r#"{"n":-}"#,
            r#"{"a":{}}"#,
            r#"{"a":[]}"#,
            r#"{"a":tru}"#,
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17}"#,
            r#"[1]"#,
            r#""s""#,
            r#"{"a":1"#,
            r#"{"a""#,
        ];
        for raw in accepted {
            assert!(flat_object(raw.as_bytes()), "{raw}");
            assert!(matches!(from_str(raw), Ok(Value::Object(_))), "{raw}");
            assert!(check_member(raw).is_ok(), "{raw}");
        }
        for raw in left {
            assert!(!flat_object(raw.as_bytes()), "{raw}");
            // what the one pass leaves is checked as the strict parse checks it
            assert_eq!(check_member(raw).is_ok(), from_str(raw).is_ok(), "{raw}");
        }
    }
}
