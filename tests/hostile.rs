//! Hostile inputs: each test here is a regression test for a way a capture, a schema or a
//! workspace could break one of verdict's promises (a clear verdict per capture and never a
//! panic, hang or out-of-memory; input files never written; no control characters from
//! model text on the terminal; deterministic output).

use crate::common;
use common::run::run;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A workspace in a temporary folder with one schema `c` and the given captures.
fn workspace(schema: &Value, captures: &[(&str, String)]) -> tempfile::TempDir {
    let captures: Vec<(&str, &str)> = captures.iter().map(|(n, t)| (*n, t.as_str())).collect();
    common::workspace_with(&serde_json::to_string(schema).unwrap(), &captures)
}

fn record(v: Value) -> String {
    serde_json::to_string(&v).unwrap()
}

/// No control character other than line breaks reaches the terminal.
fn assert_no_control(s: &str) {
    for (i, c) in s.char_indices() {
        assert!(
            c == '\n' || !(c.is_control()),
            "control character U+{:04X} at byte {i} in output:\n{s}",
            c as u32
        );
    }
}

#[test]
fn model_controlled_pointers_and_expect_are_escaped_in_human_and_github_output() {
    let key = "x\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let ws = workspace(
        &json!({"type": "object", "additionalProperties": {"type": "number"}}),
        &[
            (
                "schema.json",
                record(json!({"id": "s", "output": json!({key: "s"}).to_string()})),
            ),
            (
                "dup.json",
                record(json!({"id": "d", "output": "{\"k\\u001b[31m\":1,\"k\\u001b[31m\":2}"})),
            ),
            (
                "expect.json",
                record(json!({"id": "e", "output": "{}", "expect": {"reason": "X\u{1b}[41mRED"}})),
            ),
            (
                "intent.json",
                record(json!({"id": "i", "output": "{}", "intent": {"\u{1b}[5m": 1}})),
            ),
        ],
    );
    for format in ["human", "github"] {
        let r = run(
            &["check", "--format", format, "."],
            ws.path(),
            Duration::from_secs(60),
        );
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stdout.contains("DUPLICATE_KEY"), "{}", r.stdout);
        assert!(r.stdout.contains("INTENT_MISMATCH"), "{}", r.stdout);
        assert_no_control(&r.stdout);
    }
}

