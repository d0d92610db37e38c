//! `--format human`: verdicts grouped by stage in pipeline order, each with its errors,
//! then the funnel, the reliability rates (`docs/repairs.md#the-rates`) and a
//! `N passed, N failed` line for the captures that carry `expect`. A verdict with a `repair`
//! gets a `repair:` line under its own line, before its findings (`docs/commands.md#check`).
//! Model text is untrusted: every string is printed with control characters escaped.

use crate::core::summary::Summary;
use crate::core::text::escape_control;
use crate::core::verdict::{Decision, Stage, Verdict};
use crate::report::{Item, Renderer, ReportOptions, Sink, expect_mismatch};
use std::io::{self, Seek, Write};

#[derive(Clone, Copy)]
/// ANSI colour of the human reports (`check`, `review`): off writes the text unchanged.
pub(crate) struct Paint {
    on: bool,
}

impl Paint {
    /// Colour on or off.
    pub(crate) fn new(on: bool) -> Paint {
        Paint { on }
    }

    /// `s` in the SGR colour `code` when colour is on.
    pub(crate) fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    /// `s` in a decision's colour.
    pub(crate) fn decision(&self, d: Decision, s: &str) -> String {
        self.wrap(self.decision_code(d), s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap(DIM, s)
    }
    fn bold(&self, s: &str) -> String {
        self.wrap(BOLD, s)
    }

    /// The SGR colour of a decision.
    fn decision_code(&self, d: Decision) -> &'static str {
        match d {
            Decision::ReadyForCommit => "32",
            Decision::Retry => "33",
            Decision::Regenerate => "31",
            Decision::Recheck => "35",
            Decision::Reject => "1;31",
        }
    }

    /// Appends the start of the SGR colour `code` when colour is on ([`Paint::close`] ends it).
    fn open(&self, out: &mut Vec<u8>, code: &str) {
        if self.on {
            out.extend_from_slice(b"\x1b[");
            out.extend_from_slice(code.as_bytes());
            out.push(b'm');
        }
    }

    /// Appends the end of a colour [`Paint::open`] started, when colour is on.
    fn close(&self, out: &mut Vec<u8>) {
        if self.on {
            out.extend_from_slice(b"\x1b[0m");
        }
    }

    /// Appends `s` in the SGR colour `code` when colour is on: what [`Paint::wrap`] makes,
    /// without a string of its own.
    fn put(&self, out: &mut Vec<u8>, code: &str, s: &str) {
        self.open(out, code);
        out.extend_from_slice(s.as_bytes());
        self.close(out);
    }
}

/// The SGR code of dim text.
const DIM: &str = "2";
/// The SGR code of bold text.
const BOLD: &str = "1";

/// `--format human`: verdicts grouped by stage. Each stage's lines are spilled to a
/// temporary file as they come and copied out in pipeline order at the end.
pub struct Human<W: Write> {
    out: W,
    paint: Paint,
    quiet: bool,
    instances: bool,
    /// Per stage: how many items, and the temporary file they are spilled to.
    groups: Vec<Option<(usize, io::BufWriter<std::fs::File>)>>,
    /// Each contract's lint warnings, printed once at the end rather than on every verdict.
    warnings: std::collections::BTreeMap<String, Vec<crate::core::verdict::Warning>>,
}

impl<W: Write> Human<W> {
    /// A sink writing to `out`.
    pub fn new(out: W, opts: &ReportOptions) -> Self {
        Human {
            out,
            paint: Paint { on: opts.color },
            quiet: opts.quiet,
            instances: opts.instances,
            groups: Stage::ALL.iter().map(|_| None).collect(),
            warnings: Default::default(),
        }
    }
}

impl<W: Write> Human<W> {
    /// Keeps the contract's lint warnings (those naming a contract file; printed once at
    /// the end). A capture's own warnings (no file) are printed with its verdict.
    fn note_warnings(&mut self, v: &Verdict) {
        if let Some(c) = &v.contract
            && v.warnings.iter().any(|w| w.file.is_some())
            && !self.warnings.contains_key(c)
        {
            let of_contract = v.warnings.iter().filter(|w| w.file.is_some());
            self.warnings
                .insert(c.clone(), of_contract.cloned().collect());
        }
    }

    /// The spill file of `stage`'s group, counting `n` more items in it.
    fn group(&mut self, stage: Stage, n: usize) -> io::Result<&mut io::BufWriter<std::fs::File>> {
        let i = Stage::ALL.iter().position(|s| *s == stage).unwrap_or(0);
        let (count, file) = match &mut self.groups[i] {
            Some(g) => g,
            slot => slot.insert((0, io::BufWriter::new(tempfile::tempfile()?))),
        };
        *count += n;
        Ok(file)
    }
}

