//! Requests (`docs/requests.md`): where a capture's provider request comes from, and the
//! batch INPUT files of a workspace, joined to their results by id.
//!
//! A capture's request is, first match wins: the capture record's `request` key (the
//! request body as sent); the request its response echoes (an OpenAI Responses body's
//! `text` and `tools`, a Vertex batch line's `request`, a Bedrock batch line's
//! `modelInput`); the line of a batch input file of the workspace with its id, in the input
//! files a `[[source]] requests` glob names, else the one its file's name pairs with
//! ([`batch_name`]: `NAME_output.jsonl` and `NAME_input.jsonl`), else any. Input files
//! are recognised by shape (`core::shape::batch_input`): OpenAI `{custom_id, method, url,
//! body}` lines, Anthropic `{custom_id, params}` lines or a `{"requests": [..]}` create
//! body, Gemini `{key, request}` lines. They are not captures (no verdict, not counted).
//!
//! [`Requests`] is the input files' index, read once before the first verdict (by the
//! shared pre-pass, `crate::core::prescan`, which parses only the lines that may be
//! requests: [`input_of_bytes`]). It holds, per request id, where the request is and its generation
//! schemas, shared between requests that carry the same ones: never a request body.

use crate::core::capture::Payload;
use crate::core::config::Config;
use crate::core::contract::Contract;
use crate::core::escape::quote;
use crate::core::generation::{GenerationSchema, RequestSchemas};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::Warning;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The code of the workspace warning for an input request whose id no capture has.
pub const UNMATCHED_REQUEST: &str = "UNMATCHED_REQUEST";

/// The code of the workspace warning for a request id that several input requests share.
pub const DUPLICATE_REQUEST: &str = "DUPLICATE_REQUEST";

/// Whose batch API an input file is for: results join requests of their own family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// OpenAI Batch (input lines `{custom_id, method, url, body}`; results `openai-batch`).
    OpenAi,
    /// Anthropic Message Batches (`{custom_id, params}`; results `anthropic-batch`).
    Anthropic,
    /// Gemini API batch mode (`{key, request}`; results `gemini-batch`).
    Gemini,
}

impl Family {
    /// The family whose results have the record shape `format`.
    pub fn of_result(format: &str) -> Option<Family> {
        match format {
            "openai-batch" => Some(Family::OpenAi),
            "anthropic-batch" => Some(Family::Anthropic),
            "gemini-batch" => Some(Family::Gemini),
            _ => None,
        }
    }

    /// The key of a request's id: `custom_id` or `key`.
    pub fn id_key(self) -> &'static str {
        match self {
            Family::OpenAi | Family::Anthropic => "custom_id",
            Family::Gemini => "key",
        }
    }
}

/// One request of an input record, as the shape layer reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    /// Its id (`custom_id`, `key`).
    pub id: String,
    /// JSON Pointer of the request body in the record (`/body`, `/params`, `/request`,
    /// `/requests/3/params`).
    pub base: String,
    /// The request body (what the provider was sent).
    pub body: Value,
}

/// A batch input record: one line (or an Anthropic create body of many requests). Not a
/// capture.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRecord {
    /// Whose batch API.
    pub family: Family,
    /// Its requests, in order.
    pub requests: Vec<InputRequest>,
}

/// A request the workspace knows for a capture: where it is, and its generation schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Where it comes from.
    pub from: RequestFrom,
    /// JSON Pointer of the request body in its record (`/body`; `/request` for a capture
    /// record's `request`; `/response/body` for a Responses body that echoes its request).
    pub base: Arc<str>,
    /// Its generation schemas.
    pub schemas: Arc<RequestSchemas>,
}

/// Where a capture's request comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestFrom {
    /// The capture record's `request` key.
    Record,
    /// The response (or batch line) echoes it.
    Echo,
    /// A batch input file's line.
    Input(RecordRef),
}

impl Request {
    /// How a verdict names where the request is: `record`, `echo`, or `FILE:LINE`.
    pub fn place(&self) -> String {
        match &self.from {
            RequestFrom::Record => "record".to_owned(),
            RequestFrom::Echo => "echo".to_owned(),
            RequestFrom::Input(at) => at.to_string(),
        }
    }
}

/// One input request of a file, in file order: a fixed-size entry (no request body, no
/// `RecordRef` text; its id is in the file's id text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// Its line in a log (1-based); 0 for the record of a one-record file.
    line: u32,
    /// Its [`Variant`] in the file's list.
    variant: u32,
    /// Where its id ends in the file's id text (it starts where the previous one ends).
    id_end: usize,
}

/// What the requests of a file share: their batch API, the pointer of their body and
/// their generation schemas (each distinct one once).
#[derive(Debug, Clone, PartialEq)]
struct Variant {
    family: Family,
    base: Arc<str>,
    schemas: Arc<RequestSchemas>,
}

/// The input requests of one capture file: per request a fixed-size entry (line, schema
/// variant, end of its id), their ids in one text, and each distinct schema variant once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileRequests {
    /// In file order.
    entries: Vec<Entry>,
    /// Every request's id, one after the other.
    ids: String,
    variants: Vec<Variant>,
    /// How many records the requests are (a create body's requests are one record).
    records: usize,
}

