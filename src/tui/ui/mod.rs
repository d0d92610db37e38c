//! Drawing: [`draw`] is a pure function of the [`App`]. It builds only what is visible
//! (the list renders the rows on screen, never the whole workspace), does no I/O and
//! validates nothing. It draws into the rectangles the model laid out
//! ([`crate::tui::app::layout`]), so mouse clicks and scrolling use the very rectangles
//! that were drawn.
//!
//! One file per screen region, each drawing function given only the part of the model it
//! reads: [`header`], [`list`] (the list, the triage tree and the chain tree), [`detail`] (the pane's frame,
//! stage strip, error table and tab bar), [`tabs`] (one function per tab), [`footer`] and
//! [`overlays`] (help, review).

pub mod detail;
pub mod footer;
pub mod header;
pub mod list;
pub mod overlays;
pub mod tabs;

pub use header::contract_note;
pub use overlays::help_rows;

use crate::tui::app::layout::{MIN_SIZE, too_small};
use crate::tui::app::{App, Focus, Overlay};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// Draws the whole screen.
pub fn draw(app: &App, f: &mut Frame) {
    let area = f.area();
    let model_area = app.screen.area;
    if too_small(area) || area != model_area && too_small(model_area) {
        draw_too_small(f, area);
        return;
    }
    let l = &app.screen.areas;
    let t = &app.settings.theme;
    let focus = app.modes.focus;
    header::draw(
        f,
        l.header,
        t,
        header::Header {
            label: &app.label,
            workspace: app.workspace.as_deref(),
            run: &app.run,
            watch: &app.watch,
            history: &app.history,
            chains: app
                .chains
                .tree
                .view
                .as_deref()
                .filter(|v| !v.is_empty())
                .map(|v| &v.report.summary),
        },
    );
    if app.modes.triage() {
        list::draw_tree(f, l.list, t, &app.triage, focus == Focus::List);
    } else if app.modes.chains() {
        list::draw_chains(f, l.list, t, &app.chains.tree, focus == Focus::List);
    } else {
        list::draw_list(
            f,
            l.list,
            t,
            &app.list,
            list::Status {
                filter: &app.filter,
                focused: focus == Focus::List,
                running: app.run.progress.running,
                failed: app.run.progress.failed,
                gone: app.detail.gone().is_some(),
            },
        );
    }
    detail::draw(
        f,
        l,
        t,
        &app.detail,
        detail::Context {
            focused: focus == Focus::Detail,
            current_id: app.list.current_id(),
            running: app.run.progress.running,
            history: &app.history,
            chain: &app.chains.tab,
        },
    );
    footer::draw(
        f,
        l.footer,
        t,
        &app.settings.keymap,
        app.modes.editing().then_some(app.filter.text.as_str()),
        app.note.as_deref().or(app.status.as_deref()),
    );
    match app.modes.overlay {
        Some(Overlay::Review) => overlays::draw_review(
            f,
            area,
            t,
            &app.settings.keymap,
            app.history.contract_change.as_ref(),
            app.modes.overlay_scroll,
        ),
        Some(Overlay::Help) => {
            overlays::draw_help(f, area, t, &app.settings.keymap, app.modes.overlay_scroll)
        }
        None => {}
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

/// A bordered pane with `title`, its border marked when `focused`.
fn pane(t: &Theme, title: Line<'static>, focused: bool) -> Block<'static> {
    Block::bordered().title(title).border_style(if focused {
        t.focus_border()
    } else {
        t.border()
    })
}

/// A pane's `title` fitted to a border `width` columns wide: as it is when it fits between
/// the corners, else cut with a `…` and a space where it leaves two columns of border before
/// the corner, as the detail's title is (columns, not characters; each span keeps its style).
fn fit_title(title: Line<'static>, width: u16) -> Line<'static> {
    let room = (width as usize).saturating_sub(2);
    if title.width() <= room {
        return title;
    }
    let mut left = (width as usize).saturating_sub(6);
    let mut spans = Vec::new();
    for span in title.spans {
        if left == 0 {
            break;
        }
        let head = head_within(&span.content, left).to_string();
        left -= columns(&head);
        let full = head.len() == span.content.len();
        spans.push(Span::styled(head, span.style));
        if !full {
            break;
        }
    }
    if let Some(last) = spans.last_mut() {
        last.content = format!("{}… ", last.content.trim_end()).into();
    }
    Line::from(spans).style(title.style)
}

/// The columns `s` takes on a terminal (a wide character, such as a CJK one, takes two).
fn columns(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// The longest start of `s` that takes at most `w` columns.
fn head_within(s: &str, w: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used > w {
            return &s[..i];
        }
    }
    s
}

/// The longest end of `s` that takes at most `w` columns.
fn tail_within(s: &str, w: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used > w {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// `s` padded with spaces to `w` columns, or cut to `w` in its middle, a `…` in place of
/// what is left out: an id or a source keeps its start and its end, where the ids of a
/// log's records and a chain's attempts differ (`loop-unrecovered/1`, `mcp/session.json:12`).
/// Columns, not characters: a wide character counts two and is never split (a space
/// fills the column one would have straddled).
fn pad_middle(s: &str, w: usize) -> String {
    let n = columns(s);
    if n <= w {
        return format!("{s}{}", " ".repeat(w - n));
    }
    if w < 8 {
        return pad(s, w);
    }
    let tail = tail_within(s, (w - 1) / 2);
    let head = head_within(s, w - 1 - columns(tail));
    let out = format!("{head}…{tail}");
    let n = columns(&out);
    format!("{out}{}", " ".repeat(w.saturating_sub(n)))
}

/// `s` padded with spaces to `w` columns, or cut to `w` with a trailing `…` (columns, not
/// characters: a wide character counts two and is never split).
fn pad(s: &str, w: usize) -> String {
    let n = columns(s);
    if n > w {
        if w == 0 {
            return String::new();
        }
        let head = head_within(s, w - 1);
        let out = format!("{head}…");
        let n = columns(&out);
        format!("{out}{}", " ".repeat(w.saturating_sub(n)))
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// Styled text wrapped into rows of `width` columns ([`wrap_ranges`](crate::tui::app::layout::wrap_ranges): between words where
/// it can), each row's spans keeping their styles; a row after the first starts at its
/// first character that is not a space, `indent` columns in ([`wrap_indent`](crate::tui::app::layout::wrap_indent): none when
/// that would leave fewer than 8).
pub(super) fn wrap_segments(
    segments: &[(String, Style)],
    width: usize,
    indent: usize,
) -> Vec<Vec<Span<'static>>> {
    use crate::tui::app::layout::{wrap_indent, wrap_ranges};
    let pad = wrap_indent(width.max(1), indent);
    let text: String = segments.iter().map(|(s, _)| s.as_str()).collect();
    let mut bounds = Vec::new();
    let mut at = 0;
    for (s, style) in segments {
        bounds.push((at..at + s.len(), *style));
        at += s.len();
    }
    wrap_ranges(&text, width, indent)
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let row = &text[r.clone()];
            let start = if i == 0 {
                r.start
            } else {
                r.start + (row.len() - row.trim_start_matches(' ').len())
            };
            let lead = (i > 0 && pad > 0).then(|| Span::raw(" ".repeat(pad)));
            lead.into_iter()
                .chain(bounds.iter().filter_map(|(b, style)| {
                    let (s, e) = (b.start.max(start), b.end.min(r.end));
                    (s < e).then(|| Span::styled(text[s..e].to_string(), *style))
                }))
                .collect()
        })
        .collect()
}

/// `line`'s rows at `width` columns ([`wrap_segments`]), a row after the first as far
/// in as the line's own text starts (past its leading spaces).
fn wrap_line(line: &Line<'_>, width: usize) -> Vec<Line<'static>> {
    let segments: Vec<(String, Style)> = line
        .spans
        .iter()
        .map(|s| (s.content.to_string(), s.style))
        .collect();
    let text: String = segments.iter().map(|(s, _)| s.as_str()).collect();
    let indent = text.len() - text.trim_start_matches(' ').len();
    wrap_segments(&segments, width, indent)
        .into_iter()
        .map(|spans| Line::from(spans).style(line.style))
        .collect()
}

/// `line` marked as cut: its trailing spaces dropped and `…` after it, within `width`
/// columns (cut further with `…` when that does not fit).
fn cut_after(line: Line<'_>, width: usize) -> Line<'_> {
    let mut spans = line.spans;
    while let Some(last) = spans.last_mut() {
        let kept = last.content.trim_end().len();
        if kept > 0 {
            if kept < last.content.len() {
                last.content = last.content[..kept].to_string().into();
            }
            break;
        }
        spans.pop();
    }
    let style = spans.last().map_or(Style::new(), |s| s.style);
    spans.push(Span::styled("…", style));
    fit_line(Line::from(spans), width)
}

/// `line` as it fits `width` columns: whole, or cut with a trailing `…` in the style of
/// the span it cuts (columns, not characters: a wide character is never split).
fn fit_line(line: Line<'_>, width: usize) -> Line<'_> {
    if line.width() <= width {
        return line;
    }
    let line_style = line.style;
    let mut out = Vec::new();
    let mut used = 0;
    for span in line.spans {
        let w = columns(&span.content);
        if used + w < width {
            used += w;
            out.push(span);
            continue;
        }
        if width > used {
            let head = head_within(&span.content, width - used - 1).to_string();
            out.push(Span::styled(format!("{head}…"), span.style));
        }
        break;
    }
    Line::from(out).style(line_style)
}

/// A dim, wrapped note filling `r` (a tab with nothing to show, an empty overlay).
fn message(t: &Theme, f: &mut Frame, r: Rect, s: &str) {
    f.render_widget(
        Paragraph::new(Span::styled(s.to_string(), t.dim())).wrap(Wrap { trim: true }),
        r,
    );
}

#[cfg(test)]
mod pad_tests {
    use super::*;

    #[test]
    fn an_id_too_long_for_its_column_keeps_its_start_and_its_end() {
        assert_eq!(pad_middle("loop-unrecovered/1", 20), "loop-unrecovered/1  ");
        assert_eq!(pad_middle("loop-unrecovered/12", 12), "loop-u…ed/12");
        assert_eq!(pad_middle("loop-unrecovered/12", 12).chars().count(), 12);
        assert_eq!(pad_middle("mcp/session.json:12#1", 16), "mcp/sess…on:12#1");
        // too narrow to keep both ends: cut at the end, as `pad`
        assert_eq!(pad_middle("abcdefghij", 5), "abcd…");
        // wide characters count two columns and are never split; the real end is kept
        let id = format!("ab{}yz", "注".repeat(20));
        assert_eq!(pad_middle(&id, 21), "ab注注注注…注注注注yz");
        assert_eq!(columns(&pad_middle(&id, 21)), 21);
        assert_eq!(
            pad_middle(&format!("{}注bbb", "a".repeat(20)), 12),
            "aaaaaa…注bbb"
        );
        assert_eq!(pad(&"注".repeat(5), 6), "注注… ");
        assert_eq!(pad("注", 1), "…");
        assert_eq!(pad("abc", 0), "");
    }
}
