//! Duplicate capture ids (issue 12 item 16): two records with the same `id` make
//! `verdict feedback ID` ambiguous and `expect` bookkeeping confusing, so `check` puts a
//! `DUPLICATE_ID` warning on each verdict whose id another capture of its workspace has,
//! naming the others. The report streams, so the ids are gathered first, in one cheap pass
//! over the files (each record's top-level `id` only, not the whole record).

use crate::core::capture::{self, is_log};
use crate::core::verdict::{Verdict, Warning};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The warning code.
pub const DUPLICATE_ID: &str = "DUPLICATE_ID";

/// At most this many other sources are named in one warning (an id shared by 100,000
/// records must not make each warning 100,000 sources long).
const NAMED: usize = 3;

/// The ids that more than one capture has: each with the sources that have it, in file
/// order (`captures/a.json`, `captures/log.jsonl:3`).
#[derive(Debug, Default)]
pub(super) struct Duplicates(HashMap<Box<str>, Vec<String>>);

impl Duplicates {
    /// Reads the `id` of every record of `files` (named by `rel`, as verdict sources are).
    /// Files that cannot be opened as regular files (FIFOs, devices, missing) and records
    /// that are not objects with a string `id` (those whose verdict id is their source) are
    /// skipped.
    pub(super) fn scan(
        files: &[PathBuf],
        rel: &dyn Fn(&Path) -> String,
        max_bytes: u64,
    ) -> Duplicates {
        let mut seen: HashMap<Box<str>, Vec<String>> = HashMap::new();
        let mut add = |id: String, source: String| {
            seen.entry(id.into_boxed_str()).or_default().push(source);
        };
        for f in files {
            let name = rel(f);
            if is_log(f) {
                let Ok((file, _)) = capture::open_regular(f) else {
                    continue;
                };
                capture::read_line_bytes(
                    std::io::BufReader::with_capacity(256 * 1024, file),
                    max_bytes,
                    |line_no, line| {
                        if let Some(id) = line.ok().and_then(record_id) {
                            add(id, format!("{name}:{line_no}"));
                        }
                    },
                );
            } else {
                // one record (read as `check` reads it: never a FIFO, never past the limit)
                for r in capture::read_file(f, &name, max_bytes) {
                    if let Some(id) = r.text.ok().and_then(|t| record_id(t.as_bytes())) {
                        add(id, name.clone());
                    }
                }
            }
        }
        seen.retain(|_, sources| sources.len() > 1);
        Duplicates(seen)
    }

    /// No id is shared.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds the `DUPLICATE_ID` warning to `v` when its id is shared (and it is one of the
    /// captures that have it).
    pub(super) fn mark(&self, v: &mut Verdict) {
        let Some(sources) = self.0.get(v.id.as_str()) else {
            return;
        };
        let own = v.source.to_string();
        if !sources.contains(&own) {
            return;
        }
        v.warnings.push(warning(&v.id, &own, sources));
    }
}

/// The warning on the capture at `own` whose id `id` the other `sources` share.
fn warning(id: &str, own: &str, sources: &[String]) -> Warning {
    let others: Vec<&str> = sources
        .iter()
        .map(String::as_str)
        .filter(|s| *s != own)
        .collect();
    let mut named = others
        .iter()
        .take(NAMED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if others.len() > NAMED {
        named = format!("{named} and {} more", others.len() - NAMED);
    }
    Warning {
        code: DUPLICATE_ID.into(),
        severity: Some("warning".into()),
        file: None,
        pointer: Some("/id".into()),
        at: None,
        message: format!(
            "id `{id}` is also the id of {named}: `verdict feedback {id}` is ambiguous (give \
             each capture its own id, or name it by its source)"
        ),
    }
}

/// A record's top-level `id` when it is a string: read straight off the line when the
/// record starts with `{"id":"…"` (no escapes) and ends with `}` (the rest is not checked:
/// such a line that is not JSON still counts), else by a parse that skips every other
/// member. `None`: not an object, no `id`, not a string, not JSON.
fn record_id(text: &[u8]) -> Option<String> {
    let t = text.trim_ascii();
    if t.ends_with(b"}")
        && let Some(rest) = t.strip_prefix(br#"{"id":""#)
        && let Some(end) = memchr::memchr2(b'"', b'\\', rest)
        && rest[end] == b'"'
        && let Ok(id) = std::str::from_utf8(&rest[..end])
    {
        // `{"id":"a","id":"b"}` is a duplicate key, not this id: the record is rejected
        return (memchr::memmem::find(&rest[end..], br#""id""#).is_none()).then(|| id.to_string());
    }
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<serde_json::Value>,
    }
    let parsed: IdOnly = serde_json::from_slice(t).ok()?;
    match parsed.id? {
        serde_json::Value::String(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_id_reads_the_top_level_string_id_only() {
        let id = |t: &str| record_id(t.as_bytes());
        assert_eq!(id(r#"{"id":"a","output":"{}"}"#).as_deref(), Some("a"));
        assert_eq!(
            id(r#"  {"output":"{\"id\":\"x\"}","id":"b"}"#).as_deref(),
            Some("b")
        );
        assert_eq!(id(r#"{"id":"q\"uote"}"#).as_deref(), Some("q\"uote"));
        assert_eq!(id(r#"{"id":7}"#), None);
        assert_eq!(id(r#"{"output":"{}"}"#), None);
        assert_eq!(id(r#"{"meta":{"id":"inner"}}"#), None);
        assert_eq!(id("[1]"), None);
        assert_eq!(id(r#"{"id":"a""#), None);
    }

    #[test]
    fn the_warning_names_at_most_three_others() {
        let sources: Vec<String> = (1..=6).map(|i| format!("l.jsonl:{i}")).collect();
        let w = warning("x", "l.jsonl:2", &sources);
        assert_eq!(w.code, "DUPLICATE_ID");
        assert_eq!(
            w.message,
            "id `x` is also the id of l.jsonl:1, l.jsonl:3, l.jsonl:4 and 2 more: `verdict \
             feedback x` is ambiguous (give each capture its own id, or name it by its source)"
        );
    }
}
