//! Report formats of `verdict review`: human, json, markdown (for a pull request), github.

use crate::core::review::{Flip, FlipKind, Review};
use crate::core::text::escape_control;
use crate::core::verdict::Finding;
use crate::report::github::{data, property};
use std::io::{self, Write};

/// `3 now failing, 0 no longer meets expect, 1 now passing, 0 now meets expect, 0 changed
/// of 25 captures (base HEAD)`.
pub fn summary_line(r: &Review) -> String {
    let counts: Vec<String> = FlipKind::ALL
        .iter()
        .map(|&k| format!("{} {}", r.count(k), k.title()))
        .collect();
    format!(
        "{} of {} captures (base {})",
        counts.join(", "),
        r.captures,
        escape_control(&r.base)
    )
}

/// The error behind a flip: `/amount: 50 is less than the minimum of 100`.
/// For an `anyOf`/`oneOf` failure the closest branch's own errors follow, since the
/// combinator's message alone ("not valid under any of the schemas") says little.
pub fn cause(f: &Flip) -> String {
    finding(f.cause.as_ref())
}

/// For a `changed` flip, the old first error that the cause replaced, as [`cause`] writes
/// it (empty otherwise).
pub fn was(f: &Flip) -> String {
    finding(f.was.as_ref())
}

/// A flip's finding as [`cause`] writes it.
fn finding(f: Option<&Finding>) -> String {
    let at = |p: Option<&str>, m: &str| match p {
        Some(p) if !p.is_empty() => format!("{p}: {m}"),
        _ => m.to_string(),
    };
    match f {
        Some(c) => {
            let mut s = at(c.pointer.as_deref(), &c.message);
            if let Some(best) = c.branches.first() {
                let why: Vec<String> = best
                    .errors
                    .iter()
                    .map(|e| at(e.pointer.as_deref(), &e.message))
                    .collect();
                s.push_str(&format!(
                    " (closest branch {}: {})",
                    best.index,
                    why.join("; ")
                ));
            }
            s
        }
        None => String::new(),
    }
}

use crate::report::human::Paint;

/// A group title: bold red for what now fails, bold green for what now passes, bold for
/// `changed`.
fn title(p: Paint, k: FlipKind) -> String {
    let code = match k {
        FlipKind::NowFailing | FlipKind::NoLongerMeetsExpect => "1;31",
        FlipKind::NowPassing | FlipKind::NowMeetsExpect => "1;32",
        FlipKind::Changed => "1",
    };
    p.wrap(code, k.title())
}

/// Schema changes, then the flips grouped by kind, then the summary line. Each flip line
/// starts with the glyph of its new decision ([`crate::core::verdict::Decision::glyph`], as `check` marks a
/// verdict); with `color` the group titles, glyphs and outcomes are coloured as `check`
/// colours them (ANSI SGR), without it the text has no escape bytes.
pub fn human(out: &mut dyn Write, r: &Review, color: bool) -> io::Result<()> {
    let p = Paint::new(color);
    if !r.changes.is_empty() {
        writeln!(out, "{}", p.wrap("1", "schema changes:"))?;
        for c in &r.changes {
            writeln!(
                out,
                "  {} {} {}: {}",
                escape_control(&c.contract),
                c.kind,
                p.wrap(
                    "1",
                    &if c.pointer.is_empty() {
                        "(root)".into()
                    } else {
                        escape_control(&c.pointer)
                    }
                ),
                escape_control(&c.message)
            )?;
        }
    }
    for kind in FlipKind::ALL {
        let group: Vec<&Flip> = r.flips.iter().filter(|f| f.kind == kind).collect();
        if group.is_empty() {
            continue;
        }
        writeln!(
            out,
            "{} {}:",
            title(p, kind),
            p.wrap("2", &format!("({})", group.len()))
        )?;
        for f in group {
            writeln!(
                out,
                "  {} {}  {} -> {}  {}",
                p.decision(f.new.decision, f.new.decision.glyph()),
                escape_control(&f.id),
                p.decision(f.old.decision, &f.old.label()),
                p.decision(f.new.decision, &f.new.label()),
                p.wrap("2", &escape_control(f.source.as_str()))
            )?;
            let (c, w) = (cause(f), was(f));
            if !w.is_empty() {
                // the same outcome: what a reviewer reads is the error that changed
                writeln!(out, "      now: {}", escape_control(&c))?;
                writeln!(out, "      was: {}", escape_control(&w))?;
            } else if !c.is_empty() {
                writeln!(out, "      {}", escape_control(&c))?;
            }
        }
    }
    writeln!(out, "{}", summary_line(r))
}

