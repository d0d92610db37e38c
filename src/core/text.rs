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

/// The line starts of one text, found once, so that many offsets of that text map to
/// line:column ([`LineIndex::line_col`]) without rescanning what comes before them.
///
/// Building it is one pass over the text for `\n` (memchr); each lookup is a binary search
/// over the line starts plus a character count of at most 512 bytes: the part of the
/// line before the offset when that is short, else (a long line, such as a whole minified
/// document) the distance from the nearest of the character counts kept every 256 bytes, made
/// on the first such lookup in one pass over the text. The results are exactly
/// [`line_col`]'s.
#[derive(Debug, Clone)]
pub struct LineIndex<'t> {
    text: &'t str,
    /// Byte offset of the start of every line: 0, then one past each `\n`.
    starts: Vec<usize>,
    /// The characters before each [`LineIndex::BLOCK`]-byte block of the text (lazily made).
    blocks: std::cell::OnceCell<Vec<usize>>,
}

impl<'t> LineIndex<'t> {
    /// Bytes a block of [`LineIndex::blocks`] spans.
    const BLOCK: usize = 256;

    /// The index of `text` (one scan for line feeds).
    pub fn new(text: &'t str) -> LineIndex<'t> {
        let mut starts = Vec::with_capacity(1 + text.len() / 64);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex {
            text,
            starts,
            blocks: std::cell::OnceCell::new(),
        }
    }

    /// Line:column (1-based, column in characters) of byte `offset`, as [`line_col`] gives
    /// it: an offset past the end is clamped to the end; an offset inside a multi-byte
    /// character counts that character.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        // the last line that starts at or before `offset` (`starts[0]` is 0)
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let column = if offset - start <= 2 * Self::BLOCK {
            count_chars(&self.text.as_bytes()[start..offset])
        } else {
            self.chars_before(offset) - self.chars_before(start)
        };
        LineCol {
            line: line as u32 + 1,
            column: column as u32 + 1,
        }
    }

    /// The characters that start before byte `offset` (at most the text's length).
    fn chars_before(&self, offset: usize) -> usize {
        let b = self.text.as_bytes();
        let blocks = self.blocks.get_or_init(|| {
            let mut total = 0;
            b.chunks(Self::BLOCK)
                .map(|chunk| {
                    let before = total;
                    total += count_chars(chunk);
                    before
                })
                .collect()
        });
        let block = offset / Self::BLOCK;
        match blocks.get(block) {
            Some(&before) => before + count_chars(&b[block * Self::BLOCK..offset]),
            // `offset` is the end of a text that fills its last block
            None => blocks.last().map_or(0, |&before| {
                before + count_chars(&b[(blocks.len() - 1) * Self::BLOCK..])
            }),
        }
    }
}

/// The characters that start in `bytes` (UTF-8): every byte that is not a continuation byte.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_agrees_with_line_col() {
        let t = "{\"éé\": tru}\nx";
        let idx = LineIndex::new(t);
        assert_eq!(idx.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(idx.line_col(9), LineCol { line: 1, column: 8 });
        assert_eq!(idx.line_col(t.len() - 1), LineCol { line: 2, column: 1 });
        assert_eq!(idx.line_col(999), LineCol { line: 2, column: 2 });
        // inside the first `é` (bytes 2..4): that character counts, as in `line_col`
        assert_eq!(idx.line_col(3), LineCol { line: 1, column: 4 });
        assert_eq!(line_col(t, 3), LineCol { line: 1, column: 4 });
        let empty = LineIndex::new("");
        assert_eq!(empty.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(empty.line_col(5), LineCol { line: 1, column: 1 });
        let lf = LineIndex::new("\n\n");
        assert_eq!(lf.line_col(1), LineCol { line: 2, column: 1 });
        assert_eq!(lf.line_col(2), LineCol { line: 3, column: 1 });
        // one long line: columns past the block counts, at and after a block boundary
        let long = format!("{}\n{}", "é".repeat(3000), "€".repeat(1500));
        let idx = LineIndex::new(&long);
        for offset in [4096, 4097, 6000, 6001, 6002, 6003, 8000, long.len()] {
            assert_eq!(idx.line_col(offset), line_col(&long, offset), "@{offset}");
        }
        assert_eq!(
            idx.line_col(5000),
            LineCol {
                line: 1,
                column: 2501
            }
        );
        assert_eq!(
            idx.line_col(long.len()),
            LineCol {
                line: 2,
                column: 1501
            }
        );
    }

    /// Property: over random texts of multi-byte characters, CR, LF and CRLF, every offset
    /// (and some past the end) maps to what the whole-prefix [`line_col`] gives; every 20th
    /// text has lines of several KiB (line breaks rare), which take the block counts.
    #[test]
    fn line_index_equals_line_col_on_random_texts() {
        let alphabet = [
            "a", " ", "\n", "\r", "\r\n", "é", "€", "𝄞", "\"", "\n\n", "x\u{0}",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..300 {
            let long = round % 20 == 0;
            let len = (next() % if long { 6000 } else { 80 }) as usize;
            let text: String = (0..len)
                .map(|_| match next() % alphabet.len() as u64 {
                    // long texts: a line break one time in 1,000
                    2 | 4 | 9 if long && next() % 1000 != 0 => "é",
                    i => alphabet[i as usize],
                })
                .collect();
            let idx = LineIndex::new(&text);
            let step = if long { 31 } else { 1 };
            for offset in (0..=text.len() + 3).step_by(step).chain([text.len()]) {
                assert_eq!(
                    idx.line_col(offset),
                    line_col(&text, offset),
                    "{text:?} @{offset}"
                );
            }
        }
    }

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

/// A path as messages, contract names and reports write it: its text (lossy when it is not
/// UTF-8) with the platform's separator written `/`. Only the separator: on Unix a
/// backslash is an ordinary character of a file name and stays (`schemas/back\slash.json`
/// is the contract `back\slash`, `docs/capture-record.md#choosing-the-contract`); on Windows,
/// where `\` is the separator, it becomes `/`.
pub fn slash_path(p: &std::path::Path) -> String {
    let s = p.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '\\' {
        s.replace('\\', "/")
    } else {
        s.into_owned()
    }
}

/// Untrusted text made safe for a terminal: [`crate::core::escape::for_terminal`].
pub use crate::core::escape::for_terminal as escape_control;

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