#[test]
fn a_fifo_named_like_a_capture_is_one_red_row_not_a_hang() {
    let ws = workspace(
        &json!({"type": "object"}),
        &[("ok.json", record(json!({"id": "ok", "output": "{}"})))],
    );
    for name in ["x.json", "x.jsonl"] {
        let fifo = ws.path().join("captures").join(name);
        let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
    }
    let r = run(
        &["check", "--format", "jsonl", "."],
        ws.path(),
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let verdicts: Vec<Value> = common::jsonl_verdicts(&r.stdout);
    assert_eq!(verdicts.len(), 3, "{}", r.stdout);
    for v in &verdicts[1..] {
        assert_eq!(v["reason"], "INVALID_CAPTURE", "{v}");
        let msg = v["errors"][0]["message"].as_str().unwrap();
        assert!(msg.contains("not a regular file"), "{msg}");
    }
    assert_eq!(verdicts[0]["stage"], "ready");
}

#[test]
fn broken_bedrock_ollama_and_cohere_bodies_are_one_invalid_capture_each() {
    let captures = [
        (
            "bedrock.json",
            record(
                json!({"id": "bedrock", "response": {"output": null, "stopReason": "end_turn",
                          "usage": {"inputTokens": 3, "outputTokens": 0, "totalTokens": 3}}}),
            ),
        ),
        (
            "ollama.json",
            record(
                json!({"id": "ollama", "response": {"model": "llama3.2", "message": {"role": "assistant", "content": "{}"},
                          "done": "true", "done_reason": "stop"}}),
            ),
        ),
        (
            "cohere.json",
            record(
                json!({"id": "cohere", "response": {"id": "c1", "finish_reason": "COMPLETE",
                          "message": {"role": "assistant", "content": "{\"a\": 1}"}}}),
            ),
        ),
        (
            "ok.json",
            record(
                json!({"id": "ok", "response": {"message": {"role": "assistant", "content": "{}"}, "done": true}}),
            ),
        ),
    ];
    let ws = workspace(&json!({"type": "object"}), &captures);
    let before = snapshot(ws.path());
    let r = run(
        &["check", "--format", "jsonl", "."],
        ws.path(),
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let verdicts: BTreeMap<String, Value> = common::jsonl_verdicts(&r.stdout)
        .into_iter()
        .map(|v| (v["id"].as_str().unwrap().to_owned(), v))
        .collect();
    assert_eq!(verdicts.len(), 4, "{}", r.stdout);
    for (id, provider, message) in [
        (
            "bedrock",
            "bedrock-converse",
            "bedrock-converse `output` is null: expected an object holding `message`",
        ),
        (
            "ollama",
            "ollama",
            "ollama `done` is a string (\"true\"): expected true or false",
        ),
        (
            "cohere",
            "cohere",
            "cohere `message.content` is a string: expected an array of content blocks ({\"type\": \"text\", \"text\": ...})",
        ),
    ] {
        let v = &verdicts[id];
        assert_eq!(
            (&v["stage"], &v["decision"], &v["reason"]),
            (&json!("input"), &json!("reject"), &json!("INVALID_CAPTURE")),
            "{v}"
        );
        assert_eq!(v["errors"].as_array().map(Vec::len), Some(1), "{v}");
        assert_eq!(v["errors"][0]["message"], message, "{v}");
        assert_eq!(v["response"]["provider"], provider, "{v}");
    }
    assert_eq!(
        verdicts["bedrock"]["response"]["tokens"],
        json!({"input_tokens": 3, "output_tokens": 0, "total_tokens": 3})
    );
    assert_eq!(verdicts["ok"]["stage"], "ready", "{}", verdicts["ok"]);
    assert_eq!(verdicts["ok"]["response"]["provider"], "ollama");
    assert_eq!(snapshot(ws.path()), before, "nothing is written");
}

/// Every file below `dir`, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn many_schema_or_intent_errors_in_a_large_output_are_reported_in_linear_time() {
    // 60,000 array items that each fail: every error used to rescan the whole text to find
    // its line:column (quadratic: minutes, hours for a few MB)
    let n = 60_000usize;
    let numbers: Vec<usize> = (0..n).collect();
    let intent: serde_json::Map<String, Value> =
        (0..n).map(|i| (i.to_string(), json!(-1))).collect();
    let ws = workspace(
        &json!({"type": "array", "items": {"maxLength": 0}}),
        &[
            (
                "a-schema.json",
                record(
                    json!({"id": "schema", "output": serde_json::to_string(&vec!["a"; n]).unwrap()}),
                ),
            ),
            (
                "b-intent.json",
                record(json!({
                    "id": "intent",
                    "output": serde_json::to_string(&numbers).unwrap(),
                    "intent": intent,
                })),
            ),
        ],
    );
    let before = snapshot(ws.path());
    let r = run(
        &["check", "--format", "json", "."],
        ws.path(),
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    for (v, reason) in doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["SCHEMA_MISMATCH", "INTENT_MISMATCH"])
    {
        assert_eq!(v["reason"], reason);
        let errors = v["errors"].as_array().unwrap();
        // the first 100 kept, the rest counted (docs/verdicts.md#limits)
        assert_eq!(errors.len(), 101);
        assert_eq!(
            errors[100]["message"],
            format!(
                "{} more errors not kept (a verdict keeps the first 100: docs/verdicts.md#limits)",
                n - 100
            )
        );
        // the first errors still carry their line:column
        assert_eq!(
            errors[0]["at"],
            json!({"line": 1, "column": 2}),
            "{}",
            errors[0]
        );
    }
    assert_eq!(before, snapshot(ws.path()), "an input file was written");
}

/// A tiny deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const SSE_PIECES: &[&str] = &[
    "data: ",
    "data:",
    "event: message_start\n",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    ": comment\n",
    "id: 1\n",
    "retry: x\n",
    "[DONE]",
    "{\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}",
    "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"name\":\"f\",\"id\":\"t\",\"input\":{}}}",
    "{\"type\":\"content_block_delta\",\"index\":18446744073709551615,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}",
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\u0000\\u001b[2J\"}}",
    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":[1]}",
    "{\"type\":\"message_stop\"}",
    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}",
    "{\"type\":\"error\",\"error\":\"x\"}",
    "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"a\\\":1}\",\"tool_calls\":[{\"index\":-1,\"function\":{\"arguments\":\"{\"}}]},\"finish_reason\":null}]}",
    "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"name\":\"f\",\"arguments\":7}},\"finish_reason\":\"stop\"}]}",
    "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":[]},{\"function\":{\"name\":\"g\"}}]},\"finish_reason\":\"tool_calls\"}]}",
    "{\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\",\"output\":7}}",
    "{\"type\":\"response.output_text.delta\",\"output_index\":1e300,\"content_index\":-5,\"delta\":\"x\"}",
    "{\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{}\"}",
    "{\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":{}}}",
    "{\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":\"x\"}]}}",
    "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"{}\"},{\"functionCall\":{\"name\":\"f\",\"args\":[]}}]},\"finishReason\":\"STOP\"}]}",
    "{\"candidates\":[],\"promptFeedback\":{\"blockReason\":7}}",
    "{\"candidates\":{}}",
    "{\"error\":{\"code\":\"429\",\"status\":99999999999999999999}}",
    "\"[DONE]\"",
    "null",
    "[",
    "{",
    "}",
    "\u{feff}",
    "\u{0}",
    "é",
    "\\",
    "{\"a\":1,\"a\":2}",
];

