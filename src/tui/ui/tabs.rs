//! The detail tabs' content: one function per tab, over one scrolled-text helper.

use super::message;
use crate::tui::app::History;
use crate::tui::app::layout::{self, RawRow, raw_rows};
use crate::tui::detail::{
    Detail, DiffKind, DiffView, DriftView, JsonView, RawView, RepairView, Role, SideLine,
};
use crate::tui::keymap::Tab;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// Which tab, scrolled how far, with which error current.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The tab shown.
    pub tab: Tab,
    /// Its scroll, in lines (clamped to the content), and where the drawing says how far
    /// it can go.
    pub scroll: Scroll<'a>,
    /// The current error (highlighted in the Proposal and Contract tabs).
    pub error: usize,
}

/// A tab's scroll: the first line shown (clamped to the content when drawn), and a cell
/// the drawing sets to the last line it can start at, so that keys move from where the
/// view is, not from past its end (`DetailPane::drawn_most`).
#[derive(Debug, Clone, Copy)]
pub struct Scroll<'a> {
    /// The first line asked for.
    pub at: usize,
    /// Set by the drawing: the most `at` can usefully be.
    pub most: &'a std::cell::Cell<usize>,
}

/// The models of the tabs that are not the capture's own detail.
#[derive(Clone, Copy)]
pub struct Models<'a> {
    /// The session's flips (the History tab).
    pub history: &'a History,
    /// The selected capture's chain (the Chain tab).
    pub chain: &'a crate::tui::chain::ChainTab,
}

/// Draws tab `v.tab` of the detail `d` into `r` (`m`: the models of the History and Chain
/// tabs).
pub fn draw(f: &mut Frame, r: Rect, t: &Theme, d: &Detail, v: View<'_>, m: Models<'_>) {
    let s = v.scroll;
    match v.tab {
        Tab::Diff => draw_diff(f, r, t, &d.diff, s),
        Tab::Proposal => draw_proposal(f, r, t, &d.proposal, s, v.error),
        Tab::Raw => draw_raw(f, r, t, &d.raw, s),
        Tab::Response => scrolled(f, r, role_lines(t, &d.response), s, true),
        Tab::Contract => draw_contract(f, r, t, d, s, v.error),
        Tab::Context => scrolled(f, r, role_lines(t, &d.context), s, false),
        Tab::Feedback => scrolled(f, r, role_lines(t, &d.feedback), s, true),
        Tab::History => draw_history(f, r, t, m.history, &d.source, s),
        Tab::Chain => scrolled(f, r, role_lines(t, &m.chain.lines), s, true),
        Tab::Repair => draw_repair(f, r, t, &d.repair_tab, s),
    }
}

/// A side of the Repair tab: each line's sign, then its pieces, the touched ones (and the
/// sign) in `touched`.
fn side_lines(lines: &[SideLine], touched: Style) -> Vec<Line<'_>> {
    lines
        .iter()
        .map(|l| {
            let mut spans = vec![Span::styled(
                l.sign.to_string(),
                if l.sign == ' ' { Style::new() } else { touched },
            )];
            spans.extend(
                l.pieces.iter().map(|(s, m)| {
                    Span::styled(s.as_str(), if *m { touched } else { Style::new() })
                }),
            );
            Line::from(spans)
        })
        .collect()
}

/// The Repair tab: the repair and its would-be outcome, what changed, then the original
/// (left) beside the repaired copy (right), each line signed (`-` dropped or removed, `~`
/// changed, `+` added) and its touched text highlighted; both columns wrap and scroll
/// together by `scroll` lines.
pub fn draw_repair(
    f: &mut Frame,
    r: Rect,
    t: &Theme,
    view: &Result<RepairView, String>,
    scroll: Scroll<'_>,
) {
    let v = match view {
        Err(m) => return message(t, f, r, m),
        Ok(v) => v,
    };
    side_by_side(
        f,
        r,
        t,
        role_lines(t, &v.lines),
        (&v.original_title, &v.copy_title),
        |_, _| {
            (
                side_lines(&v.original, t.removed()),
                side_lines(&v.copy, t.added()),
            )
        },
        scroll,
        true,
    );
}

