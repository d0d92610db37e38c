//! Self-correction loops (`docs/chains.md`): the chain report of `samples/chains` from
//! `check --format json`, `--format jsonl`, the human report and `verdict chains`; the
//! order property (shuffled records, same outcomes); bad input (attempt numbers, patterns,
//! order values, a chain of 100,000 attempts); `watch --json`'s chain lines.

use crate::common::{self, verdict, verdict_in};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict::core::chain::ChainSet;
use verdict::core::chain::outcome::Outcome;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/chains")
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// `check --format json samples/chains`'s `chains` object.
fn check_chains() -> Value {
    let o = verdict(&["check", "--format", "json", "samples/chains"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    doc["chains"].clone()
}

/// Per chain: outcome, attempts, recovered_at, flags, wasted `(attempt, why)`, effects
/// `(attempt, pointer, effect)`.
fn digest(row: &Value) -> Value {
    json!({
        "outcome": row["outcome"],
        "attempts": row["attempts"],
        "recovered_at": row["recovered_at"],
        "flags": row["flags"],
        "wasted": row["wasted"].as_array().unwrap().iter()
            .map(|w| json!([w["attempt"], w["why"], w["after"]])).collect::<Vec<_>>(),
        "effects": row["effects"].as_array().unwrap().iter()
            .map(|e| json!([e["attempt"], e["pointer"], e["effect"]])).collect::<Vec<_>>(),
        "tokens": row["tokens"],
        "tokens_to_recover": row["tokens_to_recover"],
    })
}

#[test]
fn the_sample_report_has_exact_outcomes_flags_effects_and_figures() {
    let chains = check_chains();
    let rows = chains["rows"].as_array().unwrap();
    let got: serde_json::Map<String, Value> = rows
        .iter()
        .map(|r| (r["chain"].as_str().unwrap().to_owned(), digest(r)))
        .collect();
    let want = json!({
        "loop-first-pass": {"outcome": "first-pass", "attempts": 1, "recovered_at": null, "flags": [],
            "wasted": [], "effects": [], "tokens": 440, "tokens_to_recover": null},
        "loop-recovered-2": {"outcome": "recovered", "attempts": 2, "recovered_at": 2, "flags": [],
            "wasted": [], "effects": [[1, "/amount_minor", "fixed"]], "tokens": 1000, "tokens_to_recover": 1000},
        "loop-recovered-3": {"outcome": "recovered", "attempts": 3, "recovered_at": 3, "flags": [],
            "wasted": [], "effects": [[1, "/currency", "moved"], [2, "/expected_version", "fixed"]],
            "tokens": 1680, "tokens_to_recover": 1680},
        "loop-unrecovered": {"outcome": "unrecovered", "attempts": 3, "recovered_at": null, "flags": [],
            "wasted": [], "effects": [[1, "/amount_minor", "persisted"], [2, "/amount_minor", "persisted"]],
            "tokens": 1680, "tokens_to_recover": null},
        "loop-wasted-reject": {"outcome": "unrecovered", "attempts": 2, "recovered_at": null, "flags": ["wasted"],
            "wasted": [[2, "after-reject", "NOT_AUTHORIZED"]], "effects": [], "tokens": 1000, "tokens_to_recover": null},
        "loop-same-proposal": {"outcome": "recovered", "attempts": 3, "recovered_at": 3, "flags": ["wasted"],
            "wasted": [[2, "same-proposal", "SCHEMA_MISMATCH"]],
            "effects": [[1, "/currency", "persisted"], [2, "/currency", "fixed"]], "tokens": 1680, "tokens_to_recover": 1680},
        "loop-over-budget": {"outcome": "recovered", "attempts": 4, "recovered_at": 4, "flags": ["over-budget"],
            "wasted": [], "effects": [[3, "/currency", "fixed"]], "tokens": 2096, "tokens_to_recover": 2096},
        "refund-b1-ready": {"outcome": "first-pass", "attempts": 2, "recovered_at": null, "flags": [],
            "wasted": [], "effects": [], "tokens": 880, "tokens_to_recover": null},
        "refund-b2-rate-limited": {"outcome": "unrecovered", "attempts": 2, "recovered_at": null, "flags": [],
            "wasted": [], "effects": [], "tokens": null, "tokens_to_recover": null},
        "refund-b3-same-proposal": {"outcome": "unrecovered", "attempts": 2, "recovered_at": null, "flags": ["wasted"],
            "wasted": [[2, "same-proposal", "SCHEMA_MISMATCH"]], "effects": [[1, "/currency", "persisted"]],
            "tokens": 880, "tokens_to_recover": null},
    });
    assert_eq!(Value::Object(got), want);
    // the order rows come in: the first attempt read, file by file
    let names: Vec<&str> = rows.iter().map(|r| r["chain"].as_str().unwrap()).collect();
    assert_eq!(names[0], "loop-first-pass");
    assert_eq!(rows[7]["linked_by"], "natural");
    assert_eq!(rows[0]["linked_by"], "record");
    assert_eq!(
        rows[7]["sources"],
        json!([
            "captures/batches/2026-11-30_output.jsonl:1",
            "captures/batches/2026-12-01_output.jsonl:1"
        ])
    );
    assert_eq!(
        rows[6]["over_budget"],
        json!(["attempts 4 > max_attempts 3"])
    );
    let s = &chains["summary"];
    assert_eq!(
        [
            &s["chains"],
            &s["first_pass"],
            &s["recovered"],
            &s["unrecovered"],
            &s["attempts"],
            &s["wasted_chains"],
            &s["over_budget"]
        ],
        [
            &json!(10),
            &json!(2),
            &json!(4),
            &json!(4),
            &json!(24),
            &json!(3),
            &json!(1)
        ]
    );
    assert_eq!(
        s["wasted_attempts"],
        json!({"after-reject": 1, "same-proposal": 2})
    );
    assert_eq!(
        s["by_first_failure"][0],
        json!({"stage": "schema", "reason": "SCHEMA_MISMATCH", "pointer": "/currency", "chains": 3,
               "recovered": 2, "recovery_rate": 0.6667,
               "attempts_to_recover": {"p50": 3, "p90": 3, "max": 3},
               "tokens_to_recover": {"p50": 1680, "p90": 1680, "max": 1680}})
    );
    assert_eq!(
        s["unrecovered_by_reason"],
        json!([{"reason": "SCHEMA_MISMATCH", "chains": 2}, {"reason": "NOT_AUTHORIZED", "chains": 1},
               {"reason": "REQUEST_ERROR", "chains": 1}])
    );
    assert_eq!(
        s["budget_advice"],
        json!([{"contract": "refund-v1", "recoveries": 4, "p90": 4, "p95": 4, "p99": 4}])
    );
}

#[test]
fn verdict_chains_prints_the_same_report_as_check() {
    let o = verdict(&["chains", "--format", "json", "samples/chains"]);
    assert_eq!(o.status.code(), Some(0));
    let chains: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(chains, check_chains());
    // the table, as samples/chains/expected-chains.txt has it
    let o = verdict(&["chains", "samples/chains"]);
    assert_eq!(o.status.code(), Some(0));
    let want = std::fs::read_to_string(sample().join("expected-chains.txt")).unwrap();
    assert_eq!(stdout(&o), want);
    // check's human report: the chain funnel after its funnel
    let o = verdict(&["check", "-q", "--color", "never", "samples/chains"]);
    let text = stdout(&o);
    let funnel = text
        .lines()
        .position(|l| l.starts_with("captures 25 > completed 22"))
        .unwrap();
    let lines: Vec<&str> = text.lines().skip(funnel + 1).take(2).collect();
    assert_eq!(
        lines,
        [
            "chains 10 > first-pass 2 > recovered 4 > unrecovered 4",
            "  attempts 24; wasted 3 (after reject 1, after recheck 0, same proposal 2) in 3 chains; over budget 1"
        ]
    );
}

#[test]
fn jsonl_prints_one_chain_line_per_chain_after_the_captures() {
    let o = verdict(&["check", "--format", "jsonl", "samples/chains"]);
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types.len(), 25 + 10 + 1);
    assert!(types[..25].iter().all(|t| *t == "verdict"), "{types:?}");
    assert!(types[25..35].iter().all(|t| *t == "chain"), "{types:?}");
    assert_eq!(types[35], "summary");
    let rows: Vec<Value> = lines[25..35].iter().map(|l| l["data"].clone()).collect();
    assert_eq!(Value::Array(rows), check_chains()["rows"]);
    // a linked verdict names its chain; a batch line seen once does not
    let v = lines
        .iter()
        .find(|l| l["data"]["id"] == "loop-recovered-2/2")
        .unwrap();
    assert_eq!(v["data"]["chain"]["id"], "loop-recovered-2");
    assert_eq!(v["data"]["chain"]["attempt"], 2);
    // a batch line seen once carries its natural link, yet is no chain
    let once = lines
        .iter()
        .find(|l| l["data"]["id"] == "refund-b4-once")
        .unwrap();
    assert_eq!(once["data"]["chain"]["linked_by"], "natural");
    assert!(
        lines[25..35]
            .iter()
            .all(|l| l["data"]["chain"] != "refund-b4-once")
    );
}

#[test]
fn two_workspaces_print_every_chain_line_after_every_capture_and_in_workspace_order() {
    // the rows are made again from each workspace's chain set when they are printed
    // (`docs/chains.md#memory`): the order stays the one of the rows kept before
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    common::copy_dir(&sample(), &a);
    common::copy_dir(&sample(), &b);
    let o = verdict_in(tmp.path(), &["check", "--format", "jsonl", "a", "b"]);
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types.len(), 50 + 20 + 1);
    assert!(types[..50].iter().all(|t| *t == "verdict"), "{types:?}");
    assert!(types[50..70].iter().all(|t| *t == "chain"), "{types:?}");
    assert_eq!(types[70], "summary");
    let rows: Vec<Value> = lines[50..70].iter().map(|l| l["data"].clone()).collect();
    let one = check_chains()["rows"].as_array().unwrap().clone();
    assert_eq!(rows, [one.clone(), one].concat());
    let summary = &lines[70]["data"];
    assert_eq!(summary["captures"], 50, "{summary}");
}

