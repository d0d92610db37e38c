//! What the model asks the event loop to do: the clipboard and the editor.

use super::*;

#[test]
fn copy_and_edit_ask_the_loop() {
    let mut app = refund(120, 30);
    select(&mut app, "amount-8000-intent-5000");
    keys(&mut app, "y");
    assert_eq!(
        app.out.effects,
        vec![crate::tui::app::Effect::Copy("/amount_minor".into())]
    );
    app.out.effects.clear();
    keys(&mut app, "7y");
    assert!(
        matches!(&app.out.effects[..], [crate::tui::app::Effect::Copy(t)] if t.contains("5000"))
    );
    app.out.effects.clear();
    keys(&mut app, "e");
    match &app.out.effects[..] {
        [crate::tui::app::Effect::Edit { path, line }] => {
            assert!(path.ends_with("captures/cases.jsonl"));
            assert_eq!(*line, 20);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn editor_commands_and_osc52() {
    let p = Path::new("/w/c.jsonl");
    let (prog, args) = crate::tui::editor_command("nvim", p, 20).unwrap();
    assert_eq!(
        (prog.as_str(), args),
        ("nvim", vec!["+20".into(), "/w/c.jsonl".into()])
    );
    let (prog, args) = crate::tui::editor_command("/usr/bin/code -w", p, 3).unwrap();
    assert_eq!(prog, "/usr/bin/code");
    assert_eq!(args, vec!["-w", "--goto", "/w/c.jsonl:3"]);
    let (_, args) = crate::tui::editor_command("hx", p, 7).unwrap();
    assert_eq!(args, vec!["+7", "/w/c.jsonl"]);
    let (_, args) = crate::tui::editor_command("gedit", p, 7).unwrap();
    assert_eq!(args, vec!["/w/c.jsonl"]);
    assert!(crate::tui::editor_command("  ", p, 1).is_none());
    assert_eq!(
        crate::tui::osc52("hi\x1b]0;x"),
        "\x1b]52;c;aGkbXTA7eA==\x07"
    );
    assert_eq!(crate::tui::osc52(""), "\x1b]52;c;\x07");
}

#[test]
fn r_says_it_re_validates_and_when_it_is_done() {
    let mut app = refund(120, 30);
    let footer = |app: &App| screen(app).lines().last().unwrap().to_string();
    assert!(!footer(&app).contains("re-validating") && !footer(&app).contains("re-validated"));
    keys(&mut app, "r");
    assert!(matches!(
        app.out.requests.as_slice(),
        [Job::ValidateAll { reload: true, .. }]
    ));
    assert_eq!(app.status.as_deref(), Some("re-validating 25 captures…"));
    assert!(
        footer(&app).contains("re-validating 25 captures…"),
        "{}",
        footer(&app)
    );
    let generation = app.run.progress.generation;
    let ws = app.workspace.clone().unwrap();
    app.update(Msg::Engine(EngineEvent::Started {
        generation,
        workspace: ws.clone(),
        total: 25,
    }));
    assert_eq!(app.status.as_deref(), Some("re-validating 25 captures…"));
    app.update(batch(generation, &evaluate_all(&ws)));
    app.update(Msg::Engine(EngineEvent::Finished {
        generation,
        elapsed: Duration::from_millis(7),
        warnings: Vec::new(),
    }));
    // the run's end answers `r`: a note, gone at the next key (a status stayed until
    // some other status replaced it, the key hints never back)
    assert_eq!(app.status, None);
    assert_eq!(
        app.note.as_deref(),
        Some("re-validated 25 captures in 7 ms")
    );
    assert_eq!(
        footer(&app),
        format!("\" {:<119}\"", "re-validated 25 captures in 7 ms")
    );
    keys(&mut app, "j");
    assert!(footer(&app).contains("? help  q quit"), "{}", footer(&app));
    // a run the watcher or the start asks for says nothing
    let generation = app.request_validation(false);
    app.update(Msg::Engine(EngineEvent::Started {
        generation,
        workspace: ws,
        total: 25,
    }));
    assert_eq!(app.status, None);
}
