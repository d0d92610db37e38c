//! `--format github`: GitHub Actions workflow commands, one `::error` annotation per failing
//! capture (`::error file=F,line=L,col=C,title=REASON::message`), one `::warning` (or
//! `::error` / `::notice`, by severity) per lint finding of a contract file that rides on the
//! verdicts (once per contract, as `lint --format github` prints it; workspace mode), one
//! `::warning` per generation warning (`GENERATION_GAP`, `STRICT_VIOLATION`) located at the
//! request that sent the schema (its file and line), whether the capture passes or not, then a
//! `::notice` summary (the funnel, the reliability rates, passed and failed). A failing
//! capture's message ends with its `repair` (`docs/repairs.md`), when it has one. In `check --schema` mode a failing instance is located at its first
//! error's line and column within the file, and the summary counts instances
//! (`instances N > parsed N > valid N`, `N valid, N invalid`).
//! Escaping follows the Actions toolkit: `%`, CR and LF in data; also `:` and `,` in properties.

use crate::core::summary::Summary;
use crate::core::text::escape_control;
use crate::report::{Item, Sink, expect_mismatch, headline, rule_id};
use std::collections::HashSet;
use std::io::{self, Write};

/// Escapes workflow-command data (the Actions toolkit's `escapeData`).
pub(crate) fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property (the Actions toolkit's `escapeProperty`).
pub(crate) fn property(s: &str) -> String {
    data(&escape_control(s))
        .replace(':', "%3A")
        .replace(',', "%2C")
}

/// `--format github`.
pub struct Github<W: Write> {
    out: W,
    instances: bool,
    /// The contracts whose lint findings are printed already.
    linted: HashSet<String>,
}

impl<W: Write> Github<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        Github {
            out,
            instances: false,
            linted: HashSet::new(),
        }
    }

    /// `check --schema`: instances are located at their first error, the summary counts
    /// instances, and the schema's lint findings are not annotated (they are `lint`'s).
    pub fn instances(mut self, on: bool) -> Self {
        self.instances = on;
        self
    }

    /// The lint findings of the item's contract (the warnings that name a contract file),
    /// the first time the contract is seen. The file is shown as the capture's path is: the
    /// workspace folder the item's path starts with, joined with the contract file.
    fn lint_findings(&mut self, it: &Item) -> io::Result<()> {
        let v = &it.verdict;
        let Some(contract) = &v.contract else {
            return Ok(());
        };
        if self.instances
            || !v.warnings.iter().any(|w| w.file.is_some())
            || self.linted.contains(contract)
        {
            return Ok(());
        }
        self.linted.insert(contract.clone());
        let root = it.path.strip_suffix(v.source.file().as_ref()).unwrap_or("");
        for w in &v.warnings {
            let Some(file) = &w.file else { continue };
            crate::report::lint::github_annotation(
                &mut self.out,
                w.severity.as_deref().unwrap_or("warning"),
                &format!("{root}{file}"),
                w.at,
                &w.code,
                w.pointer.as_deref().unwrap_or(""),
                &w.message,
            )?;
        }
        Ok(())
    }
}

/// Where an annotation of a failing item points: the item's line and column; for a plain
/// instance (`check --schema`) its first error's position within the file (the instance's
/// line plus the error's line within it, the error's column).
pub(crate) fn location(it: &Item, instances: bool) -> (usize, usize) {
    match it.verdict.errors.iter().find_map(|f| f.at) {
        Some(at) if instances => (
            it.line + (at.line as usize).saturating_sub(1),
            at.column as usize,
        ),
        _ => (it.line, it.column),
    }
}

impl<W: Write> Sink for Github<W> {
    fn item(&mut self, it: &Item) -> io::Result<()> {
        self.lint_findings(it)?;
        let v = &it.verdict;
        // about the request schema, whether the capture passes or not: at the request
        for (w, file, line) in crate::report::generation_warnings(it) {
            writeln!(
                self.out,
                "::warning file={},line={line},col=1,title={}::{}",
                property(&escape_control(&file)),
                property(&w.code),
                data(&escape_control(&format!("{}: {}", v.id, w.message)))
            )?;
        }
        if v.passes() {
            return Ok(());
        }
        let mut msg = format!("{} [{} {}]: {}", v.id, v.stage, v.decision, headline(v));
        if let Some(m) = expect_mismatch(v) {
            msg = format!("{msg} ({m})");
        }
        if let Some(note) = crate::report::repair_note(v) {
            msg = format!("{msg}; repair: {note}");
        }
        let (line, col) = location(it, self.instances);
        writeln!(
            self.out,
            "::error file={},line={line},col={col},title={}::{}",
            property(&escape_control(&it.path)),
            property(&rule_id(v)),
            data(&escape_control(&msg))
        )
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        if self.instances {
            let s = summary.instances();
            return writeln!(
                self.out,
                "::notice title=verdict::{}%0A{} valid, {} invalid",
                data(&summary.instance_funnel_line()),
                s.valid,
                s.invalid
            );
        }
        let rates: Vec<String> = summary
            .rates
            .lines()
            .iter()
            .map(|l| data(l.trim()))
            .collect();
        writeln!(
            self.out,
            "::notice title=verdict::{}%0A{}%0A{} passed, {} failed",
            data(&summary.funnel_line()),
            rates.join("%0A"),
            summary.passed,
            summary.failed
        )
    }
}
