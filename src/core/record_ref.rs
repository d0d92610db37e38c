//! Where a capture record is (`docs/capture-record.md#ids-and-sources`, [`crate::core::capture`]): its capture file and, in
//! a log (`.jsonl`, `.ndjson`, `.jsonl.out`, compressed or not: see [`is_log`]), its 1-based line, and, for a record
//! holding several captures (an OTLP `TracesData` of several LLM spans, a promptfoo results file), the 1-based part
//! within it. This is a verdict's `source`, printed and serialized as `captures/a.json`, `captures/log.jsonl:9`,
//! `captures/log.jsonl:9#2` or `captures/export.json#3`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Whether a capture file is a log (one record per line) by its name: `.jsonl`, `.ndjson`
/// or `.jsonl.out`, optionally compressed (`.jsonl.gz`, `.ndjson.zst`; see
/// [`FileKind::of`](crate::core::capture_file::FileKind::of) and `docs/capture-record.md`).
/// Every reader of capture files decides it with this.
pub fn is_log(path: &Path) -> bool {
    use crate::core::capture_file::{FileKind, Layout};
    FileKind::of(path).is_some_and(|k| k.layout == Layout::Log)
}

/// Where one capture record is (`docs/capture-record.md#ids-and-sources`; the records are read by [`crate::core::capture`]):
/// the capture file and, for a record of a log, its line; for one capture of a record that
/// holds several, its part (`docs/capture-record.md#ids-and-sources`).
///
/// [`Display`](fmt::Display), [`RecordRef::as_str`] and serde all give the text form, `file`,
/// `file:line`, `file#part` or `file:line#part` (`captures/a.json`, `captures/log.jsonl:9`,
/// `captures/log.jsonl:9#2`), made once when the reference is made; [`RecordRef::parse`]
/// reads it back. Cheap to clone (two shared strings). Equal, hashed and ordered by file,
/// then line (a `.json` file's one record first), then part (the whole record first).
#[derive(Debug, Clone)]
pub struct RecordRef {
    /// The capture file: workspace-relative and `/`-separated (`captures/log.jsonl`), or as
    /// named on the command line for `check --schema`; shared between the records of a log.
    file: Arc<str>,
    /// The 1-based line of the record in a log; `None` for a file of one record.
    line: Option<usize>,
    /// The 1-based part of a record holding several captures, in the record's order (the
    /// LLM and tool spans of a `TracesData`, the results of a promptfoo file); `None` for a
    /// record that is one capture.
    part: Option<u32>,
    /// The text form (`file` itself when there is no line).
    text: Arc<str>,
}

thread_local! {
    /// The text of a source being made ([`RecordRef::new_part`]), reused.
    static TEXT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

impl RecordRef {
    /// The record at `line` of `file` (`None`: the file's one record).
    pub fn new(file: impl Into<Arc<str>>, line: Option<usize>) -> RecordRef {
        RecordRef::new_part(file, line, None)
    }

    /// Part `part` (1-based; `None`: the whole record) of the record at `line` of `file`.
    pub fn new_part(
        file: impl Into<Arc<str>>,
        line: Option<usize>,
        part: Option<u32>,
    ) -> RecordRef {
        let file = file.into();
        let text = match (line, part) {
            (None, None) => file.clone(),
            // written into this thread's reused buffer, then copied once into the `Arc`
            // (`Arc::from(String)` allocates and copies anyway: a record would cost two
            // allocations)
            _ => TEXT.with_borrow_mut(|text| {
                text.clear();
                text.push_str(&file);
                if let Some(line) = line {
                    text.push(':');
                    text.push_str(itoa::Buffer::new().format(line));
                }
                if let Some(part) = part {
                    text.push('#');
                    text.push_str(itoa::Buffer::new().format(part));
                }
                Arc::from(text.as_str())
            }),
        };
        RecordRef {
            file,
            line,
            part,
            text,
        }
    }

    /// The record at `line` of the same file (the file shared, not copied).
    pub fn at_line(&self, line: usize) -> RecordRef {
        RecordRef::new(self.file.clone(), Some(line))
    }

    /// Part `part` (1-based) of the same record; `None`: the whole record.
    pub fn with_part(&self, part: Option<u32>) -> RecordRef {
        RecordRef::new_part(self.file.clone(), self.line, part)
    }

    /// The 1-based part of a record that holds several captures; `None` for a whole record.
    pub fn part(&self) -> Option<u32> {
        self.part
    }

    /// The capture file (workspace-relative, `/`-separated).
    pub fn file(&self) -> &Arc<str> {
        &self.file
    }

    /// The 1-based line in a log; `None` for a file of one record.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The text form: `captures/a.json`, `captures/log.jsonl:9`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Reads the text form back. A file name may itself hold `:`, so the text is split at
    /// its last `:` only when what follows is a line number (ASCII digits) and what comes
    /// before names a log ([`is_log`]): `odd:name.jsonl:12` is line 12 of `odd:name.jsonl`;
    /// `a:b.json` and `notes:3` are files of one record. A trailing `#N` (ASCII digits, not
    /// 0) is a part when what comes before names a capture file (a known extension, so
    /// `notes#3` is a file): `log.jsonl:9#2`, `export.json#3`. Never fails.
    pub fn parse(text: &str) -> RecordRef {
        if let Some((whole, part)) = text.rsplit_once('#')
            && !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit())
            && let Ok(part @ 1..) = part.parse::<u32>()
        {
            let whole = RecordRef::parse(whole);
            if whole.part.is_none()
                && crate::core::capture_file::FileKind::of(Path::new(&*whole.file)).is_some()
            {
                return RecordRef {
                    part: Some(part),
                    text: Arc::from(text),
                    ..whole
                };
            }
        }
        let split = text.rsplit_once(':').and_then(|(file, line)| {
            let digits = !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit());
            if !digits || !is_log(Path::new(file)) {
                return None;
            }
            Some((file, line.parse::<usize>().ok()?))
        });
        match split {
            Some((file, line)) => RecordRef {
                file: Arc::from(file),
                line: Some(line),
                part: None,
                text: Arc::from(text),
            },
            None => RecordRef::new(text, None),
        }
    }
}

