//! Report formats of `verdict lint`: human, json, sarif, github (`docs/commands.md`). Every format
//! prints the same findings, in reading order per schema file.

use crate::core::drift::{REQUEST_LOOSER, Variant};
use crate::core::lint::{LintFinding, Severity, codes};
use crate::core::text::escape_control;
use crate::core::verdict::LineCol;
use crate::report::github::{data, property};
use serde_json::{Value, json};
use std::io::{self, Write};

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One variant of the drift report as `lint` prints it (`docs/requests.md#the-drift-report`):
/// the variant, and the file and line of its first capture's request as the user can open it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DriftVariant {
    /// The variant.
    #[serde(flatten)]
    pub variant: Variant,
    /// The file holding the first capture's request (the input file, or the capture's own
    /// file for a `record` or `echo` request), as shown.
    pub file: String,
    /// Its 1-based line, in a log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl DriftVariant {
    /// The variant `v`, its request's file shown by `show` (given the workspace-relative name).
    pub fn new(v: Variant, show: &dyn Fn(&str) -> String) -> DriftVariant {
        let at = match v.request.as_str() {
            "record" | "echo" => crate::core::record_ref::RecordRef::parse(&v.first_source),
            r => crate::core::record_ref::RecordRef::parse(r),
        };
        DriftVariant {
            file: show(at.file()),
            line: at.line(),
            variant: v,
        }
    }

    /// Its findings as lint findings located at the request (file, line; the pointer into
    /// the request's record): `REQUEST_LOOSER` a warning, the others info.
    pub fn lint_findings(&self) -> Vec<LintFinding> {
        let v = &self.variant;
        let n = v.captures;
        v.findings
            .iter()
            .map(|f| LintFinding {
                code: f.code.to_owned(),
                severity: if f.code == REQUEST_LOOSER {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                file: self.file.clone(),
                pointer: format!("{}{}", v.pointer, f.pointer),
                at: self.line.map(|l| LineCol {
                    line: l as u32,
                    column: 1,
                }),
                message: format!(
                    "the {} sent to {n} capture{} (variant {}) against contract {}: {}",
                    crate::core::generation::describe(&v.schema, v.source),
                    if n == 1 { "" } else { "s" },
                    v.hash,
                    crate::core::escape::quote(&v.contract, 80),
                    f.message
                ),
                hint: None,
            })
            .collect()
    }
}

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
    /// Drift report: request schema variants (left out when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub variants: usize,
    /// Drift report: findings over every variant (left out when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub drift: usize,
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
            variants: 0,
            drift: 0,
        }
    }

    /// The same counts with the drift report's.
    pub fn with_drift(mut self, drift: &[DriftVariant]) -> LintSummary {
        self.variants = drift.len();
        self.drift = drift.iter().map(|d| d.variant.findings.len()).sum();
        self
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
        let mut line = format!(
            "{}, {}, {} info in {}",
            pl(self.errors, "error"),
            pl(self.warnings, "warning"),
            self.info,
            pl(self.schemas, "schema")
        );
        if self.variants > 0 {
            line.push_str(&format!(
                "; {} in {}",
                pl(self.drift, "drift finding"),
                pl(self.variants, "request schema variant")
            ));
        }
        line
    }
}

/// `file:line:col: severity[CODE] /pointer: message`, the hint indented below, then the
/// drift report (each variant: where its first request is, the contract, the captures, its
/// findings), then the summary.
pub fn human(
    out: &mut dyn Write,
    findings: &[LintFinding],
    drift: &[DriftVariant],
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
    human_drift(out, drift, color)?;
    writeln!(out, "{}", summary.line())
}

