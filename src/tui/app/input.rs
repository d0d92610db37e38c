//! The model's update for keys and the mouse: the keymap's actions, the filter prompt,
//! the overlays, clicks and the wheel.

use super::layout::tab_at;
use super::{App, Effect, Focus, Overlay, WatchState};
use crate::tui::filter::pointer_label;
use crate::tui::keymap::{Action, Tab};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

impl App {
    /// Applies one key: an open overlay closes, the filter prompt takes typed keys, else
    /// the keymap decides.
    pub(super) fn key(&mut self, k: KeyEvent) {
        // the answer to the last key has been read: the footer shows the hints again
        self.note = None;
        let editing = self.modes.editing();
        if self.modes.overlay.is_some() {
            self.overlay_key(k);
            return;
        }
        if editing {
            match k.code {
                KeyCode::Esc => {
                    self.modes.stop_editing();
                    self.set_filter(String::new());
                }
                KeyCode::Enter => self.modes.stop_editing(),
                KeyCode::Backspace => {
                    let mut f = self.filter.text.clone();
                    f.pop();
                    self.set_filter(f);
                }
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.out.quit = true
                }
                KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.set_filter(String::new())
                }
                KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                    let mut f = self.filter.text.clone();
                    f.push(c);
                    self.set_filter(f);
                }
                KeyCode::Down | KeyCode::Up => {
                    if let Some(a) = self.settings.keymap.lookup(&k) {
                        self.action(a);
                    }
                }
                _ => {}
            }
            return;
        }
        if let Some(a) = self.settings.keymap.lookup(&k) {
            self.action(a);
        }
    }

    /// Applies one key to the open overlay: the moving keys scroll it; any other key
    /// closes the overlay (the quit key too, since the help says it closes), but a Ctrl
    /// key bound to quit (`C-c`) quits.
    fn overlay_key(&mut self, k: KeyEvent) {
        let action = self.settings.keymap.lookup(&k);
        if action == Some(Action::Quit) && k.modifiers.contains(KeyModifiers::CONTROL) {
            self.out.quit = true;
            return;
        }
        let (most, page) = self.overlay_bounds();
        let s = self.modes.overlay_scroll.min(most);
        let to = match action {
            Some(Action::Down) => s + 1,
            Some(Action::Up) => s.saturating_sub(1),
            Some(Action::PageDown) => s + page,
            Some(Action::PageUp) => s.saturating_sub(page),
            Some(Action::First) => 0,
            Some(Action::Last) => most,
            _ => {
                self.modes.overlay = None;
                return;
            }
        };
        self.modes.overlay_scroll = to.min(most);
    }

    /// How far the open overlay can be scrolled down, and how many rows a page of it is.
    fn overlay_bounds(&self) -> (usize, usize) {
        use crate::tui::ui::overlays;
        let area = self.screen.area;
        let keymap = &self.settings.keymap;
        match self.modes.overlay {
            Some(Overlay::Help) => (
                overlays::help_max_scroll(area, keymap),
                overlays::help_page(area, keymap),
            ),
            Some(Overlay::Review) => (
                overlays::review_max_scroll(area, self.history.contract_change.as_ref()),
                overlays::review_page(area),
            ),
            None => (0, 1),
        }
    }

    /// Applies one keymap action.
    pub fn action(&mut self, a: Action) {
        let page = (self.screen.areas.list.height as usize)
            .saturating_sub(3)
            .max(1);
        let detail = self.modes.focus == Focus::Detail;
        // the detail's scroll moves within what the tab last drew (from the end after `G`,
        // never past it)
        let most = self.detail.drawn_most.get();
        let scroll = &mut self.detail.scroll;
        *scroll = (*scroll).min(most);
        match a {
            Action::Down if detail => *scroll = scroll.saturating_add(1).min(most),
            Action::Up if detail => *scroll = scroll.saturating_sub(1),
            Action::PageDown if detail => *scroll = scroll.saturating_add(page).min(most),
            Action::PageUp if detail => *scroll = scroll.saturating_sub(page),
            Action::First if detail => *scroll = 0,
            Action::Last if detail => *scroll = most.min(usize::MAX / 2),
            Action::Down => self.move_by(1),
            Action::Up => self.move_by(-1),
            Action::PageDown => self.move_by(page as isize),
            Action::PageUp => self.move_by(-(page as isize)),
            Action::First => self.move_by(isize::MIN / 2),
            Action::Last => self.move_by(isize::MAX / 2),
            Action::NextPane | Action::PrevPane => {
                self.modes.focus = match self.modes.focus {
                    Focus::List => Focus::Detail,
                    Focus::Detail => Focus::List,
                }
            }
            Action::ShowTab(t) => {
                self.detail.tab = t;
                self.detail.scroll_to_error(self.screen.areas.content);
                if t == Tab::Chain {
                    self.refresh_chain();
                }
            }
            Action::Filter => {
                self.modes.start_editing();
                self.modes.focus = Focus::List;
            }
            Action::Clear => {
                if self.modes.chains() {
                    self.modes.mode = super::Mode::List;
                } else if self.modes.triage() {
                    self.modes.set_triage(false);
                } else if !self.filter.text.is_empty() {
                    self.set_filter(String::new());
                } else {
                    self.modes.focus = Focus::List;
                }
            }
            Action::Triage => {
                // the tree by stage: from the tree by repair `t` switches to it, from its
                // own it closes it
                let by_repair = self.modes.triage() && self.triage.by_repair;
                let on = !self.modes.triage() || by_repair;
                self.triage.by_repair = false;
                if by_repair {
                    self.triage.cursor = 0;
                    self.triage.offset = 0;
                }
                self.modes.set_triage(on);
                if on {
                    self.modes.focus = Focus::List;
                    self.triage.build(&self.list.store);
                    self.follow();
                }
            }
            Action::TriageByRepair => {
                self.triage.by_repair = !self.triage.by_repair || !self.modes.triage();
                self.triage.cursor = 0;
                self.triage.offset = 0;
                self.modes.set_triage(true);
                self.modes.focus = Focus::List;
                self.triage.build(&self.list.store);
                self.follow();
            }
            Action::Chains => {
                if self.modes.chains() {
                    self.modes.mode = super::Mode::List;
                } else if !self.chains.tree.any() {
                    // an answer to the key, not a state: gone at the next key
                    self.note = Some("no chains in this workspace (docs/chains.md#linking)".into());
                } else {
                    self.modes.mode = super::Mode::Chains;
                    self.modes.focus = Focus::List;
                    self.follow();
                    if let Some(s) = self.chains.tree.selected_source() {
                        self.select_source(s);
                    }
                }
            }
            Action::Open => {
                if self.modes.chains() {
                    self.chains.tree.toggle();
                    self.follow();
                } else if self.modes.triage() {
                    if let Some(n) = self.triage.tree.get(self.triage.cursor) {
                        let q = n.query.clone();
                        self.modes.set_triage(false);
                        self.list.cursor = 0;
                        self.list.selected = None;
                        self.set_filter(q);
                    }
                } else {
                    self.modes.focus = Focus::Detail;
                }
            }
            Action::NextError | Action::PrevError => {
                let n = self.detail.detail().map_or(0, |d| d.errors.len());
                // nothing (else) to step to: said, rather than nothing happening
                match n {
                    _ if self.list.current().is_none() => self.note = Some(NOTHING_SELECTED.into()),
                    0 => self.note = Some("n/N: this capture has no errors to step through".into()),
                    1 => {
                        self.note =
                            Some("n/N: no other error to step to (this capture has one)".into())
                    }
                    _ => {}
                }
                if n > 0 {
                    let pane = &mut self.detail;
                    pane.set_error(if a == Action::NextError {
                        (pane.error + 1) % n
                    } else {
                        (pane.error + n - 1) % n
                    });
                    if !matches!(pane.tab, Tab::Proposal | Tab::Raw | Tab::Contract) {
                        pane.tab = Tab::Proposal;
                    }
                    // the table grows or shrinks with the new error's message
                    self.relayout();
                    self.detail.scroll_to_error(self.screen.areas.content);
                }
            }
            Action::Revalidate => {
                self.request_validation(true);
                self.run.asked = true;
                // before any verdict (the first run's pre-pass) nothing is validated yet
                let store = &self.list.store;
                self.status = Some(if store.len() == store.pending() {
                    RESTARTING.to_owned()
                } else {
                    revalidating(store.len())
                });
            }
            Action::Pause => match self.watch.state {
                WatchState::Live => self.watch.state = WatchState::Paused,
                WatchState::Paused => {
                    self.watch.state = WatchState::Live;
                    let paths = std::mem::take(&mut self.watch.pending);
                    self.submit_changes(paths);
                }
                WatchState::Off => self.note = Some("not watching this workspace".into()),
            },
            Action::Copy => self.copy(),
            Action::Edit => self.edit(),
            Action::Review => {
                self.modes.overlay = Some(Overlay::Review);
                self.modes.overlay_scroll = 0;
            }
            Action::Help => {
                self.modes.overlay = Some(Overlay::Help);
                self.modes.overlay_scroll = 0;
            }
            Action::Quit => self.out.quit = true,
        }
    }

    /// Copies the current error's pointer, or on the Feedback tab the feedback text.
    fn copy(&mut self) {
        if self.list.current().is_none() {
            self.note = Some(NOTHING_SELECTED.into());
            return;
        }
        let (text, what) = if self.detail.tab == Tab::Feedback {
            match self.detail.detail().and_then(|d| d.feedback_text.clone()) {
                Some(t) => (t, "the feedback".to_string()),
                None => {
                    self.note = Some("no feedback to copy".into());
                    return;
                }
            }
        } else {
            let Some(e) = self
                .detail
                .evaluation()
                .filter(|e| Some(e.verdict.source.as_str()) == self.list.selected.as_deref())
            else {
                self.note = Some("the capture is still loading".into());
                return;
            };
            match e
                .verdict
                .errors
                .get(self.detail.error)
                .and_then(|f| f.pointer.clone())
            {
                Some(p) => {
                    let shown = crate::core::text::escape_control(pointer_label(&p)).into_owned();
                    (p, shown)
                }
                None => {
                    self.note = Some("this error has no pointer to copy".into());
                    return;
                }
            }
        };
        self.out.effects.push(Effect::Copy(text));
        self.note = Some(format!("copied {what} to the clipboard (OSC 52)"));
    }

    /// Asks the event loop to open the selected capture in `$EDITOR`.
    fn edit(&mut self) {
        let Some(r) = self.list.current() else {
            self.note = Some(NOTHING_SELECTED.into());
            return;
        };
        let Some(ws) = self.workspace.as_ref() else {
            return;
        };
        let line = if r.line > 0 { r.line as usize } else { 1 };
        let path = ws.root.join(self.list.store.file(r));
        self.out.effects.push(Effect::Edit { path, line });
    }

    /// Moves the selection (of the list, or of the triage tree) by `delta` rows.
    fn move_by(&mut self, mut delta: isize) {
        if self.detail.clear_gone() && delta > 0 {
            // the deleted row's neighbour took its place: the first step lands on it
            delta -= 1;
        }
        if self.modes.triage() {
            self.triage.move_by(delta);
            self.follow();
            return;
        }
        if self.modes.chains() {
            self.chains.tree.move_by(delta);
            self.follow();
            if let Some(s) = self.chains.tree.selected_source() {
                self.select_source(s);
            }
            return;
        }
        let n = self.list.view.len();
        if n == 0 {
            return;
        }
        let c = self.list.cursor.saturating_add_signed(delta).min(n - 1);
        self.select(c);
    }

    /// Applies one mouse event: a click selects a row, a tab or a pane, the wheel moves
    /// the list or scrolls the detail.
    pub(super) fn mouse(&mut self, m: MouseEvent) {
        let l = self.screen.areas;
        let at = Position::new(m.column, m.row);
        if let Some(overlay) = self.modes.overlay {
            self.overlay_mouse(overlay, m.kind, at);
            return;
        }
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if l.list.contains(at) {
                    self.modes.focus = Focus::List;
                    let row = m.row.saturating_sub(l.list.y + 1) as usize;
                    if self.modes.triage() {
                        let i = self.triage.offset + row;
                        if i < self.triage.tree.len() {
                            self.triage.cursor = i;
                        }
                    } else if self.modes.chains() {
                        let i = self.chains.tree.offset + row;
                        if i < self.chains.tree.nodes.len() {
                            self.chains.tree.cursor = i;
                            if let Some(s) = self.chains.tree.selected_source() {
                                self.select_source(s);
                            }
                        }
                    } else if m.row > l.list.y {
                        self.select(self.list.offset + row);
                    }
                } else if l.tabs.contains(at) {
                    if let Some(t) = tab_at(l.tabs, m.column, self.detail.tab) {
                        self.action(Action::ShowTab(t));
                    }
                    self.modes.focus = Focus::Detail;
                } else if l.detail.contains(at) {
                    self.modes.focus = Focus::Detail;
                }
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let d: isize = if m.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                };
                if l.list.contains(at) {
                    self.move_by(d);
                } else if l.detail.contains(at) {
                    let most = self.detail.drawn_most.get();
                    self.detail.scroll = self
                        .detail
                        .scroll
                        .min(most)
                        .saturating_add_signed(d)
                        .min(most);
                }
            }
            _ => {}
        }
    }
}