impl PartialEq for RecordRef {
    fn eq(&self, other: &RecordRef) -> bool {
        self.line == other.line && self.part == other.part && self.file == other.file
    }
}

impl Eq for RecordRef {}

impl std::hash::Hash for RecordRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.file.hash(state);
        self.line.hash(state);
        self.part.hash(state);
    }
}

impl PartialOrd for RecordRef {
    fn partial_cmp(&self, other: &RecordRef) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RecordRef {
    fn cmp(&self, other: &RecordRef) -> std::cmp::Ordering {
        (&self.file, self.line, self.part).cmp(&(&other.file, other.line, other.part))
    }
}

impl fmt::Display for RecordRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Compares with the text form.
impl PartialEq<str> for RecordRef {
    fn eq(&self, text: &str) -> bool {
        *self.text == *text
    }
}

impl PartialEq<&str> for RecordRef {
    fn eq(&self, text: &&str) -> bool {
        *self == **text
    }
}

impl PartialEq<String> for RecordRef {
    fn eq(&self, text: &String) -> bool {
        *self == **text
    }
}

impl Serialize for RecordRef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for RecordRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RecordRef, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(RecordRef::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips() {
        let cases = [
            ("captures/a.json", "captures/a.json", None),
            ("captures/log.jsonl:9", "captures/log.jsonl", Some(9)),
            ("in/x.ndjson:1234567", "in/x.ndjson", Some(1_234_567)),
            ("odd:name.jsonl:12", "odd:name.jsonl", Some(12)),
            ("a:b.json", "a:b.json", None),
            // a line number only follows a log's name
            ("notes:3", "notes:3", None),
            ("x.json:3", "x.json:3", None),
            // not a line number
            ("log.jsonl:", "log.jsonl:", None),
            ("log.jsonl:+9", "log.jsonl:+9", None),
            ("log.jsonl:9a", "log.jsonl:9a", None),
            (
                "log.jsonl:99999999999999999999999",
                "log.jsonl:99999999999999999999999",
                None,
            ),
            ("", "", None),
        ];
        for (text, file, line) in cases {
            assert_eq!(RecordRef::parse(text).part(), None, "{text:?}");
            let r = RecordRef::parse(text);
            assert_eq!((&**r.file(), r.line()), (file, line), "{text:?}");
            assert_eq!(r.to_string(), text);
            assert_eq!(r.as_str(), text);
            assert_eq!(RecordRef::new(r.file().clone(), r.line()).as_str(), text);
            assert!(r == text, "{text:?}");
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            assert_eq!(serde_json::from_str::<RecordRef>(&json).unwrap(), r);
        }
    }

    #[test]
    fn parts_round_trip() {
        let cases = [
            (
                "captures/log.jsonl:9#2",
                "captures/log.jsonl",
                Some(9),
                Some(2),
            ),
            (
                "captures/export.json#3",
                "captures/export.json",
                None,
                Some(3),
            ),
            ("a.jsonl.gz:1#40000", "a.jsonl.gz", Some(1), Some(40_000)),
            // no part: not digits, 0, not after a capture file, twice
            ("captures/log.jsonl:9#", "captures/log.jsonl:9#", None, None),
            (
                "captures/log.jsonl:9#0",
                "captures/log.jsonl:9#0",
                None,
                None,
            ),
            (
                "captures/log.jsonl:9#x",
                "captures/log.jsonl:9#x",
                None,
                None,
            ),
            ("notes#3", "notes#3", None, None),
            ("a.json#1#2", "a.json#1#2", None, None),
        ];
        for (text, file, line, part) in cases {
            let r = RecordRef::parse(text);
            assert_eq!(
                (&**r.file(), r.line(), r.part()),
                (file, line, part),
                "{text:?}"
            );
            assert_eq!(r.as_str(), text);
            assert_eq!(
                RecordRef::new_part(r.file().clone(), r.line(), r.part()).as_str(),
                text
            );
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<RecordRef>(&json).unwrap(), r);
        }
        let whole = RecordRef::new("captures/log.jsonl", Some(9));
        let two = whole.with_part(Some(2));
        assert_eq!(two.as_str(), "captures/log.jsonl:9#2");
        assert!(Arc::ptr_eq(whole.file(), two.file()));
        assert!(whole != two && whole < two && two < whole.with_part(Some(10)));
        assert!(two < RecordRef::new("captures/log.jsonl", Some(10)));
        assert_eq!(two.with_part(None), whole);
    }

