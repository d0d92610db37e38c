//! Drawing: [`draw`] is a pure function of the [`App`]. It builds only what is visible
//! (the list renders the rows on screen, never the whole workspace), does no I/O and
//! validates nothing. [`layout`] is shared with the model, so mouse clicks and scrolling
//! use the very rectangles that were drawn.

use crate::core::verdict::Stage;
use crate::report::human::glyph;
use crate::tui::app::{App, Focus, WatchState};
use crate::tui::detail::{DiffKind, JsonView, Mark, Role};
use crate::tui::keymap::{Keymap, Tab};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Clear, LineGauge, Paragraph, Row, Table, Wrap};

/// The smallest terminal the screen is drawn on (columns, rows).
pub const MIN_SIZE: (u16, u16) = (60, 15);

/// The rectangles of the screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Areas {
    /// Two header lines.
    pub header: Rect,
    /// The capture list or the triage tree, with its border.
    pub list: Rect,
    /// The detail pane, with its border.
    pub detail: Rect,
    /// The stage strip inside the detail pane.
    pub strip: Rect,
    /// The error table.
    pub errors: Rect,
    /// The tab bar.
    pub tabs: Rect,
    /// The tab's content.
    pub content: Rect,
    /// The footer line.
    pub footer: Rect,
}

/// Whether the terminal is below [`MIN_SIZE`].
pub fn too_small(area: Rect) -> bool {
    area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1
}

/// How many rows the error table shows for `n` errors (header included).
fn error_rows(n: usize) -> u16 {
    if n == 0 { 1 } else { (n.min(4) + 3) as u16 }
}

/// The screen's rectangles for the model's terminal size.
pub fn layout(app: &App) -> Areas {
    let area = app.area;
    if too_small(area) {
        return Areas::default();
    }
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let left = (body.width * 2 / 5).clamp(30, 64);
    let [list, detail] =
        Layout::horizontal([Constraint::Length(left), Constraint::Fill(1)]).areas(body);
    let inner = Block::bordered().inner(detail);
    let n = app.detail.as_ref().map_or(0, |d| d.errors.len());
    let [strip, errors, tabs, content] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(error_rows(n)),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    Areas {
        header,
        list,
        detail,
        strip,
        errors,
        tabs,
        content,
        footer,
    }
}

/// Draws the whole screen.
pub fn draw(app: &App, f: &mut Frame) {
    let area = f.area();
    if too_small(area) || area != app.area && too_small(app.area) {
        draw_too_small(f, area);
        return;
    }
    let l = layout(app);
    let t = app.theme;
    draw_header(app, f, l.header);
    if app.triage {
        draw_tree(app, f, l.list);
    } else {
        draw_list(app, f, l.list);
    }
    draw_detail(app, f, &l);
    draw_footer(app, f, l.footer);
    if app.review {
        draw_review(app, f, area);
    }
    if app.help {
        draw_help(&t, &app.keymap, f, area);
    }
}

fn draw_too_small(f: &mut Frame, area: Rect) {
    let lines = vec![
        Line::from("terminal too small"),
        Line::from(format!(
            "{}x{}, verdict needs at least {}x{}",
            area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
        )),
        Line::from("enlarge the window, or q to quit"),
    ];
    let y = area.height.saturating_sub(3) / 2;
    let r = Rect::new(
        area.x,
        area.y + y,
        area.width,
        area.height.saturating_sub(y).min(3),
    );
    f.render_widget(
        Paragraph::new(lines)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        r,
    );
}

