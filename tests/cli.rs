//! End-to-end tests of the `verdict` binary: exit codes, a closed pipe, every `check`
//! format, the `--schema` validator mode, `feedback`, and untrusted text in the output.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_verdict");
use crate::common::{verdict, verdict_in};
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const REFUND_SCHEMA: &str = include_str!("../samples/refund/schemas/refund-v1.schema.json");
const VALID: &str = r#"{"schema_version":"refund-v1","order_id":"O-1042","amount_minor":5000,"currency":"KRW","expected_version":7}"#;

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed by a signal")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// A temporary folder holding `files` (relative path, contents).
fn tree(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// A JSONL line with `id` and `output` (the model's text) and optional extra keys.
fn record(id: &str, output: &str, extra: Value) -> String {
    let mut r = json!({"id": id, "output": output});
    if let (Some(r), Some(extra)) = (r.as_object_mut(), extra.as_object()) {
        r.extend(extra.clone());
    }
    r.to_string()
}

fn json_out(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", stdout(o)))
}

fn verdict_by_id<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("no verdict {id}"))
}

// ---------------------------------------------------------------- exit codes

#[test]
fn exit_0_when_every_expect_is_met() {
    for ws in ["samples/refund", "samples/providers"] {
        let o = verdict(&["check", ws, "--color", "never"]);
        assert_eq!(code(&o), 0, "{ws}:\n{}{}", stdout(&o), stderr(&o));
        assert_eq!(stderr(&o), "", "{ws}");
    }
}

#[test]
fn exit_1_when_a_capture_misses_its_expect() {
    let line = record(
        "wants-ready",
        r#"{"order_id": 1}"#,
        json!({"expect": {"stage": "ready"}}),
    );
    let ws = tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        ("captures/c.jsonl", &line),
    ]);
    let o = verdict_in(ws.path(), &["check", "--color", "never"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("NOT AS EXPECTED"), "{out}");
    assert!(out.ends_with("0 passed, 1 failed\n"), "{out}");
}

