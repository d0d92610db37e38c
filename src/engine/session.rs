//! A validation session: the current verdict of every capture of a workspace, updated
//! incrementally as files change.
//!
//! * a changed capture file is re-read and re-validated alone;
//! * a changed schema or rules file (or `verdict.toml`) reloads the contracts and
//!   re-validates the captures of the contracts that changed (all captures, for the config);
//! * a new folder is rescanned (file watchers miss files created right after their folder);
//! * a deleted capture file removes its captures.
//!
//! Every update reports the [`Change`]s: verdicts that are new, changed (with the outcome
//! they flipped from) or removed. Verdicts are keyed by their `source` (unique, unlike ids);
//! the outcome a verdict flipped from is that of the same capture (same id), so deleting or
//! inserting a JSONL line moves the captures below it without reporting flips.
//!
//! The session keeps compact state, not verdicts: per capture its line, outcome (stage,
//! decision, reason, contract, `expect`; interned), a hash of the whole verdict and the
//! [`ids::fingerprint`] of its id (24 bytes) and its id (unless [`Session::without_ids`]),
//! so a log of a million captures costs a few tens of megabytes. Files are
//! read and validated in chunks, one chunk of records in memory at a time.
//!
//! Ids several captures share (`DUPLICATE_ID`, `docs/verdicts.md#duplicate-ids`) are kept
//! as groups of sources ([`ids::Shared`], only the shared ids). A change batch first reads
//! the ids its files will hold that another capture may have (as `check` does: the exact
//! ids of the records whose candidate ids another capture has, [`ids::Scan`]) so their
//! verdicts carry the warning when first reported; then the groups are recomputed from the
//! fingerprints of the verdicts'
//! ids, and every other capture whose group changed (its id became shared, no longer
//! shared, or shared with other captures) is re-read, re-validated and reported as
//! [`Change::Updated`].

use crate::core::capture;
use crate::core::outcome::{FlipKind, Outcome};
use crate::core::pipeline::Evaluation;
use crate::core::record_ref::RecordRef;
use crate::core::repair::RepairMark;
use crate::core::summary::Summary;
use crate::core::verdict::{Decision, Reason, Stage, Verdict, Warning};
use crate::core::workspace::{Workspace, WorkspaceError};
use crate::engine::ids::{self, Members, Shared, fingerprint};
use crate::engine::summary::{CaptureSummary, Locator, for_each_located_as, verdict_hash};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What tells whether a contract changed: its schema text, its rules text, the texts of the
/// schema files its `$ref`s reach ([`crate::core::contract::Contract::reaches`]), whether it
/// compiled and, for a tool schema of an MCP `tools/list`, where it is declared (its
/// messages name it).
type ContractPrint = (Arc<str>, Arc<str>, u64, bool, Option<String>);

/// Records validated together (in parallel) when a file is re-read, and at most
/// [`crate::engine::worker::batch_bytes`] of their text.
const CHUNK: usize = 1024;

/// One verdict that appeared, changed or disappeared.
#[derive(Debug, Clone)]
pub enum Change {
    /// A capture seen for the first time, or whose verdict changed.
    Updated {
        /// The fresh evaluation (its verdict is the new verdict).
        evaluation: Box<Evaluation>,
        /// The outcome it had before (`None` when new).
        previous: Option<Outcome>,
        /// How its outcome changed from `previous` ([`Outcome::flip_from`]); `None` when it
        /// is new or only its findings' details changed.
        flip: Option<FlipKind>,
        /// Where the record is.
        loc: Locator,
    },
    /// A capture that no longer exists (its file was deleted, or its JSONL line removed).
    Removed {
        /// Its last id.
        id: String,
        /// Its source.
        source: RecordRef,
        /// Its last contract.
        contract: Option<String>,
    },
}

/// What a session remembers of a verdict: its outcome and contract (interned: few
/// distinct values).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Kind {
    outcome: Outcome,
    contract: Option<String>,
}

/// A verdict's outcome, borrowed (what [`Kinds`] interns).
#[derive(Hash)]
struct KindRef<'a> {
    stage: Stage,
    decision: Decision,
    reason: Option<&'a Reason>,
    contract: Option<&'a str>,
    expect: Option<bool>,
    repair: Option<RepairMark>,
}

