//! The pipeline: one capture record in, one [`Verdict`] out. The stages run in a fixed
//! order (input, response, parse, schema, business) and the first one that fails decides.

use crate::core::adapter::{self, Proposal};
use crate::core::capture::{self, Capture, Payload, RawRecord, RecordError, RecordKind};
use crate::core::capture_file;
use crate::core::config::{PROVIDER_FORMATS, Pattern};
use crate::core::contract::Contract;
use crate::core::escape::quote;
use crate::core::generation::{GenerationSchema, RequestSchemas, SchemaSource};
use crate::core::mcp::{self, Resolved};
use crate::core::meta::MetaKey;
use crate::core::record_ref::RecordRef;
use crate::core::repair::{self, Applies, Fix, Repair, WouldBe};
use crate::core::request::{Family, Lookup, Request, RequestFrom};
use crate::core::shape;
use crate::core::stage::{intent, parse, schema};
use crate::core::verdict::{Finding, Generation, Reason, ResponseInfo, Stage, Verdict, Warning};
use crate::core::workspace::Workspace;
use serde_json::Value;
use std::sync::Arc;

/// Everything the pipeline learnt about one capture: the verdict, and what screens need
/// to show it (the proposal and its raw text).
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// The verdict.
    pub verdict: Verdict,
    /// The capture record, when it could be read; its `meta` (with the provider's `model`
    /// and `usage` added) is moved to the verdict's ([`Verdict::meta`]), so it is `None` here.
    pub capture: Option<Capture>,
    /// The proposal's raw text, when it came as text; for a record that is not a capture
    /// (`INVALID_CAPTURE`, `capture` is `None`), the record's own text.
    pub raw_output: Option<String>,
    /// The parsed (or structured) proposal, when the parse stage passed.
    pub proposal: Option<Value>,
    /// The generation schema the capture's request sent for the proposal, when there is
    /// one that could be read (`docs/requests.md#the-generation-schema`): what the drift
    /// report compares with the server contract.
    pub sent: Option<GenerationSchema>,
}

/// A record read by [`Workspace::read_parts`]: `out` holds its evaluation in place (a
/// placeholder while `capture` is still to be evaluated), or is final when `capture` is `None`.
struct ReadParts<'r> {
    raw: &'r RawRecord,
    out: Vec<Evaluation>,
    capture: Option<Capture>,
}

/// Where a verdict's contract came from: its `contract_from` (`docs/verdicts.md#contract-from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContractFrom {
    /// The capture record names its `contract` (`"record"`).
    Record,
    /// The capture's `[[join]]` line names it (`"join"`).
    Join,
    /// The `[[source]]` table N (1-based) of the capture's file names it (`"source N"`).
    Source(usize),
    /// The `[[route]]` table N (1-based) matched (`"route N"`).
    Route(usize),
    /// The called tool's name is a contract's name (`"tool"`).
    Tool,
    /// `default_contract`, or the workspace's only schema (`"default"`).
    Default,
    /// No server contract reached the capture: the schema its request sent
    /// (`"request"`, `docs/requests.md#zero-config`).
    Request,
}

impl std::fmt::Display for ContractFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContractFrom::Record => f.write_str("record"),
            ContractFrom::Join => f.write_str("join"),
            ContractFrom::Source(n) => write!(f, "source {n}"),
            ContractFrom::Route(n) => write!(f, "route {n}"),
            ContractFrom::Tool => f.write_str("tool"),
            ContractFrom::Default => f.write_str("default"),
            ContractFrom::Request => f.write_str("request"),
        }
    }
}

impl ContractFrom {
    /// Its [`Display`](std::fmt::Display) text, made without the formatting machinery for
    /// the fixed names (a verdict's `contract_from`, made for every capture).
    fn text(&self) -> String {
        match self {
            ContractFrom::Record => "record".to_owned(),
            ContractFrom::Join => "join".to_owned(),
            ContractFrom::Tool => "tool".to_owned(),
            ContractFrom::Default => "default".to_owned(),
            ContractFrom::Request => "request".to_owned(),
            ContractFrom::Source(_) | ContractFrom::Route(_) => self.to_string(),
        }
    }
}

/// Where the contract a capture names before routing came from.
#[derive(Debug, Default)]
struct Origin {
    contract: Option<ContractFrom>,
}

/// What the stages of one capture gave.
struct Run<'a> {
    /// The contract's name (the named one when it is unknown).
    name: Option<String>,
    /// Where the contract came from.
    from: Option<String>,
    /// The contract, when one was found.
    contract: Option<Arc<Contract>>,
    /// The generation schema: the contract itself (`contract_from` `request`), or checked
    /// beside the server contract.
    generation: Option<crate::core::verdict::Generation>,
    /// The capture's own warnings (`GENERATION_GAP`, `STRICT_VIOLATION`).
    warnings: Vec<crate::core::verdict::Warning>,
    /// The workspace the contract lives in.
    _ws: std::marker::PhantomData<&'a Workspace>,
    /// The failing stage's findings.
    errors: Vec<Finding>,
    /// What the response stage read, when it ran.
    info: Option<ResponseInfo>,
    /// The first repair whose copy has another outcome, when the parse or schema stage
    /// failed (`docs/repairs.md`).
    repair: Option<Repair>,
}

/// A record of [`Workspace::check_all_many`] between its parts.
// nearly every record of a run is `Begun` (one capture): a box would cost an allocation each
#[allow(clippy::large_enum_variant)]
enum Step<'r, 'w> {
    /// Its evaluations made.
    Done(Vec<Evaluation>),
    /// A record of one capture, begun: its evaluation (`out[0]`) is made in place.
    Begun {
        out: Vec<Evaluation>,
        begun: Begun<'w>,
        text: &'r str,
    },
}

/// What the later stages of a capture need, once the contract is found
/// ([`Workspace::begin_stages`]).
struct Pending {
    /// The contract (compiled).
    contract: Arc<Contract>,
    /// What the response stage read as the proposal.
    proposal: Proposal,
    /// The generation schema checked beside a server contract: compiled, or broken.
    beside: Option<Result<Arc<Contract>, ()>>,
    /// Where the contract came from.
    from: ContractFrom,
}

/// A capture on its way through [`Workspace::begin_capture`], [`Workspace::middle_capture`]
/// and [`Workspace::end_capture`].
struct Begun<'w> {
    capture: Capture,
    source: RecordRef,
    run: Run<'w>,
    pending: Option<Pending>,
}

/// Copies the provider's metadata the response stage read into the capture's `meta`
/// (`docs/capture-record.md#meta`): `model`, and `usage` as `{input_tokens, output_tokens,
/// total_tokens}` (the counts the provider reported), each only when the record's own
/// `meta` lacks that key. Rules never see `meta`.
fn fill_meta(capture: &mut Capture, info: &ResponseInfo) {
    if info.model.is_none() && info.tokens.is_none() {
        return;
    }
    // a `meta` held as text stays text (`crate::core::meta`)
    let meta = capture.meta.get_or_insert_with(Default::default);
    if let Some(m) = &info.model {
        meta.insert_absent_str(MetaKey::Model, m);
    }
    if let Some(t) = &info.tokens {
        meta.insert_absent_counts(MetaKey::Usage, &usage_counts(t));
    }
}