fn draw_header(app: &App, f: &mut Frame, r: Rect) {
    let t = app.theme;
    let [l1, l2] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(r);
    let (state, style) = match app.watch {
        WatchState::Live => ("● live", t.pass()),
        WatchState::Paused => ("‖ paused", t.warn()),
        WatchState::Off => ("○ not watching", t.dim()),
    };
    let contracts = app
        .workspace
        .as_ref()
        .map_or(0, |w| w.contracts.by_name.len());
    let mut spans = vec![
        Span::styled(
            " verdict ",
            t.bold().add_modifier(ratatui::style::Modifier::REVERSED),
        ),
        Span::raw("  "),
        Span::styled(
            crate::core::text::escape_control(&app.label).into_owned(),
            t.bold(),
        ),
        Span::raw("  "),
        Span::styled(state, style),
        Span::raw("  "),
        Span::raw(format!(
            "{contracts} contract{}",
            if contracts == 1 { "" } else { "s" }
        )),
        Span::styled("  ·  ", t.dim()),
        Span::styled(
            format!(
                "{} warning{}",
                app.warnings,
                if app.warnings == 1 { "" } else { "s" }
            ),
            if app.warnings > 0 {
                t.warn()
            } else {
                Style::new()
            },
        ),
    ];
    if !app.pending.is_empty() {
        spans.push(Span::styled("  ·  ", t.dim()));
        spans.push(Span::styled(
            format!(
                "{} change{} waiting",
                app.pending.len(),
                if app.pending.len() == 1 { "" } else { "s" }
            ),
            t.warn(),
        ));
    }
    if !app.flipped.is_empty() {
        spans.push(Span::styled("  ·  ", t.dim()));
        spans.push(Span::styled(
            format!("↺ {} flipped", app.flipped.len()),
            t.flip(),
        ));
    }
    let p = &app.progress;
    let right = if p.running {
        format!("validating {}/{} ", p.done, p.total)
    } else if let Some(at) = &app.last_change {
        format!("last change {at} ")
    } else if let Some(e) = p.elapsed {
        format!("validated in {} ms ", e.as_millis())
    } else {
        String::new()
    };
    let left = Line::from(spans);
    f.render_widget(Paragraph::new(left.clone()), l1);
    // the time goes only where it does not overwrite the left part
    if left.width() + right.chars().count() < l1.width as usize {
        f.render_widget(
            Paragraph::new(Span::styled(right, t.dim())).alignment(Alignment::Right),
            l1,
        );
    }
    let funnel = format!(" {}", app.summary.funnel_line());
    if p.running {
        let gw = 24.min(l2.width / 3);
        let [a, b] = Layout::horizontal([Constraint::Fill(1), Constraint::Length(gw)]).areas(l2);
        f.render_widget(Paragraph::new(funnel), a);
        let ratio = if p.total == 0 {
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
    } else if let Some(c) = &app.contract_change {
        let note = contract_note(c);
        let nw = (note.chars().count() as u16 + 1).min(l2.width / 2);
        let [a, b] = Layout::horizontal([Constraint::Fill(1), Constraint::Length(nw)]).areas(l2);
        f.render_widget(Paragraph::new(funnel), a);
        f.render_widget(
            Paragraph::new(Span::styled(note, t.flip())).alignment(Alignment::Right),
            b,
        );
    } else {
        f.render_widget(Paragraph::new(funnel), l2);
    }
}

/// `refund-v1 changed: 3 newly failing, 1 newly passing` (escaped).
pub fn contract_note(c: &crate::tui::app::ContractChange) -> String {
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

fn pane(t: &Theme, title: Line<'static>, focused: bool) -> Block<'static> {
    Block::bordered().title(title).border_style(if focused {
        t.focus_border()
    } else {
        t.border()
    })
}

fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n > w {
        let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
        out.push('…');
        out
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

fn draw_list(app: &App, f: &mut Frame, r: Rect) {
    let t = app.theme;
    let mut title = vec![Span::styled(" Captures ", t.bold())];
    if app.view.len() != app.store.len() {
        title.push(Span::raw(format!(
            "{}/{} ",
            app.view.len(),
            app.store.len()
        )));
    } else {
        title.push(Span::raw(format!("{} ", app.store.len())));
    }
    if !app.filter.is_empty() {
        title.push(Span::styled(
            format!("/{} ", crate::core::text::escape_control(&app.filter)),
            t.key(),
        ));
    }
    if let Some(p) = app.filter_progress() {
        title.push(Span::styled(format!("filtering {p}% "), t.dim()));
    }
    let block = pane(&t, Line::from(title), app.focus == Focus::List);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let h = inner.height as usize;
    if app.view.is_empty() {
        let msg = if app.store.is_empty() {
            if app.progress.running {
                "validating…"
            } else {
                "no captures in this workspace"
            }
        } else {
            "no capture matches the filter (Esc clears it)"
        };
        f.render_widget(Paragraph::new(Span::styled(msg, t.dim())), inner);
        return;
    }
    let reason_w = app
        .view
        .iter()
        .skip(app.offset)
        .take(h)
        .map(|&i| {
            app.store
                .kind(&app.store.rows[i as usize])
                .reason
                .as_ref()
                .map_or(0, |r| r.as_str().chars().count())
        })
        .max()
        .unwrap_or(0)
        .min(19)
        .min(inner.width.saturating_sub(14) as usize / 2);
    let id_w = (inner.width as usize).saturating_sub(3 + 8 + 1 + reason_w + 1);
    let lines: Vec<Line> = app
        .view
        .iter()
        .enumerate()
        .skip(app.offset)
        .take(h)
        .map(|(pos, &i)| {
            let row = &app.store.rows[i as usize];
            let v = app.store.kind(row);
            let id = app.store.id(row);
            let ds = t.decision(v.decision);
            let reason = v.reason.as_ref().map_or("", |r| r.as_str());
            let flipped = row.flags & crate::tui::store::FLIPPED != 0;
            let mut line = Line::from(vec![
                Span::styled(if flipped { "↺" } else { " " }, t.flip()),
                Span::styled(format!("{} ", glyph(v.decision)), ds),
                Span::styled(pad(v.stage.as_str(), 8), ds),
                Span::raw(" "),
                Span::styled(
                    pad(&crate::core::text::escape_control(reason), reason_w),
                    ds,
                ),
                Span::raw(" "),
            ]);
            if v.unmet() && id_w > 4 {
                // like `check`'s NOT AS EXPECTED: the verdict misses the capture's `expect`
                line.spans.push(Span::raw(pad(
                    &crate::core::text::escape_control(id),
                    id_w - 2,
                )));
                line.spans.push(Span::styled(" ≠", t.fail()));
            } else {
                line.spans
                    .push(Span::raw(pad(&crate::core::text::escape_control(id), id_w)));
            }
            if pos == app.cursor && app.gone.is_none() {
                line = line.patch_style(t.selected());
            }
            line
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_tree(app: &App, f: &mut Frame, r: Rect) {
    let t = app.theme;
    let block = pane(
        &t,
        Line::from(vec![
            Span::styled(" Triage ", t.bold()),
            Span::styled("stage > reason > pointer ", t.dim()),
        ]),
        app.focus == Focus::List,
    );
    let inner = block.inner(r);
    f.render_widget(block, r);
    let w = inner.width as usize;
    let lines: Vec<Line> = app
        .tree
        .iter()
        .enumerate()
        .skip(app.tree_offset)
        .take(inner.height as usize)
        .map(|(i, n)| {
            let indent = "  ".repeat(n.depth as usize);
            let count = format!("{} ", n.count);
            let style = match n.depth {
                0 => t.bold(),
                1 => Style::new(),
                _ => t.dim(),
            };
            let marker = if n.depth == 0 { "▾ " } else { "" };
            let left = format!(" {indent}{marker}{}", n.label);
            let room = w.saturating_sub(count.chars().count());
            let left = pad(&left, room);
            let color = if n.stage == Stage::Ready {
                t.pass()
            } else {
                Style::new()
            };
            let mut line = Line::from(vec![
                Span::styled(left, style.patch(color)),
                Span::styled(count, t.bold()),
            ]);
            if i == app.tree_cursor {
                line = line.patch_style(t.selected());
            }
            line
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// The tab bar's labels (` 1 Diff `...), in order, short ones when `width` is too narrow
/// for the full titles, and only numbers (the `active` tab keeps its short title) when it
/// is too narrow even for those; shared by drawing and mouse clicks.
fn tab_labels(width: u16, active: Tab) -> Vec<(Tab, String)> {
    let full: Vec<(Tab, String)> = Tab::ALL
        .into_iter()
        .enumerate()
        .map(|(i, t)| (t, format!(" {} {} ", i + 1, t.title())))
        .collect();
    if full.iter().map(|(_, l)| l.chars().count()).sum::<usize>() <= width as usize {
        return full;
    }
    let short: Vec<(Tab, String)> = Tab::ALL
        .into_iter()
        .enumerate()
        .map(|(i, t)| (t, format!(" {} {} ", i + 1, t.short_title())))
        .collect();
    if short.iter().map(|(_, l)| l.chars().count()).sum::<usize>() <= width as usize {
        return short;
    }
    Tab::ALL
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            if t == active {
                (t, format!(" {} {} ", i + 1, t.short_title()))
            } else {
                (t, format!(" {} ", i + 1))
            }
        })
        .collect()
}

/// The tab under column `x` of the tab bar `r`.
pub fn tab_at(r: Rect, x: u16, active: Tab) -> Option<Tab> {
    let mut at = r.x;
    for (t, label) in tab_labels(r.width, active) {
        let w = label.chars().count() as u16;
        if x >= at && x < at + w {
            return Some(t);
        }
        at += w;
    }
    None
}

fn draw_detail(app: &App, f: &mut Frame, l: &crate::tui::ui::Areas) {
    let t = app.theme;
    let focused = app.focus == Focus::Detail;
    if let Some(g) = &app.gone {
        let block = pane(&t, Line::from(" Deleted "), focused);
        let inner = block.inner(l.detail);
        f.render_widget(block, l.detail);
        let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
        let mut lines = vec![
            Line::from(Span::styled(
                format!(" {} was deleted", esc(&g.id)),
                t.fail(),
            )),
            Line::from(format!(" {} no longer exists on disk", esc(&g.source))),
        ];
        if let Some(c) = &g.cause {
            lines.push(Line::from(Span::styled(
                format!(" (change to {})", esc(c)),
                t.dim(),
            )));
        }
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled(
            " j/k or a click selects another capture",
            t.dim(),
        )));
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        return;
    }
    let Some(d) = &app.detail else {
        let block = pane(&t, Line::from(" Detail "), focused);
        let inner = block.inner(l.detail);
        f.render_widget(block, l.detail);
        let id = app
            .current_id()
            .map(|id| crate::core::text::escape_control(id).into_owned())
            .unwrap_or_default();
        let msg = if app.loading.is_some() {
            format!("loading {id} from disk…")
        } else if app.missing.is_some() {
            format!("{id}: the record is no longer in its file (a re-validation follows)")
        } else if app.progress.running {
            "validating…".to_string()
        } else {
            "no capture selected".to_string()
        };
        f.render_widget(Paragraph::new(Span::styled(msg, t.dim())), inner);
        return;
    };
    let block = pane(
        &t,
        Line::from(format!(" {} ", d.title)).style(t.bold()),
        focused,
    );
    f.render_widget(block, l.detail);
    // stage strip and decision
    let mut spans = vec![Span::raw(" ")];
    for (i, (s, m)) in d.strip.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" > ", t.dim()));
        }
        let (g, st) = match m {
            Mark::Pass => ("✓", t.pass()),
            Mark::Fail => ("✗", t.fail()),
            Mark::NotReached => ("·", t.dim()),
        };
        spans.push(Span::styled(
            format!("{} ", s.as_str()),
            if *m == Mark::NotReached {
                t.dim()
            } else {
                Style::new()
            },
        ));
        spans.push(Span::styled(g, st));
    }
    let decision = format!(" {} {} ", glyph(d.decision), d.decision.as_str());
    let dw = (decision.chars().count() as u16).min(l.strip.width);
    let [left, right] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(dw)]).areas(l.strip);
    f.render_widget(Paragraph::new(Line::from(spans)), left);
    f.render_widget(
        Paragraph::new(Span::styled(decision, t.decision(d.decision))).alignment(Alignment::Right),
        right,
    );
    draw_errors(app, f, l.errors);
    // tabs
    let mut spans = Vec::new();
    for (tab, label) in tab_labels(l.tabs.width, app.tab) {
        spans.push(Span::styled(
            label,
            if tab == app.tab {
                t.selected().patch(t.bold())
            } else {
                t.dim()
            },
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), l.tabs);
    draw_tab(app, f, l.content);
}

fn draw_errors(app: &App, f: &mut Frame, r: Rect) {
    let t = app.theme;
    let Some(d) = &app.detail else { return };
    if d.errors.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled(" no errors: every stage passed", t.pass())),
            r,
        );
        return;
    }
    let [r, full] = Layout::vertical([Constraint::Fill(1), Constraint::Length(2)]).areas(r);
    if let Some(e) = d.errors.get(app.error) {
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(" › ", t.fail()),
                Span::raw(e.message.as_str()),
            ]))
            .wrap(Wrap { trim: true }),
            full,
        );
    }
    let shown = (r.height as usize).saturating_sub(1).max(1);
    let first = app.error.saturating_sub(shown - 1);
    let width = |get: fn(&crate::tui::detail::ErrorRow) -> &str, min: usize, cap: usize| -> u16 {
        d.errors
            .iter()
            .map(|e| get(e).chars().count())
            .max()
            .unwrap_or(0)
            .clamp(min, cap) as u16
    };
    let widths = [
        Constraint::Length(1),
        Constraint::Length(width(|e| &e.reason, 6, 20)),
        Constraint::Length(width(|e| &e.pointer, 7, 18)),
        Constraint::Length(width(|e| &e.location, 8, 34)),
        Constraint::Length(width(|e| &e.at, 2, 7)),
        Constraint::Fill(1),
    ];
    let header = Row::new(["", "reason", "pointer", "location", "at", "message"]).style(t.dim());
    let rows: Vec<Row> = d
        .errors
        .iter()
        .enumerate()
        .skip(first)
        .take(shown)
        .map(|(i, e)| {
            let cur = i == app.error && d.errors.len() > 1;
            let row = Row::new(vec![
                Cell::from(if cur { "›" } else { " " }),
                Cell::from(e.reason.clone()).style(t.fail()),
                Cell::from(e.pointer.clone()).style(t.bold()),
                Cell::from(e.location.clone()).style(t.dim()),
                Cell::from(e.at.clone()),
                Cell::from(e.message.clone()),
            ]);
            if cur { row.style(t.bold()) } else { row }
        })
        .collect();
    let mut title_note = String::new();
    if d.errors.len() > shown {
        title_note = format!("{}/{}", app.error + 1, d.errors.len());
    }
    f.render_widget(Table::new(rows, widths).header(header).column_spacing(1), r);
    if !title_note.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled(title_note, t.dim())).alignment(Alignment::Right),
            Rect::new(r.x, r.y, r.width, 1),
        );
    }
}

