//! `--format sarif`: SARIF 2.1.0 (OASIS), one result per failing capture, located at the
//! capture file, line and column; `ruleId` is the reason code. Captures that pass are left
//! out. Schema: <https://json.schemastore.org/sarif-2.1.0.json>.

use crate::core::verdict::Decision;
use crate::report::{Item, expect_mismatch, headline};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{self, Write};

/// Writes the SARIF log.
pub fn write(out: &mut dyn Write, items: &[Item]) -> io::Result<()> {
    let failing: Vec<&Item> = items.iter().filter(|i| !i.verdict.passes()).collect();
    let rules: BTreeSet<String> = failing
        .iter()
        .map(|i| {
            i.verdict
                .reason
                .as_ref()
                .map_or("READY".into(), |r| r.to_string())
        })
        .collect();
    let results: Vec<Value> = failing
        .iter()
        .map(|it| {
            let v = &it.verdict;
            let rule = v.reason.as_ref().map_or("READY".into(), |r| r.to_string());
            let level = match v.decision {
                Decision::Retry => "warning",
                Decision::ReadyForCommit => "note",
                _ => "error",
            };
            let mut text = format!("{} [{} {}]: {}", v.id, v.stage, v.decision, headline(v));
            if let Some(m) = expect_mismatch(v) {
                text = format!("{text} ({m})");
            }
            let index = rules.iter().position(|r| *r == rule).unwrap_or(0);
            json!({
                "ruleId": rule,
                "ruleIndex": index,
                "level": level,
                "message": {"text": text},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": it.path},
                    "region": {"startLine": it.line, "startColumn": it.column}
                }}],
                "properties": {"id": v.id, "stage": v.stage, "decision": v.decision, "errors": v.errors}
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "verdict",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules.iter().map(|r| json!({"id": r, "shortDescription": {"text": r}})).collect::<Vec<_>>()
            }},
            "columnKind": "unicodeCodePoints",
            "results": results
        }]
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