/// The drift report's human block.
fn human_drift(out: &mut dyn Write, drift: &[DriftVariant], color: bool) -> io::Result<()> {
    let e = |s: &str| escape_control(s).into_owned();
    for (i, d) in drift.iter().enumerate() {
        let v = &d.variant;
        let same: Vec<usize> = drift
            .iter()
            .enumerate()
            .filter(|(_, o)| o.variant.contract == v.contract && o.variant.schema == v.schema)
            .map(|(j, _)| j)
            .collect();
        let of = match same.iter().position(|j| *j == i) {
            Some(k) if same.len() > 1 => format!(" (variant {} of {})", k + 1, same.len()),
            _ => String::new(),
        };
        let place = match d.line {
            Some(l) => format!("{}:{l}", d.file),
            None => d.file.clone(),
        };
        let head = format!("drift[{}]", v.contract);
        let head = if color {
            format!("\x1b[1m{}\x1b[0m", e(&head))
        } else {
            e(&head)
        };
        writeln!(
            out,
            "{}: {head} the {}{of} sent to {} vs contract {} ({})",
            e(&place),
            e(&crate::core::generation::describe(&v.schema, v.source)),
            pl_captures(v.captures),
            e(&v.contract),
            e(&v.contract_file),
        )?;
        let mut ids: Vec<String> = v.ids.iter().take(10).map(|i| e(i)).collect();
        if v.captures > ids.len() {
            ids.push(format!("and {} more", v.captures - ids.len()));
        }
        writeln!(
            out,
            "    variant {}{}; request {} {}{}; captures: {}",
            v.hash,
            if v.strict { " (strict)" } else { "" },
            e(&v.request),
            e(&v.pointer),
            v.profile
                .as_deref()
                .map(|p| format!("; profile {p}"))
                .unwrap_or_default(),
            ids.join(", ")
        )?;
        if v.findings.is_empty() {
            writeln!(
                out,
                "    no drift: the sent schema has the server contract's constraints"
            )?;
        }
        for f in &v.findings {
            let sev = if f.code == REQUEST_LOOSER {
                "warning"
            } else {
                "info"
            };
            let sev = match (color, sev) {
                (false, s) => s.to_owned(),
                (true, "warning") => "\x1b[33mwarning\x1b[0m".into(),
                (true, s) => format!("\x1b[36m{s}\x1b[0m"),
            };
            let ptr = if f.pointer.is_empty() {
                "(root)".to_owned()
            } else {
                e(&f.pointer)
            };
            writeln!(out, "    {sev}[{}] {ptr}: {}", f.code, e(&f.message))?;
        }
    }
    Ok(())
}

fn pl_captures(n: usize) -> String {
    if n == 1 {
        "1 capture".to_owned()
    } else {
        format!("{n} captures")
    }
}

/// `{"summary": {...}, "findings": [...]}`, and `"drift": [...]` (the variants) when the
/// drift report has any.
pub fn json(
    out: &mut dyn Write,
    findings: &[LintFinding],
    drift: &[DriftVariant],
    summary: &LintSummary,
) -> io::Result<()> {
    let mut doc = json!({"summary": summary, "findings": findings});
    if !drift.is_empty() {
        doc["drift"] = serde_json::to_value(drift).map_err(io::Error::from)?;
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// SARIF 2.1.0: one result per finding, `ruleId` the code, located at file, line, column;
/// then one per drift finding, located at its request's file and line.
pub fn sarif(
    out: &mut dyn Write,
    findings: &[LintFinding],
    drift: &[DriftVariant],
) -> io::Result<()> {
    let mut all = findings.to_vec();
    all.extend(drift.iter().flat_map(DriftVariant::lint_findings));
    let findings = all.as_slice();
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
                // text a person reads: escaped as the human report escapes it
                "message": {"text": escape_control(&text)},
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

/// GitHub Actions annotations: `::error` / `::warning` / `::notice` per finding and per
/// drift finding (at its request's file and line), then a summary notice (escaping as the
/// Actions toolkit does).
pub fn github(
    out: &mut dyn Write,
    findings: &[LintFinding],
    drift: &[DriftVariant],
    summary: &LintSummary,
) -> io::Result<()> {
    let drifts: Vec<LintFinding> = drift.iter().flat_map(DriftVariant::lint_findings).collect();
    for f in findings.iter().chain(&drifts) {
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
