//! Screen tests: the model driven with synthetic messages (no terminal, no threads; the
//! evaluations are computed here and fed in as engine events), drawn on a `TestBackend`
//! and compared with insta snapshots.

use super::app::{App, Msg, Overlay};
use super::keymap::Tab;
use super::ui;
use crate::core::pipeline::Evaluation;
use crate::core::review::Outcome;
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

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

fn evaluate_all(ws: &Workspace) -> Vec<Evaluation> {
    ws.capture_files()
        .iter()
        .flat_map(|f| ws.read_file(f))
        .map(|r| ws.evaluate(&r))
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
    send(
        &mut app,
        Msg::Engine(EngineEvent::Finished {
            generation,
            elapsed: Duration::from_millis(12),
        }),
    );
    app
}

/// A batch of summaries of these evaluations.
fn batch(generation: u64, evs: &[Evaluation]) -> Msg {
    Msg::Engine(EngineEvent::Batch {
        generation,
        captures: evs.iter().map(CaptureSummary::of_evaluation).collect(),
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

#[test]
fn overview_of_the_refund_sample() {
    let app = refund(120, 30);
    assert_eq!(app.list.store.len(), 25);
    insta::assert_snapshot!(screen(&app));
}

#[test]
fn schema_failure_selected_shows_the_pointer_in_the_proposal() {
    let mut app = refund(120, 30);
    select(&mut app, "amount-as-string");
    key(&mut app, KeyCode::Char('2'));
    assert_eq!(app.detail.tab, Tab::Proposal);
    let t = terminal(&app);
    // the failing pointer's line is highlighted
    let buf = t.backend().buffer();
    let row = (0..buf.area.height)
        .find(|&y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("\"amount_minor\": \"5000\"")
        })
        .expect("the amount line is on screen");
    let x = (0..buf.area.width)
        .find(|&x| buf[(x, row)].symbol() == "\"" && x > buf.area.width / 3)
        .unwrap();
    assert_eq!(buf[(x, row)].bg, ratatui::style::Color::LightRed);
    insta::assert_snapshot!(t.backend().to_string());
}

#[test]
fn schema_failure_contract_tab_highlights_the_keyword() {
    let mut app = refund(120, 30);
    select(&mut app, "negative-amount");
    key(&mut app, KeyCode::Char('5'));
    insta::assert_snapshot!(screen(&app));
}

#[test]
fn intent_diff_side_by_side() {
    let mut app = refund(120, 30);
    select(&mut app, "amount-8000-intent-5000");
    key(&mut app, KeyCode::Char('1'));
    let s = screen(&app);
    assert!(s.contains("8000") && s.contains("5000") && s.contains("/amount_minor"));
    insta::assert_snapshot!(s);
}

#[test]
fn parse_error_marked_in_raw() {
    let mut app = refund(120, 30);
    select(&mut app, "broken-json-missing-comma");
    key(&mut app, KeyCode::Char('3'));
    insta::assert_snapshot!(screen(&app));
}

#[test]
fn triage_tree_and_enter_filters_the_list() {
    let mut app = refund(120, 30);
    key(&mut app, KeyCode::Char('t'));
    assert!(app.modes.triage());
    insta::assert_snapshot!(screen(&app));
    // the first node is the largest stage; Enter opens it as a filter
    let first = app.triage.tree[0].clone();
    key(&mut app, KeyCode::Enter);
    assert!(!app.modes.triage());
    assert_eq!(app.filter.text, first.query);
    assert_eq!(app.list.view.len(), first.count);
}

#[test]
fn filter_tokens_and_fuzzy_text() {
    let mut app = refund(120, 30);
    keys(&mut app, "/stage:business !reason:not");
    assert!(app.modes.editing());
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.list.view.len(), 5);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.list.view.len(), 25);
    keys(&mut app, "/8000-intent");
    assert_eq!(app.list.view.len(), 1, "{:?}", app.list.view);
    assert_eq!(app.list.current_id(), Some("amount-8000-intent-5000"));
    insta::assert_snapshot!(screen(&app));
}

