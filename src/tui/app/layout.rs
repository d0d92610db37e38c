//! The screen's geometry, owned by the model: the rectangles of every region for a terminal
//! size, the tab bar's labels and the Raw and Contract tabs' wrapped rows. Pure functions of their
//! arguments (no drawing, no I/O); the model stores the [`Screen`] it computed on resize and
//! whenever the detail's error count changes, and the view draws into the very same
//! rectangles, so clicks and scrolling hit what was drawn.

use crate::tui::detail::{ContractView, RawView};
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
/// footer says `0-9 tabs`) when it is too narrow for those, and only numbers, two spaces
/// apart, then one (the `active`
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
    let numbers = |gap: &str| -> Vec<(Tab, String)> {
        Tab::ALL
            .into_iter()
            .map(|t| {
                if t == active {
                    (t, format!(" {} {}{gap}", t.digit(), t.short_title()))
                } else {
                    (t, format!(" {}{gap}", t.digit()))
                }
            })
            .collect()
    };
    let spaced = numbers(" ");
    if spaced.iter().map(|(_, l)| l.chars().count()).sum::<usize>() <= width as usize {
        return spaced;
    }
    // every number one space apart (at the 60 columns of the smallest screen, all ten fit)
    numbers("")
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

/// The Raw tab's rows for a content width: logical lines hard-wrapped by the columns their
/// characters take (a wide character, such as a CJK one, takes two and never straddles a
/// row's end), with a caret row after the error's line (after all its rows when it wraps),
/// at the error's column in the row it is on. Also returns the row of the caret, for
/// scrolling.
pub fn raw_rows(raw: &RawView, width: u16) -> (Vec<RawRow>, Option<usize>) {
    use unicode_width::UnicodeWidthChar;
    let gutter = raw.lines.len().to_string().len().max(3);
    let room = (width as usize).saturating_sub(gutter + 1).max(8);
    let mut rows = Vec::new();
    let mut caret_row = None;
    for (n, pieces) in raw.lines.iter().enumerate() {
        let chars: Vec<(char, bool)> = pieces
            .iter()
            .flat_map(|(s, m)| s.chars().map(move |c| (c, *m)))
            .collect();
        // rows of at most `room` columns
        let mut chunks: Vec<&[(char, bool)]> = Vec::new();
        let (mut start, mut used) = (0, 0);
        for (i, &(c, _)) in chars.iter().enumerate() {
            let w = c.width().unwrap_or(0);
            if used + w > room && i > start {
                chunks.push(&chars[start..i]);
                (start, used) = (i, 0);
            }
            used += w;
        }
        chunks.push(&chars[start..]);
        let mut line_caret = None;
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
            // the caret's column: the columns of the characters before the first marked one
            let caret = chunk.iter().position(|(_, m)| *m).map(|at| {
                chunk[..at]
                    .iter()
                    .map(|(c, _)| c.width().unwrap_or(0))
                    .sum::<usize>()
            });
            rows.push(RawRow::Text(g, out));
            if let Some(col) = caret
                && caret_row.is_none()
                && line_caret.is_none()
            {
                line_caret = Some(col);
            }
        }
        // the caret under the whole line, not between the rows of a wrapped one
        if let Some(col) = line_caret {
            caret_row = Some(rows.len());
            rows.push(RawRow::Caret(gutter + 1 + col));
        }
    }
    (rows, caret_row)
}

/// The indent of a wrapped line's continuation rows in a `width`-column area: `indent`, or
/// none when it would leave fewer than 8 columns.
pub fn wrap_indent(width: usize, indent: usize) -> usize {
    if width.saturating_sub(indent) < 8 {
        0
    } else {
        indent
    }
}

