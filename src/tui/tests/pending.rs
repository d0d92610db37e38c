//! Pending rows (`docs/commands.md#while-it-loads`): every record the pre-pass reads is listed
//! before its verdict, navigable, and the list after the run is the list a run without them
//! gives.

use super::*;
use crate::core::prescan::{Listed, Progress};
use crate::tui::store::Store;
use std::sync::mpsc::channel;

/// The records the pre-pass lists of `ws`, as the engine's `Listed` events carry them.
fn listed(ws: &Workspace) -> Vec<Listed> {
    let files = ws.capture_files();
    let progress = Progress::listing();
    let pre = crate::engine::prescan::run(ws, &files, &files, &progress);
    assert!(pre.complete);
    progress.take_listed()
}

/// The list in view order: `pending SOURCE` or `DECISION ID SOURCE`.
fn rows(app: &App) -> Vec<String> {
    let store = &app.list.store;
    app.list
        .view
        .iter()
        .map(|&i| {
            let r = &store.rows[i as usize];
            if Store::is_pending(r) {
                format!("pending {}", store.source(r))
            } else {
                format!(
                    "{} {} {}",
                    store.kind(r).outcome.decision.as_str(),
                    store.id(r),
                    store.source(r)
                )
            }
        })
        .collect()
}

/// The refund sample's workspace and a new model of 120 columns by `height` rows whose first
/// run was asked for (its job taken), with that run's generation.
fn first_run(height: u16) -> (Arc<Workspace>, App, u64) {
    let ws = Arc::new(Workspace::open(&sample("refund")).unwrap());
    let mut app = App::new("samples/refund", None, Rect::new(0, 0, 120, height));
    let generation = app.request_validation(false);
    app.out.requests.clear();
    (ws, app, generation)
}

/// [`first_run`] whose pre-pass has listed every record (all rows pending).
fn first_run_listed(height: u16) -> (Arc<Workspace>, App, u64) {
    let (ws, mut app, generation) = first_run(height);
    app.update(Msg::Engine(EngineEvent::Listed {
        generation,
        records: listed(&ws),
    }));
    (ws, app, generation)
}

