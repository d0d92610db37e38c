//! Captures that share an id (`docs/verdicts.md#duplicate-ids`): two records with the same
//! id make `verdict feedback ID` ambiguous, so each verdict whose id another capture of the
//! workspace has carries a `DUPLICATE_ID` warning naming the others. Every front end puts
//! it there the same way: `check` ([`crate::engine::batch`]) and the TUI's first run find
//! the shared ids before the first verdict ([`scan`]); the live session
//! ([`crate::engine::session`], behind `watch --json` and the TUI) keeps each capture's id
//! fingerprint and the groups of shared ids ([`Shared`]) and re-emits the verdicts a change
//! adds the warning to or takes it from.
//!
//! The id compared is the verdict's: [`Workspace::record_id`], what the pipeline names the
//! record (the id of the record shape it reads as, else its source). Reading that exactly
//! means parsing the record, so the pre-pass ([`Scan`]) does not: a non-validating byte scan
//! collects each record's *candidate* ids ([`candidates`], a superset: every string member
//! that may be an id, anywhere in the text, plus the record's source), and only records
//! with a candidate some other record also has (suspects) are parsed for their exact id:
//! none, in a workspace whose ids are all distinct.
//! A record's exact id is always one of its candidates ([`is_candidate`]; debug builds of
//! `check` assert it on every record, and tests on every sample and on hostile records), so
//! two records of the same id are both suspects and no shared id is missed.
//!
//! Ids are compared by a 64-bit fingerprint ([`fingerprint`]): two different ids of a
//! workspace of n captures get the same one with a probability of about n²/2⁶⁵ (3·10⁻⁸ for
//! a million captures), and then both are flagged, by every front end alike.

use crate::core::capture::{self, RawRecord};
use crate::core::prescan::{Needle, Sniff};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Verdict, Warning};
use crate::core::workspace::Workspace;
use rayon::prelude::*;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

/// The warning code.
pub const DUPLICATE_ID: &str = "DUPLICATE_ID";

/// At most this many other sources are named in one warning (an id shared by 100,000
/// records must not make each warning 100,000 sources long).
const NAMED: usize = 3;

/// Lines of a log whose suspects are read together (in parallel) by [`Scan::exact`].
const BLOCK: usize = crate::core::prescan::BLOCK;

/// The 64-bit fingerprint of a capture id (SipHash-1-3 with fixed keys: the same in every
/// process).
pub fn fingerprint(id: &str) -> u64 {
    fingerprint_bytes(id.as_bytes())
}

/// [`fingerprint`] of an id's UTF-8 bytes (a candidate read from a record's bytes, which
/// need not be valid UTF-8).
pub fn fingerprint_bytes(id: &[u8]) -> u64 {
    crate::core::request::id_fingerprint(id)
}

/// The member names whose string value may be a record's id, wherever they are in the
/// record (`docs/record-shapes.md`): a capture record's or a bare response's `id`, a batch
/// line's `custom_id` (OpenAI, Anthropic), `key` (Gemini batch), `recordId` (Bedrock
/// batch), Gemini's `responseId`, Bedrock's `ResponseMetadata.RequestId`, and a stream's
/// first event's `message.id` / `response.id`. A record shape whose id is read from
/// another member (or built from several) must add it here or in [`candidates`]: the test
/// `every_exact_id_is_a_candidate` (tests/dup_ids.rs) fails until it does.
pub const ID_MEMBERS: &[&str] = &[
    "id",
    "custom_id",
    "key",
    "recordId",
    "responseId",
    "RequestId",
];

/// Calls `each` with every candidate id of the record `text` (its bytes; they need not be
/// valid UTF-8 or JSON) in the file `file` (workspace-relative, as sources name it): the
/// value of every string member named in [`ID_MEMBERS`], at any depth, decoded as JSON
/// decodes it (`"\u00e9"` is `é`, also in member names); and, for a record with a
/// `jsonrpc` member (an MCP message), the ids an MCP capture is named by, `FILE#ID`,
/// `FILE#ID/result` and `FILE#ID/error`, for every `id` member, a string or a number (as
/// written and as JSON reads it); for an OTLP/JSON record (`resourceSpans`), the
/// `TRACEID/SPANID` of each of its LLM and tool spans. The record's source (its id when it names none) is not
/// among them: [`is_candidate`] adds it.
///
/// The scan does not validate: it skips strings by their closing quote (a string never
/// spans a line, so a stray quote resynchronises at the next line, as in an `.sse` file's
/// comment lines) and reads every string followed by `:` as a member name. On strict JSON
/// it finds every member, so the exact id of a record is always among the candidates; on
/// anything else it may find more or fewer, which is harmless, since a record that is not
/// strict JSON is named by its source.
pub fn candidates(text: &[u8], file: &str, each: &mut dyn FnMut(&[u8])) {
    candidates_in(text, file, false, each);
}

/// [`candidates`] of a record in a file whose records are read as the shapes they have
/// (`shaped`: no `[[source]]` forces a format on it, [`Workspace::reads_shapes`]): an
/// OTLP/JSON record that the shape detection reads as one (an object with `resourceSpans`
/// and no `jsonrpc`) has its span ids as its only candidates
/// ([`crate::core::shape::otlp::record_span_ids`]), since no other member of it names a
/// capture (the `key` of every attribute would otherwise make every OTLP record of a
/// workspace a suspect, to be parsed twice). Without `shaped`, as [`candidates`].
pub fn candidates_in(text: &[u8], file: &str, shaped: bool, each: &mut dyn FnMut(&[u8])) {
    scan_record(text, Sniff::of(text), file, shaped, each, None);
}

