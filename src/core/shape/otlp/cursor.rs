//! What the two byte readers of an OTLP record share (`docs/record-shapes.md#traces`): the
//! byte scan of the record's text ([`super::scan`]) and the reader of a JSON text written
//! inside one of its strings ([`super::escaped`]). Each gives the primitives over its own
//! bytes (a byte at the cursor, an object, an array, a string, an integer, a literal);
//! everything built of them is written once here: any value, a checked skip, and the first
//! output message of `gen_ai.output.messages` as [`super::message_of`] reads it.

use super::Message;
use crate::core::adapter::{self, ToolCall};
use serde_json::{Map, Value};

/// The reader is not sure: the text goes to the next reading (see each reader's doc).
pub(super) struct Unsure;

/// A reading, or [`Unsure`].
pub(super) type Scanned<T> = Result<T, Unsure>;

/// The most members an object may have for a reader to be sure of it (its repeated-name
/// check is a linear search); more is [`Unsure`].
pub(super) const MAX_KEYS: usize = 32;

/// A message with no text, no call and no finish reason.
pub(super) fn no_message() -> Message {
    Message {
        text: None,
        calls: Vec::new(),
        finish: None,
    }
}

/// The integer token of `t` at byte `start` and where it ends: `-?(0|[1-9][0-9]*)` of at
/// most 18 characters. A double (`.`, `e` after it), a longer integer and `-0` (which
/// serde_json reads as a double, whose exactness the strict parse checks) are [`Unsure`].
pub(super) fn integer(t: &str, start: usize) -> Scanned<(Value, usize)> {
    let b = t.as_bytes();
    let mut j = start + usize::from(b.get(start) == Some(&b'-'));
    match b.get(j) {
        Some(b'0') => j += 1,
        Some(b'1'..=b'9') => {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
        }
        _ => return Err(Unsure),
    }
    let token = &t[start..j];
    if matches!(b.get(j), Some(b'.' | b'e' | b'E')) || j - start > 18 || token == "-0" {
        return Err(Unsure);
    }
    let v = if token.starts_with('-') {
        Value::from(token.parse::<i64>().map_err(|_| Unsure)?)
    } else {
        Value::from(token.parse::<u64>().map_err(|_| Unsure)?)
    };
    Ok((v, j))
}

/// Where the literal `word` at byte `i` of `b` ends.
pub(super) fn literal(b: &[u8], i: usize, word: &[u8]) -> Scanned<usize> {
    if !b[i..].starts_with(word) {
        return Err(Unsure);
    }
    Ok(i + word.len())
}