#[test]
fn help_overlay_from_the_keymap() {
    let mut app = refund(120, 34);
    keys(&mut app, "?");
    assert_eq!(app.modes.overlay, Some(Overlay::Help));
    let s = screen(&app);
    for b in super::keymap::KEYMAP {
        match b.action {
            super::keymap::Action::ShowTab(t) => {
                assert!(
                    s.contains(&format!("{} {}", b.label, t.title())),
                    "{t:?} missing"
                )
            }
            a => assert!(s.contains(a.description()), "{a:?} missing"),
        }
    }
    insta::assert_snapshot!(s);
    keys(&mut app, "x");
    assert!(app.modes.overlay.is_none() && !app.out.quit);
}

#[test]
fn help_and_footer_follow_the_config_overrides() {
    let config = super::config::Config::from_toml(
        "[keys]\ndown = [\"s\", \"down\"]\nquit = [\"x\", \"ctrl-c\"]\ntriage = \"T\"\n",
    )
    .unwrap();
    let mut app = refund(120, 34);
    app.settings.keymap = config.keymap;
    let footer = screen(&app);
    let last = footer.lines().nth(33).unwrap_or_default().to_string();
    assert!(
        last.contains("s/↓ move") && last.contains("x/C-c quit"),
        "{last}"
    );
    keys(&mut app, "T");
    assert!(app.modes.triage(), "T opens triage");
    keys(&mut app, "t");
    assert!(app.modes.triage(), "t is no longer bound");
    key(&mut app, KeyCode::Esc);
    keys(&mut app, "?");
    let s = screen(&app);
    assert!(s.contains("s/↓") && s.contains("x/C-c") && !s.contains(" q  "));
    insta::assert_snapshot!(s);
    keys(&mut app, "?");
    keys(&mut app, "x");
    assert!(app.out.quit);
}

#[test]
fn too_small_terminal_says_so_and_resizing_never_panics() {
    let mut app = refund(120, 30);
    app.update(Msg::Resize(50, 12));
    insta::assert_snapshot!(screen(&app));
    // drawing at every size must not panic (TestBackend cannot print a 0-wide screen,
    // so those are drawn but not printed)
    for (w, h) in [
        (0, 0),
        (1, 1),
        (59, 15),
        (60, 14),
        (60, 15),
        (61, 16),
        (200, 60),
        (80, 24),
    ] {
        app.update(Msg::Resize(w, h));
        for k in ["1", "2", "3", "4", "5", "6", "7", "8", "t", "t?", "\u{1b}"] {
            keys(&mut app, k);
            let _ = terminal(&app);
        }
    }
}

#[test]
fn selection_stays_on_the_same_capture_across_runs() {
    let mut app = refund(120, 30);
    select(&mut app, "duplicate-key");
    let ws = app.workspace.clone().unwrap();
    let mut evs = evaluate_all(&ws);
    evs.reverse();
    let generation = app.request_validation(false);
    app.update(Msg::Engine(EngineEvent::Started {
        generation,
        workspace: ws,
        total: evs.len(),
    }));
    // a stale batch of an older generation is dropped
    send(&mut app, batch(generation - 1, &[]));
    send(&mut app, batch(generation, &evs.split_off(10)));
    send(&mut app, batch(generation, &evs));
    send(
        &mut app,
        Msg::Engine(EngineEvent::Finished {
            generation,
            elapsed: Duration::from_millis(1),
        }),
    );
    assert_eq!(app.list.store.len(), 25);
    assert_eq!(app.list.current_id(), Some("duplicate-key"));
    assert_eq!(shown(&app).verdict.id, "duplicate-key");
}