fn random_sse(rng: &mut Rng) -> String {
    (0..rng.below(14)).map(|_| rng.pick(SSE_PIECES)).collect()
}

#[test]
fn random_sse_text_and_event_arrays_never_panic_and_always_decide() {
    use verdict::core::adapter::{adapt_output, adapt_response};
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let providers = [
        None,
        Some("anthropic"),
        Some("openai-chat"),
        Some("openai-responses"),
        Some("gemini"),
        Some("x"),
    ];
    for _ in 0..6000 {
        let sse = random_sse(&mut rng);
        // the same pieces as an array of events: each piece that is JSON is one event
        let events: Vec<Value> = (0..rng.below(8))
            .filter_map(|_| serde_json::from_str(rng.pick(SSE_PIECES)).ok())
            .collect();
        let p = providers[rng.below(providers.len())];
        let tool = [None, Some("f"), Some("g"), Some("")][rng.below(4)];
        for response in [Value::String(sse.clone()), Value::Array(events)] {
            let a = adapt_response(&response, p, tool);
            // a stopped stage is always a specific, printable finding
            if let Err(f) = &a.result {
                assert!(!f.message.is_empty(), "{response}");
            }
        }
        let _ = adapt_output(&Value::String(sse), Some("completed"), None);
    }
}

#[test]
fn random_capture_records_and_line_endings_never_panic() {
    use verdict::core::capture::{parse_record, read_lines};
    let pieces: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"id\"",
        "\"output\"",
        "\"response\"",
        "\"status\"",
        "\"expect\"",
        "\"stage\"",
        "\"reason\"",
        "\"decision\"",
        "\"context\"",
        "\"intnet\"",
        "\"provider\"",
        "\"tool\"",
        "\"meta\"",
        "\"status_detail\"",
        "\"\"",
        "\"x\"",
        "null",
        "1",
        "-0",
        "1e999",
        "true",
        "\n",
        "\r",
        "\r\n",
        "\u{0}",
        " ",
        "é",
        "\u{feff}",
        "\"ready\"",
        "\"completed\"",
        "\"openai-chat\"",
        "\\",
        "\"\\ud800\"",
    ];
    let mut rng = Rng(42);
    for _ in 0..20_000 {
        let text: String = (0..rng.below(24)).map(|_| rng.pick(pieces)).collect();
        let _ = parse_record(&text, &verdict::core::record_ref::RecordRef::new("d", None));
        let max = [0u64, 1, 5, 64, u64::MAX][rng.below(5)];
        let mut lines = Vec::new();
        read_lines(std::io::Cursor::new(text.as_bytes()), max, |n, l| {
            lines.push((n, l.is_ok()))
        });
        // line numbers only go up
        assert!(lines.windows(2).all(|w| w[0].0 < w[1].0), "{text:?}");
    }
}

