//! The slow path and [`locate`](super::locate): a small strict RFC 8259 scanner.
//!
//! It walks the text once, iteratively (an explicit stack, never recursion, so a
//! 10,000-deep array cannot overflow the call stack), and stops at the FIRST problem,
//! which it classifies precisely with the byte span of the offending token. It agrees
//! with `serde_json` on what is valid: the same grammar (RFC 8259 sections 2 to 7), the
//! same nesting limit ([`MAX_DEPTH`]), the same number range, the same surrogate rules.
//!
//! In locate mode it skips duplicate detection and instead records the span of the value
//! at a JSON Pointer (RFC 6901), the last duplicate winning as in the parsed value.

use super::MAX_DEPTH;
use crate::core::verdict::Span;
use std::collections::HashSet;
use std::fmt::Write as _;

/// The class of a problem; maps one to one onto the parse-stage reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Invalid,
    Truncated,
    DuplicateKey,
    NonStandardNumber,
    TrailingContent,
    Fenced,
    TooDeep,
}

/// The first problem of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub kind: Kind,
    pub span: Span,
    pub message: String,
    /// The pointer of a duplicated key.
    pub pointer: Option<String>,
    /// The text does not start with a value at all (prose, a fence): worth looking for
    /// an embedded value (`FENCED_JSON`).
    pub prose: bool,
}

impl Problem {
    fn new(kind: Kind, start: usize, end: usize, message: String) -> Problem {
        Problem {
            kind,
            span: Span { start, end },
            message,
            pointer: None,
            prose: false,
        }
    }
}

/// One open array or object.
struct Frame {
    start: usize,
    object: bool,
    /// Index of the current element (arrays).
    index: usize,
    /// The current member name, decoded (objects, when tracked).
    key: String,
    /// Every member name seen so far (objects, duplicate detection only).
    keys: HashSet<String>,
    /// Locate: this container's path is a proper prefix of the target path.
    on_path: bool,
    /// Locate: the current member name is the next target token.
    key_match: bool,
    /// Locate: this container is the target value.
    target: bool,
}

/// Locate mode: the reference tokens of the pointer and the best span so far.
struct Target<'p> {
    tokens: &'p [String],
    /// Each token read as an array index (RFC 6901 section 4), if it is one.
    index: Vec<Option<usize>>,
    found: Option<Span>,
    /// Stop scanning once the value is found: the text is known to be strict JSON (no
    /// duplicate member names), so nothing after it can replace it.
    stop_when_found: bool,
}

struct Scanner<'a, 'p> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    stack: Vec<Frame>,
    dups: bool,
    target: Option<Target<'p>>,
}

/// Checks `text` as one strict JSON document; `Err` holds its first problem.
/// `FENCED_JSON` is recognized here too.
pub(crate) fn check(text: &str) -> Result<(), Problem> {
    let mut s = Scanner::new(text, true, None);
    let Err(mut p) = s.document() else {
        return Ok(());
    };
    if p.prose {
        if let Some(inner) = find_embedded(text) {
            let before = &text[..inner.start];
            let fence = before.trim_end().rsplit('\n').next().is_some_and(|l| {
                l.trim_start().starts_with("```") || l.trim_start().starts_with("~~~")
            });
            // the first line of what stands before the value, as the user sees it
            let first = text[p.span.start..inner.start]
                .split('\n')
                .next()
                .unwrap_or("")
                .trim_end();
            let message = if fence {
                format!(
                    "the JSON value is wrapped in a markdown code fence: expected the text to start with the value, found {}",
                    quote(first)
                )
            } else {
                format!(
                    "the JSON value is preceded by prose: expected the text to start with the value, found {}",
                    quote(first)
                )
            };
            p = Problem::new(Kind::Fenced, inner.start, inner.end, message);
        }
    }
    Err(p)
}

/// The span of the value at the pointer with reference `tokens` (already unescaped),
/// or `None` when the text is not valid JSON or nothing is there.
pub(crate) fn locate(text: &str, tokens: &[String]) -> Option<Span> {
    let mut s = Scanner::new(text, false, Some(Target::new(tokens, false)));
    s.document().ok()?;
    s.target.and_then(|t| t.found)
}