/// Where a line of `text` is cut into rows of `width` columns: the byte range of each row's
/// text, the rows after the first drawn [`wrap_indent`] columns in (so they take that much
/// less of the text). A row ends after its last space past its leading indentation
/// (prose and JSON break between words), else at its last column (a word longer than a
/// row); a character goes whole to the row it starts on unless it would cross the row's
/// end (a wide character then starts the next row). One row, empty, for an empty text.
pub fn wrap_ranges(text: &str, width: usize, indent: usize) -> Vec<std::ops::Range<usize>> {
    use unicode_width::UnicodeWidthChar;
    let width = width.max(1);
    let indent = wrap_indent(width, indent);
    let mut rows = Vec::new();
    let (mut start, mut room) = (0, width);
    // one row at a time, each scanned from its start: where it must end (the first
    // character that would overflow it) and its last space before that
    loop {
        let mut used = 0;
        let mut space: Option<usize> = None;
        // (a space of the row's leading indentation is no place to cut it)
        let mut text_seen = false;
        let mut end = None;
        for (i, c) in text[start..].char_indices() {
            let w = c.width().unwrap_or(0);
            if used + w > room && i > 0 {
                end = Some(start + i);
                break;
            }
            used += w;
            if c != ' ' {
                text_seen = true;
            } else if text_seen {
                space = Some(start + i + 1);
            }
        }
        let Some(hard) = end else {
            rows.push(start..text.len());
            return rows;
        };
        let cut = space.unwrap_or(hard);
        rows.push(start..cut);
        (start, room) = (cut, width - indent);
    }
}

/// The columns a wrapped line's continuation rows are indented by: its own indentation
/// after its first `gutter` characters (a numbered line's number), plus two.
pub fn continuation_indent(text: &str, gutter: usize) -> usize {
    let body = text.get(gutter..).unwrap_or("");
    gutter + body.len() - body.trim_start_matches(' ').len() + 2
}

/// The Contract tab's logical lines as drawn, each with its gutter (the columns of its
/// number, 0 for an unnumbered line): the rules' lines, a blank line, the schema's heading,
/// then the schema's lines, each numbered (`  5 "type": ...`). The view wraps each with
/// [`wrap_ranges`] and [`continuation_indent`]; [`contract_row_of`] counts the same rows.
pub fn contract_lines(c: &ContractView) -> Vec<(std::borrow::Cow<'_, str>, usize)> {
    let gutter = c.schema.lines.len().to_string().len().max(3);
    let mut lines: Vec<(std::borrow::Cow<'_, str>, usize)> = c
        .rules
        .iter()
        .map(|(s, _)| (std::borrow::Cow::Borrowed(s.as_str()), 0))
        .collect();
    lines.push((std::borrow::Cow::Borrowed(""), 0));
    lines.push((format!("schema  {}", c.heading).into(), 0));
    lines.extend(
        c.schema
            .lines
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("{:>gutter$} {s}", i + 1).into(), gutter + 1)),
    );
    lines
}

/// The row of the Contract tab, wrapped to `width` columns, at which its logical line
/// `line` ([`contract_lines`]) starts (for scrolling to an error's keyword).
pub fn contract_row_of(c: &ContractView, width: u16, line: usize) -> usize {
    contract_lines(c)
        .iter()
        .take(line)
        .map(|(text, gutter)| {
            wrap_ranges(text, width as usize, continuation_indent(text, *gutter)).len()
        })
        .sum()
}

#[cfg(test)]
mod wrap_tests {
    use super::*;

