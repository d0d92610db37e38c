//! Repairs (`docs/repairs.md`): `samples/refund`'s repairable captures with their repair,
//! would-be outcome and the rates in every front end (the library, `check` json and human,
//! `watch --json`), `[repairs] allow` (and its error, exit 2), and `feedback`'s note.

use crate::common::{self, verdict, verdict_in};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

fn refund() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/refund"))
}

/// The four repairable captures of `samples/refund`, each made ready by its repair.
const REPAIRABLE: [(&str, &str); 4] = [
    ("trailing-prose", "drop-trailing"),
    ("fenced-json", "strip-fence"),
    ("amount-as-string", "unquote-number"),
    ("extra-field-approved", "drop-unknown"),
];

fn ready() -> Value {
    json!({"stage": "ready", "decision": "ready-for-commit", "reason": null})
}

/// The summary's `rates` of `samples/refund`.
fn refund_rates() -> Value {
    let per = |repair: &str, count: u64, rate: f64| json!({"repair": repair, "count": count, "of": 24, "rate": rate, "not_ready": 0});
    json!({
        "parse_success": {"count": 15, "of": 21, "rate": 0.7143},
        "schema_pass": {"count": 9, "of": 15, "rate": 0.6},
        "repairable": {"count": 4, "of": 24, "rate": 0.1667},
        "by_repair": [
            per("strip-fence", 1, 0.0417),
            per("drop-trailing", 1, 0.0417),
            per("unquote-number", 1, 0.0417),
            per("enum-case", 0, 0.0),
            per("drop-unknown", 1, 0.0417),
            per("decode-string", 0, 0.0),
        ]
    })
}

#[test]
fn the_refund_sample_reports_its_repairable_captures_and_keeps_their_verdicts() {
    let all = common::verdicts(refund());
    assert_eq!(all.len(), 25);
    let mut repaired: Vec<(String, String, Value)> = all
        .iter()
        .filter_map(|v| {
            let r = v.repair.as_ref()?;
            Some((
                v.id.clone(),
                r.name.to_string(),
                serde_json::to_value(&r.would_be).unwrap(),
            ))
        })
        .collect();
    repaired.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want: Vec<(String, String, Value)> = REPAIRABLE
        .iter()
        .map(|(id, r)| (id.to_string(), r.to_string(), ready()))
        .collect();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(repaired, want);
    // each keeps its own stage, decision and reason, and meets its expect
    for v in all.iter().filter(|v| v.repair.is_some()) {
        assert!(v.expect.as_ref().unwrap().met, "{}", v.id);
        assert_eq!(v.decision.as_str(), "regenerate", "{}", v.id);
    }
    // what is never repaired: a truncated document, a refusal, a missing key
    for id in [
        "truncated-text",
        "truncated-max-tokens",
        "refusal",
        "missing-expected-version",
        "broken-json-missing-comma",
        "duplicate-key",
    ] {
        let v = all.iter().find(|v| v.id == id).unwrap();
        assert_eq!(v.repair, None, "{id}");
    }
}

#[test]
fn check_json_and_human_carry_the_repairs_and_the_rates() {
    let o = verdict(&["check", "samples/refund", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["summary"]["rates"], refund_rates());
    for v in doc["verdicts"].as_array().unwrap() {
        let id = v["id"].as_str().unwrap();
        match REPAIRABLE.iter().find(|(i, _)| *i == id) {
            Some((_, name)) => assert_eq!(
                v["repair"],
                json!({"name": name, "would_be": ready()}),
                "{id}"
            ),
            None => assert!(v.get("repair").is_none(), "{id}: {v}"),
        }
    }
    // jsonl: the same summary
    let o = verdict(&["check", "samples/refund", "--format", "jsonl"]);
    let text = String::from_utf8(o.stdout).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["data"]["rates"], refund_rates());
    // human: a repair line under the verdict, before its findings (docs/commands.md#check);
    // the rates after the funnel
    let o = verdict(&["check", "samples/refund", "--color", "never"]);
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("  fenced-json  "))
        .unwrap();
    assert_eq!(
        lines[at..at + 4],
        [
            "  ✗ FENCED_JSON  fenced-json  regenerate  captures/cases.jsonl:6  (as expected)",
            "      repair: would pass after `strip-fence` (not applied)",
            "      2:1  the JSON value is wrapped in a markdown code fence: expected the text to start with the value, found \"```json\"",
            "",
        ]
    );
    assert!(
        lines.contains(&"rates: parse success 71.4% (15 of 21 completed), schema pass 60.0% (9 of 15 parsed), repairable 16.7% (4 of 24 failing)"),
        "{text}"
    );
}