/// A token usage as the members of `meta.usage`: the names `TokenUsage` serializes its
/// counts as, each with its count when present (written without going through serde).
fn usage_counts(t: &crate::core::verdict::TokenUsage) -> [(&'static str, Option<u64>); 3] {
    [
        ("input_tokens", t.input_tokens),
        ("output_tokens", t.output_tokens),
        ("total_tokens", t.total_tokens),
    ]
}

/// The id a record gets when it has none: its source (`captures/a.json`, `captures/log.jsonl:9`).
pub fn default_id(raw: &RawRecord) -> String {
    raw.source.to_string()
}

impl Workspace {
    /// Runs the whole pipeline on one record. `None` when the record is not a capture at
    /// all: an MCP message other than a `tools/call` request or its response
    /// (`docs/record-shapes.md#mcp`), which has no verdict and is not counted. A record that
    /// holds several captures ([`Payload::Parts`]) gives the part its source names
    /// ([`RecordRef::part`]), else its first: [`Workspace::evaluate_all`] gives them all.
    pub fn evaluate(&self, raw: &RawRecord) -> Option<Evaluation> {
        self.evaluate_parts(raw, Some(raw.source.part().unwrap_or(1)))
            .pop()
    }

    /// Runs the whole pipeline on one record and gives every capture it holds, in the
    /// record's order: none for a record that is no capture, one for most records, one
    /// per part for a record of several captures (an OTLP `TracesData` of several LLM
    /// spans: each verdict's source names its part, `captures/log.jsonl:9#2`;
    /// `docs/record-shapes.md#traces`).
    pub fn evaluate_all(&self, raw: &RawRecord) -> Vec<Evaluation> {
        self.evaluate_parts(raw, None)
    }

    /// [`Workspace::evaluate_all`] keeping only part `only` (1-based; a record that is one
    /// capture is its part 1).
    fn evaluate_parts(&self, raw: &RawRecord, only: Option<u32>) -> Vec<Evaluation> {
        let read = self.read_parts(raw);
        self.finish_parts(read, only)
    }

    /// [`Workspace::check_all`] of each record of `raws`, in order, in four parts each run
    /// over the whole run of records before the next: every record read; every capture to
    /// its contract (`begin_capture`); every capture through its later stages
    /// (`middle_capture`); every verdict made (`end_capture`). The
    /// code of each part stays in the processor's instruction cache across the run, where
    /// one record's whole way does not fit it (BENCHMARKS.md, "Session 21" and "Session 22").
    /// A record of several captures is evaluated whole in the second part.
    pub fn check_all_many(&self, raws: &[RawRecord]) -> Vec<Vec<Verdict>> {
        let read: Vec<ReadParts<'_>> = raws.iter().map(|raw| self.read_parts(raw)).collect();
        // each capture to its contract, then each through the later stages, then each
        // verdict made: the code of every part runs over the whole run at once
        let mut steps: Vec<Step<'_, '_>> = read.into_iter().map(|r| self.begin_parts(r)).collect();
        for step in &mut steps {
            if let Step::Begun { out, begun, .. } = step {
                self.middle_capture(begun, &mut out[0]);
            }
        }
        steps
            .into_iter()
            .map(|step| {
                let out = match step {
                    Step::Done(out) => out,
                    Step::Begun {
                        mut out,
                        begun,
                        text,
                    } => {
                        self.end_capture(begun, text, &mut out[0]);
                        out
                    }
                };
                out.into_iter().map(|ev| ev.verdict).collect()
            })
            .collect()
    }

    /// [`Workspace::finish_parts`] (keeping every part) up to the later stages of a record
    /// of one capture ([`Workspace::begin_capture`]); a record of several captures, or of
    /// none, is finished here.
    fn begin_parts<'r>(&self, read: ReadParts<'r>) -> Step<'r, '_> {
        let ReadParts {
            raw,
            mut out,
            capture,
        } = read;
        match capture {
            Some(c) if !matches!(c.payload, Payload::Parts(_)) => {
                let text = raw.text.as_deref().unwrap_or_default();
                match self.begin_capture(c, raw.source.clone(), &mut out[0]) {
                    Some(begun) => Step::Begun { out, begun, text },
                    None => Step::Done(Vec::new()),
                }
            }
            capture => Step::Done(self.finish_parts(ReadParts { raw, out, capture }, None)),
        }
    }

    /// The first step of [`Workspace::evaluate_parts`]: the record read, its verdict made
    /// already when it could not be, else its capture kept for [`Workspace::finish_parts`].
    fn read_parts<'r>(&self, raw: &'r RawRecord) -> ReadParts<'r> {
        let placeholder = Evaluation {
            // a placeholder: every way out below sets the verdict
            verdict: Verdict::placeholder(raw.source.clone()),
            capture: None,
            raw_output: None,
            proposal: None,
            sent: None,
        };
        // the evaluation of a record of one capture is made in its place in the vector
        // handed back, not moved there (an `Evaluation` is over a kilobyte)
        let mut out = vec![placeholder];
        let ev = &mut out[0];
        let text = match &raw.text {
            Ok(t) => t,
            Err(f) => {
                ev.verdict = Verdict::from_errors(
                    default_id(raw),
                    raw.source.clone(),
                    None,
                    vec![f.clone()],
                );
                return ReadParts {
                    raw,
                    out,
                    capture: None,
                };
            }
        };
        // a record the pre-pass read as a batch input request is no capture: not parsed
        // again (`docs/requests.md#memory`)
        if raw.kind == RecordKind::Json
            && !self.requests.is_empty()
            && self.requests.is_request(&raw.source)
            && crate::core::request::may_be_request(text.as_bytes())
        {
            return ReadParts {
                raw,
                out: Vec::new(),
                capture: None,
            };
        }
        let rel = raw.source.file().clone();
        // a `.sse` file is its stream as the `response`, no record to parse
        let parsed = match raw.kind {
            RecordKind::Sse => Ok(capture_file::sse_capture(text, &default_id(raw))),
            RecordKind::Json => self.read_capture(text, &raw.source, &rel),
        };
        match parsed {
            Ok(c) => ReadParts {
                raw,
                out,
                capture: Some(c),
            },
            Err(e) => {
                self.record_error(ev, e, raw.source.clone(), text);
                ReadParts {
                    raw,
                    out,
                    capture: None,
                }
            }
        }
    }

    /// The second step of [`Workspace::evaluate_parts`]: the stages of the capture (or
    /// captures) [`Workspace::read_parts`] read.
    fn finish_parts(&self, read: ReadParts<'_>, only: Option<u32>) -> Vec<Evaluation> {
        let ReadParts {
            raw,
            mut out,
            capture,
        } = read;
        let Some(capture) = capture else { return out };
        let text = raw.text.as_deref().unwrap_or_default();
        let Payload::Parts(parts) = capture.payload else {
            if only.is_some_and(|p| p != 1)
                || !self.evaluate_capture(capture, raw.source.clone(), text, &mut out[0])
            {
                return Vec::new();
            }
            return out;
        };
        let placeholder = || Evaluation {
            verdict: Verdict::placeholder(raw.source.clone()),
            capture: None,
            raw_output: None,
            proposal: None,
            sent: None,
        };
        out.clear();
        let whole = raw.source.with_part(None);
        for (part, c) in (1u32..).zip(parts) {
            if only.is_some_and(|p| p != part) {
                continue;
            }
            let source = whole.with_part(Some(part));
            let mut ev = placeholder();
            match c {
                Ok(c) => {
                    if self.evaluate_capture(c, source, text, &mut ev) {
                        out.push(ev);
                    }
                }
                Err(e) => {
                    // a part's own id when it could be read, else its source
                    let e = RecordError {
                        id: e.id.or_else(|| Some(source.to_string())),
                        ..e
                    };
                    self.record_error(&mut ev, e, source, text);
                    out.push(ev);
                }
            }
        }
        out
    }

    /// The verdict of a record (or part, at `source`) that could not be read: its
    /// `INVALID_CAPTURE`, with the id and `expect` that could still be read.
    fn record_error(&self, ev: &mut Evaluation, e: RecordError, source: RecordRef, text: &str) {
        let id = e.id.unwrap_or_else(|| source.to_string());
        ev.verdict = Verdict::from_errors(id, source, None, vec![e.finding]);
        ev.verdict.format = e.format.map(str::to_owned);
        ev.raw_output = Some(text.to_owned());
        self.apply_decisions(&mut ev.verdict);
        if let Some(x) = e.expect {
            ev.verdict.apply_expect(x);
        }
    }

    /// The stages of one capture read from the record `text` at `source`, into `ev` (its
    /// verdict made in place); false when it is not a capture after all.
    fn evaluate_capture(
        &self,
        capture: Capture,
        source: RecordRef,
        text: &str,
        ev: &mut Evaluation,
    ) -> bool {
        let Some(mut begun) = self.begin_capture(capture, source, ev) else {
            return false;
        };
        self.middle_capture(&mut begun, ev);
        self.end_capture(begun, text, ev);
        true
    }

    /// The first part of [`Workspace::evaluate_capture`]: the capture completed, its
    /// response read and its contract found; `None` when it is not a capture after all.
    fn begin_capture(
        &self,
        mut capture: Capture,
        source: RecordRef,
        ev: &mut Evaluation,
    ) -> Option<Begun<'_>> {
        let rel = source.file().clone();
        // a batch input record is requests, not a capture (`docs/requests.md`); a trace
        // record with no LLM or tool span holds none (`docs/record-shapes.md#traces`)
        if matches!(
            capture.payload,
            Payload::Requests(_) | Payload::NotACapture | Payload::Parts(_)
        ) {
            return None;
        }
        // an MCP message is a capture only as part of its session: its request, if it is a
        // response; skipped when it is not a tools/call request or response
        if let Payload::Mcp(m) = &capture.payload {
            match self.mcp.resolve(m) {
                Resolved::NotACapture => return None,
                Resolved::Tool(tool) => capture.tool = Some(tool),
                Resolved::Unpaired => capture.tool = None,
            }
        }
        let (capture, origin) = self.complete(capture, &rel);
        let (run, pending) = self.begin_stages(&capture, &origin, &rel, ev);
        Some(Begun {
            capture,
            source,
            run,
            pending,
        })
    }

    /// The second part of [`Workspace::evaluate_capture`]: the later stages, when they run.
    fn middle_capture(&self, begun: &mut Begun<'_>, ev: &mut Evaluation) {
        if let Some(pending) = begun.pending.take() {
            self.finish_stages(&begun.capture, &mut begun.run, pending, ev);
        }
    }

    /// The last part of [`Workspace::evaluate_capture`]: the verdict made in `ev`, the
    /// capture kept there.
    fn end_capture(&self, begun: Begun<'_>, text: &str, ev: &mut Evaluation) {
        let Begun {
            mut capture,
            source,
            run,
            ..
        } = begun;
        if let Some(info) = &run.info {
            fill_meta(&mut capture, info);
        }
        let chain = self.chain_link(&capture, text, ev);
        // the verdict is made in its place in the evaluation, not moved there
        ev.verdict = Verdict::from_errors(capture.id.clone(), source, run.name, run.errors);
        let verdict = &mut ev.verdict;
        verdict.format = Some(capture.format.to_owned());
        verdict.contract_from = run.from;
        verdict.generation = run.generation;
        verdict.repair = run.repair;
        verdict.provider = run.info.as_ref().map(|i| i.provider.clone());
        verdict.response = run.info;
        if let Some(c) = &run.contract {
            verdict.warnings = c.warnings();
        }
        if let Some(info) = verdict.response.as_mut() {
            verdict.warnings.append(&mut info.warnings);
        }
        verdict.warnings.extend(run.warnings);
        self.apply_decisions(verdict);
        if let Some(x) = &capture.expect {
            verdict.apply_expect(x.clone());
        }
        verdict.chain = chain;
        // moved, not copied (a map clone per capture, about 1% of `check`); screens
        // read it from the verdict ([`Evaluation::capture`])
        verdict.meta = capture.meta.take();
        ev.capture = Some(capture);
    }

    /// The id the pipeline gives the record (its verdict's `id`), read as [`Workspace::evaluate`]
    /// reads it (its shape, or the format a `[[source]]` forces; a `.sse` file's first event)
    /// without running the stages: what the duplicate-id pre-pass compares
    /// (`docs/verdicts.md#duplicate-ids`). An unreadable record's id is its source; a record
    /// of several captures gives the id of the part its source names, else of its first
    /// ([`Workspace::record_ids`] gives them all).
    pub fn record_id(&self, raw: &RawRecord) -> String {
        let part = raw.source.part().unwrap_or(1) as usize;
        self.record_ids(raw)
            .into_iter()
            .nth(part - 1)
            .unwrap_or_else(|| default_id(raw))
    }

    /// The ids of every capture of the record, in its order (one for most records; one per
    /// part of a record of several, [`Payload::Parts`]), as [`Workspace::record_id`] reads
    /// them.
    pub fn record_ids(&self, raw: &RawRecord) -> Vec<String> {
        self.record_parts(raw)
            .into_iter()
            .map(|(_, id)| id)
            .collect()
    }

    /// [`Workspace::record_ids`] with the part each id is the capture of (none for a record
    /// that holds no capture: a trace run that is not an LLM call, a batch input request):
    /// `None` for a record that is one capture, `Some(N)` (1-based) for part N of a record of several
    /// ([`Payload::Parts`]; its verdict's source is `FILE:LINE#N`), so the duplicate-id
    /// pre-pass names each capture by its verdict's full source
    /// (`docs/verdicts.md#duplicate-ids`).
    pub fn record_parts(&self, raw: &RawRecord) -> Vec<(Option<u32>, String)> {
        let Ok(text) = &raw.text else {
            return vec![(None, default_id(raw))];
        };
        match raw.kind {
            RecordKind::Sse => vec![(None, capture_file::sse_capture(text, &default_id(raw)).id)],
            RecordKind::Json => match self.read_capture(text, &raw.source, raw.source.file()) {
                Ok(Capture {
                    payload: Payload::Parts(parts),
                    ..
                }) => {
                    let whole = raw.source.with_part(None);
                    (1u32..)
                        .zip(parts)
                        .map(|(part, p)| {
                            let id = match p {
                                Ok(c) => c.id,
                                Err(e) => {
                                    e.id.unwrap_or_else(|| whole.with_part(Some(part)).to_string())
                                }
                            };
                            (Some(part), id)
                        })
                        .collect()
                }
                // a record that holds no capture (a trace run that is not an LLM call, a
                // batch input request) has no verdict, so no id another capture could share
                Ok(Capture {
                    payload: Payload::NotACapture | Payload::Requests(_),
                    ..
                }) => Vec::new(),
                Ok(c) => vec![(None, c.id)],
                Err(e) => vec![(None, e.id.unwrap_or_else(|| default_id(raw)))],
            },
        }
    }

    /// The chain link of a capture read from `text` (`docs/chains.md#linking`), with the
    /// digest of its proposal (or of its raw output when it did not parse).
    fn chain_link(
        &self,
        capture: &Capture,
        text: &str,
        ev: &Evaluation,
    ) -> Option<crate::core::chain::ChainLink> {
        use crate::core::chain::link;
        let mut l = link::link_of(&self.config.chains, capture, text)?;
        l.digest = match (&ev.proposal, &ev.raw_output) {
            (Some(p), _) => Some(link::digest_value(p)),
            (None, Some(t)) => Some(link::digest_text(t)),
            (None, None) => None,
        };
        Some(l)
    }

    /// Runs the pipeline and keeps only the verdict (`None`: not a capture, as
    /// [`Workspace::evaluate`]).
    pub fn check(&self, raw: &RawRecord) -> Option<Verdict> {
        self.evaluate(raw).map(|ev| ev.verdict)
    }

    /// Every verdict of the record, one per capture it holds ([`Workspace::evaluate_all`]).
    pub fn check_all(&self, raw: &RawRecord) -> Vec<Verdict> {
        self.evaluate_all(raw)
            .into_iter()
            .map(|ev| ev.verdict)
            .collect()
    }

    /// The batch input record `text` at `source` is, read as [`Workspace::evaluate`] reads
    /// it; `None` when it is anything else (`docs/requests.md#batch-input-files`).
    /// The record is given as its text (`Ok`) or already parsed (`Err`: the light reading
    /// of `crate::core::request::input_of_bytes`).
    pub fn read_input(
        &self,
        record: Result<&str, Value>,
        source: &RecordRef,
    ) -> Option<crate::core::request::InputRecord> {
        let c = match record {
            Ok(text) => self.read_capture(text, source, source.file()),
            Err(value) => self.read_capture_value(value, source, source.file()),
        }
        .ok()?;
        crate::core::request::input_of(c.payload)
    }

    /// Reads one record's text as the shape it has, or as the format the first `[[source]]`
    /// matching its file `rel` forces (`docs/config.md#source`).
    fn read_capture(
        &self,
        text: &str,
        source: &RecordRef,
        rel: &str,
    ) -> Result<Capture, RecordError> {
        if self.forced_format(rel).is_none() {
            return capture::parse_record(text, source);
        }
        let value = crate::core::stage::parse::parse_strict(text)
            .map_err(|f| capture::record_parse_error(&f))?;
        self.read_capture_value(value, source, rel)
    }

    /// Whether the records of the file `rel` are read as the shapes they have (no
    /// `[[source]]` matching it forces a format; `docs/config.md#source`).
    pub fn reads_shapes(&self, rel: &str) -> bool {
        self.forced_format(rel).is_none()
    }

    /// The format the first `[[source]]` matching the file `rel` forces.
    fn forced_format<'a>(&'a self, rel: &'a str) -> Option<&'a str> {
        self.config
            .sources_for(rel)
            .find_map(|(_, s)| s.format.as_deref())
    }

    /// [`Workspace::read_capture`] of a parsed record.
    fn read_capture_value(
        &self,
        value: Value,
        source: &RecordRef,
        rel: &str,
    ) -> Result<Capture, RecordError> {
        let Some(format) = self.forced_format(rel) else {
            return crate::core::shape::read(value, source, None);
        };
        // a provider's bare body: the response shape, with that provider's adapter
        let provider = PROVIDER_FORMATS.iter().find(|p| **p == format).copied();
        let shape = shape::by_format(if provider.is_some() {
            "response"
        } else {
            format
        })
        .expect("[[source]] formats are checked when verdict.toml is read");
        let mut c = crate::core::shape::read(value, source, Some(shape))?;
        if let Some(p) = provider {
            c.format = p;
            c.provider.get_or_insert_with(|| p.to_owned());
        }
        Ok(c)
    }

    /// Fills in what a capture's record leaves out from its `[[join]]` line, then from the
    /// `[[source]]` tables of its file (`docs/config.md#join`): the record's own keys win.
    /// Returns where a contract named before routing came from.
    fn complete(&self, mut capture: Capture, rel: &str) -> (Capture, Origin) {
        let mut origin = Origin::default();
        if capture.contract.is_some() {
            origin.contract = Some(ContractFrom::Record);
        }
        if let Some(j) = self.joins.by_id.get(&capture.id) {
            if capture.context.is_none() {
                capture.context = j.context.clone();
            }
            if capture.intent.is_none() {
                capture.intent = j.intent.clone();
            }
            if capture.expect.is_none() {
                capture.expect = j.expect.clone();
            }
            if capture.tool.is_none() {
                capture.tool = j.tool.clone();
            }
            if capture.contract.is_none() && j.contract.is_some() {
                capture.contract = j.contract.clone();
                origin.contract = Some(ContractFrom::Join);
            }
        }
        for (n, s) in self.config.sources_for(rel) {
            if capture.tool.is_none() {
                capture.tool = s.tool.clone();
            }
            if capture.contract.is_none() && s.contract.is_some() {
                capture.contract = s.contract.clone();
                origin.contract = Some(ContractFrom::Source(n));
            }
        }
        (capture, origin)
    }

    /// Applies `[decisions]` (`docs/config.md#decisions`): every finding of an overridden
    /// built-in reason that carries the reason's default decision gets the configured one
    /// (a decision an adapter chose, such as `retry` for a transient `REQUEST_ERROR`, stays);
    /// the verdict's decision and next action follow its first finding.
    pub fn apply_decisions(&self, verdict: &mut Verdict) {
        if self.config.decisions.is_empty() {
            return;
        }
        for f in &mut verdict.errors {
            if let Some(d) = self.config.decision_for(&f.reason)
                && f.decision == f.reason.default_decision()
            {
                f.decision = d;
            }
        }
        if let Some(first) = verdict.errors.first() {
            verdict.decision = first.decision;
            verdict.next_action =
                crate::core::feedback::next_action(first.decision, Some(&first.reason)).to_string();
        }
    }

    /// The contract a capture uses and where it came from (`docs/verdicts.md#contract-from`),
    /// first match wins:
    /// 0. an MCP capture: its tool's contract ([`Workspace::mcp_contract`], `tool`);
    /// 1. the capture's own `contract` (from its record, its `[[join]]` line or a `[[source]]`);
    /// 2. the `[[route]]` tables, in order (all given keys match);
    /// 3. the called tool's name, when a contract has that name;
    /// 4. `default_contract`, else the only schema.
    ///
    /// `tool` and `model` are what the response stage read (`None` before it or when it
    /// did not say); `rel` is the capture's file. A contract that is named but does not
    /// exist is `UNKNOWN_CONTRACT` with a hint; when no step gives one, `UNKNOWN_CONTRACT`
    /// lists what was tried.
    ///
    /// # Errors
    /// `UNKNOWN_CONTRACT`.
    pub fn choose_contract(
        &self,
        capture: &Capture,
        named_from: Option<ContractFrom>,
        tool: Option<&str>,
        model: Option<&str>,
        rel: &str,
    ) -> Result<(&Arc<Contract>, ContractFrom), Finding> {
        match self.server_contract(capture, named_from, tool, model, rel)? {
            Some(c) => Ok(c),
            None => Err(self.no_contract(tool, None)),
        }
    }

    /// Steps 0 to 4 of [`Workspace::choose_contract`]: `Ok(None)` when none reaches the
    /// capture (no contract named, no route, no tool contract, no default or only schema).
    ///
    /// # Errors
    /// `UNKNOWN_CONTRACT` for a contract that is named (by the record, a join line, a
    /// source or a route) but does not exist, and for an MCP capture with no contract.
    fn server_contract(
        &self,
        capture: &Capture,
        named_from: Option<ContractFrom>,
        tool: Option<&str>,
        model: Option<&str>,
        rel: &str,
    ) -> Result<Option<(&Arc<Contract>, ContractFrom)>, Finding> {
        // 0. an MCP capture: its tool's contract (`docs/record-shapes.md#mcp`)
        if let Payload::Mcp(m) = &capture.payload {
            return self
                .mcp_contract(m, capture.tool.as_deref())
                .map(|c| Some((c, ContractFrom::Tool)));
        }
        // 1. named
        if let Some(name) = capture.contract.as_deref() {
            let from = named_from.unwrap_or(ContractFrom::Record);
            return self.named(name).map(|c| Some((c, from)));
        }
        // 2. routes
        for (i, r) in self.config.routes.iter().enumerate() {
            let m = |p: &Option<Pattern>, v: Option<&str>| {
                p.as_ref().is_none_or(|p| v.is_some_and(|v| p.matches(v)))
            };
            if m(&r.tool, tool)
                && m(&r.id, Some(&capture.id))
                && m(&r.model, model)
                && m(&r.path, Some(rel))
            {
                return self
                    .named(&r.contract)
                    .map(|c| Some((c, ContractFrom::Route(i + 1))));
            }
        }
        // 3. the called tool's name
        if let Some(t) = tool
            && let Some(c) = self.contracts.get(t)
        {
            return Ok(Some((c, ContractFrom::Tool)));
        }
        // 4. the default
        if let Some(name) = self.config.default_contract.as_deref() {
            return self.named(name).map(|c| Some((c, ContractFrom::Default)));
        }
        // the only schema file: the tool schemas of MCP `tools/list` results are not
        // candidates (they serve MCP captures)
        let mut it = self
            .contracts
            .by_name
            .values()
            .filter(|c| c.label.is_none());
        match (it.next(), it.next()) {
            (Some(only), None) => Ok(Some((only, ContractFrom::Default))),
            _ => Ok(None),
        }
    }

    /// The `UNKNOWN_CONTRACT` of a capture no contract reaches: what was tried, and
    /// (`request`) why the schema its request sent could not stand in.
    fn no_contract(&self, tool: Option<&str>, request: Option<String>) -> Finding {
        let mut f = self.no_server_contract(tool);
        if let Some(r) = request {
            f.message.push_str(&format!("; {r}"));
        }
        f
    }

    fn no_server_contract(&self, tool: Option<&str>) -> Finding {
        let schemas = self
            .contracts
            .by_name
            .values()
            .filter(|c| c.label.is_none())
            .count();
        match schemas {
            0 => Finding::new(
                Stage::Input,
                Reason::UNKNOWN_CONTRACT,
                format!(
                    "no contract: the workspace has no schemas in {}/",
                    self.config.schemas.display()
                ),
            ),
            _ if self.config.routes.is_empty() && tool.is_none() => Finding::new(
                Stage::Input,
                Reason::UNKNOWN_CONTRACT,
                "the capture names no `contract` and the workspace has several; set `contract` in the record or `default_contract` in verdict.toml",
            ),
            _ => {
                let routes = self.config.routes.len();
                let mut tried = vec![format!(
                    "no route matched ({routes} route{})",
                    if routes == 1 { "" } else { "s" }
                )];
                tried.push(match tool {
                    Some(t) => format!("no contract named after tool {}", quote(t, 80)),
                    None => "no tool call to name a contract".to_owned(),
                });
                tried.push(format!(
                    "no default_contract and {} schemas",
                    self.contracts
                        .by_name
                        .values()
                        .filter(|c| c.label.is_none())
                        .count()
                ));
                Finding::new(
                    Stage::Input,
                    Reason::UNKNOWN_CONTRACT,
                    format!("no contract for the capture: {}", tried.join("; ")),
                )
                .with_hint("add a [[route]] or default_contract to verdict.toml, or name the `contract` in the record or its [[join]] line")
            }
        }
    }

    /// The contract named `name`, or `UNKNOWN_CONTRACT` listing the contracts, with a hint.
    fn named(&self, name: &str) -> Result<&Arc<Contract>, Finding> {
        self.contracts.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.contracts.by_name.keys().map(String::as_str).collect();
            let list = if known.is_empty() {
                "the workspace has no schemas".to_string()
            } else {
                format!("contracts: {}", known.join(", "))
            };
            let mut f = Finding::new(
                Stage::Input,
                Reason::UNKNOWN_CONTRACT,
                format!("unknown contract {name:?}; {list}"),
            );
            if let Some(h) = self.contracts.hint(name) {
                f = f.with_hint(h);
            }
            f
        })
    }

    /// The contract a capture record uses before its response is read: its `contract`, else
    /// `default_contract`, else the only one (no routes, no tool name: see
    /// [`Workspace::choose_contract`] for the full choice).
    ///
    /// # Errors
    /// `UNKNOWN_CONTRACT`.
    pub fn contract_for(&self, capture: &Capture) -> Result<&Arc<Contract>, Finding> {
        self.choose_contract(capture, None, None, None, "")
            .map(|(c, _)| c)
    }

    /// The contract of an MCP capture (`docs/record-shapes.md#mcp`): `mcp/TOOL.input` for a
    /// `tools/call` request, `mcp/TOOL.output` for its response, from the schemas folder
    /// (`schemas/mcp/TOOL.input.schema.json`, which wins) or the `tools/list` results of the
    /// capture files; else `UNKNOWN_CONTRACT` saying what was tried. `tool` is the called
    /// tool (`None`: a response whose request is not in its file).
    pub fn mcp_contract(
        &self,
        m: &mcp::Message,
        tool: Option<&str>,
    ) -> Result<&Arc<Contract>, Finding> {
        if let Some(tool) = tool
            && let Some(c) = self
                .contracts
                .by_name
                .get(&mcp::contract_name(tool, mcp::Side::of(m)))
        {
            return Ok(c);
        }
        let known: Vec<&str> = self
            .mcp
            .declarations()
            .into_iter()
            .map(|d| d.tool.as_str())
            .collect();
        Err(mcp::unknown_contract(&self.mcp, m, tool, &known))
    }

    /// The request a capture answers (`docs/requests.md`), first match wins: its record's
    /// `request`, the request its batch line or Responses body echoes, the batch input
    /// request with its id (of its batch API) that its file `rel` joins
    /// ([`Requests::lookup_for`](crate::core::request::Requests::lookup_for)). `Err` names
    /// the input requests that share its id (none is used).
    pub fn request_for(
        &self,
        capture: &Capture,
        rel: &str,
    ) -> Result<Option<Request>, Vec<RecordRef>> {
        match own_request(capture) {
            Some(r) => Ok(Some(r)),
            None => self.joined_request(capture, rel),
        }
    }

    /// The batch input request a result joins by id (`docs/requests.md#batch-input-files`).
    fn joined_request(
        &self,
        capture: &Capture,
        rel: &str,
    ) -> Result<Option<Request>, Vec<RecordRef>> {
        let Some(family) = Family::of_result(capture.format) else {
            return Ok(None);
        };
        let glob = self.config.requests_for(rel);
        match self.requests.lookup_for(family, &capture.id, rel, glob) {
            Lookup::None => Ok(None),
            Lookup::Found(r) => Ok(Some(r)),
            Lookup::Ambiguous(at) => Err(at),
        }
    }

    /// `REQUEST_CONFLICT` (`docs/requests.md#where-a-captures-request-comes-from`): the
    /// capture's own request `used` (its record's or the echoed one, which wins) and the
    /// batch input request it joins sent different schemas for the proposal (`tool`, else
    /// the text format): another name, content, `strict`, or one of them none.
    fn request_conflict(
        &self,
        capture: &Capture,
        rel: &str,
        used: &Request,
        tool: Option<&str>,
    ) -> Option<Warning> {
        if matches!(used.from, RequestFrom::Input(_)) {
            return None;
        }
        let Ok(Some(joined)) = self.joined_request(capture, rel) else {
            return None;
        };
        let (a, b) = (
            used.schemas.for_proposal(tool),
            joined.schemas.for_proposal(tool),
        );
        let same = match (a, b) {
            (None, None) => true,
            (Some(Ok(x)), Some(Ok(y))) => {
                (&x.name, x.hash, x.strict) == (&y.name, y.hash, y.strict)
            }
            (Some(Err(x)), Some(Err(y))) => x == y,
            _ => false,
        };
        if same {
            return None;
        }
        let named =
            |s: Option<&Result<GenerationSchema, crate::core::generation::SchemaProblem>>,
             base: &str| {
                s.map(|s| match s {
                    Ok(g) => (
                        crate::core::generation::describe(&g.name, g.source),
                        format!("{base}{}", g.pointer),
                    ),
                    Err(p) => (
                        crate::core::generation::describe(
                            &p.name,
                            if tool.is_some() {
                                SchemaSource::Tool
                            } else {
                                SchemaSource::Text
                            },
                        ),
                        format!("{base}{}", p.pointer),
                    ),
                })
            };
        let mine = named(a, &used.base);
        let theirs = named(b, &joined.base);
        let what = mine
            .as_ref()
            .or(theirs.as_ref())
            .map_or_else(String::new, |(d, _)| format!(" for the {d}"));
        let (whose, why) = match used.from {
            RequestFrom::Echo => (
                "the request its response echoes",
                "the echoed one is used, as what the provider says it ran with",
            ),
            _ => ("the request its record carries", "the record's own is used"),
        };
        let theirs_at = theirs
            .as_ref()
            .map_or_else(String::new, |(_, p)| format!(" {p}"));
        Some(Warning::capture(
            Warning::REQUEST_CONFLICT,
            mine.map(|(_, p)| p).or(theirs.map(|(_, p)| p)),
            format!(
                "{whose} and its batch input request ({}{theirs_at}) sent different schemas{what}: {why}; check which schema the batch was created with",
                joined.place()
            ),
        ))
    }

    /// The schema the request sent as the capture's contract (`docs/requests.md#zero-config`):
    /// the called tool's (`tool`, what the response stage read) or the text format's.
    fn request_contract(
        &self,
        capture: &Capture,
        rel: &str,
        tool: Option<&str>,
        warnings: &mut Vec<Warning>,
    ) -> FromRequest {
        let request = match self.request_for(capture, rel) {
            Ok(Some(r)) => r,
            Ok(None) => return FromRequest::Missing(None),
            Err(at) => {
                let places: Vec<String> = at.iter().map(ToString::to_string).collect();
                return FromRequest::Missing(Some(format!(
                    "its id {} is the id of several batch input requests ({}), so no request schema is used",
                    quote(&capture.id, 80),
                    places.join(", ")
                )));
            }
        };
        warnings.extend(self.request_conflict(capture, rel, &request, tool));
        let place = request.place();
        let Some(chosen) = request.schemas.for_proposal(tool) else {
            return FromRequest::Missing(Some(match tool {
                Some(t) => format!("its request ({place}) declares no tool {}", quote(t, 80)),
                None if request.schemas.tools.is_empty() => {
                    format!("its request ({place}) sends no schema")
                }
                None => format!(
                    "its request ({place}) sends no text format schema (only tools), and the proposal is no tool call"
                ),
            }));
        };
        match chosen {
            Ok(g) => {
                let generation = Generation {
                    schema: g.name.clone(),
                    source: g.source,
                    strict: g.strict,
                    request: place,
                    pointer: format!("{}{}", request.base, g.pointer),
                    valid: None,
                    errors: Vec::new(),
                };
                let c = self.request_contracts.get(&self.config, g);
                FromRequest::Contract(c, generation, g.clone())
            }
            Err(p) => {
                let source = if tool.is_some() {
                    SchemaSource::Tool
                } else {
                    SchemaSource::Text
                };
                let pointer = format!("{}{}", request.base, p.pointer);
                let generation = Generation {
                    schema: p.name.clone(),
                    source,
                    strict: false,
                    request: place.clone(),
                    pointer: pointer.clone(),
                    valid: None,
                    errors: Vec::new(),
                };
                let mut f = Finding::new(
                    Stage::Input,
                    Reason::CONTRACT_ERROR,
                    format!(
                        "{place} {pointer}: the request's {} {}",
                        crate::core::generation::describe(&p.name, source),
                        p.message
                    ),
                );
                f.schema_path = Some(pointer);
                FromRequest::Broken(
                    crate::core::request::contract_name(&p.name),
                    generation,
                    Box::new(f),
                )
            }
        }
    }

    /// The first stages of a capture: the response read and the contract
    /// found; what the later stages need ([`Pending`]) when they are to run, else the
    /// findings are in the run already.
    fn begin_stages(
        &self,
        capture: &Capture,
        origin: &Origin,
        rel: &str,
        ev: &mut Evaluation,
    ) -> (Run<'_>, Option<Pending>) {
        // response first (it is pure): routing may need the called tool's name and the model
        let adapted = match &capture.payload {
            Payload::Response(r) => {
                adapter::adapt_response(r, capture.provider.as_deref(), capture.tool.as_deref())
            }
            Payload::Output {
                output,
                status,
                status_detail,
            } => adapter::adapt_output(output, status.as_deref(), status_detail.as_deref()),
            Payload::Settled(adapted) => (**adapted).clone(),
            Payload::Mcp(m) => mcp::adapt(m, capture.tool.as_deref()),
            Payload::Requests(_) | Payload::NotACapture | Payload::Parts(_) => adapter::Adapted {
                info: ResponseInfo::default(),
                result: Err(shape::invalid(
                    "a batch input record is a request, not a capture",
                )),
            },
        };
        let mut run = Run {
            name: capture.contract.clone(),
            from: None,
            contract: None,
            generation: None,
            warnings: Vec::new(),
            _ws: std::marker::PhantomData,
            errors: Vec::new(),
            info: None,
            repair: None,
        };
        // input: the contract
        let tool = adapted.info.tool.as_deref().or(capture.tool.as_deref());
        let model = adapted.info.model.as_deref();
        // with a server contract, the schema the request sent is checked beside it
        let mut beside: Option<Result<Arc<Contract>, ()>> = None;
        let (contract, from) =
            match self.server_contract(capture, origin.contract, tool, model, rel) {
                Ok(Some((c, from))) => {
                    match self.request_contract(
                        capture,
                        rel,
                        adapted.info.tool.as_deref(),
                        &mut run.warnings,
                    ) {
                        FromRequest::Contract(gc, g, sent) => {
                            run.generation = Some(g);
                            ev.sent = Some(sent);
                            beside = Some(Ok(gc));
                        }
                        FromRequest::Broken(_, mut g, f) => {
                            g.errors = vec![*f];
                            run.generation = Some(g);
                            beside = Some(Err(()));
                        }
                        FromRequest::Missing(_) => {}
                    }
                    (c.clone(), from)
                }
                Ok(None) => match self.request_contract(
                    capture,
                    rel,
                    adapted.info.tool.as_deref(),
                    &mut run.warnings,
                ) {
                    FromRequest::Contract(c, g, sent) => {
                        run.generation = Some(g);
                        ev.sent = Some(sent);
                        (c, ContractFrom::Request)
                    }
                    FromRequest::Broken(name, g, f) => {
                        run.name = Some(name);
                        run.from = Some(ContractFrom::Request.text());
                        run.generation = Some(g);
                        run.errors = vec![*f];
                        return (run, None);
                    }
                    FromRequest::Missing(note) => {
                        run.errors = vec![self.no_contract(tool, note)];
                        return (run, None);
                    }
                },
                Err(f) => {
                    run.errors = vec![f];
                    return (run, None);
                }
            };
        run.name = Some(contract.name.clone());
        run.from = Some(from.text());
        run.contract = Some(contract.clone());
        if let Err(errors) = &contract.compiled {
            run.errors = match &run.generation {
                // where the request is: the compiled contract is shared by every request
                // that sent this schema
                Some(g) => errors
                    .iter()
                    .map(|f| {
                        let mut f = f.clone();
                        f.message = format!("{} {}: {}", g.request, g.pointer, f.message);
                        f
                    })
                    .collect(),
                None => errors.clone(),
            };
            return (run, None);
        }
        run.info = Some(adapted.info);
        let proposal = match adapted.result {
            Ok(p) => p,
            Err(f) => {
                run.errors = vec![f];
                return (run, None);
            }
        };
        (
            run,
            Some(Pending {
                contract,
                proposal,
                beside,
                from,
            }),
        )
    }

    /// The later stages of a capture (parse, schema, business), then the
    /// generation schema checked beside a server contract.
    fn finish_stages(
        &self,
        capture: &Capture,
        run: &mut Run<'_>,
        pending: Pending,
        ev: &mut Evaluation,
    ) {
        let Pending {
            contract,
            proposal,
            beside,
            from,
        } = pending;
        // compiled: `begin_stages` hands on no contract that did not compile
        let Ok(validator) = &contract.compiled else {
            return;
        };
        (run.errors, run.repair) = self.later_stages(capture, &contract, validator, proposal, ev);
        match beside {
            Some(Ok(gc)) => self.check_beside(run, &gc, ev),
            Some(Err(())) => {}
            None if from == ContractFrom::Request => strict_zero_config(run),
            None => {}
        }
    }

    /// Checks the proposal against the generation schema `gc` beside the server contract
    /// (`docs/requests.md#both-contracts`): `generation.valid` and `errors`, then the
    /// warnings `GENERATION_GAP` (it meets the generation schema, the server's schema stage
    /// failed) and `STRICT_VIOLATION` (a strict request, and it does not meet it). Not
    /// checked when there is no proposal (an earlier stage failed).
    fn check_beside(&self, run: &mut Run<'_>, gc: &Contract, ev: &Evaluation) {
        let Some(g) = run.generation.as_mut() else {
            return;
        };
        let validator = match &gc.compiled {
            Ok(v) => v,
            Err(errors) => {
                g.errors = errors
                    .iter()
                    .map(|f| {
                        let mut f = f.clone();
                        f.message = format!("{} {}: {}", g.request, g.pointer, f.message);
                        f
                    })
                    .collect();
                return;
            }
        };
        let Some(value) = &ev.proposal else {
            return;
        };
        g.errors = schema::validate(validator, value, ev.raw_output.as_deref());
        g.valid = Some(g.errors.is_empty());
        let server_schema_failed = run.errors.first().is_some_and(|f| f.stage == Stage::Schema);
        let named = crate::core::generation::describe(&g.schema, g.source);
        if g.errors.is_empty() && server_schema_failed {
            let first = &run.errors[0];
            run.warnings.push(Warning::capture(
                Warning::GENERATION_GAP,
                Some(g.pointer.clone()),
                format!(
                    "the proposal meets the {named} its request sent ({}) but not the server contract {}{}{}: the request schema, not the model, needs the fix (`verdict lint` lists what it lacks)",
                    g.request,
                    quote(run.name.as_deref().unwrap_or(""), 80),
                    at_pointer(first),
                    first
                        .keyword
                        .as_deref()
                        .map(|k| format!(" (`{k}`)"))
                        .unwrap_or_default(),
                ),
            ));
        }
        if g.strict && !g.errors.is_empty() {
            run.warnings.push(strict_violation(g, &g.errors[0]));
        }
    }

    /// The parse, schema and business stages: the failing stage's findings (none: ready),
    /// and, when the parse or schema stage failed, the first allowed repair whose copy has
    /// another outcome (`docs/repairs.md`). A capture that passes both stages pays nothing
    /// for the repairs.
    fn later_stages(
        &self,
        capture: &Capture,
        contract: &Contract,
        validator: &jsonschema::Validator,
        proposal: Proposal,
        ev: &mut Evaluation,
    ) -> (Vec<Finding>, Option<Repair>) {
        // parse
        let value = match proposal {
            Proposal::Structured(v) => v,
            Proposal::Text(text) => {
                if let Some(f) = no_output(&text, "the response completed but its output is empty")
                {
                    return (vec![f], None);
                }
                let parsed = parse::parse_strict(&text);
                match parsed {
                    Ok(v) => {
                        ev.raw_output = Some(text);
                        v
                    }
                    Err(f) => {
                        let findings = vec![f];
                        let repair =
                            self.repair_text(capture, contract, validator, &text, &findings);
                        ev.raw_output = Some(text);
                        return (findings, repair);
                    }
                }
            }
        };
        // schema: one pass, its errors kept for the value repairs when one is allowed
        let keep = self
            .allowed_repairs()
            .any(|d| matches!(d.applies, Applies::Schema(_)))
            .then_some(repair::MAX_REPAIR_ERRORS);
        let (errors, kept) =
            schema::validate_keeping(validator, &value, ev.raw_output.as_deref(), keep);
        if !errors.is_empty() {
            let repair = kept.and_then(|kept| {
                self.repair_value(capture, contract, validator, &value, &errors, &kept)
            });
            ev.proposal = Some(value);
            return (errors, repair);
        }
        drop(kept);
        ev.proposal = Some(value);
        let value = ev.proposal.as_ref().expect("set above");
        (
            self.business(capture, contract, value, ev.raw_output.as_deref()),
            None,
        )
    }

    /// The business stage: the rules in order, then the confirmed intent; the findings are
    /// located in `raw`, the proposal's text, when there is one.
    fn business(
        &self,
        capture: &Capture,
        contract: &Contract,
        value: &Value,
        raw: Option<&str>,
    ) -> Vec<Finding> {
        if let Some(rules) = &contract.rules
            && let Some(mut f) =
                rules.evaluate(value, capture.context.as_ref(), capture.intent.as_ref())
        {
            if let Some(text) = raw {
                parse::locate_findings(text, std::slice::from_mut(&mut f));
            }
            return vec![f];
        }
        if let Some(i) = &capture.intent {
            let fields = contract
                .rules
                .as_ref()
                .and_then(|r| r.intent_fields.as_deref());
            let mut errors = crate::core::verdict::cap_findings(intent::compare(value, i, fields));
            if !errors.is_empty() {
                if let Some(text) = raw {
                    parse::locate_findings(text, &mut errors);
                }
                return errors;
            }
        }
        Vec::new()
    }

    /// The outcome-deciding findings of the schema and business stages over a repaired
    /// copy: the schema stage's first finding only ([`schema::first_failure`]: a copy's
    /// errors are never shown, only its outcome is kept), else the business stage's
    /// (nothing located).
    fn schema_then_business(
        &self,
        capture: &Capture,
        contract: &Contract,
        validator: &jsonschema::Validator,
        value: &Value,
    ) -> Vec<Finding> {
        if let Some(f) = schema::first_failure(validator, value) {
            return vec![f];
        }
        self.business(capture, contract, value, None)
    }

    /// The outcome `findings` give, with the decision `[decisions]` sets for the first
    /// one's reason (as [`Workspace::apply_decisions`] sets it on a verdict).
    fn would_be(&self, findings: &[Finding]) -> WouldBe {
        let mut w = WouldBe::of(findings);
        if let Some(f) = findings.first()
            && f.decision == f.reason.default_decision()
            && let Some(d) = self.config.decision_for(&f.reason)
        {
            w.decision = d;
        }
        w
    }

    /// The first allowed text repair (`strip-fence`, `drop-trailing`) of the parse stage's
    /// `findings` on `text` whose copy, parsed and run through the schema and business
    /// stages, has another outcome.
    fn repair_text(
        &self,
        capture: &Capture,
        contract: &Contract,
        validator: &jsonschema::Validator,
        text: &str,
        findings: &[Finding],
    ) -> Option<Repair> {
        let first = findings.first()?;
        let now = self.would_be(findings);
        for d in self.allowed_repairs() {
            let (Applies::Parse(reason), Fix::Text(fix)) = (d.applies, d.fix) else {
                continue;
            };
            if !repair::parse_applies(findings, reason) {
                continue;
            }
            let Some(copy) = fix(text, first) else {
                continue;
            };
            let after = match parse::parse_strict(&copy) {
                Ok(v) => self.schema_then_business(capture, contract, validator, &v),
                Err(f) => vec![f],
            };
            let would_be = self.would_be(&after);
            if would_be != now {
                return Some(Repair {
                    name: d.name,
                    would_be,
                });
            }
        }
        None
    }

    /// The first allowed value repair of the schema stage's `findings` on `value` whose
    /// copy, run through the schema and business stages, has another outcome. `errors` are
    /// the schema stage's own validator errors of `value` (the same pass as `findings`:
    /// the value is not validated again); a repair is tried only when the findings'
    /// keywords say it applies, and its copy is validated only when it changed something.
    fn repair_value(
        &self,
        capture: &Capture,
        contract: &Contract,
        validator: &jsonschema::Validator,
        value: &Value,
        findings: &[Finding],
        errors: &[jsonschema::ValidationError<'_>],
    ) -> Option<Repair> {
        if !repair::any_schema_repair(findings, &self.config.repairs) {
            return None;
        }
        let now = self.would_be(findings);
        for d in self.allowed_repairs() {
            let (Applies::Schema(keyword), Fix::Value(fix)) = (d.applies, d.fix) else {
                continue;
            };
            if !repair::schema_applies(findings, keyword) {
                continue;
            }
            let Some(copy) = fix(value, errors) else {
                continue;
            };
            let would_be =
                self.would_be(&self.schema_then_business(capture, contract, validator, &copy));
            if would_be != now {
                return Some(Repair {
                    name: d.name,
                    would_be,
                });
            }
        }
        None
    }

    /// The rows of the repair table `[repairs] allow` lets run, in table order.
    fn allowed_repairs(&self) -> impl Iterator<Item = &'static repair::Def> + '_ {
        repair::TABLE
            .iter()
            .filter(|d| self.config.repairs.contains(&d.name))
    }
}

