//! The parse stage: strict RFC 8259 JSON.
//!
//! Any JSON value is a document (RFC 8259 section 2: a bare `3`, `null` or `"x"` parses).
//! Every failure is a parse-stage [`Finding`] with the line:column (characters) and byte
//! span of the offending token.
//!
//! Two paths:
//! - the **fast path** ([`from_str_no_duplicates`]): `serde_json` into a [`Value`] through a
//!   small seed that rejects duplicate keys. On success it is the only pass over the text.
//! - the **slow path** ([`diagnose`]), only when the fast path fails: our own iterative
//!   strict scanner that classifies the FIRST problem precisely. The same scanner, in a
//!   locate mode, maps a JSON Pointer to a byte span ([`locate`]).

mod number;

/// Whether an RFC 8259 number token is held exactly (`docs/verdicts.md#numbers`).
pub(crate) fn number_is_exact(token: &str) -> bool {
    number::loss(token).is_none()
}
mod scan;
mod strict;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

use crate::core::pointer;
use crate::core::text::{LineIndex, line_col};
use crate::core::verdict::{Finding, Reason, Span, Stage};
use serde_json::Value;
use std::borrow::Cow;

/// Maximum nesting depth of arrays and objects; deeper is `TOO_DEEP`.
///
/// This is `serde_json`'s limit exactly: its recursion limit of 128 rejects the 128th
/// nested array or object, so 127 levels parse and 128 do not. RFC 8259 section 9 lets
/// a parser limit nesting.
pub const MAX_DEPTH: usize = 127;

/// The fast path: `serde_json::from_str::<Value>` that also rejects a repeated member
/// name in any object (RFC 8259 section 4 says names SHOULD be unique; we require it).
///
/// It builds the same [`Value`], with the same limits, at the same speed. A duplicate key
/// is a `serde_json` data error (`duplicate key "x" at line 1 column 14`). Used for the
/// output text and for capture record files alike.
pub fn from_str_no_duplicates(text: &str) -> Result<Value, serde_json::Error> {
    strict::from_str(text)
}

/// [`from_str_no_duplicates`] of a text whose top-level object, when it is one, has members
/// of known names: those are read into their places in `names`, no map built
/// (`strict::Members`). It fails on the texts [`from_str_no_duplicates`] fails on; its error
/// is not the one to report ([`parse_strict`] the text for that).
///
/// The member at the place `lazy` of `names`, when it is an object, is checked as the rest
/// and handed back as its JSON text, not built (`strict::Members::Named`).
pub(crate) fn record_members<'a, const N: usize>(
    text: &'a str,
    names: &'static [&'static str; N],
    lazy: Option<usize>,
) -> Result<strict::Members<'a, N>, serde_json::Error> {
    strict::record_members(text, names, lazy)
}

pub(crate) use strict::Members;

/// Parses `text` as exactly one strict RFC 8259 JSON value.
///
/// Errors (all stage `parse`): `INVALID_JSON`, `TRUNCATED_JSON`, `DUPLICATE_KEY` (with the
/// pointer of the repeated key), `NON_STANDARD_NUMBER`, `TRAILING_CONTENT`, `FENCED_JSON`,
/// `TOO_DEEP`. The caller handles empty text (`NO_OUTPUT`) before calling this; here an
/// empty text is `INVALID_JSON` ("expected a JSON value, found the end of the text").
///
/// `Ok` exactly when `serde_json::from_str::<Value>` succeeds and no object repeats a key.
#[allow(clippy::result_large_err)] // the signature is the stage interface; errors are rare
pub fn parse_strict(text: &str) -> Result<Value, Finding> {
    match strict::from_str(text) {
        Ok(value) => Ok(value),
        Err(err) => Err(diagnose(text).unwrap_or_else(|| from_serde_error(text, &err))),
    }
}

/// The slow path on its own: the first problem of `text` as a parse-stage [`Finding`], or
/// `None` when the text is one strict JSON value without duplicate keys.
///
/// Classes (RFC 8259 section references): a value cut off by the end of the text is
/// `TRUNCATED_JSON` (span from the innermost unclosed value, line:column where the text
/// ends); `NaN`, `Infinity` and
/// numbers beyond the IEEE 754 double range (section 6) are `NON_STANDARD_NUMBER`;
/// anything after the value (section 2) is `TRAILING_CONTENT`; a text that starts with
/// prose or a markdown fence but holds a complete object or array is `FENCED_JSON` (span:
/// that inner value); nesting deeper than [`MAX_DEPTH`] is `TOO_DEEP`; a repeated member
/// name (section 4) is `DUPLICATE_KEY`; the rest is `INVALID_JSON`.
pub fn diagnose(text: &str) -> Option<Finding> {
    let problem = scan::check(text).err()?;
    let reason = match problem.kind {
        scan::Kind::Invalid => Reason::INVALID_JSON,
        scan::Kind::Truncated => Reason::TRUNCATED_JSON,
        scan::Kind::DuplicateKey => Reason::DUPLICATE_KEY,
        scan::Kind::NonStandardNumber => Reason::NON_STANDARD_NUMBER,
        scan::Kind::TrailingContent => Reason::TRAILING_CONTENT,
        scan::Kind::Fenced => Reason::FENCED_JSON,
        scan::Kind::TooDeep => Reason::TOO_DEEP,
    };
    let mut message = problem.message;
    let mut at = line_col(text, problem.span.start);
    if reason == Reason::TRUNCATED_JSON {
        // point where the text was cut; say where the unclosed value began
        let end = line_col(text, text.trim_end().len());
        if end != at {
            message = message.replacen(": expected", &format!(" opened at {at}: expected"), 1);
        }
        at = end;
    }
    let mut finding = Finding::new(Stage::Parse, reason, message);
    finding.span = Some(problem.span);
    finding.at = Some(at);
    Some(match problem.pointer {
        Some(pointer) => finding.with_pointer(pointer),
        None => finding,
    })
}

