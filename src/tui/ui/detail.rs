//! The detail pane's frame: the deleted-capture note or the placeholder while nothing is
//! shown, else the title, the stage strip with the decision, the error table and the tab
//! bar, and the shown tab ([`super::tabs`]).

use super::{pane, tabs};
use crate::tui::app::layout::tab_labels;
use crate::tui::app::{Areas, DetailPane, DetailState, History};
use crate::tui::detail::{Detail, ErrorRow, Mark};
use crate::tui::keymap::Tab;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};

/// What the detail pane reads besides its own model.
pub struct Context<'a> {
    /// Whether the pane has the keyboard.
    pub focused: bool,
    /// The selected capture's id (for the placeholders).
    pub current_id: Option<&'a str>,
    /// Whether a validation run is going on.
    pub running: bool,
    /// The session's flips (the History tab).
    pub history: &'a History,
    /// The Chain tab of the selected capture.
    pub chain: &'a crate::tui::chain::ChainTab,
}

/// Draws the detail pane into the regions of `l`.
pub fn draw(f: &mut Frame, l: &Areas, t: &Theme, p: &DetailPane, cx: Context<'_>) {
    if let DetailState::Gone { removed: g, .. } = &p.state {
        let block = pane(t, Line::from(" Deleted "), cx.focused);
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
    let Some(d) = p.detail() else {
        let block = pane(t, Line::from(" Detail "), cx.focused);
        let inner = block.inner(l.detail);
        f.render_widget(block, l.detail);
        let id = cx
            .current_id
            .map(|id| crate::core::text::escape_control(id).into_owned())
            .unwrap_or_default();
        let msg = if let Some(source) = p.pending() {
            format!(
                "{} is pending: listed by the pre-pass, its verdict comes as the run reaches it",
                crate::core::text::escape_control(source)
            )
        } else if p.loading().is_some() {
            format!("loading {id} from disk…")
        } else if p.missing().is_some() {
            format!("{id}: the record is no longer in its file (a re-validation follows)")
        } else if cx.running {
            "validating…".to_string()
        } else {
            "no capture selected".to_string()
        };
        f.render_widget(
            Paragraph::new(Span::styled(msg, t.dim())).wrap(Wrap { trim: false }),
            inner,
        );
        return;
    };
    // the title (the capture's id) fitted to the border, cut in its middle with `…` when
    // it is longer, a column of border kept at each end
    let room = (l.detail.width as usize).saturating_sub(4);
    let title = super::pad_middle(&d.title, room.saturating_sub(2));
    let block = pane(
        t,
        Line::from(format!(" {} ", title.trim_end())).style(t.bold()),
        cx.focused,
    );
    f.render_widget(block, l.detail);
    draw_strip(f, l.strip, t, d);
    draw_errors(f, l.errors, t, d, p.error);
    draw_tab_bar(f, l.tabs, t, p.tab);
    tabs::draw(
        f,
        l.content,
        t,
        d,
        tabs::View {
            tab: p.tab,
            scroll: tabs::Scroll {
                at: p.scroll,
                most: &p.drawn_most,
            },
            error: p.error,
        },
        tabs::Models {
            history: cx.history,
            chain: cx.chain,
        },
    );
}

/// The stage strip (`response ✓ > parse ✗ > ...`) and the decision, right-aligned; when
/// that is too wide, only the failing stage keeps its name (`✓ ✓ ✓ business ✗`).
fn draw_strip(f: &mut Frame, r: Rect, t: &Theme, d: &Detail) {
    let decision = format!(" {} {} ", d.decision.glyph(), d.decision.as_str());
    let dw = (decision.chars().count() as u16).min(r.width);
    let strip = |compact: bool| {
        let mut spans = vec![Span::raw(" ")];
        for (i, (s, m)) in d.strip.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(if compact { " " } else { " > " }, t.dim()));
            }
            let (g, st) = match m {
                Mark::Pass => ("✓", t.pass()),
                Mark::Fail => ("✗", t.fail()),
                Mark::NotReached => ("·", t.dim()),
            };
            if !compact || *m == Mark::Fail {
                spans.push(Span::styled(
                    format!("{} ", s.as_str()),
                    if *m == Mark::NotReached {
                        t.dim()
                    } else {
                        Style::new()
                    },
                ));
            }
            spans.push(Span::styled(g, st));
        }
        spans
    };
    let mut spans = strip(false);
    if Line::from(spans.clone()).width() + dw as usize > r.width as usize {
        spans = strip(true);
    }
    let [left, right] = Layout::horizontal([Constraint::Fill(1), Constraint::Length(dw)]).areas(r);
    f.render_widget(Paragraph::new(Line::from(spans)), left);
    f.render_widget(
        Paragraph::new(Span::styled(decision, t.decision(d.decision))).alignment(Alignment::Right),
        right,
    );
}

/// The tab bar, the `active` tab highlighted.
fn draw_tab_bar(f: &mut Frame, r: Rect, t: &Theme, active: Tab) {
    let mut spans = Vec::new();
    for (tab, label) in tab_labels(r.width, active) {
        spans.push(Span::styled(
            label,
            if tab == active {
                t.selected().patch(t.bold())
            } else {
                t.dim()
            },
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), r);
}

/// The lines below the error table for the selected error's message (and the repair's
/// line, which takes the second when there is one) when the message fits them.
pub const MESSAGE_LINES: u16 = 2;

/// The selected error's message (` › MESSAGE`) as the rows it takes at `width` columns:
/// wrapped by the columns its characters take (between words where it can), each row
/// after the first three columns in, so no row is wider than the pane.
fn message_rows<'a>(e: &'a ErrorRow, width: u16, style: Style, mark: Style) -> Vec<Line<'a>> {
    let room = (width as usize).saturating_sub(3).max(1);
    crate::tui::app::layout::wrap_ranges(&e.message, room, 0)
        .into_iter()
        .enumerate()
        .map(|(k, range)| {
            Line::from(vec![
                Span::styled(if k == 0 { " › " } else { "   " }, mark),
                Span::styled(&e.message[range], style),
            ])
        })
        .collect()
}

