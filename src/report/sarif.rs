//! `--format sarif`: SARIF 2.1.0 (OASIS), one result per failing capture, located at the
//! capture file, line and column; `ruleId` is the reason code. Captures that pass are left
//! out. In `check --schema` mode a result is located at its instance's first error (line and
//! column within the file). Results are streamed; the rule table follows them (JSON member order is free).
//! Schema: <https://json.schemastore.org/sarif-2.1.0.json>.

use crate::core::summary::Summary;
use crate::core::verdict::Decision;
use crate::report::{Item, Sink, expect_mismatch, headline, rule_id};
use serde_json::json;
use std::io::{self, Write};

/// `--format sarif`.
pub struct Sarif<W: Write> {
    out: W,
    rules: Vec<String>,
    first: bool,
    instances: bool,
}

impl<W: Write> Sarif<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        Sarif {
            out,
            rules: Vec::new(),
            first: true,
            instances: false,
        }
    }

    /// `check --schema`: results are located at their instance's first error.
    pub fn instances(mut self, on: bool) -> Self {
        self.instances = on;
        self
    }
}

impl<W: Write> Sink for Sarif<W> {
    fn item(&mut self, it: &Item) -> io::Result<()> {
        let v = &it.verdict;
        if v.passes() {
            return Ok(());
        }
        let rule = rule_id(v);
        let index = match self.rules.iter().position(|r| *r == rule) {
            Some(i) => i,
            None => {
                self.rules.push(rule.clone());
                self.rules.len() - 1
            }
        };
        let level = match v.decision {
            Decision::Retry => "warning",
            Decision::ReadyForCommit => "note",
            _ => "error",
        };
        let mut text = format!("{} [{} {}]: {}", v.id, v.stage, v.decision, headline(v));
        if let Some(m) = expect_mismatch(v) {
            text = format!("{text} ({m})");
        }
        let (line, column) = crate::report::github::location(it, self.instances);
        let result = json!({
            "ruleId": rule,
            "ruleIndex": index,
            "level": level,
            "message": {"text": text},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": &*it.path},
                "region": {"startLine": line, "startColumn": column}
            }}],
            "properties": {"id": v.id, "stage": v.stage, "decision": v.decision, "errors": v.errors}
        });
        if self.first {
            self.out.write_all(
                b"{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n  \"runs\": [{\n    \"columnKind\": \"unicodeCodePoints\",\n    \"results\": [\n      ",
            )?;
            self.first = false;
        } else {
            self.out.write_all(b",\n      ")?;
        }
        serde_json::to_writer(&mut self.out, &result).map_err(io::Error::from)
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        if self.first {
            self.out.write_all(
                b"{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n  \"runs\": [{\n    \"columnKind\": \"unicodeCodePoints\",\n    \"results\": [",
            )?;
        }
        let tool = json!({"driver": {
            "name": "verdict",
            "version": env!("CARGO_PKG_VERSION"),
            "rules": self.rules.iter().map(|r| json!({"id": r, "shortDescription": {"text": r}})).collect::<Vec<_>>()
        }});
        write!(self.out, "\n    ],\n    \"tool\": ")?;
        serde_json::to_writer(&mut self.out, &tool)?;
        writeln!(self.out, "\n  }}]\n}}")
    }
}