/// The request a capture carries itself (`docs/requests.md#where-a-captures-request-comes-from`):
/// its record's `request`, else the request its batch line or Responses body echoes.
fn own_request(capture: &Capture) -> Option<Request> {
    if let Some(r) = &capture.request {
        return Some(Request {
            from: if r.echoed {
                RequestFrom::Echo
            } else {
                RequestFrom::Record
            },
            base: Arc::from(r.base),
            schemas: Arc::new(RequestSchemas::read(&r.body)),
        });
    }
    // an OpenAI Responses body echoes `text.format` and `tools`
    if let Payload::Response(body) = &capture.payload
        && body.get("object").and_then(Value::as_str) == Some("response")
    {
        let schemas = RequestSchemas::read(body);
        if !schemas.is_empty() {
            let base = match capture.format {
                "openai-batch" => "/response/body",
                "capture" => "/response",
                _ => "",
            };
            return Some(Request {
                from: RequestFrom::Echo,
                base: Arc::from(base),
                schemas: Arc::new(schemas),
            });
        }
    }
    None
}

/// `STRICT_VIOLATION` for a capture checked against the schema its strict request sent
/// (`contract_from` `request`) that fails its schema stage.
fn strict_zero_config(run: &mut Run<'_>) {
    if let (Some(g), Some(first)) = (&run.generation, run.errors.first())
        && g.strict
        && first.stage == Stage::Schema
    {
        run.warnings.push(strict_violation(g, first));
    }
}