impl App {
    /// Applies one mouse event to the open overlay, never to the panes behind it: the
    /// wheel scrolls the overlay, wherever it points; a click outside the overlay closes it
    /// (as a key does), one inside it does nothing.
    fn overlay_mouse(&mut self, overlay: Overlay, kind: MouseEventKind, at: Position) {
        let area = self.screen.area;
        match kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let (most, _) = self.overlay_bounds();
                let s = self.modes.overlay_scroll.min(most);
                self.modes.overlay_scroll = if kind == MouseEventKind::ScrollDown {
                    (s + 3).min(most)
                } else {
                    s.saturating_sub(3)
                };
            }
            MouseEventKind::Down(_) => {
                let r = match overlay {
                    Overlay::Help => {
                        crate::tui::ui::overlays::help_rect(area, &self.settings.keymap)
                    }
                    Overlay::Review => crate::tui::ui::overlays::review_rect(area),
                };
                if !r.contains(at) {
                    self.modes.overlay = None;
                }
            }
            _ => {}
        }
    }
}

/// The answer to `n`, `N`, `y` and `e` when no capture is selected (an empty list, a
/// filter that matches none).
const NOTHING_SELECTED: &str = "no capture selected (the list is empty)";

/// The status line when `r` restarts a run that has given no verdict yet.
pub(super) const RESTARTING: &str = "restarting the run: the workspace is read again…";

/// The status line while a run asked for with `r` goes on.
pub(super) fn revalidating(n: usize) -> String {
    format!(
        "re-validating {n} capture{}…",
        if n == 1 { "" } else { "s" }
    )
}
