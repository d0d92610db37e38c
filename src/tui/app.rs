//! The model: one [`App`] holds every piece of state; [`App::update`] applies one
//! message (a key, a mouse event, a resize, an engine event). Nothing here draws or
//! touches the terminal, and nothing in the drawing code changes the model.

use crate::core::pipeline::Evaluation;
use crate::core::review::{Flip, FlipKind};
use crate::core::summary::Summary;
use crate::core::verdict::Stage;
use crate::core::workspace::Workspace;
use crate::engine::watcher::WatchEvent;
use crate::engine::worker::Removed;
use crate::engine::{EngineEvent, Job};
use crate::tui::detail::Detail;
use crate::tui::filter::{FuzzyMatcher, Query, haystack, pointer_label};
use crate::tui::keymap::{Action, Keymap, Tab};
use crate::tui::theme::Theme;
use crate::tui::ui;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// What the last schema or rules change did (issue 6: the header line and the review pane).
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

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The capture list (or the triage tree).
    List,
    /// The detail pane.
    Detail,
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
    /// How long the last finished run took.
    pub elapsed: Option<Duration>,
}

/// One capture as the list knows it.
#[derive(Debug)]
pub struct Entry {
    /// The evaluation from the engine.
    pub ev: Evaluation,
    /// Fuzzy-filter text (see [`haystack`]).
    pub hay: String,
    /// The generation that produced it.
    pub generation: u64,
}

/// One node of the triage tree (stage > reason > pointer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriageNode {
    /// 0 stage, 1 reason, 2 pointer.
    pub depth: u8,
    /// The stage, reason or pointer, escaped.
    pub label: String,
    /// How many captures it holds.
    pub count: usize,
    /// The filter query that opens this group.
    pub query: String,
    /// The stage it belongs to (for the colour).
    pub stage: Stage,
}

/// The whole state of the TUI.
#[derive(Debug)]
pub struct App {
    /// The workspace as named on the command line (for the header).
    pub label: String,
    /// The workspace the shown results belong to.
    pub workspace: Option<Arc<Workspace>>,
    /// Styles.
    pub theme: Theme,
    /// The keymap (defaults merged with the user config).
    pub keymap: Keymap,
    /// The terminal area.
    pub area: Rect,
    /// Every capture, in arrival order.
    pub rows: Vec<Entry>,
    by_source: HashMap<String, usize>,
    /// Indices into `rows` that pass the filter, sorted by severity then id.
    pub view: Vec<usize>,
    /// Position of the selection in `view`.
    pub cursor: usize,
    /// First visible position of the list.
    pub offset: usize,
    /// The selected capture's source (stays put across re-validations).
    pub selected: Option<String>,
    /// The filter text.
    pub filter: String,
    /// Whether the filter is being typed.
    pub editing: bool,
    query: Query,
    matcher: FuzzyMatcher,
    /// Whether the triage tree replaces the list.
    pub triage: bool,
    /// The triage tree, flattened.
    pub tree: Vec<TriageNode>,
    /// Selected node of the tree.
    pub tree_cursor: usize,
    /// First visible node.
    pub tree_offset: usize,
    /// Which pane has the keyboard.
    pub focus: Focus,
    /// The detail tab shown.
    pub tab: Tab,
    /// The selected capture's detail.
    pub detail: Option<Detail>,
    /// Scroll of the detail tab, in lines.
    pub scroll: usize,
    /// The current error of the selected capture (`n`/`N`).
    pub error: usize,
    /// Whether the help overlay is open.
    pub help: bool,
    /// Watching state.
    pub watch: WatchState,
    /// The validation run.
    pub progress: Progress,
    /// Counts over every capture.
    pub summary: Summary,
    /// Distinct lint warnings over every capture's contract.
    pub warnings: usize,
    /// A one-line status message (an engine error).
    pub status: Option<String>,
    /// Set by `q`.
    pub quit: bool,
    /// Jobs for the engine, taken by the event loop.
    pub requests: Vec<Job>,
    /// Effects for the event loop (clipboard, editor).
    pub effects: Vec<Effect>,
    /// The last job generation handed out (full runs and change batches share it).
    pub generation: u64,
    /// Paths changed while paused, submitted on resume.
    pub pending: Vec<PathBuf>,
    /// Local time of the last applied file change.
    pub last_change: Option<String>,
    /// Every verdict flip of this session, oldest first.
    pub flips: Vec<FlipEntry>,
    /// Sources of the captures whose verdict flipped this session.
    pub flipped: HashSet<String>,
    /// What the last schema or rules change did.
    pub contract_change: Option<ContractChange>,
    /// Whether the review pane (flips of the last contract change) is open.
    pub review: bool,
    /// The selected capture, deleted from disk (until the selection moves).
    pub gone: Option<Removed>,
    last_rebuild: Option<Instant>,
}

