//! Screen tests: the model driven with synthetic messages (no terminal, no threads; the
//! evaluations are computed here and fed in as engine events), drawn on a `TestBackend`
//! and compared with insta snapshots. The shared helpers are here, the tests in one module
//! per screen region.

use super::app::{App, DetailState, Mode, Msg, Overlay};
use super::keymap::Tab;
use super::ui;
use crate::core::pipeline::Evaluation;
use crate::core::review::Outcome;
use crate::core::verdict::Verdict;
use crate::core::workspace::Workspace;
use crate::engine::summary::CaptureSummary;
use crate::engine::worker::Updated;
use crate::engine::{EngineEvent, Job};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Asserts an insta snapshot of `$value` under the name it has had since every screen test
/// lived in this module: `src/tui/snapshots/verdict__tui__tests__$name.snap`, whichever
/// submodule asserts it (`$name` is the test's name).
macro_rules! assert_screen_snapshot {
    ($name:literal, $value:expr) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/src/tui/snapshots"),
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(concat!("verdict__tui__tests__", $name), $value)
        })
    };
}

mod chains;
mod detail;
mod effects;
mod history;
mod hostile;
mod list;
mod overlays;
mod pending;
mod repair;
mod screen;
mod triage;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

fn evaluate_all(ws: &Workspace) -> Vec<Evaluation> {
    ws.capture_files()
        .iter()
        .flat_map(|f| ws.read_file(f))
        .filter_map(|r| ws.evaluate(&r))
        .collect()
}

/// An app on `root` (named `label` in the header) of `w`x`h`, after one full run.
fn app_on(root: &Path, label: &str, w: u16, h: u16) -> App {
    app_with(root, label, w, h, |_| {})
}

/// Like [`app_on`], with the evaluations edited by `edit` before they arrive.
fn app_with(
    root: &Path,
    label: &str,
    w: u16,
    h: u16,
    edit: impl FnOnce(&mut Vec<Evaluation>),
) -> App {
    let ws = Arc::new(Workspace::open(root).unwrap());
    let mut evs = evaluate_all(&ws);
    edit(&mut evs);
    let mut app = App::new(label, None, Rect::new(0, 0, w, h));
    let generation = app.request_validation(false);
    app.out.requests.clear();
    let total = evs.len();
    app.update(Msg::Engine(EngineEvent::Started {
        generation,
        workspace: ws,
        total,
    }));
    app.update(batch(generation, &evs));
    // the chains, as the engine computes them after a run
    let mut chains = crate::engine::chains::LiveChains::default();
    for e in &evs {
        chains.add(&e.verdict);
    }
    let budget = app.workspace.as_ref().unwrap().config.budget;
    app.update(Msg::Engine(EngineEvent::Chains {
        generation,
        chains: Arc::new(chains.view(&budget)),
    }));
    send(
        &mut app,
        Msg::Engine(EngineEvent::Finished {
            generation,
            elapsed: Duration::from_millis(12),
            warnings: Vec::new(),
        }),
    );
    app
}

/// A batch of summaries of these evaluations.
fn batch(generation: u64, evs: &[Evaluation]) -> Msg {
    Msg::Engine(EngineEvent::Batch {
        generation,
        captures: evs.iter().map(CaptureSummary::of_evaluation).collect(),
        bytes: 0,
        cleared: Vec::new(),
    })
}

/// Answers the model's load requests as the engine would (re-reading from disk), until
/// none is left; other requests stay.
fn pump(app: &mut App) {
    loop {
        let (loads, rest): (Vec<Job>, Vec<Job>) = std::mem::take(&mut app.out.requests)
            .into_iter()
            .partition(|j| matches!(j, Job::Load { .. }));
        app.out.requests = rest;
        if loads.is_empty() {
            return;
        }
        let ws = app.workspace.clone().expect("a workspace to load from");
        for j in loads {
            if let Job::Load { source, loc } = j {
                let evaluation = crate::engine::summary::load(&ws, &loc).map(Box::new);
                app.update(Msg::Engine(EngineEvent::Loaded { source, evaluation }));
            }
        }
    }
}

/// Applies a message and answers the loads it asks for.
fn send(app: &mut App, msg: Msg) {
    app.update(msg);
    pump(app);
}

/// The selected capture's loaded evaluation.
fn shown(app: &App) -> &Evaluation {
    app.detail
        .evaluation()
        .expect("the selected capture is loaded")
}