#[test]
fn no_color_keeps_modifiers_and_drops_colours() {
    let mut app = refund(120, 30);
    app.settings.theme = super::theme::Theme {
        color: false,
        ..Default::default()
    };
    select(&mut app, "amount-as-string");
    keys(&mut app, "2");
    let t = terminal(&app);
    let buf = t.backend().buffer();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let c = &buf[(x, y)];
            assert_eq!(c.fg, ratatui::style::Color::Reset, "fg at {x},{y}");
            assert_eq!(c.bg, ratatui::style::Color::Reset, "bg at {x},{y}");
        }
    }
}

#[test]
fn n_steps_through_errors() {
    let mut app = refund(120, 30);
    select(&mut app, "extra-field-approved");
    assert_eq!(app.detail.error, 0);
    let n = app.detail.detail().unwrap().errors.len();
    keys(&mut app, "n");
    assert_eq!(app.detail.tab, Tab::Proposal);
    assert_eq!(app.detail.error, 1 % n);
    keys(&mut app, "N");
    assert_eq!(app.detail.error, 0);
}

/// A workspace whose captures carry terminal escape sequences everywhere: in the raw output
/// (colour, OSC title, clear screen), in parsed values, ids, context, intent and meta.
fn hostile_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("schemas")).unwrap();
    std::fs::create_dir_all(root.join("captures")).unwrap();
    for f in ["refund-v1.schema.json", "refund-v1.rules.toml"] {
        std::fs::copy(
            sample("refund").join("schemas").join(f),
            root.join("schemas").join(f),
        )
        .unwrap();
    }
    std::fs::copy(
        sample("refund").join("verdict.toml"),
        root.join("verdict.toml"),
    )
    .unwrap();
    let esc = "\u{1b}[31mRED\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}1m\r\t\u{202e}";
    let ctx = serde_json::json!({"actor": {"user_id": "U-7", "allowed_actions": ["refund"]},
        "order": {"order_id": "O-1042", "owner_id": "U-7", "currency": "KRW", "paid_minor": 10000,
                  "refunded_minor": 0, "version": 7}, "note": esc});
    let raw_text = format!("{{\"order_id\": \"{esc}\"}}\n{esc}");
    let good = serde_json::json!({"schema_version": "refund-v1", "order_id": "O-1042",
        "amount_minor": 8000, "currency": "KRW", "expected_version": 7});
    let records = [
        serde_json::json!({"id": format!("raw-{esc}"), "output": raw_text, "context": ctx,
            "meta": {"model": esc}}),
        serde_json::json!({"id": format!("schema-{esc}"), "output": serde_json::json!({
            "schema_version": esc, "order_id": esc, "amount_minor": esc}).to_string(),
            "context": ctx, "intent": {"order_id": esc}}),
        serde_json::json!({"id": format!("intent-{esc}"), "output": good.to_string(),
            "context": ctx, "intent": {"order_id": "O-1042", "amount_minor": 5000, "currency": esc},
            "meta": {esc: esc}}),
        serde_json::json!({"id": format!("bad-{esc}"), "output": good.to_string(), esc: 1}),
    ];
    let mut text = String::new();
    for r in &records {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    std::fs::write(root.join("captures").join("hostile.jsonl"), text).unwrap();
    dir
}

fn assert_no_control(t: &Terminal<TestBackend>, what: &str) {
    let buf = t.backend().buffer();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let s = buf[(x, y)].symbol();
            assert!(
                !s.chars().any(|c| c.is_control()
                    || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')),
                "{what}: raw control character {s:?} at {x},{y}\n{}",
                t.backend()
            );
        }
    }
}

#[test]
fn escape_sequences_render_escaped_in_every_pane() {
    let dir = hostile_workspace();
    let mut app = app_on(dir.path(), "hostile", 140, 40);
    assert_eq!(app.list.store.len(), 4);
    let mut seen_escaped = false;
    for i in 0..app.list.view.len() {
        app.select(i);
        pump(&mut app);
        for tab in "12345678".chars() {
            keys(&mut app, &tab.to_string());
            let t = terminal(&app);
            assert_no_control(&t, &format!("row {i} tab {tab}"));
            seen_escaped |= t.backend().to_string().contains("\\u{1b}");
        }
    }
    keys(&mut app, "t");
    assert_no_control(&terminal(&app), "triage");
    keys(&mut app, "t/\u{1b}x");
    assert_no_control(&terminal(&app), "filter");
    assert!(seen_escaped, "the escapes are shown as text");
}

