//! The model: one [`App`] holds every piece of state; [`App::update`] applies one
//! message (a key, a mouse event, a resize, an engine event). Nothing here draws or
//! touches the terminal, and nothing in the drawing code changes the model.

use crate::core::pipeline::Evaluation;
use crate::core::review::{Flip, FlipKind};
use crate::core::summary::Summary;
use crate::core::verdict::Stage;
use crate::core::workspace::Workspace;
use crate::engine::summary::CaptureSummary;
use crate::engine::watcher::WatchEvent;
use crate::engine::worker::Removed;
use crate::engine::{EngineEvent, Job};
use crate::tui::detail::Detail;
use crate::tui::filter::{FuzzyMatcher, Query, narrows, pointer_label, write_haystack};
use crate::tui::keymap::{Action, Keymap, Tab};
use crate::tui::store::{FLIPPED, Put, Row, Store};
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

/// The fuzzy filter's fast path over a row's haystack pieces without writing the
/// haystack: for plain ASCII words, how far each word gets through the pieces shared by
/// many rows (the reason of an outcome, a pointer set, a file name) is worked out once per
/// query; per row only the id, the message and the line number are scanned.
struct FastText<'a> {
    words: &'a [Vec<u8>],
    /// Per word, per outcome: the word position after the reason, for each start position
    /// (`None`: the piece is not ASCII, use the slow path).
    kind: Vec<Vec<Option<Vec<u16>>>>,
    /// The same for the pointer sets (the pointers in order).
    pset: Vec<Vec<Option<Vec<u16>>>>,
    /// The same for the file names.
    file: Vec<Vec<Option<Vec<u16>>>>,
}

impl<'a> FastText<'a> {
    fn new(words: &'a [Vec<u8>], store: &Store) -> FastText<'a> {
        let table = |w: &[u8], pieces: &[&str]| -> Option<Vec<u16>> {
            if !pieces.iter().all(|p| p.is_ascii()) || w.len() >= u16::MAX as usize {
                return None;
            }
            Some(
                (0..=w.len())
                    .map(|k| {
                        pieces
                            .iter()
                            .fold(k, |k, p| crate::tui::filter::advance(w, k, p.as_bytes()))
                            as u16
                    })
                    .collect(),
            )
        };
        FastText {
            words,
            kind: words
                .iter()
                .map(|w| {
                    store
                        .kinds
                        .iter()
                        .map(|k| table(w, &[k.reason.as_ref().map_or("", |r| r.as_str())]))
                        .collect()
                })
                .collect(),
            pset: words
                .iter()
                .map(|w| {
                    store
                        .psets
                        .iter()
                        .map(|p| {
                            let v: Vec<&str> = p.iter().map(String::as_str).collect();
                            table(w, &v)
                        })
                        .collect()
                })
                .collect(),
            file: words
                .iter()
                .map(|w| store.files.iter().map(|f| table(w, &[f])).collect())
                .collect(),
        }
    }

    /// Whether every word matches the row's haystack; `None` when a piece is not ASCII.
    fn matches(&self, store: &Store, r: &Row) -> Option<bool> {
        use crate::tui::filter::advance;
        let id = store.id(r).as_bytes();
        let msg = store.message(r).unwrap_or("").as_bytes();
        if !id.is_ascii() || !msg.is_ascii() {
            return None;
        }
        let mut digits = [0u8; 10];
        let mut n = 0;
        if r.line > 0 {
            let mut l = r.line;
            while l > 0 {
                digits[9 - n] = b'0' + (l % 10) as u8;
                l /= 10;
                n += 1;
            }
        }
        let line = &digits[10 - n..];
        for (i, w) in self.words.iter().enumerate() {
            let mut k = advance(w, 0, id);
            k = self.kind[i][r.kind as usize].as_ref()?[k] as usize;
            k = self.pset[i][r.pointers as usize].as_ref()?[k] as usize;
            k = advance(w, k, msg);
            k = self.file[i][r.file as usize].as_ref()?[k] as usize;
            if r.line > 0 {
                k = advance(w, k, b":");
                k = advance(w, k, line);
            }
            if k < w.len() {
                return Some(false);
            }
        }
        Some(true)
    }
}

/// How long one slice of filtering may take (a keypress's frame stays under 16 ms).
pub const FILTER_SLICE: Duration = Duration::from_millis(6);

/// A filter over many rows, done in slices between frames.
#[derive(Debug)]
struct PendingFilter {
    /// The rows to test, in list order.
    from: Vec<u32>,
    /// How many of them are done.
    pos: usize,
    /// The filter text.
    text: String,
    /// See [`App::start_filter`].
    top_if_lost: bool,
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
    /// Every capture, compact, in arrival order.
    pub store: Store,
    /// Every row index, sorted by severity then id then source (rows not merged yet are in
    /// `unsorted`).
    order: Vec<u32>,
    /// Rows new or moved since `order` was last merged.
    unsorted: Vec<u32>,
    /// `order` must be sorted again from scratch (rows were removed).
    order_stale: bool,
    /// Indices into `store.rows` that pass the filter, sorted by severity then id.
    pub view: Vec<u32>,
    /// The filter text `view` was computed for (from the current rows), for narrowing.
    view_filter: Option<String>,
    /// A filter still running (the view holds the matches so far).
    pending_filter: Option<PendingFilter>,
    /// Row-index buffers to reuse.
    spare: Vec<Vec<u32>>,
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
    /// The selected capture's detail (`None` while it loads).
    pub detail: Option<Detail>,
    /// The full evaluation the detail was built from (re-read from disk).
    pub shown: Option<Box<Evaluation>>,
    /// The source whose evaluation was asked for and has not arrived.
    pub loading: Option<String>,
    /// The source of the selected capture when its record was no longer on disk.
    pub missing: Option<String>,
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
    /// Sources of the captures whose verdict flipped this session (their rows are also
    /// flagged [`FLIPPED`]).
    pub flipped: HashSet<String>,
    /// What the last schema or rules change did.
    pub contract_change: Option<ContractChange>,
    /// Whether the review pane (flips of the last contract change) is open.
    pub review: bool,
    /// The selected capture, deleted from disk (until the selection moves).
    pub gone: Option<Removed>,
    last_rebuild: Option<Instant>,
    /// Scratch buffer for fuzzy haystacks.
    hay: String,
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
            store: Store::default(),
            order: Vec::new(),
            unsorted: Vec::new(),
            order_stale: false,
            view: Vec::new(),
            view_filter: None,
            pending_filter: None,
            spare: Vec::new(),
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
            shown: None,
            loading: None,
            missing: None,
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
            hay: String::new(),
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