impl<'a> KindRef<'a> {
    fn of(v: &'a Verdict) -> KindRef<'a> {
        KindRef {
            stage: v.stage,
            decision: v.decision,
            reason: v.reason.as_ref(),
            contract: v.contract.as_deref(),
            expect: v.expect.as_ref().map(|e| e.met),
            repair: v.repair.as_ref().map(crate::core::repair::Repair::mark),
        }
    }

    fn of_summary(s: &'a CaptureSummary) -> KindRef<'a> {
        KindRef {
            stage: s.outcome.stage,
            decision: s.outcome.decision,
            reason: s.outcome.reason.as_ref(),
            contract: s.contract.as_deref(),
            expect: s.outcome.expect_met,
            repair: s.outcome.repair,
        }
    }
}

/// The interned outcomes.
#[derive(Debug, Default)]
struct Kinds {
    list: Vec<Kind>,
    by_hash: HashMap<u64, Vec<u32>>,
}

impl Kinds {
    fn intern(&mut self, v: KindRef<'_>) -> u32 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        v.hash(&mut h);
        let same = |k: &Kind| {
            k.outcome.stage == v.stage
                && k.outcome.decision == v.decision
                && k.outcome.reason.as_ref() == v.reason
                && k.contract.as_deref() == v.contract
                && k.outcome.expect_met == v.expect
                && k.outcome.repair == v.repair
        };
        let ids = self.by_hash.entry(h.finish()).or_default();
        if let Some(&i) = ids.iter().find(|&&i| same(&self.list[i as usize])) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(Kind {
            outcome: Outcome {
                stage: v.stage,
                decision: v.decision,
                reason: v.reason.cloned(),
                expect_met: v.expect,
                repair: v.repair,
            },
            contract: v.contract.map(str::to_string),
        });
        ids.push(i);
        i
    }
}

/// One capture as the session remembers it (40 bytes).
#[derive(Debug, Clone, Copy)]
struct Brief {
    /// [`text_print`] of its record's text (0: not known, never taken as unchanged).
    text: u64,
    /// JSONL line (0 for a `.json` file).
    line: u32,
    /// The 1-based part of a record holding several captures (0: the record is one).
    part: u32,
    /// Index into [`Kinds`].
    kind: u32,
    /// [`verdict_hash`] of the verdict.
    hash: u64,
    /// [`fingerprint`] of the capture's id: which capture this is when lines move, and
    /// which captures share its id.
    id: u64,
}

/// The captures of one file, in file order, and their ids (unless the session keeps none).
#[derive(Debug, Default)]
struct FileState {
    briefs: Vec<Brief>,
    /// Per brief, where its id is in `ids` (empty when ids are not kept).
    id_spans: Vec<(u32, u32)>,
    ids: String,
}

impl FileState {
    fn id(&self, i: usize) -> String {
        self.id_spans
            .get(i)
            .map(|&(at, len)| self.ids[at as usize..(at + len) as usize].to_string())
            .unwrap_or_default()
    }

    /// Remembers a capture by its brief (`id` the id `brief.id` fingerprints, kept whole
    /// when `keep_id`).
    fn push(&mut self, brief: Brief, id: &str, keep_id: bool) {
        if keep_id {
            self.id_spans.push((self.ids.len() as u32, id.len() as u32));
            self.ids.push_str(id);
        }
        self.briefs.push(brief);
    }

    /// The brief of a line's capture, or of one part of it (briefs are in line order, then
    /// part order).
    fn find(&self, line: u32, part: u32) -> Option<usize> {
        self.briefs
            .binary_search_by_key(&(line, part), |b| (b.line, b.part))
            .ok()
    }

    /// The source of the capture of brief `b` in the file `rel`.
    fn source(rel: &Arc<str>, b: &Brief) -> RecordRef {
        RecordRef::new_part(
            rel.clone(),
            (b.line != 0).then_some(b.line as usize),
            (b.part != 0).then_some(b.part),
        )
    }
}

/// The current verdicts of a workspace.
pub struct Session {
    /// The workspace as last loaded (shared with front ends, replaced on reload).
    pub ws: Arc<Workspace>,
    /// Current state by capture file (workspace-relative).
    files: BTreeMap<String, FileState>,
    kinds: Kinds,
    /// Whether ids are kept (for [`Change::Removed`]).
    keep_ids: bool,
    /// Contracts whose schema or rules text changed in the last [`Session::apply`].
    changed_contracts: Vec<String>,
    /// The ids several current captures share, with their sources.
    shared: Shared,
    /// The capture files that are symlinks (workspace-relative), each with the canonical
    /// path of its target: a batch naming a target (or a folder above it) re-reads its
    /// links. Made by the first batch (one `lstat` per known file), then kept up to date.
    links: Option<Box<Links>>,
}

/// The capture files that are symlinks, each with its target ([`Session`]'s `links`; boxed:
/// the session stays small).
struct Links(BTreeMap<String, PathBuf>);

/// The changed path (workspace-relative, among `causes`) that explains a new verdict: its
/// own capture file, else the schema or rules file of its contract, else the first cause.
pub fn cause_of<'a>(verdict: &Verdict, causes: &'a [String]) -> Option<&'a String> {
    cause_for(&verdict.source, verdict.contract.as_deref(), causes)
}

/// [`cause_of`] for a capture known by its source and contract.
pub fn cause_for<'a>(
    source: &RecordRef,
    contract: Option<&str>,
    causes: &'a [String],
) -> Option<&'a String> {
    let file = &**source.file();
    causes
        .iter()
        .find(|c| *c == file)
        .or_else(|| {
            let contract = contract?;
            causes.iter().find(|c| {
                let name = c.rsplit('/').next().unwrap_or(c);
                name.strip_prefix(contract)
                    .is_some_and(|rest| rest.starts_with('.'))
            })
        })
        .or_else(|| causes.first())
}

impl Session {
    /// Opens the workspace and validates every capture (in parallel). The returned changes
    /// list every verdict as new.
    ///
    /// # Errors
    /// The workspace cannot be opened.
    pub fn open(root: &Path) -> Result<(Session, Vec<Change>), WorkspaceError> {
        let mut changes = Vec::new();
        let s = Session::open_each(root, &mut |c| changes.push(c))?;
        Ok((s, changes))
    }

    /// As [`Session::open`], handing each change to `each` as it is found (memory stays
    /// bounded by one chunk of records, whatever the log size).
    ///
    /// # Errors
    /// The workspace cannot be opened.
    pub fn open_each(root: &Path, each: &mut dyn FnMut(Change)) -> Result<Session, WorkspaceError> {
        let s = Session::open_with(Arc::new(Workspace::load(root)?), each);
        match s.ws.request_glob_error() {
            Some(e) => Err(e),
            None => Ok(s),
        }
    }

    /// As [`Session::open_each`] on a loaded workspace ([`Workspace::load`]): the pre-pass
    /// ([`crate::engine::prescan`]) reads every capture file once for the workspace's MCP
    /// facts, batch requests and duplicate-id candidates, then every capture is validated.
    pub fn open_with(ws: Arc<Workspace>, each: &mut dyn FnMut(Change)) -> Session {
        let files = ws.capture_files();
        let present: Vec<PathBuf> = files.iter().filter(|f| listed(f)).cloned().collect();
        let (ws, scan) = prepass(&ws, &files, &present);
        let mut s = Session::empty(Arc::new(ws));
        s.revalidate_with(&files, &HashSet::new(), Some(scan), Reuse::None, each);
        s
    }

    /// A session with no captures yet, for a front end that validates the first run itself
    /// and [`Session::record`]s each result.
    pub fn empty(ws: Arc<Workspace>) -> Session {
        Session {
            ws,
            files: BTreeMap::new(),
            kinds: Kinds::default(),
            keep_ids: true,
            changed_contracts: Vec::new(),
            shared: Shared::default(),
            links: None,
        }
    }

    /// The same session, keeping no ids: [`Change::Removed`] then carries an empty id, for
    /// a front end that knows its captures' ids itself (saves about the ids' size per
    /// capture).
    pub fn without_ids(mut self) -> Session {
        self.keep_ids = false;
        self
    }

    /// Remembers one evaluated record of a first run, by its summary and
    /// [`verdict_hash`]; records of a file must come in file order. `file` is the capture
    /// file as [`Workspace::relative`] writes it (to know a file that has no records, pass
    /// `None`).
    ///
    /// `text` is [`text_print`] of the record's text (0 when it is not known): a later
    /// [`Session::apply`] keeps, without evaluating it again, the verdict of a record whose
    /// text and place it finds unchanged (`docs/commands.md#watch`).
    pub fn record(&mut self, file: &str, rec: Option<(&CaptureSummary, u64)>, text: u64) {
        let state = match self.files.get_mut(file) {
            Some(s) => s,
            None => self.files.entry(file.to_string()).or_default(),
        };
        if let Some((s, hash)) = rec {
            let kind = self.kinds.intern(KindRef::of_summary(s));
            state.push(
                Brief {
                    text,
                    line: s.loc.line.unwrap_or(0),
                    part: s.loc.part.unwrap_or(0),
                    kind,
                    hash,
                    id: fingerprint(&s.id),
                },
                &s.id,
                self.keep_ids,
            );
        }
    }

