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
    let block = pane(
        t,
        Line::from(format!(" {} ", d.title)).style(t.bold()),
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
            scroll: p.scroll,
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

/// The selected error's message line (` › MESSAGE`), wrapped as the error table shows it.
fn message_paragraph<'a>(e: &'a ErrorRow, style: Style, mark: Style) -> Paragraph<'a> {
    Paragraph::new(Line::from(vec![
        Span::styled(" › ", mark),
        Span::styled(e.message.as_str(), style),
    ]))
    .wrap(Wrap { trim: true })
}

/// How many lines the selected error's message and the repair's line take below the error
/// table at `width` columns: compared with [`MESSAGE_LINES`] to size the table.
pub fn message_lines(d: &Detail, error: usize, width: u16) -> u16 {
    let message = d.errors.get(error).map_or(1, |e| {
        message_paragraph(e, Style::new(), Style::new()).line_count(width)
    });
    u16::try_from(message)
        .unwrap_or(u16::MAX)
        .saturating_add(u16::from(d.repair.is_some()))
}

/// The error table (the `error`th error marked, its message in full below it).
fn draw_errors(f: &mut Frame, r: Rect, t: &Theme, d: &Detail, error: usize) {
    if d.errors.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled(" no errors: every stage passed", t.pass())),
            r,
        );
        return;
    }
    // the selected error's message in full below the table, wrapped: the lines it takes
    // past its two are rows the layout added for it (`App::relayout`)
    let message = d
        .errors
        .get(error)
        .map(|e| message_paragraph(e, Style::new(), t.fail()));
    let note_h = u16::from(d.repair.is_some());
    let need = message.as_ref().map_or(1, |m| {
        u16::try_from(m.line_count(r.width)).unwrap_or(u16::MAX)
    });
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
        f.render_widget(m, full);
        // a message cut at the rows it has (a small terminal): its last cell says so
        if need > message_h && full.width > 0 && full.height > 0 {
            let at = (full.right() - 1, full.bottom() - 1);
            f.buffer_mut()[at].set_symbol("…");
        }
    }
    if let Some((n, (text, ready))) = note {
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(" repair: ", t.dim()),
                Span::styled(text.as_str(), if *ready { t.pass() } else { t.dim() }),
            ])),
            n,
        );
    }
    let shown = (r.height as usize).saturating_sub(1).max(1);
    let first = error.saturating_sub(shown - 1);
    let width = |get: fn(&ErrorRow) -> &str, min: usize, cap: usize| -> u16 {
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
            let cur = i == error && d.errors.len() > 1;
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