#[test]
fn exit_1_when_a_capture_without_expect_is_not_ready_and_0_when_ready() {
    let ws = tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        ("captures/ok.json", &record("ok", VALID, json!({}))),
    ]);
    let o = verdict_in(ws.path(), &["check"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(
        stdout(&o).ends_with("1 passed, 0 failed\n"),
        "{}",
        stdout(&o)
    );

    std::fs::write(
        ws.path().join("captures/bad.json"),
        record("bad", "{", json!({})),
    )
    .unwrap();
    let o = verdict_in(ws.path(), &["check"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).ends_with("1 passed, 1 failed\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn exit_2_for_a_missing_path() {
    let o = verdict(&["check", "samples/no-such-workspace"]);
    assert_eq!(code(&o), 2);
    assert_eq!(o.stdout, b"");
    assert_eq!(
        stderr(&o),
        "verdict: samples/no-such-workspace: no such file or folder\n"
    );
    let o = verdict(&["check", "--schema", "nope.schema.json", "samples"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "verdict: nope.schema.json: no such file or folder\n"
    );
    let o = verdict(&["check", "--schema", "samples", "samples"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "verdict: samples: not a regular file (the --schema file must be a JSON Schema document)\n"
    );
}

#[test]
fn exit_2_for_a_broken_config_naming_the_key_once_with_a_hint() {
    let ws = tree(&[
        (
            "verdict.toml",
            "schemas = \"schemas\"\ndefault_contrat = \"refund-v1\"\n",
        ),
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        ("captures/ok.json", &record("ok", VALID, json!({}))),
    ]);
    let o = verdict_in(ws.path(), &["check", "."]);
    assert_eq!(code(&o), 2);
    assert_eq!(o.stdout, b"");
    // the message is printed once (it used to repeat itself as its own source)
    assert_eq!(
        stderr(&o),
        "verdict: ./verdict.toml: line 2, column 1: unknown key `default_contrat` \
         (did you mean `default_contract`?)\n"
    );

    std::fs::write(ws.path().join("verdict.toml"), "dialect = 7\n").unwrap();
    let o = verdict_in(ws.path(), &["check"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "verdict: ./verdict.toml: line 1, column 11: `dialect`: invalid type: integer `7`, expected a string\n"
    );
}

#[test]
fn exit_2_for_usage_errors() {
    for args in [
        &["check", "--bogus"][..],
        &["check", "--format", "xml"],
        &["check", "--color", "sometimes"],
        &["feedback"],
        &["frobnicate", "samples/refund", "extra"],
    ] {
        let o = verdict(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert_eq!(o.stdout, b"", "{args:?}");
        let err = stderr(&o);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let err = stderr(&verdict(&["check", "--format", "xml"]));
    assert!(err.contains("[possible values: human, json, jsonl, junit, sarif, github]"));
}

// ---------------------------------------------------------------- closed pipe

/// `verdict check WS | head -1`: read one line, close the pipe, and the run ends quietly;
/// its exit code.
fn closed_pipe(ws: &Path, format: &str) -> i32 {
    let mut child = Command::new(BIN)
        .args(["check", "--color", "never", "--format", format])
        .current_dir(ws)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    reader.read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "{format}: no first line");
    drop(reader);
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{format}: {err}");
    assert!(
        !err.to_lowercase().contains("broken pipe"),
        "{format}: {err}"
    );
    assert_eq!(err, "", "{format}");
    code(&o)
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut lines = String::new();
    for i in 0..5000 {
        let out = if i % 2 == 0 {
            VALID
        } else {
            r#"{"order_id": 3}"#
        };
        lines.push_str(&record(&format!("record-{i:04}"), out, json!({})));
        lines.push('\n');
    }
    let ws = tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        ("captures/many.jsonl", &lines),
    ]);
    // the report is far larger than a pipe buffer, so the writer must hit the closed pipe
    let full = verdict_in(ws.path(), &["check", "--color", "never"]);
    assert!(full.stdout.len() > 256 * 1024, "{}", full.stdout.len());
    // every format: the exit code is the verdicts' (half of these fail), not the pipe's
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        assert_eq!(closed_pipe(ws.path(), format), 1, "{format}");
    }
    // and 0 when every capture passes
    let mut passing = String::new();
    for i in 0..5000 {
        passing.push_str(&record(&format!("record-{i:04}"), VALID, json!({})));
        passing.push('\n');
    }
    std::fs::write(ws.path().join("captures/many.jsonl"), passing).unwrap();
    for format in ["human", "json", "jsonl", "junit", "sarif", "github"] {
        assert_eq!(closed_pipe(ws.path(), format), 0, "{format}");
    }
}

// ---------------------------------------------------------------- human

#[test]
fn human_report_of_the_refund_sample() {
    let o = verdict(&["check", "samples/refund", "--color", "never"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(!out.contains('\x1b'));
    // insta names a file after the module path, `main::cli` in the one test binary: the
    // snapshots keep the names they had in the `cli` binary (`cli__NAME.snap`)
    insta::with_settings!({prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("cli__human_refund", out);
    });

    // it ends with the funnel, the reliability rates (docs/repairs.md#the-rates) and the
    // `N passed, N failed` line
    let tail: Vec<&str> = out.lines().rev().take(4).collect();
    assert_eq!(tail[0], "25 passed, 0 failed");
    assert_eq!(
        tail[1],
        "  by repair: strip-fence 1 of 24 (4.2%), drop-trailing 1 of 24 (4.2%), unquote-number 1 of 24 (4.2%), drop-unknown 1 of 24 (4.2%)"
    );
    assert_eq!(
        tail[2],
        "rates: parse success 71.4% (15 of 21 completed), schema pass 60.0% (9 of 15 parsed), repairable 16.7% (4 of 24 failing)"
    );
    assert_eq!(
        tail[3],
        "captures 25 > completed 21 > parsed 15 > schema 9 > business 1 > ready 1"
    );

    // NO_COLOR with --color auto prints the same, uncoloured text
    let o2 = Command::new(BIN)
        .args(["check", "samples/refund", "--color", "auto"])
        .current_dir(ROOT)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(stdout(&o2), out);
}

#[test]
fn color_always_emits_ansi_and_auto_follows_the_terminal_and_no_color() {
    let o = verdict(&["check", "samples/refund", "--color", "always"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(out.contains("\x1b[32m✓\x1b[0m"), "{out}");
    assert!(out.contains("\x1b[1mparse\x1b[0m"), "{out}");
    // without the escapes it is the plain report
    let plain = stdout(&verdict(&["check", "samples/refund", "--color", "never"]));
    assert_eq!(strip_ansi(&out), plain);

    // --color auto on a pipe: no colour
    let o = verdict(&["check", "samples/refund"]);
    assert!(!o.stdout.contains(&0x1b));

    // --color auto on a terminal: colour, unless NO_COLOR is set (needs util-linux `script`)
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped the terminal half: no `script`");
        return;
    }
    let on_tty = |no_color: Option<&str>| {
        let mut c = Command::new("script");
        c.args(["-qec", &format!("{BIN} check samples/refund"), "/dev/null"])
            .current_dir(ROOT)
            .stdin(Stdio::null())
            .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        c.output().unwrap().stdout
    };
    assert!(on_tty(None).contains(&0x1b), "auto on a terminal colours");
    assert!(!on_tty(Some("1")).contains(&0x1b), "NO_COLOR=1 wins");
    assert!(
        on_tty(Some("")).contains(&0x1b),
        "an empty NO_COLOR is unset"
    );
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ---------------------------------------------------------------- json / jsonl

const VERDICT_KEYS: [&str; 17] = [
    "id",
    "source",
    "contract",
    "format",
    "provider",
    "stage",
    "decision",
    "reason",
    "errors",
    "warnings",
    "expect",
    "next_action",
    // not in the example of docs/verdicts.md: what the response stage read (provider, stop reason, model, usage)
    "response",
    // which step chose the contract, and the capture's meta (docs/verdicts.md)
    "contract_from",
    "meta",
    // the schema the request sent, when its response echoes one (docs/requests.md)
    "generation",
    // the repair that would change a parse or schema failure's outcome (docs/repairs.md)
    "repair",
];

/// `v` cut down to the keys of the example in docs/verdicts.md.
fn design_view(v: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for k in [
        "id", "source", "contract", "stage", "decision", "reason", "warnings", "expect",
    ] {
        out.insert(k.into(), v[k].clone());
    }
    let errors: Vec<Value> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            json!({"stage": e["stage"], "reason": e["reason"], "pointer": e["pointer"],
                   "schema_path": e["schema_path"], "message": e["message"]})
        })
        .collect();
    out.insert("errors".into(), errors.into());
    Value::Object(out)
}

#[test]
fn json_is_one_document_with_summary_and_design_shaped_verdicts() {
    let o = verdict(&["check", "samples/refund", "--format", "json"]);
    assert_eq!(code(&o), 0);
    let doc = json_out(&o);
    assert_eq!(
        doc.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["summary", "verdicts"]
    );
    let s = &doc["summary"];
    assert_eq!(s["captures"], 25);
    assert_eq!(
        s["funnel"],
        json!({"completed": 21, "parsed": 15, "schema": 9, "business": 1, "ready": 1})
    );
    assert_eq!((&s["passed"], &s["failed"]), (&json!(25), &json!(0)));
    assert_eq!((&s["expected"], &s["expect_met"]), (&json!(25), &json!(25)));

    let verdicts = doc["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 25);
    for v in verdicts {
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for k in &keys {
            assert!(VERDICT_KEYS.contains(k), "unexpected key {k} in {v}");
        }
        for k in VERDICT_KEYS[..12].iter().filter(|k| **k != "provider") {
            assert!(keys.contains(k), "missing key {k} in {v}");
        }
        assert!(!v["next_action"].as_str().unwrap().is_empty());
        assert_eq!(v["expect"]["met"], true, "{v}");
        for e in v["errors"].as_array().unwrap() {
            for k in ["stage", "reason", "pointer", "schema_path", "message"] {
                assert!(e.get(k).is_some(), "error without {k}: {e}");
            }
            assert_eq!(e["stage"], v["stage"]);
        }
        // the first error decides
        if let Some(e) = v["errors"].get(0) {
            assert_eq!(e["reason"], v["reason"]);
        } else {
            assert_eq!((&v["stage"], &v["reason"]), (&json!("ready"), &Value::Null));
        }
    }

    let v = verdict_by_id(&doc, "amount-8000-intent-5000");
    assert_eq!(
        design_view(v),
        json!({"id": "amount-8000-intent-5000", "source": "captures/cases.jsonl:20", "contract": "refund-v1",
               "stage": "business", "decision": "recheck", "reason": "INTENT_MISMATCH",
               "errors": [{"stage": "business", "reason": "INTENT_MISMATCH", "pointer": "/amount_minor",
                           "schema_path": null, "message": "proposal 8000, confirmed intent 5000"}],
               "warnings": [],
               "expect": {"stage": "business", "decision": "recheck", "reason": "INTENT_MISMATCH", "met": true}})
    );
    assert_eq!(
        v["next_action"],
        "Confirm with the user: the proposal differs from what they confirmed."
    );

    let v = verdict_by_id(&doc, "valid-proposal");
    assert_eq!(v["source"], "captures/valid-proposal.json");
    assert_eq!(
        v["expect"],
        json!({"stage": "ready", "decision": "ready-for-commit", "reason": null, "met": true})
    );
    let v = verdict_by_id(&doc, "amount-as-string");
    assert_eq!(v["errors"][0]["pointer"], "/amount_minor");
    assert_eq!(
        v["errors"][0]["schema_path"],
        "/properties/amount_minor/anyOf"
    );
}

#[test]
fn jsonl_is_one_verdict_per_line_with_the_same_values() {
    let doc = json_out(&verdict(&["check", "samples/refund", "--format", "json"]));
    let o = verdict(&["check", "samples/refund", "--format", "jsonl"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(out.ends_with('\n'));
    let verdicts = crate::common::jsonl_verdicts(&out);
    assert_eq!(&Value::Array(verdicts), &doc["verdicts"]);
    // the last line is the summary, `{"type":"summary","data":SUMMARY}` as `watch --json`
    // has it (without `cause` and `ts_ms`)
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last, json!({"type": "summary", "data": doc["summary"]}));
    assert!(
        out.starts_with(r#"{"type":"verdict","data":{"id":"#),
        "{out}"
    );
}

// ---------------------------------------------------------------- junit / sarif / github

/// The `id` of every verdict line of a `--format jsonl` run, in order.
fn jsonl_ids(o: &Output) -> Vec<String> {
    crate::common::jsonl_verdicts(&stdout(o))
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn quiet_json_formats_print_only_failing_captures_and_still_count_all() {
    let ws = failing_workspace();
    let o = verdict_in(ws.path(), &["check", "--format", "jsonl", "-q"]);
    assert_eq!(code(&o), 1);
    let ids = jsonl_ids(&o);
    assert_eq!(ids, ["wrong-type", "not-json", "single"]);
    let doc = json_out(&verdict_in(ws.path(), &["check", "--format", "json", "-q"]));
    let ids: Vec<&str> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["wrong-type", "not-json", "single"]);
    assert_eq!(doc["summary"]["captures"], 5);
    assert_eq!(doc["summary"]["failed"], 3);
}

/// A workspace with failures: a JSONL file (line 1 ready, line 2 a schema error, line 3 not
/// JSON, line 4 a schema error that meets its expect) and a `.json` capture whose output
/// starts on line 4, column 13.
fn failing_workspace() -> TempDir {
    let jsonl = [
        record("ok", VALID, json!({})),
        record("wrong-type", r#"{"schema_version":"refund-v1","order_id":"O-1","amount_minor":"5","currency":"KRW","expected_version":1}"#, json!({})),
        record("not-json", "{\"order_id\": ", json!({})),
        record("expected-failure", "[]", json!({"expect": {"stage": "schema", "reason": "SCHEMA_MISMATCH"}})),
    ]
    .join("\n");
    let single = "{\n  \"id\": \"single\",\n  \"contract\": \"refund-v1\",\n  \"output\": \"{\\\"currency\\\": \\\"EUR\\\"}\"\n}\n";
    tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        ("captures/log.jsonl", &jsonl),
        ("captures/single.json", single),
    ])
}

#[test]
fn junit_has_one_testcase_per_capture_and_failures_for_those_that_do_not_pass() {
    let o = verdict(&["check", "samples/refund", "--format", "junit"]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 25);
    assert!(!doc.descendants().any(|n| n.has_tag_name("failure")));
    let root = doc.root_element();
    assert_eq!(root.attribute("tests"), Some("25"));
    assert_eq!(root.attribute("failures"), Some("0"));

    let ws = failing_workspace();
    let o = verdict_in(ws.path(), &["check", "--format", "junit"]);
    assert_eq!(code(&o), 1);
    let text = stdout(&o);
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    assert_eq!(doc.root_element().attribute("tests"), Some("5"));
    assert_eq!(doc.root_element().attribute("failures"), Some("3"));
    let failed: Vec<(&str, &str)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter_map(|c| {
            let f = c.children().find(|n| n.has_tag_name("failure"))?;
            Some((c.attribute("name").unwrap(), f.attribute("type").unwrap()))
        })
        .collect();
    let mut failed = failed;
    failed.sort();
    assert_eq!(
        failed,
        [
            ("not-json", "TRUNCATED_JSON"),
            ("single", "SCHEMA_MISMATCH"),
            ("wrong-type", "SCHEMA_MISMATCH"),
        ]
    );
}

#[test]
fn junit_escapes_markup_and_control_characters() {
    let id = "a<b&c\"d'e>\u{1}f\u{1b}[31m";
    let ws = tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        (
            "captures/x.jsonl",
            &record(id, &VALID.replace("\"KRW\"", r#""<&\"\u0002>""#), json!({})),
        ),
    ]);
    let o = verdict_in(ws.path(), &["check", "--format", "junit"]);
    assert_eq!(code(&o), 1);
    assert!(!o.stdout.iter().any(|b| *b < 0x20 && *b != b'\n'));
    let text = stdout(&o);
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    assert_eq!(
        case.attribute("name"),
        Some("a<b&c\"d'e>\\u{1}f\\u{1b}[31m")
    );
    let failure = case.children().find(|n| n.has_tag_name("failure")).unwrap();
    assert_eq!(failure.attribute("type"), Some("SCHEMA_MISMATCH"));
    let body = failure.text().unwrap();
    assert!(
        body.contains(r#"/currency (1:82): "<&\"\u0002>" is not one of"#),
        "{body}"
    );
    assert!(
        failure
            .attribute("message")
            .unwrap()
            .starts_with(r#"schema SCHEMA_MISMATCH regenerate: /currency: "<&\"\u0002>""#)
    );
}

#[test]
fn sarif_results_point_at_the_jsonl_line_and_the_json_output() {
    let ws = failing_workspace();
    let o = verdict_in(ws.path(), &["check", "--format", "sarif"]);
    assert_eq!(code(&o), 1);
    let log = json_out(&o);
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "verdict");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "only the captures that do not pass");
    let rule_ids: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for r in results {
        for k in ["ruleId", "level", "message", "locations"] {
            assert!(r.get(k).is_some(), "{k} in {r}");
        }
        assert!(rule_ids.contains(&r["ruleId"].as_str().unwrap()));
        assert!(
            ["error", "warning", "note", "none"].contains(&r["level"].as_str().unwrap()),
            "{r}"
        );
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
    }
    let at = |id: &str| {
        let r = results
            .iter()
            .find(|r| r["properties"]["id"] == id)
            .unwrap_or_else(|| panic!("no result for {id}"));
        let loc = &r["locations"][0]["physicalLocation"];
        (
            r["ruleId"].as_str().unwrap().to_string(),
            r["level"].as_str().unwrap().to_string(),
            loc["artifactLocation"]["uri"].as_str().unwrap().to_string(),
            loc["region"]["startLine"].as_u64().unwrap(),
            loc["region"]["startColumn"].as_u64().unwrap(),
        )
    };
    let s = |x: &str| x.to_string();
    assert_eq!(
        at("wrong-type"),
        (
            s("SCHEMA_MISMATCH"),
            s("error"),
            s("captures/log.jsonl"),
            2,
            1
        )
    );
    assert_eq!(
        at("not-json"),
        (
            s("TRUNCATED_JSON"),
            s("error"),
            s("captures/log.jsonl"),
            3,
            1
        )
    );
    // `  "output": ` is 12 characters: the value starts on line 4, column 13
    assert_eq!(
        at("single"),
        (
            s("SCHEMA_MISMATCH"),
            s("error"),
            s("captures/single.json"),
            4,
            13
        )
    );
    let wrong = results
        .iter()
        .find(|r| r["properties"]["id"] == "wrong-type")
        .unwrap();
    assert!(
        wrong["message"]["text"]
            .as_str()
            .unwrap()
            .contains("/amount_minor"),
        "{wrong}"
    );

    // a workspace where everything passes: a valid log with no results
    let o = verdict(&["check", "samples/refund", "--format", "sarif"]);
    let log = json_out(&o);
    assert_eq!(log["runs"][0]["results"], json!([]));
}

#[test]
fn github_annotations_with_file_line_col_and_title() {
    let ws = failing_workspace();
    let o = verdict_in(ws.path(), &["check", "--format", "github"]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    let starts = [
        "::error file=captures/log.jsonl,line=2,col=1,title=SCHEMA_MISMATCH::wrong-type [schema regenerate]: /amount_minor: ",
        "::error file=captures/log.jsonl,line=3,col=1,title=TRUNCATED_JSON::not-json [parse regenerate]: ",
        "::error file=captures/single.json,line=4,col=13,title=SCHEMA_MISMATCH::single [schema regenerate]: ",
    ];
    let mut errors: Vec<&str> = lines[..3].to_vec();
    errors.sort();
    for (line, start) in errors.iter().zip(starts) {
        assert!(line.starts_with(start), "{line}\nwanted {start}");
    }
    assert_eq!(
        lines[3],
        "::notice title=verdict::captures 5 > completed 5 > parsed 4 > schema 1 > business 1 > ready 1%0Arates: parse success 80.0%25 (4 of 5 completed), schema pass 25.0%25 (1 of 4 parsed), repairable 25.0%25 (1 of 4 failing)%0Aby repair: unquote-number 1 of 4 (25.0%25)%0A2 passed, 3 failed"
    );
}

#[test]
fn github_annotates_each_contract_lint_finding_once_as_lint_does() {
    // an open object: OPEN_OBJECT rides on every verdict of the contract
    let schema = r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#;
    let ws = tree(&[
        ("schemas/c.schema.json", schema),
        (
            "captures/one.json",
            &record("one", r#"{"a": 1}"#, json!({})),
        ),
        (
            "captures/two.json",
            &record("two", r#"{"a": "x"}"#, json!({})),
        ),
    ]);
    let lint = stdout(&verdict_in(ws.path(), &["lint", "--format", "github"]));
    let want: Vec<&str> = lint
        .lines()
        .filter(|l| !l.starts_with("::notice"))
        .collect();
    assert_eq!(want.len(), 1, "{lint}");
    assert!(
        want[0].starts_with(
            "::warning file=schemas/c.schema.json,line=1,col=1,title=OPEN_OBJECT::(root): "
        ),
        "{lint}"
    );
    for quiet in [false, true] {
        let mut args = vec!["check", "--format", "github"];
        if quiet {
            args.push("-q");
        }
        let o = verdict_in(ws.path(), &args);
        assert_eq!(code(&o), 1);
        let out = stdout(&o);
        let warnings: Vec<&str> = out.lines().filter(|l| l.starts_with("::warning")).collect();
        assert_eq!(warnings, want, "-q {quiet}: {out}");
        assert_eq!(out.lines().filter(|l| l.starts_with("::error")).count(), 1);
    }
    // from outside the workspace the file is shown as the captures are, below its folder
    let parent = ws.path().parent().unwrap();
    let name = ws.path().file_name().unwrap().to_str().unwrap();
    let out = stdout(&verdict_in(parent, &["check", name, "--format", "github"]));
    assert!(
        out.contains(&format!(
            "::warning file={name}/schemas/c.schema.json,line=1,col=1,title=OPEN_OBJECT::"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("::error file={name}/captures/two.json,")));
}

#[test]
fn schema_mode_locates_errors_within_the_file_and_counts_instances_in_every_format() {
    let d = tree(&[
        (
            "s.json",
            r#"{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}"#,
        ),
        ("in/i.jsonl", "{\"a\":1}\n{\"a\":\"x\"}\n"),
        ("in/one.json", "{\n  \"a\": \"y\"\n}\n"),
    ]);
    let run = |format: &str| {
        let o = verdict_in(
            d.path(),
            &["check", "--schema", "s.json", "--format", format, "in"],
        );
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        stdout(&o)
    };
    // github: the error's own line and column (a log line: that line, the error's column)
    let github = run("github");
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(
        lines,
        [
            "::error file=in/i.jsonl,line=2,col=6,title=SCHEMA_MISMATCH::in/i.jsonl:2 [schema regenerate]: /a: \"x\" is not of type \"integer\"",
            "::error file=in/one.json,line=2,col=8,title=SCHEMA_MISMATCH::in/one.json [schema regenerate]: /a: \"y\" is not of type \"integer\"",
            "::notice title=verdict::instances 3 > parsed 3 > valid 1%0A1 valid, 2 invalid",
        ]
    );
    // sarif: the same places
    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    let regions: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["locations"][0]["physicalLocation"]["region"])
        .collect();
    assert_eq!(
        regions,
        [
            &json!({"startLine": 2, "startColumn": 6}),
            &json!({"startLine": 2, "startColumn": 8})
        ]
    );
    // json and jsonl: the summary in instance words
    let want = json!({"instances": 3, "parsed": 3, "valid": 1, "invalid": 2});
    let doc: Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(doc["summary"], want);
    let jsonl = run("jsonl");
    let last: Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(last, json!({"type": "summary", "data": want}));
    assert_eq!(crate::common::jsonl_verdicts(&jsonl).len(), 3);
    // human: an instance's id is its source, printed once; it counts instances
    assert_eq!(
        run("human").lines().collect::<Vec<_>>(),
        [
            "schema (2)",
            "  ✗ SCHEMA_MISMATCH  in/i.jsonl:2  regenerate",
            "      /a  1:6  \"x\" is not of type \"integer\"  [/properties/a/type]",
            "  ✗ SCHEMA_MISMATCH  in/one.json  regenerate",
            "      /a  2:8  \"y\" is not of type \"integer\"  [/properties/a/type]",
            "",
            "ready (1)",
            "  ✓ in/i.jsonl:1  ready-for-commit",
            "",
            "decisions: ready-for-commit 1, regenerate 2",
            "instances 3 > parsed 3 > valid 1",
            "1 passed, 2 failed",
        ]
    );
    // junit: a testcase's line is its record's (a log's line; 1 for a file), passing or
    // not; the error's own line:column is in the failure's text (docs/commands.md#check)
    assert_eq!(
        run("junit").lines().collect::<Vec<_>>(),
        [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<testsuites name=\"verdict\" tests=\"3\" failures=\"2\" errors=\"0\">",
            "  <testsuite name=\"in/i.jsonl\" tests=\"2\" failures=\"1\" errors=\"0\">",
            "    <testcase name=\"in/i.jsonl:1\" classname=\"s\" file=\"in/i.jsonl\" line=\"1\"/>",
            "    <testcase name=\"in/i.jsonl:2\" classname=\"s\" file=\"in/i.jsonl\" line=\"2\">",
            "      <failure type=\"SCHEMA_MISMATCH\" message=\"schema SCHEMA_MISMATCH regenerate: /a: &quot;x&quot; is not of type &quot;integer&quot;\">schema SCHEMA_MISMATCH at /a (1:6): &quot;x&quot; is not of type &quot;integer&quot;&#10;</failure>",
            "    </testcase>",
            "  </testsuite>",
            "  <testsuite name=\"in/one.json\" tests=\"1\" failures=\"1\" errors=\"0\">",
            "    <testcase name=\"in/one.json\" classname=\"s\" file=\"in/one.json\" line=\"1\">",
            "      <failure type=\"SCHEMA_MISMATCH\" message=\"schema SCHEMA_MISMATCH regenerate: /a: &quot;y&quot; is not of type &quot;integer&quot;\">schema SCHEMA_MISMATCH at /a (2:8): &quot;y&quot; is not of type &quot;integer&quot;&#10;</failure>",
            "    </testcase>",
            "  </testsuite>",
            "</testsuites>",
        ]
    );
    // workspace mode keeps the capture funnel
    let ws = failing_workspace();
    let doc = json_out(&verdict_in(ws.path(), &["check", "--format", "json"]));
    assert_eq!(doc["summary"]["captures"], 5);
    // and a capture's line keeps its source, even when the capture has no id of its own
    let ws = tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        (
            "captures/anon.json",
            r#"{"contract": "refund-v1", "output": "{"}"#,
        ),
    ]);
    let o = verdict_in(ws.path(), &["check", "--color", "never"]);
    assert_eq!(
        stdout(&o).lines().nth(1),
        Some("  ✗ TRUNCATED_JSON  captures/anon.json  regenerate  captures/anon.json")
    );
}

#[test]
fn github_escapes_properties_and_data_as_the_actions_toolkit_does() {
    let id = "100% sure,\r\nreally: yes";
    let ws = tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        ("captures/a,b:c%d.jsonl", &record(id, "{", json!({}))),
    ]);
    let o = verdict_in(ws.path(), &["check", "--format", "github"]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(!out.contains('\r'));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    // properties: % , : escaped; data: % escaped (CR and LF never reach it raw)
    let want = "::error file=captures/a%2Cb%3Ac%25d.jsonl,line=1,col=1,title=TRUNCATED_JSON::\
                100%25 sure,\\r\\nreally: yes [parse regenerate]: ";
    assert!(lines[0].starts_with(want), "{}\nwanted {want}", lines[0]);
    assert!(lines[1].starts_with("::notice title=verdict::"));
    assert!(lines[1].contains("%0A0 passed, 1 failed"));
}

// ---------------------------------------------------------------- --schema validator mode

#[test]
fn schema_mode_validates_json_files_and_jsonl_lines() {
    let schema = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {"name": {"type": "string"}, "price": {"$ref": "defs.schema.json#/$defs/money"}},
  "required": ["name", "price"],
  "additionalProperties": false
}"#;
    let defs = r#"{"$defs": {"money": {"type": "integer", "minimum": 0}}}"#;
    let d = tree(&[
        ("contract/item.schema.json", schema),
        ("contract/defs.schema.json", defs),
        ("in/good.json", r#"{"name": "pen", "price": 3}"#),
        ("in/bad.json", r#"{"name": 7, "price": -1}"#),
        ("in/broken.json", "{\"name\": \"pen\" \"price\": 3}"),
        (
            "in/many.jsonl",
            "{\"name\": \"a\", \"price\": 1}\n{\"name\": \"b\", \"price\": \"1\"}\n{\"name\": \"c\", \"price\": 2}\n",
        ),
        ("ok/one.json", r#"{"name": "pen", "price": 0}"#),
        ("ok/two.jsonl", "{\"name\": \"x\", \"price\": 1}\n"),
    ]);
    let o = verdict_in(
        d.path(),
        &[
            "check",
            "--schema",
            "contract/item.schema.json",
            "in",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let doc = json_out(&o);
    let summary: Vec<(String, String, Value)> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let pointers: Vec<Value> = v["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["pointer"].clone())
                .collect();
            (
                v["id"].as_str().unwrap().to_string(),
                format!("{}/{}", v["stage"].as_str().unwrap(), v["reason"]),
                Value::from(pointers),
            )
        })
        .collect();
    let mut summary = summary;
    summary.sort_by(|a, b| a.0.cmp(&b.0));
    let s = |x: &str| x.to_string();
    assert_eq!(
        summary,
        [
            (
                s("in/bad.json"),
                s("schema/\"SCHEMA_MISMATCH\""),
                json!(["/name", "/price"])
            ),
            (
                s("in/broken.json"),
                s("parse/\"INVALID_JSON\""),
                json!([null])
            ),
            (s("in/good.json"), s("ready/null"), json!([])),
            (s("in/many.jsonl:1"), s("ready/null"), json!([])),
            (
                s("in/many.jsonl:2"),
                s("schema/\"SCHEMA_MISMATCH\""),
                json!(["/price"])
            ),
            (s("in/many.jsonl:3"), s("ready/null"), json!([])),
        ]
    );
    let bad = verdict_by_id(&doc, "in/bad.json");
    assert_eq!(bad["contract"], "item");
    let paths: Vec<&str> = bad["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["schema_path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"/properties/name/type"), "{paths:?}");
    assert!(
        paths.iter().any(|p| p.ends_with("/minimum")),
        "the $ref'd sibling schema applied: {paths:?}"
    );
    let broken = verdict_by_id(&doc, "in/broken.json");
    assert_eq!(broken["errors"][0]["at"], json!({"line": 1, "column": 16}));

    // everything valid: exit 0
    let o = verdict_in(
        d.path(),
        &["check", "--schema", "contract/item.schema.json", "ok"],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).ends_with("instances 2 > parsed 2 > valid 2\n2 passed, 0 failed\n"),
        "{}",
        stdout(&o)
    );
}

/// A log of long lines is read in blocks of about a megabyte of text, not of 2,048 lines
/// (`LINE_BLOCK_BYTES`): the lines of several blocks are all reported, once each and in
/// order, with their own line numbers.
#[test]
fn check_reads_a_log_of_long_lines_in_order_across_blocks() {
    let schema = r#"{"type": "object", "properties": {"n": {"type": "integer"},
  "pad": {"type": "string"}}, "required": ["n", "pad"], "additionalProperties": false}"#;
    let pad = "x".repeat(6000);
    let mut log = String::new();
    for i in 0..700usize {
        // every 9th line fails (`n` is a string)
        if i % 9 == 0 {
            log.push_str(&format!("{{\"n\": \"{i}\", \"pad\": \"{pad}\"}}\n"));
        } else {
            log.push_str(&format!("{{\"n\": {i}, \"pad\": \"{pad}\"}}\n"));
        }
    }
    assert!(log.len() > 4 << 20, "more than four blocks of text");
    let d = tree(&[("s.schema.json", schema), ("in/log.jsonl", &log)]);
    let o = schema_jsonl_of_in(d.path());
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let lines: Vec<Value> = crate::common::jsonl_verdicts(&stdout(&o));
    assert_eq!(lines.len(), 700);
    for (i, v) in lines.iter().enumerate() {
        assert_eq!(v["source"], format!("in/log.jsonl:{}", i + 1), "{v}");
        assert_eq!(
            v["errors"].as_array().map(Vec::len) != Some(0),
            i % 9 == 0,
            "{v}"
        );
    }
}

/// `check --schema` reads a JSONL log on a fast path (a passing line is validated in place
/// and printed from a template); one file per instance takes the full path. Both must print
/// the same report, byte for byte, once the ids name the same instance.
#[test]
fn schema_mode_jsonl_fast_path_prints_what_the_full_path_prints() {
    let schema = r#"{"type": "object",
  "properties": {"name": {"type": "string", "format": "email"}, "price": {"type": "integer", "minimum": 0}},
  "required": ["name", "price"], "additionalProperties": false}"#;
    let kinds: &[&[u8]] = &[
        br#"{"name": "a", "price": 1}"#,
        br#"{"name": "b", "price": 2}"#,
        br#"{"name": 7, "price": -1}"#,
        br#"{"name": "c", "price": 3}"#,
        b"{\"name\": \"\xff\", \"price\": 1}",
        br#"{"name": "esc \u001b[31m \"q\" \\", "price": 4}"#,
        br#"{"name": "d"#,
        br#"{"name": "e", "price": 5, "approved": true}"#,
        b"\xef\xbb\xbf{\"name\": \"f\", \"price\": 6}",
        br#"{"name": "g", "price": 1e400}"#,
        br#"{"name": "h", "name": "i", "price": 7}"#,
        br#"[1, 2]"#,
    ];
    // more than one block of lines (2,048), blank and CRLF lines between, runs of passes
    let mut log: Vec<u8> = Vec::new();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut line = 0usize;
    for i in 0..2600usize {
        let text = if i % 7 < 4 {
            kinds[i % 2]
        } else {
            kinds[i % kinds.len()]
        };
        line += 1;
        log.extend_from_slice(text);
        log.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
        files.push((format!("files/l{line:05}.json"), text.to_vec()));
        if i % 97 == 0 {
            line += 1;
            log.extend_from_slice(b"   \n");
        }
    }
    let d = tree(&[("s.schema.json", schema)]);
    std::fs::create_dir_all(d.path().join("files")).unwrap();
    std::fs::create_dir_all(d.path().join("in")).unwrap();
    std::fs::write(d.path().join("in/log.jsonl"), &log).unwrap();
    for (name, text) in &files {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    // `in/log.jsonl:12` -> `files/l00012.json`
    let rename = |text: &str| {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("in/log.jsonl:") {
            out.push_str(&rest[..at]);
            rest = &rest[at + "in/log.jsonl:".len()..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let n: usize = rest[..digits].parse().unwrap();
            out.push_str(&format!("files/l{n:05}.json"));
            rest = &rest[digits..];
        }
        out.push_str(rest);
        out
    };
    for format in ["human", "json", "jsonl"] {
        for quiet in [false, true] {
            let mut args = vec!["check", "--schema", "s.schema.json", "--format", format];
            if quiet {
                args.push("-q");
            }
            let fast = verdict_in(d.path(), &[args.as_slice(), &["in"]].concat());
            let full = verdict_in(d.path(), &[args.as_slice(), &["files"]].concat());
            assert_eq!(code(&fast), 1, "{}", stderr(&fast));
            assert_eq!(code(&full), 1, "{}", stderr(&full));
            let (fast, full) = (rename(&stdout(&fast)), stdout(&full));
            assert!(full.contains("files/l02600.json") || quiet, "{format}");
            assert_eq!(fast, full, "{format} -q {quiet}");
        }
    }
    // the report itself: every instance in order, the passing ones as `check` prints them
    let o = schema_jsonl_of_in(d.path());
    let lines: Vec<Value> = crate::common::jsonl_verdicts(&stdout(&o));
    assert_eq!(lines.len(), 2600);
    assert_eq!(
        stdout(&o).lines().next().unwrap(),
        concat!(
            r#"{"type":"verdict","data":{"id":"in/log.jsonl:1","source":"in/log.jsonl:1","contract":"s","stage":"ready","#,
            r#""decision":"ready-for-commit","reason":null,"errors":[],"warnings":[{"code":"#,
            r#""FORMAT_NOT_ASSERTED","severity":"warning","file":"s.schema.json","pointer":"#,
            r#""/properties/name/format","at":{"line":2,"column":55},"message":"`format: "#,
            r#"\"email\"` is not checked: format assertion is off, so any string passes (pass "#,
            r#"--format-assertion, or add a `pattern`)"}],"next_action":"Ready for the write "#,
            r#"step: execute it, and re-check state at commit time."}}"#
        )
    );
    // the summary line counts instances, in this mode's words
    let last: Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    let valid = lines.iter().filter(|v| v["reason"].is_null()).count();
    assert_eq!(
        last,
        json!({"type": "summary", "data": {"instances": 2600, "parsed": last["data"]["parsed"],
            "valid": valid, "invalid": 2600 - valid}})
    );
    let reasons: Vec<String> = lines[..12]
        .iter()
        .map(|v| format!("{} {}", v["id"].as_str().unwrap(), v["reason"]))
        .collect();
    assert_eq!(
        reasons,
        [
            "in/log.jsonl:1 null",
            "in/log.jsonl:3 null",
            "in/log.jsonl:4 null",
            "in/log.jsonl:5 null",
            "in/log.jsonl:6 \"INVALID_CAPTURE\"",
            "in/log.jsonl:7 null",
            "in/log.jsonl:8 \"TRUNCATED_JSON\"",
            "in/log.jsonl:9 null",
            "in/log.jsonl:10 null",
            "in/log.jsonl:11 null",
            "in/log.jsonl:12 null",
            "in/log.jsonl:13 \"SCHEMA_MISMATCH\""
        ]
    );
    let mut all: Vec<String> = lines.iter().map(|v| v["reason"].to_string()).collect();
    all.sort();
    all.dedup();
    assert_eq!(
        all,
        [
            "\"DUPLICATE_KEY\"",
            "\"INVALID_CAPTURE\"",
            "\"INVALID_JSON\"",
            "\"NON_STANDARD_NUMBER\"",
            "\"SCHEMA_MISMATCH\"",
            "\"TRUNCATED_JSON\"",
            "null"
        ]
    );
}

#[test]
fn validator_mode_in_the_schemas_own_folder_leaves_the_schema_out() {
    let d = tree(&[
        ("s.schema.json", r#"{"type": "object", "required": ["a"]}"#),
        ("x.json", r#"{"a": 1}"#),
    ]);
    let o = verdict_in(
        d.path(),
        &["check", "--schema", "s.schema.json", "--format", "jsonl"],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let ids = jsonl_ids(&o);
    assert_eq!(ids, ["x.json"]);
}

// ---------------------------------------------------------------- feedback

fn feedback(id: &str, format: &str) -> Output {
    verdict(&["feedback", id, "samples/refund", "--format", format])
}

#[test]
fn feedback_text_for_regenerate_and_the_other_decisions() {
    for (id, regenerate) in [
        ("amount-as-string", true),
        ("broken-json-missing-comma", true),
        ("amount-8000-intent-5000", false),
        ("refusal", false),
    ] {
        let o = feedback(id, "text");
        assert_eq!(code(&o), 0, "{id}: {}", stderr(&o));
        let text = stdout(&o);
        if regenerate {
            assert!(
                text.contains("\"const\": \"refund-v1\""),
                "{id}: the schema"
            );
            assert!(text.contains("Reply again with only the corrected JSON value"));
        } else {
            assert!(
                text.starts_with("Regenerating would not help"),
                "{id}: {text}"
            );
            assert!(text.contains("\nInstead: "), "{id}: {text}");
        }
        insta::with_settings!({prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("cli__feedback_{id}"), text);
        });
    }
}

#[test]
fn feedback_marks_a_cut_off_text_where_it_ends() {
    let o = feedback("truncated-text", "text");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "- at line 1, column 73: the text ends inside an object opened at 1:1: expected \",\" or \"}\", found the end of the text; you wrote `...042\", \"amount_minor\": 50⟨here⟩`\n"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn feedback_json_fields() {
    let fb = |id: &str| {
        let o = feedback(id, "json");
        assert_eq!(code(&o), 0, "{id}: {}", stderr(&o));
        let text_out = stdout(&feedback(id, "text"));
        let v = json_out(&o);
        assert_eq!(v["id"], id);
        assert_eq!(format!("{}\n", v["message"].as_str().unwrap()), text_out);
        v
    };
    let v = fb("amount-as-string");
    assert_eq!(
        (&v["decision"], &v["regenerate"]),
        (&json!("regenerate"), &json!(true))
    );
    assert_eq!(v["errors"][0]["pointer"], "/amount_minor");
    assert_eq!(v["errors"][0]["reason"], "SCHEMA_MISMATCH");
    assert_eq!(v["contract"]["const"], Value::Null);
    assert_eq!(
        v["contract"]["$id"],
        "https://verdict.example/schemas/refund-v1.json"
    );

    let v = fb("broken-json-missing-comma");
    assert_eq!(
        (&v["decision"], &v["regenerate"]),
        (&json!("regenerate"), &json!(true))
    );
    assert_eq!(v["errors"][0]["reason"], "INVALID_JSON");

    let v = fb("amount-8000-intent-5000");
    assert_eq!(
        (&v["decision"], &v["regenerate"]),
        (&json!("recheck"), &json!(false))
    );
    assert_eq!(v["errors"][0]["reason"], "INTENT_MISMATCH");
    assert_eq!(v["errors"][0]["pointer"], "/amount_minor");

    let v = fb("refusal");
    assert_eq!(
        (&v["decision"], &v["regenerate"]),
        (&json!("reject"), &json!(false))
    );
    assert_eq!(v["errors"][0]["reason"], "REFUSAL");

    // by source as well as by id
    let o = verdict(&[
        "feedback",
        "captures/cases.jsonl:20",
        "samples/refund",
        "-f",
        "json",
    ]);
    assert_eq!(json_out(&o)["id"], "amount-8000-intent-5000");
}

#[test]
fn feedback_for_an_unknown_id_exits_2() {
    let o = verdict(&["feedback", "no-such-capture", "samples/refund"]);
    assert_eq!(code(&o), 2);
    assert_eq!(o.stdout, b"");
    assert_eq!(
        stderr(&o),
        "verdict: no capture with id or source \"no-such-capture\" in samples/refund\n"
    );
    let o = verdict(&["feedback", "x", "samples/no-such-workspace"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "verdict: samples/no-such-workspace: no such file or folder\n"
    );
    // a folder with no captures (run outside any workspace): where it looked, and the
    // argument that names a workspace
    let empty = tempfile::tempdir().unwrap();
    let o = crate::common::verdict_in(empty.path(), &["feedback", "amount-as-string"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "verdict: no capture with id or source \"amount-as-string\" in .: it holds no captures (searched ./captures (missing)); name the workspace: `verdict feedback ID WORKSPACE`\n"
    );
}

// ---------------------------------------------------------------- untrusted text

#[test]
fn escape_sequences_in_ids_and_outputs_never_reach_the_terminal() {
    let nasty = "\u{1b}[31mred\u{1b}]0;title\u{7}\u{1b}[2J";
    let lines = [
        // an id with escapes, and a string value with escapes that fails the schema
        record(
            &format!("id-{nasty}"),
            &format!(
                r#"{{"schema_version":"refund-v1","order_id":"O-1","amount_minor":"{}","currency":"KRW","expected_version":1}}"#,
                nasty.replace('\u{1b}', "\\u001b").replace('\u{7}', "\\u0007")
            ),
            json!({}),
        ),
        // raw escapes in the text: a parse error whose message quotes them
        record("raw-escapes", &format!("{{\"a\": 1}}{nasty}"), json!({})),
        record(&format!("{nasty}-fenced"), &format!("{nasty}\n```json\n{{}}\n```"), json!({})),
        // an escape inside a string that meets the schema is reported by a rule-less intent check
        record(
            "intent",
            &VALID.replace("O-1042", &nasty.replace('\u{1b}', "\\u001b").replace('\u{7}', "\\u0007")),
            json!({"intent": {"order_id": "O-1042"}}),
        ),
    ]
    .join("\n");
    let ws = tree(&[
        ("schemas/refund-v1.schema.json", REFUND_SCHEMA),
        ("captures/esc.jsonl", &lines),
    ]);
    for format in ["human", "github"] {
        let o = verdict_in(
            ws.path(),
            &["check", "--color", "never", "--format", format],
        );
        assert_eq!(code(&o), 1, "{format}");
        assert!(
            !o.stdout.contains(&0x1b) && !o.stdout.contains(&0x07),
            "{format}: {:?}",
            stdout(&o)
        );
        let out = stdout(&o);
        assert!(
            out.contains("\\u{1b}[31mred\\u{1b}]0;title\\u{7}\\u{1b}[2J"),
            "{format}: {out}"
        );
    }
    // nor in the feedback message, which an agent loop may also print
    for id in [
        "captures/esc.jsonl:1",
        "raw-escapes",
        "captures/esc.jsonl:3",
        "intent",
    ] {
        for format in ["text", "json"] {
            let o = verdict_in(ws.path(), &["feedback", id, ".", "--format", format]);
            assert_eq!(code(&o), 0, "{id}: {}", stderr(&o));
            assert!(
                !o.stdout.contains(&0x1b) && !o.stdout.contains(&0x07),
                "{id} {format}: {:?}",
                stdout(&o)
            );
        }
    }
    // with colour on, the only escapes are verdict's own SGR codes
    let o = verdict_in(ws.path(), &["check", "--color", "always"]);
    assert!(!strip_ansi(&stdout(&o)).contains('\x1b'));
    assert!(!o.stdout.contains(&0x07));
    assert!(!stdout(&o).contains("\x1b]"));
    assert!(!stdout(&o).contains("\x1b[2J"));
}

#[test]
fn a_misspelt_command_is_named_with_a_suggestion() {
    let o = verdict(&["chek", "samples/refund"]);
    assert_eq!(code(&o), 2);
    assert_eq!(o.stdout, b"");
    assert_eq!(
        stderr(&o),
        "verdict: `chek` is not a command or a path; did you mean `verdict check`? (commands: check, feedback, watch, lint, review, chains, completions, man; `verdict --help`)\n"
    );
    // a path that is not a command still opens (or reports) the workspace
    let o = verdict(&["samples/no-such"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "verdict: samples/no-such: no such file or folder\n"
    );
}

#[test]
fn validator_mode_names_the_format_assertion_flag_not_the_config_key() {
    let d = tree(&[
        (
            "s.schema.json",
            r#"{"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}"#,
        ),
        ("in/x.json", r#"{"e": "x"}"#),
    ]);
    let o = verdict_in(
        d.path(),
        &[
            "check",
            "--schema",
            "s.schema.json",
            "in",
            "--format",
            "jsonl",
        ],
    );
    let v = &crate::common::jsonl_verdicts(&stdout(&o))[0];
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "FORMAT_NOT_ASSERTED")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        w["message"]
            .as_str()
            .unwrap()
            .ends_with("(pass --format-assertion, or add a `pattern`)"),
        "{w}"
    );
}

#[test]
fn several_gemini_candidates_are_named_in_a_warning_on_the_verdict() {
    let candidate = serde_json::json!({"content": {"parts": [{"text": "{}"}], "role": "model"},
                                       "finishReason": "STOP"});
    let record =
        serde_json::json!({"id": "two", "response": {"candidates": [candidate, candidate]}});
    let dir = crate::common::workspace_with(
        r#"{"type": "object"}"#,
        &[("two.json", &record.to_string())],
    );
    let ws = dir.path();
    let o = verdict_in(ws, &["check", "-f", "json", "."]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = &doc["verdicts"][0];
    assert_eq!(v["stage"], "ready", "{v}");
    let w: Vec<&serde_json::Value> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "CANDIDATES_IGNORED")
        .collect();
    assert_eq!(w.len(), 1, "{v}");
    assert_eq!(w[0]["pointer"], "/candidates/1", "{v}");
    assert_eq!(w[0]["severity"], "warning", "{v}");
    assert!(v["response"].get("warnings").is_none(), "{v}");
    assert_eq!(o.status.code(), Some(0));
    // the human report prints it under the capture, not among the contract's lint findings
    let o = verdict_in(ws, &["check", "--color", "never", "."]);
    let human = String::from_utf8_lossy(&o.stdout);
    assert!(
        human.contains(
            "  ✓ two  ready-for-commit  captures/two.json\n      warning[CANDIDATES_IGNORED] /candidates/1  the response holds 2 candidates: candidates[0] is validated, candidates[1] is ignored"
        ),
        "{human}"
    );
}

#[test]
fn feedback_quotes_the_value_as_the_model_wrote_it() {
    // keys out of order and spread over lines: quoted in the model's order, on one line
    let output = "{\"meta\": {\"zeta\": 1,\n    \"alpha\": [2, 3]}}";
    let record = serde_json::json!({"id": "m", "output": output});
    let dir = crate::common::workspace_with(
        r#"{"type": "object", "properties": {"meta": {"type": "string"}}}"#,
        &[("m.json", &record.to_string())],
    );
    let ws = dir.path();
    let o = verdict_in(ws, &["feedback", "m", "."]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(
            "- at /meta: {\"alpha\":[2,3],\"zeta\":1} is not of type \"string\" (keyword `type` at /properties/meta/type); you wrote {\"zeta\": 1, \"alpha\": [2, 3]}\n"
        ),
        "{text}"
    );
}

#[test]
fn feedback_takes_a_capture_by_its_path_from_here() {
    let run = |id: &str| {
        let o = verdict_in(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &["feedback", "--format", "json", id, "samples/refund"],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{id}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["id"].as_str().unwrap().to_string()
    };
    assert_eq!(
        run("samples/refund/captures/valid-proposal.json"),
        "valid-proposal"
    );
    // the same capture by its workspace-relative source, and a log line by its path
    assert_eq!(run("captures/valid-proposal.json"), "valid-proposal");
    let line = std::fs::read_to_string("samples/refund/captures/cases.jsonl")
        .unwrap()
        .lines()
        .position(|l| l.contains("\"amount-as-string\""))
        .unwrap()
        + 1;
    assert_eq!(
        run(&format!("samples/refund/captures/cases.jsonl:{line}")),
        "amount-as-string"
    );
}

#[test]
fn feedback_by_path_finds_the_workspace_without_naming_it() {
    let o = verdict_in(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "feedback",
            "--format",
            "json",
            "samples/refund/captures/valid-proposal.json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["id"], "valid-proposal");
}

#[test]
fn a_plain_json_file_given_to_check_gets_the_schema_mode_hint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.json"), r#"{"a": 2}"#).unwrap();
    let o = verdict_in(dir.path(), &["check", "-f", "json", "one.json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    let f = &doc["verdicts"][0]["errors"][0];
    assert_eq!(f["reason"], "INVALID_CAPTURE");
    assert_eq!(
        f["hint"],
        "this looks like a plain JSON value, not a capture record or a provider log record: to validate plain JSON files, run `verdict check --schema SCHEMA FILE..`"
    );
}

#[test]
fn no_captures_names_the_folders_it_searched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::write(dir.path().join("verdict.toml"), "captures = [\"logs\"]\n").unwrap();
    let o = verdict_in(dir.path(), &["check", "."]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("(searched ./logs (missing))"), "{err}");
}

/// `check --schema s.schema.json --format jsonl in` run in `dir`.
fn schema_jsonl_of_in(dir: &std::path::Path) -> std::process::Output {
    verdict_in(
        dir,
        &[
            "check",
            "--schema",
            "s.schema.json",
            "--format",
            "jsonl",
            "in",
        ],
    )
}
