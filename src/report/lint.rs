//! Report formats of `verdict lint`: human, json, sarif, github (`docs/commands.md`). Every format
//! prints the same findings, in reading order per schema file.

use crate::core::lint::{LintFinding, Severity, codes};
use crate::core::text::escape_control;
use crate::core::verdict::LineCol;
use crate::report::github::{data, property};
use serde_json::{Value, json};
use std::io::{self, Write};

/// Counts by severity, and the number of schema files linted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LintSummary {
    /// Schema files linted.
    pub schemas: usize,
    /// Error-level findings.
    pub errors: usize,
    /// Warning-level findings.
    pub warnings: usize,
    /// Info-level findings.
    pub info: usize,
}

impl LintSummary {
    /// Counts `findings` over `schemas` files.
    pub fn of(schemas: usize, findings: &[LintFinding]) -> LintSummary {
        let n = |s| findings.iter().filter(|f| f.severity == s).count();
        LintSummary {
            schemas,
            errors: n(Severity::Error),
            warnings: n(Severity::Warning),
            info: n(Severity::Info),
        }
    }

    /// `2 errors, 1 warning, 0 info in 3 schemas`.
    pub fn line(&self) -> String {
        let pl = |n: usize, w: &str| {
            if n == 1 {
                format!("{n} {w}")
            } else {
                format!("{n} {w}s")
            }
        };
        format!(
            "{}, {}, {} info in {}",
            pl(self.errors, "error"),
            pl(self.warnings, "warning"),
            self.info,
            pl(self.schemas, "schema")
        )
    }
}

/// `file:line:col: severity[CODE] /pointer: message`, the hint indented below, then the summary.
pub fn human(
    out: &mut dyn Write,
    findings: &[LintFinding],
    summary: &LintSummary,
    color: bool,
) -> io::Result<()> {
    for f in findings {
        let sev = match (color, f.severity) {
            (false, s) => s.to_string(),
            (true, Severity::Error) => "\x1b[31merror\x1b[0m".into(),
            (true, Severity::Warning) => "\x1b[33mwarning\x1b[0m".into(),
            (true, Severity::Info) => "\x1b[36minfo\x1b[0m".into(),
        };
        // a pointer is into a schema: a rules file's finding has none to show
        let ptr = match f.pointer.as_str() {
            "" if f.file.ends_with(".rules.toml") => String::new(),
            "" => " (root):".to_string(),
            p => format!(" {}:", escape_control(p)),
        };
        writeln!(
            out,
            "{}: {sev}[{}]{ptr} {}",
            escape_control(&f.place()),
            f.code,
            escape_control(&f.message)
        )?;
        if let Some(h) = &f.hint {
            writeln!(out, "    hint: {}", escape_control(h))?;
        }
    }
    writeln!(out, "{}", summary.line())
}

/// `{"summary": {...}, "findings": [...]}`.
pub fn json(
    out: &mut dyn Write,
    findings: &[LintFinding],
    summary: &LintSummary,
) -> io::Result<()> {
    serde_json::to_writer_pretty(
        &mut *out,
        &json!({"summary": summary, "findings": findings}),
    )?;
    writeln!(out)
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// SARIF 2.1.0: one result per finding, `ruleId` the code, located at file, line, column.
pub fn sarif(out: &mut dyn Write, findings: &[LintFinding]) -> io::Result<()> {
    let rules: Vec<&str> = codes::ALL
        .iter()
        .copied()
        .filter(|c| findings.iter().any(|f| f.code == *c))
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let at = f.at.map_or((1, 1), |a| (a.line, a.column));
            let text = match &f.hint {
                Some(h) => format!("{} ({h})", f.message),
                None => f.message.clone(),
            };
            json!({
                "ruleId": f.code,
                "ruleIndex": rules.iter().position(|r| *r == f.code).unwrap_or(0),
                "level": sarif_level(f.severity),
                "message": {"text": text},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f.file},
                    "region": {"startLine": at.0, "startColumn": at.1}
                }}],
                "properties": {"pointer": f.pointer}
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "verdict lint",
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

/// One lint finding as a GitHub Actions annotation:
/// `::CMD file=FILE,line=L,col=C,title=CODE::POINTER: MESSAGE`, `CMD` from the severity
/// (`error`, `warning`; `info` is a `notice`), at 1:1 when the finding has no position,
/// `(root)` for the empty pointer. `message` already carries the hint. Shared by
/// `lint --format github` and `check --format github` (a contract's findings that ride on
/// its verdicts).
pub(crate) fn github_annotation(
    out: &mut dyn Write,
    severity: &str,
    file: &str,
    at: Option<LineCol>,
    code: &str,
    pointer: &str,
    message: &str,
) -> io::Result<()> {
    let cmd = match severity {
        "error" => "error",
        "info" => "notice",
        _ => "warning",
    };
    let at = at.map_or((1, 1), |a| (a.line, a.column));
    let pointer = if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    };
    writeln!(
        out,
        "::{cmd} file={},line={},col={},title={}::{}",
        property(&escape_control(file)),
        at.0,
        at.1,
        property(code),
        data(&escape_control(&format!("{pointer}: {message}")))
    )
}

/// GitHub Actions annotations: `::error` / `::warning` / `::notice` per finding, then a
/// summary notice (escaping as the Actions toolkit does).
pub fn github(
    out: &mut dyn Write,
    findings: &[LintFinding],
    summary: &LintSummary,
) -> io::Result<()> {
    for f in findings {
        let mut msg = f.message.clone();
        if let Some(h) = &f.hint {
            msg = format!("{msg} ({h})");
        }
        github_annotation(
            out,
            f.severity.as_str(),
            &f.file,
            f.at,
            &f.code,
            &f.pointer,
            &msg,
        )?;
    }
    writeln!(
        out,
        "::notice title=verdict lint::{}",
        data(&summary.line())
    )
}