#[test]
fn pending_rows_list_every_record_before_its_verdict() {
    let (ws, mut app, generation) = first_run(30);
    let records = listed(&ws);
    // one log of 21 lines, 4 one-record files
    assert_eq!(
        records
            .iter()
            .map(|r| (r.file.to_string(), r.first, r.last))
            .collect::<Vec<_>>()
            .iter()
            .filter(|r| r.0 == "captures/cases.jsonl")
            .collect::<Vec<_>>(),
        vec![&("captures/cases.jsonl".to_string(), 1, 21)]
    );
    // the pre-pass, one of its 5 files read, lists the records it read
    app.update(Msg::Engine(EngineEvent::Reading {
        generation,
        files_done: 1,
        files: 5,
        records: 25,
    }));
    app.update(Msg::Engine(EngineEvent::Listed {
        generation,
        records,
    }));
    assert!(app.out.requests.is_empty(), "a pending row loads nothing");
    assert_eq!(app.list.store.len(), 25);
    assert_eq!(app.list.store.pending(), 25);
    // by file name, then line; the first selected, its detail says it is pending
    assert_eq!(
        rows(&app)[..3],
        [
            "pending captures/cases.jsonl:1",
            "pending captures/cases.jsonl:2",
            "pending captures/cases.jsonl:3"
        ]
    );
    assert_eq!(
        app.detail.pending(),
        Some("captures/cases.jsonl:1"),
        "{:?}",
        app.detail.state
    );
    let text = screen(&app);
    assert!(
        text.contains("│ · pending captures/cases.jsonl:1 "),
        "{text}"
    );
    assert!(
        text.contains("captures/cases.jsonl:1 is pending: listed by the pre-pass"),
        "{text}"
    );
    assert_screen_snapshot!("pending_rows_before_the_first_verdict", text);

    // a record read a moment later: the list is sorted again at its pace, the title
    // counts every row meanwhile (not as a filter's `25/26`)
    app.update(Msg::Engine(EngineEvent::Listed {
        generation,
        records: vec![Listed {
            file: Arc::from("captures/zz.jsonl"),
            first: 1,
            last: 1,
        }],
    }));
    let text = screen(&app);
    assert!(text.contains("┌ Captures 26 ─"), "{text}");
    app.list
        .clear_pending(&[(Arc::from("captures/zz.jsonl"), 1)]);
    app.rebuild();
    assert_eq!(app.list.store.len(), 25);

    // the first verdicts: checked rows first, sorted as ever, the pending ones after them
    let evs = evaluate_all(&ws);
    assert_eq!(evs.len(), 25);
    app.update(Msg::Engine(EngineEvent::Started {
        generation,
        workspace: ws.clone(),
        total: 25,
    }));
    send(&mut app, batch(generation, &evs[..10]));
    app.rebuild();
    let now = rows(&app);
    assert_eq!(app.list.store.pending(), 15);
    assert!(
        now[..10].iter().all(|r| !r.starts_with("pending ")),
        "{now:?}"
    );
    assert!(
        now[10..].iter().all(|r| r.starts_with("pending ")),
        "{now:?}"
    );
    // the header counts every record, checked or not
    assert!(screen(&app).contains("Captures 25 "), "{}", screen(&app));

    // `G` during the load reaches the last record listed (by file name, then line)
    key(&mut app, KeyCode::Char('G'));
    let last = now.last().unwrap().clone();
    assert_eq!(
        app.list.selected.as_deref(),
        Some(last.trim_start_matches("pending "))
    );
    assert_eq!(app.list.cursor, 24);
    assert!(app.detail.pending().is_some());

    // the selected pending row gets its verdict: its detail is loaded then
    let i = evs
        .iter()
        .position(|e| Some(e.verdict.source.as_str()) == app.list.selected.as_deref())
        .expect("the selected record has an evaluation");
    send(&mut app, batch(generation, std::slice::from_ref(&evs[i])));
    assert_eq!(app.detail.pending(), None);
    assert_eq!(
        shown(&app).verdict.source,
        last.trim_start_matches("pending ")
    );
    let rest: Vec<Evaluation> = evs[10..]
        .iter()
        .enumerate()
        .filter(|(j, _)| j + 10 != i)
        .map(|(_, e)| e.clone())
        .collect();
    send(&mut app, batch(generation, &rest));
    send(
        &mut app,
        Msg::Engine(EngineEvent::Finished {
            generation,
            elapsed: Duration::from_millis(3),
            warnings: Vec::new(),
        }),
    );
    assert_eq!(app.list.store.pending(), 0);
    // the same list as a run that listed nothing before its verdicts
    assert_eq!(rows(&app), rows(&refund(120, 30)));
}

/// The real engine on `root`, its events applied to a new model, with or without the
/// pre-pass's `Listed` events; asserts that no pending row is left before `Finished`
/// (each record's verdict or `cleared` removed it).
fn run_engine(root: &Path, with_listed: bool) -> (App, usize) {
    let ws = Arc::new(Workspace::open(root).unwrap());
    let (tx, rx) = channel();
    let engine = crate::engine::Engine::spawn(root.to_path_buf(), ws, move |e| tx.send(e).is_ok());
    let mut app = App::new("x", None, Rect::new(0, 0, 120, 30));
    app.request_validation(true);
    for j in app.out.requests.drain(..) {
        engine.submit(j);
    }
    let mut most_pending = 0;
    loop {
        let e = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        match &e {
            EngineEvent::Listed { .. } if !with_listed => continue,
            EngineEvent::Failed { message, .. } => panic!("{message}"),
            EngineEvent::Finished { .. } => {
                app.list.sort();
                assert_eq!(
                    app.list.store.pending(),
                    0,
                    "{}: pending rows left at the end",
                    root.display()
                );
            }
            _ => {}
        }
        let finished = matches!(e, EngineEvent::Finished { .. });
        app.update(Msg::Engine(e));
        app.out.requests.clear();
        most_pending = most_pending.max(app.list.store.pending());
        if finished {
            return (app, most_pending);
        }
    }
}

