//! The duplicate-id pre-pass's byte scan of an OTLP/JSON line (`crate::engine::ids`): the
//! candidate ids and chain keys of a `TracesData` from one search for its id member names,
//! without walking the JSON. It answers only for the common line (see [`spans`]) and
//! leaves every other one to the typed walk ([`super::ids`]), which reads the exact spans.
//!
//! What it gives is a superset of the walk's, which the pre-pass allows (`docs/verdicts.md#duplicate-ids`):
//! - ids: `TRACEID/SPANID` for the value of every `"spanId"` member of the record (the
//!   walk's: those of the LLM and tool spans only; a link's `spanId`, another span's, are
//!   only more candidates);
//! - keys: `TRACEID/PARENTSPANID` for the value of every non-empty `"parentSpanId"` member
//!   (the walk's: once per LLM or tool span). A key counted for another span can make an
//!   LLM span's key count twice where the walk counted it once: the span is then kept in
//!   the chain set, and reported as no chain, as on a fingerprint collision (memory only).
//!
//! In JSON text, `"spanId"` followed by a colon is a member name wherever it occurs: a
//! string value holds a `"` only as `\"`, so the needle cannot start inside one.

use memchr::memmem::Finder;
use std::sync::LazyLock;

/// One member found: which name, and its string value's bytes (without quotes).
struct Found<'a> {
    name: Name,
    value: &'a [u8],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Name {
    Trace,
    Span,
    Parent,
}

/// The needle: the end `Id"` the three member names share, found in one search; the
/// bytes before it tell which name it ends, if any.
static ID_END: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"Id\""));

