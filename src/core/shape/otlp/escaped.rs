//! The first output message of `gen_ai.output.messages` read straight from the record's
//! text (`docs/record-shapes.md#traces`): the attribute's JSON text is written there as a
//! JSON string, every `"` of it as `\"`, every `\` as `\\`; this reader walks that escaped
//! text as the JSON it stands for, without first building the string (which the byte scan,
//! [`super::scan`], would decode only for [`super::scan::first_message`] to read again).
//!
//! It gives what [`super::scan::first_message`] gives for the decoded text, under the same
//! rules, and `None` (the caller then decodes the string and reads it that way) at the
//! first thing it is not sure of: a `\u` escape at either level, a number that is not an
//! integer of at most 18 digits, `-0`, a raw control character inside a string, a member
//! name with an escape, more than [`MAX_KEYS`](super::cursor::MAX_KEYS) members in an object, nesting deeper than
//! [`MAX_DEPTH`]. A test compares the two on texts built to trip it and on mutated ones.

use super::Message;
use super::cursor::{Cursor, Scanned, Unsure};

/// The deepest nesting read (the record's own nesting is far below serde_json's 128).
const MAX_DEPTH: u32 = 32;

/// The first message of the JSON array whose text, escaped as a JSON string, is `raw` (the
/// body of a string token the byte scan checked: no `\u`, no raw control character), as
/// [`super::scan::first_message`] reads the decoded text; `None` when this reader leaves it.
pub(super) fn first_message(raw: &str) -> Option<Option<Message>> {
    let mut r = Esc {
        t: raw,
        b: raw.as_bytes(),
        i: 0,
        depth: 0,
    };
    let out = r.first_message().ok()?;
    r.ws();
    (r.i == r.b.len()).then_some(out)
}

/// The character a JSON two-character escape `\c` stands for (`None`: `\u`, or no escape).
fn unescape(c: u8) -> Option<u8> {
    Some(match c {
        b'"' | b'\\' | b'/' => c,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// A cursor on the escaped text: byte `i` of the raw text.
struct Esc<'a> {
    t: &'a str,
    b: &'a [u8],
    i: usize,
    depth: u32,
}

impl<'a> Esc<'a> {
    /// The inner JSON's next byte and how many raw bytes it takes (an escape two).
    #[inline]
    fn at(&self) -> Option<(u8, usize)> {
        match *self.b.get(self.i)? {
            b'\\' => Some((unescape(*self.b.get(self.i + 1)?)?, 2)),
            c => Some((c, 1)),
        }
    }

    /// Skips the inner JSON's white space (a raw space, or an escaped `\n`, `\r`, `\t`).
    fn ws(&mut self) {
        while let Some((c, n)) = self.at() {
            if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.i += n;
        }
    }

    /// An inner string's value: its bytes decoded at both levels (byte by byte: the JSON
    /// texts proposals are have an escape every few bytes, too close for a search).
    fn text(&mut self) -> Scanned<String> {
        self.eat(b'"')?;
        let b = self.b;
        let mut out: Vec<u8> = Vec::with_capacity((b.len() - self.i).min(512));
        let mut i = self.i;
        loop {
            let c = *b.get(i).ok_or(Unsure)?;
            if c != b'\\' {
                // a raw byte is plain text at both levels
                out.push(c);
                i += 1;
                continue;
            }
            match b.get(i + 1) {
                // `\"`: the inner string's closing quote
                Some(b'"') => {
                    i += 2;
                    break;
                }
                // `\\`: an inner escape, its letter itself written `\"`, `\\` or plain
                Some(b'\\') => {
                    let (e, len) = match b.get(i + 2) {
                        Some(b'\\') => (unescape(*b.get(i + 3).ok_or(Unsure)?).ok_or(Unsure)?, 2),
                        Some(&e) => (e, 1),
                        None => return Err(Unsure),
                    };
                    out.push(unescape(e).ok_or(Unsure)?);
                    i += 2 + len;
                }
                // any other outer escape: a control character or `/` in the inner string
                // (the first not JSON, the second rare): left to the decoded reading
                _ => return Err(Unsure),
            }
        }
        self.i = i;
        String::from_utf8(out).map_err(|_| Unsure)
    }
}

impl<'a> Cursor<'a> for Esc<'a> {
    /// The inner JSON's next byte that is not white space (the cursor put on it).
    fn peek(&mut self) -> Scanned<u8> {
        self.ws();
        self.at().map(|(c, _)| c).ok_or(Unsure)
    }
    /// Takes the inner byte `c` at the cursor (after white space).
    fn eat(&mut self, c: u8) -> Scanned<()> {
        self.ws();
        match self.at() {
            Some((x, n)) if x == c => {
                self.i += n;
                Ok(())
            }
            _ => Err(Unsure),
        }
    }

    fn enter(&mut self) -> Scanned<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unsure);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A member name without any escape (written `\"name\"`): borrowed from the text.
    fn name(&mut self) -> Scanned<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        // the name ends at the next backslash, which must open the closing `\"`
        let n = memchr::memchr(b'\\', &self.b[start..]).ok_or(Unsure)?;
        if self.b.get(start + n + 1) != Some(&b'"') {
            return Err(Unsure);
        }
        self.i = start + n + 2;
        Ok(&self.t[start..start + n])
    }

    fn owned_text(&mut self) -> Scanned<String> {
        self.text()
    }

    fn skip_text(&mut self) -> Scanned<()> {
        self.text().map(|_| ())
    }

    fn position(&mut self) -> (&'a str, &mut usize) {
        (self.t, &mut self.i)
    }
}