fn clamp_scroll(scroll: usize, len: usize) -> u16 {
    scroll.min(len.saturating_sub(1)).min(u16::MAX as usize) as u16
}

fn json_lines<'a>(t: &Theme, j: &'a JsonView, current: usize, offset: usize) -> Vec<Line<'a>> {
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
                Span::styled(format!("{:>gutter$} ", i + 1 + offset), t.dim()),
                Span::styled(s.as_str(), style),
            ])
        })
        .collect()
}

fn role_lines<'a>(t: &Theme, lines: &'a [(String, Role)]) -> Vec<Line<'a>> {
    lines
        .iter()
        .map(|(s, r)| {
            let style = match r {
                Role::Heading => t.bold(),
                Role::Text => Style::new(),
                Role::Dim => t.dim(),
                Role::Highlight => t.highlight(),
            };
            Line::from(Span::styled(s.as_str(), style))
        })
        .collect()
}

fn message(t: &Theme, f: &mut Frame, r: Rect, s: &str) {
    f.render_widget(
        Paragraph::new(Span::styled(s.to_string(), t.dim())).wrap(Wrap { trim: true }),
        r,
    );
}

fn draw_tab(app: &App, f: &mut Frame, r: Rect) {
    let t = app.theme;
    let Some(d) = &app.detail else { return };
    match app.tab {
        Tab::Diff => match &d.diff {
            Err(m) => message(&t, f, r, m),
            Ok(diff) => {
                let [top, body] =
                    Layout::vertical([Constraint::Length(2), Constraint::Fill(1)]).areas(r);
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
                let [nr, heads] =
                    Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(top);
                f.render_widget(Paragraph::new(note), nr);
                let [lh, _, rh] = Layout::horizontal([
                    Constraint::Fill(1),
                    Constraint::Length(1),
                    Constraint::Fill(1),
                ])
                .areas(heads);
                let [lb, sep, rb] = Layout::horizontal([
                    Constraint::Fill(1),
                    Constraint::Length(1),
                    Constraint::Fill(1),
                ])
                .areas(body);
                f.render_widget(Paragraph::new(Span::styled(" proposal", t.bold())), lh);
                f.render_widget(
                    Paragraph::new(Span::styled(" confirmed intent", t.bold())),
                    rh,
                );
                let scroll = clamp_scroll(app.scroll, diff.rows.len());
                let side = |left: bool| -> Vec<Line> {
                    diff.rows
                        .iter()
                        .map(|row| {
                            let text = if left { &row.left } else { &row.right };
                            let base = match (row.kind, left) {
                                (DiffKind::Same, _) => Style::new(),
                                (DiffKind::Changed, true) | (DiffKind::LeftOnly, true) => {
                                    if row.kind == DiffKind::LeftOnly {
                                        t.dim()
                                    } else {
                                        t.removed()
                                    }
                                }
                                (DiffKind::Changed, false) | (DiffKind::RightOnly, false) => {
                                    t.added()
                                }
                                _ => Style::new(),
                            };
                            let style = if row.mismatch && text.is_some() {
                                t.highlight()
                            } else {
                                base
                            };
                            let sign = match (row.kind, left, text.is_some()) {
                                (_, _, false) => " ",
                                (DiffKind::Same | DiffKind::LeftOnly, _, _) => " ",
                                (_, true, _) => "-",
                                (_, false, _) => "+",
                            };
                            Line::from(vec![
                                Span::styled(sign, base),
                                Span::styled(text.as_deref().unwrap_or(""), style),
                            ])
                        })
                        .collect()
                };
                f.render_widget(Paragraph::new(side(true)).scroll((scroll, 0)), lb);
                f.render_widget(
                    Paragraph::new(vec![
                        Line::from(Span::styled("│", t.border()));
                        body.height as usize
                    ]),
                    sep,
                );
                f.render_widget(Paragraph::new(side(false)).scroll((scroll, 0)), rb);
            }
        },
        Tab::Proposal => match &d.proposal {
            Err(m) => message(&t, f, r, m),
            Ok(j) => {
                let lines = json_lines(&t, j, app.error, 0);
                let s = clamp_scroll(app.scroll, lines.len());
                f.render_widget(Paragraph::new(lines).scroll((s, 0)), r);
            }
        },
        Tab::Raw => match &d.raw {
            Err(m) => message(&t, f, r, m),
            Ok(raw) => {
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
                let s = clamp_scroll(app.scroll, lines.len());
                f.render_widget(
                    Paragraph::new(lines)
                        .wrap(Wrap { trim: false })
                        .scroll((s, 0)),
                    r,
                );
            }
        },
        Tab::Response => {
            let lines = role_lines(&t, &d.response);
            let s = clamp_scroll(app.scroll, lines.len());
            f.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .scroll((s, 0)),
                r,
            );
        }
        Tab::Contract => match &d.contract {
            Err(m) => message(&t, f, r, m),
            Ok(c) => {
                let mut lines = role_lines(&t, &c.rules);
                lines.push(Line::from(""));
                lines.push(Line::from(Span::styled(
                    format!("schema  {}", c.heading),
                    t.bold(),
                )));
                lines.extend(json_lines(&t, &c.schema, app.error, 0));
                let s = clamp_scroll(app.scroll, lines.len());
                f.render_widget(Paragraph::new(lines).scroll((s, 0)), r);
            }
        },
        Tab::Context => {
            let lines = role_lines(&t, &d.context);
            let s = clamp_scroll(app.scroll, lines.len());
            f.render_widget(Paragraph::new(lines).scroll((s, 0)), r);
        }
        Tab::Feedback => {
            let lines = role_lines(&t, &d.feedback);
            let s = clamp_scroll(app.scroll, lines.len());
            f.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .scroll((s, 0)),
                r,
            );
        }
        Tab::History => {
            let lines = history_lines(app, &d.source);
            if lines.is_empty() {
                message(
                    &t,
                    f,
                    r,
                    "no verdict flips this session: edit the capture, its schema or its rules and the flips show here",
                );
            } else {
                let s = clamp_scroll(app.scroll, lines.len());
                f.render_widget(
                    Paragraph::new(lines)
                        .wrap(Wrap { trim: false })
                        .scroll((s, 0)),
                    r,
                );
            }
        }
    }
}