    /// The ids several current captures share: what puts `DUPLICATE_ID` on a verdict
    /// ([`Shared::mark`]), e.g. on one a front end re-reads to show it.
    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Sets the shared ids of a first run that [`Session::record`]s its results: the
    /// groups [`ids::scan`] found before the run, with which each recorded verdict was
    /// marked.
    pub fn set_shared(&mut self, shared: Shared) {
        self.shared = shared;
    }

    /// Reserves room for `n` more records of `file` (a first run that counted them).
    pub fn reserve(&mut self, file: &str, n: usize) {
        let state = self.files.entry(file.to_string()).or_default();
        state.briefs.reserve(n);
        if self.keep_ids {
            state.id_spans.reserve(n);
        }
    }

    /// The contracts whose schema or rules text changed in the last [`Session::apply`]
    /// (every contract after a reload of `verdict.toml`).
    pub fn changed_contracts(&self) -> &[String] {
        &self.changed_contracts
    }

    /// How many captures the session holds.
    pub fn len(&self) -> usize {
        self.files.values().map(|f| f.briefs.len()).sum()
    }

    /// Whether the session holds no capture.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The [`verdict_hash`] of the current verdict of a capture file's line (0 for a `.json`
    /// file), or of its `part` when the record holds several captures, if the session
    /// holds it.
    pub fn hash_of(&self, file: &str, line: u32, part: Option<u32>) -> Option<u64> {
        let f = self.files.get(file)?;
        f.find(line, part.unwrap_or(0)).map(|i| f.briefs[i].hash)
    }