/// The three member names with their quotes.
const NAMES: [(Name, &[u8]); 3] = [
    (Name::Trace, b"\"traceId\""),
    (Name::Span, b"\"spanId\""),
    (Name::Parent, b"\"parentSpanId\""),
];

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while text
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The candidate ids (`each`) and chain keys (`keys`) of the OTLP/JSON line `text`, and
/// `true`; or `false`, having called neither, when the line is not the common one this
/// scan is sure of:
/// - the text starts (after white space) with `{"resourceSpans":` (an exporter's line:
///   `resourceSpans` is `TracesData`'s one member, so the record is read as OTLP/JSON);
/// - it holds no `jsonrpc` and no backslash-`u` escape (a member name could hide behind one);
/// - every `traceId`, `spanId` and `parentSpanId` member's value is a string without a
///   backslash, and all the `traceId` values are the same one (a line of one trace: a
///   span's id and key pair that trace with its own `spanId` and `parentSpanId`).
pub fn spans(
    text: &[u8],
    sniff: crate::core::prescan::Sniff,
    each: &mut dyn FnMut(&[u8]),
    keys: &mut dyn FnMut(&[u8]),
) -> bool {
    let i = skip_ws(text, 0);
    if text.get(i) != Some(&b'{') {
        return false;
    }
    let i = skip_ws(text, i + 1);
    let Some(rest) = text.get(i..) else {
        return false;
    };
    if !rest.starts_with(b"\"resourceSpans\"")
        || text.get(skip_ws(text, i + b"\"resourceSpans\"".len())) != Some(&b':')
    {
        return false;
    }
    if sniff.jsonrpc || sniff.escape {
        return false;
    }
    let mut found: Vec<Found<'_>> = Vec::new();
    for at in ID_END.find_iter(text) {
        let end = at + 3;
        let Some(&(name, _)) = NAMES.iter().find(|(_, n)| text[..end].ends_with(n)) else {
            continue;
        };
        let j = skip_ws(text, end);
        if text.get(j) != Some(&b':') {
            // a string value that spells the name: no member
            continue;
        }
        let j = skip_ws(text, j + 1);
        if text.get(j) != Some(&b'"') {
            return false;
        }
        let Some(len) = memchr::memchr2(b'"', b'\\', &text[j + 1..]) else {
            return false;
        };
        let end = j + 1 + len;
        if text[end] != b'"' {
            return false;
        }
        found.push(Found {
            name,
            value: &text[j + 1..end],
        });
    }
    let mut traces = found.iter().filter(|f| f.name == Name::Trace);
    let Some(trace) = traces.next().map(|f| f.value) else {
        // no span at all: nothing to give, and nothing the walk would give
        return true;
    };
    if traces.any(|f| f.value != trace) {
        return false;
    }
    let mut joined = Vec::with_capacity(trace.len() + 1 + 32);
    for f in &found {
        if f.name == Name::Trace || f.value.is_empty() && f.name == Name::Parent {
            continue;
        }
        joined.clear();
        joined.extend_from_slice(trace);
        joined.push(b'/');
        joined.extend_from_slice(f.value);
        if f.name == Name::Span {
            each(&joined);
        } else {
            keys(&joined);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::spans;
    use crate::core::shape::otlp::record_spans;

    /// The scan's ids and keys, or `None` when it leaves the line to the walk.
    fn quick(text: &str) -> Option<(Vec<String>, Vec<String>)> {
        let (mut ids, mut keys) = (Vec::new(), Vec::new());
        let sure = spans(
            text.as_bytes(),
            crate::core::prescan::Sniff::of(text.as_bytes()),
            &mut |i| ids.push(String::from_utf8(i.to_vec()).unwrap()),
            &mut |k| keys.push(String::from_utf8(k.to_vec()).unwrap()),
        );
        if !sure {
            assert!(
                ids.is_empty() && keys.is_empty(),
                "nothing is given when unsure"
            );
        }
        sure.then_some((ids, keys))
    }

    /// Every id and key (with its count) the walk gives is among the scan's.
    fn assert_superset(text: &str) {
        let Some((ids, keys)) = quick(text) else {
            return;
        };
        let (spans, jsonrpc) = record_spans(text.as_bytes()).expect("an OTLP record");
        assert!(!jsonrpc);
        for s in &spans {
            assert!(ids.contains(&s.id), "{} not in {ids:?}", s.id);
        }
        let walked: Vec<&String> = spans.iter().filter_map(|s| s.key.as_ref()).collect();
        for k in &walked {
            let n = walked.iter().filter(|w| *w == k).count();
            assert!(
                keys.iter().filter(|q| q == k).count() >= n,
                "{k} {n} times in {keys:?}"
            );
        }
    }

    fn span(trace: &str, id: &str, parent: &str, op: &str) -> String {
        format!(
            r#"{{"traceId":"{trace}","spanId":"{id}","parentSpanId":"{parent}","name":"x","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"{op}"}}}}],"status":{{}}}}"#
        )
    }

    fn line(spans: &[String]) -> String {
        format!(
            r#"{{"resourceSpans":[{{"resource":{{}},"scopeSpans":[{{"scope":{{}},"spans":[{}]}}]}}]}}"#,
            spans.join(",")
        )
    }

    #[test]
    fn the_common_line_gives_every_span_id_and_key() {
        let text = line(&[
            span("t1", "s1", "p1", "chat"),
            span("t1", "s2", "p1", "chat"),
            span("t1", "s3", "", "execute_tool"),
            span("t1", "s4", "p2", "http"),
        ]);
        let (ids, keys) = quick(&text).unwrap();
        assert_eq!(ids, ["t1/s1", "t1/s2", "t1/s3", "t1/s4"]);
        // two siblings give their key twice; an empty parent none; the http span's is extra
        assert_eq!(keys, ["t1/p1", "t1/p1", "t1/p2"]);
        assert_superset(&text);
        // white space around the names, and a span with no spans at all
        let spaced = "  { \"resourceSpans\" : [ { \"scopeSpans\" : [ { \"spans\" : [ { \"traceId\" : \"a\" , \"spanId\" :\"b\", \"parentSpanId\":\"c\", \"attributes\": [{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"chat\"}}]} ] } ] } ] }";
        assert_eq!(
            quick(spaced).unwrap(),
            (vec!["a/b".into()], vec!["a/c".into()])
        );
        assert_superset(spaced);
        assert_eq!(quick(r#"{"resourceSpans":[]}"#).unwrap(), (vec![], vec![]));
    }

    #[test]
    fn a_name_spelled_in_a_value_is_no_member() {
        // `"spanId"` as a string value (not followed by a colon), and inside a string
        let text = line(&[span("t", "s", "p", "chat")]).replace(
            r#""name":"x""#,
            r#""name":"spanId","note":"a \"spanId\": \"zz\"""#,
        );
        assert_eq!(
            quick(&text).unwrap(),
            (vec!["t/s".into()], vec!["t/p".into()])
        );
        assert_superset(&text);
    }

    #[test]
    fn lines_it_is_not_sure_of_go_to_the_walk() {
        let one = span("t", "s", "p", "chat");
        let plain = line(std::slice::from_ref(&one));
        let not_first = plain.replacen("{", r#"{"a":1,"#, 1);
        for text in [
            // resourceSpans not the first member, or not an object at all
            not_first,
            format!("[{plain}]"),
            // two traces in one line
            line(&[one.clone(), span("u", "s2", "p", "chat")]),
            // an escape in a value, or a name behind a \u escape
            line(&[span("t", r"s\/1", "p", "chat")]),
            plain.replace("\"spanId\"", r#""span\u0049d""#),
            // a jsonrpc member anywhere, a value that is no string
            plain.replacen("{", r#"{"resourceSpans":[], "jsonrpc":"2.0","#, 1),
            plain.replace(r#""spanId":"s""#, r#""spanId":7"#),
            // a line cut in a value
            { plain[..plain.find(r#""spanId":""#).unwrap() + 10].to_owned() },
        ] {
            assert_eq!(quick(&text), None, "{text}");
        }
    }

    #[test]
    fn every_sample_line_gives_a_superset_of_the_walk() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces");
        let (mut sure, mut lines) = (0, 0);
        for f in [
            "otel/collector.jsonl",
            "retries/otel-retries.jsonl",
            "openinference/phoenix.jsonl",
        ] {
            for text in std::fs::read_to_string(root.join(f)).unwrap().lines() {
                if text.trim().is_empty() {
                    continue;
                }
                assert_superset(text);
                sure += usize::from(quick(text).is_some());
                lines += 1;
            }
        }
        // the samples' lines are exporters' lines: the scan reads every one
        assert_eq!((sure, lines), (17, 17));
    }
}
