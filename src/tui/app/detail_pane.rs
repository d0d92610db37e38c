//! The detail pane's model: what it shows for the selected capture (one [`DetailState`]),
//! the tab, its scroll and the current error.

use super::layout::{self, raw_rows};
use crate::core::pipeline::Evaluation;
use crate::core::workspace::Workspace;
use crate::engine::Job;
use crate::engine::worker::Removed;
use crate::tui::detail::{Detail, raw_view};
use crate::tui::keymap::Tab;
use crate::tui::store::{Row, Store};
use ratatui::layout::Rect;

/// What the detail pane shows.
#[derive(Debug, Default)]
pub enum DetailState {
    /// No capture is selected.
    #[default]
    Empty,
    /// The selected capture's evaluation was asked for (a [`Job::Load`]) and has not
    /// arrived.
    Loading {
        /// The capture waited for.
        source: String,
        /// Its previous detail, shown meanwhile (the same capture, re-read after a change).
        kept: Option<Detail>,
        /// The evaluation shown before, of another capture: reused without a load when
        /// the selection comes back to it first.
        previous: Option<Box<Evaluation>>,
    },
    /// The selected capture's evaluation (re-read from disk) and the detail built from it.
    Shown {
        /// The full evaluation.
        evaluation: Box<Evaluation>,
        /// What the pane draws.
        detail: Detail,
    },
    /// The selected row is pending (`docs/commands.md#while-it-loads`): its record has no
    /// verdict yet, and nothing is loaded until it has one.
    Pending {
        /// The record's source.
        source: String,
    },
    /// The selected capture's record was no longer in its file when it was read (a
    /// re-validation follows). Also kept when the list empties meanwhile.
    Missing {
        /// The capture's source.
        source: String,
    },
    /// The selected capture was deleted from disk (until the selection moves); the pane
    /// says so over `under`, the state of the row that took its place.
    Gone {
        /// The deleted capture.
        removed: Removed,
        /// What the pane shows once the selection moves.
        under: Box<DetailState>,
    },
}

impl DetailState {
    /// The state under a [`DetailState::Gone`] note (itself otherwise).
    fn base(&self) -> &DetailState {
        match self {
            DetailState::Gone { under, .. } => under.base(),
            s => s,
        }
    }

    fn base_mut(&mut self) -> &mut DetailState {
        match self {
            DetailState::Gone { under, .. } => under.base_mut(),
            s => s,
        }
    }
}

/// The pieces a refresh works on: the stored state taken apart (every combination the
/// state can hold, and the one-step changes a message makes to them before the refresh
/// settles them into a state again).
struct Parts {
    detail: Option<Detail>,
    evaluation: Option<Box<Evaluation>>,
    loading: Option<String>,
    missing: Option<String>,
}

impl From<DetailState> for Parts {
    fn from(s: DetailState) -> Parts {
        let mut p = Parts {
            detail: None,
            evaluation: None,
            loading: None,
            missing: None,
        };
        match s {
            DetailState::Empty | DetailState::Pending { .. } => {}
            DetailState::Loading {
                source,
                kept,
                previous,
            } => {
                p.loading = Some(source);
                p.detail = kept;
                p.evaluation = previous;
            }
            DetailState::Shown { evaluation, detail } => {
                p.evaluation = Some(evaluation);
                p.detail = Some(detail);
            }
            DetailState::Missing { source } => p.missing = Some(source),
            DetailState::Gone { under, .. } => return Parts::from(*under),
        }
        p
    }
}

/// What happened to the selected capture's evaluation before a [`DetailPane::refresh`].
#[derive(Debug)]
pub enum Change {
    /// Nothing: the selection or the rows may have moved.
    None,
    /// The capture was re-validated: this is its fresh evaluation (`None`: re-read it).
    Replaced(Option<Box<Evaluation>>),
    /// The engine answered a load of this source (`None`: the record was gone).
    Loaded(String, Option<Box<Evaluation>>),
}