/// The member names whose string value may be a chain id that a trace span's natural key
/// (`TRACEID/PARENTSPANID`, [`chain_keys_in`]) could equal, wherever they are in a record
/// that is not read as OTLP/JSON: a capture record's `chain`, LiteLLM's `trace_id`, a
/// native batch line's `custom_id`, `key` or `recordId` (`docs/chains.md#linking`). A
/// record shape whose chain id is read from another member must add it here: the check in
/// `check`'s debug builds (`is_chain_key_in`) fails until it does.
pub const CHAIN_MEMBERS: &[&str] = &["chain", "trace_id", "custom_id", "key", "recordId"];

/// [`candidates_in`], also calling `keys` with every chain id the record may give one of
/// its captures that a trace span's natural chain key could equal
/// (`docs/chains.md#natural-links`): of an OTLP/JSON record, each LLM or tool span's
/// `TRACEID/PARENTSPANID` (once per span: two sibling spans of one record give it twice);
/// of any other record, the value of every string member named in [`CHAIN_MEMBERS`] that
/// holds a `/` (a span's key always does, so no other value can be one), decoded. A
/// record's source (the id of a batch line without one) is not among them: the pre-pass
/// counts a key that names a scanned record twice ([`Candidates`]).
pub fn chain_keys_in(
    text: &[u8],
    file: &str,
    shaped: bool,
    each: &mut dyn FnMut(&[u8]),
    keys: &mut dyn FnMut(&[u8]),
) {
    scan_record(text, Sniff::of(text), file, shaped, each, Some(keys));
}

/// What is called with each id or key read from a record.
type Each<'a> = &'a mut dyn FnMut(&[u8]);

/// The spans of an OTLP/JSON record `text` ([`crate::core::shape::otlp::quick_spans`] for
/// the common line, a superset; else [`crate::core::shape::otlp::record_spans`]): their
/// ids to `each`, their chain keys to `keys`; whether the record is read as that shape
/// when shapes decide (no `jsonrpc`). `None`: not such a record.
fn otlp_spans(
    text: &[u8],
    sniff: Sniff,
    each: &mut dyn FnMut(&[u8]),
    keys: &mut Option<Each<'_>>,
) -> Option<bool> {
    // the common line (one trace, no escapes) by a byte scan; any other by the typed walk
    let mut no_keys = |_: &[u8]| {};
    let quick_keys: &mut dyn FnMut(&[u8]) = match keys.as_deref_mut() {
        Some(k) => k,
        None => &mut no_keys,
    };
    if crate::core::shape::otlp::quick_spans(text, sniff, each, quick_keys) {
        return Some(true);
    }
    let (spans, jsonrpc) = crate::core::shape::otlp::record_spans(text)?;
    for s in &spans {
        each(s.id.as_bytes());
        if let (Some(k), Some(key)) = (keys.as_deref_mut(), &s.key) {
            k(key.as_bytes());
        }
    }
    Some(!jsonrpc)
}

/// The ids (`each`) and chain keys (`keys`) of one record, `sniff` the pre-pass's searches
/// of its bytes.
fn scan_record(
    text: &[u8],
    sniff: Sniff,
    file: &str,
    shaped: bool,
    each: &mut dyn FnMut(&[u8]),
    mut keys: Option<Each<'_>>,
) {
    // an OTLP/JSON record's span capture is named `TRACEID/SPANID`, two members joined
    let walked = sniff.has(Needle::ResourceSpans);
    if walked && otlp_spans(text, sniff, each, &mut keys).is_some_and(|as_otlp| shaped && as_otlp) {
        return;
    }
    // a member name can only hide one of ours behind a `\u` escape: without one, a search
    // for each quoted name finds every member (a match inside a string value, `"a \"id"`,
    // is a member name only if a colon follows, and then only adds a candidate)
    if sniff.escape {
        return tokenize(text, sniff, file, walked, each, keys);
    }
    let jsonrpc = sniff.has(Needle::QuotedJsonrpc);
    let mut rpc_ids: Vec<Vec<u8>> = Vec::new();
    let mut value_buf = Vec::new();
    for &needle in ID_NEEDLES {
        let len = needle.bytes().len();
        let rpc = needle == Needle::Id && jsonrpc;
        sniff.member_matches(text, needle, &mut |at| {
            let j = skip_ws(text, at + len);
            if text.get(j) != Some(&b':') {
                return;
            }
            let j = skip_ws(text, j + 1);
            member_value(text, j, rpc, &mut value_buf, &mut rpc_ids, each);
        });
    }
    if jsonrpc {
        mcp_forms(&rpc_ids, file, each);
    }
    // a chain id a span's key could equal holds a `/` (written `\/` too; `\u002f` is
    // read by `tokenize`)
    if let Some(k) = keys
        && memchr::memchr(b'/', text).is_some()
    {
        let mut slashed = |v: &[u8]| {
            if memchr::memchr(b'/', v).is_some() {
                k(v);
            }
        };
        for needle in CHAIN_NEEDLES {
            let len = needle.bytes().len();
            sniff.member_matches(text, needle, &mut |at| {
                let j = skip_ws(text, at + len);
                if text.get(j) != Some(&b':') {
                    return;
                }
                let j = skip_ws(text, j + 1);
                member_value(text, j, false, &mut value_buf, &mut rpc_ids, &mut slashed);
            });
        }
    }
}

/// [`ID_MEMBERS`] as the pre-pass's search finds them ([`Sniff`]), in the same order: the
/// needles `Id` to `RequestId`.
const ID_NEEDLES: &[Needle] = Needle::ALL
    .split_at(Needle::Id as usize)
    .1
    .split_at(Needle::RequestId as usize - Needle::Id as usize + 1)
    .0;

/// [`CHAIN_MEMBERS`] as the pre-pass's search finds them, in the same order.
const CHAIN_NEEDLES: [Needle; 5] = [
    Needle::Chain,
    Needle::TraceId,
    Needle::CustomId,
    Needle::Key,
    Needle::RecordId,
];