/// The byte span of the value at JSON Pointer `pointer` (RFC 6901) in the JSON `text`,
/// or `None` when the text does not parse or nothing is there. With duplicate keys the
/// last one wins, as in the parsed value.
///
/// Reference tokens are unescaped (`~1` is `/`, `~0` is `~`); an array is indexed by a
/// decimal without leading zeros (RFC 6901 section 4; `-` never matches). A string's span
/// includes its quotes, a container's its brackets. A malformed pointer gives `None`.
/// The text must be valid JSON apart from duplicate keys (the `serde_json` grammar).
pub fn locate(text: &str, pointer: &str) -> Option<Span> {
    let tokens = pointer::tokens(pointer).ok()?;
    scan::locate(text, &tokens)
}

/// The spans of the values at `pointers` in a text that parsed with [`parse_strict`] (so
/// it has no duplicate member names), all found in ONE walk of the text that stops once
/// every value is found: the same spans [`locate`] gives, in the order of `pointers`
/// (`None` where nothing is there or the pointer is malformed). The work is one scan of
/// at most the text, whatever the number of pointers (each member name on a wanted path
/// is looked up in a sorted trie of the pointers).
pub fn locate_all_in_strict(text: &str, pointers: &[&str]) -> Vec<Option<Span>> {
    let tokens: Vec<Option<Vec<Cow<'_, str>>>> =
        pointers.iter().map(|p| pointer::tokens(p).ok()).collect();
    let refs: Vec<Option<&[Cow<'_, str>]>> = tokens.iter().map(Option::as_deref).collect();
    scan::locate_all_in_strict(text, &refs)
}

/// Sets the span and line:column of every finding in `findings` (and in their `anyOf` /
/// `oneOf` branches, recursively) that has a pointer, from its value in `text`, a text that
/// parsed with [`parse_strict`]: one scan for all the spans ([`locate_all_in_strict`]) and
/// one [`LineIndex`] for all the positions. A finding whose value is not found is left as
/// it is.
pub fn locate_findings(text: &str, findings: &mut [Finding]) {
    fn pointers<'f>(findings: &'f [Finding], out: &mut Vec<&'f str>) {
        for f in findings {
            if let Some(p) = &f.pointer {
                out.push(p);
            }
            for b in &f.branches {
                pointers(&b.errors, out);
            }
        }
    }
    fn assign(
        findings: &mut [Finding],
        spans: &mut impl Iterator<Item = Option<Span>>,
        lines: &LineIndex,
    ) {
        for f in findings {
            if f.pointer.is_some()
                && let Some(span) = spans.next().flatten()
            {
                f.span = Some(span);
                f.at = Some(lines.line_col(span.start));
            }
            for b in &mut f.branches {
                assign(&mut b.errors, spans, lines);
            }
        }
    }
    let mut wanted = Vec::new();
    pointers(findings, &mut wanted);
    if wanted.is_empty() {
        return;
    }
    // the root alone (`required`, `additionalProperties`, `type` of the whole instance):
    // its span is the text between the JSON whitespace around it, no scan needed
    let spans = if wanted.iter().all(|p| p.is_empty()) {
        vec![Some(root_span(text)); wanted.len()]
    } else if let Some(spans) = member_spans(text, &wanted) {
        spans
    } else {
        locate_all_in_strict(text, &wanted)
    };
    let lines = LineIndex::new(text);
    assign(findings, &mut spans.into_iter(), &lines);
}