/// How many lines the selected error's message and the repair's line take below the error
/// table at `width` columns: compared with [`MESSAGE_LINES`] to size the table.
pub fn message_lines(d: &Detail, error: usize, width: u16) -> u16 {
    let message = d.errors.get(error).map_or(1, |e| {
        message_rows(e, width, Style::new(), Style::new()).len()
    });
    u16::try_from(message)
        .unwrap_or(u16::MAX)
        .saturating_add(u16::from(d.repair.is_some()))
}

/// The error table (the `error`th error marked, its message in full below it).
fn draw_errors(f: &mut Frame, r: Rect, t: &Theme, d: &Detail, error: usize) {
    if d.errors.is_empty() {
        let line = Line::from(Span::styled(" no errors: every stage passed", t.pass()));
        f.render_widget(Paragraph::new(super::fit_line(line, r.width as usize)), r);
        return;
    }
    // the selected error's message in full below the table, wrapped: the lines it takes
    // past its two are rows the layout added for it (`App::relayout`)
    let message = d
        .errors
        .get(error)
        .map(|e| message_rows(e, r.width, Style::new(), t.fail()));
    let note_h = u16::from(d.repair.is_some());
    let need = message
        .as_ref()
        .map_or(1, |m| u16::try_from(m.len()).unwrap_or(u16::MAX));
    // the table keeps its header and a row
    let most = r.height.saturating_sub(2 + note_h).max(1);
    let message_h = need.max(MESSAGE_LINES - note_h).min(most);
    let [r, full, n] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(message_h),
        Constraint::Length(note_h),
    ])
    .areas(r);
    let note = d.repair.as_ref().map(|note| (n, note));
    if let Some(m) = message {
        f.render_widget(Paragraph::new(m), full);
        // a message cut at the rows it has (a small terminal): its last cell says so
        if need > message_h && full.width > 0 && full.height > 0 {
            let at = (full.right() - 1, full.bottom() - 1);
            f.buffer_mut()[at].set_symbol("…");
        }
    }
    if let Some((n, (text, ready))) = note {
        // one row: cut with `…` when it is wider
        let line = Line::from(vec![
            Span::styled(" repair: ", t.dim()),
            Span::styled(text.as_str(), if *ready { t.pass() } else { t.dim() }),
        ]);
        f.render_widget(Paragraph::new(super::fit_line(line, n.width as usize)), n);
    }
    let shown = (r.height as usize).saturating_sub(1).max(1);
    let first = error.saturating_sub(shown - 1);
    let width = |get: fn(&ErrorRow) -> &str, min: usize, cap: usize| -> usize {
        d.errors
            .iter()
            .map(|e| get(e).chars().count())
            .max()
            .unwrap_or(0)
            .clamp(min, cap)
    };
    // marker, reason, pointer, location, at: each as wide as its widest cell (capped); on a
    // narrow pane they give up columns, the keyword location first, down to a few each, and
    // a cut cell ends in `…` (the selected error's message is whole below the table)
    let mut cols = [
        1,
        width(|e| &e.reason, 6, 20),
        width(|e| &e.pointer, 7, 18),
        width(|e| &e.location, 8, 34),
        width(|e| &e.at, 2, 7),
    ];
    let room = (r.width as usize).saturating_sub(5);
    for (col, least) in [(3, 4), (2, 5), (1, 6), (4, 2)] {
        let over = cols.iter().sum::<usize>().saturating_sub(room);
        cols[col] -= over.min(cols[col].saturating_sub(least));
    }
    // a message column too narrow to say anything is left out
    let message_w = match room.saturating_sub(cols.iter().sum()) {
        w if w < 8 => 0,
        w => w,
    };
    let widths = cols
        .iter()
        .map(|&w| Constraint::Length(w as u16))
        .chain([Constraint::Length(message_w as u16)]);
    let fit = |s: &str, w: usize| super::pad(s, w).trim_end().to_string();
    let header = Row::new(
        ["", "reason", "pointer", "location", "at", "message"]
            .iter()
            .zip(cols.iter().chain([&message_w]))
            .map(|(h, &w)| fit(h, w)),
    )
    .style(t.dim());
    let rows: Vec<Row> = d
        .errors
        .iter()
        .enumerate()
        .skip(first)
        .take(shown)
        .map(|(i, e)| {
            let cur = i == error && d.errors.len() > 1;
            let row = Row::new(vec![
                Cell::from(if cur { "›" } else { " " }),
                Cell::from(fit(&e.reason, cols[1])).style(t.fail()),
                Cell::from(fit(&e.pointer, cols[2])).style(t.bold()),
                Cell::from(fit(&e.location, cols[3])).style(t.dim()),
                Cell::from(fit(&e.at, cols[4])),
                Cell::from(fit(&e.message, message_w)),
            ]);
            if cur { row.style(t.bold()) } else { row }
        })
        .collect();
    let mut title_note = String::new();
    if d.errors.len() > shown {
        title_note = format!("{}/{}", error + 1, d.errors.len());
    }
    f.render_widget(Table::new(rows, widths).header(header).column_spacing(1), r);
    if !title_note.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled(title_note, t.dim())).alignment(Alignment::Right),
            Rect::new(r.x, r.y, r.width, 1),
        );
    }
}