impl FileRequests {
    /// Whether the file holds no input request.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many input requests the file holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many of the file's records are input requests (each line of requests once; an
    /// Anthropic create body, of many requests, once): when it is every record the file
    /// has, the file is requests only, and `check` does not read it again
    /// (`docs/requests.md#memory`).
    pub fn records(&self) -> usize {
        self.records
    }

    /// The id of the request at `pos`.
    fn id(&self, pos: usize) -> &str {
        let start = pos.checked_sub(1).map_or(0, |p| self.entries[p].id_end);
        &self.ids[start..self.entries[pos].id_end]
    }

    /// Whether the record at `line` (0: a one-record file) is one of these requests.
    fn has_line(&self, line: u32) -> bool {
        // entries are in file order: lines ascend (a create body's requests share line 0)
        self.entries.binary_search_by_key(&line, |e| e.line).is_ok()
    }
}

/// What [`Requests::lookup`] finds for a result.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// No input request has its id.
    None,
    /// Exactly one has.
    Found(Request),
    /// Several have: no request is used (`DUPLICATE_REQUEST`).
    Ambiguous(Vec<RecordRef>),
}

/// The 64-bit key of a request id in the index: [`id_fingerprint`] of its bytes, masked
/// by the index's mask (all ones, except in the tests that force every id to collide).
fn key_of(id: &str, mask: u64) -> u64 {
    id_fingerprint(id.as_bytes()) & mask
}

/// The 64-bit fingerprint of an id's bytes (SipHash-1-3 with fixed keys, so the same in
/// every process of one build): the key of the request index, and the id fingerprint the
/// engine compares captures by (`crate::engine::ids::fingerprint` is this function).
pub fn id_fingerprint(id: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(id);
    h.write_u8(0xff);
    h.finish()
}

/// The bucket of `key` among `2^bits` ([`Requests::starts`]): its top `bits` bits.
fn bucket(key: u64, bits: u32) -> usize {
    key.checked_shr(64 - bits).unwrap_or(0) as usize
}

/// The bucket size and starts of `slots` (sorted by key): 4 to 8 slots a bucket (none
/// below 64 slots: one bucket).
fn buckets(slots: &[Slot]) -> (u32, Vec<u32>) {
    let bits = (slots.len() / 4).checked_ilog2().unwrap_or(0).min(30);
    let bits = if slots.len() < 64 { 0 } else { bits };
    let mut starts = Vec::with_capacity((1 << bits) + 1);
    let mut at = 0usize;
    for b in 0..(1usize << bits) {
        while at < slots.len() && bucket(slots[at].key, bits) < b {
            at += 1;
        }
        starts.push(at as u32);
    }
    starts.push(slots.len() as u32);
    (bits, starts)
}

/// One slot of the index by id: the request at `pos` of the file numbered `file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Slot {
    key: u64,
    file: u32,
    pos: u32,
}

/// The batch input requests of a workspace's capture files (module docs), by file and by
/// id.
///
/// Memory: per request a file entry (16 bytes), a slot of the index by id (16 bytes), a
/// quarter of a bucket start (4 bytes a bucket) and its id's bytes; per file each distinct
/// generation schema set once. Never a request body.
///
/// Ids are looked up by a 64-bit key ([`id_fingerprint`]); two different ids with the same
/// key are kept apart because every lookup compares the id itself (the file's id text), so
/// a key collision costs a comparison, never a wrong join (`forced_collisions` in the
/// tests builds an index whose every id has the same key).
#[derive(Debug, Clone)]
pub struct Requests {
    /// The files that hold requests, by name (sorted): a slot's `file` is an index here.
    files: Vec<(Arc<str>, Arc<FileRequests>)>,
    /// Every request by key, then file, then position.
    slots: Vec<Slot>,
    /// Where the slots of each bucket of keys start (the bucket of a key is its top
    /// `bucket_bits` bits), and one past the last: a lookup searches its bucket's few slots,
    /// not the whole index (about one entry per 4 requests).
    starts: Vec<u32>,
    bucket_bits: u32,
    /// The input files (indexes into `files`) of each batch name ([`batch_name`]): the
    /// files a result file of that name joins, sorted by name.
    by_batch: Vec<(String, Vec<u32>)>,
    /// The key mask ([`key_of`]).
    mask: u64,
}

impl Default for Requests {
    fn default() -> Requests {
        Requests {
            files: Vec::new(),
            slots: Vec::new(),
            starts: vec![0, 0],
            bucket_bits: 0,
            by_batch: Vec::new(),
            mask: u64::MAX,
        }
    }
}

/// Which input requests some result may join ([`Requests::mark`]): one bit per request,
/// set from many threads at once.
#[derive(Debug)]
pub struct Marks {
    /// Where each file's bits start.
    start: Vec<usize>,
    bits: Vec<std::sync::atomic::AtomicU64>,
}

impl Marks {
    fn set(&self, file: u32, pos: u32) {
        let i = self.start[file as usize] + pos as usize;
        self.bits[i / 64].fetch_or(1 << (i % 64), std::sync::atomic::Ordering::Relaxed);
    }

