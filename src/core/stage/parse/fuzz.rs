//! A differential fuzz test of every JSON reader of the program against one strict
//! reference, the parse stage's reader ([`super::parse_strict`], itself checked against the
//! independent slow-path scanner, [`super::diagnose`]): the output text, capture records
//! (with the values rules read, `context` and `intent`), schema files, SSE `data:` payloads
//! (as a `response` string and as a `.sse` file's first event), `[[join]]` lines, and JSON
//! held in a string of a trace record (an OTLP span's `gen_ai.output.messages`). Each
//! reader must accept exactly the texts the reference accepts. The inputs are seeded
//! mutations of valid JSON (duplicate keys, lone surrogates, trailing commas, `NaN`,
//! leading zeros, a BOM, control characters in strings, deep nesting, huge and tiny
//! exponents, long integers, random byte edits), so every run reads the same inputs.

use super::{diagnose, parse_strict};
use crate::core::adapter::adapt_response;
use crate::core::capture::parse_record;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Reason;
use serde_json::Value;

/// A small deterministic generator (a 64-bit LCG; the high bits).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

const SEEDS: [&str; 8] = [
    r#"{"a": 1, "b": [true, null, "x"], "c": {"d": -2.5e3}}"#,
    r#"[1, 2.0, "three", {"four": 4}]"#,
    r#"{"amount_minor": 5000, "currency": "KRW", "note": "caf\u00e9 \"q\""}"#,
    r#""plain string""#,
    r#"0"#,
    r#"{"n": 9007199254740993, "f": 0.1, "e": 1e300, "z": -0.0}"#,
    r#"{"nested": {"list": [[], {}, [{"k": "v"}]]}}"#,
    r#"{"type": "message_delta", "delta": {"stop_reason": "end_turn"}}"#,
];

/// Pieces a mutation inserts: each breaks (or tests the edge of) strict JSON.
const PIECES: [&str; 22] = [
    r#""a": 1, "a": 2, "#,
    r#""\ud800""#,
    r#""\udc00\ud800""#,
    r#""\ud83d\ude00""#,
    ",",
    ", ]",
    "NaN",
    "-Infinity",
    "01",
    "-0",
    "\u{feff}",
    "\"\u{1}\"",
    "\"\t\"",
    "1e400",
    "1e-400",
    "5e-324",
    "9007199254740993.0",
    "123456789012345678901234567890",
    "18446744073709551616",
    "1E+2",
    "'x'",
    "// c\n",
];

/// One mutation of `text`.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut t: Vec<char> = text.chars().collect();
    let at = |rng: &mut Rng, t: &Vec<char>| rng.next(t.len() + 1);
    match rng.next(9) {
        0 | 1 => {
            let i = at(rng, &t);
            let piece = PIECES[rng.next(PIECES.len())];
            t.splice(i..i, piece.chars());
        }
        2 => {
            // replace a value after a colon with an edge piece
            if let Some(i) = (0..t.len()).filter(|&i| t[i] == ':').nth(rng.next(4)) {
                let end = (i + 1..t.len())
                    .find(|&j| matches!(t[j], ',' | '}' | ']'))
                    .unwrap_or(t.len());
                let piece = PIECES[rng.next(PIECES.len())];
                t.splice(i + 1..end, piece.chars());
            }
        }
        3 => {
            // deep nesting around the value, near the limit
            let depth = 120 + rng.next(12);
            let mut s = "[".repeat(depth);
            s.push_str(text);
            s.push_str(&"]".repeat(depth));
            return s;
        }
        4 if !t.is_empty() => {
            let i = rng.next(t.len());
            t.remove(i);
        }
        5 if !t.is_empty() => {
            let i = rng.next(t.len());
            let c = t[i];
            t.insert(i, c);
        }
        6 => {
            let i = at(rng, &t);
            let c = [
                '{', '}', '[', ']', '"', ':', ',', '\\', ' ', '\u{0}', 'e', '.', '-',
            ][rng.next(13)];
            t.insert(i, c);
        }
        7 => {
            // repeat a member of a non-empty object: valid JSON but for the repeat
            let opens: Vec<usize> = (0..t.len().saturating_sub(1))
                .filter(|&i| t[i] == '{' && t[i + 1] == '"')
                .collect();
            if !opens.is_empty() {
                let i = opens[rng.next(opens.len())] + 1;
                let name: String = t[i..].iter().skip(1).take_while(|c| **c != '"').collect();
                t.splice(i..i, format!("\"{name}\": 0, ").chars());
            }
        }
        _ => {
            let i = at(rng, &t);
            t.splice(i..i, ", \"k\": ".chars());
        }
    }
    t.into_iter().collect()
}