#[test]
fn core_and_engine_have_no_terminal_imports() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (dir, banned) in [
        ("core", &["ratatui", "crossterm", "notify"][..]),
        ("engine", &["ratatui", "crossterm"][..]),
    ] {
        let mut files = Vec::new();
        walk(&src.join(dir), &mut files);
        assert!(!files.is_empty());
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for b in banned {
                assert!(!text.contains(b), "{} mentions {b}", f.display());
            }
        }
    }
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
    })
}

#[test]
fn a_flip_is_marked_counted_filterable_and_in_the_history_tab() {
    let mut app = refund(120, 30);
    app.watch.state = super::app::WatchState::Live;
    select(&mut app, "amount-8000-intent-5000");
    let before = shown(&app).verdict.clone();
    assert_eq!(before.decision.as_str(), "recheck");
    let fixed = fixed_8000();
    assert!(fixed.verdict.is_ready());
    send(
        &mut app,
        applied(
            2,
            vec![Updated::of(
                fixed,
                Some(Outcome::of(&before)),
                Some("captures/cases.jsonl".into()),
            )],
            vec![],
            vec![],
            vec!["captures/cases.jsonl".into()],
        ),
    );
    assert_eq!(app.history.flips.len(), 1);
    assert_eq!(app.history.flipped.len(), 1);
    // the selection stayed on the capture, now ready
    assert_eq!(app.list.current_id(), Some("amount-8000-intent-5000"));
    assert!(shown(&app).verdict.is_ready());
    keys(&mut app, "8");
    let s = screen(&app);
    assert!(s.contains("↺ 1 flipped") && s.contains("last change 12:04:31"));
    assert!(s.contains("by change to captures/cases.jsonl"));
    insta::assert_snapshot!(s);
    // the `flipped` filter shows only it
    keys(&mut app, "/flipped");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.list.view.len(), 1);
    // a stale result (an older generation) for the same capture is dropped
    let old = shown(&app).clone();
    let row = *app.list.current().unwrap();
    let mut stale = old.clone();
    stale.verdict.next_action = "stale".into();
    stale.verdict.stage = crate::core::verdict::Stage::Parse;
    send(
        &mut app,
        applied(
            1,
            vec![Updated::of(stale, Some(Outcome::of(&old.verdict)), None)],
            vec![],
            vec![],
            vec![],
        ),
    );
    assert_eq!(shown(&app).verdict, old.verdict);
    assert_eq!(*app.list.current().unwrap(), row);
}

#[test]
fn a_deleted_selected_capture_says_so() {
    let mut app = refund(120, 30);
    select(&mut app, "valid-proposal");
    let n = app.list.store.len();
    send(
        &mut app,
        applied(
            2,
            vec![],
            vec![crate::engine::worker::Removed {
                id: "valid-proposal".into(),
                source: "captures/valid-proposal.json".into(),
                cause: Some("captures/valid-proposal.json".into()),
            }],
            vec![],
            vec!["captures/valid-proposal.json".into()],
        ),
    );
    assert_eq!(app.list.store.len(), n - 1);
    let s = screen(&app);
    assert!(s.contains("valid-proposal was deleted"), "{s}");
    assert!(s.contains("captures/valid-proposal.json no longer exists"));
    assert!(!(0..app.list.view.len()).any(|p| app.list.id_at(p) == Some("valid-proposal")));
    // moving selects another capture and the note goes away
    key(&mut app, KeyCode::Char('k'));
    assert!(app.detail.gone().is_none());
    assert!(!screen(&app).contains("was deleted"));
}

