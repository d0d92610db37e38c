//! The overlays over the whole screen: the help (from the keymap) and the review of the
//! last schema or rules change.

use super::header::contract_note;
use super::{message, wrap_segments};
use crate::core::verdict::Decision;
use crate::tui::app::ContractChange;
use crate::tui::keymap::{Action, Key, Keymap};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

/// Draws the review overlay over `area`: the flips of `change`, grouped by kind, `scroll`
/// rows down (clamped to [`review_max_scroll`]); when they do not fit, its top border says
/// which rows show and whether more are below or above, as the help's does.
pub fn draw_review(
    f: &mut Frame,
    area: Rect,
    t: &Theme,
    keymap: &Keymap,
    change: Option<&ContractChange>,
    scroll: usize,
) {
    let r = review_rect(area);
    clear_around(f, area, r);
    let title = " Review: last schema or rules change ";
    let mut block = Block::bordered().border_style(t.focus_border());
    let Some(c) = change else {
        let block = block
            .title(Span::styled(title, t.bold()))
            .title_bottom(Line::from(Span::styled(" any key closes ", t.dim())).right_aligned());
        let inner = block.inner(r);
        f.render_widget(block, r);
        message(
            t,
            f,
            inner,
            "no schema or rules file changed this session: save one and its flips show here",
        );
        return;
    };
    let lines = review_lines(t, c, r.width.saturating_sub(2) as usize);
    let inner_h = r.height.saturating_sub(2) as usize;
    let n = lines.len();
    let scroll = scroll.min(n.saturating_sub(inner_h));
    let bottom = if n > inner_h {
        let at = position_title(scroll, inner_h, n);
        // the long title where both fit on the border at every position (the widest, the
        // last rows with both arrows), else the short one: it does not change as it scrolls
        let room = r.width.saturating_sub(2) as usize;
        let widest = format!(" {n}-{n} of {n} ↑↓ more ").width();
        let title = if title.width() + widest <= room {
            title
        } else {
            " Review "
        };
        block = block
            .title(Span::styled(title, t.bold()))
            .title(Line::from(Span::styled(at, t.key())).right_aligned());
        let label = |a: Action| keymap.binding(a).map(|b| b.label.clone());
        format!(
            " {} {} scroll · any other key closes ",
            label(Action::Down).unwrap_or_default(),
            label(Action::Up).unwrap_or_default()
        )
    } else {
        block = block.title(Span::styled(title, t.bold()));
        " any key closes ".to_string()
    };
    let block = block.title_bottom(Line::from(Span::styled(bottom, t.dim())).right_aligned());
    let inner = block.inner(r);
    f.render_widget(block, r);
    let shown: Vec<Line> = lines.into_iter().skip(scroll).take(inner_h).collect();
    f.render_widget(Paragraph::new(shown), inner);
}

/// ` 3-11 of 30 ↑↓ more `: the rows an overlay of `inner_h` rows shows of its `n`, from
/// row `scroll`, and whether more are below (`↓`), above (`↑`) or both.
fn position_title(scroll: usize, inner_h: usize, n: usize) -> String {
    let more = match (scroll > 0, scroll + inner_h < n) {
        (true, true) => "↑↓ more",
        (false, _) => "↓ more",
        (true, false) => "↑ more",
    };
    format!(" {}-{} of {n} {more} ", scroll + 1, scroll + inner_h)
}

/// The review overlay's rows for `change`, wrapped to `width` columns: when and what
/// changed, the files, then each kind of flip with its flips (id, from → to, why), a
/// flip's continuation rows indented under its id.
fn review_lines(t: &Theme, c: &ContractChange, width: usize) -> Vec<Line<'static>> {
    let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
    let mut logical: Vec<(Vec<(String, Style)>, usize)> = vec![
        (
            vec![
                (format!(" {} ", c.at), t.dim()),
                (contract_note(c), t.flip()),
            ],
            1,
        ),
        (
            vec![(format!(" files: {}", esc(&c.causes.join(", "))), t.dim())],
            8,
        ),
    ];
    for kind in crate::core::review::FlipKind::ALL {
        let flips: Vec<_> = c.flips.iter().filter(|e| e.flip.kind == kind).collect();
        if flips.is_empty() {
            continue;
        }
        logical.push((Vec::new(), 0));
        logical.push((
            vec![(format!(" {} ({})", kind.title(), flips.len()), t.bold())],
            1,
        ));
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
            logical.push((
                vec![
                    (format!("   {} ", esc(&fl.id)), Style::new()),
                    (esc(&fl.old.label()), t.decision(fl.old.decision)),
                    (" → ".into(), t.dim()),
                    (esc(&fl.new.label()), t.decision(fl.new.decision)),
                    (format!("  {why}"), t.dim()),
                ],
                5,
            ));
        }
    }
    // a flip's cause (the error it now has) can be longer than the overlay is wide
    logical
        .into_iter()
        .flat_map(|(segments, indent)| {
            wrap_segments(&segments, width, indent)
                .into_iter()
                .map(Line::from)
        })
        .collect()
}

