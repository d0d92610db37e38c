//! Positions in text: byte offsets to 1-based line and character column.

use crate::core::verdict::LineCol;

/// Line:column (1-based, column in characters) of byte `offset` in `text`.
/// An offset past the end is clamped to the end; an offset inside a multi-byte
/// character counts that character.
pub fn line_col(text: &str, offset: usize) -> LineCol {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    // count characters: every byte that is not a UTF-8 continuation byte starts one
    let column = before[line_start..]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count() as u32
        + 1;
    LineCol { line, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters() {
        let t = "{\"éé\": tru}\nx";
        assert_eq!(line_col(t, 0), LineCol { line: 1, column: 1 });
        // `t` of `tru` is byte 9 (é is 2 bytes), char column 8
        assert_eq!(line_col(t, 9), LineCol { line: 1, column: 8 });
        assert_eq!(line_col(t, t.len() - 1), LineCol { line: 2, column: 1 });
        assert_eq!(line_col(t, 999), LineCol { line: 2, column: 2 });
    }
}

/// `s` with every control character (C0, DEL, C1) and the Unicode bidi controls escaped as
/// `\n`, `\t`, `\u{1b}`..., so untrusted model text can never drive the terminal.
/// Returns the input unchanged (borrowed) when there is nothing to escape.
pub fn escape_control(s: &str) -> std::borrow::Cow<'_, str> {
    let bad =
        |c: char| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if bad(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod escape_tests {
    use super::escape_control;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_control("plain é"), "plain é");
        assert_eq!(
            escape_control("\u{1b}[31mred\u{7}\n"),
            "\\u{1b}[31mred\\u{7}\\n"
        );
        assert_eq!(escape_control("a\u{9b}b\u{202e}"), "a\\u{9b}b\\u{202e}");
    }
}

/// The JSON type of a value with an article, for messages: `an array`, `null`.
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
