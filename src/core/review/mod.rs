//! Schema change review (`verdict review`, `docs/commands.md#review`): re-validate the captures
//! under the old and the new contracts and report every capture whose verdict changes,
//! grouped (newly failing, newly passing, changed stage or reason), each with the error
//! that causes the flip, plus a structural summary of each schema change ([`diff`]).
//!
//! "Failing" is what `check` counts as failing ([`Verdict::passes`]): a capture with
//! `expect` fails when its expectation is not met, one without when it is not ready.

pub mod diff;

use crate::core::contract::Contracts;
use crate::core::lint::declared_dialect;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Finding, Verdict};
use crate::core::workspace::Workspace;
use serde::Serialize;
use std::collections::BTreeSet;

pub use diff::SchemaChange;

pub use crate::core::outcome::{FlipKind, Outcome};

/// One capture whose verdict changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flip {
    /// The capture id.
    pub id: String,
    /// Where it came from (`captures/a.json`, `captures/log.jsonl:9`; serialized as that text).
    pub source: RecordRef,
    /// Its contract (new side, else old).
    pub contract: Option<String>,
    /// How it changed.
    pub kind: FlipKind,
    /// Under the old contracts.
    pub old: Outcome,
    /// Under the new contracts.
    pub new: Outcome,
    /// The error that causes the flip: the new verdict's first error, or for a newly
    /// passing capture the old error that no longer fires.
    pub cause: Option<Finding>,
    /// For a `changed` flip (the same outcome, another first error): the old verdict's
    /// first error, which `cause` replaced (`docs/commands.md#review`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub was: Option<Finding>,
}

/// The whole review.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Review {
    /// What the old side is (`HEAD`, or the old schemas folder).
    pub base: String,
    /// Captures re-validated.
    pub captures: usize,
    /// Structural changes, by contract.
    pub changes: Vec<SchemaChange>,
    /// Captures whose verdict changed, grouped by kind, then by source.
    pub flips: Vec<Flip>,
}

impl Review {
    /// How many flips of `kind`.
    pub fn count(&self, kind: FlipKind) -> usize {
        self.flips.iter().filter(|f| f.kind == kind).count()
    }
}

/// The structural changes between two sets of contracts (by contract name).
pub fn summarize(old: &Contracts, new: &Contracts, ws: &Workspace) -> Vec<SchemaChange> {
    let names: BTreeSet<&String> = old.by_name.keys().chain(new.by_name.keys()).collect();
    let mut out = Vec::new();
    for name in names {
        match (old.by_name.get(name), new.by_name.get(name)) {
            (Some(o), Some(n)) => {
                let d = declared_dialect(&n.schema, ws.config.dialect);
                out.extend(diff::diff(name, &o.schema, &n.schema, d));
            }
            (None, Some(n)) => out.push(SchemaChange {
                contract: name.clone(),
                kind: "contract_added".into(),
                pointer: String::new(),
                message: format!("new contract ({})", n.file.display()),
            }),
            (Some(o), None) => out.push(SchemaChange {
                contract: name.clone(),
                kind: "contract_removed".into(),
                pointer: String::new(),
                message: format!("contract removed ({})", o.file.display()),
            }),
            (None, None) => {}
        }
    }
    out
}

/// How a capture's verdict changed between `old` and `new` (the same record validated
/// twice): its outcome's flip ([`Outcome::flip_from`]), or `changed` when the outcome is the
/// same but the first error is another (pointer or message); `None` when neither changed.
pub fn flip(old: &Verdict, new: &Verdict) -> Option<Flip> {
    let (o, n) = (Outcome::of(old), Outcome::of(new));
    let first = |v: &Verdict| {
        v.errors
            .first()
            .map(|f| (f.pointer.clone(), f.message.clone()))
    };
    // the same outcome with another first error (another pointer or message within the
    // same reason) is a change a schema reviewer wants to see
    let kind = n
        .flip_from(&o)
        .or_else(|| (first(old) != first(new)).then_some(FlipKind::Changed))?;
    let cause = if n.reason.is_some() {
        new.errors.first().cloned()
    } else {
        old.errors.first().cloned()
    };
    Some(Flip {
        id: new.id.clone(),
        source: new.source.clone(),
        contract: new.contract.clone().or_else(|| old.contract.clone()),
        kind,
        old: o,
        new: n,
        cause,
        was: if kind == FlipKind::Changed {
            old.errors.first().cloned()
        } else {
            None
        },
    })
}

/// Re-validates every capture of `ws` under `old` contracts and under its own, and
/// compares. `base` names the old side in the report.
pub fn review(ws: &Workspace, old: Contracts, base: &str) -> Review {
    let changes = summarize(&old, &ws.contracts, ws);
    let old_ws = Workspace {
        root: ws.root.clone(),
        config: ws.config.clone(),
        contracts: old,
        mcp: ws.mcp.clone(),
        joins: ws.joins.clone(),
        requests: ws.requests.clone(),
        request_contracts: Default::default(),
        own_folder: ws.own_folder,
    };
    let mut flips = Vec::new();
    let mut captures = 0;
    for file in ws.capture_files() {
        for raw in ws.read_file(&file) {
            // not a capture (an MCP message other than a tools/call): neither side has
            // one; a record of several captures has one per part on both sides
            for (a, b) in old_ws.check_all(&raw).iter().zip(ws.check_all(&raw).iter()) {
                captures += 1;
                if let Some(f) = flip(a, b) {
                    flips.push(f);
                }
            }
        }
    }
    // by kind, then file, then JSONL line as a number (`log.jsonl:9` before `log.jsonl:13`)
    flips.sort_by(|a, b| (a.kind, &a.source).cmp(&(b.kind, &b.source)));
    Review {
        base: base.to_string(),
        captures,
        changes,
        flips,
    }
}