#[test]
fn odd_line_endings_in_jsonl() {
    use verdict::core::capture::read_lines;
    let collect = |bytes: &[u8], max: u64| {
        let mut out = Vec::new();
        read_lines(std::io::Cursor::new(bytes), max, |n, l| {
            out.push((n, l.map_err(|f| f.message)))
        });
        out
    };
    // CRLF and LF lines, blank lines skipped, numbers kept
    let got = collect(b"{\"a\":1}\r\n\r\n{\"b\":2}\n", 100);
    assert_eq!(
        got,
        vec![
            (1, Ok("{\"a\":1}".to_string())),
            (3, Ok("{\"b\":2}".to_string()))
        ]
    );
    // a NUL and invalid UTF-8 are one line's problem each
    let got = collect(b"\0\n\xff\n{}\n", 100);
    assert_eq!(got.len(), 3);
    assert!(got[1].1.as_ref().is_err_and(|m| m.contains("UTF-8")));
    assert_eq!(got[2], (3, Ok("{}".to_string())));
    // an over-long line is skipped without being buffered, and the next line is read
    let mut long = vec![b'x'; 1 << 20];
    long.extend_from_slice(b"\n{}");
    let got = collect(&long, 1000);
    assert_eq!(got.len(), 2);
    assert!(
        got[0]
            .1
            .as_ref()
            .is_err_and(|m| m.contains("max_capture_bytes"))
    );
    assert_eq!(got[1], (2, Ok("{}".to_string())));
}

#[test]
fn intent_numbers_compare_exactly_not_through_f64() {
    use verdict::core::stage::intent::{compare, json_equal};
    // 2^53 + 1 has no f64: as f64 it rounds to 2^53, which used to make them "equal"
    let intent = json!({"n": 9007199254740993u64});
    let proposal = json!({"n": 9007199254740992.0});
    let f = compare(&proposal, intent.as_object().unwrap(), None);
    assert_eq!(f.len(), 1, "an amount off by one passed the intent check");
    assert!(!json_equal(
        &json!(u64::MAX),
        &json!(18446744073709551615.0)
    ));
    assert!(!json_equal(
        &json!(i64::MIN + 1),
        &json!(-9223372036854775808.0)
    ));
    assert!(!json_equal(&json!(1), &json!(1.5)));
    // by value where the value is the same
    assert!(json_equal(&json!(5000), &json!(5000.0)));
    assert!(json_equal(&json!(i64::MIN), &json!(-9223372036854775808.0)));
    assert!(json_equal(
        &json!(9007199254740992u64),
        &json!(9007199254740992.0)
    ));
    assert!(json_equal(&json!(-0.0), &json!(0)));
    assert!(json_equal(&json!(0.5), &json!(0.5)));
}