    fn get(&self, file: u32, pos: u32) -> bool {
        let i = self.start[file as usize] + pos as usize;
        self.bits[i / 64].load(std::sync::atomic::Ordering::Relaxed) & (1 << (i % 64)) != 0
    }
}

/// What a file's name says it is in a batch ([`batch_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchRole {
    /// `NAME_input.jsonl`: the requests the batch was created with.
    Input,
    /// `NAME_output.jsonl`, `NAME_error.jsonl`, `NAME_results.jsonl`: its results.
    Results,
}

/// The batch a file's name says it belongs to, and its role there
/// (`docs/requests.md#batch-input-files`): a file named `NAME_input`, `NAME_output`,
/// `NAME_error` or `NAME_results` (`_`, `-` or `.` before the word, or the word alone: `input.jsonl`),
/// with a capture file's extension (`.jsonl`, `.ndjson`, `.json`, `.jsonl.out`, each maybe
/// `.gz` or `.zst`), belongs to the batch `FOLDER/NAME_` (OpenAI's downloads are
/// `batch_abc123_output.jsonl` and `batch_abc123_error.jsonl`). `rel` is `/`-separated.
pub fn batch_name(rel: &str) -> Option<(String, BatchRole)> {
    batch_parts(rel).map(|(dir, prefix, role)| (format!("{dir}/{prefix}"), role))
}

/// [`batch_name`] as its parts, borrowed from `rel`: the folder, the name's prefix (up to
/// the role word), the role. The batch is `FOLDER/PREFIX`.
fn batch_parts(rel: &str) -> Option<(&str, &str, BatchRole)> {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let name = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".zst"))
        .unwrap_or(name);
    let stem = [".jsonl.out", ".jsonl", ".ndjson", ".json"]
        .iter()
        .find_map(|e| name.strip_suffix(e))?;
    let roles = [
        ("input", BatchRole::Input),
        ("output", BatchRole::Results),
        ("error", BatchRole::Results),
        ("results", BatchRole::Results),
    ];
    roles.iter().find_map(|(word, role)| {
        let prefix = stem.strip_suffix(word)?;
        (prefix.is_empty() || prefix.ends_with(['_', '-', '.'])).then_some((dir, prefix, *role))
    })
}

impl Requests {
    /// The index of the input requests of the capture files read (workspace-relative
    /// name, requests), as the shared pre-pass gives them (`crate::core::prescan`).
    pub fn of_file_list(files: impl IntoIterator<Item = (String, FileRequests)>) -> Requests {
        Requests::of_files(
            files
                .into_iter()
                .filter(|(_, f)| !f.is_empty())
                .map(|(n, f)| (Arc::from(n), Arc::new(f)))
                .collect(),
            u64::MAX,
        )
    }

    /// [`Requests::of_file_list`] with every id's key masked by `mask`: `0` gives every id
    /// the same key, for the tests that show that colliding keys never join the wrong
    /// request (ids are compared on every lookup).
    pub fn of_file_list_masked(
        files: impl IntoIterator<Item = (String, FileRequests)>,
        mask: u64,
    ) -> Requests {
        let mut r = Requests::of_file_list(files);
        if mask != r.mask {
            r = Requests::of_files(std::mem::take(&mut r.files), mask);
        }
        r
    }

    fn of_files(mut files: Vec<(Arc<str>, Arc<FileRequests>)>, mask: u64) -> Requests {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files.dedup_by(|a, b| a.0 == b.0);
        let mut slots = Vec::with_capacity(files.iter().map(|f| f.1.len()).sum());
        let mut by_batch: Vec<(String, Vec<u32>)> = Vec::new();
        for (i, (name, f)) in files.iter().enumerate() {
            for pos in 0..f.entries.len() {
                slots.push(Slot {
                    key: key_of(f.id(pos), mask),
                    file: i as u32,
                    pos: pos as u32,
                });
            }
            if let Some((batch, BatchRole::Input)) = batch_name(name) {
                by_batch.push((batch, vec![i as u32]));
            }
        }
        // one entry per batch, its files in file order (the sort is stable)
        by_batch.sort_by(|a, b| a.0.cmp(&b.0));
        by_batch.dedup_by(|later, first| {
            let same = later.0 == first.0;
            if same {
                first.1.append(&mut later.1);
            }
            same
        });
        slots.sort_unstable();
        let (bucket_bits, starts) = buckets(&slots);
        Requests {
            files,
            slots,
            starts,
            bucket_bits,
            by_batch,
            mask,
        }
    }

