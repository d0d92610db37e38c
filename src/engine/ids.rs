//! Captures that share an id (`docs/verdicts.md#duplicate-ids`): two records with the same
//! id make `verdict feedback ID` ambiguous, so each verdict whose id another capture of the
//! workspace has carries a `DUPLICATE_ID` warning naming the others. Every front end puts
//! it there the same way: `check` ([`crate::engine::batch`]) reads every record's id first
//! ([`scan`]); the live session ([`crate::engine::session`], behind `watch --json` and the
//! TUI) keeps each capture's id fingerprint and the groups of shared ids ([`Shared`]) and
//! re-emits the verdicts a change adds the warning to or takes it from.
//!
//! Ids are compared by a 64-bit fingerprint ([`fingerprint`]): two different ids of a
//! workspace of n captures get the same one with a probability of about n²/2⁶⁵ (3·10⁻⁸ for
//! a million captures), and then both are flagged, by every front end alike.

use crate::core::capture::{self, RawRecord, RecordKind};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Verdict, Warning};
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The warning code.
pub const DUPLICATE_ID: &str = "DUPLICATE_ID";

/// At most this many other sources are named in one warning (an id shared by 100,000
/// records must not make each warning 100,000 sources long).
const NAMED: usize = 3;

/// Lines of a log whose ids are read together (in parallel) by [`scan`].
const BLOCK: usize = 4096;

/// The 64-bit fingerprint of a capture id (SipHash-1-3 with fixed keys: the same in every
/// process).
pub fn fingerprint(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The id the pipeline gives the record: [`capture::record_id_in`] of its text, else its
/// source.
pub fn verdict_id(raw: &RawRecord) -> String {
    let text = raw.text.as_ref().ok();
    match raw.kind {
        RecordKind::Sse => text.and_then(|t| crate::core::capture_file::sse_response_id(t)),
        RecordKind::Json => text.and_then(|t| capture::record_id_in(t, &raw.source)),
    }
    .unwrap_or_else(|| raw.source.to_string())
}

/// Captures by id fingerprint, compactly (16 bytes each): what [`Shared`] is built from.
#[derive(Debug, Default)]
pub struct Members {
    files: Vec<Arc<str>>,
    by_name: HashMap<Arc<str>, u32>,
    /// (fingerprint, file number, line; 0 for a `.json` file)
    list: Vec<(u64, u32, u32)>,
}

impl Members {
    /// Adds the capture at `source` whose id has fingerprint `fp`.
    pub fn push(&mut self, fp: u64, source: &RecordRef) {
        let file = self.file(source.file());
        let line = source.line().map_or(0, |l| l as u32);
        self.list.push((fp, file, line));
    }

    /// The fingerprints of the captures (one per capture, in the order pushed).
    pub fn fingerprints(&self) -> impl Iterator<Item = u64> + '_ {
        self.list.iter().map(|m| m.0)
    }

    fn file(&mut self, name: &Arc<str>) -> u32 {
        if let Some(&n) = self.by_name.get(name) {
            return n;
        }
        let n = self.files.len() as u32;
        self.files.push(name.clone());
        self.by_name.insert(name.clone(), n);
        n
    }

    /// The ids held by more than one of the captures.
    pub fn shared(mut self) -> Shared {
        self.list.sort_unstable();
        let mut out = HashMap::new();
        for run in self.list.chunk_by(|a, b| a.0 == b.0) {
            if run.len() < 2 {
                continue;
            }
            let mut sources: Vec<RecordRef> = run
                .iter()
                .map(|&(_, f, line)| {
                    RecordRef::new(
                        self.files[f as usize].clone(),
                        (line != 0).then_some(line as usize),
                    )
                })
                .collect();
            sources.sort();
            sources.dedup();
            if sources.len() > 1 {
                out.insert(run[0].0, sources);
            }
        }
        Shared(out)
    }
}