#[test]
fn watch_summary_lines_carry_the_same_rates() {
    let (_tmp, ws) = common::refund_copy();
    let w = common::watch::WatchJson::start(&ws, &[]);
    let first = w.batch("the first pass", Duration::from_secs(60));
    let summary = first.last().unwrap();
    assert_eq!(summary["data"]["rates"], refund_rates());
    let fenced = first
        .iter()
        .find(|l| l["type"] == "verdict" && l["data"]["id"] == "fenced-json")
        .unwrap();
    assert_eq!(
        fenced["data"]["repair"],
        json!({"name": "strip-fence", "would_be": ready()})
    );
    // allowing only drop-unknown: the other three are no longer repairable
    std::fs::write(
        ws.join("verdict.toml"),
        "default_contract = \"refund-v1\"\n[repairs]\nallow = [\"drop-unknown\"]\n",
    )
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let batch = w.batch("the config change", Duration::from_secs(60));
        let s = &batch.last().unwrap()["data"]["rates"];
        if s["repairable"]["count"] == 1 {
            assert_eq!(
                s["repairable"],
                json!({"count": 1, "of": 24, "rate": 0.0417})
            );
            assert_eq!(s["by_repair"][4]["count"], 1);
            assert_eq!(s["by_repair"][0]["count"], 0);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{batch:?}");
    }
}

#[test]
fn an_unknown_repair_in_allow_stops_the_run_naming_the_key_and_the_repairs() {
    let (_tmp, ws) = common::refund_copy();
    std::fs::write(
        ws.join("verdict.toml"),
        "default_contract = \"refund-v1\"\n[repairs]\nallow = [\"strip-fences\"]\n",
    )
    .unwrap();
    let o = verdict_in(&ws, &["check", "."]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("[repairs] `allow`: unknown repair \"strip-fences\" (did you mean `strip-fence`?); repairs: strip-fence, drop-trailing, unquote-number, enum-case, drop-unknown, decode-string (docs/repairs.md)"),
        "{err}"
    );
}

#[test]
fn feedback_names_the_repair_apart_from_the_models_message() {
    let o = verdict(&["feedback", "amount-as-string", "samples/refund"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        !out.contains("repair"),
        "the model's message is unchanged: {out}"
    );
    assert_eq!(
        err.trim_end(),
        "Note for the loop's author: the `unquote-number` repair would make this output pass every stage. It was not applied: the verdict stands. Change the contract or the prompt so the model meets the contract as written, rather than adding a repair step; a repair that is allowed silently hides a generator that keeps breaking its contract (docs/repairs.md)."
    );
    let o = verdict(&["feedback", "fenced-json", "samples/refund", "-f", "json"]);
    let fb: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        fb["repair"],
        json!({"name": "strip-fence", "would_be": ready()})
    );
    assert!(
        fb["repair_advice"]
            .as_str()
            .unwrap()
            .starts_with("Note for the loop's author: the `strip-fence` repair would make this output pass every stage."),
        "{fb}"
    );
    // no repair, no note
    let o = verdict(&[
        "feedback",
        "missing-expected-version",
        "samples/refund",
        "-f",
        "json",
    ]);
    let fb: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        fb.get("repair").is_none() && fb.get("repair_advice").is_none(),
        "{fb}"
    );
}

#[test]
fn sarif_github_and_junit_carry_the_repair_of_a_failing_capture() {
    // without the samples' `expect`, the repairable captures fail the run
    let (_tmp, ws) = common::refund_copy();
    let cases = std::fs::read_to_string(ws.join("captures/cases.jsonl")).unwrap();
    let line = cases
        .lines()
        .find(|l| l.contains("\"id\": \"fenced-json\""))
        .unwrap();
    let mut rec: Value = serde_json::from_str(line).unwrap();
    rec.as_object_mut().unwrap().remove("expect");
    std::fs::remove_dir_all(ws.join("captures")).unwrap();
    std::fs::create_dir_all(ws.join("captures")).unwrap();
    std::fs::write(ws.join("captures/f.json"), rec.to_string()).unwrap();
    let o = verdict_in(&ws, &["check", "--format", "sarif", "."]);
    assert_eq!(o.status.code(), Some(1));
    let sarif: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        sarif["runs"][0]["results"][0]["properties"]["repair"],
        json!({"name": "strip-fence", "would_be": ready()})
    );
    let o = verdict_in(&ws, &["check", "--format", "github", "."]);
    let text = String::from_utf8(o.stdout).unwrap();
    let error = text.lines().find(|l| l.starts_with("::error")).unwrap();
    assert!(
        error.ends_with("; repair: would pass after `strip-fence` (not applied)"),
        "{error}"
    );
    let o = verdict_in(&ws, &["check", "--format", "junit", "."]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("repair: would pass after `strip-fence` (not applied)&#10;</failure>"),
        "{text}"
    );
}
