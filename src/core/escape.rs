//! Control-character escaping: the one place untrusted text (model output, provider fields,
//! file names, JSON keys) is made safe to show. Two forms:
//!
//! * [`for_terminal`]: a whole text for a screen or a report line (the human, github and
//!   TUI output, every CLI error). Every control character (C0, DEL, C1) and every
//!   [`invisible`] character (the Unicode bidirectional controls, the zero-width marks, the
//!   line and paragraph separators) is written as `\n`, `\r`, `\t`, `\u{1b}` or
//!   `\u{200b}`, so model text and file names can never move the cursor, change colours,
//!   set the window title or the clipboard, reorder what a reader sees, or pass
//!   `go\u{200b}od` off as `good`.
//!   [`quoted`] and [`path`] are the same for a name quoted in a message.
//! * [`quote`] / [`for_message`]: an excerpt inside a finding's message, in the JSON string
//!   notation a reader of JSON expects (`"a\u001b[31m"`): control characters, whitespace
//!   other than the space, and the [`invisible`] characters are `\uXXXX`, so `"5000 "`
//!   and `"5000\u00a0"` read differently.
//! * [`JsonSafe`]: a writer for JSON output (`check --format json|jsonl|sarif`,
//!   `watch --json`, the other commands' `json` and `sarif`) that writes DEL, the C1
//!   controls and the [`invisible`] characters as `\u007f`, `\u0080`..`\u009f`, `\u200b`.
//!   JSON allows them raw in a string and `serde_json` leaves them so; a JSON report shown
//!   on a terminal (`less -R`, a CI log) must not drive it either (`U+009B` is a
//!   one-character CSI to many terminals), nor show `go\u200bod` as `good`.
//!
//! The rules are `docs/commands.md#untrusted-text`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` shows as nothing on a terminal (or reorders what follows, or has no agreed
/// width), so that two different texts would look the same or a screen's columns would
/// shift: every Unicode default-ignorable code point (DerivedCoreProperties.txt,
/// `Default_Ignorable_Code_Point`: the soft hyphen U+00AD, the combining grapheme joiner
/// U+034F, the Arabic letter mark U+061C, the Hangul fillers U+115F, U+1160, U+3164 and
/// U+FFA0, U+17B4..U+17B5, the Mongolian free variation selectors and vowel separator
/// U+180B..U+180F, the zero-width space, joiners and direction marks U+200B..U+200F, the
/// bidirectional embeddings, overrides and isolates U+202A..U+202E and U+2066..U+2069
/// (Unicode TR #9), the word joiner and invisible operators U+2060..U+206F, the variation
/// selectors U+FE00..U+FE0F and U+E0100..U+E01EF, the byte order mark U+FEFF,
/// U+FFF0..U+FFF8, U+1BCA0..U+1BCA3, U+1D173..U+1D17A and the tags U+E0000..U+E0FFF), the
/// interlinear annotation characters U+FFF9..U+FFFB, and the line and paragraph separators
/// U+2028, U+2029.
pub fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Whether a UTF-8 sequence that starts with byte `b` may be one [`JsonSafe`] escapes: DEL,
/// a C1 control (0xC2) or an [`invisible`] character (the lead bytes of the ranges above;
/// the test `every_character_json_safe_escapes_has_a_lead_byte_it_looks_at` holds the two
/// lists together).
const fn escape_lead(b: u8) -> bool {
    matches!(
        b,
        0x7f | 0xc2 | 0xcd | 0xd8 | 0xe1 | 0xe2 | 0xe3 | 0xef | 0xf0 | 0xf3
    )
}

/// [`escape_lead`] of every byte.
static ESCAPE_LEAD: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = escape_lead(b as u8);
        b += 1;
    }
    t
};

/// Whether `c` must never reach a terminal as it is: a control character or [`invisible`].
fn drives_terminal(c: char) -> bool {
    c.is_control() || invisible(c)
}

/// Pushes `s` onto `out` as [`for_terminal`] shows it, `"` and `\` escaped too when `quoted`.
fn push_for_terminal(out: &mut String, s: &str, quoted: bool) {
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' | '\\' if quoted => {
                out.push('\\');
                out.push(c);
            }
            c if drives_terminal(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// `s` with every control character (C0, DEL, C1) and every [`invisible`] character escaped
/// as `\n`, `\t`, `\u{1b}`, `\u{200b}`..., so untrusted model text can never drive the
/// terminal or hide in it. Returns the input unchanged (borrowed) when there is nothing to
/// escape.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    // printable ASCII (most messages) is a byte test, no character decoded
    if s.bytes().all(|b| matches!(b, b' '..=b'~')) || !s.chars().any(drives_terminal) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_for_terminal(&mut out, s, false);
    Cow::Owned(out)
}

