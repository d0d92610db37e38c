//! The left pane: the capture list (only the rows on screen are built) or the triage tree.

use super::{fit_title, pad, pad_middle, pane};
use crate::core::verdict::Stage;
use crate::tui::app::{ChainNode, ChainTree, FilterJob, List, Triage};
use crate::tui::store::Store;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The id column's least width in a narrow list: 20 characters and the `…` of a cut id.
const ID_MIN: usize = 21;

/// The reason column's most width: the longest reason code's (`NON_STANDARD_NUMBER`, 19).
const REASON_MAX: usize = 19;

/// What the list reads besides its rows.
pub struct Status<'a> {
    /// The filter (its text and progress go in the title).
    pub filter: &'a FilterJob,
    /// Whether the list has the keyboard.
    pub focused: bool,
    /// Whether a validation run is going on (an empty list says so).
    pub running: bool,
    /// Whether the last run failed (an empty list says so, not that there is no capture).
    pub failed: bool,
    /// Whether the selected capture was deleted (its row is gone: no row is highlighted).
    pub gone: bool,
}

/// Draws the capture list into `r`.
pub fn draw_list(f: &mut Frame, r: Rect, t: &Theme, list: &List, s: Status<'_>) {
    let (store, view) = (&list.store, &list.view);
    let mut title = vec![Span::styled(" Captures ", t.bold())];
    // a filter's matches of all (the view of an unfiltered list may lag its rows by a
    // rebuild while they come: the count is the rows')
    if view.len() != store.len() && !s.filter.text.is_empty() {
        title.push(Span::raw(format!("{}/{} ", view.len(), store.len())));
    } else {
        title.push(Span::raw(format!("{} ", store.len())));
    }
    if !s.filter.text.is_empty() {
        title.push(Span::styled(
            format!("/{} ", crate::core::text::escape_control(&s.filter.text)),
            t.key(),
        ));
    }
    if let Some(p) = s.filter.progress() {
        title.push(Span::styled(format!("filtering {p}% "), t.dim()));
    }
    let block = pane(t, fit_title(Line::from(title), r.width), s.focused);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let h = inner.height as usize;
    if view.is_empty() {
        let msg = if store.is_empty() {
            if s.running {
                "validating…".to_string()
            } else if s.failed {
                "the run failed: the last line says why".to_string()
            } else {
                // the layout hint `check` gives
                crate::core::workspace::NO_CAPTURES.to_string()
            }
        } else {
            match s.filter.hint() {
                Some(h) => format!(
                    "no capture matches the filter (Esc clears it): {}",
                    crate::core::text::escape_control(h)
                ),
                None => "no capture matches the filter (Esc clears it)".to_string(),
            }
        };
        f.render_widget(
            Paragraph::new(Span::styled(msg, t.dim())).wrap(ratatui::widgets::Wrap { trim: true }),
            inner,
        );
        return;
    }
    // a list without room for the stage word, a reason's full name (`REASON_MAX`) and an
    // id of 20 characters (`ID_MIN` columns) drops the stage word (the decision glyph and
    // the reason, which names its stage, stay; the strip above the detail pane names the
    // stage) and narrows the reason only when it must, so that the id keeps its 20
    let compact = (inner.width as usize) < 3 + 9 + REASON_MAX + 1 + ID_MIN;
    let widest = view
        .iter()
        .skip(list.offset)
        .take(h)
        .map(|&i| {
            reason_label(store, &store.rows[i as usize], compact)
                .chars()
                .count()
        })
        .max()
        .unwrap_or(0)
        .min(REASON_MAX);
    // the ids on screen: a reason is narrowed only as far as the longest of them (up to
    // `ID_MIN`) needs
    let longest_id = view
        .iter()
        .skip(list.offset)
        .take(h)
        .map(|&i| {
            let row = &store.rows[i as usize];
            let id = if Store::is_pending(row) {
                store.source(row)
            } else {
                let mark = if store.kind(row).outcome.misses_expect() {
                    "  "
                } else {
                    ""
                };
                format!("{}{mark}", store.id(row))
            };
            super::columns(&crate::core::text::escape_control(&id))
        })
        .max()
        .unwrap_or(0)
        .min(ID_MIN);
    let (stage_w, reason_w) = if compact {
        (
            0,
            widest.min((inner.width as usize).saturating_sub(3 + 1 + longest_id)),
        )
    } else {
        (9, widest.min(inner.width.saturating_sub(14) as usize / 2))
    };
    let id_w = (inner.width as usize).saturating_sub(3 + stage_w + reason_w + 1);
    let lines: Vec<Line> = view
        .iter()
        .enumerate()
        .skip(list.offset)
        .take(h)
        .map(|(pos, &i)| {
            let row = &store.rows[i as usize];
            if Store::is_pending(row) {
                // a record listed by the pre-pass, its verdict to come: its source, dim
                let mut line = Line::from(vec![
                    Span::raw(" "),
                    Span::styled("· ", t.dim()),
                    Span::styled(
                        if compact {
                            String::new()
                        } else {
                            pad("pending", 8) + " "
                        },
                        t.dim(),
                    ),
                    Span::styled(pad(reason_label(store, row, compact), reason_w), t.dim()),
                    Span::raw(" "),
                    Span::styled(
                        pad_middle(&crate::core::text::escape_control(&store.source(row)), id_w),
                        t.dim(),
                    ),
                ]);
                if pos == list.cursor && !s.gone {
                    line = line.patch_style(t.selected());
                }
                return line;
            }
            let v = store.kind(row);
            let id = store.id(row);
            let ds = t.decision(v.outcome.decision);
            let reason = reason_label(store, row, compact);
            let flipped = row.flags & crate::tui::store::FLIPPED != 0;
            let mut line = Line::from(vec![
                Span::styled(if flipped { "↺" } else { " " }, t.flip()),
                Span::styled(format!("{} ", v.outcome.decision.glyph()), ds),
                Span::styled(
                    if compact {
                        String::new()
                    } else {
                        pad(v.outcome.stage.as_str(), 8) + " "
                    },
                    ds,
                ),
                Span::styled(
                    pad(&crate::core::text::escape_control(reason), reason_w),
                    ds,
                ),
                Span::raw(" "),
            ]);
            if v.outcome.misses_expect() && id_w > 4 {
                // like `check`'s NOT AS EXPECTED: the verdict misses the capture's `expect`
                line.spans.push(Span::raw(pad_middle(
                    &crate::core::text::escape_control(id),
                    id_w - 2,
                )));
                line.spans.push(Span::styled(" ≠", t.fail()));
            } else {
                line.spans.push(Span::raw(pad_middle(
                    &crate::core::text::escape_control(id),
                    id_w,
                )));
            }
            if pos == list.cursor && !s.gone {
                line = line.patch_style(t.selected());
            }
            line
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// A row's text in the reason column: its reason; in a `compact` list (no stage column),
/// the stage word of a row with none (`ready`, `pending`).
fn reason_label<'a>(store: &'a Store, row: &crate::tui::store::Row, compact: bool) -> &'a str {
    if Store::is_pending(row) {
        return if compact { "pending" } else { "" };
    }
    let outcome = &store.kind(row).outcome;
    match &outcome.reason {
        Some(r) => r.as_str(),
        None if compact => outcome.stage.as_str(),
        None => "",
    }
}

/// Draws the triage tree into `r`.
pub fn draw_tree(f: &mut Frame, r: Rect, t: &Theme, triage: &Triage, focused: bool) {
    let title = Line::from(vec![
        Span::styled(" Triage ", t.bold()),
        Span::styled(
            if triage.by_repair {
                "repair > would-be outcome "
            } else {
                "stage > reason > pointer "
            },
            t.dim(),
        ),
    ]);
    let block = pane(t, fit_title(title, r.width), focused);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let w = inner.width as usize;
    let lines: Vec<Line> = triage
        .tree
        .iter()
        .enumerate()
        .skip(triage.offset)
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
            if i == triage.cursor {
                line = line.patch_style(t.selected());
            }
            line
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// Draws the chain tree into `r`: per chain its outcome glyph (`✓` first-pass, `↻`
/// recovered, `✗` unrecovered), outcome, attempt count, flags and id (`▸`/`▾` collapsed or
/// expanded); under an expanded chain its attempts in order (number, decision glyph,
/// stage and reason, the capture's source).
pub fn draw_chains(f: &mut Frame, r: Rect, t: &Theme, tree: &ChainTree, focused: bool) {
    use crate::tui::chain::{attempt_label, outcome_glyph};
    let n = tree.view.as_ref().map_or(0, |v| v.heads.len());
    let title = Line::from(vec![
        Span::styled(" Chains ", t.bold()),
        Span::raw(format!("{n} ")),
        Span::styled("Enter expands ", t.dim()),
    ]);
    let block = pane(t, fit_title(title, r.width), focused);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let Some(v) = &tree.view else { return };
    let w = inner.width as usize;
    let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
    let lines: Vec<Line> = tree
        .nodes
        .iter()
        .enumerate()
        .skip(tree.offset)
        .take(inner.height as usize)
        .map(|(i, node)| {
            let mut line = match *node {
                ChainNode::Chain(c) => {
                    let row = &v.heads[c as usize];
                    let open = if tree.expanded.contains(&row.chain) {
                        "▾"
                    } else {
                        "▸"
                    };
                    let style = match row.outcome {
                        crate::core::chain::outcome::Outcome::Unrecovered => t.fail(),
                        _ => t.pass(),
                    };
                    let flags = if row.flags.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", row.flags.join(", "))
                    };
                    let head = format!(
                        "{} {:<11} {:>3}  ",
                        outcome_glyph(row.outcome),
                        row.outcome.as_str(),
                        row.attempts
                    );
                    let room = w.saturating_sub(2 + head.chars().count());
                    // the id whole before its flags; an id longer than the room is cut in
                    // its middle, as the capture list's are (where chains' ids differ:
                    // `loop-recovered-2`, `loop-recovered-3`), its flags left out
                    let id = esc(&row.chain);
                    let id = if super::columns(&id) >= room {
                        pad_middle(&id, room)
                    } else {
                        pad(&format!("{id}{flags}"), room)
                    };
                    Line::from(vec![
                        Span::raw(format!("{open} ")),
                        Span::styled(head, style),
                        Span::raw(id),
                    ])
                }
                ChainNode::Attempt(c, k) => {
                    let Some(a) = tree.attempt(c, k) else {
                        return Line::default();
                    };
                    let left = format!(
                        "   {:>3} {} {} ",
                        k + 1,
                        a.decision.glyph(),
                        attempt_label(a)
                    );
                    let room = w.saturating_sub(left.chars().count());
                    Line::from(vec![
                        Span::styled(left, t.decision(a.decision)),
                        Span::styled(pad_middle(&esc(&a.source.to_string()), room), t.dim()),
                    ])
                }
            };
            if i == tree.cursor {
                line = line.patch_style(t.selected());
            }
            line
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