impl<W: Write> Sink for Human<W> {
    fn item(&mut self, it: &Item) -> io::Result<()> {
        self.note_warnings(&it.verdict);
        if self.quiet && it.verdict.passes() {
            return Ok(());
        }
        let paint = self.paint;
        let instances = self.instances;
        let file = self.group(it.verdict.stage, 1)?;
        match &it.rendered {
            Some(bytes) => file.write_all(bytes),
            None => {
                let mut bytes = Vec::with_capacity(256);
                write_verdict(&mut bytes, &paint, instances, it);
                file.write_all(&bytes)
            }
        }
    }

    fn renderer(&self) -> Option<Renderer> {
        let paint = self.paint;
        let instances = self.instances;
        Some(std::sync::Arc::new(move |it: &Item, out: &mut Vec<u8>| {
            write_verdict(out, &paint, instances, it);
        }))
    }

    fn passes(&mut self, model: &Item, bytes: &[u8], n: usize) -> io::Result<()> {
        self.note_warnings(&model.verdict);
        if self.quiet {
            return Ok(());
        }
        self.group(model.verdict.stage, n)?.write_all(bytes)
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let p = &self.paint;
        let out = &mut self.out;
        for (stage, group) in Stage::ALL.iter().zip(self.groups.iter_mut()) {
            let Some((n, file)) = group else { continue };
            writeln!(
                out,
                "{} {}",
                p.bold(stage.as_str()),
                p.dim(&format!("({n})"))
            )?;
            file.flush()?;
            let file = file.get_mut();
            file.rewind()?;
            io::copy(file, out)?;
            writeln!(out)?;
        }
        for (contract, warnings) in &self.warnings {
            writeln!(
                out,
                "{} {}",
                p.bold(&format!("contract {}", escape_control(contract))),
                p.dim(&format!(
                    "({} lint finding{})",
                    warnings.len(),
                    if warnings.len() == 1 { "" } else { "s" }
                ))
            )?;
            for w in warnings {
                let place = match (&w.file, w.at) {
                    (Some(f), Some(at)) => format!("{}:{at} ", escape_control(f)),
                    (Some(f), None) => format!("{} ", escape_control(f)),
                    _ => String::new(),
                };
                let severity = w.severity.as_deref().unwrap_or("warning");
                writeln!(
                    out,
                    "  {}{} {}",
                    p.dim(&place),
                    p.wrap("33", &format!("{severity}[{}]", escape_control(&w.code))),
                    escape_control(&w.message)
                )?;
            }
            writeln!(out)?;
        }
        if !summary.warnings.is_empty() {
            let n = summary.warnings.len();
            writeln!(
                out,
                "{} {}",
                p.bold("workspace"),
                p.dim(&format!("({n} warning{})", if n == 1 { "" } else { "s" }))
            )?;
            for w in &summary.warnings {
                let place = w
                    .file
                    .as_deref()
                    .map(|f| format!("{} ", escape_control(f)))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "  {}{} {}",
                    p.dim(&place),
                    p.wrap("33", &format!("warning[{}]", escape_control(&w.code))),
                    escape_control(&w.message)
                )?;
            }
            writeln!(out)?;
        }
        let decisions: Vec<String> = Decision::ALL
            .iter()
            .rev()
            .filter_map(|d| summary.decisions.get(d).map(|n| format!("{d} {n}")))
            .collect();
        if !decisions.is_empty() {
            writeln!(out, "decisions: {}", decisions.join(", "))?;
        }
        if self.instances {
            writeln!(out, "{}", summary.instance_funnel_line())?;
        } else {
            writeln!(out, "{}", summary.funnel_line())?;
        }
        // the chains after the funnel (`docs/chains.md#the-report`)
        if let Some(c) = &summary.chains {
            writeln!(out, "{}", crate::report::chains::funnel_line(&c.summary))?;
            writeln!(out, "  {}", crate::report::chains::counts_line(&c.summary))?;
        }
        // then the reliability rates (`docs/repairs.md#the-rates`)
        if !self.instances {
            for line in summary.rates.lines() {
                writeln!(out, "{line}")?;
            }
        }
        // one definition of passing everywhere (exit code, JSON, JUnit): a capture passes when
        // it meets its `expect`, or has none and is ready
        let without = summary.captures - summary.expected;
        if summary.expected > 0 && without > 0 {
            let ready = summary.ready_without_expect;
            writeln!(
                out,
                "expect met {} of {}; without expect {without} ({ready} ready, {} not ready)",
                summary.expect_met,
                summary.expected,
                without - ready
            )?;
        }
        writeln!(out, "{} passed, {} failed", summary.passed, summary.failed)?;
        Ok(())
    }
}