    /// The selected row.
    pub fn current(&self) -> Option<&Row> {
        self.view
            .get(self.cursor)
            .map(|&i| &self.store.rows[i as usize])
    }

    /// The id of the capture at position `pos` of the view.
    pub fn id_at(&self, pos: usize) -> Option<&str> {
        let r = &self.store.rows[*self.view.get(pos)? as usize];
        Some(self.store.id(r))
    }

    /// The selected capture's id.
    pub fn current_id(&self) -> Option<&str> {
        self.id_at(self.cursor)
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

    /// Inserts or replaces a capture's row, unless the row holds a newer generation's
    /// result. Returns the row when applied.
    fn put(&mut self, s: &CaptureSummary, generation: u64) -> Option<usize> {
        match self.store.put(s, generation) {
            Put::Stale => None,
            Put::Inserted(i) => {
                if !self.flipped.is_empty() && self.flipped.contains(&s.loc.source()) {
                    self.store.rows[i].flags |= FLIPPED;
                }
                self.unsorted.push(i as u32);
                Some(i)
            }
            Put::Replaced { index, moved } => {
                if moved {
                    self.unsorted.push(index as u32);
                }
                Some(index)
            }
        }
    }

    /// Removes a capture's row (unless a newer generation put it there).
    fn remove(&mut self, source: &str, generation: u64) -> bool {
        let Some(i) = self.store.find_source(source) else {
            return false;
        };
        if self.store.rows[i].generation > generation as u32 {
            return false;
        }
        self.store.swap_remove(i);
        self.order_stale = true;
        true
    }

    /// The row of the selected capture.
    fn selected_row(&self) -> Option<usize> {
        self.store.find_source(self.selected.as_deref()?)
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
        // the selected capture, by file and id: if a line above it is deleted or inserted,
        // its source changes and the selection follows it instead of staying on the line
        let followed: Option<(String, String)> = self.selected.as_ref().and_then(|sel| {
            let r = self.store.rows[self.store.find_source(sel)?];
            Some((
                self.store.file(&r).to_string(),
                self.store.id(&r).to_string(),
            ))
        });
        let mut new_flips = Vec::new();
        let mut touched = false;
        let mut fresh = None;
        for u in updated {
            let s = &u.summary;
            let source = s.loc.source();
            let old = self.store.find_source(&source).map(|i| self.store.rows[i]);
            if old.is_some_and(|r| r.generation > generation as u32) {
                continue;
            }
            let flip = u.previous.as_ref().and_then(|prev| {
                let new = crate::tui::store::Kind::of(s).outcome();
                let kind = crate::core::review::flip_kind(prev, &new)?;
                let cause = match &s.reason {
                    Some(reason) => {
                        let mut f = crate::core::verdict::Finding::new(
                            s.stage,
                            reason.clone(),
                            s.message.clone().unwrap_or_default(),
                        )
                        .with_decision(s.decision);
                        if s.first_has_pointer {
                            f = f.with_pointer(s.pointers[0].clone());
                        }
                        Some(f)
                    }
                    None => old.and_then(|r| self.store.first_error(&r)),
                };
                Some(Flip {
                    id: s.id.clone(),
                    source: s.loc.record_ref(),
                    contract: s
                        .contract
                        .clone()
                        .or_else(|| old.and_then(|r| self.store.kind(&r).contract.clone())),
                    kind,
                    old: prev.clone(),
                    new,
                    cause,
                })
            });
            let Some(i) = self.put(s, generation) else {
                continue;
            };
            if self.selected.as_deref() == Some(source.as_str()) {
                touched = true;
                fresh = u.evaluation;
            }
            if let Some(flip) = flip {
                self.store.rows[i].flags |= FLIPPED;
                self.flipped.insert(source);
                new_flips.push(FlipEntry {
                    at: at.clone(),
                    flip,
                    cause: u.cause,
                });
            }
        }
        for mut r in removed {
            if r.id.is_empty()
                && let Some(i) = self.store.find_source(&r.source)
            {
                r.id = self.store.id(&self.store.rows[i]).to_string();
            }
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
        if let (Some((file, id)), Some(sel)) = (&followed, self.selected.clone()) {
            let same = self
                .store
                .find_source(&sel)
                .is_some_and(|i| self.store.id(&self.store.rows[i]) == id);
            let moved = (!same)
                .then(|| {
                    self.store.rows.iter().find(|r| {
                        self.store.file(r) == file.as_str() && self.store.id(r) == id.as_str()
                    })
                })
                .flatten()
                .map(|r| self.store.source(r));
            if let Some(source) = moved {
                self.selected = Some(source);
                self.gone = None;
                touched = true;
                fresh = None;
            }
        }
        if touched {
            // the shown capture changed: its fresh evaluation came along, or it is re-read
            self.shown = fresh;
            self.missing = None;
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
                self.store.reserve(total.saturating_sub(self.store.len()));
            }
            EngineEvent::Batch {
                generation,
                captures,
            } => {
                if generation < self.progress.generation {
                    return;
                }
                self.progress.done += captures.len();
                let selected = self.selected_row();
                let mut touched = false;
                for s in &captures {
                    let i = self.put(s, generation);
                    touched |= i.is_some() && i == selected;
                }
                let due = self
                    .last_rebuild
                    .is_none_or(|t| t.elapsed() > Duration::from_millis(150));
                if due || self.selected.is_none() {
                    self.rebuild();
                }
                if touched {
                    self.shown = None;
                    self.missing = None;
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
                let g = generation as u32;
                if self.store.rows.iter().any(|r| r.generation < g) {
                    self.store.retain(|r| r.generation >= g);
                    self.order_stale = true;
                }
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
            EngineEvent::Loaded { source, evaluation } => {
                if self.loading.as_deref() != Some(source.as_str()) {
                    return;
                }
                self.loading = None;
                if evaluation.is_none() {
                    self.detail = None;
                    self.missing = Some(source);
                }
                self.shown = evaluation;
                self.refresh_detail();
            }
        }
    }

    /// Brings `order` up to date: a full sort when rows were removed, else the new and
    /// moved rows sorted and merged in (linear in the list).
    fn sort_rows(&mut self) {
        if self.order_stale || self.order.len() + self.unsorted.len() < self.store.len() {
            let mut order = self.buffer();
            order.extend(0..self.store.len() as u32);
            let store = &self.store;
            order.sort_unstable_by(|&a, &b| store.cmp(a as usize, b as usize));
            let old = std::mem::replace(&mut self.order, order);
            self.recycle(old);
            self.unsorted.clear();
            self.order_stale = false;
            return;
        }
        if self.unsorted.is_empty() {
            return;
        }
        let mut fresh = std::mem::take(&mut self.unsorted);
        fresh.sort_unstable();
        fresh.dedup();
        let n = self.store.len();
        if self.order.len() + fresh.len() > n {
            // some rows moved: take them out first
            let mut mark = vec![false; n];
            for &i in &fresh {
                mark[i as usize] = true;
            }
            self.order.retain(|&i| !mark[i as usize]);
        }
        let mut out = self.buffer();
        let store = &self.store;
        fresh.sort_unstable_by(|&a, &b| store.cmp(a as usize, b as usize));
        let old = &self.order;
        out.reserve(old.len() + fresh.len());
        let (mut i, mut j) = (0, 0);
        while i < old.len() && j < fresh.len() {
            if store.cmp(old[i] as usize, fresh[j] as usize) == std::cmp::Ordering::Greater {
                out.push(fresh[j]);
                j += 1;
            } else {
                out.push(old[i]);
                i += 1;
            }
        }
        out.extend_from_slice(&old[i..]);
        out.extend_from_slice(&fresh[j..]);
        let old = std::mem::replace(&mut self.order, out);
        self.recycle(old);
    }

    /// An empty row-index buffer (a recycled one when there is one: the lists of a million
    /// rows are rebuilt often, and reusing their buffers keeps the allocator from
    /// scattering them).
    fn buffer(&mut self) -> Vec<u32> {
        self.spare.pop().unwrap_or_default()
    }

    /// Keeps a row-index buffer for [`App::buffer`].
    fn recycle(&mut self, mut v: Vec<u32>) {
        if self.spare.len() < 3 && v.capacity() > 0 {
            v.clear();
            self.spare.push(v);
        }
    }

    /// Filters `from` (row indices in list order) with the current query.
    fn filter_rows(&mut self, from: &[u32]) -> Vec<u32> {
        let (store, q, m, hay) = (&self.store, &self.query, &mut self.matcher, &mut self.hay);
        // the tokens depend only on a row's outcome and pointer set: decide each once
        let kind_ok: Vec<bool> = store
            .kinds
            .iter()
            .map(|k| {
                q.kind_matches(
                    k.stage,
                    k.decision,
                    k.reason.as_ref().map(|r| r.as_str()),
                    k.contract.as_deref(),
                )
            })
            .collect();
        let pset_ok: Vec<bool> = store.psets.iter().map(|p| q.pointers_match(p)).collect();
        let text = q.has_text();
        let fast = q.plain_words().map(|w| FastText::new(w, store));
        from.iter()
            .copied()
            .filter(|&i| {
                let r = &store.rows[i as usize];
                if !kind_ok[r.kind as usize] || !pset_ok[r.pointers as usize] {
                    return false;
                }
                let k = store.kind(r);
                if !q.flags_match(r.flags & FLIPPED != 0, k.unmet()) {
                    return false;
                }
                if !text {
                    return true;
                }
                if let Some(hit) = fast.as_ref().and_then(|f| f.matches(store, r)) {
                    return hit;
                }
                write_haystack(
                    hay,
                    store.id(r),
                    k.reason.as_ref().map(|r| r.as_str()),
                    store.pointers(r),
                    store.message(r),
                    |o| store.write_source(r, o),
                );
                q.text_matches(hay, m)
            })
            .collect()
    }

    /// Recomputes the view from the sorted rows (or, when the filter only narrowed,
    /// from the previous view), keeping the selection on the same capture.
    fn refilter(&mut self) {
        self.start_filter(false);
    }

    /// Starts filtering for the current query: at once when there is no query, else in
    /// slices of [`FILTER_SLICE`] (the first one here; [`App::work`] does the rest between
    /// frames, the view growing as matches are found). `top_if_lost`: when the selected
    /// capture is filtered out, select the first row (a new filter), rather than the row
    /// at the cursor.
    fn start_filter(&mut self, top_if_lost: bool) {
        let pending = self.pending_filter.take();
        if self.query.is_empty() {
            let mut view = self.buffer();
            view.extend_from_slice(&self.order);
            let old = std::mem::replace(&mut self.view, view);
            self.recycle(old);
            if let Some(p) = pending {
                self.recycle(p.from);
            }
            self.view_filter = Some(self.filter.clone());
            self.finish_filter(top_if_lost);
            return;
        }
        let from = match (pending, self.view_filter.as_deref()) {
            (Some(p), _) if narrows(&p.text, &self.filter) => {
                let mut v = std::mem::take(&mut self.view);
                v.extend_from_slice(&p.from[p.pos..]);
                self.recycle(p.from);
                v
            }
            (None, Some(old)) if narrows(old, &self.filter) => std::mem::take(&mut self.view),
            (p, _) => {
                if let Some(p) = p {
                    self.recycle(p.from);
                }
                let old = std::mem::take(&mut self.view);
                self.recycle(old);
                let mut v = self.buffer();
                v.extend_from_slice(&self.order);
                v
            }
        };
        self.view = self.buffer();
        self.view_filter = None;
        self.pending_filter = Some(PendingFilter {
            from,
            pos: 0,
            text: self.filter.clone(),
            top_if_lost,
        });
        self.work(FILTER_SLICE);
    }

    /// Whether a filter is still running ([`App::work`] goes on with it).
    pub fn busy(&self) -> bool {
        self.pending_filter.is_some()
    }

    /// How far the running filter is, in percent.
    pub fn filter_progress(&self) -> Option<usize> {
        self.pending_filter
            .as_ref()
            .map(|p| p.pos * 100 / p.from.len().max(1))
    }

    /// Goes on with a running filter for about `budget`; returns whether work remains.
    pub fn work(&mut self, budget: Duration) -> bool {
        let Some(mut p) = self.pending_filter.take() else {
            return false;
        };
        let start = Instant::now();
        loop {
            let end = (p.pos + 4096).min(p.from.len());
            let found = self.filter_rows(&p.from[p.pos..end]);
            self.view.extend(found);
            p.pos = end;
            if p.pos == p.from.len() {
                break;
            }
            if start.elapsed() >= budget {
                // partial: the selection stays; the cursor follows it if it was found
                let sel = self.selected_row().map(|i| i as u32);
                if let Some(c) = sel.and_then(|s| self.view.iter().position(|&i| i == s)) {
                    self.cursor = c;
                }
                self.pending_filter = Some(p);
                self.follow();
                return true;
            }
        }
        self.view_filter = Some(p.text);
        self.recycle(p.from);
        self.finish_filter(p.top_if_lost);
        false
    }

    /// Puts the cursor on the selected capture in the finished view (or, when it was
    /// filtered out, on the first row or the row at the cursor) and refreshes the detail.
    fn finish_filter(&mut self, top_if_lost: bool) {
        let before = self.selected.clone();
        let sel = self.selected_row().map(|i| i as u32);
        match sel.and_then(|s| self.view.iter().position(|&i| i == s)) {
            Some(p) => self.cursor = p,
            None => {
                if top_if_lost {
                    self.cursor = 0;
                }
                self.cursor = self.cursor.min(self.view.len().saturating_sub(1));
                self.selected = self.current().map(|r| self.store.source(r));
            }
        }
        if before != self.selected {
            if top_if_lost {
                self.gone = None;
            }
            self.refresh_detail();
        } else if self.detail.is_none() && self.loading.is_none() {
            self.refresh_detail();
        }
        self.follow();
    }

    /// Recomputes the sorted rows, the filtered view, the counts and the triage tree,
    /// keeping the selection on the same capture.
    pub fn rebuild(&mut self) {
        self.last_rebuild = Some(Instant::now());
        self.sort_rows();
        // counts: rows per outcome, then the funnel and the warnings of the contracts used
        let mut per_kind = vec![0usize; self.store.kinds.len()];
        for r in &self.store.rows {
            per_kind[r.kind as usize] += 1;
        }
        let mut summary = Summary::default();
        let mut warnings = HashSet::new();
        let mut contracts = HashSet::new();
        for (k, &n) in self.store.kinds.iter().zip(&per_kind) {
            if n == 0 {
                continue;
            }
            summary.add_outcomes(k.stage, k.decision, k.expect, n);
            if let Some(c) = &k.contract {
                contracts.insert(c.as_str());
            }
        }
        if let Some(ws) = &self.workspace {
            for c in contracts {
                if let Some(contract) = ws.contracts.get(c) {
                    for w in contract.warnings() {
                        warnings.insert((c, w.code, w.pointer, w.message));
                    }
                }
            }
        }
        self.warnings = warnings.len();
        self.summary = summary;
        if self.triage {
            self.build_tree();
        }
        // rows changed: filter from the sorted rows, never from the previous view
        self.view_filter = None;
        self.pending_filter = None;
        self.refilter();
    }

    /// Rebuilds the selected capture's detail from its loaded evaluation, or asks the
    /// engine to load it (the detail shows a placeholder until it arrives).
    fn refresh_detail(&mut self) {
        let Some(row) = self.current().copied() else {
            self.detail = None;
            self.shown = None;
            self.loading = None;
            return;
        };
        let source = self.store.source(&row);
        let ready = self
            .shown
            .as_ref()
            .is_some_and(|e| e.verdict.source == source);
        if !ready {
            if self.missing.as_deref() == Some(source.as_str()) {
                // the record was gone when loaded: wait for the re-validation
                return;
            }
            self.missing = None;
            if self.loading.as_deref() != Some(source.as_str()) {
                self.requests.push(Job::Load {
                    source: source.clone(),
                    loc: self.store.locator(&row),
                });
                self.loading = Some(source.clone());
            }
            if self.detail.as_ref().is_some_and(|d| d.source != source) {
                self.detail = None;
            }
            return;
        }
        let detail = self
            .shown
            .as_ref()
            .map(|e| Detail::new(self.workspace.as_deref(), e));
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
        // the selected capture filtered out: start at the top of the new list
        self.start_filter(true);
    }

    /// Builds the triage tree: stage > reason > pointer; stages in pipeline order, reasons
    /// and pointers within a stage largest first.
    pub fn build_tree(&mut self) {
        type Pointers = BTreeMap<String, usize>;
        type Reasons = BTreeMap<String, (usize, Pointers)>;
        let mut stages: BTreeMap<Stage, (usize, Reasons)> = BTreeMap::new();
        // rows counted by (outcome, pointer set) first: a log has few distinct pairs
        let mut pairs: HashMap<(u32, u32), usize> = HashMap::new();
        for r in &self.store.rows {
            *pairs.entry((r.kind, r.pointers)).or_default() += 1;
        }
        for ((kind, pset), n) in pairs {
            let k = &self.store.kinds[kind as usize];
            let s = stages.entry(k.stage).or_default();
            s.0 += n;
            let Some(reason) = &k.reason else { continue };
            let rr = s.1.entry(reason.as_str().to_string()).or_default();
            rr.0 += n;
            for p in &self.store.psets[pset as usize] {
                *rr.1.entry(p.to_string()).or_default() += n;
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
        if self.current().is_none() {
            return;
        }
        let (text, what) = if self.tab == Tab::Feedback {
            match self.detail.as_ref().and_then(|d| d.feedback_text.clone()) {
                Some(t) => (t, "the feedback".to_string()),
                None => {
                    self.status = Some("no feedback to copy".into());
                    return;
                }
            }
        } else {
            let Some(e) = self
                .shown
                .as_ref()
                .filter(|e| Some(e.verdict.source.as_str()) == self.selected.as_deref())
            else {
                self.status = Some("the capture is still loading".into());
                return;
            };
            match e
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
        let (Some(r), Some(ws)) = (self.current(), self.workspace.as_ref()) else {
            return;
        };
        let line = if r.line > 0 { r.line as usize } else { 1 };
        let path = ws.root.join(self.store.file(r));
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
        let s = self.current().map(|r| self.store.source(r));
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