    /// The names of the capture files that hold input requests, in order.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| &*f.0)
    }

    fn file_index(&self, rel: &str) -> Option<usize> {
        self.files.binary_search_by(|f| (*f.0).cmp(rel)).ok()
    }

    /// The input files (indexes) the result file `rel` joins by name ([`batch_name`]), if
    /// it is the results file of a batch whose input file the workspace has.
    fn paired_inputs(&self, rel: &str) -> Option<&[u32]> {
        // per lookup: the batch's name is compared in parts, not built
        match batch_parts(rel)? {
            (dir, prefix, BatchRole::Results) => {
                let name = || dir.bytes().chain([b'/']).chain(prefix.bytes());
                self.by_batch
                    .binary_search_by(|(b, _)| b.bytes().cmp(name()))
                    .ok()
                    .map(|i| self.by_batch[i].1.as_slice())
            }
            (_, _, BatchRole::Input) => None,
        }
    }

    /// Whether no capture file holds an input request.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The input requests of the file `rel` (empty when it has none).
    pub fn facts(&self, rel: &str) -> Option<&FileRequests> {
        self.file_index(rel).map(|i| &*self.files[i].1)
    }

    /// Whether every one of the `records` records the pre-pass read of the file `rel` is
    /// an input request (no capture in it: [`FileRequests::records`]).
    pub fn holds_only_requests(&self, rel: &str, records: usize) -> bool {
        records > 0 && self.facts(rel).is_some_and(|f| f.records == records)
    }

    /// Whether the record `source` is one of the input requests read from its file (a
    /// batch input record: no capture), as the pre-pass read it.
    pub fn is_request(&self, source: &RecordRef) -> bool {
        let Some(i) = self.file_index(source.file()) else {
            return false;
        };
        let line = source
            .line()
            .map_or(0, |l| u32::try_from(l).unwrap_or(u32::MAX));
        self.files[i].1.has_line(line)
    }

    /// The same index with the file `rel`'s requests replaced (`None`: the file is gone).
    pub fn with_file(&self, rel: &str, facts: Option<FileRequests>) -> Requests {
        let mut files: Vec<_> = self
            .files
            .iter()
            .filter(|f| &*f.0 != rel)
            .cloned()
            .collect();
        if let Some(f) = facts.filter(|f| !f.is_empty()) {
            files.push((Arc::from(rel), Arc::new(f)));
        }
        Requests::of_files(files, self.mask)
    }

    /// Whether some input request has the id `id` (any family).
    pub fn has_id(&self, id: &str) -> bool {
        self.matching(id, &|_| true).next().is_some()
    }

    /// Every request id (each once), for matching by fingerprint.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        self.slots
            .iter()
            .map(|s| self.files[s.file as usize].1.id(s.pos as usize))
            .filter(move |id| seen.insert(id))
    }

    /// The slots whose request has the id `id`, in the files `keep` keeps (by index).
    fn matching<'a>(
        &'a self,
        id: &'a str,
        keep: &'a dyn Fn(u32) -> bool,
    ) -> impl Iterator<Item = Slot> + 'a {
        self.slots_of(key_of(id, self.mask), keep)
            .filter(move |s| self.files[s.file as usize].1.id(s.pos as usize) == id)
    }

    /// The slots of the key `key`, in the files `keep` keeps.
    fn slots_of<'a>(
        &'a self,
        key: u64,
        keep: &'a dyn Fn(u32) -> bool,
    ) -> impl Iterator<Item = Slot> + 'a {
        let b = bucket(key, self.bucket_bits);
        let bucket = &self.slots[self.starts[b] as usize..self.starts[b + 1] as usize];
        let lo = bucket.partition_point(|s| s.key < key);
        bucket[lo..]
            .iter()
            .take_while(move |s| s.key == key)
            .filter(move |s| keep(s.file))
            .copied()
    }

    fn variant(&self, s: Slot) -> &Variant {
        let f = &self.files[s.file as usize].1;
        &f.variants[f.entries[s.pos as usize].variant as usize]
    }

    fn place(&self, s: Slot) -> RecordRef {
        let (name, f) = &self.files[s.file as usize];
        let line = f.entries[s.pos as usize].line;
        RecordRef::new(name.clone(), (line != 0).then_some(line as usize))
    }

    /// The input request of the result `id` of `family`, among every input request of
    /// the workspace.
    pub fn lookup(&self, family: Family, id: &str) -> Lookup {
        self.lookup_in(family, id, &|_| true)
    }

    /// Which input files (by index) a result of the file `rel` may join
    /// (`docs/requests.md#batch-input-files`): those its `[[source]] requests` glob
    /// matches, else those of its batch when the names pair, else every one.
    fn candidates<'a>(
        &'a self,
        rel: &str,
        requests: Option<&'a crate::core::config::Pattern>,
    ) -> Box<dyn Fn(u32) -> bool + 'a> {
        if let Some(glob) = requests {
            return Box::new(move |f| glob.matches(&self.files[f as usize].0));
        }
        match self.paired_inputs(rel) {
            Some(files) => Box::new(move |f| files.contains(&f)),
            None => Box::new(|_| true),
        }
    }

    /// The input request of the result `id` of `family` in the file `rel`
    /// (`docs/requests.md#batch-input-files`): among the input files `requests` matches
    /// (a `[[source]] requests` glob of the file), else among the input files of its batch
    /// when the names pair ([`batch_name`]: `NAME_output.jsonl` joins `NAME_input.jsonl`),
    /// else among every input request of the workspace.
    pub fn lookup_for(
        &self,
        family: Family,
        id: &str,
        rel: &str,
        requests: Option<&crate::core::config::Pattern>,
    ) -> Lookup {
        let keep = self.candidates(rel, requests);
        self.lookup_in(family, id, &*keep)
    }

    /// The input request of the result `id` of `family` among the files `keep` keeps.
    fn lookup_in(&self, family: Family, id: &str, keep: &dyn Fn(u32) -> bool) -> Lookup {
        let mut found = self
            .matching(id, keep)
            .filter(|s| self.variant(*s).family == family);
        let Some(first) = found.next() else {
            return Lookup::None;
        };
        let rest: Vec<Slot> = found.collect();
        if rest.is_empty() {
            let v = self.variant(first);
            return Lookup::Found(Request {
                from: RequestFrom::Input(self.place(first)),
                base: v.base.clone(),
                schemas: v.schemas.clone(),
            });
        }
        let mut at: Vec<RecordRef> = std::iter::once(first)
            .chain(rest)
            .map(|s| self.place(s))
            .collect();
        at.sort();
        Lookup::Ambiguous(at)
    }

    /// No request marked yet, for [`Requests::mark`] and [`Requests::warnings`].
    pub fn marks(&self) -> Marks {
        let mut start = Vec::with_capacity(self.files.len());
        let mut n = 0;
        for f in &self.files {
            start.push(n);
            n += f.1.len();
        }
        Marks {
            start,
            bits: (0..n.div_ceil(64))
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect(),
        }
    }

    /// Marks the input requests the result `id` of `family` in the file `rel` may join
    /// (those [`Requests::lookup_for`] searches that have its id, one or several): they
    /// have a result, of their own batch (`UNMATCHED_REQUEST` is per batch,
    /// `docs/requests.md#batch-input-files`).
    pub fn mark(
        &self,
        family: Family,
        id: &str,
        rel: &str,
        requests: Option<&crate::core::config::Pattern>,
        marks: &Marks,
    ) {
        let keep = self.candidates(rel, requests);
        for s in self.matching(id, &*keep) {
            if self.variant(s).family == family {
                marks.set(s.file, s.pos);
            }
        }
    }

    /// [`Requests::mark`] for a capture of the file `rel` known by its id's
    /// [`id_fingerprint`] only (the live session keeps no ids nor formats): the requests
    /// of the files its results may join whose id has that fingerprint are marked, of any
    /// batch API, as `UNMATCHED_JOIN` matches `[[join]]` lines by fingerprint there.
    pub fn mark_fingerprint(
        &self,
        fingerprint: u64,
        rel: &str,
        requests: Option<&crate::core::config::Pattern>,
        marks: &Marks,
    ) {
        let keep = self.candidates(rel, requests);
        for s in self.slots_of(fingerprint & self.mask, &*keep) {
            marks.set(s.file, s.pos);
        }
    }

    /// The workspace warnings of the input requests, in file then line order: an
    /// `UNMATCHED_REQUEST` for each request no result of its own batch has the id of (no
    /// result that may join it: [`Requests::mark`] marked those that some result may
    /// join), once per request; a `DUPLICATE_REQUEST` for each request whose id an earlier
    /// request of the same family has in the same file, or in another file when one of the
    /// two is not a batch's own input file (named as one, [`batch_name`], or matched by a
    /// `[[source]] requests` glob: `named` says which).
    pub fn warnings(&self, marks: &Marks, named: &dyn Fn(&str) -> bool) -> Vec<Warning> {
        let own = |f: &str| named(f) || matches!(batch_name(f), Some((_, BatchRole::Input)));
        let mut out: Vec<(RecordRef, Warning)> = Vec::new();
        for (i, (_, f)) in self.files.iter().enumerate() {
            for pos in 0..f.entries.len() {
                if marks.get(i as u32, pos as u32) {
                    continue;
                }
                let family = f.variants[f.entries[pos].variant as usize].family;
                let at = self.place(Slot {
                    key: 0,
                    file: i as u32,
                    pos: pos as u32,
                });
                out.push((
                    at.clone(),
                    Warning {
                        code: UNMATCHED_REQUEST.into(),
                        severity: Some("warning".into()),
                        file: Some(at.to_string()),
                        pointer: Some(format!("/{}", family.id_key())),
                        at: None,
                        message: format!(
                            "request for id {} has no result (no capture that may join it, of its own batch, has its id)",
                            quote(f.id(pos), 80)
                        ),
                    },
                ));
            }
        }
        // the requests of one (family, id), in file then line order: runs of one key,
        // split by id (different ids may share a key)
        for run in self.slots.chunk_by(|a, b| a.key == b.key) {
            if run.len() < 2 {
                continue;
            }
            let mut groups: Vec<(Family, &str, Vec<Slot>)> = Vec::new();
            for s in run {
                let family = self.variant(*s).family;
                let id = self.files[s.file as usize].1.id(s.pos as usize);
                match groups.iter_mut().find(|g| g.0 == family && g.1 == id) {
                    Some(g) => g.2.push(*s),
                    None => groups.push((family, id, vec![*s])),
                }
            }
            for (family, id, list) in groups {
                if list.len() > 1 {
                    self.duplicates(family, id, &list, &own, &mut out);
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.code.cmp(&b.1.code)));
        out.into_iter().map(|(_, w)| w).collect()
    }

    /// The `DUPLICATE_REQUEST`s of the requests `list` (one family and id, in file then
    /// line order), as [`Requests::warnings`] says.
    fn duplicates(
        &self,
        family: Family,
        id: &str,
        list: &[Slot],
        own: &dyn Fn(&str) -> bool,
        out: &mut Vec<(RecordRef, Warning)>,
    ) {
        let pointer = format!("/{}", family.id_key());
        let places: Vec<RecordRef> = list.iter().map(|s| self.place(*s)).collect();
        // the first request of each file, of every file, of the files no batch owns
        let mut first_in: HashMap<&str, &RecordRef> = HashMap::new();
        let mut first_any: Option<&RecordRef> = None;
        let mut first_loose: Option<&RecordRef> = None;
        for at in &places {
            let file: &str = at.file();
            let is_own = own(file);
            let earlier = match first_in.get(file) {
                Some(first) => Some((*first, true)),
                None if !is_own => first_any.map(|f| (f, false)),
                None => first_loose.map(|f| (f, false)),
            };
            if let Some((first, same_file)) = earlier {
                let scope = if same_file {
                    ""
                } else {
                    " among the input files a result may join: pair each output file with its input file by name or `[[source]] requests`"
                };
                out.push((
                    at.clone(),
                    Warning {
                        code: DUPLICATE_REQUEST.into(),
                        severity: Some("warning".into()),
                        file: Some(at.to_string()),
                        pointer: Some(pointer.clone()),
                        at: None,
                        message: format!(
                            "request id {} repeats (first at {first}): `{}` must be unique{scope}, so its results get no request",
                            quote(id, 80),
                            family.id_key()
                        ),
                    },
                ));
            }
            first_in.entry(file).or_insert(at);
            first_any.get_or_insert(at);
            if !is_own {
                first_loose.get_or_insert(at);
            }
        }
    }
}

