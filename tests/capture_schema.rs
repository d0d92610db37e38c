//! `docs/capture.schema.json` (the published JSON Schema of a capture record) must stay
//! in step with the loader (`src/core/capture.rs`): same keys, same enums, and the same
//! accept/reject answer on every sample record and on a set of hand-made edge cases.

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use verdict::core::adapter::{PROVIDERS, STATUSES};
use verdict::core::capture::{RECORD_KEYS, parse_record, read_file};
use verdict::core::verdict::{Decision, Stage};

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/capture.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn keys_and_enums_match_the_loader() {
    let s = schema();
    let keys: BTreeSet<String> = s["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, RECORD_KEYS.iter().map(|k| k.to_string()).collect());
    assert_eq!(
        strings(&s["properties"]["status"]["enum"]),
        STATUSES.iter().map(|k| k.to_string()).collect()
    );
    assert_eq!(
        strings(&s["properties"]["provider"]["enum"]),
        PROVIDERS.iter().map(|k| k.to_string()).collect()
    );
    let e = &s["properties"]["expect"]["properties"];
    assert_eq!(
        strings(&e["stage"]["enum"]),
        Stage::ALL.iter().map(|k| k.to_string()).collect()
    );
    assert_eq!(
        strings(&e["decision"]["enum"]),
        Decision::ALL.iter().map(|k| k.to_string()).collect()
    );
}

/// Whether the loader accepts the record as a record (adapter-level problems such as an
/// unknown `status` value are INVALID_CAPTURE too, so they are checked through the pipeline).
fn loader_accepts(record: &Value) -> bool {
    let text = record.to_string();
    let Ok(c) = parse_record(&text, &verdict::core::record_ref::RecordRef::new("x", None)) else {
        return false;
    };
    // `status` and `provider` values are checked by the response stage
    let status_ok = match &c.payload {
        verdict::core::capture::Payload::Output { status, .. } => {
            status.as_deref().is_none_or(|s| STATUSES.contains(&s))
        }
        _ => true,
    };
    let provider_ok = c.provider.as_deref().is_none_or(|p| PROVIDERS.contains(&p));
    status_ok && provider_ok
}

#[test]
fn samples_and_edge_cases_get_the_same_answer() {
    let validator = jsonschema::validator_for(&schema()).unwrap();
    let mut records: Vec<Value> = Vec::new();
    for ws in ["samples/refund/captures", "samples/providers/captures"] {
        let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(ws)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    for r in read_file(&p, "x", u64::MAX) {
                        records.push(serde_json::from_str(&r.text.unwrap()).unwrap());
                    }
                }
            }
        }
    }
    assert!(records.len() > 100, "{} sample records", records.len());
    let samples = records.len();
    records.extend([
        json!({"output": "{}"}),
        json!({"output": {"a": 1}, "status": "refusal", "status_detail": "x"}),
        json!({"output": "", "status_detail": 429}),
        json!({"response": {"object": "response"}, "provider": "openai-responses", "tool": "t"}),
        json!({"response": "event: message_start\ndata: {}\n\n"}),
        json!({"response": [], "id": "a", "contract": "c", "context": {}, "intent": {}, "meta": {}}),
        json!({"output": "x", "expect": {"stage": "ready", "decision": "ready-for-commit", "reason": null}}),
        json!({"output": "x", "chain": "r-1", "attempt": 2}),
        json!({"output": "x", "chain": "r-1", "attempt": 2.0}),
        json!({"output": "x", "chain": "r-1"}),
        // rejected by both
        json!({"output": "x", "chain": "r-1", "attempt": 0}),
        json!({"output": "x", "chain": "r-1", "attempt": -1}),
        json!({"output": "x", "chain": "r-1", "attempt": "2"}),
        json!({"output": "x", "chain": "r-1", "attempt": 1.5}),
        json!({"output": "x", "attempt": 1}),
        json!({"output": "x", "chain": ""}),
        json!({"output": "x", "chain": 7}),
        json!({"output": "x", "intnet": {}}),
        json!({"output": "x", "response": {}}),
        json!({}),
        json!({"response": 3}),
        json!({"response": {}, "status": "completed"}),
        json!({"output": "x", "provider": "gemini"}),
        json!({"output": "x", "status": "done"}),
        json!({"response": {}, "provider": "mistral"}),
        json!({"output": "x", "id": ""}),
        json!({"output": "x", "id": 7}),
        json!({"output": "x", "context": []}),
        json!({"output": "x", "expect": {"stage": "parsed"}}),
        json!({"output": "x", "expect": {"decision": "retry", "reasn": "X"}}),
        json!({"output": "x", "expect": {"reason": 3}}),
        json!({"output": "x", "tool": 1}),
        json!({"output": "x", "status_detail": true}),
    ]);
    for (i, r) in records.iter().enumerate() {
        let by_schema = validator.is_valid(r);
        let by_loader = loader_accepts(r);
        assert_eq!(
            by_schema,
            by_loader,
            "record {i} (sample: {}): schema says {by_schema}, loader says {by_loader}: {r}",
            i < samples
        );
    }
}