#[test]
fn a_contract_change_is_summed_up_in_the_header_and_listed_in_review() {
    let mut app = refund(140, 30);
    select(&mut app, "amount-8000-intent-5000");
    let before = shown(&app).verdict.clone();
    send(
        &mut app,
        applied(
            2,
            vec![Updated::of(
                fixed_8000(),
                Some(Outcome::of(&before)),
                Some("schemas/refund-v1.schema.json".into()),
            )],
            vec![],
            vec!["refund-v1".into()],
            vec!["schemas/refund-v1.schema.json".into()],
        ),
    );
    let s = screen(&app);
    assert!(s.contains("refund-v1 changed: 1 newly failing"), "{s}");
    keys(&mut app, "v");
    assert_eq!(app.modes.overlay, Some(Overlay::Review));
    let s = screen(&app);
    assert!(s.contains("Review: last schema or rules change"));
    assert!(s.contains("amount-8000-intent-5000 business/INTENT_MISMATCH → ready"));
    keys(&mut app, "x");
    assert!(app.modes.overlay.is_none() && !app.out.quit);
}

#[test]
fn pause_keeps_changes_and_resume_submits_them() {
    let mut app = refund(120, 30);
    app.watch.state = super::app::WatchState::Live;
    keys(&mut app, "p");
    assert_eq!(app.watch.state, super::app::WatchState::Paused);
    app.update(Msg::Watch(crate::engine::watcher::WatchEvent::Changed(
        vec![PathBuf::from("/w/captures/a.json")],
    )));
    assert!(app.out.requests.is_empty());
    let s = screen(&app);
    assert!(
        s.contains("‖ paused") && s.contains("·  1 change waiting"),
        "{s}"
    );
    keys(&mut app, "p");
    assert_eq!(app.watch.state, super::app::WatchState::Live);
    assert!(matches!(
        app.out.requests.as_slice(),
        [crate::engine::Job::Apply { paths, .. }] if paths == &[PathBuf::from("/w/captures/a.json")]
    ));
}