    #[test]
    fn serialized_as_escaped_text() {
        let r = RecordRef::new("odd \"q\" \\ \u{1b}[31m é.jsonl", Some(7));
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, r#""odd \"q\" \\ \u001b[31m é.jsonl:7""#);
        assert_eq!(serde_json::from_str::<RecordRef>(&json).unwrap(), r);
    }

    #[test]
    fn compares_with_the_text_form() {
        let r = RecordRef::new("captures/log.jsonl", Some(9));
        assert!(r == "captures/log.jsonl:9");
        for other in [
            "captures/log.jsonl",
            "captures/log.jsonl:90",
            "captures/log.jsonl:",
            "captures/log.jsonl9",
            "aptures/log.jsonl:9",
        ] {
            assert!(r != other, "{other:?}");
        }
        let one = RecordRef::new("captures/a.json", None);
        assert!(one == "captures/a.json");
        assert!(one != "captures/a.json:1");
        let text = String::from("captures/a.json");
        assert!(one == text);
    }

    #[test]
    fn other_lines_share_the_file() {
        let r = RecordRef::new("captures/log.jsonl", Some(1));
        let s = r.at_line(12);
        assert!(Arc::ptr_eq(r.file(), s.file()));
        assert_eq!(s.to_string(), "captures/log.jsonl:12");
        assert!(RecordRef::new("a.jsonl", None) < RecordRef::new("a.jsonl", Some(1)));
        assert!(RecordRef::new("a.jsonl", Some(9)) < RecordRef::new("a.jsonl", Some(10)));
    }

    #[test]
    fn logs_by_extension() {
        assert!(is_log(Path::new("a/b.jsonl")));
        assert!(is_log(Path::new("b.ndjson")));
        assert!(!is_log(Path::new("b.json")));
        assert!(!is_log(Path::new("jsonl")));
        assert!(!is_log(Path::new("b.jsonl.bak")));
        assert!(!is_log(Path::new(".jsonl")));
        for log in [
            "a.jsonl.gz",
            "a.ndjson.zst",
            "batch.jsonl.out",
            "b.jsonl.out.gz",
        ] {
            assert!(is_log(Path::new(log)), "{log}");
        }
        for one in [
            "a.json.gz",
            "s.sse",
            "s.sse.zst",
            "a.gz",
            "a.out",
            "a.jsonl.gz.bak",
        ] {
            assert!(!is_log(Path::new(one)), "{one}");
        }
        let r = RecordRef::parse("captures/log.jsonl.gz:12");
        assert_eq!((&**r.file(), r.line()), ("captures/log.jsonl.gz", Some(12)));
    }
}