/// The value at `j` of an id member: a string is a candidate (decoded); with `rpc`, it and
/// a number token are kept in `rpc_ids` too. Returns where the value ends, if it is one.
fn member_value(
    text: &[u8],
    j: usize,
    rpc: bool,
    buf: &mut Vec<u8>,
    rpc_ids: &mut Vec<Vec<u8>>,
    each: &mut dyn FnMut(&[u8]),
) -> Option<usize> {
    match text.get(j)? {
        b'"' => {
            let (vend, vescaped) = string_end(text, j + 1)?;
            let value: &[u8] = if vescaped {
                unescape(&text[j + 1..vend], buf);
                buf
            } else {
                &text[j + 1..vend]
            };
            each(value);
            if rpc {
                rpc_ids.push(value.to_vec());
            }
            Some(vend + 1)
        }
        b if rpc && (*b == b'-' || b.is_ascii_digit()) => {
            let len = text[j..]
                .iter()
                .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .unwrap_or(text.len() - j);
            let token = &text[j..j + len];
            rpc_ids.push(token.to_vec());
            // as JSON reads it (`1.0`, `1e2` are written back as `1.0`, `100.0`)
            if let Ok(num) = serde_json::from_slice::<serde_json::Number>(token) {
                let norm = num.to_string();
                if norm.as_bytes() != token {
                    rpc_ids.push(norm.into_bytes());
                }
            }
            Some(j + len)
        }
        _ => None,
    }
}

/// The MCP forms of the JSON-RPC ids `ids` in `file`: `FILE#ID`, `FILE#ID/result`,
/// `FILE#ID/error`.
fn mcp_forms(ids: &[Vec<u8>], file: &str, each: &mut dyn FnMut(&[u8])) {
    let mut form = Vec::new();
    for id in ids {
        for tail in ["", "/result", "/error"] {
            form.clear();
            form.extend_from_slice(file.as_bytes());
            form.push(b'#');
            form.extend_from_slice(id);
            form.extend_from_slice(tail.as_bytes());
            each(&form);
        }
    }
}

/// [`candidates`] of a text with `\u` escapes: every string token is read, and decoded
/// when it has escapes, so a member name written `"\u0069d"` is `id`; with `keys`, the
/// values of the [`CHAIN_MEMBERS`] that hold a `/` too, and, unless the record was
/// `walked` already, the spans of a record whose `resourceSpans` is written with an
/// escape.
fn tokenize(
    text: &[u8],
    sniff: Sniff,
    file: &str,
    walked: bool,
    each: &mut dyn FnMut(&[u8]),
    mut keys: Option<Each<'_>>,
) {
    let mut jsonrpc = false;
    let mut otlp = false;
    // `id` values (decoded strings, number tokens), for the MCP forms
    let mut rpc_ids: Vec<Vec<u8>> = Vec::new();
    let mut name_buf = Vec::new();
    let mut value_buf = Vec::new();
    let mut i = 0;
    while let Some(q) = memchr::memchr(b'"', &text[i..]) {
        let start = i + q + 1;
        let Some((end, escaped)) = string_end(text, start) else {
            // no closing quote on this line: resume on the next one
            match memchr::memchr(b'\n', &text[start..]) {
                Some(nl) => {
                    i = start + nl + 1;
                    continue;
                }
                None => break,
            }
        };
        let mut j = skip_ws(text, end + 1);
        if text.get(j) != Some(&b':') {
            i = end + 1;
            continue;
        }
        j = skip_ws(text, j + 1);
        let name: &[u8] = if escaped {
            unescape(&text[start..end], &mut name_buf);
            &name_buf
        } else {
            &text[start..end]
        };
        let is_id = name == b"id";
        if name == b"jsonrpc" {
            jsonrpc = true;
        }
        otlp |= name == b"resourceSpans";
        let wanted = ID_MEMBERS.iter().any(|m| m.as_bytes() == name);
        let key = keys.is_some() && CHAIN_MEMBERS.iter().any(|m| m.as_bytes() == name);
        if wanted || key {
            let mut both = |v: &[u8]| {
                if wanted {
                    each(v);
                }
                if key
                    && memchr::memchr(b'/', v).is_some()
                    && let Some(k) = keys.as_deref_mut()
                {
                    k(v);
                }
            };
            if let Some(end) = member_value(
                text,
                j,
                is_id && wanted,
                &mut value_buf,
                &mut rpc_ids,
                &mut both,
            ) {
                i = end;
                continue;
            }
        }
        i = j;
    }
    if jsonrpc {
        mcp_forms(&rpc_ids, file, each);
    }
    // `"resourceSp\u0061ns"`: the main pass reads the record as OTLP/JSON all the same
    if otlp && !walked {
        otlp_spans(text, sniff, each, &mut keys);
    }
}

/// Whether `id` is a candidate id of the record `raw` ([`candidates`] of its text, or its
/// source): what must hold of its exact id ([`Workspace::record_id`]) for [`Scan`] to miss
/// no shared id.
pub fn is_candidate(id: &str, raw: &RawRecord) -> bool {
    candidate_of(id, raw, false)
}

/// [`is_candidate`] among the candidates the pre-pass of the workspace `ws` reads
/// ([`candidates_in`], as the file's `[[source]]` tables make it).
pub fn is_candidate_in(ws: &Workspace, id: &str, raw: &RawRecord) -> bool {
    candidate_of(id, raw, ws.reads_shapes(raw.source.file()))
}