    /// The counts over every current verdict (as [`Summary::add`] would make them).
    /// With the workspace warnings `check` gives ([`Session::workspace_warnings`]).
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for f in self.files.values() {
            for b in &f.briefs {
                let k = &self.kinds.list[b.kind as usize];
                s.add_outcome(k.outcome.stage, k.outcome.decision, k.outcome.expect_met);
                s.add_repairs(k.outcome.repair, 1);
            }
        }
        s.warnings = self.workspace_warnings();
        s
    }

    /// The warnings of the workspace itself that `check` gives after its verdicts: an
    /// `UNMATCHED_JOIN` per `[[join]]` line whose id no current capture has (matched by id
    /// fingerprint; `docs/config.md#join`), and the batch input requests'
    /// `UNMATCHED_REQUEST` and `DUPLICATE_REQUEST` (`docs/requests.md`). Free when the
    /// workspace has neither.
    pub fn workspace_warnings(&self) -> Vec<Warning> {
        if self.ws.joins.by_id.is_empty() && self.ws.requests.is_empty() {
            return Vec::new();
        }
        let joins: HashMap<u64, &String> = self
            .ws
            .joins
            .by_id
            .keys()
            .map(|id| (fingerprint(id), id))
            .collect();
        let marks = self.ws.requests.marks();
        let mut matched: HashSet<String> = HashSet::new();
        for (rel, f) in &self.files {
            let glob = self.ws.config.requests_for(rel);
            for b in &f.briefs {
                if let Some(id) = joins.get(&b.id) {
                    matched.insert((*id).clone());
                }
                if !self.ws.requests.is_empty() {
                    self.ws.requests.mark_fingerprint(b.id, rel, glob, &marks);
                }
            }
        }
        let mut out = self.ws.unmatched_joins(&matched);
        out.extend(self.ws.request_warnings(Some(&marks)));
        out
    }

    /// Re-validates everything (contracts reloaded).
    ///
    /// # Errors
    /// The workspace can no longer be opened (e.g. `verdict.toml` became invalid); the
    /// session keeps its previous state.
    pub fn reload(&mut self) -> Result<Vec<Change>, WorkspaceError> {
        let mut changes = Vec::new();
        self.reload_each(&mut |c| changes.push(c))?;
        Ok(changes)
    }

    fn reload_each(&mut self, each: &mut dyn FnMut(Change)) -> Result<(), WorkspaceError> {
        let loaded = Workspace::load(&self.ws.root)?;
        let all = loaded.capture_files();
        let mut files = all.clone();
        // files the workspace's walk no longer lists (deleted, or left out now by a
        // narrower `captures`, a removed `[[source]]`, an ignore file, a new `[[join]]`
        // glob): their captures go, as a fresh `check` no longer sees them
        let walked: HashSet<String> = all.iter().map(|f| loaded.relative(f)).collect();
        let gone: HashSet<PathBuf> = self
            .files
            .keys()
            .filter(|f| !walked.contains(*f))
            .map(|f| loaded.root.join(f))
            .collect();
        files.extend(gone.iter().cloned());
        // one read of each file: the facts, and the ids of those that are there
        let present: Vec<PathBuf> = files
            .iter()
            .filter(|f| listed(f) && !gone.contains(*f))
            .cloned()
            .collect();
        let (ws, scan) = prepass(&loaded, &all, &present);
        if let Some(e) = ws.request_glob_error() {
            return Err(e);
        }
        self.ws = Arc::new(ws);
        self.links = None;
        self.changed_contracts = self.ws.contracts.by_name.keys().cloned().collect();
        self.revalidate_with(&files, &gone, Some(scan), Reuse::None, each);
        Ok(())
    }

    /// Applies a batch of changed paths (absolute, or relative to the current folder).
    ///
    /// # Errors
    /// As [`Session::reload`], when the batch touches `verdict.toml` or the contracts.
    pub fn apply(&mut self, paths: &[PathBuf]) -> Result<Vec<Change>, WorkspaceError> {
        let mut changes = Vec::new();
        self.apply_each(paths, &mut |c| changes.push(c))?;
        Ok(changes)
    }

    /// As [`Session::apply`], handing each change to `each` as it is found.
    ///
    /// # Errors
    /// As [`Session::apply`].
    pub fn apply_each(
        &mut self,
        paths: &[PathBuf],
        each: &mut dyn FnMut(Change),
    ) -> Result<(), WorkspaceError> {
        self.changed_contracts.clear();
        let root = self
            .ws
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.ws.root.clone());
        let schemas = root.join(&self.ws.config.schemas);
        let mut contracts_changed = false;
        let mut targets: BTreeSet<PathBuf> = BTreeSet::new();
        let roots = [
            root.clone(),
            std::path::absolute(&self.ws.root).unwrap_or_else(|_| self.ws.root.clone()),
        ];
        // the walk `check` makes changed: the workspace is loaded and walked again
        if paths.iter().any(|p| self.walk_input(&roots, p)) {
            return self.reload_each(each);
        }
        for p in paths {
            // below a symlinked folder: never walked (`docs/commands.md#watch`)
            if below_a_link(&roots, p) {
                continue;
            }
            // a symlinked capture is named by its link, not resolved to its target: a link
            // re-pointed elsewhere is that capture file changed
            let p = absolute_link(p);
            if p.starts_with(&schemas) {
                contracts_changed = true;
                continue;
            }
            if real_dir(&p) {
                // a new folder: the watcher may have missed files created right after it
                let mut found = Vec::new();
                let ws = self.ws.clone();
                let in_ws = |t: &Path| ws.root.join(t.strip_prefix(&root).unwrap_or(t));
                let unreadable = crate::core::workspace::collect_files(
                    &p,
                    &|t| ws.is_capture_path(&in_ws(t)),
                    &mut found,
                );
                targets.extend(found);
                // as in `Workspace::capture_files`: an unreadable folder is a row
                targets.extend(unreadable.into_iter().map(|u| u.path));
                // a capture file replaced by a folder of its name: its captures go
                targets.insert(p.clone());
                // a folder removed and made again (or another moved in its place) within
                // one batch, which may name only the folder: every capture file known
                // below it is read again, so the old ones that are gone go and none mixes
                // with the new
                if let Ok(rel) = p.strip_prefix(&root) {
                    let below = format!("{}/", rel.to_string_lossy().replace('\\', "/"));
                    targets.extend(
                        self.files
                            .keys()
                            .filter(|f| below == "/" || f.starts_with(&below))
                            .map(|f| root.join(&**f)),
                    );
                }
            } else if capture::is_capture_file(&p)
                || p.strip_prefix(&root).is_ok_and(|r| {
                    let r = self.ws.root.join(r);
                    // or a capture file the session holds by another name: an unreadable
                    // folder's row, deleted or renamed away (its row goes)
                    self.ws.is_capture_path(&r) || self.files.contains_key(&self.ws.relative(&r))
                })
            {
                targets.insert(p.clone());
            }
            if !real_dir(&p)
                && let Ok(rel) = p.strip_prefix(&root)
            {
                // a folder deleted or renamed away (or replaced by a file): the watcher may
                // name only the folder, so every known capture file below it goes (as a
                // fresh `check` would see it)
                let below = format!("{}/", rel.to_string_lossy().replace('\\', "/"));
                targets.extend(
                    self.files
                        .keys()
                        .filter(|f| f.starts_with(&below))
                        .map(|f| root.join(&**f)),
                );
            }
        }
        // a symlinked capture whose target (or a folder above it) changed: read again
        let links = self.links.get_or_insert_with(|| {
            Box::new(Links(
                self.files
                    .keys()
                    .filter_map(|f| link_target(&self.ws.root.join(f)).map(|t| (f.clone(), t)))
                    .collect(),
            ))
        });
        let links = &links.0;
        if !links.is_empty() {
            for p in paths {
                let p = canonical(&absolute(p));
                targets.extend(
                    links
                        .iter()
                        .filter(|(_, t)| t.starts_with(&p))
                        .map(|(f, _)| root.join(f)),
                );
            }
        }
        // a capture file: below a configured capture folder (or that file), named like one
        // and not ignored; a deleted path is passed on so its captures disappear. No workspace scan: a
        // save in a workspace of 100,000 files costs what that one file costs.
        let capture_roots: Vec<PathBuf> = self
            .ws
            .config
            .captures
            .iter()
            .map(|c| absolute(&self.ws.root.join(c)))
            .collect();
        // ...and not left out by the walk `check` makes (`.gitignore`, `.ignore`, hidden)
        let is_capture = |t: &Path| {
            capture_roots.iter().any(|r| {
                t == r
                    || (t.starts_with(r)
                        && self.ws.is_capture_path(
                            &self.ws.root.join(t.strip_prefix(&root).unwrap_or(t)),
                        )
                        && !crate::core::workspace::is_ignored(r, t))
            })
        };
        let in_ws = |t: &Path| self.ws.root.join(t.strip_prefix(&root).unwrap_or(t));
        let known = |t: &Path| self.files.contains_key(&self.ws.relative(&in_ws(t)));
        // known files now below a symlinked folder (a folder replaced by a link): gone, as
        // the walk never enters a link
        let gone: HashSet<PathBuf> = targets
            .iter()
            .filter(|t| below_a_link(&roots, t))
            .map(|t| in_ws(t))
            .collect();
        let targets: Vec<PathBuf> = targets
            .into_iter()
            .filter(|t| {
                !t.exists()
                    || gone.contains(&in_ws(t))
                    || if real_dir(t) {
                        // a folder that cannot be listed is a row of its own
                        known(t) || std::fs::read_dir(t).is_err()
                    } else {
                        is_capture(t)
                    }
            })
            .map(|t| in_ws(&t))
            .collect();
        // known files below a folder that cannot be listed now (made mode 000): gone, as
        // the walk does not reach them; the folder is a row of its own (among the targets)
        let mut listable = HashMap::new();
        let gone: HashSet<PathBuf> = targets
            .iter()
            .filter(|t| behind_unlistable(&self.ws.root, t, &mut listable))
            .cloned()
            .chain(gone)
            .collect();
        // one read of each changed capture file (`engine::prescan`): its MCP facts, batch
        // requests and duplicate-id candidates
        let present: Vec<PathBuf> = targets
            .iter()
            .filter(|t| listed(t) && !gone.contains(*t))
            .cloned()
            .collect();
        let pre = crate::engine::prescan::run(
            &self.ws,
            &present,
            &present,
            &crate::core::prescan::Progress::default(),
        );
        // a changed batch input file changes the requests of results in other files: every
        // capture is validated again (`docs/requests.md`)
        if self.requests_changed(&targets, &pre.requests) {
            return self.reload_each(each);
        }
        // the MCP facts of the changed capture files (docs/record-shapes.md#mcp): a changed
        // tools/list changes contracts, so it reloads them as a schema change does; a
        // changed request index only matters to its own file, re-validated below
        match self.mcp_facts(&targets, &pre.mcp) {
            Some(mcp) if contracts_changed || !mcp.same_declarations(&self.ws.mcp) => {
                self.reload_contracts(Some(mcp), each)?;
            }
            Some(mcp) => self.ws = Arc::new(self.ws.with_mcp(mcp)),
            None if contracts_changed => self.reload_contracts(None, each)?,
            None => {}
        }
        self.revalidate_with(&targets, &gone, Some(pre.ids), Reuse::Unchanged, each);
        if let Some(links) = &mut self.links {
            let links = &mut links.0;
            for t in &targets {
                let rel = self.ws.relative(t);
                match link_target(t) {
                    Some(target) => links.insert(rel, target),
                    None => links.remove(&rel),
                };
            }
        }
        Ok(())
    }

    /// Whether a changed path is an input of the workspace's load and walk beyond one
    /// capture or schema file, so that only loading and walking the workspace again (as
    /// `check` does) tells its capture files: `verdict.toml`; a `[[join]]` file (its trusted
    /// data may touch any capture), a folder that held one (deleted or renamed away: the
    /// watcher may name only the folder) or a folder that holds one now; an ignore file
    /// (`.gitignore`, `.ignore`: what it hides or shows again); the schemas folder or a
    /// captures folder itself.
    fn walk_input(&self, roots: &[PathBuf], p: &Path) -> bool {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if crate::core::workspace::IGNORE_FILES.contains(&name) {
            return true;
        }
        let p = absolute_link(p);
        let Some(rel) = roots.iter().find_map(|r| p.strip_prefix(r).ok()) else {
            return false;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel == "verdict.toml" || self.ws.is_join_path(&rel) {
            return true;
        }
        // the schemas folder or a captures folder itself (its mode changed, say): one that
        // cannot be listed stops `check` ("cannot open workspace"), and the reload says so
        let own = std::iter::once(&self.ws.config.schemas).chain(&self.ws.config.captures);
        if own
            .into_iter()
            .any(|d| !d.as_os_str().is_empty() && roots.iter().any(|r| r.join(d) == p))
        {
            return true;
        }
        if self.ws.config.joins.is_empty() {
            return false;
        }
        let below = format!("{rel}/");
        if self.ws.joins.files.iter().any(|f| f.starts_with(&below)) {
            return true;
        }
        if !real_dir(&p) {
            return false;
        }
        let mut found = Vec::new();
        let ws = &self.ws;
        let root = &roots[0];
        crate::core::workspace::collect_files(
            &p,
            &|f| {
                let rel = f.strip_prefix(root).unwrap_or(f);
                ws.is_join_path(&rel.to_string_lossy().replace('\\', "/"))
            },
            &mut found,
        );
        !found.is_empty()
    }

    /// Whether the batch input requests of the capture files `targets` (as the pre-pass
    /// read them: `now`) differ from those the workspace holds.
    fn requests_changed(&self, targets: &[PathBuf], now: &crate::core::request::Requests) -> bool {
        let ws = &self.ws;
        targets.iter().any(|t| {
            let rel = ws.relative(t);
            let now = std::fs::symlink_metadata(t)
                .is_ok_and(|m| !m.is_dir())
                .then(|| now.facts(&rel))
                .flatten()
                .filter(|f| !f.is_empty());
            now != ws.requests.facts(&rel)
        })
    }

    /// The workspace's MCP facts with those of the capture files `targets` (as the pre-pass
    /// read them: `now`), when they differ from the facts the workspace holds; `None` when
    /// none changed.
    fn mcp_facts(
        &self,
        targets: &[PathBuf],
        now: &crate::core::mcp::McpSessions,
    ) -> Option<crate::core::mcp::McpSessions> {
        let ws = &self.ws;
        let mut mcp: Option<crate::core::mcp::McpSessions> = None;
        for t in targets {
            let rel = ws.relative(t);
            let now = std::fs::symlink_metadata(t)
                .is_ok_and(|m| !m.is_dir())
                .then(|| now.facts(&rel).cloned().unwrap_or_default());
            let held = mcp.as_ref().unwrap_or(&ws.mcp);
            if now.as_ref() != held.facts(&rel) {
                mcp = Some(held.with_file(&rel, now));
            }
        }
        mcp
    }

    /// Reloads the contracts (with the MCP facts `mcp`, else those held) and re-validates the
    /// captures whose contract's schema or rules text changed (or that have no usable
    /// contract).
    fn reload_contracts(
        &mut self,
        mcp: Option<crate::core::mcp::McpSessions>,
        each: &mut dyn FnMut(Change),
    ) -> Result<(), WorkspaceError> {
        let old = self.contract_fingerprints();
        let mcp = mcp.unwrap_or_else(|| (*self.ws.mcp).clone());
        self.ws = Arc::new(self.ws.recompiled(mcp));
        let new = self.contract_fingerprints();
        let changed: BTreeSet<&String> = old
            .keys()
            .chain(new.keys())
            .filter(|k| old.get(*k) != new.get(*k))
            .collect();
        self.changed_contracts = changed.iter().map(|c| (*c).clone()).collect();
        let kinds = &self.kinds.list;
        let files: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|(_, st)| {
                st.briefs
                    .iter()
                    .any(|b| match &kinds[b.kind as usize].contract {
                        Some(c) => changed.contains(c) || self.ws.contracts.get(c).is_none(),
                        None => true,
                    })
            })
            .map(|(f, _)| self.ws.root.join(f))
            .collect();
        self.revalidate_files(&files, each);
        Ok(())
    }

    /// Each contract's schema and rules text as loaded (never re-read from disk: the old
    /// fingerprint must be what the captures were validated with).
    fn contract_fingerprints(&self) -> BTreeMap<String, ContractPrint> {
        self.ws
            .contracts
            .by_name
            .iter()
            .map(|(name, c)| {
                let at = c.label.clone();
                let ok = c.compiled.is_ok();
                (
                    name.clone(),
                    (c.text.clone(), c.rules_text.clone(), c.reaches, ok, at),
                )
            })
            .collect()
    }

    /// Re-reads and re-validates the given capture files (a missing one is removed), file
    /// by file, [`CHUNK`] records at a time; then re-reports the other captures whose id
    /// became shared or no longer shared (or shared with other captures).
    fn revalidate_files(&mut self, files: &[PathBuf], each: &mut dyn FnMut(Change)) {
        self.revalidate_with(files, &HashSet::new(), None, Reuse::None, each);
    }

    /// [`Session::revalidate_files`], with the duplicate-id scan of those of `files` that
    /// are [`listed`] (in that order) when the pre-pass already read it. The files of
    /// `gone` (among `files`) are no capture files any more, wherever they are: their
    /// captures go, as those of a deleted file.
    ///
    /// With [`Reuse::Unchanged`] (a change batch of capture files only: the contracts and
    /// facts the kept verdicts were made with still hold), a record whose text is the one
    /// the session last evaluated at the same place keeps its verdict, unevaluated: a
    /// single capture (no parts), no MCP message (its verdict depends on other lines of its
    /// file), whose id no capture shared before and none shares now (its `DUPLICATE_ID`
    /// warning is unchanged). Appending a line to a large log evaluates that line.
    fn revalidate_with(
        &mut self,
        files: &[PathBuf],
        gone: &HashSet<PathBuf>,
        scan: Option<ids::Scan>,
        reuse: Reuse,
        each: &mut dyn FnMut(Change),
    ) {
        let ws = self.ws.clone();
        let max = ws.config.max_capture_bytes;
        let cut = crate::engine::worker::batch_bytes_here(max);
        let changed: HashSet<Arc<str>> = files.iter().map(|f| Arc::from(ws.relative(f))).collect();
        // the ids the changed files will hold that other captures may share, read from
        // their text as `check` reads them, and those they held: with every other capture
        // of those ids, the groups the changed files' verdicts are marked with
        let scan = scan.unwrap_or_else(|| {
            let present: Vec<PathBuf> = files
                .iter()
                .filter(|f| listed(f) && !gone.contains(*f))
                .cloned()
                .collect();
            ids::Scan::read(&ws, &present)
        });
        let mut held: HashSet<u64> = HashSet::new();
        for rel in &changed {
            if let Some(st) = self.files.get(&**rel) {
                held.extend(st.briefs.iter().map(|b| b.id));
            }
        }
        // the other captures having one of the incoming records' candidate ids or one the
        // changed files held: only the incoming records that may share an id with them or
        // with each other are parsed for their exact id (`ids::Scan::exact`)
        let mut probe: HashSet<u64> = scan.fingerprints().collect();
        probe.extend(&held);
        let pool = self.members_outside(&probe, &changed);
        let outside: HashSet<u64> = pool.iter().map(|m| m.0).collect();
        let incoming = scan.exact(&ws, Some(&|fp| outside.contains(&fp)));
        let mut fps: HashSet<u64> = incoming.fingerprints().collect();
        fps.extend(held);
        let others: Vec<(u64, RecordRef)> =
            pool.into_iter().filter(|m| fps.contains(&m.0)).collect();
        let mut plan = incoming;
        for (fp, source) in &others {
            plan.push(*fp, source);
        }
        let plan = plan.shared();
        // fingerprints of verdict ids the pre-read did not give (an id no other capture can
        // have, or the file changed between the two reads): their groups are recomputed too
        let mut late: HashSet<u64> = HashSet::new();
        for f in files {
            let rel: Arc<str> = Arc::from(ws.relative(f));
            let old = self.files.remove(&*rel);
            let removed = |old: &FileState, i: usize, kinds: &Kinds| {
                let b = &old.briefs[i];
                let source = FileState::source(&rel, b);
                Change::Removed {
                    id: old.id(i),
                    source,
                    contract: kinds.list[b.kind as usize].contract.clone(),
                }
            };
            if !listed(f) || gone.contains(f) {
                if let Some(old) = old {
                    for i in 0..old.briefs.len() {
                        each(removed(&old, i, &self.kinds));
                    }
                }
                continue;
            }
            let old = old.unwrap_or_default();
            // which old capture each new record is: the same line with the same id; else the
            // same id on another line (a line above was deleted or inserted); else, in a
            // `.json` file (one record), the record that was there. A capture matched nowhere
            // is new (`previous` None), so a moved line never reports a flip it did not make.
            let mut matched = vec![false; old.briefs.len()];
            let mut by_id: Option<HashMap<u64, Vec<usize>>> = None;
            let mut new = FileState::default();
            let kinds = &mut self.kinds;
            let keep_ids = self.keep_ids;
            let plan = &plan;
            let fps = &fps;
            let late = &mut late;
            let shared = &self.shared;
            // a record kept unevaluated: the old capture at its place
            let kept = |r: &capture::RawRecord, loc: &Locator, print: u64| -> Option<usize> {
                if reuse != Reuse::Unchanged || print == 0 {
                    return None;
                }
                let i = old.find(loc.line.unwrap_or(0), 0)?;
                let b = &old.briefs[i];
                let text = r.text.as_ref().ok()?;
                (b.text == print
                    && plan.group(b.id).is_none()
                    && shared.group(b.id).is_none()
                    && !crate::core::mcp::may_be_jsonrpc(text.as_bytes()))
                .then_some(i)
            };
            let mut flush = |chunk: &mut Vec<Entry>| {
                // the records to evaluate, and the order of all: a kept capture, or the
                // line and print of a record evaluated
                let mut records = Vec::new();
                let mut order: Vec<Result<(Option<u32>, u64), usize>> = Vec::new();
                for e in chunk.drain(..) {
                    match e {
                        Entry::Evaluate(r, loc, print) => {
                            order.push(Ok((loc.line, print)));
                            records.push((r, loc));
                        }
                        Entry::Keep(i) => order.push(Err(i)),
                    }
                }
                let mut done = evaluate_located(&ws, records, |v| plan.mark(v))
                    .into_iter()
                    .peekable();
                for o in order {
                    let (line, print) = match o {
                        Err(i) => {
                            matched[i] = true;
                            let b = old.briefs[i];
                            if !fps.contains(&b.id) {
                                late.insert(b.id);
                            }
                            new.push(b, &old.id(i), keep_ids);
                            continue;
                        }
                        Ok(at) => at,
                    };
                    // the captures of this record (none, one, or one per part)
                    while let Some((loc, ev, hash)) = done.next_if(|d| d.0.line == line) {
                        let line = loc.line.unwrap_or(0);
                        let part = loc.part.unwrap_or(0);
                        let kind = kinds.intern(KindRef::of(&ev.verdict));
                        let ih = fingerprint(&ev.verdict.id);
                        if !fps.contains(&ih) {
                            late.insert(ih);
                        }
                        let at_line = old.find(line, part).filter(|&i| !matched[i]);
                        let found = match at_line {
                            Some(i) if old.briefs[i].id == ih || line == 0 => Some(i),
                            _ => by_id
                                .get_or_insert_with(|| {
                                    let mut m: HashMap<u64, Vec<usize>> = HashMap::new();
                                    for (i, b) in old.briefs.iter().enumerate() {
                                        m.entry(b.id).or_default().push(i);
                                    }
                                    m
                                })
                                .get(&ih)
                                .and_then(|is| is.iter().copied().find(|&i| !matched[i])),
                        };
                        let prev = found.map(|i| {
                            matched[i] = true;
                            old.briefs[i]
                        });
                        new.push(
                            Brief {
                                text: print,
                                line,
                                part,
                                kind,
                                hash,
                                id: ih,
                            },
                            &ev.verdict.id,
                            keep_ids,
                        );
                        if prev.is_some_and(|p| p.hash == hash) {
                            continue;
                        }
                        let previous = prev.map(|p| kinds.list[p.kind as usize].outcome.clone());
                        let flip = previous
                            .as_ref()
                            .and_then(|p| kinds.list[kind as usize].outcome.flip_from(p));
                        each(Change::Updated {
                            previous,
                            flip,
                            evaluation: Box::new(ev),
                            loc,
                        });
                    }
                }
            };
            let mut chunk: Vec<Entry> = Vec::with_capacity(CHUNK);
            // the bytes of the records to evaluate in `chunk`: at most `cut`, or one record
            let mut held = 0u64;
            for_each_located_as(f, &rel, max, ws.is_log_file(f), |r, loc| {
                let print = text_print(&r);
                if let Some(i) = kept(&r, &loc, print) {
                    chunk.push(Entry::Keep(i));
                } else {
                    let n = crate::engine::worker::record_bytes(&r);
                    if !chunk.is_empty() && held.saturating_add(n) > cut {
                        flush(&mut chunk);
                        held = 0;
                    }
                    held += n;
                    chunk.push(Entry::Evaluate(r, loc, print));
                }
                if chunk.len() >= CHUNK {
                    flush(&mut chunk);
                    held = 0;
                }
                true
            });
            flush(&mut chunk);
            // the lines that no longer hold a record disappear. Each is named after the
            // capture it held when that capture is gone too (the file was cut short, or
            // rewritten); else, that capture having moved up (a line above was deleted),
            // after a capture gone from a line that holds another one now (the deleted one)
            let gone = |i: usize| !matched[i];
            let mut gone_from_a_line_still_there = (0..old.briefs.len())
                .filter(|&i| gone(i) && new.find(old.briefs[i].line, old.briefs[i].part).is_some());
            for (i, b) in old.briefs.iter().enumerate() {
                if new.find(b.line, b.part).is_some() {
                    continue;
                }
                let named = if gone(i) {
                    i
                } else {
                    gone_from_a_line_still_there.next().unwrap_or(i)
                };
                let mut ch = removed(&old, i, &self.kinds);
                if let Change::Removed { id, contract, .. } = &mut ch {
                    *id = old.id(named);
                    *contract = self.kinds.list[old.briefs[named].kind as usize]
                        .contract
                        .clone();
                }
                each(ch);
            }
            self.files.insert(rel.to_string(), new);
        }
        self.regroup(fps, late, others, &plan, &changed, each);
    }

    /// Every capture outside the files `skip` whose id fingerprint is in `fps`.
    fn members_outside(
        &self,
        fps: &HashSet<u64>,
        skip: &HashSet<Arc<str>>,
    ) -> Vec<(u64, RecordRef)> {
        let mut out = Vec::new();
        if fps.is_empty() {
            return out;
        }
        for (name, st) in &self.files {
            if skip.contains(name.as_str()) {
                continue;
            }
            let mut file: Option<Arc<str>> = None;
            for b in st.briefs.iter().filter(|b| fps.contains(&b.id)) {
                let file = file.get_or_insert_with(|| Arc::from(name.as_str()));
                out.push((b.id, FileState::source(file, b)));
            }
        }
        out
    }

    /// After the files `changed` were re-validated (their verdicts marked with `plan`):
    /// the groups of the ids `fps` and `late` as the verdicts now are, and a
    /// [`Change::Updated`] for each capture whose warning that changes (the other captures
    /// of an id that became or stopped being shared; a changed file's capture only if the
    /// plan was wrong).
    fn regroup(
        &mut self,
        mut fps: HashSet<u64>,
        late: HashSet<u64>,
        mut others: Vec<(u64, RecordRef)>,
        plan: &Shared,
        changed: &HashSet<Arc<str>>,
        each: &mut dyn FnMut(Change),
    ) {
        let late: HashSet<u64> = late.difference(&fps).copied().collect();
        others.extend(self.members_outside(&late, changed));
        fps.extend(late);
        if fps.is_empty() {
            return;
        }
        let mut now = Members::default();
        for (fp, source) in &others {
            now.push(*fp, source);
        }
        for rel in changed {
            let Some(st) = self.files.get(&**rel) else {
                continue;
            };
            for b in &st.briefs {
                if fps.contains(&b.id) {
                    now.push(b.id, &FileState::source(rel, b));
                }
            }
        }
        let now = now.shared();
        // captures whose verdict was marked with a group that is not the one now
        let mut stale: BTreeSet<RecordRef> = BTreeSet::new();
        let in_changed = |r: &RecordRef| changed.contains(&**r.file());
        for &fp in &fps {
            let want = now.group(fp);
            for (was, changed_side) in [(self.shared.group(fp), false), (plan.group(fp), true)] {
                if was == want {
                    continue;
                }
                for r in was.into_iter().chain(want).flatten() {
                    if in_changed(r) == changed_side {
                        stale.insert(r.clone());
                    }
                }
            }
        }
        self.shared.replace(&fps, now);
        self.remark(stale, each);
    }

    /// Re-reads and re-validates the captures at `sources` (each file read once, only
    /// those records validated), marks them with the current shared ids, and reports each
    /// whose verdict changed. A record whose id is no longer the one the session knows
    /// (its file changed and is not re-validated yet) is left to that file's change.
    fn remark(&mut self, sources: BTreeSet<RecordRef>, each: &mut dyn FnMut(Change)) {
        let mut by_file: BTreeMap<Arc<str>, BTreeSet<u32>> = BTreeMap::new();
        for r in sources {
            by_file
                .entry(r.file().clone())
                .or_default()
                .insert(r.line().map_or(0, |l| l as u32));
        }
        let ws = self.ws.clone();
        for (file, lines) in by_file {
            let mut got: Vec<(capture::RawRecord, Locator)> = Vec::new();
            let path = ws.root.join(&*file);
            for_each_located_as(
                &path,
                &file,
                ws.config.max_capture_bytes,
                ws.is_log_file(&path),
                |r, loc| {
                    if lines.contains(&loc.line.unwrap_or(0)) {
                        got.push((r, loc));
                    }
                    got.len() < lines.len()
                },
            );
            let shared = &self.shared;
            // every part of a record of several captures (each marked by its full source)
            let done = evaluate_located(&ws, got, |v| shared.mark(v));
            let Some(st) = self.files.get_mut(&*file) else {
                continue;
            };
            for (loc, ev, hash) in done {
                let Some(i) = st.find(loc.line.unwrap_or(0), loc.part.unwrap_or(0)) else {
                    continue;
                };
                let b = &mut st.briefs[i];
                if b.id != fingerprint(&ev.verdict.id) || b.hash == hash {
                    continue;
                }
                let previous = self.kinds.list[b.kind as usize].outcome.clone();
                b.kind = self.kinds.intern(KindRef::of(&ev.verdict));
                b.hash = hash;
                let flip = self.kinds.list[b.kind as usize]
                    .outcome
                    .flip_from(&previous);
                each(Change::Updated {
                    previous: Some(previous),
                    flip,
                    evaluation: Box::new(ev),
                    loc,
                });
            }
        }
    }
}

