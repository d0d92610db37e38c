//! The footer line: the filter prompt while it is typed, else the note answering the last key
//! (until the next key), else the status message, else the keymap's hints (dropped from the
//! middle until they fit, never help and quit).

use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the footer into `r`: `editing` is the filter text while it is being typed,
/// `status` the one-line note or status message (`App::note` over `App::status`).
pub fn draw(
    f: &mut Frame,
    r: Rect,
    t: &Theme,
    keymap: &Keymap,
    editing: Option<&str>,
    status: Option<&str>,
) {
    if let Some(filter) = editing {
        let mut line = Line::from(vec![
            Span::styled(" /", t.key()),
            Span::raw(crate::core::text::escape_control(filter).into_owned()),
            Span::styled("█", t.key()),
        ]);
        // the filter's hints, as many as fit whole, in this order; `…` for the rest (the
        // help lists every token)
        let hints = [
            "Enter keep",
            "Esc clear",
            "stage:",
            "reason:",
            "decision:",
            "contract:",
            "pointer:",
            "repair:",
            "would:",
            "flipped",
            "unmet",
            "! not",
        ];
        let width = r.width as usize;
        let sep = |i: usize| {
            if i < 3 || i + 1 == hints.len() {
                "  "
            } else {
                " "
            }
        };
        let full: String = hints
            .iter()
            .enumerate()
            .map(|(i, h)| format!("{}{h}", sep(i)))
            .collect();
        let text = if line.width() + full.chars().count() <= width {
            full
        } else {
            let mut text = String::new();
            for (i, h) in hints.iter().enumerate() {
                let next = format!("{}{h}", sep(i));
                if line.width() + text.chars().count() + next.chars().count() + 2 > width {
                    break;
                }
                text.push_str(&next);
            }
            text + " …"
        };
        line.spans.push(Span::styled(text, t.dim()));
        f.render_widget(Paragraph::new(line), r);
        return;
    }
    if let Some(s) = status {
        f.render_widget(Paragraph::new(Span::styled(format!(" {s}"), t.warn())), r);
        return;
    }
    // drop hints from the middle (never help and quit) until the line fits
    let mut hs: Vec<(String, &str)> = keymap.hints();
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