/// What a refresh did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    /// The answer was not for the capture waited for: nothing changed.
    Ignored,
    /// The pane waits (loading, missing or empty).
    Waiting,
    /// The detail was built; `changed` when it is of another capture than the one before.
    Built {
        /// Another capture than before.
        changed: bool,
    },
}

/// The detail pane.
#[derive(Debug)]
pub struct DetailPane {
    /// What it shows.
    pub state: DetailState,
    /// The tab shown.
    pub tab: Tab,
    /// Scroll of the tab, in lines.
    pub scroll: usize,
    /// The most `scroll` can usefully be, as the tab was last drawn (`usize::MAX` before
    /// it is): `G` goes there and `k` moves back from there, not from past the end.
    pub drawn_most: std::cell::Cell<usize>,
    /// The current error of the selected capture (`n`/`N`).
    pub error: usize,
}

impl Default for DetailPane {
    fn default() -> DetailPane {
        DetailPane {
            state: DetailState::Empty,
            tab: Tab::Diff,
            scroll: 0,
            drawn_most: std::cell::Cell::new(usize::MAX),
            error: 0,
        }
    }
}

impl DetailPane {
    /// The detail drawn for the selected capture (also while it re-loads, and under a
    /// [`DetailState::Gone`] note).
    pub fn detail(&self) -> Option<&Detail> {
        match self.state.base() {
            DetailState::Shown { detail, .. } => Some(detail),
            DetailState::Loading { kept, .. } => kept.as_ref(),
            _ => None,
        }
    }

    /// The selected capture's loaded evaluation.
    pub fn evaluation(&self) -> Option<&Evaluation> {
        match self.state.base() {
            DetailState::Shown { evaluation, .. } => Some(evaluation),
            _ => None,
        }
    }

    /// The source whose evaluation was asked for and has not arrived.
    pub fn loading(&self) -> Option<&str> {
        match self.state.base() {
            DetailState::Loading { source, .. } => Some(source),
            _ => None,
        }
    }

    /// The source of the selected row when it is pending.
    pub fn pending(&self) -> Option<&str> {
        match self.state.base() {
            DetailState::Pending { source } => Some(source),
            _ => None,
        }
    }

    /// The source of the selected capture when its record was no longer on disk.
    pub fn missing(&self) -> Option<&str> {
        match self.state.base() {
            DetailState::Missing { source } => Some(source),
            _ => None,
        }
    }

    /// The selected capture, deleted from disk.
    pub fn gone(&self) -> Option<&Removed> {
        match &self.state {
            DetailState::Gone { removed, .. } => Some(removed),
            _ => None,
        }
    }

    /// Notes that the selected capture was deleted (over what the pane shows).
    pub fn set_gone(&mut self, removed: Removed) {
        let under = std::mem::take(&mut self.state);
        let under = match under {
            DetailState::Gone { under, .. } => under,
            s => Box::new(s),
        };
        self.state = DetailState::Gone { removed, under };
    }

    /// Drops the deleted-capture note; whether there was one.
    pub fn clear_gone(&mut self) -> bool {
        match std::mem::take(&mut self.state) {
            DetailState::Gone { under, .. } => {
                self.state = *under;
                true
            }
            s => {
                self.state = s;
                false
            }
        }
    }