fn refund(w: u16, h: u16) -> App {
    app_on(&sample("refund"), "samples/refund", w, h)
}

fn key(app: &mut App, code: KeyCode) {
    send(app, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn keys(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn select(app: &mut App, id: &str) {
    let pos = (0..app.list.view.len())
        .position(|p| app.list.id_at(p) == Some(id))
        .unwrap_or_else(|| panic!("{id} not in the list"));
    app.select(pos);
    pump(app);
}

fn terminal(app: &App) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(
        app.screen.area.width,
        app.screen.area.height,
    ))
    .unwrap();
    t.draw(|f| ui::draw(app, f)).unwrap();
    t
}

fn screen(app: &App) -> String {
    terminal(app).backend().to_string()
}

/// The rows of `r` in `buf`, one string each, as drawn (trailing spaces kept).
fn rows_in(buf: &ratatui::buffer::Buffer, r: ratatui::layout::Rect) -> Vec<String> {
    (r.y..r.bottom())
        .map(|y| (r.x..r.right()).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

/// The rows of the screen's area `r` as drawn, trailing spaces trimmed.
fn rows_of(app: &App, r: ratatui::layout::Rect) -> Vec<String> {
    rows_in(terminal(app).backend().buffer(), r)
        .into_iter()
        .map(|row| row.trim_end().to_string())
        .collect()
}

/// The drawn rows of the detail pane's content, trailing spaces trimmed.
fn content_rows(app: &App) -> Vec<String> {
    rows_of(app, app.screen.areas.content)
}

/// Selects the 8000 case and sends the engine's report of a refund-v1 schema edit after
/// which it reads 5000 (its verdict flips: a contract change, shown in the header and in
/// review).
fn fix_8000_by_a_schema_edit(app: &mut App) {
    select(app, "amount-8000-intent-5000");
    let before = shown(app).verdict.clone();
    send(
        app,
        flipped_by(
            fixed_8000(),
            &before,
            "schemas/refund-v1.schema.json",
            Some("refund-v1"),
        ),
    );
}

/// The 8000 case re-evaluated after its amount was fixed to 5000 (a temporary copy of the
/// sample, so the source names match).
fn fixed_8000() -> Evaluation {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("refund");
    for sub in ["", "captures", "captures/responses", "schemas"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap().flatten() {
            if e.path().is_file() {
                let mut text = std::fs::read_to_string(e.path()).unwrap();
                if e.file_name() == "cases.jsonl" {
                    text = text.replace(r#"\"amount_minor\":8000"#, r#"\"amount_minor\":5000"#);
                }
                std::fs::write(dir.path().join(sub).join(e.file_name()), text).unwrap();
            }
        }
    }
    let ws = Workspace::open(dir.path()).unwrap();
    evaluate_all(&ws)
        .into_iter()
        .find(|e| e.verdict.id == "amount-8000-intent-5000")
        .unwrap()
}

fn applied(
    generation: u64,
    updated: Vec<Updated>,
    removed: Vec<crate::engine::worker::Removed>,
    contracts: Vec<String>,
    causes: Vec<String>,
) -> Msg {
    Msg::Engine(EngineEvent::Applied {
        generation,
        workspace: Arc::new(Workspace::open(&sample("refund")).unwrap()),
        at: "12:04:31".into(),
        causes,
        contracts,
        updated,
        removed,
        warnings: Vec::new(),
    })
}

/// The engine's answer to a save of `file` (generation 2) that gives one capture the new
/// evaluation `now` where it had the verdict `before`; `contract` names the contract the
/// file is part of, for a schema or rules file.
fn flipped_by(now: Evaluation, before: &Verdict, file: &str, contract: Option<&str>) -> Msg {
    applied(
        2,
        vec![Updated::of(
            now,
            Some(Outcome::of(before)),
            Some(file.into()),
        )],
        vec![],
        contract.into_iter().map(String::from).collect(),
        vec![file.into()],
    )
}

/// A temporary workspace with the refund sample's config and schemas, and these capture
/// files (name under `captures/`, text).
fn refund_workspace_with(captures: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = sample("refund");
    for sub in ["", "schemas"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap().flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    for (name, text) in captures {
        std::fs::write(dir.path().join("captures").join(name), text).unwrap();
    }
    dir
}

/// A temporary workspace of these files (path relative to the workspace, text).
fn workspace_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}