/// A heading (wrapped, taking what it needs, at most half of `r`), then two titled columns
/// side by side with a `│` rule between them; both columns scroll together by `scroll` lines
/// and wrap when `wrap`. The layout of the Diff and Repair tabs and of the Contract tab's
/// drift view.
/// `columns` makes the two columns' lines for their widths (left, right).
#[allow(clippy::too_many_arguments)]
fn side_by_side<'a>(
    f: &mut Frame,
    r: Rect,
    t: &Theme,
    head: Vec<Line<'_>>,
    (left_title, right_title): (&str, &str),
    columns: impl FnOnce(u16, u16) -> (Vec<Line<'a>>, Vec<Line<'a>>),
    scroll: Scroll<'_>,
    wrap: bool,
) {
    // the heading wrapped under its own text; cut to the rows it has with `…`
    let mut rows: Vec<Line> = head
        .iter()
        .flat_map(|l| super::wrap_line(l, r.width as usize))
        .collect();
    let h = (rows.len() as u16).min(r.height / 2);
    if rows.len() > h as usize {
        rows.truncate(h as usize);
        if let Some(last) = rows.pop() {
            rows.push(super::cut_after(last, r.width as usize));
        }
    }
    let [top, titles, body] = Layout::vertical([
        Constraint::Length(h),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(r);
    f.render_widget(Paragraph::new(rows), top);
    let halves = || {
        Layout::horizontal([
            Constraint::Fill(1),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
    };
    let [lt, _, rt] = halves().areas(titles);
    let [lb, sep, rb] = halves().areas(body);
    // a title wider than its column is cut with `…`
    for (title, area) in [(left_title, lt), (right_title, rt)] {
        let title = super::pad(title, area.width as usize)
            .trim_end()
            .to_string();
        f.render_widget(Paragraph::new(Span::styled(title, t.bold())), area);
    }
    let (left, right) = columns(lb.width, rb.width);
    scrolled(f, lb, left, scroll, wrap);
    // the two columns scroll together, as far as the longer one goes
    let left_most = scroll.most.get();
    f.render_widget(
        Paragraph::new(vec![
            Line::from(Span::styled("│", t.border()));
            body.height as usize
        ]),
        sep,
    );
    scrolled(f, rb, right, scroll, wrap);
    scroll.most.set(scroll.most.get().max(left_most));
}

/// `lines` in `r`, scrolled by `scroll` rows (never past the last page: at the end the
/// last row is at the bottom of `r`), wrapped when `wrap`, else each line wider than `r`
/// cut with `…`.
fn scrolled(f: &mut Frame, r: Rect, lines: Vec<Line<'_>>, scroll: Scroll<'_>, wrap: bool) {
    let p = if wrap {
        Paragraph::new(lines).wrap(Wrap { trim: false })
    } else {
        let width = r.width as usize;
        Paragraph::new(
            lines
                .into_iter()
                .map(|l| super::fit_line(l, width))
                .collect::<Vec<_>>(),
        )
    };
    // the rows drawn (a wrapped line takes several)
    let most = p.line_count(r.width).saturating_sub(r.height as usize);
    scroll.most.set(most);
    let s = scroll.at.min(most).min(u16::MAX as usize) as u16;
    f.render_widget(p.scroll((s, 0)), r);
}

/// A pretty JSON view's lines, numbered, the marked pointers highlighted (the `current`
/// error's more strongly).
fn json_lines<'a>(t: &Theme, j: &'a JsonView, current: usize) -> Vec<Line<'a>> {
    let gutter = j.lines.len().to_string().len().max(3);
    j.lines
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let style = match j.mark_of(i, current) {
                Some(true) => t.current(),
                Some(false) => t.highlight(),
                None => Style::new(),
            };
            Line::from(vec![
                Span::styled(format!("{:>gutter$} ", i + 1), t.dim()),
                Span::styled(s.as_str(), style),
            ])
        })
        .collect()
}

/// Styled text lines.
fn role_lines<'a>(t: &Theme, lines: &'a [(String, Role)]) -> Vec<Line<'a>> {
    lines
        .iter()
        .map(|(s, r)| Line::from(Span::styled(s.as_str(), role_style(t, *r))))
        .collect()
}

/// The style of a line of `role`.
fn role_style(t: &Theme, role: Role) -> Style {
    match role {
        Role::Heading => t.bold(),
        Role::Text => Style::new(),
        Role::Dim => t.dim(),
        Role::Highlight => t.highlight(),
        Role::Added => t.pass(),
        Role::Removed => t.fail(),
    }
}