/// Appends `it` as its group lists it: the verdict's line, then its notes, warnings and
/// errors, each line indented under it. Written straight into `out`, piece by piece (no
/// string per painted piece: this runs for every failing capture of a run, on the
/// validation threads). A plain instance (`instances`: `check --schema`) has no id of its
/// own: its id is its source, printed once (`GLYPH REASON  SOURCE  DECISION`).
fn write_verdict(out: &mut Vec<u8>, p: &Paint, instances: bool, it: &Item) {
    let v: &Verdict = &it.verdict;
    let colour = p.decision_code(v.decision);
    out.extend_from_slice(b"  ");
    p.put(out, colour, v.decision.glyph());
    out.push(b' ');
    p.open(out, colour);
    if let Some(r) = &v.reason {
        out.extend_from_slice(escape_control(r.as_str()).as_bytes());
        out.extend_from_slice(b"  ");
    }
    p.close(out);
    out.extend_from_slice(escape_control(&v.id).as_bytes());
    out.extend_from_slice(b"  ");
    p.put(out, colour, v.decision.as_str());
    if !(instances && v.id == v.source.as_str()) {
        out.extend_from_slice(b"  ");
        p.put(out, DIM, &escape_control(v.source.as_str()));
    }
    match &v.expect {
        Some(e) if e.met => p.put(out, DIM, "  (as expected)"),
        Some(_) => p.put(out, "1;31", "  NOT AS EXPECTED"),
        None => {}
    }
    out.push(b'\n');
    if let Some(m) = expect_mismatch(v) {
        out.extend_from_slice(b"      ");
        p.put(out, "31", &escape_control(&m));
        out.push(b'\n');
    }
    // a narrow repair that would change the outcome (`docs/repairs.md`): counted, never applied
    if let Some(note) = crate::report::repair_note(v) {
        out.extend_from_slice(b"      ");
        p.open(out, "36");
        out.extend_from_slice(b"repair: ");
        out.extend_from_slice(escape_control(&note).as_bytes());
        p.close(out);
        out.push(b'\n');
    }
    // the eval tool's own pass/fail beside verdict's (`docs/record-shapes.md#promptfoo`)
    if let Some(note) = crate::report::eval_note(v) {
        out.extend_from_slice(b"      ");
        p.put(out, DIM, &escape_control(&note));
        out.push(b'\n');
    }
    // the capture's own warnings (a contract's are summed up once at the end)
    for w in v.warnings.iter().filter(|w| w.file.is_none()) {
        out.extend_from_slice(b"      ");
        p.open(out, "33");
        out.extend_from_slice(b"warning[");
        out.extend_from_slice(escape_control(&w.code).as_bytes());
        out.extend_from_slice(b"] ");
        p.close(out);
        if let Some(ptr) = w.pointer.as_deref() {
            p.put(out, BOLD, &escape_control(ptr));
            out.extend_from_slice(b"  ");
        }
        out.extend_from_slice(escape_control(&w.message).as_bytes());
        out.push(b'\n');
    }
    for f in &v.errors {
        out.extend_from_slice(b"      ");
        if let Some(ptr) = f.pointer.as_deref() {
            // a pointer is made of the proposal's own keys: model text
            if ptr.is_empty() {
                p.put(out, BOLD, "(root)");
            } else {
                p.put(out, BOLD, &escape_control(ptr));
            }
            out.extend_from_slice(b"  ");
        }
        if let Some(at) = f.at {
            p.open(out, DIM);
            let mut n = itoa::Buffer::new();
            out.extend_from_slice(n.format(at.line).as_bytes());
            out.push(b':');
            out.extend_from_slice(n.format(at.column).as_bytes());
            p.close(out);
            out.extend_from_slice(b"  ");
        }
        out.extend_from_slice(escape_control(&f.message).as_bytes());
        if let Some(sp) = f
            .schema_path
            .as_deref()
            .filter(|s| !s.is_empty() && f.stage == Stage::Schema)
        {
            p.open(out, DIM);
            out.extend_from_slice(b"  [");
            out.extend_from_slice(escape_control(sp).as_bytes());
            out.push(b']');
            p.close(out);
        }
        out.push(b'\n');
        if let Some(best) = f.branches.first() {
            for b in &best.errors {
                out.extend_from_slice(b"        ");
                p.open(out, DIM);
                out.extend_from_slice(b"closest branch ");
                out.extend_from_slice(itoa::Buffer::new().format(best.index).as_bytes());
                out.push(b':');
                p.close(out);
                out.push(b' ');
                out.extend_from_slice(
                    escape_control(b.pointer.as_deref().unwrap_or("")).as_bytes(),
                );
                out.extend_from_slice(b"  ");
                out.extend_from_slice(escape_control(&b.message).as_bytes());
                out.push(b'\n');
            }
        }
        if let Some(h) = &f.hint {
            out.extend_from_slice(b"        ");
            p.open(out, DIM);
            out.extend_from_slice(b"hint: ");
            out.extend_from_slice(escape_control(h).as_bytes());
            p.close(out);
            out.push(b'\n');
        }
    }
}