/// Whether [`Session::revalidate_with`] may keep the verdict of a record it finds unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reuse {
    /// Every record is evaluated (the workspace was reloaded, or contracts changed).
    None,
    /// A record whose text and place are unchanged keeps its verdict (with the conditions
    /// [`Session::revalidate_with`] gives).
    Unchanged,
}

/// A record of a file being re-validated: to evaluate (with its [`text_print`]), or kept
/// as the old capture at this index of the file's briefs.
// a chunk holds at most `CHUNK` of them, and most are records to evaluate: boxing those
// would cost an allocation each to save a few kilobytes
#[allow(clippy::large_enum_variant)]
enum Entry {
    Evaluate(capture::RawRecord, Locator, u64),
    Keep(usize),
}

/// A print of a record's text: SipHash-1-3 under this process's random keys (so a text
/// cannot be made to collide with another on purpose), never 0; 0 for a record that could
/// not be read. What tells [`Session::apply`] a record is unchanged.
pub fn text_print(r: &capture::RawRecord) -> u64 {
    static KEYS: std::sync::LazyLock<std::hash::RandomState> =
        std::sync::LazyLock::new(std::hash::RandomState::new);
    match &r.text {
        Ok(t) => {
            use std::hash::BuildHasher;
            KEYS.hash_one(t.as_bytes()) | 1
        }
        Err(_) => 0,
    }
}

