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
            warnings: Vec::new(),
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
        // every match, before the view ranks them and drops the weak fuzzy ones
        let store = &app.list.store;
        let mut got: Vec<String> = app
            .filter
            .all_matches(&app.list)
            .iter()
            .map(|&i| store.id(&store.rows[i as usize]).to_string())
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
        crate::cli::check::CheckError::NoCaptures {
            searched: "captures".into()
        }
        .to_string()
        .starts_with(crate::core::workspace::NO_CAPTURES)
    );
}

/// The ids of the list's view, in order.
fn view_ids(app: &App) -> Vec<String> {
    (0..app.list.view.len())
        .map(|p| app.list.id_at(p).unwrap().to_string())
        .collect()
}

#[test]
fn the_fuzzy_filter_ranks_substring_matches_first_and_drops_scattered_ones() {
    let mut app = app_on(&sample("providers"), "samples/providers", 120, 30);
    assert_eq!(app.list.store.len(), 107);
    let order = view_ids(&app);
    keys(&mut app, "/stream-sse");
    // the ids holding `stream-sse`, in the list's (severity) order: 33 fuzzy matches before
    let want: Vec<String> = order
        .iter()
        .filter(|id| id.contains("stream-sse"))
        .cloned()
        .collect();
    assert_eq!(want.len(), 5);
    assert_eq!(view_ids(&app), want);
    assert_eq!(app.filter.all_matches(&app.list).len(), 33);
    let s = screen(&app);
    assert!(s.contains("┌ Captures 5/107 /stream-sse "), "{s}");

    let mut app = refund(120, 30);
    keys(&mut app, "/amount-as");
    assert_eq!(view_ids(&app), ["amount-as-string"]);
}

#[test]
fn the_fuzzy_filter_puts_ids_holding_the_query_first_by_score_then_severity() {
    let mut app = refund(120, 30);
    let order = view_ids(&app);
    keys(&mut app, "/amount");
    let got = view_ids(&app);
    // ids starting with `amount` (nucleo's prefix bonus), in list order; then an id that
    // holds it later; then the captures where only a pointer or message holds it
    let prefix: Vec<String> = order
        .iter()
        .filter(|id| id.starts_with("amount"))
        .cloned()
        .collect();
    assert_eq!(prefix.len(), 5);
    assert_eq!(&got[..5], &prefix[..]);
    assert_eq!(got[5], "negative-amount");
    assert!(got.len() > 6, "{got:?}");
    assert!(got[6..].iter().all(|id| !id.contains("amount")), "{got:?}");
    // no scattered a…m…o…u…n…t matches (`fenced-json` matched before)
    assert!(!got.contains(&"fenced-json".to_string()), "{got:?}");
}

#[test]
fn a_query_no_id_holds_keeps_the_fuzzy_matches_by_score() {
    let mut app = refund(120, 30);
    keys(&mut app, "/a8000");
    assert_eq!(
        view_ids(&app),
        ["amount-8000-intent-5000", "amount-9000", "rate-limited"]
    );
}

#[test]
fn a_misspelt_stage_gets_a_did_you_mean() {
    let mut app = refund(120, 30);
    keys(&mut app, "/stage:parss");
    assert!(app.list.view.is_empty());
    assert_eq!(
        app.filter.hint(),
        Some("stage:parss matches no stage; did you mean `stage:parse`?")
    );
    let s = screen(&app);
    assert!(
        s.contains("no capture matches the filter (Esc clears it):"),
        "{s}"
    );
    assert!(
        s.contains("did you mean") && s.contains("`stage:parse`?"),
        "{s}"
    );
    // `stage:pars` is a prefix of `parse`: no hint for it
    let mut app = refund(120, 30);
    keys(&mut app, "/stage:pars decision:rejct");
    assert_eq!(
        app.filter.hint(),
        Some("decision:rejct matches no decision; did you mean `decision:reject`?")
    );
}

/// A narrow list narrows a reason only as far as the ids on screen need: with short ids
/// the reasons keep their full names (at 100 columns `NOT_AUTHORIZED` was cut to keep 20
/// columns for ids of 11).
#[test]
fn a_narrow_list_with_short_ids_keeps_the_reasons_whole() {
    let mut app = refund(100, 24);
    keys(&mut app, "/reason:not_authorized");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.list.view.len(), 3);
    let s = screen(&app);
    for id in ["no-refund-permission", "other-owner", "unknown-order"] {
        assert!(
            s.lines()
                .any(|l| l.contains(&format!("│ ⊘ NOT_AUTHORIZED {id}"))),
            "{id}: {s}"
        );
    }
}

/// With no capture selected (a filter that matches none), `n`, `y` and `e` say so on the
/// footer instead of doing nothing (`n` said the capture has no errors; `y`, `e` were
/// silent).
#[test]
fn keys_that_need_a_capture_say_when_none_is_selected() {
    let mut app = refund(100, 30);
    keys(&mut app, "/zzzq");
    key(&mut app, KeyCode::Enter);
    assert!(app.list.view.is_empty());
    for k in ["n", "y", "e"] {
        keys(&mut app, k);
        let s = screen(&app);
        let footer = s.lines().last().unwrap();
        assert!(
            footer.contains("no capture selected (the list is empty)"),
            "{k}: {footer}"
        );
        assert!(app.out.effects.is_empty(), "{k}");
    }
}