/// How many rows the review overlay of `change` on a terminal of `area` can be scrolled
/// down: its wrapped rows past those its border holds (0 when it fits or shows no change).
pub fn review_max_scroll(area: Rect, change: Option<&ContractChange>) -> usize {
    let r = review_rect(area);
    change.map_or(0, |c| {
        review_lines(&Theme::default(), c, r.width.saturating_sub(2) as usize)
            .len()
            .saturating_sub(r.height.saturating_sub(2) as usize)
    })
}

/// How many rows a page of the review overlay on a terminal of `area` is (its inner
/// height less one, as the help's).
pub fn review_page(area: Rect) -> usize {
    (review_rect(area).height.saturating_sub(3) as usize).max(1)
}

/// The review overlay's rectangle on a terminal of `area`: centred, up to 110 columns, the
/// terminal's height less four (at least five rows).
pub fn review_rect(area: Rect) -> Rect {
    let w = 110.min(area.width.saturating_sub(2));
    let h = area.height.saturating_sub(4).max(5).min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Clears an overlay's rectangle `r` and a column either side of it (within `area`): the
/// panes' borders would otherwise show a column outside the overlay's own, beside its
/// corners (`┌│`, `└└`).
fn clear_around(f: &mut Frame, area: Rect, r: Rect) {
    let x = r.x.saturating_sub(1).max(area.x);
    let right = (r.right() + 1).min(area.right());
    f.render_widget(Clear, Rect::new(x, r.y, right - x, r.height));
}

/// The help overlay's rectangle on a terminal of `area`, from `keymap` (as tall as its
/// rows, at most the terminal's height less two).
pub fn help_rect(area: Rect, keymap: &Keymap) -> Rect {
    help_layout(area, &Theme::default(), keymap).0
}

/// Draws the help overlay over `area`, from `keymap`, `scroll` rows down (clamped to
/// [`help_max_scroll`]); its top border says which rows show and whether more are below
/// or above.
pub fn draw_help(f: &mut Frame, area: Rect, t: &Theme, keymap: &Keymap, scroll: usize) {
    let (r, lines) = help_layout(area, t, keymap);
    clear_around(f, area, r);
    let inner_h = r.height.saturating_sub(2) as usize;
    let n = lines.len();
    let scroll = scroll.min(n.saturating_sub(inner_h));
    let mut block = Block::bordered()
        .title(Span::styled(" Help ", t.bold()))
        .border_style(t.focus_border());
    let label = |a: Action| keymap.binding(a).map(|b| b.label.clone());
    let mut closes: Vec<String> = [Action::Clear, Action::Help]
        .into_iter()
        .filter_map(label)
        .collect();
    // the quit key closes the help; a Ctrl key bound to quit (C-c) still quits
    if let Some(b) = keymap.binding(Action::Quit) {
        closes.extend(
            b.keys
                .iter()
                .filter(|k| !matches!(k, Key::Ctrl(_)))
                .map(|k| k.label()),
        );
    }
    let closes = closes.join(" ");
    let bottom = if n > inner_h {
        let (down, up) = (
            label(Action::Down).unwrap_or_default(),
            label(Action::Up).unwrap_or_default(),
        );
        block = block.title(
            Line::from(Span::styled(position_title(scroll, inner_h, n), t.key())).right_aligned(),
        );
        format!(" {down} {up} scroll · {closes} close ")
    } else {
        format!(" {closes} close ")
    };
    let block = block.title_bottom(Line::from(Span::styled(bottom, t.dim())).right_aligned());
    let inner = block.inner(r);
    f.render_widget(block, r);
    let shown: Vec<Line> = lines.into_iter().skip(scroll).take(inner_h).collect();
    f.render_widget(Paragraph::new(shown), inner);
}

/// How many rows the help overlay on a terminal of `area` can be scrolled down: its
/// wrapped rows past those its border holds (0 when it fits).
pub fn help_max_scroll(area: Rect, keymap: &Keymap) -> usize {
    let (r, lines) = help_layout(area, &Theme::default(), keymap);
    lines
        .len()
        .saturating_sub(r.height.saturating_sub(2) as usize)
}

/// How many rows a page of the help overlay on a terminal of `area` is (its inner height
/// less one, so a row of the last page stays in view).
pub fn help_page(area: Rect, keymap: &Keymap) -> usize {
    let (r, _) = help_layout(area, &Theme::default(), keymap);
    (r.height.saturating_sub(3) as usize).max(1)
}

/// One entry of the help overlay: its label and its text, in items (a tab key, a
/// decision's glyph and name) kept whole on a row when they fit, `sep` between them.
struct HelpEntry {
    label: String,
    items: Vec<Vec<(String, Style)>>,
    sep: &'static str,
}

/// The help overlay on a terminal of `area`: its rectangle (centred, up to 118 columns,
/// as tall as its rows or the terminal less two), and its rows: each key's label, then
/// its description wrapped to the width left, the continuation rows indented under the
/// description; then the mouse, the rows' glyphs and the marks.
fn help_layout(area: Rect, t: &Theme, keymap: &Keymap) -> (Rect, Vec<Line<'static>>) {
    // wide enough for the filter's and the tabs' rows after the widest keys (`PgDn/C-d`)
    let w = 118.min(area.width.saturating_sub(2));
    let inner_w = w.saturating_sub(2) as usize;
    let plain = |s: &str| vec![(s.to_string(), Style::new())];
    let mut entries: Vec<HelpEntry> = help_rows(keymap)
        .into_iter()
        .map(|(label, text)| {
            // the tabs' row: one item per tab (`1 Diff`), two spaces apart
            let items = if label == "tabs" {
                text.split("  ").map(plain).collect()
            } else {
                vec![plain(&text)]
            };
            HelpEntry {
                label,
                items,
                sep: "  ",
            }
        })
        .collect();
    entries.push(HelpEntry {
        label: "mouse".into(),
        items: vec![plain("click selects a row or a tab, the wheel scrolls")],
        sep: "",
    });
    // the glyph each row starts with: its decision (`docs/verdicts.md#decisions`)
    let mut decisions: Vec<Vec<(String, Style)>> = [
        Decision::ReadyForCommit,
        Decision::Retry,
        Decision::Regenerate,
        Decision::Recheck,
        Decision::Reject,
    ]
    .into_iter()
    .map(|d| {
        vec![
            (d.glyph().to_string(), t.decision(d)),
            (format!(" {}", d.as_str()), Style::new()),
        ]
    })
    .collect();
    decisions.push(vec![("(the decision)".into(), t.dim())]);
    entries.push(HelpEntry {
        label: "rows".into(),
        items: decisions,
        sep: "   ",
    });
    entries.push(HelpEntry {
        label: "marks".into(),
        items: vec![
            plain("↺ verdict flipped this session"),
            plain("≠ verdict misses the capture's expect"),
        ],
        sep: "   ",
    });
    // the label column: the widest label and two spaces, at most a third of the width (a
    // longer label has a row of its own)
    let widest = entries.iter().map(|e| e.label.width()).max().unwrap_or(0);
    let col = (widest + 2).min(inner_w / 3).max(1);
    let room = inner_w.saturating_sub(col + 1).max(1);
    let mut lines = Vec::new();
    for e in entries {
        let rows = wrap_items(&e.items, e.sep, room);
        let alone = e.label.width() + 1 > col;
        if alone {
            lines.push(Line::from(Span::styled(format!(" {}", e.label), t.key())));
        }
        for (i, row) in rows.into_iter().enumerate() {
            let gutter = if i == 0 && !alone {
                let pad = col - e.label.width();
                Span::styled(format!(" {}{}", e.label, " ".repeat(pad)), t.key())
            } else {
                Span::raw(" ".repeat(col + 1))
            };
            lines.push(Line::from([vec![gutter], row].concat()));
        }
    }
    let h = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    (r, lines)
}

/// Items of styled text laid into rows of `width` columns, `sep` between two items on a
/// row: an item goes whole to the row if it fits there, else starts the next row; one
/// wider than a row is wrapped itself ([`wrap_segments`]), its last row the one the next
/// item may join.
fn wrap_items(items: &[Vec<(String, Style)>], sep: &str, width: usize) -> Vec<Vec<Span<'static>>> {
    let mut rows: Vec<Vec<Span<'static>>> = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for item in items {
        let w: usize = item.iter().map(|(s, _)| s.width()).sum();
        if !row.is_empty() && used + sep.width() + w <= width {
            row.push(Span::raw(sep.to_string()));
            row.extend(item.iter().map(|(s, st)| Span::styled(s.clone(), *st)));
            used += sep.width() + w;
            continue;
        }
        if !row.is_empty() {
            rows.push(std::mem::take(&mut row));
        }
        let mut parts = wrap_segments(item, width, 0);
        row = parts.pop().unwrap_or_default();
        used = row.iter().map(|s| s.content.width()).sum();
        rows.extend(parts);
    }
    rows.push(row);
    rows
}

/// The help overlay's rows (keys, what they do), from the keymap; the tab keys share one
/// row (`tabs  1 Diff  2 Proposal ... 0 Repair`, by their labels).
pub fn help_rows(keymap: &Keymap) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let mut tabs: Vec<String> = Vec::new();
    for b in &keymap.bindings {
        if let Action::ShowTab(tab) = b.action {
            if tabs.is_empty() {
                rows.push((String::new(), String::new()));
            }
            tabs.push(format!("{} {}", b.label, tab.title()));
            continue;
        }
        // every key of the binding (`PgDn/C-d`, `q/C-c`), where the footer's label may
        // name only the first
        let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
        rows.push((keys.join("/"), b.action.description().to_string()));
    }
    if let Some(slot) = rows.iter_mut().find(|r| r.0.is_empty()) {
        *slot = ("tabs".into(), tabs.join("  "));
    }
    rows
}