/// The History tab: this capture's flips, newest first (when, from, to, the cause).
fn history_lines(app: &App, source: &str) -> Vec<Line<'static>> {
    let t = app.theme;
    let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
    let mut lines = Vec::new();
    for e in app.flips.iter().rev().filter(|e| e.flip.source == source) {
        let fl = &e.flip;
        lines.push(Line::from(vec![
            Span::styled(format!(" {} ", e.at), t.dim()),
            Span::styled(format!("↺ {}", flip_title(fl)), t.flip()),
        ]));
        lines.push(Line::from(vec![
            Span::styled("   from ", t.dim()),
            Span::styled(
                format!("{} {}", glyph(fl.old.decision), esc(&fl.old.label())),
                t.decision(fl.old.decision),
            ),
            Span::styled(format!(" ({})", fl.old.decision.as_str()), t.dim()),
        ]));
        lines.push(Line::from(vec![
            Span::styled("     to ", t.dim()),
            Span::styled(
                format!("{} {}", glyph(fl.new.decision), esc(&fl.new.label())),
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

/// `newly failing` / `newly passing` / `changed`; a capture with an expected outcome
/// (`expect`) passes when it meets it, so a verdict that became ready can be newly failing:
/// say so.
fn flip_title(fl: &crate::core::review::Flip) -> String {
    use crate::core::review::FlipKind;
    let ready = fl.new.decision == crate::core::verdict::Decision::ReadyForCommit;
    match fl.kind {
        FlipKind::NewlyFailing if ready => "newly failing its expected outcome".into(),
        FlipKind::NewlyPassing if !ready => "newly meeting its expected outcome".into(),
        k => k.title().into(),
    }
}

fn draw_review(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme;
    let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
    let w = 110.min(area.width.saturating_sub(2));
    let h = area.height.saturating_sub(4).max(5);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    let block = Block::bordered()
        .title(Span::styled(
            " Review: last schema or rules change ",
            t.bold(),
        ))
        .title_bottom(Line::from(Span::styled(" any key closes ", t.dim())).right_aligned())
        .border_style(t.focus_border());
    let inner = block.inner(r);
    f.render_widget(block, r);
    let Some(c) = &app.contract_change else {
        message(
            &t,
            f,
            inner,
            "no schema or rules file changed this session: save one and its flips show here",
        );
        return;
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!(" {} ", c.at), t.dim()),
            Span::styled(contract_note(c), t.flip()),
        ]),
        Line::from(Span::styled(
            format!(" files: {}", esc(&c.causes.join(", "))),
            t.dim(),
        )),
    ];
    for kind in crate::core::review::FlipKind::ALL {
        let flips: Vec<_> = c.flips.iter().filter(|e| e.flip.kind == kind).collect();
        if flips.is_empty() {
            continue;
        }
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled(
            format!(" {} ({})", kind.title(), flips.len()),
            t.bold(),
        )));
        for e in flips {
            let fl = &e.flip;
            let why = fl
                .cause
                .as_ref()
                .map(|err| {
                    let p = err
                        .pointer
                        .as_deref()
                        .map(|p| format!("{} ", crate::tui::filter::pointer_label(p)))
                        .unwrap_or_default();
                    esc(&format!("{p}{}", err.message))
                })
                .unwrap_or_default();
            lines.push(Line::from(vec![
                Span::raw(format!("   {} ", esc(&fl.id))),
                Span::styled(esc(&fl.old.label()), t.decision(fl.old.decision)),
                Span::styled(" → ", t.dim()),
                Span::styled(esc(&fl.new.label()), t.decision(fl.new.decision)),
                Span::styled(format!("  {why}"), t.dim()),
            ]));
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_footer(app: &App, f: &mut Frame, r: Rect) {
    let t = app.theme;
    if app.editing {
        let line = Line::from(vec![
            Span::styled(" /", t.key()),
            Span::raw(crate::core::text::escape_control(&app.filter).into_owned()),
            Span::styled("█", t.key()),
            Span::styled(
                "   Enter keep  Esc clear  stage: reason: decision: contract: pointer: flipped unmet  ! negates",
                t.dim(),
            ),
        ]);
        f.render_widget(Paragraph::new(line), r);
        return;
    }
    if let Some(s) = &app.status {
        f.render_widget(Paragraph::new(Span::styled(format!(" {s}"), t.warn())), r);
        return;
    }
    // drop hints from the middle (never help and quit) until the line fits
    let mut hs: Vec<(String, &str)> = app.keymap.hints();
    let width = |hs: &[(String, &str)]| -> usize {
        1 + hs
            .iter()
            .map(|(k, h)| k.chars().count() + h.chars().count() + 3)
            .sum::<usize>()
    };
    while width(&hs) > r.width as usize && hs.len() > 2 {
        hs.remove(hs.len() - 3);
    }
    let mut spans = vec![Span::raw(" ")];
    for (k, h) in hs {
        spans.push(Span::styled(k, t.key()));
        spans.push(Span::raw(format!(" {h}  ")));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), r);
}

fn draw_help(t: &Theme, keymap: &Keymap, f: &mut Frame, area: Rect) {
    let w = 100.min(area.width.saturating_sub(2));
    let rows = help_rows(keymap);
    let h = (rows.len() as u16 + 4).min(area.height.saturating_sub(2));
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    // the quit key still quits here (the overlay closes on any other key)
    let quit = keymap
        .binding(crate::tui::keymap::Action::Quit)
        .map_or_else(|| "q".to_string(), |b| b.label.clone());
    let closes = format!(" {quit} quits · any other key closes ");
    let block = Block::bordered()
        .title(Span::styled(" Help ", t.bold()))
        .title_bottom(Line::from(Span::styled(closes, t.dim())).right_aligned())
        .border_style(t.focus_border());
    let inner = block.inner(r);
    f.render_widget(block, r);
    let mut lines: Vec<Line> = rows
        .into_iter()
        .map(|(label, text)| {
            Line::from(vec![
                Span::styled(format!(" {label:<7}"), t.key()),
                Span::raw(text),
            ])
        })
        .collect();
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<7}", "mouse"), t.key()),
        Span::raw("click selects a row or a tab, the wheel scrolls"),
    ]));
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<7}", "marks"), t.key()),
        Span::raw("↺ verdict flipped this session   ≠ verdict misses the capture's expect"),
    ]));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The help overlay's rows (keys, what they do), from the keymap; the tab keys share one