/// [`locate_all_in_strict`] for pointers that are the root (`""`) or a member of a root
/// object named without `~` and `/` (`/amount_minor`), the pointers of most findings: one
/// walk of the root's members that skips each value (its strings by their quotes, its
/// containers by their brackets), no trie, no decoding. `None` (the general scan decides)
/// for any other pointer, a root that is not an object, or a member name with an escape.
fn member_spans(text: &str, wanted: &[&str]) -> Option<Vec<Option<Span>>> {
    let named = |p: &str| p.strip_prefix('/').is_some_and(|n| !n.contains(['/', '~']));
    if !wanted.iter().all(|p| p.is_empty() || named(p)) {
        return None;
    }
    let b = text.as_bytes();
    let root = root_span(text);
    if b.get(root.start) != Some(&b'{') {
        return None;
    }
    let mut spans: Vec<Option<Span>> = wanted
        .iter()
        .map(|p| p.is_empty().then_some(root))
        .collect();
    let ws = |mut i: usize| {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
            i += 1;
        }
        i
    };
    // the index of the closing quote of the string whose opening quote is at `i`
    let string_end = |i: usize| {
        let mut j = i + 1;
        loop {
            match *b.get(j)? {
                b'"' => return Some(j),
                b'\\' => j += 2,
                _ => j += 1,
            }
        }
    };
    let mut pos = ws(root.start + 1);
    if b.get(pos) == Some(&b'}') {
        return Some(spans);
    }
    loop {
        if b.get(pos) != Some(&b'"') {
            return None;
        }
        let close = string_end(pos)?;
        let name = &text[pos + 1..close];
        if name.contains('\\') {
            return None;
        }
        pos = ws(close + 1);
        if b.get(pos) != Some(&b':') {
            return None;
        }
        let start = ws(pos + 1);
        // the end of the value at `start`
        let end = match *b.get(start)? {
            b'"' => string_end(start)? + 1,
            b'{' | b'[' => {
                let (mut depth, mut j) = (0usize, start);
                loop {
                    match *b.get(j)? {
                        b'"' => j = string_end(j)?,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                break j + 1;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {
                let mut j = start;
                while b.get(j).is_some_and(|c| {
                    !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    j += 1;
                }
                j
            }
        };
        for (p, span) in wanted.iter().zip(spans.iter_mut()) {
            if !p.is_empty() && p[1..] == *name {
                *span = Some(Span { start, end });
            }
        }
        pos = ws(end);
        match b.get(pos) {
            Some(b',') => pos = ws(pos + 1),
            Some(b'}') => return Some(spans),
            _ => return None,
        }
    }
}

/// The span of the one value of `text`, a text that parsed with [`parse_strict`]: from its
/// first byte that is not JSON whitespace (RFC 8259 section 2: space, tab, line feed,
/// carriage return) to after its last one, what [`locate_all_in_strict`] gives for `""`.
fn root_span(text: &str) -> Span {
    let ws = [' ', '\t', '\n', '\r'];
    let end = text.trim_end_matches(ws).len();
    let start = end - text[..end].trim_start_matches(ws).len();
    Span { start, end }
}

/// Fallback when the scanner finds nothing wrong but `serde_json` did (should not happen):
/// `INVALID_JSON` with `serde_json`'s message at its position (its column counts bytes).
fn from_serde_error(text: &str, err: &serde_json::Error) -> Finding {
    let mut offset = 0usize;
    for _ in 1..err.line() {
        match text[offset..].find('\n') {
            Some(n) => offset += n + 1,
            None => break,
        }
    }
    offset = offset
        .saturating_add(err.column().saturating_sub(1))
        .min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let full = err.to_string();
    let message = match full.rfind(" at line ") {
        Some(n) => full[..n].to_owned(),
        None => full,
    };
    let end = offset + text[offset..].chars().next().map_or(0, char::len_utf8);
    Finding::new(Stage::Parse, Reason::INVALID_JSON, message)
        .with_span(Span { start: offset, end }, line_col(text, offset))
}

/// A record read without building the members of some of its objects
/// (`crate::core::request`'s reading of batch input lines): see [`pruned`].
pub(crate) use strict::Pruned;
/// The pieces of the strict reading, for a typed reading of a record that must refuse what
/// [`from_str_no_duplicates`] refuses (`crate::core::shape::otlp`'s spans): a member name
/// ([`StrictKey`]), the names of one object ([`StrictNames`]: a repeat is an error), a
/// value built ([`StrictSeed`]) or only walked ([`StrictSkip`]).
pub(crate) use strict::{Key as StrictKey, Names as StrictNames, Skip as StrictSkip, StrictSeed};

/// Reads `text` with `seed` under the limits and errors of [`from_str_no_duplicates`]
/// (the seed must read its parts with the pieces above).
///
/// # Errors
/// The text is not strict JSON, or the seed refused it.
pub(crate) fn strict_seed<'de, S: serde::de::DeserializeSeed<'de>>(
    text: &'de str,
    seed: S,
) -> Result<S::Value, serde_json::Error> {
    strict::seeded(text, seed)
}

/// Reads `text` as [`from_str_no_duplicates`] does (the same errors and limits), without
/// building the members of the top-level objects named in `bodies`: their members named in
/// `keep` are kept as raw text (checked only when parsed), the others only walked.
/// `Ok(None)` when the text is not a JSON object.
///
/// # Errors
/// The text is not strict JSON, as [`from_str_no_duplicates`] says, except in the kept
/// members.
pub(crate) fn pruned<'a>(
    text: &'a str,
    bodies: &[&str],
    keep: &[&str],
) -> Result<Option<Pruned<'a>>, serde_json::Error> {
    strict::pruned(text, bodies, keep)
}
