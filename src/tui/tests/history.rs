//! Verdict flips (the header, the list marks, the History tab) and pausing the watch.

use super::*;

#[test]
fn a_flip_is_marked_counted_filterable_and_in_the_history_tab() {
    let mut app = refund(120, 30);
    app.watch.state = crate::tui::app::WatchState::Live;
    select(&mut app, "amount-8000-intent-5000");
    let before = shown(&app).verdict.clone();
    assert_eq!(before.decision.as_str(), "recheck");
    let fixed = fixed_8000();
    assert!(fixed.verdict.is_ready());
    send(
        &mut app,
        flipped_by(fixed, &before, "captures/cases.jsonl", None),
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
    assert_screen_snapshot!(
        "a_flip_is_marked_counted_filterable_and_in_the_history_tab",
        s
    );
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
fn pause_keeps_changes_and_resume_submits_them() {
    let mut app = refund(120, 30);
    app.watch.state = crate::tui::app::WatchState::Live;
    keys(&mut app, "p");
    assert_eq!(app.watch.state, crate::tui::app::WatchState::Paused);
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
    assert_eq!(app.watch.state, crate::tui::app::WatchState::Live);
    assert!(matches!(
        app.out.requests.as_slice(),
        [crate::engine::Job::Apply { paths, .. }] if paths == &[PathBuf::from("/w/captures/a.json")]
    ));
}
