//! The slow path and [`locate`](super::locate): a small strict RFC 8259 scanner.
//!
//! It walks the text once, iteratively (an explicit stack, never recursion, so a
//! 10,000-deep array cannot overflow the call stack), and stops at the FIRST problem,
//! which it classifies precisely with the byte span of the offending token. It agrees
//! with `serde_json` on what is valid: the same grammar (RFC 8259 sections 2 to 7), the
//! same nesting limit ([`MAX_DEPTH`]), the same number range, the same surrogate rules.
//!
//! In locate mode it skips duplicate detection and instead records the spans of the values
//! at a set of JSON Pointers (RFC 6901) in the same single walk, the last duplicate winning
//! as in the parsed value.

use super::MAX_DEPTH;
use super::number::Loss;
use crate::core::escape;
use crate::core::pointer;
use crate::core::verdict::Span;
use std::borrow::Cow;
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
    /// Locate: this container's node in the [`Targets`] trie ([`NONE`]: on no wanted path).
    node: u32,
    /// Locate: the node of the current member (objects; [`NONE`]: no wanted path).
    child: u32,
    /// Locate: the next wanted element in the node's `indices` (arrays).
    cursor: u32,
}

/// No trie node.
const NONE: u32 = u32::MAX;

/// Locate mode: the wanted pointers as a trie of reference tokens, one node per distinct
/// prefix, numbered in preorder (node 0 is the whole document), with what was found.
struct Targets<'p> {
    nodes: Vec<Node<'p>>,
    /// Wanted nodes without a span yet.
    remaining: usize,
    /// Stop scanning once every wanted value is found: the text is known to be strict JSON
    /// (no duplicate member names), so nothing after a value can replace it.
    stop_when_found: bool,
}

/// One node of the [`Targets`] trie: a pointer prefix.
#[derive(Default)]
struct Node<'p> {
    /// Children by (unescaped) member name, sorted by name.
    keys: Vec<(&'p str, u32)>,
    /// The children whose token is an array index (RFC 6901 section 4), by increasing index.
    indices: Vec<(usize, u32)>,
    /// A wanted pointer ends here.
    wanted: bool,
    /// One past the last node of this node's subtree.
    end: u32,
    /// The span of the value here, once reached.
    found: Option<Span>,
}

struct Scanner<'a, 'p> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    stack: Vec<Frame>,
    dups: bool,
    target: Option<Targets<'p>>,
}

/// Checks `text` as one strict JSON document; `Err` holds its first problem.
/// `FENCED_JSON` is recognized here too.
pub(crate) fn check(text: &str) -> Result<(), Problem> {
    let mut s = Scanner::new(text, true, None);
    let Err(mut p) = s.document() else {
        return Ok(());
    };
    if p.prose
        && let Some(inner) = find_embedded(text)
    {
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
        // an XML-style tag right before the value (`<json>`, `<output format="json">`)
        let tag = before.trim_end().strip_suffix('>').and_then(|b| {
            let lt = b.rfind('<')?;
            let name = &b[lt + 1..];
            (name.starts_with(|c: char| c.is_ascii_alphabetic()) && !name.contains('<'))
                .then(|| &before.trim_end()[lt..])
        });
        let message = if fence {
            format!(
                "the JSON value is wrapped in a markdown code fence: expected the text to start with the value, found {}",
                quote(first)
            )
        } else if let Some(tag) = tag {
            format!(
                "the JSON value is wrapped in a tag {}: expected the text to start with the value, found {}",
                quote(tag),
                quote(first)
            )
        } else {
            format!(
                "the JSON value is preceded by prose, with no fence or tag around it: expected the text to start with the value, found {}",
                quote(first)
            )
        };
        p = Problem::new(Kind::Fenced, inner.start, inner.end, message);
    }
    Err(p)
}