/// row (`1-8  tabs: 1 Diff  2 Proposal ...`).
pub fn help_rows(keymap: &Keymap) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let mut tabs: Vec<String> = Vec::new();
    for b in &keymap.bindings {
        if let crate::tui::keymap::Action::ShowTab(tab) = b.action {
            if tabs.is_empty() {
                rows.push((String::new(), String::new()));
            }
            tabs.push(format!("{} {}", b.label, tab.title()));
            continue;
        }
        rows.push((b.label.to_string(), b.action.description().to_string()));
    }
    if let Some(slot) = rows.iter_mut().find(|r| r.0.is_empty()) {
        *slot = ("tabs".into(), tabs.join("  "));
    }
    rows
}

/// A screen row of the Raw tab.
#[derive(Debug, Clone, PartialEq)]
pub enum RawRow {
    /// The gutter (line number or blank) and the pieces (escaped text, is marked).
    Text(String, Vec<(String, bool)>),
    /// A caret under the first marked character, at this column.
    Caret(usize),
}

/// The Raw tab's rows for a content width: logical lines hard-wrapped (escaped text counts
/// one column per character), with a caret row under the error position. Also returns the
/// row of the caret, for scrolling.
pub fn raw_rows(raw: &crate::tui::detail::RawView, width: u16) -> (Vec<RawRow>, Option<usize>) {
    let gutter = raw.lines.len().to_string().len().max(3);
    let room = (width as usize).saturating_sub(gutter + 1).max(8);
    let mut rows = Vec::new();
    let mut caret_row = None;
    for (n, pieces) in raw.lines.iter().enumerate() {
        let chars: Vec<(char, bool)> = pieces
            .iter()
            .flat_map(|(s, m)| s.chars().map(move |c| (c, *m)))
            .collect();
        let chunks: Vec<&[(char, bool)]> = if chars.is_empty() {
            vec![&[]]
        } else {
            chars.chunks(room).collect()
        };
        for (k, chunk) in chunks.into_iter().enumerate() {
            let g = if k == 0 {
                format!("{:>gutter$} ", n + 1)
            } else {
                " ".repeat(gutter + 1)
            };
            let mut out: Vec<(String, bool)> = Vec::new();
            for &(c, m) in chunk {
                match out.last_mut() {
                    Some((s, mm)) if *mm == m => s.push(c),
                    _ => out.push((c.to_string(), m)),
                }
            }
            let caret = chunk.iter().position(|(_, m)| *m);
            rows.push(RawRow::Text(g, out));
            if let Some(col) = caret
                && caret_row.is_none()
            {
                caret_row = Some(rows.len());
                rows.push(RawRow::Caret(gutter + 1 + col));
            }
        }
    }
    (rows, caret_row)
}
