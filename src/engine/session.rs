//! A validation session: the current verdict of every capture of a workspace, updated
//! incrementally as files change.
//!
//! * a changed capture file is re-read and re-validated alone;
//! * a changed schema or rules file (or `verdict.toml`) reloads the contracts and
//!   re-validates the captures of the contracts that changed (all captures, for the config);
//! * a new folder is rescanned (file watchers miss files created right after their folder);
//! * a deleted capture file removes its captures.
//!
//! Every update returns the [`Change`]s: verdicts that are new, changed (with the verdict
//! they flipped from) or removed. Verdicts are keyed by their `source` (unique, unlike ids).

use crate::core::capture;
use crate::core::pipeline::Evaluation;
use crate::core::verdict::Verdict;
use crate::core::workspace::{Workspace, WorkspaceError};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One verdict that appeared, changed or disappeared.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A capture seen for the first time, or whose verdict changed. `previous` is the
    /// verdict it replaced (`None` when new).
    Updated {
        /// The new verdict.
        verdict: Box<Verdict>,
        /// What it was before.
        previous: Option<Box<Verdict>>,
    },
    /// A capture that no longer exists (its file was deleted, or its JSONL line removed).
    Removed {
        /// Its last verdict.
        verdict: Box<Verdict>,
    },
}

/// The current verdicts of a workspace.
pub struct Session {
    /// The workspace as last loaded (shared with front ends, replaced on reload).
    pub ws: Arc<Workspace>,
    /// Current evaluations by capture file (workspace-relative), each in file order.
    files: BTreeMap<String, Vec<Evaluation>>,
    /// Contracts whose schema or rules text changed in the last [`Session::apply`].
    changed_contracts: Vec<String>,
}

/// The capture file of a verdict's `source` (`captures/log.jsonl:3` -> `captures/log.jsonl`).
pub fn file_of(source: &str) -> &str {
    source
        .rsplit_once(':')
        .filter(|(_, l)| !l.is_empty() && l.chars().all(|c| c.is_ascii_digit()))
        .map_or(source, |(f, _)| f)
}