/// Whether a record's bytes may be a batch input request: they hold the key pairs the
/// input shapes detect by (`"custom_id"` with `"method"`, `"url"` or `"params"`; `"key"`
/// with `"request"`; `"requests"`). A cheap test before a full parse. A record holding a
/// `\u` escape of a letter that the plain test misses has its top-level keys read
/// (unescaped, the values skipped) and tested the same way, so a key spelled `"\u006bey"` is
/// found as `"key"` is (JSON, RFC 8259 section 7).
pub fn may_be_request(bytes: &[u8]) -> bool {
    may_be_request_with(bytes, crate::core::prescan::Sniff::of(bytes))
}

/// [`may_be_request`] given the pre-pass's one search of the bytes
/// ([`crate::core::prescan::Sniff`]).
pub(crate) fn may_be_request_with(bytes: &[u8], sniff: crate::core::prescan::Sniff) -> bool {
    use crate::core::prescan::Needle;
    let plain = (sniff.has(Needle::CustomId)
        && (sniff.has(Needle::Method) || sniff.has(Needle::Url) || sniff.has(Needle::Params)))
        || sniff.has(Needle::Requests)
        || (sniff.has(Needle::Request) && sniff.has(Needle::Key));
    if plain || !sniff.escape || !escapes_a_letter(bytes) {
        return plain;
    }
    let Some(keys) = top_level_keys(bytes) else {
        return false;
    };
    let key = |k: &str| keys.iter().any(|x| x == k);
    (key("custom_id") && (key("method") || key("url") || key("params")))
        || (key("key") && key("request"))
        || key("requests")
}

