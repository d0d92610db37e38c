//! The model's update for engine events: a run's batches, a change batch's results (with
//! the verdict flips they cause), and loaded evaluations.

use super::detail_pane::Change;
use super::{App, ContractChange, FlipEntry};
use crate::core::review::Flip;
use crate::core::workspace::Workspace;
use crate::engine::EngineEvent;
use crate::engine::worker::{Removed, Updated};
use crate::tui::store::FLIPPED;
use std::sync::Arc;
use std::time::Duration;

impl App {
    /// Applies one engine event (events of an older generation than the one shown are
    /// dropped).
    pub(super) fn engine(&mut self, e: EngineEvent) {
        match e {
            EngineEvent::Reading {
                generation,
                files_done,
                files,
                records,
            } => {
                let p = &mut self.run.progress;
                if generation < p.generation {
                    return;
                }
                p.generation = generation;
                p.running = true;
                p.reading = Some((files_done, files, records));
            }
            EngineEvent::Started {
                generation,
                workspace,
                total,
            } => {
                let p = &mut self.run.progress;
                if generation < p.generation {
                    return;
                }
                p.generation = generation;
                p.total = total;
                p.done = 0;
                p.running = true;
                p.reading = None;
                p.failed = false;
                self.workspace = Some(workspace);
                self.status = self.run.asked.then(|| super::input::revalidating(total));
                let store = &mut self.list.store;
                let pending = store.pending();
                store.reserve(total.saturating_sub(store.len()));
                store.reserve_text(pending);
                if pending > 0 {
                    // the pre-pass's last records listed: every record reachable now
                    self.rebuild();
                }
            }
            EngineEvent::Listed {
                generation,
                records,
            } => {
                if generation < self.run.progress.generation {
                    return;
                }
                let mut added = 0;
                for r in &records {
                    added += self.list.put_pending(&r.file, r.first, r.last, generation);
                }
                let due = self
                    .run
                    .last_rebuild
                    .is_none_or(|t| t.elapsed() > Duration::from_millis(150));
                if added > 0 && (due || self.first_selection()) {
                    self.rebuild();
                }
            }
            EngineEvent::Batch {
                generation,
                captures,
                cleared,
                ..
            } => {
                if generation < self.run.progress.generation {
                    return;
                }
                self.run.progress.done += captures.len();
                if self.list.cursor == 0
                    && self
                        .list
                        .current()
                        .is_some_and(crate::tui::store::Store::is_pending)
                {
                    // the first row, pending, was selected for want of another: the first
                    // verdicts select the top of the list, as without pending rows
                    self.list.selected = None;
                }
                let selected = self.list.selected_row();
                let mut touched = false;
                for s in &captures {
                    let i = self.list.put(s, generation, &self.history.flipped);
                    touched |= i.is_some() && i == selected;
                }
                self.list.clear_pending(&cleared);
                let due = self
                    .run
                    .last_rebuild
                    .is_none_or(|t| t.elapsed() > Duration::from_millis(150));
                if due || self.first_selection() {
                    self.rebuild();
                }
                if touched {
                    self.refresh_detail(Change::Replaced(None));
                }
            }
            EngineEvent::Finished {
                generation,
                elapsed,
                warnings,
            } => {
                let p = &mut self.run.progress;
                if generation < p.generation {
                    return;
                }
                self.run.workspace_warnings = warnings;
                p.running = false;
                p.elapsed = Some(elapsed);
                if std::mem::take(&mut self.run.asked) {
                    // the captures the run gave (its `total` counted records, some of
                    // which may be no capture: MCP messages other than tools/call); the
                    // progress status ends, and the run's end answers `r` until the next key
                    let n = p.done;
                    self.status = None;
                    self.note = Some(format!(
                        "re-validated {n} capture{} in {} ms",
                        if n == 1 { "" } else { "s" },
                        elapsed.as_millis()
                    ));
                }
                self.list.retain_generation(generation as u32);
                self.rebuild();
            }
            EngineEvent::Applied {
                generation,
                workspace,
                at,
                causes,
                contracts,
                updated,
                removed,
                warnings,
            } => {
                self.run.workspace_warnings = warnings;
                self.applied(
                    generation, workspace, at, causes, contracts, updated, removed,
                )
            }
            EngineEvent::Failed {
                generation,
                message,
            } => {
                if generation < self.run.progress.generation {
                    return;
                }
                self.run.progress.running = false;
                self.run.progress.reading = None;
                self.run.progress.failed = true;
                self.run.asked = false;
                self.status = Some(crate::core::text::escape_control(&message).into_owned());
                // no verdict comes for the records listed: their pending rows go
                if self.list.store.pending() > 0 {
                    self.list.retain_generation(0);
                    self.rebuild();
                }
            }
            EngineEvent::Loaded { source, evaluation } => {
                self.refresh_detail(Change::Loaded(source, evaluation));
            }
            EngineEvent::Chains { generation, chains } => {
                if generation < self.run.progress.generation {
                    return;
                }
                let had = self.chains.tree.any();
                self.chains.set(chains);
                if had != self.chains.tree.any() {
                    // the chain funnel's header line comes or goes
                    self.relayout();
                    self.follow();
                }
                self.refresh_chain();
            }
            EngineEvent::ChainLoaded { chain, proposals } => {
                if self.chains.loaded(chain, proposals) {
                    self.refresh_chain();
                }
            }
        }
    }