/// The changed path (workspace-relative, among `causes`) that explains a new verdict: its
/// own capture file, else the schema or rules file of its contract, else the first cause.
pub fn cause_of<'a>(verdict: &Verdict, causes: &'a [String]) -> Option<&'a String> {
    let file = file_of(&verdict.source);
    causes
        .iter()
        .find(|c| *c == file)
        .or_else(|| {
            let contract = verdict.contract.as_deref()?;
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
        let ws = Arc::new(Workspace::open(root)?);
        let mut s = Session {
            ws,
            files: BTreeMap::new(),
            changed_contracts: Vec::new(),
        };
        let files = s.ws.capture_files();
        let changes = s.revalidate_files(&files);
        Ok((s, changes))
    }

    /// A session over evaluations computed elsewhere (the TUI's streamed first run), keyed
    /// by capture file (workspace-relative, as [`Workspace::relative`] writes it).
    pub fn from_evaluations(
        ws: Arc<Workspace>,
        files: BTreeMap<String, Vec<Evaluation>>,
    ) -> Session {
        Session {
            ws,
            files,
            changed_contracts: Vec::new(),
        }
    }

    /// The current evaluation of the capture whose verdict has this `source`.
    pub fn evaluation(&self, source: &str) -> Option<&Evaluation> {
        self.files
            .get(file_of(source))?
            .iter()
            .find(|e| e.verdict.source == source)
    }

    /// The contracts whose schema or rules text changed in the last [`Session::apply`]
    /// (every contract after a reload of `verdict.toml`).
    pub fn changed_contracts(&self) -> &[String] {
        &self.changed_contracts
    }

    /// Every current evaluation, file by file, in file order.
    pub fn evaluations(&self) -> impl Iterator<Item = &Evaluation> {
        self.files.values().flatten()
    }

    /// Every current verdict.
    pub fn verdicts(&self) -> impl Iterator<Item = &Verdict> {
        self.evaluations().map(|e| &e.verdict)
    }

    /// Re-validates everything (contracts reloaded).
    ///
    /// # Errors
    /// The workspace can no longer be opened (e.g. `verdict.toml` became invalid); the
    /// session keeps its previous state.
    pub fn reload(&mut self) -> Result<Vec<Change>, WorkspaceError> {
        self.ws = Arc::new(Workspace::open(&self.ws.root)?);
        self.changed_contracts = self.ws.contracts.by_name.keys().cloned().collect();
        let files = self.ws.capture_files();
        Ok(self.revalidate_files(&files))
    }

    /// Applies a batch of changed paths (absolute, or relative to the current folder).
    ///
    /// # Errors
    /// As [`Session::reload`], when the batch touches `verdict.toml` or the contracts.
    pub fn apply(&mut self, paths: &[PathBuf]) -> Result<Vec<Change>, WorkspaceError> {
        self.changed_contracts.clear();
        let root = self
            .ws
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.ws.root.clone());
        let schemas = root.join(&self.ws.config.schemas);
        let mut contracts_changed = false;
        let mut targets: BTreeSet<PathBuf> = BTreeSet::new();
        for p in paths {
            let p = absolute(p);
            if p == root.join("verdict.toml") {
                return self.reload();
            }
            if p.starts_with(&schemas) {
                contracts_changed = true;
                continue;
            }
            if p.is_dir() {
                // a new folder: the watcher may have missed files created right after it
                let mut found = Vec::new();
                crate::core::workspace::collect_files(&p, &capture::is_capture_file, &mut found);
                targets.extend(found);
            } else if capture::is_capture_file(&p) {
                targets.insert(p);
            }
        }
        let mut changes = Vec::new();
        if contracts_changed {
            changes.extend(self.reload_contracts()?);
        }
        // a capture file: below a configured capture folder (or that file) and named like
        // one; a deleted path is passed on so its captures disappear. No workspace scan: a
        // save in a workspace of 100,000 files costs what that one file costs.
        let capture_roots: Vec<PathBuf> = self
            .ws
            .config
            .captures
            .iter()
            .map(|c| absolute(&self.ws.root.join(c)))
            .collect();
        let is_capture = |t: &Path| {
            capture_roots
                .iter()
                .any(|r| t == r || (t.starts_with(r) && capture::is_capture_file(t)))
        };
        let targets: Vec<PathBuf> = targets
            .into_iter()
            .filter(|t| !t.exists() || (!t.is_dir() && is_capture(t)))
            .map(|t| self.ws.root.join(t.strip_prefix(&root).unwrap_or(&t)))
            .collect();
        changes.extend(self.revalidate_files(&targets));
        Ok(changes)
    }

    /// Reloads the contracts and re-validates the captures whose contract's schema or rules
    /// text changed (or that have no usable contract).
    fn reload_contracts(&mut self) -> Result<Vec<Change>, WorkspaceError> {
        let old = self.contract_fingerprints();
        self.ws = Arc::new(Workspace::open(&self.ws.root)?);
        let new = self.contract_fingerprints();
        let changed: BTreeSet<&String> = old
            .keys()
            .chain(new.keys())
            .filter(|k| old.get(*k) != new.get(*k))
            .collect();
        self.changed_contracts = changed.iter().map(|c| (*c).clone()).collect();
        let files: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|(_, evs)| {
                evs.iter().any(|e| match &e.verdict.contract {
                    Some(c) => changed.contains(c) || self.ws.contracts.get(c).is_none(),
                    None => true,
                })
            })
            .map(|(f, _)| self.ws.root.join(f))
            .collect();
        Ok(self.revalidate_files(&files))
    }

    /// Each contract's schema and rules text as loaded (never re-read from disk: the old
    /// fingerprint must be what the captures were validated with).
    fn contract_fingerprints(&self) -> BTreeMap<String, (Arc<str>, Arc<str>)> {
        self.ws
            .contracts
            .by_name
            .iter()
            .map(|(name, c)| (name.clone(), (c.text.clone(), c.rules_text.clone())))
            .collect()
    }

    /// Re-reads and re-validates the given capture files (a missing one is removed).
    fn revalidate_files(&mut self, files: &[PathBuf]) -> Vec<Change> {
        let ws = &self.ws;
        let fresh: Vec<(String, Option<Vec<Evaluation>>)> = files
            .par_iter()
            .map(|f| {
                let rel = ws.relative(f);
                if f.is_file() {
                    let evs: Vec<Evaluation> =
                        ws.read_file(f).par_iter().map(|r| ws.evaluate(r)).collect();
                    (rel, Some(evs))
                } else {
                    (rel, None)
                }
            })
            .collect();
        let mut changes = Vec::new();
        for (rel, evs) in fresh {
            let old = self.files.remove(&rel).unwrap_or_default();
            let exists = evs.is_some();
            let new = evs.unwrap_or_default();
            diff(&old, &new, &mut changes);
            if exists {
                self.files.insert(rel, new);
            }
        }
        changes
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

/// The changes between the old and new evaluations of one file, keyed by source.
fn diff(old: &[Evaluation], new: &[Evaluation], out: &mut Vec<Change>) {
    let before: BTreeMap<&str, &Verdict> = old
        .iter()
        .map(|e| (e.verdict.source.as_str(), &e.verdict))
        .collect();
    let after: BTreeSet<&str> = new.iter().map(|e| e.verdict.source.as_str()).collect();
    for e in new {
        match before.get(e.verdict.source.as_str()) {
            Some(prev) if **prev == e.verdict => {}
            prev => out.push(Change::Updated {
                verdict: Box::new(e.verdict.clone()),
                previous: prev.map(|p| Box::new((*p).clone())),
            }),
        }
    }
    for e in old {
        if !after.contains(e.verdict.source.as_str()) {
            out.push(Change::Removed {
                verdict: Box::new(e.verdict.clone()),
            });
        }
    }
}