/// Whether the bytes hold a `\u` escape of an ASCII letter or `_` (`\u0041` to `\u007a`), as
/// a key the input shapes detect by would need: the escapes of other text (`\u00e9`, a
/// logger's `\u003c` for `<`) do not make a line worth reading its keys.
fn escapes_a_letter(bytes: &[u8]) -> bool {
    static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u00"));
    ESCAPE.find_iter(bytes).any(|i| {
        matches!(
            (bytes.get(i + 4), bytes.get(i + 5)),
            (Some(b'4'..=b'7'), Some(h)) if h.is_ascii_hexdigit()
        )
    })
}

/// The keys of a JSON object's text, unescaped, without building its values; `None` when
/// the text is not a JSON object.
fn top_level_keys(bytes: &[u8]) -> Option<Vec<String>> {
    struct Keys;
    impl<'de> serde::de::Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(k) = map.next_key::<String>()? {
                map.next_value::<serde::de::IgnoredAny>()?;
                keys.push(k);
            }
            Ok(keys)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde::Deserializer::deserialize_map(&mut de, Keys).ok()
}

/// The input record a parsed capture is, if it is one.
pub fn input_of(payload: Payload) -> Option<InputRecord> {
    match payload {
        Payload::Requests(r) => Some(*r),
        _ => None,
    }
}

/// What the pre-pass reads of a record that may be a batch input request
/// ([`input_of_bytes`]).
#[derive(Debug)]
pub enum Input {
    /// A record read whole (an Anthropic create body, a record the light reading does not
    /// take).
    Record(InputRecord),
    /// A one-request line read without building its body (`light`): its id, where its
    /// body is, and the text of the body's members that hold generation schemas.
    Light {
        /// Whose batch API.
        family: Family,
        /// Its id.
        id: String,
        /// JSON Pointer of its body (`/body`, `/params`, `/request`).
        base: String,
        /// The body's schema members ([`generation::BODY_KEYS`](crate::core::generation::BODY_KEYS))
        /// as the JSON text `[{"NAME": RAW, ..}]` (their raw text, in text order, inside
        /// an object inside an array: as deep as in the line, so parsing it meets the same
        /// depth limit): equal texts give equal generation schemas.
        schemas: String,
    },
}