/// Whether the session reads `f` as a capture file: gone, or a folder now, it is not (its
/// captures go). Anything else the workspace lists (a FIFO, a broken symlink, a symlink loop
/// or to a folder) is read as `check` reads it: one INVALID_CAPTURE record, not left out.
/// A folder that cannot be listed stays listed, as `Workspace::capture_files` lists it: its
/// row names the OS error.
fn listed(f: &Path) -> bool {
    match std::fs::symlink_metadata(f) {
        Ok(m) => !m.is_dir() || std::fs::read_dir(f).is_err(),
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        ),
    }
}

/// The pre-pass of a session's first pass or reload: `all` read for the facts (the
/// workspace returned has them) and `checked` for their duplicate-id candidates.
fn prepass(ws: &Workspace, all: &[PathBuf], checked: &[PathBuf]) -> (Workspace, ids::Scan) {
    let pre =
        crate::engine::prescan::run(ws, all, checked, &crate::core::prescan::Progress::default());
    (ws.with_facts(pre.mcp, pre.requests), pre.ids)
}

/// Whether a folder between `root` (left out) and `t` cannot be listed (mode 000, a path
/// past the system's length limit): the walk `check` makes does not reach `t`, and lists
/// that folder instead, as a row of its own (`docs/commands.md#unreadable-files-and-folders`).
/// A folder that is gone is not one (`t` went with it). `listable` remembers each folder's
/// answer for the batch.
fn behind_unlistable(root: &Path, t: &Path, listable: &mut HashMap<PathBuf, bool>) -> bool {
    let Ok(rel) = t.strip_prefix(root) else {
        return false;
    };
    for at in folders_between(root, rel) {
        let ok = *listable
            .entry(at.clone())
            .or_insert_with(|| match std::fs::read_dir(&at) {
                Ok(_) => true,
                Err(e) => matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ),
            });
        if !ok {
            return true;
        }
    }
    false
}