/// Whether `id`, the chain id of a capture of the record `raw` (linked by its record or
/// naturally), is among the chain keys the pre-pass of the workspace `ws` reads of the
/// record ([`chain_keys_in`]) or is its source: what must hold of every such chain id that
/// holds a `/` for `check` to leave out no span whose chain another capture shares
/// ([`ChainKeys`]).
pub fn is_chain_key_in(ws: &Workspace, id: &str, raw: &RawRecord) -> bool {
    if id == raw.source.with_part(None).as_str() {
        return true;
    }
    let Ok(text) = &raw.text else {
        return false;
    };
    let mut found = false;
    chain_keys_in(
        text.as_bytes(),
        raw.source.file(),
        ws.reads_shapes(raw.source.file()),
        &mut |_| {},
        &mut |k| found |= k == id.as_bytes(),
    );
    found
}

fn candidate_of(id: &str, raw: &RawRecord, shaped: bool) -> bool {
    if id == raw.source.as_str() {
        return true;
    }
    // a part of a record of several captures that could not be read is named by its source
    let named = RecordRef::parse(id);
    if named.part().is_some() && named.with_part(None) == raw.source.with_part(None) {
        return true;
    }
    let Ok(text) = &raw.text else {
        return false;
    };
    let mut found = false;
    candidates_in(text.as_bytes(), raw.source.file(), shaped, &mut |c| {
        found |= c == id.as_bytes();
    });
    found
}