/// The review as one JSON document.
pub fn json(out: &mut dyn Write, r: &Review) -> io::Result<()> {
    let doc = serde_json::json!({
        "summary": {
            "base": r.base, "captures": r.captures,
            "now_failing": r.count(FlipKind::NowFailing),
            "no_longer_meets_expect": r.count(FlipKind::NoLongerMeetsExpect),
            "now_passing": r.count(FlipKind::NowPassing),
            "now_meets_expect": r.count(FlipKind::NowMeetsExpect),
            "changed": r.count(FlipKind::Changed),
        },
        "changes": r.changes,
        "flips": r.flips,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn md(s: &str) -> String {
    escape_control(s).replace('|', "\\|").replace('`', "'")
}

/// Markdown for a pull request: a heading, the schema changes, a table per flip group.
pub fn markdown(out: &mut dyn Write, r: &Review) -> io::Result<()> {
    writeln!(out, "### verdict review\n\n{}\n", summary_line(r))?;
    if !r.changes.is_empty() {
        writeln!(
            out,
            "#### Schema changes\n\n| contract | change | pointer | detail |\n|---|---|---|---|"
        )?;
        for c in &r.changes {
            writeln!(
                out,
                "| {} | {} | `{}` | {} |",
                md(&c.contract),
                c.kind,
                md(&c.pointer),
                md(&c.message)
            )?;
        }
        writeln!(out)?;
    }
    for kind in FlipKind::ALL {
        let group: Vec<&Flip> = r.flips.iter().filter(|f| f.kind == kind).collect();
        if group.is_empty() {
            continue;
        }
        writeln!(
            out,
            "#### {} ({})\n\n| capture | before | after | cause |\n|---|---|---|---|",
            kind.title(),
            group.len()
        )?;
        for f in group {
            writeln!(
                out,
                "| {} | {} | {} | {} |",
                md(&f.id),
                f.old.label(),
                f.new.label(),
                md(&match was(f) {
                    w if w.is_empty() => cause(f),
                    w => format!("{} (was: {w})", cause(f)),
                })
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// GitHub annotations: `::error` per capture that now fails (`now failing`, `no longer
/// meets expect`), `::notice` for the others,
/// then a summary notice. Files are named as `check --format github` names them: the
/// workspace path `root` joined with the capture file (relative to where verdict runs, which
/// in CI is the repository root), so the annotations land on the file.
pub fn github(out: &mut dyn Write, r: &Review, root: &std::path::Path) -> io::Result<()> {
    for f in &r.flips {
        let cmd = if f.kind.fails() { "error" } else { "notice" };
        let (path, line) = (&**f.source.file(), f.source.line().unwrap_or(1));
        let joined = root.join(path).to_string_lossy().replace('\\', "/");
        let path = joined.strip_prefix("./").unwrap_or(&joined);
        let mut msg = format!(
            "{} {}: {} -> {}: {}",
            f.id,
            f.kind.title(),
            f.old.label(),
            f.new.label(),
            cause(f)
        );
        let w = was(f);
        if !w.is_empty() {
            msg.push_str(&format!(" (was: {w})"));
        }
        writeln!(
            out,
            "::{cmd} file={},line={line},title={}::{}",
            property(&escape_control(path)),
            property(kind_title(f.kind)),
            data(&escape_control(&msg))
        )?;
    }
    writeln!(
        out,
        "::notice title=verdict review::{}",
        data(&summary_line(r))
    )
}

fn kind_title(k: FlipKind) -> &'static str {
    k.title()
}
