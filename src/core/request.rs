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
use std::collections::{BTreeMap, HashMap};
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

/// One input request in the index.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    at: RecordRef,
    base: Arc<str>,
    schemas: Arc<RequestSchemas>,
}

/// The input requests of one capture file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileRequests {
    /// (family, id, entry), in file order.
    entries: Vec<(Family, String, Entry)>,
}

impl FileRequests {
    /// Whether the file holds no input request.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
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

/// The batch input requests of a workspace's capture files (module docs).
#[derive(Debug, Clone, Default)]
pub struct Requests {
    files: BTreeMap<String, Arc<FileRequests>>,
    /// Every request by (family, id): where each is (several: a repeated id).
    by_id: HashMap<(Family, String), Vec<Entry>>,
    /// The input files of each batch name ([`batch_name`]): the files a result file of
    /// that name joins.
    by_batch: HashMap<String, Vec<Arc<str>>>,
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
        (prefix.is_empty() || prefix.ends_with(['_', '-', '.']))
            .then(|| (format!("{dir}/{prefix}"), *role))
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
                .map(|(n, f)| (n, Arc::new(f)))
                .collect(),
        )
    }

    fn of_files(files: BTreeMap<String, Arc<FileRequests>>) -> Requests {
        let mut by_id: HashMap<_, Vec<_>> = HashMap::new();
        let mut by_batch: HashMap<String, Vec<Arc<str>>> = HashMap::new();
        for (name, f) in &files {
            for (family, id, e) in &f.entries {
                by_id
                    .entry((*family, id.clone()))
                    .or_default()
                    .push(e.clone());
            }
            if let Some((batch, BatchRole::Input)) = batch_name(name)
                && let Some((_, _, e)) = f.entries.first()
            {
                by_batch.entry(batch).or_default().push(e.at.file().clone());
            }
        }
        Requests {
            files,
            by_id,
            by_batch,
        }
    }

    /// The names of the capture files that hold input requests, in order.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The input files the result file `rel` joins by name ([`batch_name`]), if it is the
    /// results file of a batch whose input file the workspace has.
    fn paired_inputs(&self, rel: &str) -> Option<&[Arc<str>]> {
        match batch_name(rel)? {
            (batch, BatchRole::Results) => self.by_batch.get(&batch).map(Vec::as_slice),
            (_, BatchRole::Input) => None,
        }
    }

    /// Whether no capture file holds an input request.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The input requests of the file `rel` (empty when it has none).
    pub fn facts(&self, rel: &str) -> Option<&FileRequests> {
        self.files.get(rel).map(|f| &**f)
    }

    /// The same index with the file `rel`'s requests replaced (`None`: the file is gone).
    pub fn with_file(&self, rel: &str, facts: Option<FileRequests>) -> Requests {
        let mut files = self.files.clone();
        match facts.filter(|f| !f.is_empty()) {
            Some(f) => {
                files.insert(rel.to_owned(), Arc::new(f));
            }
            None => {
                files.remove(rel);
            }
        }
        Requests::of_files(files)
    }

    /// Whether some input request has the id `id` (any family).
    pub fn has_id(&self, id: &str) -> bool {
        [Family::OpenAi, Family::Anthropic, Family::Gemini]
            .iter()
            .any(|f| self.by_id.contains_key(&(*f, id.to_owned())))
    }

    /// Every request id (each once), for matching by fingerprint.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.by_id.keys().map(|(_, id)| id.as_str())
    }

    /// The input request of the result `id` of `family`, among every input request of
    /// the workspace.
    pub fn lookup(&self, family: Family, id: &str) -> Lookup {
        self.lookup_in(family, id, &|_| true)
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
        if let Some(glob) = requests {
            return self.lookup_in(family, id, &|f| glob.matches(f));
        }
        match self.paired_inputs(rel) {
            Some(files) => self.lookup_in(family, id, &|f| files.iter().any(|p| &**p == f)),
            None => self.lookup(family, id),
        }
    }

    /// The input request of the result `id` of `family` among the files `keep` keeps.
    fn lookup_in(&self, family: Family, id: &str, keep: &dyn Fn(&str) -> bool) -> Lookup {
        let Some(list) = self.by_id.get(&(family, id.to_owned())) else {
            return Lookup::None;
        };
        let mut found = list.iter().filter(|e| keep(e.at.file()));
        let Some(e) = found.next() else {
            return Lookup::None;
        };
        let rest: Vec<&Entry> = found.collect();
        if rest.is_empty() {
            return Lookup::Found(Request {
                from: RequestFrom::Input(e.at.clone()),
                base: e.base.clone(),
                schemas: e.schemas.clone(),
            });
        }
        let mut at: Vec<RecordRef> = std::iter::once(e)
            .chain(rest)
            .map(|e| e.at.clone())
            .collect();
        at.sort();
        Lookup::Ambiguous(at)
    }

    /// The workspace warnings of the input requests, in file then line order: an
    /// `UNMATCHED_REQUEST` for each request whose id no capture has (`matched` holds the
    /// ids some capture has), once per request; a `DUPLICATE_REQUEST` for each request
    /// whose id an earlier request of the same family has in the same file, or in another
    /// file when one of the two is not a batch's own input file (named as one,
    /// [`batch_name`], or matched by a `[[source]] requests` glob: `named` says which).
    pub fn warnings(
        &self,
        matched: &std::collections::HashSet<String>,
        named: &dyn Fn(&str) -> bool,
    ) -> Vec<Warning> {
        let own = |f: &str| named(f) || matches!(batch_name(f), Some((_, BatchRole::Input)));
        let mut out: Vec<(RecordRef, Warning)> = Vec::new();
        for ((family, id), list) in &self.by_id {
            let mut places: Vec<&RecordRef> = list.iter().map(|e| &e.at).collect();
            places.sort();
            let pointer = format!("/{}", family.id_key());
            if !matched.contains(id) {
                for at in &places {
                    out.push((
                        (*at).clone(),
                        Warning {
                            code: UNMATCHED_REQUEST.into(),
                            severity: Some("warning".into()),
                            file: Some(at.to_string()),
                            pointer: Some(pointer.clone()),
                            at: None,
                            message: format!(
                                "request for id {} matches no capture of the workspace (no result has its id)",
                                quote(id, 80)
                            ),
                        },
                    ));
                }
            }
            // the first request of each file, of every file, of the files no batch owns
            let mut first_in: HashMap<&str, &RecordRef> = HashMap::new();
            let mut first_any: Option<&RecordRef> = None;
            let mut first_loose: Option<&RecordRef> = None;
            for at in places {
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
        out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.code.cmp(&b.1.code)));
        out.into_iter().map(|(_, w)| w).collect()
    }
}