/// The `STRICT_VIOLATION` warning of a strict request whose proposal breaks `g` (`first`
/// is the first finding against it).
fn strict_violation(g: &Generation, first: &Finding) -> Warning {
    Warning::capture(
        Warning::STRICT_VIOLATION,
        Some(g.pointer.clone()),
        format!(
            "the request was strict ({}), so constrained decoding promised conformance, yet the proposal breaks the {} it sent{}: {}",
            g.request,
            crate::core::generation::describe(&g.schema, g.source),
            at_pointer(first),
            first.message
        ),
    )
}

/// ` at /pointer` for a finding with a pointer (` at the root` for `""`), else nothing.
fn at_pointer(f: &Finding) -> String {
    match f.pointer.as_deref() {
        Some("") => " at the root".to_owned(),
        Some(p) => format!(" at {p}"),
        None => String::new(),
    }
}

/// What the schema a capture's request sent gives as its contract.
enum FromRequest {
    /// The compiled generation schema, with the schema as read.
    Contract(Arc<Contract>, Generation, GenerationSchema),
    /// It names a schema that cannot be used: the capture's `CONTRACT_ERROR` (with the
    /// contract name).
    Broken(String, Generation, Box<Finding>),
    /// None: why, when the capture has a request (for the `UNKNOWN_CONTRACT` message).
    Missing(Option<String>),
}