    /// Settles the pane on `row` (the selected row of `store`, if any) after `change`:
    /// builds the detail when its evaluation is at hand, else returns the load to ask the
    /// engine for (none when it is already asked for, or when the record was found gone:
    /// the re-validation brings it). The error index is reset on another capture and kept
    /// in range; scrolling is the caller's (it needs the new layout).
    pub fn refresh(
        &mut self,
        store: &Store,
        row: Option<&Row>,
        workspace: Option<&Workspace>,
        change: Change,
    ) -> (Refreshed, Option<Job>) {
        if let Change::Loaded(source, _) = &change
            && self.loading() != Some(source.as_str())
        {
            return (Refreshed::Ignored, None);
        }
        let base = self.state.base_mut();
        let mut p = Parts::from(std::mem::take(base));
        match change {
            Change::None => {}
            Change::Replaced(fresh) => {
                p.evaluation = fresh;
                p.missing = None;
            }
            Change::Loaded(source, evaluation) => {
                p.loading = None;
                if evaluation.is_none() {
                    p.detail = None;
                    p.missing = Some(source);
                }
                p.evaluation = evaluation;
            }
        }
        let Some(row) = row else {
            // nothing selected (a missing record stays noted)
            *base = match p.missing {
                Some(source) => DetailState::Missing { source },
                None => DetailState::Empty,
            };
            return (Refreshed::Waiting, None);
        };
        let source = store.source(row);
        if Store::is_pending(row) {
            // its verdict comes with the run: nothing to load before it
            *base = DetailState::Pending { source };
            return (Refreshed::Waiting, None);
        }
        let ready = p
            .evaluation
            .as_ref()
            .is_some_and(|e| e.verdict.source == source);
        if !ready {
            if p.missing.as_deref() == Some(source.as_str()) {
                // the record was gone when loaded: wait for the re-validation
                *base = DetailState::Missing { source };
                return (Refreshed::Waiting, None);
            }
            let job = (p.loading.as_deref() != Some(source.as_str())).then(|| Job::Load {
                source: source.clone(),
                loc: store.locator(row),
            });
            let kept = p.detail.filter(|d| d.source == source);
            *base = DetailState::Loading {
                source,
                kept,
                previous: p.evaluation,
            };
            return (Refreshed::Waiting, job);
        }
        let evaluation = p.evaluation.expect("ready");
        let mut detail = Detail::new(workspace, &evaluation);
        // the drift variant's count among the workspace's captures
        if let Ok(c) = &mut detail.contract
            && let Some(d) = &mut c.drift
            && let Some(name) = evaluation.verdict.contract.as_deref()
        {
            d.set_variants(&store.variants(name, 5));
        }
        let changed = p.detail.as_ref().map(|d| &d.source) != Some(&detail.source);
        *base = DetailState::Shown { evaluation, detail };
        if changed {
            self.error = 0;
        }
        let n = self.detail().map_or(0, |d| d.errors.len());
        let error = self.error.min(n.saturating_sub(1));
        if error == 0 {
            // the detail was built for the first error
            self.error = 0;
        } else {
            self.set_error(error);
        }
        (Refreshed::Built { changed }, None)
    }

    /// Makes error `error` of the shown capture the current one: the Proposal and
    /// Contract tabs mark it when drawn, the Raw tab's caret and message are rebuilt for it.
    pub fn set_error(&mut self, error: usize) {
        self.error = error;
        if let DetailState::Shown { evaluation, detail } = self.state.base_mut()
            && detail.raw.is_ok()
        {
            detail.raw = raw_view(evaluation, error);
        }
    }

    /// Scrolls the current tab of a `content` area so that the current error is in view.
    pub fn scroll_to_error(&mut self, content: Rect) {
        // another tab or capture: how far it scrolls is known once it is drawn
        self.drawn_most.set(usize::MAX);
        let Some(d) = self.detail() else {
            self.scroll = 0;
            return;
        };
        let target = match self.tab {
            Tab::Proposal => d.proposal.as_ref().ok().and_then(|j| j.target(self.error)),
            Tab::Raw => d
                .raw
                .as_ref()
                .ok()
                .and_then(|r| raw_rows(r, content.width).1),
            Tab::Contract => d.contract.as_ref().ok().and_then(|c| {
                let line = c.schema.target(self.error)? + c.rules.len() + 2;
                Some(layout::contract_row_of(c, content.width, line))
            }),
            _ => None,
        };
        let h = content.height as usize;
        self.scroll = match target {
            Some(t) if t + 2 > h => t.saturating_sub(h / 3),
            _ => 0,
        };
    }
}