/// `s` in double quotes for a message on a terminal (an id, a revision, an argument as the
/// user typed it): [`for_terminal`]'s escapes, and `"` and `\` escaped as `\"` and `\\`:
/// `"evil\u{1b}[2J"`. A plain name reads as Rust's `{:?}` would show it.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    push_for_terminal(&mut out, s, true);
    out.push('"');
    out
}

/// A path for a message on a terminal: its text (lossy when it is not UTF-8) through
/// [`for_terminal`], so a file name holding `ESC`, `CR` or a line break shows as
/// `\u{1b}`, `\r`, `\n`.
pub fn path(p: &std::path::Path) -> String {
    for_terminal(&p.to_string_lossy()).into_owned()
}

/// A whole message for a terminal whose own line breaks are kept (an error with a TOML
/// excerpt below it): each line through [`for_terminal`]. The names the message quotes are
/// escaped where it is built ([`quoted`], [`path`]), line breaks included; this is the last
/// guard where every error is printed.
pub fn lines_for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && drives_terminal(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_for_terminal(&mut out, line, false);
    }
    Cow::Owned(out)
}

/// Pushes `c` as a message shows it; `"` is escaped inside a quoted excerpt.
fn push_for_message(out: &mut String, c: char, quoted: bool) {
    match c {
        '"' if quoted => out.push_str("\\\""),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control() || (c.is_whitespace() && c != ' ') || invisible(c) => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

/// `s` with control, non-space whitespace and invisible characters escaped, for a message.
pub fn for_message(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_for_message(&mut out, c, false);
    }
    out
}

/// At most `max` characters of `s` in double quotes (`…` after a cut), quotes and the
/// characters [`for_message`] escapes escaped: `"a\u001b[31m"`.
pub fn quote(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max) + 2);
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        push_for_message(&mut out, c, true);
    }
    out.push('"');
    out
}

/// A writer of JSON text that escapes DEL (`\u007f`), the C1 controls (`\u0080`..`\u009f`)
/// and the [`invisible`] characters (`\u200b`, `\u202e`, `\u2028`...), which `serde_json`
/// writes raw inside strings (RFC 8259 section 7 requires only U+0000..U+001F escaped): the
/// values read back are unchanged, and the bytes shown on a terminal (`less`, a CI log)
/// neither drive it nor hide (`go\u200bod` is not `good`). The bytes written must be UTF-8
/// JSON: outside strings JSON has no such character, so every one is inside a string and the
/// escape is exact. A character split across two writes is handled (its first bytes are held
/// back until the next write).
pub struct JsonSafe<W: std::io::Write> {
    inner: W,
    /// The first bytes of a character that may need escaping, cut at the end of the last
    /// write, not yet written.
    held: [u8; 3],
    /// How many bytes of `held` are in use.
    held_len: usize,
}