/// The Diff tab: the proposal and the confirmed intent side by side.
fn draw_diff(
    f: &mut Frame,
    r: Rect,
    t: &Theme,
    diff: &Result<DiffView, String>,
    scroll: Scroll<'_>,
) {
    let diff = match diff {
        Err(m) => return message(t, f, r, m),
        Ok(diff) => diff,
    };
    let note = match &diff.compared {
        Some(false) => Line::from(vec![
            Span::raw(" the proposal differs from the confirmed intent at "),
            Span::styled(diff.mismatches.join(", "), t.highlight()),
        ]),
        Some(true) => Line::from(Span::styled(
            " the proposal agrees with the confirmed intent",
            t.pass(),
        )),
        None => Line::from(Span::styled(
            " not compared (decided before the intent check): for reference only",
            t.dim(),
        )),
    };
    // each side's text wrapped to its column under its own indentation (a value is never
    // cut: `900` must not stand for `9000`), a row of the diff as many screen rows on both
    // sides as its longer side needs, so the two stay level
    let columns = |left_w: u16, right_w: u16| {
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for row in &diff.rows {
            let side = |is_left: bool, width: u16| -> Vec<Line> {
                let text = if is_left { &row.left } else { &row.right };
                let base = match (row.kind, is_left) {
                    (DiffKind::Same, _) => Style::new(),
                    (DiffKind::LeftOnly, true) => t.dim(),
                    (DiffKind::Changed, true) => t.removed(),
                    (DiffKind::Changed, false) | (DiffKind::RightOnly, false) => t.added(),
                    _ => Style::new(),
                };
                let style = if row.mismatch && text.is_some() {
                    t.highlight()
                } else {
                    base
                };
                let sign = match (row.kind, is_left, text.is_some()) {
                    (_, _, false) => " ",
                    (DiffKind::Same | DiffKind::LeftOnly, _, _) => " ",
                    (_, true, _) => "-",
                    (_, false, _) => "+",
                };
                let text = text.as_deref().unwrap_or("");
                let room = (width as usize).saturating_sub(1);
                let indent = layout::continuation_indent(text, 0);
                let pad = layout::wrap_indent(room, indent);
                layout::wrap_ranges(text, room, indent)
                    .into_iter()
                    .enumerate()
                    .map(|(k, range)| {
                        let lead = if k == 0 {
                            Span::styled(sign, base)
                        } else {
                            Span::raw(" ".repeat(1 + pad))
                        };
                        Line::from(vec![lead, Span::styled(&text[range], style)])
                    })
                    .collect()
            };
            let (mut l, mut r) = (side(true, left_w), side(false, right_w));
            let n = l.len().max(r.len());
            l.resize(n, Line::from(""));
            r.resize(n, Line::from(""));
            left.extend(l);
            right.extend(r);
        }
        (left, right)
    };
    side_by_side(
        f,
        r,
        t,
        vec![note],
        (" proposal", " confirmed intent"),
        columns,
        scroll,
        false,
    );
}

/// The Proposal tab: the proposal as pretty JSON.
fn draw_proposal(
    f: &mut Frame,
    r: Rect,
    t: &Theme,
    proposal: &Result<JsonView, String>,
    scroll: Scroll<'_>,
    error: usize,
) {
    match proposal {
        Err(m) => message(t, f, r, m),
        Ok(j) => scrolled(f, r, json_lines(t, j, error), scroll, false),
    }
}

/// The Raw tab: the output as captured, hard-wrapped, the parse error marked.
fn draw_raw(f: &mut Frame, r: Rect, t: &Theme, raw: &Result<RawView, String>, scroll: Scroll<'_>) {
    let raw = match raw {
        Err(m) => return message(t, f, r, m),
        Ok(raw) => raw,
    };
    let (rows, _) = raw_rows(raw, r.width);
    let mut lines: Vec<Line> = rows
        .iter()
        .map(|row| match row {
            RawRow::Text(gutter, pieces) => {
                let mut spans = vec![Span::styled(gutter.clone(), t.dim())];
                spans.extend(pieces.iter().map(|(s, m)| {
                    Span::styled(s.as_str(), if *m { t.mark() } else { Style::new() })
                }));
                Line::from(spans)
            }
            RawRow::Caret(col) => {
                Line::from(Span::styled(format!("{}^", " ".repeat(*col)), t.fail()))
            }
        })
        .collect();
    if let Some((at, msg)) = &raw.error {
        lines.push(Line::from(""));
        lines.push(Line::from(vec![
            Span::styled(format!("▲ {at} "), t.fail()),
            Span::raw(msg.as_str()),
        ]));
    }
    scrolled(f, r, lines, scroll, true);
}

