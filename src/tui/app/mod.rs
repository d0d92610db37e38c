//! The model: one [`App`], a composition of pane models, holds every piece of state;
//! [`App::update`] applies one message (a key, a mouse event, a resize, an engine event) and
//! leaves its effects (engine jobs, clipboard, editor, quit) in [`App::out`]. Nothing here
//! draws or touches the terminal, and nothing in the drawing code changes the model; the
//! screen's geometry is the model's own ([`layout`]), so the model never calls the view.
//!
//! - [`list`]: the rows, their order, the filtered view and the selection;
//! - [`filter_job`]: the filter text and the filtering, in slices between frames;
//! - [`triage`]: the triage tree;
//! - [`chains`]: the chain tree and the Chain tab's state;
//! - [`detail_pane`]: the detail pane, one [`DetailState`];
//! - [`history`]: the session's verdict flips;
//! - [`Modes`]: the input mode and the overlay;
//! - `engine` and `input`: the updates for engine events and for keys and the mouse.

pub mod chains;
pub mod detail_pane;
mod engine;
pub mod filter_job;
pub mod history;
mod input;
pub mod layout;
pub mod list;
mod scroll;
pub mod triage;

pub use chains::{ChainNode, ChainPane, ChainTree};
pub use detail_pane::{DetailPane, DetailState};
pub use filter_job::{FILTER_SLICE, FilterJob};
pub use history::{ContractChange, FlipEntry, History};
pub use layout::{Areas, Screen};
pub use list::List;
pub use triage::{Triage, TriageNode};

use crate::core::summary::Summary;
use crate::core::workspace::Workspace;
use crate::engine::watcher::WatchEvent;
use crate::engine::{EngineEvent, Job};
use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use crossterm::event::{KeyEvent, MouseEvent};
use detail_pane::{Change, Refreshed};
use filter_job::Step;
use ratatui::layout::Rect;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The rows the tab's content keeps when a long error message makes the error table taller.
pub const CONTENT_MIN: u16 = 3;

/// A message for the model.
#[derive(Debug)]
pub enum Msg {
    /// A key press.
    Key(KeyEvent),
    /// A mouse event.
    Mouse(MouseEvent),
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
    /// Something from the validation engine.
    Engine(EngineEvent),
    /// A batch of changed paths (or an error) from the file watcher.
    Watch(WatchEvent),
    /// A signal: the event loop acts on it (the terminal is its), the model ignores it.
    Signal(crate::tui::signals::Signal),
}

/// Something the event loop does for the model (the model itself never does I/O).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Open this file in `$EDITOR` at this line (1-based), then come back.
    Edit {
        /// The capture file.
        path: PathBuf,
        /// The line to open at.
        line: usize,
    },
}

/// What the model hands to the event loop, taken by it after each update.
#[derive(Debug, Default)]
pub struct Outbox {
    /// Jobs for the engine.
    pub requests: Vec<Job>,
    /// Effects for the event loop (clipboard, editor).
    pub effects: Vec<Effect>,
    /// Set by `q`: the loop ends.
    pub quit: bool,
}

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The capture list (or the triage tree).
    List,
    /// The detail pane.
    Detail,
}

/// What the list pane shows and where typed keys go (one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The capture list; keys are looked up in the keymap.
    List,
    /// The triage tree replaces the list.
    Triage,
    /// The chain tree replaces the list (`docs/chains.md#in-the-terminal-workbench`).
    Chains,
    /// The filter is being typed (keys edit it; the arrows still go to the keymap).
    Editing {
        /// The triage tree stays under the prompt: only when an arrow key is bound to
        /// `triage` (or the tree was opened that way while typing).
        triage: bool,
    },
}

/// An overlay over the whole screen (at most one). Any key closes it, but for its
/// scrolling keys; a Ctrl key bound to quit (`C-c`) quits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// The help, from the keymap.
    Help,
    /// The flips of the last schema or rules change.
    Review,
}