/// [`locate`] in a text known to be strict JSON (it parsed with `parse_strict`: one value,
/// no duplicate member names): the scan stops at the value instead of reading to the end.
pub(crate) fn locate_in_strict(text: &str, tokens: &[String]) -> Option<Span> {
    let mut s = Scanner::new(text, false, Some(Target::new(tokens, true)));
    s.value().ok()?;
    s.target.and_then(|t| t.found)
}

impl<'p> Target<'p> {
    fn new(tokens: &'p [String], stop_when_found: bool) -> Self {
        Target {
            tokens,
            index: tokens.iter().map(|t| array_index(t)).collect(),
            found: None,
            stop_when_found,
        }
    }
}

/// The first complete, strictly valid object or array inside `text` (any position).
/// Bounded work: gives up after scanning about 16 times the text.
pub(crate) fn find_embedded(text: &str) -> Option<Span> {
    let budget = text.len().saturating_mul(16).saturating_add(1 << 16);
    let mut spent = 0usize;
    let mut s = Scanner::new(text, true, None);
    for (i, &c) in text.as_bytes().iter().enumerate() {
        if c != b'{' && c != b'[' {
            continue;
        }
        s.pos = i;
        s.stack.clear();
        if s.value().is_ok() {
            return Some(Span {
                start: i,
                end: s.pos,
            });
        }
        spent = spent.saturating_add(s.pos.saturating_sub(i).max(1));
        if spent > budget {
            break;
        }
    }
    None
}

/// RFC 6901 section 4: `0` or a decimal without leading zeros.
fn array_index(token: &str) -> Option<usize> {
    let b = token.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    token.parse().ok()
}

/// Appends `token` escaped as an RFC 6901 reference token (`~` as `~0`, `/` as `~1`).
pub(crate) fn push_pointer_token(out: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// Splits an RFC 6901 pointer into unescaped reference tokens; `None` if it is malformed
/// (not empty and not starting with `/`, or a `~` not followed by `0` or `1`).
pub(crate) fn pointer_tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/')
        .map(|raw| {
            let mut t = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                if c == '~' {
                    match chars.next() {
                        Some('0') => t.push('~'),
                        Some('1') => t.push('/'),
                        _ => return None,
                    }
                } else {
                    t.push(c);
                }
            }
            Some(t)
        })
        .collect()
}

/// A short excerpt in double quotes, control characters and quotes escaped.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 32;
    let mut out = String::with_capacity(s.len().min(MAX) + 2);
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        push_escaped(&mut out, c, true);
    }
    out.push('"');
    out
}

/// `s` with control and invisible characters escaped, for a message.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_escaped(&mut out, c, false);
    }
    out
}

