//! Every capture under `samples/providers/captures` goes through the response stage
//! (the public adapter API) and must meet its `expect` there: a response- or input-stage
//! finding with the expected reason and decision, or, for a ready capture, a proposal that
//! is valid JSON meeting `samples/providers/schemas/ticket.schema.json`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use verdict::core::adapter::{Adapted, Proposal, adapt_output, adapt_response};

fn captures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            captures(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn read(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn run(record: &Value) -> Adapted {
    let s = |k: &str| record.get(k).and_then(Value::as_str);
    match record.get("response") {
        Some(r) => adapt_response(r, s("provider"), s("tool")),
        None => adapt_output(
            record.get("output").unwrap_or(&Value::Null),
            s("status"),
            s("status_detail"),
        ),
    }
}

#[test]
fn provider_samples_meet_their_expect() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/providers");
    let schema = read(&root.join("schemas/ticket.schema.json"));
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("schema: {e}"));
    let mut files = Vec::new();
    captures(&root.join("captures"), &mut files);
    files.sort();
    assert!(
        files.len() >= 70,
        "expected the provider samples, found {}",
        files.len()
    );
    let allowed = verdict::core::capture::RECORD_KEYS;
    for file in &files {
        let record = read(file);
        let obj = record
            .as_object()
            .unwrap_or_else(|| panic!("{}: not an object", file.display()));
        for k in obj.keys() {
            assert!(
                allowed.contains(&k.as_str()),
                "{}: unknown key {k}",
                file.display()
            );
        }
        let expect = &record["expect"];
        let adapted = run(&record);
        let stage = expect["stage"].as_str().unwrap_or_default();
        match stage {
            "ready" => {
                assert_eq!(expect["decision"], "ready-for-commit", "{}", file.display());
                assert!(expect["reason"].is_null(), "{}", file.display());
                let value = match &adapted.result {
                    Ok(Proposal::Text(t)) => serde_json::from_str(t).unwrap_or_else(|e| {
                        panic!("{}: proposal is not JSON: {e}: {t}", file.display())
                    }),
                    Ok(Proposal::Structured(v)) => v.clone(),
                    Err(f) => panic!("{}: expected ready, got {f:?}", file.display()),
                };
                let errors: Vec<String> = validator
                    .iter_errors(&value)
                    .map(|e| e.to_string())
                    .collect();
                assert!(errors.is_empty(), "{}: {errors:?}", file.display());
            }
            _ => {
                let f = adapted.result.as_ref().err().unwrap_or_else(|| {
                    panic!("{}: expected {stage}, got a proposal", file.display())
                });
                assert_eq!(f.stage.as_str(), stage, "{}: {}", file.display(), f.message);
                assert_eq!(
                    Some(f.decision.as_str()),
                    expect["decision"].as_str(),
                    "{}: {}",
                    file.display(),
                    f.message
                );
                assert_eq!(
                    Some(f.reason.as_str()),
                    expect["reason"].as_str(),
                    "{}: {}",
                    file.display(),
                    f.message
                );
            }
        }
        // the file lives in the folder of the adapter that read it
        let folder = file
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if stage != "input" {
            assert_eq!(adapted.info.provider, folder, "{}", file.display());
        }
        let is_stream = matches!(
            record.get("response"),
            Some(Value::Array(_) | Value::String(_))
        );
        assert_eq!(adapted.info.stream, is_stream, "{}", file.display());
    }
}