/// How [`input_of_bytes`] reads a record as the pipeline does: its text (`Ok`) or its
/// parsed value (`Err`), to the input record it is, if it is one.
pub type ReadInput<'a> = dyn Fn(Result<&str, Value>, &RecordRef) -> Option<InputRecord> + 'a;

/// A light line's schema text remembered by the builder: (family, base, text, variant).
type Remembered = (Family, String, Box<str>, u32);

/// The top-level members that hold a request body (`body`, `params`, `request`).
const BODIES: [&str; 3] = ["body", "params", "request"];

/// The input request of one record's bytes (`source` names it), if it is one: only a
/// record that may be a request ([`may_be_request`]) and is UTF-8 is read. `read` reads a
/// record (its text, or its parsed value) as the pipeline does (its shape, or the format a
/// `[[source]]` forces).
///
/// A line is read light when it can be (`light`): the same verdict on what it is, without
/// building its body. The body's generation schemas are then read by the
/// [`RequestsBuilder`], once per distinct text.
pub fn input_of_bytes(
    bytes: &[u8],
    source: &dyn Fn() -> RecordRef,
    read: &ReadInput<'_>,
) -> Option<Input> {
    input_of_bytes_with(bytes, crate::core::prescan::Sniff::of(bytes), source, read)
}

