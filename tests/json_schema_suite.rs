//! The official JSON-Schema-Test-Suite (drafts 4, 6, 7, 2019-09 and 2020-12, plus the format
//! tests of 7, 2019-09 and 2020-12 with format assertion on), run through the FULL capture
//! pipeline: every test's `data` becomes a capture record whose `output` is that value as
//! JSON text, so it passes the response, parse and schema stages exactly as a model's output
//! would. A valid instance must come out `ready`; an invalid one must fail at the schema
//! stage. The suite's files are vendored in `tests/fixtures/json-schema-test-suite/` (its
//! `SOURCE.md` names the upstream commit).

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use verdict::core::capture::RawRecord;
use verdict::core::config::{Config, Dialect};
use verdict::core::record_ref::RecordRef;
use verdict::core::verdict::Stage;
use verdict::core::workspace::Workspace;

/// Expected failures, as `folder/file :: group description`. Every one needs the suite's
/// remote documents (`http://localhost:1234/...`: a remote `$ref`, or a remote metaschema as
/// `$schema` in the vocabulary groups), which the fixtures do not ship and which verdict
/// never fetches: such a contract is a `CONTRACT_ERROR` naming the URI, by design (docs/README.md#workspace-layout).
/// The test fails if one of these starts passing, or if anything else fails.
const XFAIL: &[&str] = &[
    "draft2020-12/dynamicRef.json :: $ref and $dynamicAnchor are independent of order - $defs first",
    "draft2020-12/dynamicRef.json :: $ref and $dynamicAnchor are independent of order - $ref first",
    "draft2020-12/dynamicRef.json :: $ref to $dynamicRef finds detached $dynamicAnchor",
    "draft2020-12/dynamicRef.json :: strict-tree schema, guards against misspelled properties",
    "draft2020-12/dynamicRef.json :: tests for implementation dynamic anchor and reference link",
    "draft2020-12/refRemote.json :: $ref to $ref finds detached $anchor",
    "draft2020-12/refRemote.json :: Location-independent identifier in remote ref",
    "draft2020-12/refRemote.json :: anchor within remote ref",
    "draft2020-12/refRemote.json :: base URI change",
    "draft2020-12/refRemote.json :: base URI change - change folder",
    "draft2020-12/refRemote.json :: base URI change - change folder in subschema",
    "draft2020-12/refRemote.json :: fragment within remote ref",
    "draft2020-12/refRemote.json :: ref within remote ref",
    "draft2020-12/refRemote.json :: remote HTTP ref with different $id",
    "draft2020-12/refRemote.json :: remote HTTP ref with different URN $id",
    "draft2020-12/refRemote.json :: remote HTTP ref with nested absolute ref",
    "draft2020-12/refRemote.json :: remote ref",
    "draft2020-12/refRemote.json :: remote ref with ref to defs",
    "draft2020-12/refRemote.json :: retrieved nested refs resolve relative to their URI not $id",
    "draft2020-12/refRemote.json :: root ref in remote ref",
    "draft2020-12/vocabulary.json :: ignore unrecognized optional vocabulary",
    "draft2020-12/vocabulary.json :: schema that uses custom metaschema with with no validation vocabulary",
    "draft2019-09/refRemote.json :: $ref to $ref finds detached $anchor",
    "draft2019-09/refRemote.json :: Location-independent identifier in remote ref",
    "draft2019-09/refRemote.json :: anchor within remote ref",
    "draft2019-09/refRemote.json :: base URI change",
    "draft2019-09/refRemote.json :: base URI change - change folder",
    "draft2019-09/refRemote.json :: base URI change - change folder in subschema",
    "draft2019-09/refRemote.json :: fragment within remote ref",
    "draft2019-09/refRemote.json :: ref within remote ref",
    "draft2019-09/refRemote.json :: remote HTTP ref with different $id",
    "draft2019-09/refRemote.json :: remote HTTP ref with different URN $id",
    "draft2019-09/refRemote.json :: remote HTTP ref with nested absolute ref",
    "draft2019-09/refRemote.json :: remote ref",
    "draft2019-09/refRemote.json :: remote ref with ref to defs",
    "draft2019-09/refRemote.json :: retrieved nested refs resolve relative to their URI not $id",
    "draft2019-09/refRemote.json :: root ref in remote ref",
    "draft2019-09/vocabulary.json :: ignore unrecognized optional vocabulary",
    "draft2019-09/vocabulary.json :: schema that uses custom metaschema with with no validation vocabulary",
    "draft7/refRemote.json :: $ref to $ref finds location-independent $id",
    "draft7/refRemote.json :: Location-independent identifier in remote ref",
    "draft7/refRemote.json :: base URI change",
    "draft7/refRemote.json :: base URI change - change folder",
    "draft7/refRemote.json :: base URI change - change folder in subschema",
    "draft7/refRemote.json :: fragment within remote ref",
    "draft7/refRemote.json :: ref within remote ref",
    "draft7/refRemote.json :: remote ref",
    "draft7/refRemote.json :: remote ref with ref to definitions",
    "draft7/refRemote.json :: retrieved nested refs resolve relative to their URI not $id",
    "draft7/refRemote.json :: root ref in remote ref",
    "draft6/refRemote.json :: $ref to $ref finds location-independent $id",
    "draft6/refRemote.json :: Location-independent identifier in remote ref",
    "draft6/refRemote.json :: base URI change",
    "draft6/refRemote.json :: base URI change - change folder",
    "draft6/refRemote.json :: base URI change - change folder in subschema",
    "draft6/refRemote.json :: fragment within remote ref",
    "draft6/refRemote.json :: ref within remote ref",
    "draft6/refRemote.json :: remote ref",
    "draft6/refRemote.json :: remote ref with ref to definitions",
    "draft6/refRemote.json :: retrieved nested refs resolve relative to their URI not $id",
    "draft6/refRemote.json :: root ref in remote ref",
    "draft4/refRemote.json :: Location-independent identifier in remote ref",
    "draft4/refRemote.json :: base URI change",
    "draft4/refRemote.json :: base URI change - change folder",
    "draft4/refRemote.json :: base URI change - change folder in subschema",
    "draft4/refRemote.json :: fragment within remote ref",
    "draft4/refRemote.json :: ref within remote ref",
    "draft4/refRemote.json :: remote ref",
    "draft4/refRemote.json :: root ref in remote ref",
];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/json-schema-test-suite")
}