    /// Whether nothing is selected while every row is shown: the rows that come are
    /// listed at once, to select the first. With a filter that matches nothing, no row
    /// would ever be selected, and a rebuild at every batch would pass over every row (a
    /// million, pending, from the pre-pass on) each time: the list keeps its 150 ms pace.
    fn first_selection(&self) -> bool {
        self.list.selected.is_none() && self.filter.text.is_empty()
    }

    /// Applies the engine's result for a batch of file changes.
    #[allow(clippy::too_many_arguments)]
    fn applied(
        &mut self,
        generation: u64,
        workspace: Arc<Workspace>,
        at: String,
        causes: Vec<String>,
        contracts: Vec<String>,
        updated: Vec<Updated>,
        removed: Vec<Removed>,
    ) {
        self.workspace = Some(workspace);
        self.watch.last_change = Some(at.clone());
        self.status = None;
        let list = &mut self.list;
        // the selected capture, by file and id: if a line above it is deleted or inserted,
        // its source changes and the selection follows it instead of staying on the line
        let followed: Option<(String, String)> = list.selected.as_ref().and_then(|sel| {
            let r = list.store.rows[list.store.find_source(sel)?];
            Some((
                list.store.file(&r).to_string(),
                list.store.id(&r).to_string(),
            ))
        });
        let mut new_flips = Vec::new();
        let mut touched = false;
        let mut fresh = None;
        for u in updated {
            let s = &u.summary;
            let source = s.loc.source();
            let store = &self.list.store;
            let old = store.find_source(&source).map(|i| store.rows[i]);
            if old.is_some_and(|r| r.generation > generation as u32) {
                continue;
            }
            let flip = u.previous.as_ref().and_then(|prev| {
                let new = s.outcome.clone();
                let kind = u.flip?;
                let cause = match &s.outcome.reason {
                    Some(reason) => {
                        let mut f = crate::core::verdict::Finding::new(
                            s.outcome.stage,
                            reason.clone(),
                            s.message.clone().unwrap_or_default(),
                        )
                        .with_decision(s.outcome.decision);
                        if s.first_has_pointer {
                            f = f.with_pointer(s.pointers[0].clone());
                        }
                        Some(f)
                    }
                    None => old.and_then(|r| store.first_error(&r)),
                };
                Some(Flip {
                    id: s.id.clone(),
                    source: s.loc.record_ref(),
                    contract: s
                        .contract
                        .clone()
                        .or_else(|| old.and_then(|r| store.kind(&r).contract.clone())),
                    kind,
                    old: prev.clone(),
                    new,
                    cause,
                    // the workbench's flips are outcome flips: never `changed`
                    was: None,
                })
            });
            let Some(i) = self.list.put(s, generation, &self.history.flipped) else {
                continue;
            };
            if self.list.selected.as_deref() == Some(source.as_str()) {
                touched = true;
                fresh = u.evaluation;
            }
            if let Some(flip) = flip {
                self.list.store.rows[i].flags |= FLIPPED;
                self.history.flipped.insert(source);
                new_flips.push(FlipEntry {
                    at: at.clone(),
                    flip,
                    cause: u.cause,
                });
            }
        }
        for mut r in removed {
            let list = &mut self.list;
            if r.id.is_empty()
                && let Some(i) = list.store.find_source(&r.source)
            {
                r.id = list.store.id(&list.store.rows[i]).to_string();
            }
            if list.remove(&r.source, generation) && list.selected.as_deref() == Some(&r.source) {
                self.detail.set_gone(r);
            }
        }
        self.history.flips.extend(new_flips.iter().cloned());
        if !contracts.is_empty() {
            self.history.contract_change = Some(ContractChange {
                contracts,
                at,
                causes,
                flips: new_flips,
            });
        }
        let list = &mut self.list;
        if let (Some((file, id)), Some(sel)) = (&followed, list.selected.clone()) {
            let store = &list.store;
            let same = store
                .find_source(&sel)
                .is_some_and(|i| store.id(&store.rows[i]) == id);
            let moved = (!same)
                .then(|| {
                    store
                        .rows
                        .iter()
                        .find(|r| store.file(r) == file.as_str() && store.id(r) == id.as_str())
                })
                .flatten()
                .map(|r| store.source(r));
            if let Some(source) = moved {
                list.selected = Some(source);
                self.detail.clear_gone();
                touched = true;
                fresh = None;
            }
        }
        self.rebuild();
        if touched {
            // the shown capture changed: its fresh evaluation came along, or it is re-read
            self.refresh_detail(Change::Replaced(fresh));
        }
    }
}
