//! The capture list: the overview, the selection across runs, filtering.

use super::*;

#[test]
fn overview_of_the_refund_sample() {
    let app = refund(120, 30);
    assert_eq!(app.list.store.len(), 25);
    assert_screen_snapshot!("overview_of_the_refund_sample", screen(&app));
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
    assert_screen_snapshot!("filter_tokens_and_fuzzy_text", screen(&app));
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
fn the_list_filter_agrees_with_the_query_on_each_evaluation() {
    use crate::tui::filter::{FuzzyMatcher, Query, haystack};
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

#[test]
fn an_empty_workspace_gets_the_layout_hint_check_gives() {
    let dir = workspace_of(&[("schemas/note.schema.json", r#"{"type": "string"}"#)]);
    let app = app_on(dir.path(), "ws", 120, 30);
    assert!(app.list.store.is_empty());
    let s = screen(&app);
    // the list pane's text, its wrapped lines joined
    let text: Vec<String> = s
        .lines()
        .skip(3)
        .take_while(|l| l.starts_with("\"│"))
        .map(|l| {
            let inner: String = l.chars().skip(2).take_while(|&c| c != '│').collect();
            inner.trim().to_string()
        })
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(text.join(" "), crate::core::workspace::NO_CAPTURES, "{s}");
    assert!(
        crate::cli::check::CheckError::NoCaptures
            .to_string()
            .starts_with(crate::core::workspace::NO_CAPTURES)
    );
}
