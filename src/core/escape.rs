//! Control-character escaping: the one place untrusted text (model output, provider fields,
//! file names, JSON keys) is made safe to show. Two forms:
//!
//! * [`for_terminal`]: a whole text for a screen or a report line (the human, github and
//!   TUI output, every CLI error). Every control character (C0, DEL, C1) and every Unicode
//!   bidirectional control (U+202A..U+202E, U+2066..U+2069) is written as `\n`, `\r`, `\t`
//!   or `\u{1b}`, so model text and file names can never move the cursor, change colours,
//!   set the window title or the clipboard, or reorder what a reader sees.
//!   [`quoted`] and [`path`] are the same for a name quoted in a message.
//! * [`quote`] / [`for_message`]: an excerpt inside a finding's message, in the JSON string
//!   notation a reader of JSON expects (`"a\u001b[31m"`): control characters, whitespace
//!   other than the space, and the invisible zero-width marks (U+200B..U+200F, U+FEFF) are
//!   `\uXXXX`, so `"5000 "` and `"5000\u00a0"` read differently.
//!
//! The rules are `docs/commands.md#untrusted-text`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must never reach a terminal as it is.
fn drives_terminal(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Pushes `s` onto `out` as [`for_terminal`] shows it, `"` and `\` escaped too when `quoted`.
fn push_for_terminal(out: &mut String, s: &str, quoted: bool) {
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' | '\\' if quoted => {
                out.push('\\');
                out.push(c);
            }
            c if drives_terminal(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// `s` with every control character (C0, DEL, C1) and the Unicode bidi controls escaped as
/// `\n`, `\t`, `\u{1b}`..., so untrusted model text can never drive the terminal. Returns the input unchanged (borrowed) when there is nothing to
/// escape.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(drives_terminal) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_for_terminal(&mut out, s, false);
    Cow::Owned(out)
}

/// `s` in double quotes for a message on a terminal (an id, a revision, an argument as the
/// user typed it): [`for_terminal`]'s escapes, and `"` and `\` escaped as `\"` and `\\`:
/// `"evil\u{1b}[2J"`. A plain name reads as Rust's `{:?}` would show it.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    push_for_terminal(&mut out, s, true);
    out.push('"');
    out
}

/// A path for a message on a terminal: its text (lossy when it is not UTF-8) through
/// [`for_terminal`], so a file name holding `ESC`, `CR` or a line break shows as
/// `\u{1b}`, `\r`, `\n`.
pub fn path(p: &std::path::Path) -> String {
    for_terminal(&p.to_string_lossy()).into_owned()
}

/// A whole message for a terminal whose own line breaks are kept (an error with a TOML
/// excerpt below it): each line through [`for_terminal`]. The names the message quotes are
/// escaped where it is built ([`quoted`], [`path`]), line breaks included; this is the last
/// guard where every error is printed.
pub fn lines_for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && drives_terminal(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_for_terminal(&mut out, line, false);
    }
    Cow::Owned(out)
}

/// Pushes `c` as a message shows it; `"` is escaped inside a quoted excerpt.
fn push_for_message(out: &mut String, c: char, quoted: bool) {
    match c {
        '"' if quoted => out.push_str("\\\""),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control()
            || (c.is_whitespace() && c != ' ')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{feff}') =>
        {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

/// `s` with control, non-space whitespace and invisible characters escaped, for a message.
pub fn for_message(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_for_message(&mut out, c, false);
    }
    out
}

/// At most `max` characters of `s` in double quotes (`…` after a cut), quotes and the
/// characters [`for_message`] escapes escaped: `"a\u001b[31m"`.
pub fn quote(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max) + 2);
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        push_for_message(&mut out, c, true);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escaping() {
        assert!(matches!(for_terminal("plain é 🙂"), Cow::Borrowed(_)));
        assert_eq!(
            for_terminal("\u{1b}[31mred\u{7}\n\u{202e}x\u{9b}"),
            "\\u{1b}[31mred\\u{7}\\n\\u{202e}x\\u{9b}"
        );
    }

    #[test]
    fn message_excerpts() {
        assert_eq!(quote("a\u{1b}[31m", 32), "\"a\\u001b[31m\"");
        assert_eq!(quote("say \"hi\"", 32), "\"say \\\"hi\\\"\"");
        assert_eq!(quote("5000\u{a0}", 32), "\"5000\\u00a0\"");
        assert_eq!(quote("\u{feff}x", 32), "\"\\ufeffx\"");
        assert_eq!(quote("abcdef", 3), "\"abc…\"");
        assert_eq!(for_message("/a\tb"), "/a\\tb");
    }
}
