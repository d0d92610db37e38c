//! The first output message of `gen_ai.output.messages` written as a JSON string (what
//! the GenAI instrumentations write; `docs/record-shapes.md#traces`), read by a typed
//! walk that builds only what [`super::message_of`] reads of it: each part's `type`,
//! `content`, `name`, `id` and `arguments`, and the message's `finish_reason`. The rest of
//! the text is walked as the strict parse walks it ([`Skip`]: repeated member names, lone
//! surrogates, numbers not held exactly and nesting past
//! [`crate::core::stage::parse::MAX_DEPTH`] refused just the same).
//!
//! It gives the message only when the text is a strict JSON array; any other text (not
//! JSON, not an array) gives `None`, and the caller reads it the general way (the strict
//! parse, then [`super::message_of`]), which gives the verdict it always gave. So the two
//! readings agree on every text: this one is only faster.

use super::Message;
use crate::core::adapter::{self, ToolCall};
use crate::core::stage::parse::{
    StrictKey as Key, StrictNames as Names, StrictSeed, StrictSkip as Skip,
};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The first message of the JSON array `text` as [`super::message_of`] reads it (`None`
/// inside when the array is empty); `None` when the text is not a strict JSON array.
pub(super) fn first(text: &str) -> Option<Option<Message>> {
    crate::core::stage::parse::strict_seed(text, First).ok()
}

/// Leaves the text to the general reading.
fn general<E: de::Error>() -> E {
    E::custom("read the general way")
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

seeds_by_visitor!(First, MessageSeed, Parts, Part, Text);

/// The array of messages: its first message, the others walked.
struct First;

impl<'de> Visitor<'de> for First {
    type Value = Option<Message>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
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
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(general())
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(general())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let first = seq.next_element_seed(MessageSeed)?;
        if first.is_some() {
            while seq.next_element_seed(Skip)?.is_some() {}
        }
        Ok(first)
    }
}

/// A message: an object's `parts` and `finish_reason`; any other value a message with
/// neither (as `Value::get` finds nothing in it).
struct MessageSeed;

fn empty() -> Message {
    Message {
        text: None,
        calls: Vec::new(),
        finish: None,
    }
}

impl<'de> Visitor<'de> for MessageSeed {
    type Value = Message;
    scalars_give!(empty());
    fn visit_str<E>(self, _: &str) -> Result<Message, E> {
        Ok(empty())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Message, A::Error> {
        Skip.visit_seq(seq).map(|()| empty())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let mut names = Names::default();
        let mut m = empty();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            names.add(k.clone())?;
            match &*k {
                "parts" => {
                    (m.text, m.calls) = map.next_value_seed(Parts)?;
                }
                "finish_reason" => m.finish = map.next_value_seed(Text)?,
                _ => map.next_value_seed(Skip)?,
            }
        }
        Ok(m)
    }
}

/// A message's `parts`: an array's `text` parts' content joined and its `tool_call` parts
/// as calls; any other value none.
struct Parts;

impl<'de> Visitor<'de> for Parts {
    type Value = (Option<String>, Vec<ToolCall>);
    scalars_give!((None, Vec::new()));
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok((None, Vec::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Skip.visit_map(map).map(|()| (None, Vec::new()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (mut text, mut calls): (Option<String>, _) = (None, Vec::new());
        while let Some(part) = seq.next_element_seed(Part)? {
            match part {
                Some(PartOf::Text(Some(c))) => match &mut text {
                    None => text = Some(c),
                    Some(t) => t.push_str(&c),
                },
                Some(PartOf::Call(call)) => calls.push(call),
                Some(PartOf::Text(None)) | None => {}
            }
        }
        Ok((text, calls))
    }
}

/// What a part gives: a `text` part its string `content`, a `tool_call` part its call.
enum PartOf {
    Text(Option<String>),
    Call(ToolCall),
}

/// A part: `None` for a part of another type, or not an object.
struct Part;

impl<'de> Visitor<'de> for Part {
    type Value = Option<PartOf>;
    scalars_give!(None);
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Skip.visit_seq(seq).map(|()| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = Names::default();
        let (mut kind, mut content, mut name, mut id, mut args) = (None, None, None, None, None);
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            names.add(k.clone())?;
            match &*k {
                "type" => kind = map.next_value_seed(Text)?,
                "content" => content = map.next_value_seed(Text)?,
                "name" => name = map.next_value_seed(Text)?,
                "id" => id = map.next_value_seed(Text)?,
                "arguments" => args = Some(map.next_value_seed(StrictSeed)?),
                _ => map.next_value_seed(Skip)?,
            }
        }
        Ok(match kind.as_deref() {
            Some("text") => Some(PartOf::Text(content)),
            Some("tool_call") => Some(PartOf::Call(ToolCall {
                name,
                id,
                args: adapter::args_text_or_value(args.as_ref()),
            })),
            _ => None,
        })
    }
}

/// A string member: the string, `None` for any other value.
struct Text;

impl<'de> Visitor<'de> for Text {
    type Value = Option<String>;
    scalars_give!(None);
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Skip.visit_seq(seq).map(|()| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Skip.visit_map(map).map(|()| None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::message_of;
    use super::first;
    use serde_json::Value;

    /// The general reading: the strict parse, then the first element through `message_of`;
    /// `None` when the text is not a strict JSON array.
    fn general(text: &str) -> Option<Option<super::Message>> {
        match crate::core::stage::parse::parse_strict(text) {
            Ok(Value::Array(ms)) => Some(ms.first().map(message_of)),
            _ => None,
        }
    }

    /// The typed reading gives what the strict parse and `message_of` give, on every text
    /// it reads, and leaves to the general reading exactly the texts that are not strict
    /// JSON arrays.
    #[test]
    fn the_typed_reading_is_the_general_one() {
        let texts = [
            r#"[{"role":"assistant","parts":[{"type":"text","content":"{\"a\":1}"}],"finish_reason":"stop"}]"#,
            r#"[]"#,
            r#"[{"parts":[{"type":"text","content":"ab"},{"type":"text","content":"cd"},{"type":"text","content":7},{"type":"text"}]}]"#,
            r#"[{"parts":[{"type":"tool_call","id":"c1","name":"refund","arguments":{"amount":1.5}},{"type":"tool_call","name":7,"arguments":"{\"x\":1}"},{"type":"tool_call","arguments":null}]}]"#,
            r#"[{"parts":[{"type":"reasoning","content":"hm"},"text",7,null,[1,{"a":2}],{"content":"no type"}]}]"#,
            r#"[{"parts":{"type":"text","content":"not a list"},"finish_reason":["stop"]}]"#,
            r#"[{"parts":"x","finish_reason":7.25,"extra":{"deep":[[[{}]]]}}]"#,
            r#"["a message that is a string", {"parts":[{"type":"text","content":"second"}]}]"#,
            r#"[7]"#,
            r#"[null]"#,
            r#"[[{"parts":[]}]]"#,
            r#"[{"finish_reason":"length"},{"x":1}]"#,
            r#"[{"parts":[{"type":"text","content":"\u00e9\ud83d\ude00"}]}]"#,
            // not strict JSON arrays: left to the general reading
            r#"{"parts":[]}"#,
            r#""[]""#,
            r#"7"#,
            r#"[{"parts":[],"parts":[]}]"#,
            r#"[{"parts":[{"type":"text","type":"text","content":"x"}]}]"#,
            r#"[{"parts":[]}, {"a":1,"a":2}]"#,
            r#"[{"parts":[{"type":"text","content":"\ud800"}]}]"#,
            r#"[{"parts":[{"type":"text","content":"x"}]}"#,
            r#"[{"parts":[]}] trailing"#,
            r#"[1e400]"#,
            r#"[{"finish_reason":"stop","n":12345678901234567890123}]"#,
        ];
        let mut read = 0;
        for t in texts {
            let typed = first(t);
            assert_eq!(typed, general(t), "{t}");
            read += usize::from(typed.is_some());
        }
        assert_eq!(read, 13, "the texts the typed reading reads");
    }
}
