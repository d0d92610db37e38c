//! The Chain tab's model (`docs/chains.md#in-the-terminal-workbench`): for a capture that is
//! an attempt of a self-correction chain, the chain's row (outcome, flags, tokens), its
//! attempts in order with stage and reason (the shown one marked), each `regenerate`
//! step's feedback effect per pointer, and the diff between each pair of consecutive
//! proposals. Built by the model when the chains, the selection or the proposals change,
//! never while drawing; every string from a capture has been through [`escape_control`].

use crate::core::chain::Attempt;
use crate::core::chain::outcome::{ChainRow, Outcome};
use crate::core::text::escape_control;
use crate::core::verdict::Stage;
use crate::tui::detail::Role;
use crate::tui::diff::{DiffKind, aligned_rows};
use serde_json::Value;

/// The most attempts whose proposals are read for the diffs (the first ones of a chain);
/// the attempts list itself shows up to [`MAX_LISTED`].
pub const MAX_DIFFED: usize = 20;

/// The most attempts the tab lists (`and N more` after them).
pub const MAX_LISTED: usize = 200;

/// The Chain tab's lines (empty until built).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChainTab {
    /// The lines, with their roles.
    pub lines: Vec<(String, Role)>,
}

fn esc(s: &str) -> String {
    escape_control(s).into_owned()
}

/// The glyph of a chain's outcome: `✓` first-pass, `↻` recovered, `✗` unrecovered.
pub fn outcome_glyph(o: Outcome) -> &'static str {
    match o {
        Outcome::FirstPass => "✓",
        Outcome::Recovered => "↻",
        Outcome::Unrecovered => "✗",
    }
}

/// `stage REASON /pointer` of an attempt (`ready` when it passed).
pub fn attempt_label(a: &Attempt) -> String {
    if a.stage == Stage::Ready {
        return "ready".into();
    }
    let mut s = a.stage.as_str().to_string();
    if let Some(r) = &a.reason {
        s.push(' ');
        s.push_str(&esc(r.as_str()));
    }
    if let Some(p) = &a.pointer {
        s.push(' ');
        s.push_str(&esc(crate::tui::filter::pointer_label(p)));
    }
    s
}

impl ChainTab {
    /// The tab of a capture that is in no chain.
    pub fn none(loaded_chains: bool) -> ChainTab {
        let text = if loaded_chains {
            "this capture is in no chain: no `chain` key, no `[chains]` link, and no other batch line has its id (docs/chains.md#linking)"
        } else {
            "the chains are computed after the run"
        };
        ChainTab {
            lines: vec![(text.into(), Role::Dim)],
        }
    }