/// The Contract tab: the rules, then the schema; for a capture whose request sent a
/// schema beside the server contract, the drift view ([`draw_drift`]).
fn draw_contract(f: &mut Frame, r: Rect, t: &Theme, d: &Detail, scroll: Scroll<'_>, error: usize) {
    let c = match &d.contract {
        Err(m) => return message(t, f, r, m),
        Ok(c) => c,
    };
    if let Some(dv) = &c.drift {
        return draw_drift(f, r, t, dv, scroll);
    }
    // wrapped, each continuation row indented under its line's own indentation, the
    // error's keyword scrolled to by its row (`DetailPane::scroll_to_error`)
    let width = r.width as usize;
    let rules = c.rules.len();
    let mut rows = Vec::new();
    for (i, (text, gutter)) in layout::contract_lines(c).iter().enumerate() {
        // the style of the line's text past its gutter
        let style = if i < rules {
            role_style(t, c.rules[i].1)
        } else if i == rules + 1 {
            t.bold()
        } else if i > rules + 1 {
            match c.schema.mark_of(i - rules - 2, error) {
                Some(true) => t.current(),
                Some(false) => t.highlight(),
                None => Style::new(),
            }
        } else {
            Style::new()
        };
        let indent = layout::continuation_indent(text, *gutter);
        let pad = layout::wrap_indent(width, indent);
        for (k, range) in layout::wrap_ranges(text, width, indent)
            .into_iter()
            .enumerate()
        {
            let mut spans = Vec::new();
            if k > 0 {
                spans.push(Span::raw(" ".repeat(pad)));
            }
            if range.start < *gutter {
                spans.push(Span::styled(
                    text[range.start..range.end.min(*gutter)].to_string(),
                    t.dim(),
                ));
            }
            if range.end > *gutter {
                spans.push(Span::styled(
                    text[range.start.max(*gutter)..range.end].to_string(),
                    style,
                ));
            }
            rows.push(Line::from(spans));
        }
    }
    scrolled(f, r, rows, scroll, false);
}

/// The drift view of the Contract tab: its heading and finding lines (wrapped), then the
/// sent schema (left) and the server contract (right) side by side, each numbered, the
/// differing pointers highlighted; both columns scroll together by `scroll` lines.
pub fn draw_drift(f: &mut Frame, r: Rect, t: &Theme, d: &DriftView, scroll: Scroll<'_>) {
    // no current error: every differing pointer is marked alike
    side_by_side(
        f,
        r,
        t,
        role_lines(t, &d.lines),
        (&d.sent_title, &d.server_title),
        |_, _| {
            (
                json_lines(t, &d.sent, usize::MAX),
                json_lines(t, &d.server, usize::MAX),
            )
        },
        scroll,
        false,
    );
}

/// The History tab: this capture's flips this session.
fn draw_history(f: &mut Frame, r: Rect, t: &Theme, h: &History, source: &str, scroll: Scroll<'_>) {
    let lines = history_lines(t, h, source);
    if lines.is_empty() {
        message(
            t,
            f,
            r,
            "no verdict flips this session: edit the capture, its schema or its rules and the flips show here",
        );
    } else {
        scrolled(f, r, lines, scroll, true);
    }
}

/// The History tab's lines: this capture's flips, newest first (when, from, to, the cause).
fn history_lines(t: &Theme, h: &History, source: &str) -> Vec<Line<'static>> {
    let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
    let mut lines = Vec::new();
    for e in h.of(source) {
        let fl = &e.flip;
        lines.push(Line::from(vec![
            Span::styled(format!(" {} ", e.at), t.dim()),
            Span::styled(format!("↺ {}", fl.kind.title()), t.flip()),
        ]));
        lines.push(Line::from(vec![
            Span::styled("   from ", t.dim()),
            Span::styled(
                format!("{} {}", fl.old.decision.glyph(), esc(&fl.old.label())),
                t.decision(fl.old.decision),
            ),
            Span::styled(format!(" ({})", fl.old.decision.as_str()), t.dim()),
        ]));
        lines.push(Line::from(vec![
            Span::styled("     to ", t.dim()),
            Span::styled(
                format!("{} {}", fl.new.decision.glyph(), esc(&fl.new.label())),
                t.decision(fl.new.decision),
            ),
            Span::styled(format!(" ({})", fl.new.decision.as_str()), t.dim()),
        ]));
        if let Some(c) = &e.cause {
            lines.push(Line::from(vec![
                Span::styled("     by ", t.dim()),
                Span::raw(format!("change to {}", esc(c))),
            ]));
        }
        if let Some(err) = &fl.cause {
            let ptr = err
                .pointer
                .as_deref()
                .map(|p| format!("{} ", esc(crate::tui::filter::pointer_label(p))))
                .unwrap_or_default();
            lines.push(Line::from(vec![
                Span::styled("    why ", t.dim()),
                Span::styled(ptr, t.bold()),
                Span::raw(esc(&err.message)),
            ]));
        }
        lines.push(Line::from(""));
    }
    lines
}