/// The inputs: the seeds, and 60 seeded mutations of each (one to three edits).
fn inputs() -> Vec<String> {
    let mut rng = Rng(0x5eed_0f57_51c7);
    let mut out: Vec<String> = SEEDS.iter().map(|s| (*s).to_owned()).collect();
    for seed in SEEDS {
        for _ in 0..60 {
            let mut t = seed.to_owned();
            for _ in 0..=rng.next(3) {
                t = mutate(&mut rng, &t);
            }
            out.push(t);
        }
    }
    out
}

/// The reference: the parse stage's reader, which must agree with its own slow path.
fn accepts(text: &str) -> bool {
    let fast = parse_strict(text).is_ok();
    assert_eq!(
        fast,
        diagnose(text).is_none(),
        "fast and slow paths disagree on {text:?}"
    );
    fast
}

#[test]
fn every_json_reader_accepts_exactly_what_the_strict_reference_accepts() {
    let source = RecordRef::new("captures/f.jsonl", Some(1));
    let texts = inputs();
    let mut accepted = 0;
    let schemas = tempfile::tempdir().expect("tempdir");
    for (n, text) in texts.iter().enumerate() {
        let ok = accepts(text);
        accepted += usize::from(ok);
        // capture records: the value where rules read it (context, intent) and in meta
        for place in ["context", "intent", "meta"] {
            let record = format!(r#"{{"id": "f", "output": "{{}}", "{place}": {{"v": {text}}}}}"#);
            let want = accepts(&record);
            let got = match parse_record(&record, &source) {
                Ok(_) => true,
                Err(e) => {
                    !(e.finding.message.starts_with("record is not valid JSON")
                        || e.finding.message.starts_with("record at "))
                }
            };
            assert_eq!(got, want, "capture record, {place}: {record:?}");
        }
        // SSE data (one data: line per text line; `\r` ends a line too, so such texts are
        // the SSE grammar's, not JSON's)
        if !text.contains('\r') {
            let event = format!(r#"{{"id": "f", "object": "chat.completion.chunk", "v": {text}}}"#);
            let want = accepts(&event);
            let data: String = event.split('\n').map(|l| format!("data: {l}\n")).collect();
            let sse = format!("{data}\n");
            let adapted = adapt_response(&Value::String(sse.clone()), None, None);
            let got = !matches!(&adapted.result, Err(f) if f.reason == Reason::INVALID_CAPTURE
                && f.message.starts_with("SSE event at line 1:"));
            assert_eq!(got, want, "SSE data: {sse:?}");
            assert_eq!(
                crate::core::capture_file::sse_response_id(&sse).is_some(),
                want,
                ".sse first event: {sse:?}"
            );
        }
        // [[join]] lines (a line holds no line break: only texts without one)
        if !text.contains(['\n', '\r']) {
            let line = format!(r#"{{"id": "f", "context": {{"v": {text}}}}}"#);
            let want = accepts(&line);
            let got = match crate::core::join::read_line(&line, "joins/j.jsonl:1") {
                Ok(_) => true,
                Err(m) => !m.starts_with("join line is not valid JSON"),
            };
            assert_eq!(got, want, "join line: {line:?}");
        }
        // JSON inside a string of a trace record: an OTLP span's `gen_ai.output.messages`
        let messages = format!(
            r#"[{{"role": "assistant", "parts": [{{"type": "text", "content": "{{}}"}}], "finish_reason": "stop", "v": {text}}}]"#
        );
        let want = accepts(&messages);
        let span = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
        "name": "chat m", "status": {"code": 1},
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": messages}}
        ]}]}]}]})
        .to_string();
        let got = match parse_record(&span, &source) {
            Ok(_) => true,
            Err(e) => !e.finding.message.contains("is a string that is not JSON"),
        };
        assert_eq!(got, want, "OTLP gen_ai.output.messages: {messages:?}");
        assert_eq!(
            crate::core::shape::otlp::span_ids(span.as_bytes()).len(),
            1,
            "OTLP span ids: {span:?}"
        );
        let schema = format!(r#"{{"title": "t", "x-fuzz": {text}}}"#);
        std::fs::write(schemas.path().join(format!("s{n}.json")), schema).expect("write");
    }
    // schema files: all loaded at once
    let contracts = crate::core::contract::Contracts::load(
        schemas.path(),
        schemas.path(),
        &crate::core::config::Config::default(),
    );
    for (n, text) in texts.iter().enumerate() {
        let schema = format!(r#"{{"title": "t", "x-fuzz": {text}}}"#);
        let want = accepts(&schema);
        let c = contracts
            .get(&format!("s{n}"))
            .expect("every schema file is a contract");
        let got = match &c.compiled {
            Ok(_) => true,
            Err(fs) => !fs.iter().any(|f| f.message.contains(" is not valid JSON")),
        };
        assert_eq!(got, want, "schema: {schema:?}");
    }
    // the inputs exercise both sides
    assert!(
        accepted > texts.len() / 10 && accepted < texts.len() * 9 / 10,
        "{accepted} of {}",
        texts.len()
    );
}
