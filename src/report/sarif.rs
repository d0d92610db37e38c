//! `--format sarif`: SARIF 2.1.0 (OASIS), one result per failing capture, located at the
//! capture file, line and column; `ruleId` is the reason code. Captures that pass are left
//! out; a result's `properties` carry the verdict's `repair` when it has one
//! (`docs/repairs.md`); a generation warning (`GENERATION_GAP`, `STRICT_VIOLATION`) is a `warning` result
//! located at the request that sent the schema (its file and line), pass or fail. In `check --schema` mode a result is located at its instance's first error (line and
//! column within the file). Results are streamed; the rule table follows them (JSON member order is free).
//! `message.text` is text a person reads (a code-scanning view): its control and invisible
//! characters are escaped as the human output escapes them (`go\u{200b}od`,
//! [`for_terminal`]); the other members are data, exact once read back, written through
//! [`crate::core::escape::JsonSafe`] (`docs/commands.md#untrusted-text`).
//! Schema: <https://json.schemastore.org/sarif-2.1.0.json>.

use crate::core::escape::for_terminal;
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

impl<W: Write> Sarif<W> {
    /// The index of rule `rule` in the rule table, added when new.
    fn rule(&mut self, rule: &str) -> usize {
        match self.rules.iter().position(|r| r == rule) {
            Some(i) => i,
            None => {
                self.rules.push(rule.to_owned());
                self.rules.len() - 1
            }
        }
    }

    /// Writes one result after the right separator (the document's head first).
    fn write(&mut self, result: &serde_json::Value) -> io::Result<()> {
        if self.first {
            self.out.write_all(
                b"{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n  \"runs\": [{\n    \"columnKind\": \"unicodeCodePoints\",\n    \"results\": [\n      ",
            )?;
            self.first = false;
        } else {
            self.out.write_all(b",\n      ")?;
        }
        serde_json::to_writer(&mut self.out, result).map_err(io::Error::from)
    }
}

impl<W: Write> Sink for Sarif<W> {
    fn item(&mut self, it: &Item) -> io::Result<()> {
        let v = &it.verdict;
        // about the request schema, whether the capture passes or not: at the request
        for (w, file, line) in crate::report::generation_warnings(it) {
            let result = json!({
                "ruleId": w.code,
                "ruleIndex": self.rule(&w.code),
                "level": "warning",
                "message": {"text": for_terminal(&format!("{}: {}", v.id, w.message))},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": file},
                    "region": {"startLine": line, "startColumn": 1}
                }}],
                "properties": {"id": v.id, "pointer": w.pointer, "capture": &*it.path,
                               "generation": v.generation}
            });
            self.write(&result)?;
        }
        if v.passes() {
            return Ok(());
        }
        let rule = rule_id(v);
        let index = self.rule(&rule);
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
            "message": {"text": for_terminal(&text)},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": &*it.path},
                "region": {"startLine": line, "startColumn": column}
            }}],
            "properties": {"id": v.id, "stage": v.stage, "decision": v.decision, "errors": v.errors}
        });
        let mut result = result;
        // the verdict's `repair` (`docs/repairs.md`), only where there is one
        if let Some(r) = &v.repair {
            result["properties"]["repair"] = json!(r);
        }
        self.write(&result)
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