/// The pipeline of one plain JSON instance, with no capture record and no workspace (what
/// `check --schema` runs on each `.json` file or JSONL line): the parse stage (an empty or
/// blank text is the response stage's `NO_OUTPUT`), then the schema stage against
/// `validator`, its findings located in `text` (line:column and byte spans). Returns the
/// findings of the first failing stage, in order; empty when the instance passes.
pub fn validate_instance(text: &str, validator: &jsonschema::Validator) -> Vec<Finding> {
    if let Some(f) = no_output(text, "the instance is empty") {
        return vec![f];
    }
    match parse::parse_strict(text) {
        Ok(v) => schema::validate(validator, &v, Some(text)),
        Err(f) => vec![f],
    }
}

/// `NO_OUTPUT` when a text to parse is empty or blank (`message` says what is empty).
fn no_output(text: &str, message: &str) -> Option<Finding> {
    text.trim()
        .is_empty()
        .then(|| Finding::new(Stage::Response, Reason::NO_OUTPUT, message))
}

#[cfg(test)]
mod tests {
    /// `meta.usage` is what serde gives for every combination of counts.
    #[test]
    fn usage_is_what_serde_gives() {
        use crate::core::verdict::TokenUsage;
        for bits in 0..8u64 {
            let n = |b: u64, v: u64| (bits & b != 0).then_some(v);
            let t = TokenUsage {
                input_tokens: n(1, 310),
                output_tokens: n(2, 0),
                total_tokens: n(4, u64::MAX),
            };
            let want = serde_json::to_value(t).unwrap();
            // written as `meta`'s text, and into a `meta` already a map
            let mut text = crate::core::meta::Meta::default();
            text.insert_absent_counts(MetaKey::Usage, &super::usage_counts(&t));
            assert!(text.is_text());
            let mut map = crate::core::meta::Meta::from(serde_json::Map::new());
            map.insert_absent_counts(MetaKey::Usage, &super::usage_counts(&t));
            assert_eq!(text.get("usage"), Some(&want), "{bits}");
            assert_eq!(map.get("usage"), Some(&want), "{bits}");
        }
    }