#[derive(Default)]
struct Outcome {
    cases: usize,
    failures: Vec<String>,
    failed_groups: BTreeSet<String>,
}

fn run_dir(sub: &str, dialect: Dialect, format_assertion: bool) -> Outcome {
    let dir = suite_dir().join(sub);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Outcome::default();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for group in groups {
            let key = format!("{sub}/{name} :: {}", group["description"].as_str().unwrap());
            let tmp = tempfile::tempdir().unwrap();
            std::fs::create_dir(tmp.path().join("schemas")).unwrap();
            std::fs::write(
                tmp.path().join("schemas/s.json"),
                group["schema"].to_string(),
            )
            .unwrap();
            let config = Config {
                dialect,
                format_assertion,
                ..Config::default()
            };
            let ws = Workspace::with_config(tmp.path(), config);
            for (i, test) in group["tests"].as_array().unwrap().iter().enumerate() {
                out.cases += 1;
                let record = json!({"id": format!("t{i}"), "output": test["data"].to_string()});
                let raw = RawRecord::json(
                    RecordRef::new(format!("t{i}"), None),
                    Ok(record.to_string()),
                );
                let v = ws.check(&raw);
                let valid = test["valid"].as_bool().unwrap();
                let ok = if valid {
                    v.stage == Stage::Ready
                } else {
                    v.stage == Stage::Schema
                };
                if ok {
                    continue;
                }
                let first = v
                    .errors
                    .first()
                    .map(|e| e.message.clone())
                    .unwrap_or_default();
                let remote = v.stage == Stage::Input && first.contains("http://localhost:1234/");
                if remote && XFAIL.contains(&key.as_str()) {
                    out.failed_groups.insert(key.clone());
                    continue;
                }
                out.failures.push(format!(
                    "{key} :: {}: expected {}, got {} {:?}: {first}",
                    test["description"].as_str().unwrap_or("?"),
                    if valid { "ready" } else { "a schema failure" },
                    v.stage,
                    v.reason.as_ref().map(|r| r.as_str()),
                ));
            }
        }
    }
    out
}

fn check(sub: &str, dialect: Dialect, format_assertion: bool, min_cases: usize) {
    let o = run_dir(sub, dialect, format_assertion);
    assert!(o.cases >= min_cases, "{sub}: only {} cases ran", o.cases);
    assert!(
        o.failures.is_empty(),
        "{sub}: {} of {} cases failed:\n{}",
        o.failures.len(),
        o.cases,
        o.failures.join("\n")
    );
    let stale: Vec<&&str> = XFAIL
        .iter()
        .filter(|x| x.starts_with(&format!("{sub}/")) && !x[sub.len() + 1..].contains('/'))
        .filter(|x| !o.failed_groups.contains(**x))
        .collect();
    assert!(
        stale.is_empty(),
        "{sub}: these expected failures now pass; remove them from XFAIL: {stale:?}"
    );
    eprintln!(
        "{sub}: {} cases, {} expected-failure groups",
        o.cases,
        o.failed_groups.len()
    );
}

#[test]
fn draft2020_12() {
    check("draft2020-12", Dialect::Draft202012, false, 1200);
}

#[test]
fn draft2019_09() {
    check("draft2019-09", Dialect::Draft201909, false, 1200);
}

#[test]
fn draft7() {
    check("draft7", Dialect::Draft7, false, 900);
}

#[test]
fn draft6() {
    check("draft6", Dialect::Draft6, false, 800);
}

#[test]
fn draft4() {
    check("draft4", Dialect::Draft4, false, 600);
}

#[test]
fn draft2020_12_formats_asserted() {
    check(
        "draft2020-12/optional/format",
        Dialect::Draft202012,
        true,
        700,
    );
}

#[test]
fn draft2019_09_formats_asserted() {
    check(
        "draft2019-09/optional/format",
        Dialect::Draft201909,
        true,
        700,
    );
}

#[test]
fn draft7_formats_asserted() {
    check("draft7/optional/format", Dialect::Draft7, true, 600);
}