/// [`input_of_bytes`] given the pre-pass's searches of the bytes (`sniff`).
pub(crate) fn input_of_bytes_with(
    bytes: &[u8],
    sniff: crate::core::prescan::Sniff,
    source: &dyn Fn() -> RecordRef,
    read: &ReadInput<'_>,
) -> Option<Input> {
    if !may_be_request_with(bytes, sniff) {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    match light(text, source, read) {
        Some(found) => found,
        None => read(Ok(text), &source()).map(Input::Record),
    }
}

/// Reads a one-request input line without building its body
/// ([`crate::core::stage::parse::pruned`]): the record with each body object
/// (`body`, `params`, `request`) emptied is read as the pipeline reads the record
/// (detection by shape looks at top-level members and at whether a body is an object; the
/// input shapes read the body's members only for its generation schemas), and the body's
/// schema members are kept as text. `None`: not for the light reading (an Anthropic
/// create body's `requests`, a record that is not an object), read it whole;
/// `Some(None)`: not a request (not strict JSON, or another shape). A schema member
/// that is not strict JSON is found when the builder parses it: the line is then no
/// request, as the whole reading says.
fn light(
    text: &str,
    source: &dyn Fn() -> RecordRef,
    read: &ReadInput<'_>,
) -> Option<Option<Input>> {
    let pruned = match crate::core::stage::parse::pruned(
        text,
        &BODIES,
        crate::core::generation::BODY_KEYS,
    ) {
        Ok(Some(p)) => p,
        Ok(None) => return None,
        Err(_) => return Some(None),
    };
    if pruned.skeleton.contains_key("requests") {
        return None;
    }
    let Some(mut record) = read(Err(Value::Object(pruned.skeleton)), &source()) else {
        return Some(None);
    };
    if record.requests.len() != 1 {
        return None;
    }
    let r = record.requests.pop()?;
    let member = r.base.strip_prefix('/')?;
    let kept = pruned
        .kept
        .iter()
        .find(|(k, _)| k == member)
        .map_or(&[][..], |(_, m)| m.as_slice());
    let mut schemas = String::from("[{");
    for (i, (k, raw)) in kept.iter().enumerate() {
        if i > 0 {
            schemas.push(',');
        }
        schemas.push_str(&Value::String(k.clone()).to_string());
        schemas.push(':');
        schemas.push_str(raw);
    }
    schemas.push_str("}]");
    Some(Some(Input::Light {
        family: record.family,
        id: r.id,
        base: r.base,
        schemas,
    }))
}

/// At most this many distinct schema texts of light lines are remembered per file (their
/// text and variant): past it, each new text is parsed (a file whose every line sent
/// another schema must not hold every text).
const REMEMBERED: usize = 4096;

/// The [`FileRequests`] of one capture file, from its input records in file order (the
/// shared pre-pass, `crate::core::prescan`, feeds it): requests that carry the same
/// generation schemas share them, and the bodies are not kept. A light line's schema text
/// ([`Input::Light`]) is parsed the first time it is seen; a line with the same text (the
/// same bytes: compared, not only hashed) shares that variant.
#[derive(Debug, Default)]
pub struct RequestsBuilder {
    facts: FileRequests,
    /// Variant by (family, base, schemas fingerprint).
    shared: HashMap<(Family, String, u64), u32>,
    /// Shared schema sets by fingerprint.
    sets: HashMap<u64, Arc<RequestSchemas>>,
    /// Variant of a light line's (family, base, schema text), by the hash of the three.
    texts: HashMap<u64, Vec<Remembered>>,
    remembered: usize,
    /// The last light line's (family, base, schema text) and variant: most input files send
    /// one schema on every line, and comparing the text costs less than hashing it.
    last: Option<Remembered>,
}

impl RequestsBuilder {
    /// Adds what the pre-pass read of the record at `source`.
    pub fn push_input(&mut self, source: &RecordRef, input: Input) {
        match input {
            Input::Record(r) => self.push(source, r),
            Input::Light {
                family,
                id,
                base,
                schemas,
            } => {
                if let Some((f, b, t, v)) = &self.last
                    && *f == family
                    && *b == base
                    && **t == *schemas
                {
                    let v = *v;
                    self.entry(source, &id, v);
                    return;
                }
                let h = {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    (family, &base, &schemas).hash(&mut h);
                    h.finish()
                };
                let known = self.texts.get(&h).and_then(|list| {
                    list.iter()
                        .find(|(f, b, t, _)| *f == family && *b == base && **t == *schemas)
                        .map(|e| e.3)
                });
                let variant = match known {
                    Some(v) => v,
                    None => {
                        // the members as the line holds them: not strict JSON there means
                        // the line is not strict JSON, so no request
                        let Ok(Value::Array(mut v)) =
                            crate::core::stage::parse::from_str_no_duplicates(&schemas)
                        else {
                            return;
                        };
                        let body = v.pop().unwrap_or(Value::Null);
                        let variant = self.variant(family, &base, RequestSchemas::read(&body));
                        if self.remembered < REMEMBERED {
                            self.remembered += 1;
                            self.texts.entry(h).or_default().push((
                                family,
                                base.clone(),
                                schemas.clone().into_boxed_str(),
                                variant,
                            ));
                        }
                        variant
                    }
                };
                self.entry(source, &id, variant);
                self.last = Some((family, base, schemas.into_boxed_str(), variant));
            }
        }
    }

    /// Adds the input record at `source`, read whole.
    pub fn push(&mut self, source: &RecordRef, record: InputRecord) {
        for r in record.requests {
            let variant = self.variant(record.family, &r.base, RequestSchemas::read(&r.body));
            self.entry(source, &r.id, variant);
        }
    }

    /// The variant of (family, base, schemas), shared with the earlier requests that have
    /// the same.
    fn variant(&mut self, family: Family, base: &str, schemas: RequestSchemas) -> u32 {
        let fp = schemas.fingerprint();
        if let Some(&v) = self.shared.get(&(family, base.to_owned(), fp)) {
            return v;
        }
        let schemas = self
            .sets
            .entry(fp)
            .or_insert_with(|| Arc::new(schemas))
            .clone();
        let v = self.facts.variants.len() as u32;
        self.facts.variants.push(Variant {
            family,
            base: Arc::from(base),
            schemas,
        });
        self.shared.insert((family, base.to_owned(), fp), v);
        v
    }

    fn entry(&mut self, source: &RecordRef, id: &str, variant: u32) {
        let line = source
            .line()
            .map_or(0, |l| u32::try_from(l).unwrap_or(u32::MAX));
        // records come in file order: a record's requests are consecutive entries
        if self.facts.entries.last().is_none_or(|e| e.line != line) {
            self.facts.records += 1;
        }
        self.facts.ids.push_str(id);
        self.facts.entries.push(Entry {
            line,
            variant,
            id_end: self.facts.ids.len(),
        });
    }

    /// The file's requests.
    pub fn finish(mut self) -> FileRequests {
        self.facts.entries.shrink_to_fit();
        self.facts.ids.shrink_to_fit();
        self.facts
    }
}

/// At most this many generation schemas are kept compiled (a batch whose every line sent
/// another schema must not hold a million validators); past it, each is compiled for its
/// capture alone.
const COMPILED: usize = 4096;

/// The generation schemas compiled so far, by name and [`content_hash`](crate::core::generation::content_hash).
#[derive(Debug, Default)]
pub struct RequestContracts {
    cache: std::sync::Mutex<HashMap<(String, u64), Arc<Contract>>>,
}

impl RequestContracts {
    /// The contract of a generation schema (`request:NAME`), compiled once
    /// ([`Contract::compile_inline`]): its `CONTRACT_ERROR` messages start with
    /// `request schema "NAME"`; the pipeline says where the request is.
    pub fn get(&self, config: &Config, g: &GenerationSchema) -> Arc<Contract> {
        let key = (g.name.clone(), g.hash);
        fn lock(
            m: &std::sync::Mutex<HashMap<(String, u64), Arc<Contract>>>,
        ) -> std::sync::MutexGuard<'_, HashMap<(String, u64), Arc<Contract>>> {
            m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
        }
        if let Some(c) = lock(&self.cache).get(&key) {
            return c.clone();
        }
        let c = Arc::new(Contract::compile_inline(
            config,
            &contract_name(&g.name),
            &format!("request schema {}", quote(&g.name, 80)),
            (*g.schema).clone(),
        ));
        let mut cache = lock(&self.cache);
        if cache.len() < COMPILED {
            cache.insert(key, c.clone());
        }
        c
    }
}

/// The contract name of a generation schema: `request:NAME`.
pub fn contract_name(name: &str) -> String {
    format!("request:{name}")
}
