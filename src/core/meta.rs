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

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// A `meta` object: a map of JSON values, held as its checked JSON text until it is first
/// read. It dereferences to the map ([`Map`]`<String, Value>`), building it then; equality,
/// `Debug`, serialization and deserialization are the map's.
#[derive(Clone, Default)]
pub struct Meta {
    /// The object's JSON text, already checked strict (a capture record's `meta` as read);
    /// `None` once the map is built or when it was given as a map.
    text: Option<Box<str>>,
    /// The map, built on first read.
    map: OnceLock<Map<String, Value>>,
}

impl Meta {
    /// A `meta` object held as its JSON `text`, which must be one JSON object that the
    /// record's strict parse accepts (checked by the caller): the map built from it later
    /// cannot fail. A text that is not one (a broken caller) builds an empty map.
    pub(crate) fn from_checked_text(text: &str) -> Meta {
        Meta {
            text: Some(text.into()),
            map: OnceLock::new(),
        }
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