#[test]
fn every_sample_lists_the_same_rows_with_pending_rows_as_without() {
    for name in [
        "refund",
        "logs",
        "traces",
        "chains",
        "requests",
        "providers",
    ] {
        let root = sample(name);
        let (with, listed) = run_engine(&root, true);
        let (without, none) = run_engine(&root, false);
        assert_eq!(none, 0);
        assert!(listed > 0, "{name}: nothing was listed");
        assert!(!with.list.store.is_empty(), "{name}");
        assert_eq!(rows(&with), rows(&without), "{name}");
        assert_eq!(with.run.summary, without.run.summary, "{name}");
    }
}

#[test]
fn records_without_a_capture_of_their_own_drop_their_pending_rows() {
    // an MCP session: the initialize exchange and a notification are no capture, the
    // tools/call pair is one (its result's line); an OTLP record of two LLM spans is two
    // captures, `#1` and `#2`, and no row of its own
    let mcp = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"order_id":"O-1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#,
        "\n",
    );
    let dir = workspace_of(&[("captures/session.mcp.jsonl", mcp)]);
    let (app, listed) = run_engine(dir.path(), true);
    assert_eq!(listed, 5);
    let (without, _) = run_engine(dir.path(), false);
    assert_eq!(rows(&app), rows(&without));
    assert!(app.list.store.len() < 5, "{:?}", rows(&app));
}

#[test]
fn a_run_that_fails_after_its_pre_pass_leaves_no_pending_row() {
    let ws = Arc::new(Workspace::open(&sample("refund")).unwrap());
    let mut app = refund(120, 30);
    let before = rows(&app);
    // a re-run lists a record the first run did not have, then fails (a config error only
    // the pre-pass's facts show)
    let generation = app.request_validation(true);
    app.out.requests.clear();
    let mut records = listed(&ws);
    records.push(Listed {
        file: Arc::from("captures/cases.jsonl"),
        first: 22,
        last: 22,
    });
    app.update(Msg::Engine(EngineEvent::Listed {
        generation,
        records,
    }));
    app.rebuild();
    // the checked rows keep their verdicts; only the new record is pending
    assert_eq!(app.list.store.pending(), 1);
    assert_eq!(
        rows(&app).last().unwrap(),
        "pending captures/cases.jsonl:22"
    );
    send(
        &mut app,
        Msg::Engine(EngineEvent::Failed {
            generation,
            message: "a glob in [[request]] matches nothing".into(),
        }),
    );
    assert_eq!(app.list.store.pending(), 0);
    assert_eq!(rows(&app), before);
}

#[test]
fn a_first_run_that_fails_says_so_in_the_empty_list() {
    let (_ws, mut app, generation) = first_run_listed(16);
    send(
        &mut app,
        Msg::Engine(EngineEvent::Failed {
            generation,
            message: "verdict.toml: [[source]] 1: `requests` matches no batch input file".into(),
        }),
    );
    assert!(app.list.store.is_empty());
    let text = screen(&app);
    assert!(
        text.contains("│the run failed: the last line says why "),
        "{text}"
    );
    assert!(!text.contains("no captures found"), "{text}");
    assert!(
        text.contains("`requests` matches no batch input file"),
        "{text}"
    );
    // the next run clears it
    app.request_validation(true);
    assert!(!screen(&app).contains("the run failed"));
}

#[test]
fn r_before_any_verdict_restarts_the_run_and_says_so() {
    let (ws, mut app, _) = first_run_listed(30);
    assert_eq!(app.list.store.pending(), 25);
    keys(&mut app, "r");
    assert_eq!(
        app.status.as_deref(),
        Some("restarting the run: the workspace is read again…")
    );
    assert!(matches!(
        app.out.requests.as_slice(),
        [Job::ValidateAll { reload: true, .. }]
    ));
    // once a verdict is in, `r` re-validates every row
    let generation = app.run.progress.generation;
    app.update(Msg::Engine(EngineEvent::Started {
        generation,
        workspace: ws.clone(),
        total: 25,
    }));
    app.update(batch(generation, &evaluate_all(&ws)));
    keys(&mut app, "r");
    assert_eq!(app.status.as_deref(), Some("re-validating 25 captures…"));
}