#[test]
fn the_same_capture_named_twice_on_the_command_line_is_one_row() {
    let ws = workspace(
        &json!({"type": "object"}),
        &[
            ("a.json", record(json!({"id": "a", "output": "{}"}))),
            ("b.json", record(json!({"id": "b", "output": "{}"}))),
        ],
    );
    let r = run(
        &[
            "check",
            "--format",
            "jsonl",
            "captures/b.json",
            ".",
            "./captures/b.json",
            "captures",
        ],
        ws.path(),
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let ids: Vec<String> = common::jsonl_verdicts(&r.stdout)
        .iter()
        .map(|v| v["id"].to_string())
        .collect();
    assert_eq!(ids, ["\"b\"", "\"a\""], "{}", r.stdout);
}

#[test]
fn a_rule_that_gives_a_map_has_a_deterministic_message() {
    use verdict::core::rules::RuleSet;
    let rs = RuleSet::load(
        "x.rules.toml",
        "[[rule]]\nreason = \"R\"\nrule = \"context\"\n",
    )
    .unwrap();
    let context: serde_json::Map<String, Value> =
        (0..20).map(|i| (format!("k{i}"), json!(i))).collect();
    let messages: std::collections::BTreeSet<String> = (0..20)
        .map(|_| {
            rs.evaluate(&json!({}), Some(&context), None)
                .unwrap()
                .message
        })
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages
            .iter()
            .all(|m| m.contains("RULE_ERROR") || m.contains("not a boolean"))
    );
}

/// CEL iterates a map's keys in no particular order (cel 0.15 `DefaultMap` is a std
/// `HashMap` with a random seed), so a rule such as `context.map(k, k)[0] == 'a'` can
/// decide differently from run to run. Not fixed: it needs an ordered map in `cel`.
#[test]
#[ignore = "known: CEL map comprehension order is random (cel crate)"]
fn a_rule_over_map_keys_is_deterministic() {
    use verdict::core::rules::RuleSet;
    let rs = RuleSet::load(
        "x.rules.toml",
        "[[rule]]\nreason = \"R\"\nrule = \"context.map(k, k)[0] == 'k0'\"\n",
    )
    .unwrap();
    let context: serde_json::Map<String, Value> =
        (0..20).map(|i| (format!("k{i}"), json!(i))).collect();
    let outcomes: std::collections::BTreeSet<bool> = (0..50)
        .map(|_| rs.evaluate(&json!({}), Some(&context), None).is_some())
        .collect();
    assert_eq!(outcomes.len(), 1);
}

/// A span of tens of thousands of attributes (as a list and as an object) is read in time
/// linear in them, as the record's parse is: one verdict each, the deprecated completion's
/// calls all read (regression: a linear search per attribute lookup made it quadratic, a
/// hang of minutes).
#[test]
fn a_span_of_many_attributes_is_one_verdict_not_a_hang() {
    const N: usize = 40_000;
    let mut attrs = vec![json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}})];
    for n in 0..N {
        attrs.push(json!({"key": format!("gen_ai.completion.0.tool_calls.{n}.name"), "value": {"stringValue": "refund"}}));
    }
    let as_object: serde_json::Map<String, Value> = attrs
        .iter()
        .map(|a| (a["key"].as_str().unwrap().to_owned(), a["value"].clone()))
        .collect();
    let line = |id: &str, attributes: Value| {
        record(json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "t", "spanId": id, "attributes": attributes}]}]}]}))
    };
    let log = format!(
        "{}\n{}\n",
        line("list", Value::Array(attrs)),
        line("object", Value::Object(as_object))
    );
    let ws = workspace(&json!({"type": "object"}), &[("spans.jsonl", log)]);
    let r = run(
        &["check", "--format", "jsonl", "."],
        ws.path(),
        Duration::from_secs(60),
    );
    let verdicts = common::jsonl_verdicts(&r.stdout);
    assert_eq!(verdicts.len(), 2, "{}", r.stderr);
    for (v, id) in verdicts.iter().zip(["t/list", "t/object"]) {
        assert_eq!(v["id"], id);
        assert_eq!(
            (&v["stage"], &v["reason"]),
            (&json!("input"), &json!("INVALID_CAPTURE")),
            "{}",
            &v.to_string()[..300]
        );
        let m = v["errors"][0]["message"].as_str().unwrap();
        assert!(m.starts_with(&format!("{N} tool calls (")), "{}", &m[..100]);
    }
}