    /// The tab of the attempt at position `at` of chain `row` (its `attempts` in chain
    /// order), with the proposals of its first attempts when they were read (`None`: still
    /// being read).
    pub fn new(
        row: &ChainRow,
        attempts: &[Attempt],
        at: usize,
        proposals: Option<&[Option<Value>]>,
    ) -> ChainTab {
        let mut lines = vec![(format!("chain {}", esc(&row.chain)), Role::Heading)];
        let mut head = format!("{} {}", outcome_glyph(row.outcome), row.outcome.as_str());
        if let Some(k) = row.recovered_at {
            head.push_str(&format!(" at attempt {k}"));
        }
        let n = row.attempts;
        head.push_str(&format!(
            "  ·  {n} attempt{}  ·  linked by {}",
            if n == 1 { "" } else { "s" },
            row.linked_by.as_str()
        ));
        if let Some(t) = row.tokens {
            head.push_str(&format!("  ·  tokens {t}"));
        }
        lines.push((head, Role::Text));
        let mut facts = Vec::new();
        if !row.flags.is_empty() {
            facts.push(format!("flags: {}", row.flags.join(", ")));
        }
        facts.extend(row.over_budget.iter().map(|b| format!("over budget: {b}")));
        if !facts.is_empty() {
            lines.push((facts.join("  ·  "), Role::Highlight));
        }
        lines.push((String::new(), Role::Text));
        lines.push(("attempts".into(), Role::Heading));
        for (k, a) in attempts.iter().enumerate().take(MAX_LISTED) {
            let mark = if k == at { "›" } else { " " };
            let wasted = row
                .wasted
                .iter()
                .find(|w| w.attempt == k + 1)
                .map(|w| format!("  (wasted: {})", waste_text(w.why)))
                .unwrap_or_default();
            lines.push((
                format!(
                    "{mark} {:>3} {} {}  {}{wasted}",
                    k + 1,
                    a.decision.glyph(),
                    attempt_label(a),
                    esc(&a.source.to_string())
                ),
                if k == at { Role::Heading } else { Role::Text },
            ));
        }
        if attempts.len() > MAX_LISTED {
            lines.push((
                format!("  and {} more", attempts.len() - MAX_LISTED),
                Role::Dim,
            ));
        }
        lines.push((String::new(), Role::Text));
        lines.push(("feedback effects".into(), Role::Heading));
        if row.effects.is_empty() {
            lines.push((
                "  no regenerate step with a next attempt reported a pointer".into(),
                Role::Dim,
            ));
        }
        for e in &row.effects {
            lines.push((
                format!(
                    "  after attempt {}  {}  {}",
                    e.attempt,
                    esc(crate::tui::filter::pointer_label(&e.pointer)),
                    e.effect.as_str()
                ),
                Role::Text,
            ));
        }
        let shown: usize = row.effect_counts.values().sum();
        if shown > row.effects.len() {
            lines.push((
                format!("  and {} more", shown - row.effects.len()),
                Role::Dim,
            ));
        }
        lines.push((String::new(), Role::Text));
        match proposals {
            None => lines.push(("reading the attempts' proposals…".into(), Role::Dim)),
            Some(ps) => diffs(&mut lines, ps),
        }
        if attempts.len() > MAX_DIFFED {
            lines.push((
                format!("the diffs of the first {MAX_DIFFED} attempts are shown"),
                Role::Dim,
            ));
        }
        ChainTab { lines }
    }
}

fn waste_text(w: crate::core::chain::outcome::Waste) -> &'static str {
    use crate::core::chain::outcome::Waste;
    match w {
        Waste::AfterReject => "after reject",
        Waste::AfterRecheck => "after recheck",
        Waste::SameProposal => "the same proposal as before",
    }
}

/// The diff of each pair of consecutive proposals, one column: `  ` same, `- ` only in the
/// earlier, `+ ` only in the later (a changed line is both), aligned by JSON Pointer.
fn diffs(lines: &mut Vec<(String, Role)>, ps: &[Option<Value>]) {
    for k in 1..ps.len() {
        if k > 1 {
            lines.push((String::new(), Role::Text));
        }
        lines.push((format!("proposal {} → {}", k, k + 1), Role::Heading));
        let (Some(a), Some(b)) = (&ps[k - 1], &ps[k]) else {
            let which = if ps[k - 1].is_none() { k } else { k + 1 };
            lines.push((
                format!("  attempt {which} has no proposal (its output did not parse, or the record is gone)"),
                Role::Dim,
            ));
            continue;
        };
        if a == b {
            lines.push(("  the same proposal".into(), Role::Dim));
            continue;
        }
        for r in aligned_rows(a, b, &[]) {
            match r.kind {
                DiffKind::Same => {
                    lines.push((format!("  {}", r.left.unwrap_or_default()), Role::Dim))
                }
                DiffKind::Changed => {
                    lines.push((format!("- {}", r.left.unwrap_or_default()), Role::Removed));
                    lines.push((format!("+ {}", r.right.unwrap_or_default()), Role::Added));
                }
                DiffKind::LeftOnly => {
                    lines.push((format!("- {}", r.left.unwrap_or_default()), Role::Removed))
                }
                DiffKind::RightOnly => {
                    lines.push((format!("+ {}", r.right.unwrap_or_default()), Role::Added))
                }
            }
        }
    }
}
