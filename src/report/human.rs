//! `--format human`: verdicts grouped by stage in pipeline order, each with its errors,
//! then the funnel and a `N passed, N failed` line for the captures that carry `expect`.
//! Model text is untrusted: every string is printed with control characters escaped.

use crate::core::summary::Summary;
use crate::core::text::escape_control;
use crate::core::verdict::{Decision, Stage, Verdict};
use crate::report::{Item, ReportOptions, expect_mismatch};
use std::io::{self, Write};

/// The glyph of a decision, as the TUI shows it too.
pub fn glyph(d: Decision) -> &'static str {
    match d {
        Decision::ReadyForCommit => "✓",
        Decision::Retry => "↻",
        Decision::Regenerate => "✗",
        Decision::Recheck => "?",
        Decision::Reject => "⊘",
    }
}

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn decision(&self, d: Decision, s: &str) -> String {
        let code = match d {
            Decision::ReadyForCommit => "32",
            Decision::Retry => "33",
            Decision::Regenerate => "31",
            Decision::Recheck => "35",
            Decision::Reject => "1;31",
        };
        self.wrap(code, s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
}

/// Writes the human report.
pub fn write(
    out: &mut dyn Write,
    items: &[Item],
    summary: &Summary,
    opts: &ReportOptions,
) -> io::Result<()> {
    let p = Paint { on: opts.color };
    for stage in Stage::ALL {
        let group: Vec<&Item> = items
            .iter()
            .filter(|i| i.verdict.stage == stage && !(opts.quiet && i.verdict.passes()))
            .collect();
        if group.is_empty() {
            continue;
        }
        writeln!(
            out,
            "{} {}",
            p.bold(stage.as_str()),
            p.dim(&format!("({})", group.len()))
        )?;
        for it in group {
            write_verdict(out, &p, it)?;
        }
        writeln!(out)?;
    }
    writeln!(out, "{}", summary.funnel_line())?;
    let decisions: Vec<String> = Decision::ALL
        .iter()
        .rev()
        .filter_map(|d| summary.decisions.get(d).map(|n| format!("{d} {n}")))
        .collect();
    if !decisions.is_empty() {
        writeln!(out, "decisions: {}", decisions.join(", "))?;
    }
    let without = summary.captures - summary.expected;
    if summary.expected > 0 {
        if without > 0 {
            let ready_without = items
                .iter()
                .filter(|i| i.verdict.expect.is_none() && i.verdict.is_ready())
                .count();
            writeln!(
                out,
                "without expect: {without} ({ready_without} ready, {} not ready)",
                without - ready_without
            )?;
        }
        let failed = summary.expected - summary.expect_met;
        writeln!(out, "{} passed, {} failed", summary.expect_met, failed)?;
    } else {
        writeln!(
            out,
            "{} ready, {} not ready",
            summary.funnel.ready,
            summary.captures - summary.funnel.ready
        )?;
    }
    Ok(())
}

fn write_verdict(out: &mut dyn Write, p: &Paint, it: &Item) -> io::Result<()> {
    let v: &Verdict = &it.verdict;
    let reason = v.reason.as_ref().map_or(String::new(), |r| {
        format!("{}  ", escape_control(r.as_str()))
    });
    let mark = match &v.expect {
        Some(e) if e.met => p.dim("  (as expected)"),
        Some(_) => p.wrap("1;31", "  NOT AS EXPECTED"),
        None => String::new(),
    };
    writeln!(
        out,
        "  {} {}{}  {}  {}{}",
        p.decision(v.decision, glyph(v.decision)),
        p.decision(v.decision, &reason),
        escape_control(&v.id),
        p.decision(v.decision, v.decision.as_str()),
        p.dim(&escape_control(&v.source)),
        mark
    )?;
    if let Some(m) = expect_mismatch(v) {
        writeln!(out, "      {}", p.wrap("31", &escape_control(&m)))?;
    }
    for f in &v.errors {
        let mut line = String::new();
        if let Some(ptr) = f.pointer.as_deref() {
            // a pointer is made of the proposal's own keys: model text
            let ptr = if ptr.is_empty() {
                "(root)".into()
            } else {
                escape_control(ptr)
            };
            line.push_str(&p.bold(&ptr));
            line.push_str("  ");
        }
        if let Some(at) = f.at {
            line.push_str(&p.dim(&at.to_string()));
            line.push_str("  ");
        }
        line.push_str(&escape_control(&f.message));
        if let Some(sp) = f
            .schema_path
            .as_deref()
            .filter(|s| !s.is_empty() && f.stage == Stage::Schema)
        {
            line.push_str(&p.dim(&format!("  [{}]", escape_control(sp))));
        }
        writeln!(out, "      {line}")?;
        if let Some(best) = f.branches.first() {
            for b in &best.errors {
                writeln!(
                    out,
                    "        {} {}  {}",
                    p.dim(&format!("best branch {}:", best.index)),
                    escape_control(b.pointer.as_deref().unwrap_or("")),
                    escape_control(&b.message)
                )?;
            }
        }
        if let Some(h) = &f.hint {
            writeln!(
                out,
                "        {}",
                p.dim(&format!("hint: {}", escape_control(h)))
            )?;
        }
    }
    for w in &v.warnings {
        writeln!(
            out,
            "      {} {}",
            p.wrap("33", &format!("warning {}:", escape_control(&w.code))),
            escape_control(&w.message)
        )?;
    }
    Ok(())
}
