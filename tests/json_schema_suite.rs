//! The official JSON-Schema-Test-Suite (draft 7 and 2020-12, plus the 2020-12 and draft-7
//! format tests with format assertion on), run through the FULL capture pipeline: every
//! test's `data` becomes a capture record whose `output` is that value as JSON text, so it
//! passes the response, parse and schema stages exactly as a model's output would.
//! A valid instance must come out `ready`; an invalid one must fail at the schema stage.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use verdict::core::capture::RawRecord;
use verdict::core::config::{Config, Dialect};
use verdict::core::verdict::Stage;
use verdict::core::workspace::Workspace;

/// Expected failures, as `file :: group description`. Each needs the suite's remote
/// documents (`http://localhost:1234/...`), which are not shipped with the fixtures and
/// which verdict never fetches: such a contract is `CONTRACT_ERROR` by design (DESIGN 2).
const XFAIL: &[&str] = &[];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/json-schema-test-suite")
}

fn needs_remote(schema: &Value) -> bool {
    schema.to_string().contains("localhost:1234")
}

struct Outcome {
    cases: usize,
    failures: Vec<String>,
    remote_skipped: usize,
}

fn run_dir(dir: &Path, dialect: Dialect, format_assertion: bool) -> Outcome {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Outcome {
        cases: 0,
        failures: Vec::new(),
        remote_skipped: 0,
    };
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for group in groups {
            let desc = group["description"].as_str().unwrap_or("?").to_string();
            let key = format!("{name} :: {desc}");
            let schema = &group["schema"];
            if needs_remote(schema) {
                // Remote documents are not available offline: the contract must be a
                // CONTRACT_ERROR that names the URI, never a silent pass.
                let tmp = tempfile::tempdir().unwrap();
                std::fs::create_dir(tmp.path().join("schemas")).unwrap();
                std::fs::write(tmp.path().join("schemas/s.json"), schema.to_string()).unwrap();
                let ws = Workspace::with_config(
                    tmp.path(),
                    Config {
                        dialect,
                        format_assertion,
                        ..Config::default()
                    },
                );
                let c = ws.contracts.get("s").unwrap();
                match &c.compiled {
                    Err(errs) => assert!(
                        errs[0].message.contains("localhost:1234"),
                        "{key}: remote ref error does not name the URI: {}",
                        errs[0].message
                    ),
                    Ok(_) => {} // refs that are declared but never reached compile fine
                }
                out.remote_skipped += 1;
                continue;
            }
            let tmp = tempfile::tempdir().unwrap();
            std::fs::create_dir(tmp.path().join("schemas")).unwrap();
            std::fs::write(tmp.path().join("schemas/s.json"), schema.to_string()).unwrap();
            let ws = Workspace::with_config(
                tmp.path(),
                Config {
                    dialect,
                    format_assertion,
                    ..Config::default()
                },
            );
            for (i, test) in group["tests"].as_array().unwrap().iter().enumerate() {
                out.cases += 1;
                let record = json!({"id": format!("t{i}"), "output": test["data"].to_string()});
                let raw = RawRecord {
                    source: format!("t{i}"),
                    file: "t".into(),
                    line: None,
                    text: Ok(record.to_string()),
                };
                let v = ws.check(&raw);
                let valid = test["valid"].as_bool().unwrap();
                let ok = if valid {
                    v.stage == Stage::Ready
                } else {
                    v.stage == Stage::Schema
                };
                let tkey = format!("{key} :: {}", test["description"].as_str().unwrap_or("?"));
                if !ok && !XFAIL.contains(&key.as_str()) {
                    out.failures.push(format!(
                        "{tkey}: expected {}, got {} {:?}: {}",
                        if valid { "ready" } else { "schema failure" },
                        v.stage,
                        v.reason,
                        v.errors.first().map(|e| e.message.as_str()).unwrap_or("")
                    ));
                }
            }
        }
    }
    out
}

fn check(sub: &str, dialect: Dialect, format_assertion: bool, min_cases: usize) {
    let o = run_dir(&suite_dir().join(sub), dialect, format_assertion);
    assert!(o.cases >= min_cases, "{sub}: only {} cases ran", o.cases);
    assert!(
        o.failures.is_empty(),
        "{sub}: {} of {} cases failed:\n{}",
        o.failures.len(),
        o.cases,
        o.failures.join("\n")
    );
    eprintln!(
        "{sub}: {} cases passed, {} groups need remote documents",
        o.cases, o.remote_skipped
    );
}

#[test]
fn draft2020_12() {
    check("draft2020-12", Dialect::Draft202012, false, 1000);
}

#[test]
fn draft7() {
    check("draft7", Dialect::Draft7, false, 800);
}

#[test]
fn draft2020_12_formats_asserted() {
    check(
        "draft2020-12/optional/format",
        Dialect::Draft202012,
        true,
        300,
    );
}

#[test]
fn draft7_formats_asserted() {
    check("draft7/optional/format", Dialect::Draft7, true, 300);
}
