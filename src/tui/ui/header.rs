//! The two header lines: the workspace, the watching state, counts, the run's progress or
//! the last change, the funnel with the reliability rates, and the note of the last
//! contract change.

use crate::core::workspace::Workspace;
use crate::tui::app::{ContractChange, History, Run, Watch, WatchState};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Paragraph};

/// What the header reads.
pub struct Header<'a> {
    /// The workspace as named on the command line.
    pub label: &'a str,
    /// The workspace (its contracts are counted).
    pub workspace: Option<&'a Workspace>,
    /// The runs: progress, funnel, lint findings.
    pub run: &'a Run,
    /// Watching state, changes waiting, the last change.
    pub watch: &'a Watch,
    /// The flips: how many captures flipped, the last contract change.
    pub history: &'a History,
    /// The chain summary, when the workspace has chains: its funnel is the third line.
    pub chains: Option<&'a crate::core::chain::summary::ChainSummary>,
}

/// The chain funnel line for `width` columns: the funnel, then the wasted attempts and the
/// chains over budget; when that is too wide, the two counts first in short words
/// (`3 wasted · 1 over budget`), whole, and the funnel after them, cut with `…`.
fn chain_line(
    t: &Theme,
    c: &crate::core::chain::summary::ChainSummary,
    width: usize,
) -> Line<'static> {
    let wasted: usize = c.wasted_attempts.values().sum();
    let funnel = crate::report::chains::funnel_line(c);
    let plural = if wasted == 1 { "" } else { "s" };
    let mut long = vec![Span::raw(format!(" {funnel}"))];
    let mut counts = Vec::new();
    if wasted > 0 {
        long.push(Span::styled("  ·  ", t.dim()));
        long.push(Span::styled(
            format!("{wasted} wasted attempt{plural}"),
            t.warn(),
        ));
        counts.push(format!("{wasted} wasted"));
    }
    if c.over_budget > 0 {
        long.push(Span::styled("  ·  ", t.dim()));
        long.push(Span::styled(
            format!("{} over budget", c.over_budget),
            t.warn(),
        ));
        counts.push(format!("{} over budget", c.over_budget));
    }
    let line = Line::from(long);
    if line.width() <= width || counts.is_empty() {
        return line;
    }
    let counts = format!(" {}", counts.join(" · "));
    let room = width.saturating_sub(counts.chars().count() + 3);
    let mut spans = vec![Span::styled(counts, t.warn())];
    if room > 0 {
        spans.push(Span::styled(" · ", t.dim()));
        spans.push(Span::raw(super::pad(&funnel, room).trim_end().to_string()));
    }
    Line::from(spans)
}

