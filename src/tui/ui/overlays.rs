//! The overlays over the whole screen: the help (from the keymap) and the review of the
//! last schema or rules change.

use super::header::contract_note;
use super::message;
use crate::core::verdict::Decision;
use crate::tui::app::ContractChange;
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// Draws the review overlay over `area`: the flips of `change`, grouped by kind.
pub fn draw_review(f: &mut Frame, area: Rect, t: &Theme, change: Option<&ContractChange>) {
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
    let Some(c) = change else {
        message(
            t,
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
    // a flip's cause (the error it now has) can be longer than the overlay is wide
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// Draws the help overlay over `area`, from `keymap`.
pub fn draw_help(f: &mut Frame, area: Rect, t: &Theme, keymap: &Keymap) {
    // wide enough for the tabs row (` tabs   1 Diff  2 Proposal ... 9 Chain  0 Repair`)
    let w = 114.min(area.width.saturating_sub(2));
    let rows = help_rows(keymap);
    // the rows, then the mouse, the decisions' glyphs and the marks, inside the border
    let h = (rows.len() as u16 + 5).min(area.height.saturating_sub(2));
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    // the quit key still quits here (the overlay closes on any other key)
    let quit = keymap
        .binding(Action::Quit)
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
    // the glyph each row starts with: its decision (`docs/verdicts.md#decisions`)
    let mut decisions = vec![Span::styled(format!(" {:<7}", "rows"), t.key())];
    for d in [
        Decision::ReadyForCommit,
        Decision::Retry,
        Decision::Regenerate,
        Decision::Recheck,
        Decision::Reject,
    ] {
        decisions.push(Span::styled(d.glyph(), t.decision(d)));
        decisions.push(Span::raw(format!(" {}   ", d.as_str())));
    }
    decisions.push(Span::styled("(the decision)", t.dim()));
    lines.push(Line::from(decisions));
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<7}", "marks"), t.key()),
        Span::raw("↺ verdict flipped this session   ≠ verdict misses the capture's expect"),
    ]));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The help overlay's rows (keys, what they do), from the keymap; the tab keys share one
/// row (`tabs  1 Diff  2 Proposal ... 0 Repair`).
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
        rows.push((b.label.to_string(), b.action.description().to_string()));
    }
    if let Some(slot) = rows.iter_mut().find(|r| r.0.is_empty()) {
        *slot = ("tabs".into(), tabs.join("  "));
    }
    rows
}