/// Where the string whose content starts at `start` ends (the index of its closing quote)
/// and whether it holds a backslash escape; `None` when a line break or the end of the text
/// comes first.
fn string_end(text: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    let mut k = start;
    loop {
        let at = k + memchr::memchr3(b'"', b'\\', b'\n', &text[k..])?;
        match text[at] {
            b'"' => return Some((at, escaped)),
            b'\\' => {
                escaped = true;
                k = at + 2;
                if k > text.len() {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while text
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The content of a JSON string (between its quotes) decoded into `out`, as UTF-8: the
/// escapes `\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t` and `\uXXXX` (surrogate pairs
/// joined). A malformed escape or a lone surrogate (not strict JSON, so never an exact id)
/// is kept as written.
fn unescape(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let hex4 = |at: usize| -> Option<u32> {
        let h = raw.get(at..at + 4)?;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let mut k = 0;
    while k < raw.len() {
        let b = raw[k];
        if b != b'\\' || k + 1 >= raw.len() {
            out.push(b);
            k += 1;
            continue;
        }
        let simple = match raw[k + 1] {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            k += 2;
            continue;
        }
        let unit = (raw[k + 1] == b'u').then(|| hex4(k + 2)).flatten();
        let decoded = match unit {
            Some(hi @ 0xd800..=0xdbff) => {
                let lo = (raw.get(k + 6..k + 8) == Some(b"\\u"))
                    .then(|| hex4(k + 8))
                    .flatten()
                    .filter(|lo| (0xdc00..=0xdfff).contains(lo));
                lo.and_then(|lo| char::from_u32(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)))
                    .map(|c| (c, 12))
            }
            Some(u) => char::from_u32(u).map(|c| (c, 6)),
            None => None,
        };
        match decoded {
            Some((c, len)) => {
                let mut tmp = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                k += len;
            }
            None => {
                out.push(b);
                k += 1;
            }
        }
    }
}

/// Captures by id fingerprint, compactly (24 bytes each): what [`Shared`] is built from.
#[derive(Debug, Default)]
pub struct Members {
    files: Vec<Arc<str>>,
    by_name: HashMap<Arc<str>, u32>,
    /// (fingerprint, file number, line; 0 for a `.json` file, part; 0 for a record that is
    /// one capture)
    list: Vec<(u64, u32, u32, u32)>,
}

impl Members {
    /// Adds the capture at `source` (its full source: a part of a record of several
    /// captures is `captures/log.jsonl:9#2`) whose id has fingerprint `fp`.
    pub fn push(&mut self, fp: u64, source: &RecordRef) {
        let file = self.file(source.file());
        let line = source.line().map_or(0, |l| l as u32);
        self.list.push((fp, file, line, source.part().unwrap_or(0)));
    }

    /// The fingerprints of the captures (one per capture, in the order pushed).
    pub fn fingerprints(&self) -> impl Iterator<Item = u64> + '_ {
        self.list.iter().map(|m| m.0)
    }

    fn file(&mut self, name: &Arc<str>) -> u32 {
        if let Some(&n) = self.by_name.get(name) {
            return n;
        }
        let n = self.files.len() as u32;
        self.files.push(name.clone());
        self.by_name.insert(name.clone(), n);
        n
    }

    /// The ids held by more than one of the captures.
    pub fn shared(mut self) -> Shared {
        self.list.sort_unstable();
        let mut out = HashMap::new();
        for run in self.list.chunk_by(|a, b| a.0 == b.0) {
            if run.len() < 2 {
                continue;
            }
            let mut sources: Vec<RecordRef> = run
                .iter()
                .map(|&(_, f, line, part)| {
                    RecordRef::new_part(
                        self.files[f as usize].clone(),
                        (line != 0).then_some(line as usize),
                        (part != 0).then_some(part),
                    )
                })
                .collect();
            sources.sort();
            sources.dedup();
            if sources.len() > 1 {
                out.insert(run[0].0, sources);
            }
        }
        Shared(out)
    }
}

/// The ids that more than one capture has: by [`fingerprint`], the sources of the captures
/// that have it, ordered by file, line, then part (`captures/a.json`,
/// `captures/log.jsonl:3`, `captures/log.jsonl:9#1`, `captures/log.jsonl:9#2`): two spans
/// of one trace record that share an id are two captures.
/// Holds shared ids only: empty in a workspace whose ids are all distinct.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Shared(HashMap<u64, Vec<RecordRef>>);

impl Shared {
    /// No id is shared.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many ids are shared.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The sources that have the id of fingerprint `fp`, when more than one has it.
    pub fn group(&self, fp: u64) -> Option<&[RecordRef]> {
        self.0.get(&fp).map(Vec::as_slice)
    }

    /// The fingerprints of the shared ids.
    pub fn fingerprints(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.keys().copied()
    }

    /// Replaces the groups of the fingerprints `fps` with those `now` has.
    pub fn replace(&mut self, fps: &std::collections::HashSet<u64>, now: Shared) {
        self.0.retain(|fp, _| !fps.contains(fp));
        self.0
            .extend(now.0.into_iter().filter(|(fp, _)| fps.contains(fp)));
    }

    /// Adds the `DUPLICATE_ID` warning to `v` when its id is shared and it is one of the
    /// captures that have it (a verdict already marked is left as it is).
    pub fn mark(&self, v: &mut Verdict) {
        if self.0.is_empty() || v.warnings.iter().any(|w| w.code == DUPLICATE_ID) {
            return;
        }
        let Some(sources) = self.group(fingerprint(&v.id)) else {
            return;
        };
        // the sources name captures: a part of a record of several captures is found by its
        // full source (`captures/log.jsonl:9#2`) and names the others by theirs
        if sources.binary_search(&v.source).is_ok() {
            let w = warning(&v.id, &v.source, sources);
            v.warnings.push(w);
        }
    }
}

/// The warning on the capture at `own` whose id `id` the other `sources` (ordered) share:
/// it names the first 3 others and counts the rest.
pub fn warning(id: &str, own: &RecordRef, sources: &[RecordRef]) -> Warning {
    let others: Vec<&str> = sources
        .iter()
        .filter(|s| *s != own)
        .map(RecordRef::as_str)
        .collect();
    let mut named = others[..others.len().min(NAMED)].join(", ");
    if others.len() > NAMED {
        named = format!("{named} and {} more", others.len() - NAMED);
    }
    Warning::capture(
        DUPLICATE_ID,
        Some("/id".into()),
        format!(
            "id `{id}` is also the id of {named}: `verdict feedback {id}` is ambiguous (give \
             each capture its own id, or name it by its source)"
        ),
    )
}

/// The pre-pass over capture files, in constant memory per record (12 bytes and 8 per
/// candidate, for a moment): [`Scan::read`] reads every record's candidate ids
/// ([`candidates`]) by fingerprint without parsing and keeps the fingerprints two records
/// share; [`Scan::exact`] then reads the exact id of the records that may share one. A
/// record's source (its id when it names none) is shared only with a record whose candidate
/// spells it, so a candidate naming a scanned record (`captures/a.json`,
/// `captures/log.jsonl:3`) makes both suspects.
#[derive(Debug)]
pub struct Scan {
    files: Vec<ScanFile>,
    /// Every candidate fingerprint of every record, in runs (one per stretch of records the
    /// pre-pass read together), each sorted, a candidate of several records of the stretch
    /// once per record: exactly sized, 8 bytes per candidate, never one vector grown to the
    /// whole workspace.
    runs: Vec<Box<[u64]>>,
    /// The candidate fingerprints that two or more records have, sorted.
    several: Vec<u64>,
    /// The chain keys that two or more captures may have ([`Scan::chain_keys`]).
    keys: ChainKeys,
    /// (file, line) of the records that are suspects by a source: a record whose candidate
    /// names another scanned record's source, and that record.
    named: Vec<(u32, u32)>,
    max_bytes: u64,
}

/// One file of a [`Scan`].
#[derive(Debug)]
struct ScanFile {
    /// Workspace-relative, as sources name it.
    name: Arc<str>,
    path: PathBuf,
    /// Read line by line (else one record).
    log: bool,
    /// The line of every record read (0 for the record of a one-record file).
    lines: crate::core::prescan::Lines,
}

/// What the scan of some records gave: their candidates (without repeats within a record),
/// the suspects by a source, and the chain keys ([`chain_keys_in`], a repeat kept for each
/// capture that may have it) ([`Candidates`] collects it in the pre-pass).
#[derive(Default)]
pub struct Found {
    /// The candidates of the records read since the last [`Found::seal`].
    open: Vec<u64>,
    /// Sealed stretches, each sorted and exactly sized (a candidate once per record having
    /// it: a repeat within a run is two records sharing it).
    runs: Vec<Box<[u64]>>,
    named: Vec<(u32, u32)>,
    /// The chain keys of the records read since the last [`Found::seal`], by fingerprint.
    keys: Vec<u64>,
    /// Sealed stretches of chain keys, as `runs`.
    key_runs: Vec<Box<[u64]>>,
}

impl Found {
    /// Sorts the open candidates (and chain keys) into a run of their own (repeats kept:
    /// each is one more record having the candidate).
    fn seal(&mut self) {
        for (open, runs) in [
            (&mut self.open, &mut self.runs),
            (&mut self.keys, &mut self.key_runs),
        ] {
            if open.is_empty() {
                continue;
            }
            let mut run = std::mem::take(open);
            run.sort_unstable();
            runs.push(run.into_boxed_slice());
        }
    }

    fn append(&mut self, mut other: Found) {
        self.seal();
        other.seal();
        self.runs.append(&mut other.runs);
        self.named.append(&mut other.named);
        self.key_runs.append(&mut other.key_runs);
    }
}

/// The natural chain keys of trace spans (`TRACEID/PARENTSPANID`,
/// `docs/chains.md#natural-links`) that more than one capture of the scanned files may
/// have as its chain id, by fingerprint, known before the first verdict
/// ([`Scan::chain_keys`]). A span's key that is not one of them is the chain id of that
/// span alone: a natural link seen once, no chain, which `check` keeps nothing for
/// (`docs/chains.md#memory`). Two keys of the same fingerprint are both kept: only one
/// step more, reported as no chain.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ChainKeys {
    /// Sorted.
    shared: Vec<u64>,
}

impl ChainKeys {
    /// Whether the span chain key `key` (the chain id of an OTLP or OpenInference span's
    /// natural link) is the chain id of no other capture of the scanned files.
    pub fn lone(&self, key: &str) -> bool {
        self.shared.binary_search(&fingerprint(key)).is_err()
    }

    /// How many fingerprints more than one capture may have.
    pub fn len(&self) -> usize {
        self.shared.len()
    }

    /// No key is shared.
    pub fn is_empty(&self) -> bool {
        self.shared.is_empty()
    }
}

/// The fingerprints held twice or more in `runs` (each run sorted; a repeat within a run
/// counts as one within two runs does), sorted. Fingerprints are hashes, so their top byte spreads them evenly over 256 buckets:
/// each bucket's share of every run is gathered and sorted on its own (in parallel), which
/// needs 1/256 of the candidates in memory at once per thread, not a copy of them all.
fn in_several(runs: &[Box<[u64]>]) -> Vec<u64> {
    let buckets: Vec<Vec<u64>> = (0..=u8::MAX)
        .into_par_iter()
        .map(|b| {
            let mut all: Vec<u64> = Vec::new();
            for run in runs {
                let lo = run.partition_point(|&v| ((v >> 56) as u8) < b);
                let hi = lo + run[lo..].partition_point(|&v| ((v >> 56) as u8) == b);
                all.extend_from_slice(&run[lo..hi]);
            }
            all.sort_unstable();
            all.chunk_by(|a, b| a == b)
                .filter(|r| r.len() > 1)
                .map(|r| r[0])
                .collect()
        })
        .collect();
    buckets.concat()
}

/// Calls `each` with the line and bytes (`None`: unreadable) of every record of the log
/// `f`, block by block: `block` gets up to [`BLOCK`] records with the bytes they point into.
fn log_blocks(
    f: &ScanFile,
    max_bytes: u64,
    mut block: impl FnMut(&[(u32, Option<(usize, usize)>)], &[u8]),
) {
    let Ok(file) = capture::open_log(&f.path, &f.name, max_bytes) else {
        // one INVALID_CAPTURE record, named by its file
        block(&[(0, None)], &[]);
        return;
    };
    let mut bytes: Vec<u8> = Vec::new();
    let mut lines: Vec<(u32, Option<(usize, usize)>)> = Vec::new();
    capture::read_line_bytes(
        std::io::BufReader::with_capacity(256 * 1024, file),
        max_bytes,
        |line_no, line| {
            let span = line.ok().map(|l| {
                let a = bytes.len();
                bytes.extend_from_slice(l);
                (a, bytes.len())
            });
            lines.push((line_no as u32, span));
            if lines.len() >= BLOCK {
                block(&lines, &bytes);
                bytes.clear();
                lines.clear();
            }
        },
    );
    if !lines.is_empty() {
        block(&lines, &bytes);
    }
}

/// The pre-pass hook ([`crate::core::prescan::Hook`]) that reads every record's candidate
/// ids ([`candidates`]) by fingerprint, without parsing, for the files numbered
/// `0..names.len()`.
pub struct Candidates {
    names: Vec<Arc<str>>,
    /// Per file: its records are read as the shapes they have ([`candidates_in`]).
    shaped: Vec<bool>,
    by_name: HashMap<Arc<str>, u32>,
}

impl Candidates {
    /// The hook for the files named `names` (workspace-relative, as sources name them) of
    /// the workspace `ws`, the file numbered `i` being `names[i]`.
    pub fn new(ws: &Workspace, names: Vec<Arc<str>>) -> Candidates {
        let by_name = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
        let shaped = names.iter().map(|n| ws.reads_shapes(n)).collect();
        Candidates {
            names,
            shaped,
            by_name,
        }
    }
}

impl crate::core::prescan::Hook for Candidates {
    type Found = Found;

    fn record(&self, file: u32, line: u32, text: Option<&[u8]>, found: &mut Found) {
        self.record_sniffed(file, line, text.map(|t| (t, Sniff::of(t))), found);
    }

    fn record_sniffed(
        &self,
        file: u32,
        line: u32,
        text: Option<(&[u8], Sniff)>,
        found: &mut Found,
    ) {
        let Some((text, sniff)) = text else { return };
        let start = found.open.len();
        let f = file as usize;
        let (open, named, keys) = (&mut found.open, &mut found.named, &mut found.keys);
        scan_record(
            text,
            sniff,
            &self.names[f],
            self.shaped[f],
            &mut |c| {
                open.push(fingerprint_bytes(c));
                if let Some(at) = names_record(c, &self.by_name) {
                    named.push(at);
                    named.push((file, line));
                }
            },
            Some(&mut |k| {
                let fp = fingerprint_bytes(k);
                keys.push(fp);
                // a key spelling a scanned record's source may be the natural id of a
                // batch line without one: counted twice, its spans are kept
                if names_record(k, &self.by_name).is_some() {
                    keys.push(fp);
                }
            }),
        );
        let mine = &mut found.open[start..];
        mine.sort_unstable();
        let mut keep = 0;
        for i in 0..mine.len() {
            if keep == 0 || mine[i] != mine[keep - 1] {
                mine[keep] = mine[i];
                keep += 1;
            }
        }
        found.open.truncate(start + keep);
    }

    fn append(into: &mut Found, other: Found) {
        into.append(other);
    }

    /// A batch input request is no capture: its ids are no capture's (a batch input file
    /// shares every `custom_id` with its output file, and would make every line a suspect).
    fn skips_requests(&self) -> bool {
        true
    }

    fn seal(found: &mut Found) {
        found.seal();
    }
}

impl Scan {
    /// Reads the candidate ids of every record of `files` (capture files of `ws`), reading
    /// records as `check` reads them ([`crate::core::prescan::read`], its MCP facts and
    /// requests not collected): what [`crate::engine::prescan::run`] does with them.
    pub fn read(ws: &Workspace, files: &[PathBuf]) -> Scan {
        let targets: Vec<crate::core::prescan::Target> = files
            .iter()
            .enumerate()
            .map(|(i, p)| crate::core::prescan::Target {
                path: p.clone(),
                hook: Some(i as u32),
            })
            .collect();
        let hook = Candidates::new(ws, files.iter().map(|f| ws.relative(f).into()).collect());
        let pre = crate::core::prescan::read(
            ws,
            &targets,
            false,
            &hook,
            &crate::core::prescan::Progress::default(),
        );
        Scan::of(pre.files, pre.found, ws.config.max_capture_bytes)
    }

    /// The scan of what the pre-pass read: `files` (the hooked ones are the scanned files,
    /// by their hook number) and what [`Candidates`] found in them.
    pub fn of(files: Vec<crate::core::prescan::FileRead>, found: Found, max_bytes: u64) -> Scan {
        let mut files: Vec<(u32, ScanFile)> = files
            .into_iter()
            .filter_map(|f| {
                Some((
                    f.hook?,
                    ScanFile {
                        name: f.name,
                        path: f.path,
                        log: f.log,
                        lines: f.lines,
                    },
                ))
            })
            .collect();
        files.sort_by_key(|f| f.0);
        let files = files.into_iter().map(|f| f.1).collect();
        let mut found = found;
        found.seal();
        let Found {
            runs,
            named,
            key_runs,
            ..
        } = found;
        let several = in_several(&runs);
        let keys = ChainKeys {
            shared: in_several(&key_runs),
        };
        Scan {
            files,
            runs,
            several,
            keys,
            named,
            max_bytes,
        }
    }

    /// The span chain keys several captures of the scanned files may have (taken out of
    /// the scan: what `check` feeds its chain set by, [`ChainKeys::lone`]).
    pub fn chain_keys(&mut self) -> ChainKeys {
        std::mem::take(&mut self.keys)
    }

    /// The fingerprints of every candidate and every source of every record: each id a
    /// record may have.
    pub fn fingerprints(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs.iter().flat_map(|r| r.iter().copied()).chain(
            self.files
                .iter()
                .flat_map(|f| f.lines.iter().map(move |l| source_fp(&f.name, l))),
        )
    }

    /// The exact ids ([`Workspace::record_id`]) of the suspects: the records having a
    /// candidate that another record also has, or one that `known` holds (the ids of
    /// captures outside these files, given by the live session), or whose source another
    /// record names or `known` holds. Every other record's id is one that no other record
    /// has and `known` does not hold, so [`Members::shared`] of what this returns is what it
    /// would be with every record in (plus the `known` ids the caller adds). The files are
    /// read again only when some candidate is shared or known, else only those holding a
    /// suspect, and only the suspects are parsed.
    pub fn exact(self, ws: &Workspace, known: Option<&(dyn Fn(u64) -> bool + Sync)>) -> Members {
        let Scan {
            files,
            runs,
            several,
            mut named,
            max_bytes,
            ..
        } = self;
        if let Some(k) = known {
            for (i, f) in files.iter().enumerate() {
                named.extend(
                    f.lines
                        .iter()
                        .filter(|&l| k(source_fp(&f.name, l)))
                        .map(|l| (i as u32, l)),
                );
            }
        }
        let by_candidate =
            !several.is_empty() || known.is_some_and(|k| runs.iter().flatten().any(|&fp| k(fp)));
        drop(runs);
        named.sort_unstable();
        named.dedup();
        let mut out = Members::default();
        for f in &files {
            out.file(&f.name);
        }
        let suspect_text = |file: &str, text: &[u8]| {
            let mut hit = false;
            candidates_in(text, file, ws.reads_shapes(file), &mut |c| {
                let fp = fingerprint_bytes(c);
                hit |= several.binary_search(&fp).is_ok() || known.is_some_and(|k| k(fp));
            });
            hit
        };
        for (i, f) in files.iter().enumerate() {
            let file_no = i as u32;
            let lo = named.partition_point(|s| s.0 < file_no);
            let hi = named.partition_point(|s| s.0 <= file_no);
            let want: Vec<u32> = named[lo..hi].iter().map(|s| s.1).collect();
            if want.is_empty() && !by_candidate {
                continue;
            }
            let is_wanted = |line: u32, text: Option<&[u8]>| {
                want.binary_search(&line).is_ok()
                    || (by_candidate && text.is_some_and(|t| suspect_text(&f.name, t)))
            };
            if f.log {
                log_blocks(f, max_bytes, |block, bytes| {
                    // a record of several captures (`Payload::Parts`) has an id per part
                    let fps: Vec<Vec<(u32, u32, u64)>> = block
                        .par_iter()
                        .filter_map(|&(line, span)| {
                            let text = span.map(|(a, b)| &bytes[a..b]);
                            if !is_wanted(line, text) {
                                return None;
                            }
                            let source = RecordRef::new(
                                f.name.clone(),
                                (line != 0).then_some(line as usize),
                            );
                            let raw = match text {
                                Some(t) => RawRecord::json(source, capture::decode(t.to_vec())),
                                None => {
                                    return Some(vec![(line, 0, fingerprint(source.as_str()))]);
                                }
                            };
                            Some(
                                ws.record_parts(&raw)
                                    .iter()
                                    .map(|(part, id)| (line, part.unwrap_or(0), fingerprint(id)))
                                    .collect(),
                            )
                        })
                        .collect();
                    out.list.extend(
                        fps.into_iter()
                            .flatten()
                            .map(|(line, part, fp)| (fp, file_no, line, part)),
                    );
                });
            } else {
                capture::for_each_record(&f.path, &f.name, max_bytes, |r| {
                    let text = r.text.as_deref().ok().map(str::as_bytes);
                    if is_wanted(0, text) {
                        for (part, id) in ws.record_parts(&r) {
                            out.list
                                .push((fingerprint(&id), file_no, 0, part.unwrap_or(0)));
                        }
                    }
                });
            }
        }
        out
    }
}

/// Whether the candidate `c` is the source of a record of the scanned files (`by_name`):
/// a file's name (a one-record file, or a log that could not be read), or `FILE:LINE`.
fn names_record(c: &[u8], by_name: &HashMap<Arc<str>, u32>) -> Option<(u32, u32)> {
    let by_name = |name: &[u8]| std::str::from_utf8(name).ok().and_then(|n| by_name.get(n));
    if let Some(&f) = by_name(c) {
        return Some((f, 0));
    }
    let colon = memchr::memrchr(b':', c)?;
    let (file, line) = (&c[..colon], &c[colon + 1..]);
    if line.is_empty() || line.len() > 10 || !line.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let line: u32 = std::str::from_utf8(line).ok()?.parse().ok()?;
    by_name(file).map(|&f| (f, line))
}

/// The fingerprint of the source of the record at `line` (0: a one-record file) of `name`.
fn source_fp(name: &str, line: u32) -> u64 {
    if line == 0 {
        fingerprint(name)
    } else {
        let mut s = String::with_capacity(name.len() + 11);
        let _ = write!(s, "{name}:{line}");
        fingerprint(&s)
    }
}

/// The ids several records of `files` share, as their verdicts will carry them, known
/// before the first verdict: [`Scan::read`], then the exact ids of the suspects.
pub fn scan(ws: &Workspace, files: &[PathBuf]) -> Shared {
    Scan::read(ws, files).exact(ws, None).shared()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_needles_of_the_pre_pass_are_the_members_quoted_in_order() {
        let quoted = |m: &&str| format!("\"{m}\"").into_bytes();
        let ids: Vec<Vec<u8>> = ID_NEEDLES.iter().map(|n| n.bytes().to_vec()).collect();
        assert_eq!(ids, ID_MEMBERS.iter().map(quoted).collect::<Vec<_>>());
        let chain: Vec<Vec<u8>> = CHAIN_NEEDLES.iter().map(|n| n.bytes().to_vec()).collect();
        assert_eq!(chain, CHAIN_MEMBERS.iter().map(quoted).collect::<Vec<_>>());
        assert!(
            ID_NEEDLES
                .iter()
                .chain(&CHAIN_NEEDLES)
                .all(|n| n.is_member())
        );
    }

    #[test]
    fn in_several_lists_each_fingerprint_two_runs_share_once_in_order() {
        let runs: Vec<Box<[u64]>> = vec![
            vec![1, 5, u64::MAX - 1, u64::MAX].into(),
            vec![2, 5, 1 << 56].into(),
            vec![5, 1 << 56, u64::MAX].into(),
            vec![].into(),
        ];
        assert_eq!(in_several(&runs), vec![5, 1 << 56, u64::MAX]);
        assert_eq!(in_several(&runs[..1]), Vec::<u64>::new());
    }

    #[test]
    fn sealed_stretches_are_sorted_runs_keeping_a_repeat_per_record() {
        let mut f = Found::default();
        f.open.extend([9, 3, 9, 1]);
        let mut g = Found::default();
        g.open.extend([3, 2]);
        f.append(g);
        assert_eq!(
            f.runs.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
            vec![vec![1, 3, 9, 9], vec![2, 3]]
        );
        // 9: two records of one stretch; 3: one record in each of two stretches
        assert_eq!(in_several(&f.runs), vec![3, 9]);
    }

    #[test]
    fn the_warning_names_at_most_three_others() {
        let sources: Vec<RecordRef> = (1..=6)
            .map(|i| RecordRef::new("l.jsonl", Some(i)))
            .collect();
        let w = warning("x", &sources[1], &sources);
        assert_eq!(w.code, "DUPLICATE_ID");
        assert_eq!(w.pointer.as_deref(), Some("/id"));
        assert_eq!(w.severity.as_deref(), Some("warning"));
        assert_eq!(
            w.message,
            "id `x` is also the id of l.jsonl:1, l.jsonl:3, l.jsonl:4 and 2 more: `verdict \
             feedback x` is ambiguous (give each capture its own id, or name it by its source)"
        );
        let w = warning("x", &sources[0], &sources[..2]);
        assert!(
            w.message
                .starts_with("id `x` is also the id of l.jsonl:2: "),
            "{}",
            w.message
        );
    }

    #[test]
    fn shared_keeps_the_ids_of_several_captures_in_source_order() {
        let mut m = Members::default();
        let a = RecordRef::new("b.jsonl", Some(3));
        let b = RecordRef::new("a.json", None);
        let c = RecordRef::new("b.jsonl", Some(1));
        m.push(fingerprint("dup"), &a);
        m.push(fingerprint("solo"), &RecordRef::new("b.jsonl", Some(2)));
        m.push(fingerprint("dup"), &b);
        m.push(fingerprint("dup"), &c);
        let s = m.shared();
        assert_eq!(s.len(), 1);
        assert_eq!(s.group(fingerprint("dup")).unwrap(), [b, c, a.clone()]);
        assert_eq!(s.group(fingerprint("solo")), None);
        let mut v = Verdict::from_errors("dup".into(), a, None, Vec::new());
        s.mark(&mut v);
        s.mark(&mut v);
        assert_eq!(v.warnings.len(), 1, "marked once");
        assert!(
            v.warnings[0]
                .message
                .starts_with("id `dup` is also the id of a.json, b.jsonl:1: "),
            "{}",
            v.warnings[0].message
        );
        // a capture of another id, or one not in the group, is left alone
        let mut other = Verdict::from_errors(
            "dup".into(),
            RecordRef::new("z.json", None),
            None,
            Vec::new(),
        );
        s.mark(&mut other);
        assert!(other.warnings.is_empty());
    }
}