impl App {
    /// A new model for the workspace shown as `label`, on a terminal of `area`.
    pub fn new(label: impl Into<String>, workspace: Option<Arc<Workspace>>, area: Rect) -> App {
        App {
            label: label.into(),
            workspace,
            theme: Theme::default(),
            keymap: Keymap::default(),
            area,
            rows: Vec::new(),
            by_source: HashMap::new(),
            view: Vec::new(),
            cursor: 0,
            offset: 0,
            selected: None,
            filter: String::new(),
            editing: false,
            query: Query::parse(""),
            matcher: FuzzyMatcher::default(),
            triage: false,
            tree: Vec::new(),
            tree_cursor: 0,
            tree_offset: 0,
            focus: Focus::List,
            tab: Tab::Diff,
            detail: None,
            scroll: 0,
            error: 0,
            help: false,
            watch: WatchState::Off,
            progress: Progress::default(),
            summary: Summary::default(),
            warnings: 0,
            status: None,
            quit: false,
            requests: Vec::new(),
            effects: Vec::new(),
            generation: 0,
            pending: Vec::new(),
            last_change: None,
            flips: Vec::new(),
            flipped: HashSet::new(),
            contract_change: None,
            review: false,
            gone: None,
            last_rebuild: None,
        }
    }

    /// Asks for a full validation run (a new generation) and returns its generation.
    pub fn request_validation(&mut self, reload: bool) -> u64 {
        self.generation += 1;
        self.progress.generation = self.generation;
        self.progress.running = true;
        self.progress.done = 0;
        self.progress.total = 0;
        self.requests.push(Job::ValidateAll {
            generation: self.progress.generation,
            reload,
        });
        self.progress.generation
    }

    /// The selected entry.
    pub fn current(&self) -> Option<&Entry> {
        self.view.get(self.cursor).map(|&i| &self.rows[i])
    }