fn push_escaped(out: &mut String, c: char, quoted: bool) {
    match c {
        '"' if quoted => out.push_str("\\\""),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control()
            || (c.is_whitespace() && c != ' ')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{feff}') =>
        {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

impl<'a, 'p> Scanner<'a, 'p> {
    fn new(text: &'a str, dups: bool, target: Option<Target<'p>>) -> Self {
        Scanner {
            text,
            b: text.as_bytes(),
            pos: 0,
            stack: Vec::new(),
            dups,
            target,
        }
    }

    /// One value, then nothing but whitespace (RFC 8259 section 2).
    fn document(&mut self) -> Result<(), Problem> {
        self.value()?;
        self.skip_ws();
        if self.pos < self.b.len() {
            let start = self.pos;
            let end = start
                + self.text[start..]
                    .trim_end_matches([' ', '\t', '\n', '\r'])
                    .len();
            return Err(Problem::new(
                Kind::TrailingContent,
                start,
                end,
                format!(
                    "expected the end of the text after the JSON value, found {}",
                    quote(&self.text[start..end])
                ),
            ));
        }
        Ok(())
    }

    fn skip_ws(&mut self) {
        while self.b.get(self.pos).is_some_and(|&c| is_ws(c)) {
            self.pos += 1;
        }
    }

    fn char_len_at(&self, pos: usize) -> usize {
        self.text
            .get(pos..)
            .and_then(|s| s.chars().next())
            .map_or(0, char::len_utf8)
    }

    /// End of the word (letters, digits, `_`, `$`) starting at `pos`, at least one character.
    fn word_end(&self, pos: usize) -> usize {
        let rest = self.text.get(pos..).unwrap_or("");
        let len: usize = rest
            .chars()
            .take_while(|&c| is_word_char(c))
            .map(char::len_utf8)
            .sum();
        if len == 0 {
            pos + self.char_len_at(pos)
        } else {
            pos + len
        }
    }

    /// End of a malformed number-like token starting at `pos`.
    /// `INVALID_JSON` for the number-like token at `start`: `a JSON number {why}, found "+1"`.
    fn number_like(&self, start: usize, why: &str) -> Problem {
        let end = self.numberish_end(start);
        let found = quote(&self.text[start..end]);
        Problem::new(
            Kind::Invalid,
            start,
            end,
            format!("a JSON number {why}, found {found}"),
        )
    }

    fn numberish_end(&self, pos: usize) -> usize {
        let mut end = pos;
        while self
            .b
            .get(end)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_'))
        {
            end += 1;
        }
        end.max(pos + self.char_len_at(pos))
    }

    /// What the innermost open thing is, for truncation messages.
    fn open_what(&self) -> &'static str {
        match self.stack.last() {
            Some(f) if f.object => "an object",
            Some(_) => "an array",
            None => "the value",
        }
    }

    /// The text ended inside the value that starts at `start`.
    fn truncated(&self, start: usize, what: &str, expected: &str) -> Problem {
        Problem::new(
            Kind::Truncated,
            start,
            self.b.len(),
            format!("the text ends inside {what}: expected {expected}, found the end of the text"),
        )
    }

    /// The text ended where the innermost open container expects more.
    fn truncated_container(&self, expected: &str) -> Problem {
        let start = self.stack.last().map_or(self.pos, |f| f.start);
        self.truncated(start, self.open_what(), expected)
    }

    /// A token at `pos` that is not what the grammar `expected`. Returns the problem and
    /// whether it is a plain unexpected token (not a recognized JSON look-alike).
    fn unexpected(&self, pos: usize, expected: &str) -> (Problem, bool) {
        let b = self.b;
        let rest = &self.text[pos..];
        if rest.starts_with("//") || rest.starts_with("/*") {
            let end = if rest.starts_with("//") {
                rest.find('\n').map_or(b.len(), |n| pos + n)
            } else {
                rest[2..].find("*/").map_or(b.len(), |n| pos + 2 + n + 2)
            };
            let end = pos + self.text[pos..end].trim_end().len();
            let msg = format!(
                "comments are not allowed in JSON: expected {expected}, found {}",
                quote(&self.text[pos..end])
            );
            return (Problem::new(Kind::Invalid, pos, end, msg), false);
        }
        if rest.starts_with('\u{feff}') {
            let msg = if pos == 0 {
                "the text starts with a UTF-8 byte order mark (BOM, U+FEFF), which JSON text must not have: expected a JSON value".to_owned()
            } else {
                format!("unexpected byte order mark (BOM, U+FEFF): expected {expected}")
            };
            return (Problem::new(Kind::Invalid, pos, pos + 3, msg), false);
        }
        if let Some(after) = rest.strip_prefix('\'') {
            // the single-quoted string, up to its closing quote on the same line
            let line = after.split('\n').next().unwrap_or("");
            let end = line.find('\'').map_or(pos + 1, |n| pos + 1 + n + 1);
            let msg = format!(
                "single quotes are not allowed in JSON, strings use double quotes: expected {expected}, found {}",
                quote(&self.text[pos..end])
            );
            return (Problem::new(Kind::Invalid, pos, end, msg), false);
        }
        let end = self.word_end(pos);
        let token = &self.text[pos..end];
        let mut msg = format!("expected {expected}, found {}", quote(token));
        if matches!(
            token,
            "True" | "False" | "None" | "TRUE" | "FALSE" | "NULL" | "Null" | "undefined"
        ) {
            msg.push_str(" (JSON literals are true, false and null, in lower case)");
        }
        let plain = !token
            .chars()
            .next()
            .is_some_and(|c| c.is_whitespace() || c.is_control());
        (Problem::new(Kind::Invalid, pos, end, msg), plain)
    }

    /// Nothing that starts a value is at `start`.
    fn unexpected_value(&self, start: usize) -> Problem {
        let top = self.stack.is_empty();
        let rest = &self.text[start..];
        if rest.is_empty() {
            if top {
                return Problem::new(
                    Kind::Invalid,
                    start,
                    start,
                    "expected a JSON value, found the end of the text".to_owned(),
                );
            }
            return self.truncated_container("a value");
        }
        for word in ["NaN", "Infinity", "+Infinity", "+NaN"] {
            if rest.starts_with(word) && self.word_end(start + 1) == start + word.len() {
                return non_finite(start, &rest[..word.len()]);
            }
        }
        let next_digit = self.b.get(start + 1).is_some_and(u8::is_ascii_digit);
        if rest.starts_with('+') && next_digit {
            return self.number_like(
                start,
                "must not start with \"+\": expected a digit or \"-\"",
            );
        }
        if rest.starts_with('.') && next_digit {
            return self.number_like(
                start,
                "needs a digit before the decimal point: expected a digit",
            );
        }
        let (mut p, plain) = self.unexpected(start, "a JSON value");
        p.prose = top && plain;
        p
    }

    /// Scans one value at `self.pos` (after whitespace) and leaves `pos` after it.
    fn value(&mut self) -> Result<(), Problem> {
        'value: loop {
            self.skip_ws();
            let start = self.pos;
            let matched = self.child_matched();
            match self.b.get(start).copied() {
                Some(open @ (b'{' | b'[')) => {
                    let depth = self.stack.len();
                    if depth >= MAX_DEPTH {
                        let what = if open == b'{' { "object" } else { "array" };
                        return Err(Problem::new(
                            Kind::TooDeep,
                            start,
                            start + 1,
                            format!(
                                "nesting is too deep: expected at most {MAX_DEPTH} nested arrays and objects, found an {what} at level {}",
                                depth + 1
                            ),
                        ));
                    }
                    let is_target = matched
                        && self
                            .target
                            .as_ref()
                            .is_some_and(|t| t.tokens.len() == depth);
                    self.stack.push(Frame {
                        start,
                        object: open == b'{',
                        index: 0,
                        key: String::new(),
                        keys: HashSet::new(),
                        on_path: matched && !is_target,
                        key_match: false,
                        target: is_target,
                    });
                    self.pos += 1;
                    self.skip_ws();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.b.get(self.pos) == Some(&close) {
                        self.pos += 1;
                        self.pop();
                    } else if open == b'{' {
                        self.member_key()?;
                        continue 'value;
                    } else {
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.string(None)?;
                    self.scalar_done(start, matched);
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.number()?;
                    self.scalar_done(start, matched);
                }
                Some(b't') => {
                    self.literal("true")?;
                    self.scalar_done(start, matched);
                }
                Some(b'f') => {
                    self.literal("false")?;
                    self.scalar_done(start, matched);
                }
                Some(b'n') => {
                    self.literal("null")?;
                    self.scalar_done(start, matched);
                }
                _ => return Err(self.unexpected_value(start)),
            }
            // a value is complete: close containers, or go on to the next element
            loop {
                if self
                    .target
                    .as_ref()
                    .is_some_and(|t| t.stop_when_found && t.found.is_some())
                {
                    return Ok(());
                }
                let Some(top) = self.stack.last() else {
                    return Ok(());
                };
                let object = top.object;
                let (close, after) = if object {
                    (b'}', "\",\" or \"}\" after an object member")
                } else {
                    (b']', "\",\" or \"]\" after an array element")
                };
                self.skip_ws();
                match self.b.get(self.pos).copied() {
                    None => {
                        let expected = if object {
                            "\",\" or \"}\""
                        } else {
                            "\",\" or \"]\""
                        };
                        return Err(self.truncated_container(expected));
                    }
                    Some(b',') => {
                        let comma = self.pos;
                        self.pos += 1;
                        self.skip_ws();
                        if self.b.get(self.pos) == Some(&close) {
                            return Err(Problem::new(
                                Kind::Invalid,
                                comma,
                                comma + 1,
                                format!("trailing comma before \"{}\"", close as char),
                            ));
                        }
                        if let Some(top) = self.stack.last_mut() {
                            top.index += 1;
                        }
                        if object {
                            self.member_key()?;
                        }
                        continue 'value;
                    }
                    Some(c) if c == close => {
                        self.pos += 1;
                        self.pop();
                    }
                    Some(_) => return Err(self.unexpected(self.pos, after).0),
                }
            }
        }
    }

    /// Locate: whether the value about to start is on the target path.
    fn child_matched(&self) -> bool {
        let Some(t) = &self.target else {
            return false;
        };
        match self.stack.last() {
            None => true,
            Some(f) if !f.on_path => false,
            Some(f) if f.object => f.key_match,
            Some(f) => t.index.get(self.stack.len() - 1).copied().flatten() == Some(f.index),
        }
    }

    fn scalar_done(&mut self, start: usize, matched: bool) {
        if matched {
            let depth = self.stack.len();
            let end = self.pos;
            if let Some(t) = self.target.as_mut().filter(|t| t.tokens.len() == depth) {
                t.found = Some(Span { start, end });
            }
        }
    }

    fn pop(&mut self) {
        if let Some(f) = self.stack.pop() {
            if f.target {
                if let Some(t) = self.target.as_mut() {
                    t.found = Some(Span {
                        start: f.start,
                        end: self.pos,
                    });
                }
            }
        }
    }

    /// The pointer of the current position: every open container's current member/index.
    fn pointer(&self) -> String {
        let mut p = String::new();
        for f in &self.stack {
            p.push('/');
            if f.object {
                push_pointer_token(&mut p, &f.key);
            } else {
                let _ = write!(p, "{}", f.index);
            }
        }
        p
    }

    /// A member name and its `:` (RFC 8259 section 4), after `{` or `,`.
    fn member_key(&mut self) -> Result<(), Problem> {
        self.skip_ws();
        let start = self.pos;
        match self.b.get(start) {
            None => return Err(self.truncated_container("a string key")),
            Some(b'"') => {}
            Some(_) => {
                return Err(self.unexpected(start, "an object key in double quotes").0);
            }
        }
        let on_path = self.stack.last().is_some_and(|f| f.on_path);
        let mut dup = false;
        if !(self.dups || on_path) {
            self.string(None)?;
        } else {
            let mut key = String::new();
            self.string(Some(&mut key))?;
            let depth = self.stack.len() - 1;
            if on_path {
                if let Some(t) = self.target.as_mut() {
                    let m = t.tokens.get(depth).is_some_and(|tok| *tok == key);
                    if m {
                        // a later duplicate replaces everything found under the earlier one
                        t.found = None;
                    }
                    if let Some(top) = self.stack.last_mut() {
                        top.key_match = m;
                    }
                }
            }
            if self.dups {
                dup = self.stack.last_mut().is_some_and(|top| {
                    let dup = !top.keys.insert(key.clone());
                    top.key = key;
                    dup
                });
            }
        }
        let key_end = self.pos;
        // the member must be well formed before its name can repeat another
        self.skip_ws();
        match self.b.get(self.pos) {
            Some(b':') => self.pos += 1,
            None => return Err(self.truncated_container("\":\"")),
            Some(_) => return Err(self.unexpected(self.pos, "\":\" after the object key").0),
        }
        if dup {
            let pointer = self.pointer();
            let key = self.stack.last().map_or("", |f| f.key.as_str());
            let mut p = Problem::new(
                Kind::DuplicateKey,
                start,
                key_end,
                format!("duplicate key {} at {}", quote(key), escape(&pointer)),
            );
            p.pointer = Some(pointer);
            return Err(p);
        }
        Ok(())
    }

    /// A string (RFC 8259 section 7) at `self.pos`; decoded into `out` when given.
    fn string(&mut self, mut out: Option<&mut String>) -> Result<(), Problem> {
        let start = self.pos;
        self.pos += 1;
        loop {
            let rest = &self.b[self.pos..];
            let Some(n) = rest
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            else {
                return Err(self.truncated(start, "a string", "a closing '\"'"));
            };
            if let Some(o) = out.as_deref_mut() {
                o.push_str(&self.text[self.pos..self.pos + n]);
            }
            self.pos += n;
            match self.b[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => self.escape(start, out.as_deref_mut())?,
                c => {
                    let named = match c {
                        b'\n' => " (a raw line break; write it as \\n)",
                        b'\r' => " (a raw carriage return; write it as \\r)",
                        b'\t' => " (a raw tab; write it as \\t)",
                        _ => "",
                    };
                    return Err(Problem::new(
                        Kind::Invalid,
                        self.pos,
                        self.pos + 1,
                        format!(
                            "control character U+{:04X} in a string must be escaped{named}: expected a character or '\"', found {}",
                            c,
                            quote(&self.text[self.pos..self.pos + 1])
                        ),
                    ));
                }
            }
        }
    }

    /// An escape at `self.pos` (the backslash) inside the string that starts at `start`.
    fn escape(&mut self, start: usize, out: Option<&mut String>) -> Result<(), Problem> {
        let esc = self.pos;
        let Some(&c) = self.b.get(esc + 1) else {
            return Err(self.truncated(start, "a string", "an escape character"));
        };
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(start, out),
            _ => {
                let end = esc + 1 + self.char_len_at(esc + 1);
                return Err(Problem::new(
                    Kind::Invalid,
                    esc,
                    end,
                    format!(
                        "invalid escape {} in a string: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
                        quote(&self.text[esc..end])
                    ),
                ));
            }
        };
        if let Some(o) = out {
            o.push(ch);
        }
        self.pos = esc + 2;
        Ok(())
    }

    /// Four hex digits at `at`, for the `\u` escape at `esc`.
    fn hex4(&self, esc: usize, at: usize, start: usize) -> Result<u32, Problem> {
        let mut n = 0u32;
        for i in 0..4 {
            match self.b.get(at + i) {
                None => return Err(self.truncated(start, "a string", "4 hex digits")),
                Some(&h) => match (h as char).to_digit(16) {
                    Some(d) => n = n * 16 + d,
                    None => {
                        let end = at + i + self.char_len_at(at + i);
                        return Err(Problem::new(
                            Kind::Invalid,
                            esc,
                            end,
                            format!(
                                "invalid unicode escape {}: expected 4 hex digits",
                                quote(&self.text[esc..end])
                            ),
                        ));
                    }
                },
            }
        }
        Ok(n)
    }

    /// A `\uXXXX` escape (with its surrogate pair) at `self.pos` (RFC 8259 section 7).
    fn unicode_escape(&mut self, start: usize, out: Option<&mut String>) -> Result<(), Problem> {
        let esc = self.pos;
        let n = self.hex4(esc, esc + 2, start)?;
        let lone = |s: &Self, end: usize| {
            Problem::new(
                Kind::Invalid,
                esc,
                end,
                format!(
                    "lone surrogate escape {} in a string: expected a high surrogate \\uD800-\\uDBFF followed by a low surrogate \\uDC00-\\uDFFF",
                    quote(&s.text[esc..end])
                ),
            )
        };
        let code = if (0xDC00..=0xDFFF).contains(&n) {
            return Err(lone(self, esc + 6));
        } else if (0xD800..=0xDBFF).contains(&n) {
            match (self.b.get(esc + 6), self.b.get(esc + 7)) {
                (None, _) | (Some(b'\\'), None) => {
                    return Err(self.truncated(start, "a string", "a low surrogate escape"));
                }
                (Some(b'\\'), Some(b'u')) => {}
                _ => return Err(lone(self, esc + 6)),
            }
            let low = self.hex4(esc + 6, esc + 8, start)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return Err(lone(self, esc + 12));
            }
            self.pos = esc + 12;
            0x1_0000 + ((n - 0xD800) << 10) + (low - 0xDC00)
        } else {
            self.pos = esc + 6;
            n
        };
        if let Some(o) = out {
            o.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
        }
        Ok(())
    }

    /// A number (RFC 8259 section 6) at `self.pos`.
    fn number(&mut self) -> Result<(), Problem> {
        let start = self.pos;
        let b = self.b;
        let mut p = start;
        let digits = |mut p: usize| {
            while b.get(p).is_some_and(u8::is_ascii_digit) {
                p += 1;
            }
            p
        };
        if b[p] == b'-' {
            p += 1;
            let rest = &self.text[p..];
            for word in ["Infinity", "NaN"] {
                if rest.starts_with(word) && self.word_end(p) == p + word.len() {
                    return Err(non_finite(start, &self.text[start..p + word.len()]));
                }
            }
        }
        let mut exponent = false;
        match b.get(p) {
            None => return Err(self.incomplete_number(start, "a digit")),
            Some(b'0') => {
                p += 1;
                if b.get(p).is_some_and(u8::is_ascii_digit) {
                    let end = self.numberish_end(start);
                    return Err(Problem::new(
                        Kind::Invalid,
                        start,
                        end,
                        format!(
                            "leading zeros are not allowed in JSON numbers: expected a single \"0\" or a digit 1-9 first, found {}",
                            quote(&self.text[start..end])
                        ),
                    ));
                }
            }
            Some(b'1'..=b'9') => p = digits(p),
            Some(_) => return Err(self.malformed_number(start, p, "a digit after \"-\"")),
        }
        if b.get(p) == Some(&b'.') {
            p += 1;
            match b.get(p) {
                None => {
                    return Err(self.incomplete_number(start, "a digit after the decimal point"));
                }
                Some(c) if c.is_ascii_digit() => p = digits(p),
                Some(_) => {
                    return Err(self.malformed_number(start, p, "a digit after the decimal point"));
                }
            }
        }
        if matches!(b.get(p), Some(b'e' | b'E')) {
            exponent = true;
            p += 1;
            if matches!(b.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            match b.get(p) {
                None => return Err(self.incomplete_number(start, "a digit in the exponent")),
                Some(c) if c.is_ascii_digit() => p = digits(p),
                Some(_) => return Err(self.malformed_number(start, p, "a digit in the exponent")),
            }
        }
        if b.get(p)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_')
        {
            return Err(self.malformed_number(start, p, "a digit, or the end of the number"));
        }
        self.pos = p;
        let token = &self.text[start..p];
        // serde_json decides the range (section 6: outside IEEE 754 double is not portable);
        // only long tokens or exponents can overflow
        if (exponent || token.len() > 20)
            && serde_json::from_str::<serde_json::Value>(token).is_err()
        {
            return Err(Problem::new(
                Kind::NonStandardNumber,
                start,
                p,
                format!(
                    "number {} is outside the range of an IEEE 754 double: expected a finite number",
                    quote(token)
                ),
            ));
        }
        Ok(())
    }

    /// A number that ends at the end of the text where a digit must come.
    fn incomplete_number(&self, start: usize, expected: &str) -> Problem {
        let token = &self.text[start..];
        if self.stack.is_empty() {
            Problem::new(
                Kind::Invalid,
                start,
                self.b.len(),
                format!(
                    "malformed number {}: expected {expected}, found the end of the text",
                    quote(token)
                ),
            )
        } else {
            self.truncated(start, "a number", expected)
        }
    }

    /// A malformed number: `at` is where the grammar broke.
    fn malformed_number(&self, start: usize, at: usize, expected: &str) -> Problem {
        let end = self.numberish_end(start).max(at);
        let token = &self.text[start..end];
        let unsigned = token.strip_prefix('-').unwrap_or(token);
        let message = if unsigned.starts_with("0x") || unsigned.starts_with("0X") {
            format!(
                "hexadecimal numbers are not allowed in JSON: expected a decimal number, found {}",
                quote(token)
            )
        } else {
            format!(
                "malformed number {}: expected {expected}, found {}",
                quote(token),
                quote(&self.text[at..at + self.char_len_at(at)])
            )
        };
        Problem::new(Kind::Invalid, start, end, message)
    }

    /// `true`, `false` or `null` (RFC 8259 section 3) at `self.pos`.
    fn literal(&mut self, word: &'static str) -> Result<(), Problem> {
        let start = self.pos;
        for (i, &w) in word.as_bytes().iter().enumerate() {
            match self.b.get(start + i) {
                None => {
                    let expected = format!("\"{word}\"");
                    return Err(self.truncated(start, "a literal", &expected));
                }
                Some(&c) if c == w => {}
                Some(_) => return Err(self.bad_literal(start, word)),
            }
        }
        let end = start + word.len();
        if self.text[end..].chars().next().is_some_and(is_word_char) {
            return Err(self.bad_literal(start, word));
        }
        self.pos = end;
        Ok(())
    }

    fn bad_literal(&self, start: usize, word: &str) -> Problem {
        let end = self.word_end(start);
        let mut p = Problem::new(
            Kind::Invalid,
            start,
            end,
            format!(
                "expected \"{word}\", found {}",
                quote(&self.text[start..end])
            ),
        );
        p.prose = self.stack.is_empty();
        p
    }
}

fn non_finite(start: usize, token: &str) -> Problem {
    Problem::new(
        Kind::NonStandardNumber,
        start,
        start + token.len(),
        format!(
            "non-standard number {}: JSON has no NaN or Infinity, expected a finite number",
            quote(token)
        ),
    )
}
