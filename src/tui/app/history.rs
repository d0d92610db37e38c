//! The session's verdict flips: every flip seen, the captures that flipped, and what the
//! last schema or rules change did (`docs/commands.md#review`: the header line, the review overlay, the
//! History tab).

use crate::core::review::{Flip, FlipKind};
use std::collections::HashSet;

/// One verdict flip seen this session.
#[derive(Debug, Clone, PartialEq)]
pub struct FlipEntry {
    /// Local time of the change, `HH:MM:SS`.
    pub at: String,
    /// What changed (old and new outcome, the error behind it).
    pub flip: Flip,
    /// The changed file (workspace-relative) that caused it.
    pub cause: Option<String>,
}

/// What the last schema or rules change did (`docs/commands.md#review`: the header line and the review pane).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContractChange {
    /// The contracts whose schema or rules changed.
    pub contracts: Vec<String>,
    /// Local time of the change.
    pub at: String,
    /// The changed files, workspace-relative.
    pub causes: Vec<String>,
    /// The flips it caused.
    pub flips: Vec<FlipEntry>,
}

impl ContractChange {
    /// How many flips of this kind.
    pub fn count(&self, kind: FlipKind) -> usize {
        self.flips.iter().filter(|f| f.flip.kind == kind).count()
    }
}

/// The flips of this session.
#[derive(Debug, Default)]
pub struct History {
    /// Every verdict flip of this session, oldest first.
    pub flips: Vec<FlipEntry>,
    /// Sources of the captures whose verdict flipped this session (their rows are also
    /// flagged [`crate::tui::store::FLIPPED`]).
    pub flipped: HashSet<String>,
    /// What the last schema or rules change did.
    pub contract_change: Option<ContractChange>,
}

impl History {
    /// This capture's flips (by source), newest first.
    pub fn of<'a>(&'a self, source: &'a str) -> impl Iterator<Item = &'a FlipEntry> + 'a {
        self.flips
            .iter()
            .rev()
            .filter(move |e| e.flip.source == source)
    }
}