/// A JSON reader over some bytes, `'a` the text its member names borrow from.
pub(super) trait Cursor<'a>: Sized {
    /// The next byte that is not white space (the cursor put on it).
    fn peek(&mut self) -> Scanned<u8>;

    /// Takes the byte `c`, the next that is not white space; [`Unsure`] when another is.
    fn eat(&mut self, c: u8) -> Scanned<()>;

    /// One level deeper; [`Unsure`] past the reader's depth limit.
    fn enter(&mut self) -> Scanned<()>;

    /// One level back up.
    fn leave(&mut self);

    /// A member name at the cursor, borrowed from the text; [`Unsure`] for one written with
    /// an escape.
    fn name(&mut self) -> Scanned<&'a str>;

    /// An object, `member` called with each member's name, the cursor on its value (which
    /// `member` reads whole); a repeated name, or more than [`MAX_KEYS`] members, is
    /// [`Unsure`].
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Scanned<()>) -> Scanned<()> {
        self.eat(b'{')?;
        self.enter()?;
        if self.peek()? == b'}' {
            self.eat(b'}')?;
            self.leave();
            return Ok(());
        }
        let mut names: [&str; MAX_KEYS] = [""; MAX_KEYS];
        let mut n = 0;
        loop {
            let k = self.name()?;
            if n == MAX_KEYS || names[..n].contains(&k) {
                return Err(Unsure);
            }
            names[n] = k;
            n += 1;
            self.eat(b':')?;
            member(self, k)?;
            match self.peek()? {
                b',' => self.eat(b',')?,
                b'}' => {
                    self.eat(b'}')?;
                    break;
                }
                _ => return Err(Unsure),
            }
        }
        self.leave();
        Ok(())
    }

    /// An array, `element` called with each element's index, the cursor on it (which
    /// `element` reads whole).
    fn array(&mut self, mut element: impl FnMut(&mut Self, usize) -> Scanned<()>) -> Scanned<()> {
        self.eat(b'[')?;
        self.enter()?;
        if self.peek()? == b']' {
            self.eat(b']')?;
            self.leave();
            return Ok(());
        }
        for k in 0.. {
            element(self, k)?;
            match self.peek()? {
                b',' => self.eat(b',')?,
                b']' => {
                    self.eat(b']')?;
                    break;
                }
                _ => return Err(Unsure),
            }
        }
        self.leave();
        Ok(())
    }

    /// The string a string token at the cursor stands for.
    fn owned_text(&mut self) -> Scanned<String>;

    /// A string token at the cursor, checked, building nothing.
    fn skip_text(&mut self) -> Scanned<()>;

    /// The text the cursor is in and its byte index there, to move it.
    fn position(&mut self) -> (&'a str, &mut usize);

    /// An integer token at the cursor ([`integer`]).
    fn number(&mut self) -> Scanned<Value> {
        let (t, i) = self.position();
        let (v, end) = integer(t, *i)?;
        *i = end;
        Ok(v)
    }

    /// The literal `word` at the cursor.
    fn literal(&mut self, word: &[u8]) -> Scanned<()> {
        let (t, i) = self.position();
        *i = literal(t.as_bytes(), *i, word)?;
        Ok(())
    }

    /// Any value, built as the strict parse builds it.
    fn value(&mut self) -> Scanned<Value> {
        Ok(match self.peek()? {
            b'"' => Value::String(self.owned_text()?),
            b'{' => {
                let mut m = Map::new();
                self.object(|s, k| {
                    let v = s.value()?;
                    m.insert(k.to_owned(), v);
                    Ok(())
                })?;
                Value::Object(m)
            }
            b'[' => {
                let mut a = Vec::new();
                self.array(|s, _| {
                    a.push(s.value()?);
                    Ok(())
                })?;
                Value::Array(a)
            }
            b't' => self.literal(b"true").map(|()| Value::Bool(true))?,
            b'f' => self.literal(b"false").map(|()| Value::Bool(false))?,
            b'n' => self.literal(b"null").map(|()| Value::Null)?,
            _ => self.number()?,
        })
    }

    /// Any value, checked, building nothing.
    fn skip(&mut self) -> Scanned<()> {
        match self.peek()? {
            b'"' => self.skip_text(),
            b'{' => self.object(|s, _| s.skip()),
            b'[' => self.array(|s, _| s.skip()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(|_| ()),
        }
    }

    /// An array of messages: its first message, the others checked.
    fn first_message(&mut self) -> Scanned<Option<Message>> {
        let mut first = None;
        self.array(|s, k| {
            if k == 0 {
                first = Some(s.message()?);
                Ok(())
            } else {
                s.skip()
            }
        })?;
        Ok(first)
    }

    /// A message: an object's `parts` and string `finish_reason`; any other value a message
    /// with neither (as `Value::get` finds nothing in it).
    fn message(&mut self) -> Scanned<Message> {
        let mut m = no_message();
        if self.peek()? != b'{' {
            self.skip()?;
            return Ok(m);
        }
        self.object(|s, k| {
            match k {
                "parts" => (m.text, m.calls) = s.parts()?,
                "finish_reason" => m.finish = s.string_or_none()?,
                _ => s.skip()?,
            }
            Ok(())
        })?;
        Ok(m)
    }

    /// A string's value, `None` for any other value (checked).
    fn string_or_none(&mut self) -> Scanned<Option<String>> {
        if self.peek()? == b'"' {
            return self.owned_text().map(Some);
        }
        self.skip().map(|()| None)
    }

    /// A message's `parts`: an array's `text` parts' string content joined and its
    /// `tool_call` parts as calls; any other value none.
    fn parts(&mut self) -> Scanned<(Option<String>, Vec<ToolCall>)> {
        let (mut text, mut calls): (Option<String>, Vec<ToolCall>) = (None, Vec::new());
        if self.peek()? != b'[' {
            self.skip()?;
            return Ok((text, calls));
        }
        self.array(|s, _| {
            if s.peek()? != b'{' {
                return s.skip();
            }
            let (mut kind, mut content, mut name, mut id, mut args) =
                (None, None, None, None, None);
            s.object(|s, k| {
                match k {
                    "type" => kind = s.string_or_none()?,
                    "content" => content = s.string_or_none()?,
                    "name" => name = s.string_or_none()?,
                    "id" => id = s.string_or_none()?,
                    "arguments" => args = Some(s.value()?),
                    _ => s.skip()?,
                }
                Ok(())
            })?;
            match kind.as_deref() {
                Some("text") => {
                    if let Some(c) = content {
                        match &mut text {
                            None => text = Some(c),
                            Some(t) => t.push_str(&c),
                        }
                    }
                }
                Some("tool_call") => calls.push(ToolCall {
                    name,
                    id,
                    args: adapter::args_text_or_value(args.as_ref()),
                }),
                _ => {}
            }
            Ok(())
        })?;
        Ok((text, calls))
    }
}