    fn rows(text: &str, width: usize, indent: usize) -> Vec<&str> {
        wrap_ranges(text, width, indent)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn a_line_is_cut_into_rows_of_the_width_its_continuations_indented() {
        assert_eq!(rows("", 10, 2), vec![""]);
        // between words (rows of 12, then 10)
        assert_eq!(
            rows("the order version the proposal", 12, 2),
            vec!["the order ", "version ", "the ", "proposal"]
        );
        assert_eq!(
            rows("ab cdefghijklmn", 10, 0),
            vec!["ab ", "cdefghijkl", "mn"]
        );
        // never at the leading indentation: a long word after it is cut at the last column
        assert_eq!(
            rows("    abcdefghijkl", 10, 0),
            vec!["    abcdef", "ghijkl"]
        );
        assert_eq!(rows("abcdefghij", 10, 2), vec!["abcdefghij"]);
        // the first row takes 10, each next one 10 - 2
        assert_eq!(
            rows("abcdefghijklmnopqrstuvwxyz", 10, 2),
            vec!["abcdefghij", "klmnopqr", "stuvwxyz"]
        );
        // a two-column character that would cross a row's end starts the next row
        assert_eq!(rows("abcdefghi日本", 10, 0), vec!["abcdefghi", "日本"]);
        assert_eq!(rows("日本語", 4, 0), vec!["日本", "語"]);
        // an indent leaving fewer than 8 columns is dropped
        assert_eq!(
            rows("abcdefghijklmnop", 10, 3),
            vec!["abcdefghij", "klmnop"]
        );
        // a character wider than the row still goes somewhere (alone)
        assert_eq!(rows("日日", 1, 0), vec!["日", "日"]);
    }

    /// Property: over random texts of ASCII, spaces and wide characters and random widths
    /// and indents, the rows cover the text in order without a gap, none is empty but an
    /// empty text's, and each fits its columns (the first `width`, the others `width`
    /// less the indent `wrap_indent` keeps) unless it holds one character that is wider.
    #[test]
    fn rows_cover_the_text_in_order_and_each_fits_its_columns() {
        use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let alphabet = ['a', 'b', ' ', ' ', '日', '本', 'é', '\u{301}', '-'];
        for _ in 0..20_000 {
            let len = next(60) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                .collect();
            let width = 1 + next(30) as usize;
            let indent = next(30) as usize;
            let rows = wrap_ranges(&text, width, indent);
            assert_eq!(rows[0].start, 0);
            assert_eq!(rows.last().unwrap().end, text.len());
            for pair in rows.windows(2) {
                assert_eq!(pair[0].end, pair[1].start, "{text:?} {width} {indent}");
            }
            let pad = wrap_indent(width, indent);
            for (k, r) in rows.iter().enumerate() {
                let row = &text[r.clone()];
                assert!(
                    !row.is_empty() || text.is_empty(),
                    "{text:?} {width} {indent}"
                );
                let room = if k == 0 { width } else { width - pad };
                // (a zero-width mark goes with the character before it, or opens a row)
                let wide = row.chars().filter(|c| c.width().unwrap_or(0) > 0).count();
                assert!(
                    row.width() <= room || wide == 1,
                    "{text:?} {width} {indent}: row {row:?}"
                );
            }
        }
    }

    /// At the smallest screen the tab bar still names every tab's number (tabs 9 and 0
    /// were left out, unmarked, at 60 columns).
    #[test]
    fn every_tab_is_on_the_bar_at_the_smallest_screen() {
        let width = areas(Rect::new(0, 0, MIN_SIZE.0, MIN_SIZE.1), 1).tabs.width;
        let labels = tab_labels(width, Tab::Diff);
        let bar: String = labels.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(bar, " 1 Diff 2 3 4 5 6 7 8 9 0", "{width}");
        assert!(bar.chars().count() <= width as usize, "{width}: {bar}");
        // a little wider: two spaces apart
        let bar: String = tab_labels(40, Tab::Raw)
            .iter()
            .map(|(_, l)| l.as_str())
            .collect();
        assert_eq!(bar, " 1  2  3 Raw  4  5  6  7  8  9  0 ");
    }

    #[test]
    fn continuations_sit_two_columns_in_from_the_line_s_own_indentation() {
        assert_eq!(continuation_indent("    has(x)", 0), 6);
        assert_eq!(continuation_indent("[1] NOT_AUTHORIZED", 0), 2);
        // a numbered schema line: its number's columns, then its own indentation
        assert_eq!(continuation_indent("  5   \"description\": \"x\"", 4), 8);
        assert_eq!(continuation_indent("  1 {", 4), 6);
    }
}