#[test]
fn copy_and_edit_ask_the_loop() {
    let mut app = refund(120, 30);
    select(&mut app, "amount-8000-intent-5000");
    keys(&mut app, "y");
    assert_eq!(
        app.out.effects,
        vec![super::app::Effect::Copy("/amount_minor".into())]
    );
    app.out.effects.clear();
    keys(&mut app, "7y");
    assert!(matches!(&app.out.effects[..], [super::app::Effect::Copy(t)] if t.contains("5000")));
    app.out.effects.clear();
    keys(&mut app, "e");
    match &app.out.effects[..] {
        [super::app::Effect::Edit { path, line }] => {
            assert!(path.ends_with("captures/cases.jsonl"));
            assert_eq!(*line, 20);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn editor_commands_and_osc52() {
    let p = Path::new("/w/c.jsonl");
    let (prog, args) = super::editor_command("nvim", p, 20).unwrap();
    assert_eq!(
        (prog.as_str(), args),
        ("nvim", vec!["+20".into(), "/w/c.jsonl".into()])
    );
    let (prog, args) = super::editor_command("/usr/bin/code -w", p, 3).unwrap();
    assert_eq!(prog, "/usr/bin/code");
    assert_eq!(args, vec!["-w", "--goto", "/w/c.jsonl:3"]);
    let (_, args) = super::editor_command("hx", p, 7).unwrap();
    assert_eq!(args, vec!["+7", "/w/c.jsonl"]);
    let (_, args) = super::editor_command("gedit", p, 7).unwrap();
    assert_eq!(args, vec!["/w/c.jsonl"]);
    assert!(super::editor_command("  ", p, 1).is_none());
    assert_eq!(super::osc52("hi\x1b]0;x"), "\x1b]52;c;aGkbXTA7eA==\x07");
    assert_eq!(super::osc52(""), "\x1b]52;c;\x07");
}

#[test]
fn an_unmet_expect_is_marked_and_filterable() {
    use crate::core::verdict::{Decision, Expect, ExpectOutcome};
    let mut app = app_with(&sample("refund"), "samples/refund", 120, 30, |evs| {
        let ev = evs
            .iter_mut()
            .find(|e| e.verdict.id == "amount-9000")
            .unwrap();
        ev.verdict.expect = Some(ExpectOutcome {
            expect: Expect {
                decision: Some(Decision::ReadyForCommit),
                ..Default::default()
            },
            met: false,
        });
    });
    let s = screen(&app);
    let row = s
        .lines()
        .find(|l| l.contains("EXCEEDS") && l.contains("amount-9000"))
        .unwrap();
    assert!(row.contains('≠'), "{row}");
    assert_eq!(s.matches('≠').count(), 1, "only the unmet row is marked");
    keys(&mut app, "/unmet");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.list.view.len(), 1);
    key(&mut app, KeyCode::Esc);
    keys(&mut app, "/!unmet");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.list.view.len(), app.list.store.len() - 1);
}

#[test]
fn triage_stages_in_pipeline_order() {
    let mut app = refund(120, 30);
    keys(&mut app, "t");
    let stages: Vec<_> = app
        .triage
        .tree
        .iter()
        .filter(|n| n.depth == 0)
        .map(|n| n.stage)
        .collect();
    let mut sorted = stages.clone();
    sorted.sort();
    assert_eq!(stages, sorted);
    // within a stage, reasons (and pointers under a reason) come largest first
    // (the last count seen at each depth, reset when a parent row starts)
    let mut last: [Option<usize>; 3] = [None; 3];
    for n in &app.triage.tree {
        if let Some(prev) = last[n.depth as usize]
            && n.depth > 0
        {
            assert!(prev >= n.count, "{:?} after a smaller sibling", n.label);
        }
        last[n.depth as usize] = Some(n.count);
        for deeper in last.iter_mut().skip(n.depth as usize + 1) {
            *deeper = None;
        }
    }
}

#[test]
fn at_80x24_the_footer_keeps_help_and_quit_and_the_tabs_are_readable() {
    let mut app = refund(80, 24);
    select(&mut app, "amount-9000");
    for tab in ["1", "4", "8"] {
        keys(&mut app, tab);
        let s = screen(&app);
        let footer = s.lines().last().unwrap();
        assert!(
            footer.contains("? help") && footer.contains("q quit"),
            "{footer}"
        );
        let active = Tab::ALL[tab.parse::<usize>().unwrap() - 1];
        assert!(
            s.contains(active.short_title()) || s.contains(active.title()),
            "tab {active:?} visible"
        );
    }
    keys(&mut app, "8");
    insta::assert_snapshot!(screen(&app));
    for (w, h) in [(80, 24), (60, 20), (40, 12), (1, 1), (200, 3)] {
        app.update(Msg::Resize(w, h));
        let _ = screen(&app);
    }
    app.update(Msg::Resize(0, 0)); // (a TestBackend cannot be 0 wide; the update must not panic)
}

#[test]
fn the_list_filter_agrees_with_the_query_on_each_evaluation() {
    use super::filter::{FuzzyMatcher, Query, haystack};
    let ws = Workspace::open(&sample("refund")).unwrap();
    let evs = evaluate_all(&ws);
    let m = &mut FuzzyMatcher::default();
    for q in [
        "s",
        "sc",
        "a8000",
        "amount 8000",
        "jsonl:2",
        "json",
        "intent",
        "zz",
        "stage:schema amount",
        "!stage:ready",
        "pointer:/amount_minor",
        "^amount",
        "proposal$",
    ] {
        let mut app = refund(120, 30);
        keys(&mut app, "/");
        keys(&mut app, q);
        let mut got: Vec<String> = (0..app.list.view.len())
            .map(|p| app.list.id_at(p).unwrap().to_string())
            .collect();
        let query = Query::parse(q);
        let mut want: Vec<String> = evs
            .iter()
            .filter(|e| query.matches(e, &haystack(e), false, m))
            .map(|e| e.verdict.id.clone())
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{q}");
    }
}