/// The span of the value at the pointer with reference `tokens` (already unescaped),
/// or `None` when the text is not valid JSON or nothing is there.
pub(crate) fn locate(text: &str, tokens: &[Cow<'_, str>]) -> Option<Span> {
    let (targets, nodes) = Targets::new(&[Some(tokens)], false);
    let mut s = Scanner::new(text, false, Some(targets));
    s.document().ok()?;
    s.target.and_then(|t| t.nodes[nodes[0] as usize].found)
}

/// [`locate`] in a text known to be strict JSON (it parsed with `parse_strict`: one value,
/// no duplicate member names), for every pointer at once (`None`: a malformed pointer) in
/// ONE walk of the text that stops as soon as every value is found. Same order as
/// `pointers`; the same span [`locate`] gives each.
pub(crate) fn locate_all_in_strict(
    text: &str,
    pointers: &[Option<&[Cow<'_, str>]>],
) -> Vec<Option<Span>> {
    let (targets, nodes) = Targets::new(pointers, true);
    let mut s = Scanner::new(text, false, Some(targets));
    let found = if s.target.as_ref().is_some_and(|t| t.remaining > 0) {
        s.value().is_ok()
    } else {
        false
    };
    let t = s.target.expect("set above");
    nodes
        .iter()
        .map(|&n| {
            if n == NONE || !found {
                None
            } else {
                t.nodes[n as usize].found
            }
        })
        .collect()
}

impl<'p> Targets<'p> {
    /// The trie of `pointers` (reference tokens, unescaped; `None` is skipped) and the node
    /// of each pointer ([`NONE`] for a skipped one).
    fn new(
        pointers: &[Option<&'p [Cow<'p, str>]>],
        stop_when_found: bool,
    ) -> (Targets<'p>, Vec<u32>) {
        // in sorted order every prefix comes before its extensions and siblings come in
        // name order: nodes are created in preorder, each node's children already sorted
        let mut order: Vec<usize> = (0..pointers.len())
            .filter(|&i| pointers[i].is_some())
            .collect();
        order.sort_by(|&a, &b| pointers[a].cmp(&pointers[b]));
        let mut nodes = vec![Node::default()];
        let mut of = vec![NONE; pointers.len()];
        // the nodes of the previous pointer's path (root first)
        let mut path: Vec<u32> = vec![0];
        let mut prev: &'p [Cow<'p, str>] = &[];
        for i in order {
            let tokens = pointers[i].unwrap_or_default();
            let shared = prev.iter().zip(tokens).take_while(|(a, b)| a == b).count();
            path.truncate(shared + 1);
            for t in &tokens[shared..] {
                let id = nodes.len() as u32;
                let parent = *path.last().expect("the root is never truncated");
                nodes[parent as usize].keys.push((t.as_ref(), id));
                nodes.push(Node::default());
                path.push(id);
            }
            let here = *path.last().expect("the root is never truncated");
            nodes[here as usize].wanted = true;
            of[i] = here;
            prev = tokens;
        }
        // children have higher numbers than their parent: fill subtree ends backwards
        for n in (0..nodes.len()).rev() {
            let end = nodes[n]
                .keys
                .iter()
                .map(|&(_, c)| nodes[c as usize].end)
                .max()
                .unwrap_or(n as u32 + 1);
            // the index tokens, already in name order, by length: increasing index
            let mut indices: Vec<(usize, usize, u32)> = nodes[n]
                .keys
                .iter()
                .filter_map(|&(k, c)| Some((k.len(), pointer::array_index(k)?, c)))
                .collect();
            if indices.windows(2).any(|w| w[0].0 > w[1].0) {
                indices.sort_by_key(|&(len, ..)| len);
            }
            let node = &mut nodes[n];
            node.end = end;
            node.indices = indices.into_iter().map(|(_, i, c)| (i, c)).collect();
        }
        let remaining = nodes.iter().filter(|n| n.wanted).count();
        let targets = Targets {
            nodes,
            remaining,
            stop_when_found,
        };
        (targets, of)
    }

    /// Whether members of an object at `node` can lead to a wanted value.
    fn keyed(&self, node: u32) -> bool {
        node != NONE && !self.nodes[node as usize].keys.is_empty()
    }

    /// The child of `node` for member name `key`, or [`NONE`].
    fn key_child(&self, node: u32, key: &str) -> u32 {
        let keys = &self.nodes[node as usize].keys;
        keys.binary_search_by(|(k, _)| (*k).cmp(key))
            .map_or(NONE, |i| keys[i].1)
    }

    /// Records the span of the value at `node`, when a pointer ends there.
    fn reached(&mut self, node: u32, span: Span) {
        if node == NONE {
            return;
        }
        let n = &mut self.nodes[node as usize];
        if n.wanted {
            if n.found.is_none() {
                self.remaining -= 1;
            }
            n.found = Some(span);
        }
    }

    /// A later duplicate member replaces the earlier one: forget everything found under it.
    fn forget(&mut self, node: u32) {
        let end = self.nodes[node as usize].end;
        for n in &mut self.nodes[node as usize..end as usize] {
            if n.found.take().is_some() {
                self.remaining += 1;
            }
        }
    }

    /// Every wanted value is found and nothing later can replace one.
    fn done(&self) -> bool {
        self.stop_when_found && self.remaining == 0
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

/// A short excerpt (32 characters) in double quotes, for a message ([`escape::quote`]).
pub(crate) fn quote(s: &str) -> String {
    escape::quote(s, 32)
}

/// `s` with control and invisible characters escaped, for a message.
fn escape(s: &str) -> String {
    escape::for_message(s)
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Whether `token`, a word where a value belongs, reads as a miswritten `literal` (`true`,
/// `false` or `null`): it starts with the literal (`nulls`), is a start of it of two
/// letters or more (`nu`, `fals`), or is one edit from it: a letter added, left out,
/// changed, or two letters swapped (`nulll`, `tru`, `trux`, `ture`). `not`, `nope`, `nil`,
/// `no` and `fine` are other words.
fn near_literal(token: &str, literal: &str) -> bool {
    let t: Vec<char> = token.chars().collect();
    let l: Vec<char> = literal.chars().collect();
    if t.starts_with(&l) || (t.len() >= 2 && l.starts_with(&t)) {
        return true;
    }
    // the common start and end, then what is left of each must be one edit
    let head = t.iter().zip(&l).take_while(|(a, b)| a == b).count();
    let (t, l) = (&t[head..], &l[head..]);
    let tail = t
        .iter()
        .rev()
        .zip(l.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (t, l) = (&t[..t.len() - tail], &l[..l.len() - tail]);
    match (t.len(), l.len()) {
        (0, 1) | (1, 0) | (1, 1) => true,
        (2, 2) => t[0] == l[1] && t[1] == l[0],
        _ => false,
    }
}

impl<'a, 'p> Scanner<'a, 'p> {
    fn new(text: &'a str, dups: bool, target: Option<Targets<'p>>) -> Self {
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
            let node = self.child_node();
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
                    self.stack.push(Frame {
                        start,
                        object: open == b'{',
                        index: 0,
                        key: String::new(),
                        keys: HashSet::new(),
                        node,
                        child: NONE,
                        cursor: 0,
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
                    self.scalar_done(start, node);
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.number()?;
                    self.scalar_done(start, node);
                }
                Some(b't') => {
                    self.literal("true")?;
                    self.scalar_done(start, node);
                }
                Some(b'f') => {
                    self.literal("false")?;
                    self.scalar_done(start, node);
                }
                Some(b'n') => {
                    self.literal("null")?;
                    self.scalar_done(start, node);
                }
                _ => return Err(self.unexpected_value(start)),
            }
            // a value is complete: close containers, or go on to the next element
            loop {
                if self.target.as_ref().is_some_and(Targets::done) {
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

    /// Locate: the trie node of the value about to start ([`NONE`]: on no wanted path).
    /// In an array the elements come in increasing index, as the wanted indices are kept:
    /// one comparison with the next wanted one.
    fn child_node(&mut self) -> u32 {
        let Some(t) = &self.target else {
            return NONE;
        };
        match self.stack.last_mut() {
            None => 0,
            Some(f) if f.node == NONE => NONE,
            Some(f) if f.object => f.child,
            Some(f) => match t.nodes[f.node as usize].indices.get(f.cursor as usize) {
                Some(&(i, child)) if i == f.index => {
                    f.cursor += 1;
                    child
                }
                _ => NONE,
            },
        }
    }

    fn scalar_done(&mut self, start: usize, node: u32) {
        if node != NONE {
            let end = self.pos;
            if let Some(t) = self.target.as_mut() {
                t.reached(node, Span { start, end });
            }
        }
    }

    fn pop(&mut self) {
        if let Some(f) = self.stack.pop()
            && f.node != NONE
            && let Some(t) = self.target.as_mut()
        {
            t.reached(
                f.node,
                Span {
                    start: f.start,
                    end: self.pos,
                },
            );
        }
    }

    /// The pointer of the current position: every open container's current member/index.
    fn pointer(&self) -> String {
        let mut p = String::new();
        for f in &self.stack {
            p.push('/');
            if f.object {
                pointer::push_escaped(&mut p, &f.key);
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
        let node = self.stack.last().map_or(NONE, |f| f.node);
        let keyed = self.target.as_ref().is_some_and(|t| t.keyed(node));
        let mut dup = false;
        if !(self.dups || keyed) {
            self.string(None)?;
        } else {
            let mut key = String::new();
            self.string(Some(&mut key))?;
            if keyed && let Some(t) = self.target.as_mut() {
                let child = t.key_child(node, &key);
                if child != NONE && !t.stop_when_found {
                    // a later duplicate replaces everything found under the earlier one
                    // (a strict text has no duplicates: nothing to forget)
                    t.forget(child);
                }
                if let Some(top) = self.stack.last_mut() {
                    top.child = child;
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
        let overflow = (exponent || token.len() > 20)
            && serde_json::from_str::<serde_json::Value>(token).is_err();
        // exactness is the checking walk's (locate walks texts that parsed, or only need spans)
        let loss = if self.dups {
            super::number::loss(token)
        } else {
            None
        };
        let why = match (overflow, loss) {
            (false, None) => return Ok(()),
            (true, _) | (false, Some(Loss::Overflow)) => {
                "is outside the range of an IEEE 754 double: expected a finite number".to_owned()
            }
            (false, Some(Loss::Underflow)) => "underflows an IEEE 754 double: it is not zero \
                 but would read as 0 (expected a number a double holds, or 0)"
                .to_owned(),
            (false, Some(Loss::Precision(read))) => format!(
                "has more precision than an IEEE 754 double holds: it would read as {read} \
                 (expected an integer of 64 bits, or a number a double holds exactly)"
            ),
        };
        Err(Problem::new(
            Kind::NonStandardNumber,
            start,
            p,
            format!("number {} {why}", quote(token)),
        ))
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

    /// A word at `start` that begins with the first letter of the literal `word` but is not
    /// it: `expected "null", found "nul"` when the word is a near miss of the literal
    /// ([`near_literal`]), else the message of any other word where a value belongs
    /// (`expected a JSON value, found "not"`): prose that starts with n, t or f (`no refund
    /// possible`) is not a broken `null`.
    fn bad_literal(&self, start: usize, word: &str) -> Problem {
        let end = self.word_end(start);
        if !near_literal(&self.text[start..end], word) {
            return self.unexpected_value(start);
        }
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