/// Whether a record's bytes may be a batch input request: they hold the key pairs the
/// input shapes detect by (`"custom_id"` with `"method"`, `"url"` or `"params"`; `"key"`
/// with `"request"`; `"requests"`). A cheap test before a full parse. A record holding a
/// `\u` escape of a letter that the plain test misses has its top-level keys read
/// (unescaped, the values skipped) and tested the same way, so a key spelled `"\u006bey"` is
/// found as `"key"` is (JSON, RFC 8259 section 7).
pub fn may_be_request(bytes: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(bytes, k).is_some();
    let plain = (has(b"\"custom_id\"")
        && (has(b"\"method\"") || has(b"\"url\"") || has(b"\"params\"")))
        || (has(b"\"key\"") && has(b"\"request\""))
        || has(b"\"requests\"");
    if plain || !escapes_a_letter(bytes) {
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
    memchr::memmem::find_iter(bytes, b"\\u00").any(|i| {
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

/// The input record of one record's bytes (`source` names it), if it is one: only a record
/// that may be a request ([`may_be_request`]) and is UTF-8 is read, with `read` (as the
/// pipeline reads it: its shape, or the format a `[[source]]` forces).
pub fn input_of_bytes(
    bytes: &[u8],
    source: &dyn Fn() -> RecordRef,
    read: &dyn Fn(&str, &RecordRef) -> Option<InputRecord>,
) -> Option<InputRecord> {
    if !may_be_request(bytes) {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    read(text, &source())
}

/// The [`FileRequests`] of one capture file, from its input records in file order (the
/// shared pre-pass, `crate::core::prescan`, feeds it): requests that carry the same
/// generation schemas share them, and the bodies are not kept.
#[derive(Debug, Default)]
pub struct RequestsBuilder {
    facts: FileRequests,
    shared: HashMap<u64, Arc<RequestSchemas>>,
    bases: HashMap<String, Arc<str>>,
}

impl RequestsBuilder {
    /// Adds the input record at `source`.
    pub fn push(&mut self, source: &RecordRef, record: InputRecord) {
        for r in record.requests {
            let schemas = RequestSchemas::read(&r.body);
            let schemas = self
                .shared
                .entry(schemas.fingerprint())
                .or_insert_with(|| Arc::new(schemas))
                .clone();
            let base = self
                .bases
                .entry(r.base.clone())
                .or_insert_with(|| Arc::from(r.base.as_str()))
                .clone();
            self.facts.entries.push((
                record.family,
                r.id,
                Entry {
                    at: source.clone(),
                    base,
                    schemas,
                },
            ));
        }
    }

    /// The file's requests.
    pub fn finish(self) -> FileRequests {
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