/// A seeded shuffle (no dependency): xorshift64*.
fn shuffle<T>(v: &mut [T], seed: &mut u64) {
    for i in (1..v.len()).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let j = (*seed % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// A chain's id, outcome, attempts, recovery point, flags and number of effects.
type Row = (
    String,
    Outcome,
    usize,
    Option<usize>,
    Vec<&'static str>,
    usize,
);

/// Each chain's outcome, attempts, recovery point, flags and effects, from the library.
fn outcomes(root: &Path) -> Vec<Row> {
    let ws = verdict::core::workspace::Workspace::open(root).unwrap();
    let mut set = ChainSet::default();
    for v in common::verdicts(root) {
        set.add(&v);
    }
    let mut rows: Vec<_> = set
        .finish(&ws.config.budget)
        .rows
        .into_iter()
        .map(|r| {
            (
                r.chain,
                r.outcome,
                r.attempts,
                r.recovered_at,
                r.flags,
                r.effects.len(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

#[test]
fn shuffling_the_records_never_changes_an_outcome_when_order_is_given() {
    // the loop's records without their attempt numbers: `order` alone orders them
    let text = std::fs::read_to_string(sample().join("captures/agent-loop.jsonl")).unwrap();
    let mut records: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("attempt");
            v.to_string()
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&sample().join("schemas"), &tmp.path().join("schemas"));
    std::fs::write(
        tmp.path().join("verdict.toml"),
        "default_contract = \"refund-v1\"\n[chains]\norder = \"/meta/captured_at\"\n[budget]\nmax_attempts = 3\n",
    )
    .unwrap();
    let captures = tmp.path().join("captures");
    std::fs::create_dir_all(&captures).unwrap();
    let write = |records: &[String], split: usize| {
        std::fs::write(captures.join("a.jsonl"), records[..split].join("\n")).unwrap();
        std::fs::write(captures.join("b.jsonl"), records[split..].join("\n")).unwrap();
    };
    write(&records, records.len());
    let baseline = outcomes(tmp.path());
    assert_eq!(baseline.len(), 7);
    // the same outcomes as the sample's attempt numbers give
    let sample_rows: Vec<_> = outcomes(&sample())
        .into_iter()
        .filter(|r| r.0.starts_with("loop-"))
        .collect();
    assert_eq!(baseline, sample_rows);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..25 {
        shuffle(&mut records, &mut seed);
        let split = (seed % (records.len() as u64 + 1)) as usize;
        write(&records, split);
        assert_eq!(
            outcomes(tmp.path()),
            baseline,
            "round {round}, split {split}"
        );
    }
}

#[test]
fn bad_attempt_numbers_are_clear_per_capture_errors_and_gaps_are_warnings() {
    let schema = r#"{"type": "object"}"#;
    let line = |attempt: &str| format!(r#"{{"chain": "c", "attempt": {attempt}, "output": {{}}}}"#);
    let log = [
        line("0"),
        line("-1"),
        line(r#""2""#),
        line("1"),
        line("3"),
        line("3"),
    ]
    .join("\n");
    let ws = common::workspace_with(schema, &[("loop.jsonl", &log)]);
    let o = verdict_in(ws.path(), &["check", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let msgs: Vec<(&str, &str)> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["reason"].as_str().unwrap_or("READY"),
                v["errors"][0]["message"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        msgs,
        [
            (
                "INVALID_CAPTURE",
                "`attempt` must be an integer from 1 (the first attempt is 1), found 0"
            ),
            (
                "INVALID_CAPTURE",
                "`attempt` must be an integer from 1 (the first attempt is 1), found -1"
            ),
            (
                "INVALID_CAPTURE",
                "`attempt` must be an integer from 1 (the first attempt is 1), found a string"
            ),
            ("READY", ""),
            ("READY", ""),
            ("READY", ""),
        ]
    );
    let warnings = &doc["summary"]["warnings"];
    assert_eq!(warnings.as_array().unwrap().len(), 1, "{warnings}");
    assert_eq!(warnings[0]["code"], "CHAIN_ATTEMPTS");
    assert_eq!(
        warnings[0]["message"],
        "chain \"c\": attempt 3 appears 2 times (captures/loop.jsonl:5, captures/loop.jsonl:6); attempt 2 missing; its attempts are taken as ordered, never renumbered (docs/chains.md#order)"
    );
    assert_eq!(doc["chains"]["rows"][0]["attempts"], 3);
    // `verdict chains` prints the warning after its table
    let o = verdict_in(ws.path(), &["chains", "."]);
    assert!(
        stdout(&o).ends_with(&format!(
            "\nwarning[CHAIN_ATTEMPTS] {}\n",
            warnings[0]["message"].as_str().unwrap()
        )),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_pattern_that_does_not_compile_is_a_config_error_naming_the_key() {
    let ws = common::workspace_with(r#"{"type": "object"}"#, &[("a.json", r#"{"output": {}}"#)]);
    std::fs::write(
        ws.path().join("verdict.toml"),
        "[chains]\npattern = '^(?P<chain>.+#(?P<attempt>\\d+)$'\n",
    )
    .unwrap();
    for cmd in ["check", "chains"] {
        let o = verdict_in(ws.path(), &[cmd, "."]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("[chains] `pattern` does not compile (\"^(?P<chain>.+#(?P<attempt>\\\\d+)$\"): error: unclosed group"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn order_pointing_at_non_numbers_is_a_warning_naming_the_chain() {
    let rec = |id: &str, ts: &str| {
        format!(
            r#"{{"id": "{id}", "chain": "c", "output": {{}}, "meta": {{"ts": {ts}}}, "expect": {{"stage": "ready"}}}}"#
        )
    };
    let log = [rec("x", "\"soon\""), rec("y", "2"), rec("z", "true")].join("\n");
    let ws = common::workspace_with(r#"{"type": "object"}"#, &[("loop.jsonl", &log)]);
    std::fs::write(
        ws.path().join("verdict.toml"),
        "[chains]\norder = \"/meta/ts\"\n",
    )
    .unwrap();
    let o = verdict_in(ws.path(), &["check", "--format", "json", "."]);
    assert_eq!(o.status.code(), Some(0));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let w = &doc["summary"]["warnings"][0];
    assert_eq!(w["code"], "CHAIN_ORDER");
    assert_eq!(
        w["message"],
        "chain \"c\": 2 of its 3 attempts have no usable `order` value (captures/loop.jsonl:1: `order` (/meta/ts) is \"soon\": not a number or an RFC 3339 timestamp, captures/loop.jsonl:3: `order` (/meta/ts) is a boolean: not a number or an RFC 3339 timestamp); the chain is ordered by attempt number, else file name and line"
    );
    assert_eq!(
        doc["chains"]["rows"][0]["sources"],
        json!([
            "captures/loop.jsonl:1",
            "captures/loop.jsonl:2",
            "captures/loop.jsonl:3"
        ])
    );
}

#[test]
fn a_chain_of_100000_attempts_is_reported_bounded() {
    let mut log = String::with_capacity(100_000 * 70);
    for i in 1..=100_000 {
        let ready = i == 100_000;
        log.push_str(&format!(
            "{{\"chain\": \"long\", \"attempt\": {i}, \"output\": {{\"a\": {}}}}}\n",
            if ready { "1" } else { "\"x\"" }
        ));
    }
    let ws = common::workspace_with(
        r#"{"properties": {"a": {"type": "integer"}}}"#,
        &[("loop.jsonl", &log)],
    );
    let o = verdict_in(ws.path(), &["chains", "--format", "json", "."]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let row = &r["rows"][0];
    assert_eq!(
        [
            &row["outcome"],
            &row["attempts"],
            &row["recovered_at"],
            &row["effect_counts"]
        ],
        [
            &json!("recovered"),
            &json!(100_000),
            &json!(100_000),
            &json!({"fixed": 1, "persisted": 99_998})
        ]
    );
    assert_eq!(row["effects"].as_array().unwrap().len(), 100);
    assert_eq!(row["sources"].as_array().unwrap().len(), 100);
    assert_eq!(r["summary"]["budget_advice"][0]["p99"], 100_000);
}

#[test]
fn watch_prints_a_chain_line_when_a_chain_changes() {
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&sample(), tmp.path());
    let w = common::watch::WatchJson::start(tmp.path(), &["--debounce-ms", "50"]);
    let first = w.batch("first pass", Duration::from_secs(60));
    let chains: Vec<&Value> = first.iter().filter(|l| l["type"] == "chain").collect();
    assert_eq!(chains.len(), 10);
    // the unrecovered loop's last attempt is fixed: that chain recovers
    let file = tmp.path().join("captures/agent-loop.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let fixed = text.replace(r#"\"amount_minor\":\"5,000\""#, r#"\"amount_minor\":5000"#);
    assert_ne!(text, fixed);
    std::fs::write(&file, fixed).unwrap();
    let next = w.batch("after the fix", Duration::from_secs(60));
    let chains: Vec<&Value> = next.iter().filter(|l| l["type"] == "chain").collect();
    assert_eq!(chains.len(), 1, "{next:?}");
    assert_eq!(chains[0]["data"]["chain"], "loop-unrecovered");
    assert_eq!(chains[0]["data"]["outcome"], "recovered");
    assert_eq!(chains[0]["cause"], json!(["captures/agent-loop.jsonl"]));
}

/// The `chain` and `chain_removed` lines of a batch, as `(type, chain, flags)`, sorted.
fn chain_lines(batch: &[Value]) -> Vec<(String, String, Value)> {
    let mut out: Vec<(String, String, Value)> = batch
        .iter()
        .filter(|l| l["type"] == "chain" || l["type"] == "chain_removed")
        .map(|l| {
            (
                l["type"].as_str().unwrap().to_owned(),
                l["data"]["chain"].as_str().unwrap().to_owned(),
                l["data"]["flags"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    out
}

#[test]
fn watch_relinks_and_reports_again_when_budget_or_chains_change_in_verdict_toml() {
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&sample(), tmp.path());
    let w = common::watch::WatchJson::start(tmp.path(), &["--debounce-ms", "50"]);
    let first = w.batch("first pass", Duration::from_secs(60));
    assert_eq!(chain_lines(&first).len(), 10);
    let config = tmp.path().join("verdict.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    // a tighter budget: the chains of 3 attempts are over it now, and the one of 4 is over
    // it by another figure
    let tighter = text.replace("max_attempts = 3", "max_attempts = 2");
    assert_ne!(text, tighter);
    std::fs::write(&config, &tighter).unwrap();
    let next = w.batch("after the budget change", Duration::from_secs(60));
    let over = json!(["over-budget"]);
    let wasted_over = json!(["wasted", "over-budget"]);
    let line = |t: &str, c: &str, f: &Value| (t.to_owned(), c.to_owned(), f.clone());
    assert_eq!(
        chain_lines(&next),
        [
            line("chain", "loop-over-budget", &over),
            line("chain", "loop-recovered-3", &over),
            line("chain", "loop-same-proposal", &wasted_over),
            line("chain", "loop-unrecovered", &over),
        ],
        "{next:?}"
    );
    let budget = next
        .iter()
        .find(|l| l["data"]["chain"] == "loop-over-budget")
        .unwrap();
    assert_eq!(
        budget["data"]["over_budget"],
        json!(["attempts 4 > max_attempts 2"])
    );
    assert_eq!(budget["cause"], json!(["verdict.toml"]));
    // a `[chains] pattern`: the batch lines are re-linked by their id's prefix (the
    // capture records keep their own `chain`), so the natural chains go and new ones come,
    // the line seen once among them (a pattern's chain of one attempt is a chain)
    let relinked = format!("{tighter}\n[chains]\npattern = '^(?P<chain>refund-b[0-9])-'\n");
    std::fs::write(&config, relinked).unwrap();
    let last = w.batch("after the [chains] change", Duration::from_secs(60));
    let none = json!(null);
    let first_pass = json!([]);
    assert_eq!(
        chain_lines(&last),
        [
            line("chain", "refund-b1", &first_pass),
            line("chain_removed", "refund-b1-ready", &none),
            line("chain", "refund-b2", &first_pass),
            line("chain_removed", "refund-b2-rate-limited", &none),
            line("chain", "refund-b3", &json!(["wasted"])),
            line("chain_removed", "refund-b3-same-proposal", &none),
            line("chain", "refund-b4", &first_pass),
        ],
        "{last:?}"
    );
}

#[test]
fn the_workbench_shows_the_chain_rows_check_reports() {
    use verdict::engine::{Engine, EngineEvent};
    use verdict::tui::app::{App, ChainNode, Msg};
    let root = sample();
    let ws = std::sync::Arc::new(verdict::core::workspace::Workspace::load(&root).unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let engine = Engine::spawn(root.clone(), ws, move |e| tx.send(e).is_ok());
    let mut app = App::new(
        "samples/chains",
        None,
        ratatui::layout::Rect::new(0, 0, 120, 30),
    );
    app.request_validation(false);
    for j in app.out.requests.drain(..) {
        engine.submit(j);
    }
    loop {
        let e = rx.recv_timeout(Duration::from_secs(120)).unwrap();
        let end = matches!(e, EngineEvent::Finished { .. });
        app.update(Msg::Engine(e));
        if end {
            break;
        }
    }
    // the rows of the chain tree, as the screen has them
    let view = app
        .chains
        .tree
        .view
        .clone()
        .expect("the engine sent the chains");
    let shown: Vec<Value> = app
        .chains
        .tree
        .nodes
        .iter()
        .map(|n| match *n {
            ChainNode::Chain(i) => {
                let r = &view.heads[i as usize];
                json!({"chain": r.chain, "outcome": r.outcome, "attempts": r.attempts, "flags": r.flags})
            }
            ChainNode::Attempt(..) => panic!("no chain is expanded"),
        })
        .collect();
    let want: Vec<Value> = check_chains()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!({"chain": r["chain"], "outcome": r["outcome"], "attempts": r["attempts"], "flags": r["flags"]})
        })
        .collect();
    assert_eq!(shown, want);
    // and the whole rows, made on demand one chain at a time, and the summary are check's
    let mut whole = check_chains();
    let rows: Vec<Value> = (0..view.heads.len())
        .map(|i| {
            let (row, attempts) = view.chain(i).expect("every head has its chain");
            // every attempt of the chain, in chain order: the row's sources
            let sources: Vec<String> = attempts.iter().map(|a| a.source.to_string()).collect();
            assert_eq!(sources, row.sources, "{}", row.chain);
            serde_json::to_value(&row).unwrap()
        })
        .collect();
    assert_eq!(Value::Array(rows), whole["rows"]);
    let summary: Value = serde_json::to_value(&view.report).unwrap();
    whole["rows"] = json!([]);
    assert_eq!(summary, whole, "the view's report: the summary, no rows");
}

/// `verdict chains` where there is no capture at all fails as `check` does (exit 2, the
/// folders it searched), instead of reporting a workspace without chains.
#[test]
fn chains_without_captures_is_the_error_check_gives() {
    let tmp = tempfile::tempdir().unwrap();
    for cmd in ["chains", "check"] {
        let o = crate::common::verdict_in(tmp.path(), &[cmd]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(
            String::from_utf8_lossy(&o.stderr).starts_with("verdict: no captures found "),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