/// The input state: the mode, the overlay over it, and the focused pane. The three are
/// independent: an overlay opens over any mode (`t` then `?`: help over the triage tree;
/// while typing only through an arrow key bound to `help` or `review`), and either pane can
/// have the focus in any mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modes {
    /// The mode.
    pub mode: Mode,
    /// The overlay, if one is open.
    pub overlay: Option<Overlay>,
    /// How many rows the open overlay (the help or the review) is scrolled down (0 when
    /// it opens).
    pub overlay_scroll: usize,
    /// Which pane has the keyboard.
    pub focus: Focus,
}

impl Default for Modes {
    fn default() -> Modes {
        Modes {
            mode: Mode::List,
            overlay: None,
            overlay_scroll: 0,
            focus: Focus::List,
        }
    }
}

impl Modes {
    /// Whether the triage tree replaces the list.
    pub fn triage(&self) -> bool {
        matches!(self.mode, Mode::Triage | Mode::Editing { triage: true })
    }

    /// Whether the chain tree replaces the list.
    pub fn chains(&self) -> bool {
        self.mode == Mode::Chains
    }

    /// Whether the filter is being typed.
    pub fn editing(&self) -> bool {
        matches!(self.mode, Mode::Editing { .. })
    }

    /// Shows or hides the triage tree, keeping the editing state.
    pub fn set_triage(&mut self, on: bool) {
        self.mode = match self.mode {
            Mode::Editing { .. } => Mode::Editing { triage: on },
            _ if on => Mode::Triage,
            _ => Mode::List,
        };
    }

    /// Starts typing the filter (over the capture list).
    pub fn start_editing(&mut self) {
        self.mode = Mode::Editing { triage: false };
    }

    /// Stops typing the filter, keeping the triage tree if it is shown.
    pub fn stop_editing(&mut self) {
        self.mode = if self.triage() {
            Mode::Triage
        } else {
            Mode::List
        };
    }
}

/// Whether files are watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchState {
    /// No watcher: the screen shows the last validation run.
    Off,
    /// Watching and re-validating changes.
    Live,
    /// Watching, with re-validation paused (changes are kept and applied on resume).
    Paused,
}

/// The file watching.
#[derive(Debug)]
pub struct Watch {
    /// Watching state.
    pub state: WatchState,
    /// Paths changed while paused, submitted on resume.
    pub pending: Vec<PathBuf>,
    /// Local time of the last applied file change.
    pub last_change: Option<String>,
    /// Why nothing is watched ([`WatchState::Off`]): the watcher's error as it said it
    /// (the inotify watch limit, the folder gone), control characters escaped; the
    /// header shows it.
    pub off_reason: Option<String>,
}

/// Progress of the current validation run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// The generation being shown (newest requested).
    pub generation: u64,
    /// Records in the run (0 until it starts).
    pub total: usize,
    /// Records received so far.
    pub done: usize,
    /// Whether the run is going on.
    pub running: bool,
    /// While the run's pre-pass reads the capture files, before its first record
    /// (`docs/commands.md#the-pre-pass`): (files read, files, records read).
    pub reading: Option<(usize, usize, u64)>,
    /// How long the last finished run took.
    pub elapsed: Option<Duration>,
    /// The last run failed (its error is in the status line) and no run followed yet.
    pub failed: bool,
}

/// Lint findings counted by severity, as `check` and `lint` count them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LintCounts {
    /// `error` findings.
    pub errors: usize,
    /// `warning` findings (and findings without a severity).
    pub warnings: usize,
    /// `info` findings.
    pub info: usize,
}

impl LintCounts {
    /// `2 warnings, 1 info` (the parts that are not zero; `0 warnings` when all are).
    pub fn label(&self) -> String {
        let pl = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let mut parts = Vec::new();
        if self.errors > 0 {
            parts.push(pl(self.errors, "error"));
        }
        if self.warnings > 0 || self.errors + self.info == 0 {
            parts.push(pl(self.warnings, "warning"));
        }
        if self.info > 0 {
            parts.push(format!("{} info", self.info));
        }
        parts.join(", ")
    }

    /// Whether there is any finding.
    pub fn any(&self) -> bool {
        self.errors + self.warnings + self.info > 0
    }
}