/// The ids that more than one capture has: by [`fingerprint`], the sources of the captures
/// that have it, ordered by file then line (`captures/a.json`, `captures/log.jsonl:3`).
/// Holds shared ids only: empty in a workspace whose ids are all distinct.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Shared(HashMap<u64, Vec<RecordRef>>);

impl Shared {
    /// No id is shared.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many ids are shared.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The sources that have the id of fingerprint `fp`, when more than one has it.
    pub fn group(&self, fp: u64) -> Option<&[RecordRef]> {
        self.0.get(&fp).map(Vec::as_slice)
    }

    /// The fingerprints of the shared ids.
    pub fn fingerprints(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.keys().copied()
    }

    /// Replaces the groups of the fingerprints `fps` with those `now` has.
    pub fn replace(&mut self, fps: &std::collections::HashSet<u64>, now: Shared) {
        self.0.retain(|fp, _| !fps.contains(fp));
        self.0
            .extend(now.0.into_iter().filter(|(fp, _)| fps.contains(fp)));
    }

    /// Adds the `DUPLICATE_ID` warning to `v` when its id is shared and it is one of the
    /// captures that have it (a verdict already marked is left as it is).
    pub fn mark(&self, v: &mut Verdict) {
        if self.0.is_empty() || v.warnings.iter().any(|w| w.code == DUPLICATE_ID) {
            return;
        }
        let Some(sources) = self.group(fingerprint(&v.id)) else {
            return;
        };
        if sources.binary_search(&v.source).is_ok() {
            let w = warning(&v.id, &v.source, sources);
            v.warnings.push(w);
        }
    }
}