#[cfg(test)]
mod tests {
    /// `text` written as the body of a JSON string token (what the record holds).
    fn escape(text: &str) -> String {
        let token = serde_json::to_string(text).expect("a string");
        token[1..token.len() - 1].to_owned()
    }

    /// The escaped reading gives the byte scan's first message of the decoded text on every
    /// text it reads: texts built to trip it, and a typical text with a byte deleted or a
    /// character put in at every place, and that text written with white space escaped.
    #[test]
    fn the_escaped_reading_is_the_scans() {
        let typical = r#"[{"role":"assistant","parts":[{"type":"text","content":"{\"a\":1,\"b\":[true,null],\"c\":\"x\\/y\\n\"}"},{"type":"tool_call","id":"c1","name":"refund","arguments":{"amount":12,"note":"a \"b\""}}],"finish_reason":"stop"},{"role":"x","n":[1,-2]}]"#;
        let texts = [
            typical,
            "[]",
            "[\n  {\"parts\": [\t{\"type\": \"text\", \"content\": \"ab\"}],\r\n \"finish_reason\": \"length\"}\n]",
            r#"[{"parts":[{"type":"text","content":"ab"},{"type":"text","content":"cd"},{"type":"text","content":7},{"type":"text"}]}]"#,
            r#"[{"parts":[{"type":"tool_call","name":7,"arguments":"{\"x\":1}"},{"type":"tool_call","arguments":null}]}]"#,
            r#"[{"parts":[{"type":"reasoning","content":"hm"},"text",7,null,[1,{"a":2}],{"content":"no type"}]}]"#,
            r#"[{"parts":{"type":"text","content":"not a list"},"finish_reason":["stop"]}]"#,
            r#"["a string", {"parts":[{"type":"text","content":"second é 日本"}]}]"#,
            r#"[7]"#,
            r#"[{"finish_reason":"length"},{"x":false}]"#,
        ];
        for t in texts {
            let raw = escape(t);
            let read = super::first_message(&raw);
            assert!(read.is_some(), "left: {t}");
            assert_eq!(read, super::super::scan::first_message(t), "{t}");
        }
        for t in [
            r#"{"parts":[]}"#,
            r#"[{"parts":[],"parts":[]}]"#,
            r#"[0.5]"#,
            r#"[-0]"#,
            r#"["\u00e9"]"#,
            "[\"tab\tin a string\"]",
            r#"[{"a\/b":1}]"#,
            r#"[1] 2"#,
        ] {
            assert_eq!(super::first_message(&escape(t)), None, "{t}");
        }
        let mut read = 0;
        for i in 0..typical.len() {
            let mut mutated = vec![format!("{}{}", &typical[..i], &typical[i + 1..])];
            for c in [
                "\"", "{", "}", "[", "]", ",", ":", "\\", "0", "a", " ", "\n",
            ] {
                mutated.push(format!("{}{c}{}", &typical[..i], &typical[i..]));
            }
            for t in &mutated {
                if let Some(m) = super::first_message(&escape(t)) {
                    assert_eq!(Some(m), super::super::scan::first_message(t), "{t}");
                    read += 1;
                }
            }
        }
        assert!(read > 800, "{read} mutated texts read");
    }
}
