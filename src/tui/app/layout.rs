//! The screen's geometry, owned by the model: the rectangles of every region for a terminal
//! size, the tab bar's labels and the Raw tab's wrapped rows. Pure functions of their
//! arguments (no drawing, no I/O); the model stores the [`Screen`] it computed on resize and
//! whenever the detail's error count changes, and the view draws into the very same
//! rectangles, so clicks and scrolling hit what was drawn.

use crate::tui::detail::RawView;
use crate::tui::keymap::Tab;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Block;

/// The smallest terminal the screen is drawn on (columns, rows).
pub const MIN_SIZE: (u16, u16) = (60, 15);

/// The rectangles of the screen (all zero when the terminal is [`too_small`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Areas {
    /// The header lines: two, three when the workspace has chains (the chain funnel).
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

/// The terminal's size and the regions laid out on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Screen {
    /// The terminal area (columns and rows at the origin).
    pub area: Rect,
    /// The regions for `area` and the shown capture's error count.
    pub areas: Areas,
}

impl Screen {
    /// The screen of `area` with an error table for `errors` errors.
    pub fn new(area: Rect, errors: usize) -> Screen {
        Screen::with_header(area, errors, 2)
    }

    /// [`Screen::new`] with `header` header lines (3 with the chain funnel).
    pub fn with_header(area: Rect, errors: usize, header: u16) -> Screen {
        Screen::with_message(area, errors, header, 0)
    }

    /// [`Screen::with_header`] with `extra` more rows for the error table's message (the
    /// selected error's, wrapped, when it takes more than its two lines).
    pub fn with_message(area: Rect, errors: usize, header: u16, extra: u16) -> Screen {
        Screen {
            area,
            areas: areas_for(area, errors, header, extra),
        }
    }
}

/// Whether the terminal is below [`MIN_SIZE`].
pub fn too_small(area: Rect) -> bool {
    area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1
}

/// How many rows the error table shows for `n` errors (header included).
fn error_rows(n: usize) -> u16 {
    if n == 0 { 1 } else { (n.min(4) + 3) as u16 }
}

/// The screen's rectangles for a terminal of `area`, the error table sized for `errors`
/// errors (the shown capture's; 0 when none is shown).
pub fn areas(area: Rect, errors: usize) -> Areas {
    areas_with(area, errors, 2)
}

/// [`areas`] with `header` header lines.
pub fn areas_with(area: Rect, errors: usize, header: u16) -> Areas {
    areas_for(area, errors, header, 0)
}

/// [`areas_with`], the error table `extra` rows taller (for a long message).
fn areas_for(area: Rect, errors: usize, header: u16, extra: u16) -> Areas {
    if too_small(area) {
        return Areas::default();
    }
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(header),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    // below 100 columns the list takes 42.5% (34 of 80): room for 20 characters of id
    // and 7 of the reason once the stage word is dropped (see `ui::list`)
    let share = if body.width < 100 { 17 } else { 16 };
    let left = (body.width * share / 40).clamp(30, 64);
    let [list, detail] =
        Layout::horizontal([Constraint::Length(left), Constraint::Fill(1)]).areas(body);
    let inner = Block::bordered().inner(detail);
    let [strip, errors, tabs, content] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(error_rows(errors) + extra),
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

/// The tab bar's labels (` 1 Diff `...), in order, short ones when `width` is too narrow
/// for the full titles, short ones one space apart (` 1 Diff 2 Prop`) when it is too
/// narrow for those, short ones without their number key (` Diff`, ` Prop`...; the
/// footer says `0-9 tabs`) when it is too narrow for those, and only numbers (the `active`
/// tab keeps its short title) when it is too narrow even for that; shared by drawing and
/// mouse clicks.
pub fn tab_labels(width: u16, active: Tab) -> Vec<(Tab, String)> {
    let full: Vec<(Tab, String)> = Tab::ALL
        .into_iter()
        .map(|t| (t, format!(" {} {} ", t.digit(), t.title())))
        .collect();
    if full.iter().map(|(_, l)| l.chars().count()).sum::<usize>() <= width as usize {
        return full;
    }
    let short: Vec<(Tab, String)> = Tab::ALL
        .into_iter()
        .map(|t| (t, format!(" {} {} ", t.digit(), t.short_title())))
        .collect();
    if short.iter().map(|(_, l)| l.chars().count()).sum::<usize>() <= width as usize {
        return short;
    }
    // the short ones one space apart, still with their number key
    let tight: Vec<(Tab, String)> = Tab::ALL
        .into_iter()
        .map(|t| (t, format!(" {} {}", t.digit(), t.short_title())))
        .collect();
    if tight.iter().map(|(_, l)| l.chars().count()).sum::<usize>() <= width as usize {
        return tight;
    }
    let bare: Vec<(Tab, String)> = Tab::ALL
        .into_iter()
        .map(|t| (t, format!(" {}", t.short_title())))
        .collect();
    if bare.iter().map(|(_, l)| l.chars().count()).sum::<usize>() <= width as usize {
        return bare;
    }
    Tab::ALL
        .into_iter()
        .map(|t| {
            if t == active {
                (t, format!(" {} {} ", t.digit(), t.short_title()))
            } else {
                (t, format!(" {} ", t.digit()))
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
pub fn raw_rows(raw: &RawView, width: u16) -> (Vec<RawRow>, Option<usize>) {
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