    /// Applies one message.
    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::Key(k) => self.key(k),
            Msg::Mouse(m) => self.mouse(m),
            Msg::Resize(w, h) => {
                self.area = Rect::new(0, 0, w, h);
                self.follow();
            }
            Msg::Engine(e) => self.engine(e),
            Msg::Watch(WatchEvent::Changed(paths)) => match self.watch {
                WatchState::Paused => {
                    self.pending.extend(paths);
                    self.pending.sort();
                    self.pending.dedup();
                }
                _ => self.submit_changes(paths),
            },
            Msg::Watch(WatchEvent::Error(m)) => {
                self.status = Some(format!(
                    "watcher: {}",
                    crate::core::text::escape_control(&m)
                ));
            }
        }
    }

    /// Asks the engine to apply a batch of changed paths (a new generation).
    fn submit_changes(&mut self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        self.generation += 1;
        self.requests.push(Job::Apply {
            generation: self.generation,
            paths,
        });
    }

    /// Inserts or replaces a capture's entry, unless the row holds a newer generation's
    /// result. Returns whether it was applied.
    fn put(&mut self, ev: Evaluation, generation: u64) -> bool {
        match self.by_source.get(&ev.verdict.source) {
            Some(&i) if self.rows[i].generation > generation => false,
            Some(&i) => {
                self.rows[i] = Entry {
                    hay: haystack(&ev),
                    ev,
                    generation,
                };
                true
            }
            None => {
                self.by_source
                    .insert(ev.verdict.source.clone(), self.rows.len());
                self.rows.push(Entry {
                    hay: haystack(&ev),
                    ev,
                    generation,
                });
                true
            }
        }
    }

    /// Removes a capture's entry (unless a newer generation put it there).
    fn remove(&mut self, source: &str, generation: u64) -> bool {
        let Some(&i) = self.by_source.get(source) else {
            return false;
        };
        if self.rows[i].generation > generation {
            return false;
        }
        self.by_source.remove(source);
        self.rows.swap_remove(i);
        if let Some(moved) = self.rows.get(i) {
            self.by_source.insert(moved.ev.verdict.source.clone(), i);
        }
        true
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
        updated: Vec<crate::engine::worker::Updated>,
        removed: Vec<Removed>,
    ) {
        self.workspace = Some(workspace);
        self.last_change = Some(at.clone());
        self.status = None;
        let mut new_flips = Vec::new();
        let mut touched = false;
        for u in updated {
            let source = u.evaluation.verdict.source.clone();
            let flip = u
                .previous
                .as_deref()
                .and_then(|p| crate::core::review::flip(p, &u.evaluation.verdict));
            if !self.put(u.evaluation, generation) {
                continue;
            }
            touched |= self.selected.as_deref() == Some(source.as_str());
            if let Some(flip) = flip {
                self.flipped.insert(source);
                new_flips.push(FlipEntry {
                    at: at.clone(),
                    flip,
                    cause: u.cause,
                });
            }
        }
        for r in removed {
            if self.remove(&r.source, generation) && self.selected.as_deref() == Some(&r.source) {
                self.gone = Some(r);
            }
        }
        self.flips.extend(new_flips.iter().cloned());
        if !contracts.is_empty() {
            self.contract_change = Some(ContractChange {
                contracts,
                at,
                causes,
                flips: new_flips,
            });
        }
        self.rebuild();
        if touched {
            self.refresh_detail();
        }
    }

    fn engine(&mut self, e: EngineEvent) {
        match e {
            EngineEvent::Started {
                generation,
                workspace,
                total,
            } => {
                if generation < self.progress.generation {
                    return;
                }
                self.progress.generation = generation;
                self.progress.total = total;
                self.progress.done = 0;
                self.progress.running = true;
                self.workspace = Some(workspace);
                self.status = None;
            }
            EngineEvent::Batch {
                generation,
                evaluations,
            } => {
                if generation < self.progress.generation {
                    return;
                }
                self.progress.done += evaluations.len();
                let selected = self.selected.clone();
                let mut touched = false;
                for ev in evaluations {
                    touched |= selected.as_deref() == Some(ev.verdict.source.as_str());
                    self.put(ev, generation);
                }
                let due = self
                    .last_rebuild
                    .is_none_or(|t| t.elapsed() > Duration::from_millis(150));
                if due || self.selected.is_none() {
                    self.rebuild();
                }
                if touched {
                    self.refresh_detail();
                }
            }
            EngineEvent::Finished {
                generation,
                elapsed,
            } => {
                if generation < self.progress.generation {
                    return;
                }
                self.progress.running = false;
                self.progress.elapsed = Some(elapsed);
                if self.rows.iter().any(|r| r.generation < generation) {
                    self.rows.retain(|r| r.generation >= generation);
                    self.by_source = self
                        .rows
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (r.ev.verdict.source.clone(), i))
                        .collect();
                }
                self.rebuild();
                self.refresh_detail();
            }
            EngineEvent::Applied {
                generation,
                workspace,
                at,
                causes,
                contracts,
                updated,
                removed,
            } => self.applied(
                generation, workspace, at, causes, contracts, updated, removed,
            ),
            EngineEvent::Failed {
                generation,
                message,
            } => {
                if generation < self.progress.generation {
                    return;
                }
                self.progress.running = false;
                self.status = Some(crate::core::text::escape_control(&message).into_owned());
            }
        }
    }

    /// Recomputes the filtered, sorted view, the counts and the triage tree, keeping the
    /// selection on the same capture.
    pub fn rebuild(&mut self) {
        self.last_rebuild = Some(Instant::now());
        let mut view: Vec<usize> = if self.query.is_empty() {
            (0..self.rows.len()).collect()
        } else {
            let (rows, q, m, flipped) = (&self.rows, &self.query, &mut self.matcher, &self.flipped);
            (0..rows.len())
                .filter(|&i| {
                    let f = flipped.contains(&rows[i].ev.verdict.source);
                    q.matches(&rows[i].ev, &rows[i].hay, f, m)
                })
                .collect()
        };
        let rows = &self.rows;
        view.sort_unstable_by(|&a, &b| {
            let (x, y) = (&rows[a].ev.verdict, &rows[b].ev.verdict);
            (x.decision, &x.id, &x.source).cmp(&(y.decision, &y.id, &y.source))
        });
        self.view = view;
        let before = self.selected.clone();
        match self.selected.as_deref().and_then(|s| {
            self.view
                .iter()
                .position(|&i| self.rows[i].ev.verdict.source == s)
        }) {
            Some(p) => self.cursor = p,
            None => {
                self.cursor = self.cursor.min(self.view.len().saturating_sub(1));
                self.selected = self.current().map(|e| e.ev.verdict.source.clone());
            }
        }
        let mut summary = Summary::default();
        let mut warnings = HashSet::new();
        for r in &self.rows {
            summary.add(&r.ev.verdict);
            for w in &r.ev.verdict.warnings {
                warnings.insert((&r.ev.verdict.contract, &w.code, &w.pointer, &w.message));
            }
        }
        self.warnings = warnings.len();
        self.summary = summary;
        if self.triage {
            self.build_tree();
        }
        if before != self.selected || self.detail.is_none() {
            self.refresh_detail();
        }
        self.follow();
    }

    /// Rebuilds the selected capture's detail and scrolls to its first error.
    fn refresh_detail(&mut self) {
        let detail = self
            .current()
            .map(|e| Detail::new(self.workspace.as_deref(), &e.ev));
        let changed_capture =
            detail.as_ref().map(|d| &d.source) != self.detail.as_ref().map(|d| &d.source);
        self.detail = detail;
        if changed_capture {
            self.error = 0;
        }
        let n = self.detail.as_ref().map_or(0, |d| d.errors.len());
        self.error = self.error.min(n.saturating_sub(1));
        self.scroll_to_error();
    }

    /// Scrolls the current tab so that the current error is in view.
    fn scroll_to_error(&mut self) {
        let Some(d) = &self.detail else {
            self.scroll = 0;
            return;
        };
        let target = match self.tab {
            Tab::Proposal => d.proposal.as_ref().ok().and_then(|j| j.target(self.error)),
            Tab::Raw => d
                .raw
                .as_ref()
                .ok()
                .and_then(|r| ui::raw_rows(r, ui::layout(self).content.width).1),
            Tab::Contract => d
                .contract
                .as_ref()
                .ok()
                .and_then(|c| c.schema.target(self.error).map(|x| x + c.rules.len() + 2)),
            _ => None,
        };
        let h = ui::layout(self).content.height as usize;
        self.scroll = match target {
            Some(t) if t + 2 > h => t.saturating_sub(h / 3),
            _ => 0,
        };
    }

    /// Keeps the selection inside the visible rows of the list and the tree.
    fn follow(&mut self) {
        let h = (ui::layout(self).list.height as usize)
            .saturating_sub(2)
            .max(1);
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + h {
            self.offset = self.cursor + 1 - h;
        }
        self.offset = self
            .offset
            .min(self.view.len().saturating_sub(h))
            .min(self.cursor);
        if self.tree_cursor < self.tree_offset {
            self.tree_offset = self.tree_cursor;
        } else if self.tree_cursor >= self.tree_offset + h {
            self.tree_offset = self.tree_cursor + 1 - h;
        }
    }

    fn set_filter(&mut self, text: String) {
        self.filter = text;
        self.query = Query::parse(&self.filter);
        let before = self.selected.clone();
        self.rebuild();
        if self.selected != before {
            // the selected capture was filtered out: start at the top of the new list
            self.select(0);
        }
    }

    /// Builds the triage tree: stage > reason > pointer; stages in pipeline order, reasons
    /// and pointers within a stage largest first.
    pub fn build_tree(&mut self) {
        type Pointers = BTreeMap<String, usize>;
        type Reasons = BTreeMap<String, (usize, Pointers)>;
        let mut stages: BTreeMap<Stage, (usize, Reasons)> = BTreeMap::new();
        for r in &self.rows {
            let v = &r.ev.verdict;
            let s = stages.entry(v.stage).or_default();
            s.0 += 1;
            let Some(reason) = &v.reason else { continue };
            let rr = s.1.entry(reason.as_str().to_string()).or_default();
            rr.0 += 1;
            let ptrs: HashSet<&str> = v
                .errors
                .iter()
                .filter_map(|f| f.pointer.as_deref())
                .collect();
            for p in ptrs {
                *rr.1.entry(p.to_string()).or_default() += 1;
            }
        }
        let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
        let mut tree = Vec::new();
        let mut stage_list: Vec<_> = stages.into_iter().collect();
        // stages in pipeline order (input < response < parse < schema < business < ready)
        stage_list.sort_by_key(|s| s.0);
        for (stage, (count, reasons)) in stage_list {
            tree.push(TriageNode {
                depth: 0,
                label: stage.as_str().to_string(),
                count,
                query: format!("stage:{stage}"),
                stage,
            });
            let mut reasons: Vec<_> = reasons.into_iter().collect();
            reasons.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
            for (reason, (count, ptrs)) in reasons {
                let rq = format!("stage:{stage} reason:{reason}");
                tree.push(TriageNode {
                    depth: 1,
                    label: esc(&reason),
                    count,
                    query: rq.clone(),
                    stage,
                });
                let mut ptrs: Vec<_> = ptrs.into_iter().collect();
                ptrs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                for (p, count) in ptrs {
                    let label = pointer_label(&p);
                    let query = if label.chars().any(char::is_whitespace) {
                        rq.clone()
                    } else {
                        format!("{rq} pointer:{label}")
                    };
                    tree.push(TriageNode {
                        depth: 2,
                        label: esc(label),
                        count,
                        query,
                        stage,
                    });
                }
            }
        }
        self.tree = tree;
        self.tree_cursor = self.tree_cursor.min(self.tree.len().saturating_sub(1));
    }

    fn key(&mut self, k: KeyEvent) {
        if self.help || self.review {
            // any key closes the overlay; `q` and Ctrl-C still quit
            if matches!(self.keymap.lookup(&k), Some(Action::Quit)) && !self.editing {
                self.quit = true;
            }
            self.help = false;
            self.review = false;
            return;
        }
        if self.editing {
            match k.code {
                KeyCode::Esc => {
                    self.editing = false;
                    self.set_filter(String::new());
                }
                KeyCode::Enter => self.editing = false,
                KeyCode::Backspace => {
                    let mut f = self.filter.clone();
                    f.pop();
                    self.set_filter(f);
                }
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.quit = true
                }
                KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.set_filter(String::new())
                }
                KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                    let mut f = self.filter.clone();
                    f.push(c);
                    self.set_filter(f);
                }
                KeyCode::Down | KeyCode::Up => {
                    if let Some(a) = self.keymap.lookup(&k) {
                        self.action(a);
                    }
                }
                _ => {}
            }
            return;
        }
        if let Some(a) = self.keymap.lookup(&k) {
            self.action(a);
        }
    }

    /// Applies one keymap action.
    pub fn action(&mut self, a: Action) {
        let page = (ui::layout(self).list.height as usize)
            .saturating_sub(3)
            .max(1);
        let detail = self.focus == Focus::Detail;
        match a {
            Action::Down if detail => self.scroll += 1,
            Action::Up if detail => self.scroll = self.scroll.saturating_sub(1),
            Action::PageDown if detail => self.scroll += page,
            Action::PageUp if detail => self.scroll = self.scroll.saturating_sub(page),
            Action::First if detail => self.scroll = 0,
            Action::Last if detail => self.scroll = usize::MAX / 2,
            Action::Down => self.move_by(1),
            Action::Up => self.move_by(-1),
            Action::PageDown => self.move_by(page as isize),
            Action::PageUp => self.move_by(-(page as isize)),
            Action::First => self.move_by(isize::MIN / 2),
            Action::Last => self.move_by(isize::MAX / 2),
            Action::NextPane | Action::PrevPane => {
                self.focus = match self.focus {
                    Focus::List => Focus::Detail,
                    Focus::Detail => Focus::List,
                }
            }
            Action::ShowTab(t) => {
                self.tab = t;
                self.scroll_to_error();
            }
            Action::Filter => {
                self.triage = false;
                self.focus = Focus::List;
                self.editing = true;
            }
            Action::Clear => {
                if self.triage {
                    self.triage = false;
                } else if !self.filter.is_empty() {
                    self.set_filter(String::new());
                } else {
                    self.focus = Focus::List;
                }
            }
            Action::Triage => {
                self.triage = !self.triage;
                if self.triage {
                    self.focus = Focus::List;
                    self.build_tree();
                    self.follow();
                }
            }
            Action::Open => {
                if self.triage {
                    if let Some(n) = self.tree.get(self.tree_cursor) {
                        let q = n.query.clone();
                        self.triage = false;
                        self.cursor = 0;
                        self.selected = None;
                        self.set_filter(q);
                    }
                } else {
                    self.focus = Focus::Detail;
                }
            }
            Action::NextError | Action::PrevError => {
                let n = self.detail.as_ref().map_or(0, |d| d.errors.len());
                if n > 0 {
                    self.error = if a == Action::NextError {
                        (self.error + 1) % n
                    } else {
                        (self.error + n - 1) % n
                    };
                    if !matches!(self.tab, Tab::Proposal | Tab::Raw | Tab::Contract) {
                        self.tab = Tab::Proposal;
                    }
                    self.scroll_to_error();
                }
            }
            Action::Revalidate => {
                self.request_validation(true);
            }
            Action::Pause => match self.watch {
                WatchState::Live => self.watch = WatchState::Paused,
                WatchState::Paused => {
                    self.watch = WatchState::Live;
                    let paths = std::mem::take(&mut self.pending);
                    self.submit_changes(paths);
                }
                WatchState::Off => self.status = Some("not watching this workspace".into()),
            },
            Action::Copy => self.copy(),
            Action::Edit => self.edit(),
            Action::Review => self.review = true,
            Action::Help => self.help = true,
            Action::Quit => self.quit = true,
        }
    }

    /// Copies the current error's pointer, or on the Feedback tab the feedback text.
    fn copy(&mut self) {
        let Some(e) = self.current() else { return };
        let (text, what) = if self.tab == Tab::Feedback {
            match self.detail.as_ref().and_then(|d| d.feedback_text.clone()) {
                Some(t) => (t, "the feedback".to_string()),
                None => {
                    self.status = Some("no feedback to copy".into());
                    return;
                }
            }
        } else {
            match e
                .ev
                .verdict
                .errors
                .get(self.error)
                .and_then(|f| f.pointer.clone())
            {
                Some(p) => {
                    let shown = crate::core::text::escape_control(pointer_label(&p)).into_owned();
                    (p, shown)
                }
                None => {
                    self.status = Some("this error has no pointer to copy".into());
                    return;
                }
            }
        };
        self.effects.push(Effect::Copy(text));
        self.status = Some(format!("copied {what} to the clipboard (OSC 52)"));
    }

    /// Asks the event loop to open the selected capture in `$EDITOR`.
    fn edit(&mut self) {
        let (Some(e), Some(ws)) = (self.current(), self.workspace.as_ref()) else {
            return;
        };
        let source = &e.ev.verdict.source;
        let file = crate::engine::session::file_of(source);
        let line = source[file.len()..]
            .strip_prefix(':')
            .and_then(|l| l.parse().ok())
            .unwrap_or(1);
        let path = ws.root.join(file);
        self.effects.push(Effect::Edit { path, line });
    }

    fn move_by(&mut self, mut delta: isize) {
        if self.gone.take().is_some() && delta > 0 {
            // the deleted row's neighbour took its place: the first step lands on it
            delta -= 1;
        }
        if self.triage {
            let n = self.tree.len();
            if n > 0 {
                self.tree_cursor = self.tree_cursor.saturating_add_signed(delta).min(n - 1);
            }
            self.follow();
            return;
        }
        let n = self.view.len();
        if n == 0 {
            return;
        }
        let c = self.cursor.saturating_add_signed(delta).min(n - 1);
        self.select(c);
    }

    /// Selects position `pos` of the view.
    pub fn select(&mut self, pos: usize) {
        if self.view.is_empty() {
            return;
        }
        self.cursor = pos.min(self.view.len() - 1);
        self.gone = None;
        let s = self.current().map(|e| e.ev.verdict.source.clone());
        if s != self.selected {
            self.selected = s;
            self.refresh_detail();
        }
        self.follow();
    }

    fn mouse(&mut self, m: MouseEvent) {
        let l = ui::layout(self);
        let at = Position::new(m.column, m.row);
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if l.list.contains(at) {
                    self.focus = Focus::List;
                    let row = m.row.saturating_sub(l.list.y + 1) as usize;
                    if self.triage {
                        let i = self.tree_offset + row;
                        if i < self.tree.len() {
                            self.tree_cursor = i;
                        }
                    } else if m.row > l.list.y {
                        self.select(self.offset + row);
                    }
                } else if l.tabs.contains(at) {
                    if let Some(t) = ui::tab_at(l.tabs, m.column, self.tab) {
                        self.action(Action::ShowTab(t));
                    }
                    self.focus = Focus::Detail;
                } else if l.detail.contains(at) {
                    self.focus = Focus::Detail;
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
                    self.scroll = self.scroll.saturating_add_signed(d);
                }
            }
            _ => {}
        }
    }
}