/// Whether `p` is a folder, not a symbolic link to one (the walk never enters a link).
fn real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Whether `p` is below a symbolic link in the workspace (one of `roots`: its folder
/// resolved, and as given): a path the walk `check` makes never reaches, as it enters no
/// link, whatever the platform watcher reports from inside one.
fn below_a_link(roots: &[PathBuf], p: &Path) -> bool {
    let Ok(p) = std::path::absolute(p) else {
        return false;
    };
    let Some((root, rel)) = roots
        .iter()
        .find_map(|r| p.strip_prefix(r).ok().map(|rel| (r, rel)))
    else {
        return false;
    };
    folders_between(root, rel)
        .any(|at| std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()))
}

/// The folders from `root` down to the one holding `root.join(rel)`, `root` left out:
/// `root/a`, `root/a/b` for `rel` `a/b/file`.
fn folders_between<'a>(root: &'a Path, rel: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
    let mut at = root.to_path_buf();
    let folders = rel.components().count().saturating_sub(1);
    rel.components().take(folders).map(move |part| {
        at.push(part);
        at.clone()
    })
}

/// The canonical path of a symlink's target (as far as it exists: a dangling link's
/// missing tail is kept); `None` for a path that is not a symlink.
fn link_target(p: &Path) -> Option<PathBuf> {
    let m = std::fs::symlink_metadata(p).ok()?;
    if !m.file_type().is_symlink() {
        return None;
    }
    let to = std::fs::read_link(p).ok()?;
    Some(canonical(&p.parent().unwrap_or(Path::new("")).join(to)))
}