/// The warning on the capture at `own` whose id `id` the other `sources` (ordered) share:
/// it names the first [`NAMED`] others and counts the rest.
pub fn warning(id: &str, own: &RecordRef, sources: &[RecordRef]) -> Warning {
    let others: Vec<&str> = sources
        .iter()
        .filter(|s| *s != own)
        .map(RecordRef::as_str)
        .collect();
    let mut named = others[..others.len().min(NAMED)].join(", ");
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

/// Reads the id of every record of `files` (named by `rel`, as verdict sources are) as the
/// pipeline will give it ([`verdict_id`]: [`capture::record_id`], else the source), reading
/// records as `check` reads them (never a FIFO, never past `max_bytes`), without running
/// the pipeline. Logs are read in blocks whose ids are read in parallel, `.json` files in
/// parallel.
pub fn scan_members(
    files: &[PathBuf],
    rel: &(dyn Fn(&Path) -> String + Sync),
    is_log: &(dyn Fn(&Path) -> bool + Sync),
    id_of: &(dyn Fn(&RawRecord) -> String + Sync),
    max_bytes: u64,
) -> Members {
    let mut m = Members::default();
    let singles: Vec<&PathBuf> = files.iter().filter(|f| !is_log(f)).collect();
    let single_fps: Vec<(u64, RecordRef)> = singles
        .par_iter()
        .flat_map_iter(|f| {
            let name = rel(f);
            capture::read_file(f, &name, max_bytes)
                .into_iter()
                .map(|r| {
                    let fp = fingerprint(&id_of(&r));
                    (fp, r.source)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    for (fp, source) in &single_fps {
        m.push(*fp, source);
    }
    for f in files.iter().filter(|f| is_log(f)) {
        let name: Arc<str> = rel(f).into();
        let Ok((file, _)) = capture::open_sized(f) else {
            // one INVALID_CAPTURE record, named by its file
            m.push(fingerprint(&name), &RecordRef::new(name.clone(), None));
            continue;
        };
        let file_no = m.file(&name);
        let mut bytes: Vec<u8> = Vec::new();
        // (line, span in `bytes`; None: the line could not be read)
        let mut lines: Vec<(u32, Option<(usize, usize)>)> = Vec::new();
        let flush = |bytes: &mut Vec<u8>,
                     lines: &mut Vec<(u32, Option<(usize, usize)>)>,
                     m: &mut Members| {
            let fps: Vec<u64> = lines
                .par_iter()
                .map(|&(line, span)| {
                    let source = RecordRef::new(name.clone(), Some(line as usize));
                    match span.and_then(|(a, b)| std::str::from_utf8(&bytes[a..b]).ok()) {
                        Some(text) => {
                            fingerprint(&id_of(&RawRecord::json(source, Ok(text.to_owned()))))
                        }
                        None => fingerprint(source.as_str()),
                    }
                })
                .collect();
            for (&(line, _), fp) in lines.iter().zip(fps) {
                m.list.push((fp, file_no, line));
            }
            bytes.clear();
            lines.clear();
        };
        capture::read_line_bytes(
            std::io::BufReader::with_capacity(256 * 1024, file),
            max_bytes,
            |line_no, line| {
                let span = line.ok().map(|l| {
                    let a = bytes.len();
                    bytes.extend_from_slice(l);
                    (a, bytes.len())
                });
                lines.push((line_no as u32, span));
                if lines.len() >= BLOCK {
                    flush(&mut bytes, &mut lines, &mut m);
                }
            },
        );
        flush(&mut bytes, &mut lines, &mut m);
    }
    m
}

/// The ids several records of `files` share ([`scan_members`]), known before the first
/// verdict.
pub fn scan(
    files: &[PathBuf],
    rel: &(dyn Fn(&Path) -> String + Sync),
    is_log: &(dyn Fn(&Path) -> bool + Sync),
    id_of: &(dyn Fn(&RawRecord) -> String + Sync),
    max_bytes: u64,
) -> Shared {
    scan_members(files, rel, is_log, id_of, max_bytes).shared()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_at_most_three_others() {
        let sources: Vec<RecordRef> = (1..=6)
            .map(|i| RecordRef::new("l.jsonl", Some(i)))
            .collect();
        let w = warning("x", &sources[1], &sources);
        assert_eq!(w.code, "DUPLICATE_ID");
        assert_eq!(w.pointer.as_deref(), Some("/id"));
        assert_eq!(w.severity.as_deref(), Some("warning"));
        assert_eq!(
            w.message,
            "id `x` is also the id of l.jsonl:1, l.jsonl:3, l.jsonl:4 and 2 more: `verdict \
             feedback x` is ambiguous (give each capture its own id, or name it by its source)"
        );
        let w = warning("x", &sources[0], &sources[..2]);
        assert!(
            w.message
                .starts_with("id `x` is also the id of l.jsonl:2: "),
            "{}",
            w.message
        );
    }

    #[test]
    fn shared_keeps_the_ids_of_several_captures_in_source_order() {
        let mut m = Members::default();
        let a = RecordRef::new("b.jsonl", Some(3));
        let b = RecordRef::new("a.json", None);
        let c = RecordRef::new("b.jsonl", Some(1));
        m.push(fingerprint("dup"), &a);
        m.push(fingerprint("solo"), &RecordRef::new("b.jsonl", Some(2)));
        m.push(fingerprint("dup"), &b);
        m.push(fingerprint("dup"), &c);
        let s = m.shared();
        assert_eq!(s.len(), 1);
        assert_eq!(s.group(fingerprint("dup")).unwrap(), [b, c, a.clone()]);
        assert_eq!(s.group(fingerprint("solo")), None);
        let mut v = Verdict::from_errors("dup".into(), a, None, Vec::new());
        s.mark(&mut v);
        s.mark(&mut v);
        assert_eq!(v.warnings.len(), 1, "marked once");
        assert!(
            v.warnings[0]
                .message
                .starts_with("id `dup` is also the id of a.json, b.jsonl:1: "),
            "{}",
            v.warnings[0].message
        );
        // a capture of another id, or one not in the group, is left alone
        let mut other = Verdict::from_errors(
            "dup".into(),
            RecordRef::new("z.json", None),
            None,
            Vec::new(),
        );
        s.mark(&mut other);
        assert!(other.warnings.is_empty());
    }
}