/// Draws the header into the lines of `r`: two, and the chain funnel on a third when the
/// workspace has chains (`chains 10 > first-pass 2 > recovered 4 > unrecovered 4`, with the
/// wasted attempts and the chains over budget).
pub fn draw(f: &mut Frame, r: Rect, t: &Theme, h: Header<'_>) {
    let line = |i: u16| Rect::new(r.x, r.y + i, r.width, u16::from(i < r.height));
    let (l1, l2, l3) = (line(0), line(1), line(2));
    if let Some(c) = h.chains.filter(|_| l3.height > 0) {
        f.render_widget(Paragraph::new(chain_line(t, c, l3.width as usize)), l3);
    }
    let (state, style) = match (h.watch.state, &h.watch.off_reason) {
        (WatchState::Live, _) => ("● live".into(), t.pass()),
        (WatchState::Paused, _) => ("‖ paused".into(), t.warn()),
        (WatchState::Off, None) => ("○ not watching".into(), t.dim()),
        // why: the watcher could not start (escaped where it was set)
        (WatchState::Off, Some(why)) => (format!("○ not watching: {why}"), t.warn()),
    };
    let contracts = h.workspace.map_or(0, |w| w.contracts.by_name.len());
    let lint = h.run.lint;
    let mut spans = vec![
        Span::styled(
            " verdict ",
            t.bold().add_modifier(ratatui::style::Modifier::REVERSED),
        ),
        Span::raw("  "),
        Span::styled(
            crate::core::text::escape_control(h.label).into_owned(),
            t.bold(),
        ),
        Span::raw("  "),
        Span::styled::<String, _>(state, style),
        Span::raw("  "),
        Span::raw(format!(
            "{contracts} contract{}",
            if contracts == 1 { "" } else { "s" }
        )),
        Span::styled("  ·  ", t.dim()),
        Span::styled(
            lint.label(),
            if lint.any() { t.warn() } else { Style::new() },
        ),
    ];
    // the workspace's own warnings (as `check` prints them after its verdicts), by kind
    let count = |code: &str| {
        h.run
            .workspace_warnings
            .iter()
            .filter(|w| w.code == code)
            .count()
    };
    let joins = count("UNMATCHED_JOIN");
    let requests = count("UNMATCHED_REQUEST");
    let other = h.run.workspace_warnings.len() - joins - requests;
    let s = |n: usize| if n == 1 { "" } else { "s" };
    for (n, text) in [
        (
            joins,
            format!(
                "{joins} join line{} match{} no capture",
                s(joins),
                if joins == 1 { "es" } else { "" }
            ),
        ),
        (
            requests,
            format!("{requests} request{} without a result", s(requests)),
        ),
        (other, format!("{other} workspace warning{}", s(other))),
    ] {
        if n > 0 {
            spans.push(Span::styled("  ·  ", t.dim()));
            spans.push(Span::styled(text, t.warn()));
        }
    }
    let pending = h.watch.pending.len();
    if pending > 0 {
        spans.push(Span::styled("  ·  ", t.dim()));
        spans.push(Span::styled(
            format!(
                "{} change{} waiting",
                pending,
                if pending == 1 { "" } else { "s" }
            ),
            t.warn(),
        ));
    }
    if !h.history.flipped.is_empty() {
        spans.push(Span::styled("  ·  ", t.dim()));
        spans.push(Span::styled(
            format!("↺ {} flipped", h.history.flipped.len()),
            t.flip(),
        ));
    }
    let p = &h.run.progress;
    let right = if let Some((done, files, records)) = p.reading.filter(|_| p.running) {
        // the pre-pass, before the first record (`docs/commands.md#the-pre-pass`)
        format!(
            "reading capture files: {done} of {files} ({records} record{}) ",
            if records == 1 { "" } else { "s" }
        )
    } else if p.running {
        format!("validating {}/{} ", p.done, p.total)
    } else if let Some(at) = &h.watch.last_change {
        format!("last change {at} ")
    } else if let Some(e) = p.elapsed {
        format!("validated in {} ms ", e.as_millis())
    } else {
        String::new()
    };
    // cut with `…` when it is wider than the terminal (the smallest screen, a long path)
    let left = super::fit_line(Line::from(spans), l1.width as usize);
    f.render_widget(Paragraph::new(left.clone()), l1);
    // the time goes only where it does not overwrite the left part
    if left.width() + super::columns(&right) < l1.width as usize {
        f.render_widget(
            Paragraph::new(Span::styled(right, t.dim())).alignment(Alignment::Right),
            l1,
        );
    }
    // the funnel, then the reliability rates with their denominators
    // (`docs/repairs.md#the-rates`) where they fit whole: the repairable rate alone, else
    // none; a funnel too wide keeps its first stages, `…` after them
    let funnel_in = |width: u16| {
        let base = format!(" {}", h.run.summary.funnel_line());
        let rates = &h.run.summary.rates;
        let r = rates.repairable();
        [
            format!("{base}  {}", rates.compact()),
            format!("{base}  repairable {}/{}", r.count, r.of),
        ]
        .into_iter()
        .find(|s| super::columns(s) < width as usize)
        .unwrap_or_else(|| funnel_within(&base, width as usize))
    };
    if p.running {
        let gw = 24.min(l2.width / 3);
        let [a, b] = Layout::horizontal([Constraint::Fill(1), Constraint::Length(gw)]).areas(l2);
        f.render_widget(Paragraph::new(funnel_in(a.width)), a);
        let ratio = if let Some((done, files, _)) = p.reading {
            if files == 0 {
                0.0
            } else {
                (done as f64 / files as f64).clamp(0.0, 1.0)
            }
        } else if p.total == 0 {
            0.0
        } else {
            (p.done as f64 / p.total as f64).clamp(0.0, 1.0)
        };
        f.render_widget(
            LineGauge::default()
                .filled_style(t.gauge())
                .ratio(ratio)
                .label(format!("{:>3}%", (ratio * 100.0) as u32)),
            b,
        );
    } else if let Some(c) = &h.history.contract_change {
        let note = contract_note(c);
        let nw = (super::columns(&note) as u16 + 1).min(l2.width / 2);
        let [a, b] = Layout::horizontal([Constraint::Fill(1), Constraint::Length(nw)]).areas(l2);
        f.render_widget(Paragraph::new(funnel_in(a.width)), a);
        // a note wider than its half of the line: cut with `…`, a space before and after
        let note = if super::columns(&note) < nw as usize {
            note
        } else {
            let w = (nw as usize).saturating_sub(2);
            format!("{} ", super::pad(note.trim_end(), w).trim_end())
        };
        f.render_widget(
            Paragraph::new(Span::styled(note, t.flip())).alignment(Alignment::Right),
            b,
        );
    } else {
        f.render_widget(Paragraph::new(funnel_in(l2.width)), l2);
    }
}

/// The funnel line `funnel` (` captures 25 > completed 21 > ...`) in fewer than `width`
/// columns (one is left free, as for the whole line): its first stages, then ` > …` in
/// place of the rest; cut with `…` at the end when even its first stage does not fit.
fn funnel_within(funnel: &str, width: usize) -> String {
    let room = width.saturating_sub(1);
    if super::columns(funnel) <= room {
        return funnel.to_string();
    }
    let stages: Vec<&str> = funnel.split(" > ").collect();
    (1..stages.len())
        .rev()
        .map(|k| format!("{} > …", stages[..k].join(" > ")))
        .find(|s| super::columns(s) <= room)
        .unwrap_or_else(|| super::pad(funnel, room).trim_end().to_string())
}

/// `refund-v1 changed: 3 newly failing, 1 newly passing` (escaped).
pub fn contract_note(c: &ContractChange) -> String {
    use crate::core::review::FlipKind;
    let names = crate::core::text::escape_control(&c.contracts.join(", ")).into_owned();
    let mut parts: Vec<String> = FlipKind::ALL
        .into_iter()
        .filter(|k| c.count(*k) > 0)
        .map(|k| format!("{} {}", c.count(k), k.title()))
        .collect();
    if parts.is_empty() {
        parts.push("no verdict changed".into());
    }
    format!("{names} changed: {} ", parts.join(", "))
}