/// `p` with symlinks and `..` resolved as far as it exists (the missing tail kept as is).
fn canonical(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => p.to_path_buf(),
    }
}

/// [`absolute`], but a path that is itself a symlink keeps its own name (its folder
/// resolved): `captures/link.json`, not the file it points at.
fn absolute_link(p: &Path) -> PathBuf {
    let link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    match (link, p.parent(), p.file_name()) {
        (true, Some(d), Some(n)) => absolute(d).join(n),
        _ => absolute(p),
    }
}

fn absolute(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| {
        // a deleted file: canonicalize its folder
        match (
            p.parent().and_then(|d| d.canonicalize().ok()),
            p.file_name(),
        ) {
            (Some(d), Some(n)) => d.join(n),
            _ => p.to_path_buf(),
        }
    })
}

/// Every capture of each record, evaluated on the pool, in the records' order: none for a
/// record that is not a capture (an MCP message other than a tools/call), one per part of a
/// record of several captures (`docs/record-shapes.md`), each with its record's locator
/// narrowed to the part its verdict's source names, and its verdict's hash. `mark` adds
/// what the run knows beyond the record (the shared-id warning) before the hash is taken.
fn evaluate_located(
    ws: &Workspace,
    records: Vec<(capture::RawRecord, Locator)>,
    mark: impl Fn(&mut Verdict) + Sync,
) -> Vec<(Locator, Evaluation, u64)> {
    let done: Vec<Vec<(Evaluation, u64)>> = records
        .par_iter()
        .map(|(r, _)| {
            ws.evaluate_all(r)
                .into_iter()
                .map(|mut ev| {
                    mark(&mut ev.verdict);
                    let h = verdict_hash(&ev.verdict);
                    (ev, h)
                })
                .collect()
        })
        .collect();
    records
        .into_iter()
        .zip(done)
        .flat_map(|((_, loc), evs)| {
            evs.into_iter().map(move |(ev, hash)| {
                let loc = Locator {
                    part: ev.verdict.source.part(),
                    ..loc.clone()
                };
                (loc, ev, hash)
            })
        })
        .collect()
}