    #[test]
    fn a_contract_froms_text_is_its_display() {
        use super::ContractFrom;
        for f in [
            ContractFrom::Record,
            ContractFrom::Join,
            ContractFrom::Source(3),
            ContractFrom::Route(12),
            ContractFrom::Tool,
            ContractFrom::Default,
            ContractFrom::Request,
        ] {
            assert_eq!(f.text(), f.to_string());
        }
        assert_eq!(ContractFrom::Route(2).text(), "route 2");
    }

    use super::*;

    #[test]
    fn plain_instances_run_the_parse_then_the_schema_stage() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "required": ["a"]
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        let findings = |text: &str| {
            validate_instance(text, &validator)
                .into_iter()
                .map(|f| {
                    let at = f.at.map(|a| a.to_string());
                    (f.stage, f.reason.to_string(), f.pointer, at)
                })
                .collect::<Vec<_>>()
        };
        assert!(findings("{\"a\": 1}").is_empty());
        for blank in ["", " \r\n\t"] {
            let f = validate_instance(blank, &validator);
            assert_eq!(f.len(), 1);
            assert_eq!(
                (f[0].stage, f[0].reason.as_str(), f[0].message.as_str()),
                (Stage::Response, "NO_OUTPUT", "the instance is empty")
            );
        }
        let parse = findings("{\"a\": 1} x");
        assert_eq!(parse.len(), 1);
        assert_eq!(
            (parse[0].0, parse[0].1.as_str()),
            (Stage::Parse, "TRAILING_CONTENT")
        );
        assert_eq!(
            findings("{\n  \"a\": \"x\"\n}"),
            [(
                Stage::Schema,
                "SCHEMA_MISMATCH".to_string(),
                Some("/a".to_string()),
                Some("2:8".to_string())
            )]
        );
    }
}
