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

/// `serde_json::from_str::<Value>` that also rejects duplicate keys.
pub(super) fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = StrictSeed.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}