/// The length of the UTF-8 sequence that starts with byte `b` (1 for ASCII).
fn utf8_len(b: u8) -> usize {
    match b {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

/// Whether every byte of `buf` is below DEL (0x7F): ASCII with nothing [`JsonSafe`] escapes.
/// One pass, 32 bytes a step with no early exit inside a step, so the compiler makes it a
/// few vector compares (`is_ascii` then `contains(&0x7f)` were two passes, the second a
/// byte-wise `memchr`: most of a large JSON report's writing cost).
fn below_del(buf: &[u8]) -> bool {
    let mut chunks = buf.chunks_exact(32);
    for c in &mut chunks {
        if c.iter().fold(0u8, |a, &b| a | u8::from(b >= 0x7f)) != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|&b| b < 0x7f)
}

/// The character `bytes` (one whole UTF-8 sequence) holds, when [`JsonSafe`] escapes it.
fn json_escaped(bytes: &[u8]) -> Option<char> {
    let c = std::str::from_utf8(bytes).ok()?.chars().next()?;
    (matches!(c, '\u{7f}'..='\u{9f}') || invisible(c)).then_some(c)
}

impl<W: std::io::Write> JsonSafe<W> {
    /// A writer into `inner`.
    pub fn new(inner: W) -> Self {
        JsonSafe {
            inner,
            held: [0; 3],
            held_len: 0,
        }
    }

    /// The writer it wrote into. Whole writes of UTF-8 text leave nothing held back (only a
    /// write that ends inside a character holds its first bytes until the rest comes).
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// Writes one whole character's bytes, escaped when [`json_escaped`] says so.
    fn write_char(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match json_escaped(bytes) {
            Some(c) => {
                // beyond the Basic Multilingual Plane a JSON escape is a surrogate pair
                // (RFC 8259 section 7)
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(self.inner, "\\u{:04x}", u)?;
                }
                Ok(())
            }
            None => self.inner.write_all(bytes),
        }
    }

    /// Writes `buf` with DEL, the C1 controls and the invisible characters escaped.
    fn escape_into(&mut self, buf: &[u8]) -> std::io::Result<()> {
        let mut pos = 0;
        if self.held_len > 0 {
            // complete the character cut at the end of the last write
            let len = utf8_len(self.held[0]);
            let need = (len - self.held_len).min(buf.len());
            let mut whole = [0u8; 4];
            whole[..self.held_len].copy_from_slice(&self.held[..self.held_len]);
            whole[self.held_len..self.held_len + need].copy_from_slice(&buf[..need]);
            if self.held_len + need < len {
                self.held[..self.held_len + need].copy_from_slice(&whole[..self.held_len + need]);
                self.held_len += need;
                return Ok(());
            }
            self.held_len = 0;
            self.write_char(&whole[..len])?;
            pos = need;
        }
        let buf = &buf[pos..];
        // the common case, writes of ASCII without DEL: nothing to look at
        if below_del(buf) {
            return self.inner.write_all(buf);
        }
        // the lead bytes of what may be escaped ([`escape_lead`])
        let mut at = 0;
        let mut start = 0;
        while let Some(i) = buf[at..]
            .iter()
            .position(|&b| ESCAPE_LEAD[b as usize])
            .map(|i| i + at)
        {
            let len = utf8_len(buf[i]);
            if i + len > buf.len() {
                self.inner.write_all(&buf[start..i])?;
                let cut = buf.len() - i;
                self.held[..cut].copy_from_slice(&buf[i..]);
                self.held_len = cut;
                return Ok(());
            }
            if json_escaped(&buf[i..i + len]).is_some() {
                self.inner.write_all(&buf[start..i])?;
                self.write_char(&buf[i..i + len])?;
                start = i + len;
            }
            at = i + len;
        }
        self.inner.write_all(&buf[start..])
    }
}

impl<W: std::io::Write> std::io::Write for JsonSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.escape_into(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.escape_into(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // a held lead byte is half a character: it goes out with its continuation
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_del_is_every_byte_below_0x7f() {
        for len in 0..70 {
            assert!(below_del(&vec![b'a'; len]));
            assert!(below_del(&vec![0x7e; len]));
            for at in 0..len {
                for byte in [0x00, 0x1f, 0x7e, 0x7f, 0x80, 0xc2, 0xe2, 0xff] {
                    let mut b = vec![b'a'; len];
                    b[at] = byte;
                    assert_eq!(below_del(&b), byte < 0x7f, "{len} {at} {byte:#x}");
                }
            }
        }
    }

    #[test]
    fn terminal_escaping() {
        assert!(matches!(for_terminal("plain é 🙂"), Cow::Borrowed(_)));
        assert_eq!(
            for_terminal("\u{1b}[31mred\u{7}\n\u{202e}x\u{9b}"),
            "\\u{1b}[31mred\\u{7}\\n\\u{202e}x\\u{9b}"
        );
    }

    #[test]
    fn invisible_characters_show_escaped() {
        assert_eq!(for_terminal("go\u{200b}od"), "go\\u{200b}od");
        for (c, shown) in [
            ('\u{200b}', "\\u{200b}"),
            ('\u{200c}', "\\u{200c}"),
            ('\u{200d}', "\\u{200d}"),
            ('\u{200e}', "\\u{200e}"),
            ('\u{200f}', "\\u{200f}"),
            ('\u{061c}', "\\u{61c}"),
            ('\u{2060}', "\\u{2060}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{2029}', "\\u{2029}"),
            ('\u{202a}', "\\u{202a}"),
            ('\u{202e}', "\\u{202e}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{2069}', "\\u{2069}"),
        ] {
            assert_eq!(
                for_terminal(&format!("a{c}b")),
                format!("a{shown}b"),
                "{c:?}"
            );
        }
        // visible neighbours stay as they are
        for c in [
            '\u{2010}', '\u{2027}', '\u{202f}', '\u{2070}', '\u{fefe}', 'é', '\u{ac}', '\u{ae}',
        ] {
            assert_eq!(for_terminal(&c.to_string()), c.to_string(), "{c:?}");
        }
        assert_eq!(quote("x\u{2060}\u{061c}", 8), "\"x\\u2060\\u061c\"");
    }

    /// Every Unicode scalar value, alone in a JSON string through [`JsonSafe`]: DEL, the C1
    /// controls and the [`invisible`] characters come out escaped (a surrogate pair beyond
    /// U+FFFF), every other character as it is, and the text reads back the same; and
    /// [`for_terminal`] escapes exactly the controls and the invisible characters.
    #[test]
    fn every_character_json_safe_escapes_has_a_lead_byte_it_looks_at() {
        use std::io::Write;
        let mut escaped = 0;
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            if c < ' ' || c == '"' || c == '\\' {
                continue;
            }
            let text = format!("\"{c}\"");
            let mut w = JsonSafe::new(Vec::new());
            w.write_all(text.as_bytes()).unwrap();
            let out = String::from_utf8(w.inner).unwrap();
            let escapes = matches!(c, '\u{7f}'..='\u{9f}') || invisible(c);
            assert_eq!(out != text, escapes, "{:04x}: {out}", c as u32);
            assert_eq!(
                serde_json::from_str::<String>(&out).unwrap(),
                c.to_string(),
                "{:04x}",
                c as u32
            );
            assert_eq!(
                for_terminal(&c.to_string()) != c.to_string(),
                c.is_control() || invisible(c),
                "{:04x}",
                c as u32
            );
            escaped += usize::from(escapes);
        }
        // DEL and the 32 C1 controls, and 4,179 invisible characters
        assert_eq!(escaped, 33 + 4_179);
    }

    #[test]
    fn json_safe_escapes_del_c1_and_invisible_characters_even_split_across_writes() {
        use std::io::Write;
        let text = "{\"id\":\"a\u{7f}b\u{85}c\u{9b}d\u{a0}e\u{9f}\u{80}é go\u{200b}od a\u{202e}b \u{2028}\u{2029}\u{61c}\u{feff}\u{2069}’—한🙂 so\u{ad}ft \u{3164}t\u{e0041}\"}";
        let want = "{\"id\":\"a\\u007fb\\u0085c\\u009bd\u{a0}e\\u009f\\u0080é go\\u200bod a\\u202eb \\u2028\\u2029\\u061c\\ufeff\\u2069’—한🙂 so\\u00adft \\u3164t\\udb40\\udc41\"}";
        let mut whole = JsonSafe::new(Vec::new());
        whole.write_all(text.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(whole.inner).unwrap(), want);
        // every split point, the two-byte characters cut in half included
        for cut in 0..text.len() {
            let mut split = JsonSafe::new(Vec::new());
            split.write_all(&text.as_bytes()[..cut]).unwrap();
            split.write_all(&text.as_bytes()[cut..]).unwrap();
            assert_eq!(
                String::from_utf8(split.inner).unwrap(),
                want,
                "cut at {cut}"
            );
        }
        let v: serde_json::Value = serde_json::from_str(want).unwrap();
        assert_eq!(
            v["id"],
            "a\u{7f}b\u{85}c\u{9b}d\u{a0}e\u{9f}\u{80}é go\u{200b}od a\u{202e}b \u{2028}\u{2029}\u{61c}\u{feff}\u{2069}’—한🙂 so\u{ad}ft \u{3164}t\u{e0041}"
        );
        // every split into three writes, a character cut in three included
        for a in 0..text.len() {
            for b in a..text.len() {
                let mut split = JsonSafe::new(Vec::new());
                for part in [
                    &text.as_bytes()[..a],
                    &text.as_bytes()[a..b],
                    &text.as_bytes()[b..],
                ] {
                    split.write_all(part).unwrap();
                }
                assert_eq!(
                    String::from_utf8(split.inner).unwrap(),
                    want,
                    "cuts at {a}, {b}"
                );
            }
        }
    }

    #[test]
    fn message_excerpts() {
        assert_eq!(quote("a\u{1b}[31m", 32), "\"a\\u001b[31m\"");
        assert_eq!(quote("say \"hi\"", 32), "\"say \\\"hi\\\"\"");
        assert_eq!(quote("5000\u{a0}", 32), "\"5000\\u00a0\"");
        assert_eq!(quote("\u{feff}x", 32), "\"\\ufeffx\"");
        assert_eq!(quote("abcdef", 3), "\"abc…\"");
        assert_eq!(for_message("/a\tb"), "/a\\tb");
    }
}
