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
pub(super) struct StrictSeed;

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