/// The validation runs and their totals.
#[derive(Debug, Default)]
pub struct Run {
    /// The validation run.
    pub progress: Progress,
    /// The last job generation handed out (full runs and change batches share it).
    pub generation: u64,
    /// Counts over every capture.
    pub summary: Summary,
    /// Distinct lint findings over every capture's contract, by severity.
    pub lint: LintCounts,
    /// The workspace's own warnings, as `check` prints them after its verdicts
    /// (`UNMATCHED_JOIN`: a `[[join]]` line no capture has), from the last run or change.
    pub workspace_warnings: Vec<crate::core::verdict::Warning>,
    /// Whether the run going on was asked for with `r` (its start and end go in the
    /// status line).
    pub asked: bool,
    /// When the list was last rebuilt (batches rebuild it at most every 150 ms).
    last_rebuild: Option<Instant>,
}

/// What the user's config sets: colours and keys.
#[derive(Debug, Default)]
pub struct Settings {
    /// Styles.
    pub theme: Theme,
    /// The keymap (defaults merged with the user config).
    pub keymap: Keymap,
}

/// The whole state of the TUI.
#[derive(Debug)]
pub struct App {
    /// The workspace as named on the command line (for the header).
    pub label: String,
    /// The workspace the shown results belong to.
    pub workspace: Option<Arc<Workspace>>,
    /// Colours and keys.
    pub settings: Settings,
    /// The terminal size and the regions laid out on it.
    pub screen: Screen,
    /// The capture list.
    pub list: List,
    /// The filter.
    pub filter: FilterJob,
    /// The triage tree.
    pub triage: Triage,
    /// The chains, the chain tree and the Chain tab.
    pub chains: ChainPane,
    /// The detail pane.
    pub detail: DetailPane,
    /// The session's verdict flips.
    pub history: History,
    /// The mode, the overlay and the focus.
    pub modes: Modes,
    /// The validation runs.
    pub run: Run,
    /// The file watching.
    pub watch: Watch,
    /// A one-line status message (an engine error, a run's progress): shown on the footer
    /// until the state it tells of changes.
    pub status: Option<String>,
    /// A one-line answer to the last key (`copied … to the clipboard`, `n/N: …`): shown on
    /// the footer over [`App::status`] and the key hints, and gone at the next key.
    pub note: Option<String>,
    /// Jobs, effects and quitting, for the event loop.
    pub out: Outbox,
}

impl App {
    /// A new model for the workspace shown as `label`, on a terminal of `area`.
    pub fn new(label: impl Into<String>, workspace: Option<Arc<Workspace>>, area: Rect) -> App {
        App {
            label: label.into(),
            workspace,
            settings: Settings::default(),
            screen: Screen::new(area, 0),
            list: List::default(),
            filter: FilterJob::default(),
            triage: Triage::default(),
            chains: ChainPane::default(),
            detail: DetailPane::default(),
            history: History::default(),
            modes: Modes::default(),
            run: Run::default(),
            watch: Watch {
                state: WatchState::Off,
                pending: Vec::new(),
                last_change: None,
                off_reason: None,
            },
            status: None,
            note: None,
            out: Outbox::default(),
        }
    }

    /// Asks for a full validation run (a new generation) and returns its generation.
    pub fn request_validation(&mut self, reload: bool) -> u64 {
        let run = &mut self.run;
        run.generation += 1;
        run.progress.generation = run.generation;
        run.progress.running = true;
        run.progress.done = 0;
        run.progress.total = 0;
        run.progress.reading = None;
        run.progress.failed = false;
        self.out.requests.push(Job::ValidateAll {
            generation: run.progress.generation,
            reload,
        });
        run.progress.generation
    }

    /// Applies one message.
    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::Key(k) => self.key(k),
            Msg::Mouse(m) => self.mouse(m),
            Msg::Resize(w, h) => {
                self.screen.area = Rect::new(0, 0, w, h);
                self.relayout();
                self.follow();
            }
            Msg::Engine(e) => self.engine(e),
            Msg::Watch(WatchEvent::Changed(paths)) => match self.watch.state {
                WatchState::Paused => {
                    let pending = &mut self.watch.pending;
                    pending.extend(paths);
                    pending.sort();
                    pending.dedup();
                }
                _ => self.submit_changes(paths),
            },
            Msg::Watch(WatchEvent::Error(m)) => {
                self.status = Some(format!(
                    "watcher: {}",
                    crate::core::text::escape_control(&m)
                ));
            }
            Msg::Signal(_) => {}
        }
    }

    /// Asks the engine to apply a batch of changed paths (a new generation).
    fn submit_changes(&mut self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        self.run.generation += 1;
        self.out.requests.push(Job::Apply {
            generation: self.run.generation,
            paths,
        });
    }

    /// Lays the screen out again (after a resize, or when the shown capture's error count,
    /// and with it the error table's height, may have changed).
    fn relayout(&mut self) {
        let errors = self.detail.detail().map_or(0, |d| d.errors.len());
        let header = if self.chains.tree.any() { 3 } else { 2 };
        let area = self.screen.area;
        self.screen = Screen::with_header(area, errors, header);
        // the selected error's message wrapped at the table's width: the lines past its two
        // make the table taller, as long as the tab keeps `CONTENT_MIN` rows (a third of the
        // pane cut an INVALID_CAPTURE message's hint at 80x24; what is still cut ends in `…`)
        if let Some(d) = self.detail.detail() {
            let width = self.screen.areas.errors.width;
            let over = crate::tui::ui::detail::message_lines(d, self.detail.error, width)
                .saturating_sub(crate::tui::ui::detail::MESSAGE_LINES);
            let most = self.screen.areas.content.height.saturating_sub(CONTENT_MIN);
            if over > 0 {
                self.screen = Screen::with_message(area, errors, header, over.min(most));
            }
        }
    }

    /// Whether a filter is still running ([`App::work`] goes on with it).
    pub fn busy(&self) -> bool {
        self.filter.busy()
    }

    /// Goes on with a running filter for about `budget`; returns whether work remains.
    pub fn work(&mut self, budget: Duration) -> bool {
        match self.filter.step(&mut self.list, budget) {
            Step::Idle => false,
            Step::Partial => {
                self.follow();
                true
            }
            Step::Done { top_if_lost } => {
                self.finish_filter(top_if_lost);
                false
            }
        }
    }

    /// Starts filtering for the current query: at once when there is no query, else in
    /// slices of [`FILTER_SLICE`] (the first one here; [`App::work`] does the rest between
    /// frames). See [`FilterJob::start`] for `top_if_lost`.
    fn start_filter(&mut self, top_if_lost: bool) {
        if self.filter.start(&mut self.list, top_if_lost) {
            self.finish_filter(top_if_lost);
        } else {
            self.work(FILTER_SLICE);
        }
    }

    /// Puts the cursor on the selected capture in the finished view (or, when it was
    /// filtered out, on the first row or the row at the cursor) and refreshes the detail.
    fn finish_filter(&mut self, top_if_lost: bool) {
        let list = &mut self.list;
        let before = list.selected.clone();
        let sel = list.selected_row().map(|i| i as u32);
        match sel.and_then(|s| list.view.iter().position(|&i| i == s)) {
            Some(p) => list.cursor = p,
            None => {
                if top_if_lost {
                    list.cursor = 0;
                }
                list.cursor = list.cursor.min(list.view.len().saturating_sub(1));
                list.selected = list.current().map(|r| list.store.source(r));
            }
        }
        if before != self.list.selected {
            if top_if_lost {
                self.detail.clear_gone();
            }
            self.refresh_detail(Change::None);
        } else if self.detail.detail().is_none() && self.detail.loading().is_none() {
            self.refresh_detail(Change::None);
        }
        self.follow();
    }

    /// Sets the filter text and filters for it (the selected capture filtered out: start
    /// at the top of the new list).
    fn set_filter(&mut self, text: String) {
        self.filter.set(text);
        self.start_filter(true);
    }

    /// Recomputes the sorted rows, the filtered view, the counts and the triage tree,
    /// keeping the selection on the same capture.
    pub fn rebuild(&mut self) {
        self.run.last_rebuild = Some(Instant::now());
        self.list.sort();
        // counts: rows per outcome, then the funnel and the warnings of the contracts used
        let store = &self.list.store;
        let mut summary = Summary::default();
        let mut warnings = HashSet::new();
        let mut contracts = HashSet::new();
        for (i, (k, &n)) in store.kinds.iter().zip(store.kind_rows()).enumerate() {
            // pending rows have no outcome yet
            if n == 0 || i == crate::tui::store::PENDING_KIND as usize {
                continue;
            }
            summary.add_outcomes(k.outcome.stage, k.outcome.decision, k.outcome.expect_met, n);
            summary.add_repairs(k.outcome.repair, n);
            if let Some(c) = &k.contract {
                contracts.insert(c.as_str());
            }
        }
        if let Some(ws) = &self.workspace {
            for c in contracts {
                if let Some(contract) = ws.contracts.get(c) {
                    for w in contract.warnings() {
                        warnings.insert((c, w.code, w.pointer, w.message, w.severity));
                    }
                }
            }
        }
        let mut lint = LintCounts::default();
        for (.., severity) in &warnings {
            match severity.as_deref() {
                Some("error") => lint.errors += 1,
                Some("info") => lint.info += 1,
                _ => lint.warnings += 1,
            }
        }
        self.run.lint = lint;
        self.run.summary = summary;
        if self.modes.triage() {
            self.triage.build(&self.list.store);
        }
        // rows changed: filter from the sorted rows, never from the previous view
        self.filter.reset();
        self.start_filter(false);
    }

    /// Rebuilds the selected capture's detail from its loaded evaluation (after `change`),
    /// or asks the engine to load it (the detail shows a placeholder until it arrives);
    /// lays the screen out again and scrolls to the current error when it was built.
    fn refresh_detail(&mut self, change: Change) {
        let (done, job) = self.detail.refresh(
            &self.list.store,
            self.list.current(),
            self.workspace.as_deref(),
            change,
        );
        self.out.requests.extend(job);
        self.refresh_chain();
        if done == Refreshed::Ignored {
            return;
        }
        self.relayout();
        if let Refreshed::Built { .. } = done {
            self.detail.scroll_to_error(self.screen.areas.content);
        }
    }

    /// Keeps the selection inside the visible rows of the list and the tree.
    fn follow(&mut self) {
        let h = (self.screen.areas.list.height as usize)
            .saturating_sub(2)
            .max(1);
        self.list.follow(h);
        self.triage.follow(h);
        self.chains.tree.follow(h);
    }

    /// Rebuilds the Chain tab for the selected capture, asking the engine for the chain's
    /// proposals when the tab is shown and they are not at hand.
    pub(crate) fn refresh_chain(&mut self) {
        let shown = self.detail.tab == crate::tui::keymap::Tab::Chain;
        let store = &self.list.store;
        let job = self
            .chains
            .refresh(self.list.selected.as_deref(), shown, |source| {
                store
                    .find_source(source)
                    .map(|i| store.locator(&store.rows[i]))
                    .unwrap_or_else(|| crate::engine::summary::Locator::of_source(source))
            });
        self.out.requests.extend(job);
    }

    /// Selects the capture at `source` (from the chain tree): its row in the list when the
    /// filter shows it; one the filter hides is not selected (the footer says so until the
    /// next key).
    pub(crate) fn select_source(&mut self, source: String) {
        if self.list.selected.as_deref() == Some(source.as_str()) {
            return;
        }
        let Some(i) = self.list.store.find_source(&source) else {
            return;
        };
        match self.list.view.iter().position(|&r| r as usize == i) {
            Some(p) => self.select(p),
            None => {
                self.note =
                    Some("that attempt is hidden by the filter (Esc in the list clears it)".into())
            }
        }
    }

    /// Selects position `pos` of the view.
    pub fn select(&mut self, pos: usize) {
        if self.list.view.is_empty() {
            return;
        }
        let list = &mut self.list;
        list.cursor = pos.min(list.view.len() - 1);
        self.detail.clear_gone();
        let s = list.current().map(|r| list.store.source(r));
        if s != list.selected {
            list.selected = s;
            self.refresh_detail(Change::None);
        }
        self.follow();
    }
}
