//! The detail pane: its tabs, the error table, a deleted capture.

use super::*;

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
    assert_screen_snapshot!(
        "schema_failure_selected_shows_the_pointer_in_the_proposal",
        t.backend().to_string()
    );
}

#[test]
fn schema_failure_contract_tab_highlights_the_keyword() {
    let mut app = refund(120, 30);
    select(&mut app, "negative-amount");
    key(&mut app, KeyCode::Char('5'));
    assert_screen_snapshot!(
        "schema_failure_contract_tab_highlights_the_keyword",
        screen(&app)
    );
}

#[test]
fn the_contract_tab_wraps_a_long_rule_under_its_own_indentation() {
    let mut app = refund(120, 30);
    select(&mut app, "no-refund-permission");
    key(&mut app, KeyCode::Char('5'));
    let s = screen(&app);
    // the failing rule whole, over three rows of the 70-column tab, its continuations
    // two columns in from its own four, broken between words (it was cut with `…`)
    let rows: Vec<&str> = s
        .lines()
        .map(|l| {
            let detail = l.split("││").nth(1).unwrap_or("");
            detail.trim_end_matches(['│', '"']).trim_end()
        })
        .collect();
    let at = rows
        .iter()
        .position(|r| r.starts_with("    has(context.order) && "))
        .expect(&s);
    assert_eq!(
        &rows[at..at + 3],
        &[
            "    has(context.order) && context.order.order_id == proposal.order_id",
            "      && context.order.owner_id == context.actor.user_id && 'refund'",
            "      in context.actor.allowed_actions",
        ],
        "{s}"
    );
    assert!(
        rows[at..].iter().all(|r| !r.contains('…')),
        "nothing is cut: {s}"
    );
}

#[test]
fn a_narrow_diff_wraps_its_values_and_keeps_both_sides_level() {
    let mut app = refund(80, 24);
    select(&mut app, "amount-9000");
    key(&mut app, KeyCode::Char('1'));
    let s = screen(&app);
    assert_screen_snapshot!("a_narrow_diff_wraps_its_values", s);
    // the values compared are whole (a cut `900` against `50` would misread them)
    assert!(s.contains("9000,") && s.contains("5000,"), "{s}");
}

#[test]
fn intent_diff_side_by_side() {
    let mut app = refund(120, 30);
    select(&mut app, "amount-8000-intent-5000");
    key(&mut app, KeyCode::Char('1'));
    let s = screen(&app);
    assert!(s.contains("8000") && s.contains("5000") && s.contains("/amount_minor"));
    assert_screen_snapshot!("intent_diff_side_by_side", s);
}

#[test]
fn parse_error_marked_in_raw() {
    let mut app = refund(120, 30);
    select(&mut app, "broken-json-missing-comma");
    key(&mut app, KeyCode::Char('3'));
    assert_screen_snapshot!("parse_error_marked_in_raw", screen(&app));
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

#[test]
fn no_color_keeps_modifiers_and_drops_colours() {
    let mut app = refund(120, 30);
    app.settings.theme = crate::tui::theme::Theme {
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
fn the_detail_pane_loads_shows_keeps_the_detail_while_it_reloads_and_notes_a_missing_record() {
    let mut app = refund(120, 30);
    let pos = (0..app.list.view.len())
        .position(|p| app.list.id_at(p) == Some("duplicate-key"))
        .unwrap();
    app.select(pos);
    let source = app.list.selected.clone().unwrap();
    // selecting asks for a load; until it arrives the pane says so
    assert!(
        matches!(&app.detail.state, DetailState::Loading { source: s, kept: None, .. } if *s == source),
        "{:?}",
        app.detail.state
    );
    assert!(screen(&app).contains("loading duplicate-key from disk…"));
    // an answer for another capture changes nothing
    app.update(Msg::Engine(EngineEvent::Loaded {
        source: "captures/elsewhere.json".into(),
        evaluation: None,
    }));
    assert_eq!(app.detail.loading(), Some(source.as_str()));
    pump(&mut app);
    assert!(matches!(app.detail.state, DetailState::Shown { .. }));
    // re-validated without its evaluation: re-read, the old detail shown meanwhile
    let ws = app.workspace.clone().unwrap();
    let ev = evaluate_all(&ws)
        .into_iter()
        .find(|e| e.verdict.id == "duplicate-key")
        .unwrap();
    app.update(batch(app.run.progress.generation, &[ev]));
    assert!(
        matches!(&app.detail.state, DetailState::Loading { kept: Some(d), .. } if d.source == source),
        "{:?}",
        app.detail.state
    );
    assert!(matches!(
        app.out.requests.as_slice(),
        [Job::Load { source: s, .. }] if *s == source
    ));
    app.out.requests.clear();
    let s = screen(&app);
    assert!(
        s.contains("┌ duplicate-key ") && !s.contains("loading"),
        "{s}"
    );
    // the record is no longer in its file: noted, and not asked for again
    app.update(Msg::Engine(EngineEvent::Loaded {
        source: source.clone(),
        evaluation: None,
    }));
    assert!(matches!(&app.detail.state, DetailState::Missing { source: s } if *s == source));
    assert!(screen(&app).contains("duplicate-key: the record is no longer in its file"));
    // a rebuild refreshes the pane: it waits for the re-validation, asking nothing
    app.update(Msg::Engine(EngineEvent::Finished {
        generation: app.run.progress.generation,
        elapsed: Duration::from_millis(1),
        warnings: Vec::new(),
    }));
    assert!(app.out.requests.is_empty(), "{:?}", app.out.requests);
    assert_eq!(app.detail.missing(), Some(source.as_str()));
}

/// The line of the Raw tab that says where the marked error is (`▲ 1:40 …`), trimmed.
fn raw_error_line(app: &App) -> String {
    let s = screen(app);
    let line = s
        .lines()
        .find(|l| l.contains('▲'))
        .unwrap_or_else(|| panic!("no error line in {s}"));
    let at = line.find('▲').unwrap();
    line[at..].trim_end_matches(['"', '│', ' ']).to_string()
}

#[test]
fn the_raw_tab_follows_the_selected_error() {
    let output = r#"{"schema_version":"refund-v1","order_id":"","amount_minor":"x","currency":"EUR","expected_version":7}"#;
    let record = serde_json::json!({"id": "three-errors", "output": output}).to_string();
    let dir = refund_workspace_with(&[("three.json", &record)]);
    let mut app = app_on(dir.path(), "ws", 120, 30);
    select(&mut app, "three-errors");
    let errors = app.detail.detail().unwrap().errors.clone();
    assert!(errors.len() >= 3, "{errors:?}");
    let ats: Vec<&str> = errors.iter().map(|e| e.at.as_str()).collect();
    key(&mut app, KeyCode::Char('3'));
    assert!(raw_error_line(&app).starts_with(&format!("▲ {} ", ats[0])));
    keys(&mut app, "n");
    assert_eq!(app.detail.tab, Tab::Raw);
    assert_eq!(app.detail.error, 1);
    let raw = app.detail.detail().unwrap().raw.as_ref().unwrap();
    assert_eq!(raw.error.as_ref().unwrap().0, ats[1]);
    assert!(
        raw_error_line(&app).starts_with(&format!("▲ {} ", ats[1])),
        "{}",
        raw_error_line(&app)
    );
    // the marked characters are error 1's value, not error 0's
    let marked: String = raw.lines[0]
        .iter()
        .filter(|(_, m)| *m)
        .map(|(s, _)| s.as_str())
        .collect();
    let col: usize = ats[1].split(':').nth(1).unwrap().parse().unwrap();
    assert!(
        output[col - 1..].starts_with(&marked),
        "{marked:?} at {}",
        ats[1]
    );
    keys(&mut app, "N");
    assert_eq!(
        app.detail
            .detail()
            .unwrap()
            .raw
            .as_ref()
            .unwrap()
            .error
            .as_ref()
            .unwrap()
            .0,
        ats[0]
    );
}

#[test]
fn the_response_tab_labels_a_captures_own_warning_by_its_severity() {
    use crate::core::verdict::Warning;
    let ws = Workspace::open(&sample("refund")).unwrap();
    let mut ev = evaluate_all(&ws)
        .into_iter()
        .find(|e| e.verdict.id == "valid-proposal")
        .unwrap();
    let w = |code: &str, severity: Option<&str>, file: Option<&str>| Warning {
        code: code.into(),
        severity: severity.map(Into::into),
        file: file.map(Into::into),
        pointer: None,
        at: None,
        message: "m".into(),
    };
    ev.verdict.warnings = vec![
        w("CANDIDATES_IGNORED", None, None),
        w("SOME_NOTE", Some("info"), None),
        w(
            "OPEN_OBJECT",
            Some("warning"),
            Some("schemas/x.schema.json"),
        ),
    ];
    let d = crate::tui::detail::Detail::new(Some(&ws), &ev);
    let lines: Vec<&str> = d
        .response
        .iter()
        .map(|(l, _)| l.as_str())
        .filter(|l| l.contains(": m"))
        .collect();
    assert_eq!(
        lines,
        ["warning CANDIDATES_IGNORED: m", "info SOME_NOTE: m"]
    );
}

#[test]
fn the_response_tab_shows_a_gateways_native_stop_reason() {
    let ws = Workspace::open(&sample("providers")).unwrap();
    let ev = evaluate_all(&ws)
        .into_iter()
        .find(|e| e.verdict.id == "openai-compatible/openrouter-stop")
        .unwrap();
    let d = crate::tui::detail::Detail::new(Some(&ws), &ev);
    let lines: Vec<&str> = d.response.iter().map(|(l, _)| l.as_str()).take(4).collect();
    assert_eq!(
        lines,
        [
            "format      capture",
            "provider    openai-compatible",
            "stop reason stop",
            "native stop STOP"
        ]
    );
}

#[test]
fn an_invalid_capture_record_is_shown_raw_and_its_tabs_say_it_could_not_be_read() {
    let dir = refund_workspace_with(&[(
        "bad.jsonl",
        "{\"id\": \"typo\", \"output\": \"{}\", \"intnet\": {}}\n{\"id\": \"cut\", \"output\": \"{}\"\n",
    )]);
    let mut app = app_on(dir.path(), "ws", 120, 30);
    // the unknown key: the record is JSON, so no position
    select(&mut app, "typo");
    let d = app.detail.detail().unwrap();
    assert_eq!(d.errors[0].reason, "INVALID_CAPTURE");
    assert_eq!(
        d.contract.as_ref().unwrap_err(),
        "the capture record could not be read (see Raw), so the contract it names is unknown; without one, default_contract refund-v1 (verdict.toml) would apply"
    );
    assert_eq!(
        d.diff.as_ref().unwrap_err(),
        "the capture record could not be read, so its confirmed intent is unknown (see Raw)"
    );
    let raw = d.raw.as_ref().unwrap();
    let text: Vec<String> = raw
        .lines
        .iter()
        .map(|l| l.iter().map(|(s, _)| s.as_str()).collect())
        .collect();
    assert_eq!(text, [r#"{"id": "typo", "output": "{}", "intnet": {}}"#]);
    let (at, msg) = raw.error.as_ref().unwrap();
    assert_eq!(at, "");
    assert!(
        msg.starts_with("the capture record, as read: ") && msg.contains("intnet"),
        "{msg}"
    );
    key(&mut app, KeyCode::Char('3'));
    assert!(screen(&app).contains(r#"{"id": "typo", "output": "{}", "intnet": {}}"#));
    // not JSON: the position where it stops is marked
    select(&mut app, "captures/bad.jsonl:2");
    let raw = app.detail.detail().unwrap().raw.clone().unwrap();
    assert_eq!(raw.error.as_ref().unwrap().0, "1:29");
    assert!(raw.lines[0].iter().any(|(_, m)| *m), "{:?}", raw.lines);
    let s = screen(&app);
    assert!(s.contains("▲ 1:29 the capture record, as read: "), "{s}");
}

#[test]
fn a_record_of_a_compressed_log_shows_the_verdict_check_gives_it() {
    use std::io::Write;
    let text = std::fs::read(sample("refund").join("captures/cases.jsonl")).unwrap();
    let dir = refund_workspace_with(&[]);
    let log = dir.path().join("captures/cases.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    std::fs::write(&log, gz.finish().unwrap()).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let want = ws
        .read_file(&log)
        .iter()
        .filter_map(|r| ws.check(r))
        .find(|v| v.id == "amount-8000-intent-5000")
        .unwrap();
    assert_eq!(want.source.file().as_ref(), "captures/cases.jsonl.gz");
    let mut app = app_on(dir.path(), "refund.gz", 120, 30);
    // the load re-reads the record from the archive, inflated from its start
    select(&mut app, "amount-8000-intent-5000");
    assert_eq!(
        serde_json::to_value(&shown(&app).verdict).unwrap(),
        serde_json::to_value(&want).unwrap()
    );
    let s = screen(&app);
    assert!(s.contains("INTENT_MISMATCH /amount_minor"), "{s}");
    // the Raw tab: the model's text as the archive holds it
    key(&mut app, KeyCode::Char('3'));
    let s = screen(&app);
    assert!(s.contains(r#""order_id":"O-1042","amount_minor":8"#), "{s}");
}

#[test]
fn a_native_record_names_its_shape_in_the_title_and_the_response_tab() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    std::fs::write(
        dir.path().join("schemas/t.schema.json"),
        r#"{"type":"object"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("captures/out.jsonl"),
        r#"{"custom_id":"ticket-3","result":{"type":"expired"}}"#,
    )
    .unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let ev = evaluate_all(&ws).remove(0);
    let d = crate::tui::detail::Detail::new(Some(&ws), &ev);
    assert_eq!(d.title, "ticket-3 · anthropic-batch");
    let lines: Vec<&str> = d.response.iter().map(|(l, _)| l.as_str()).take(3).collect();
    assert_eq!(
        lines,
        [
            "format      anthropic-batch",
            "provider    anthropic-batch",
            "stop reason expired"
        ]
    );
}

#[test]
fn the_response_tab_shows_the_providers_model_and_usage_in_meta() {
    let dir = workspace_of(&[
        ("schemas/s.schema.json", r#"{"type": "object"}"#),
        (
            "captures/batch.jsonl",
            r#"{"custom_id": "r1", "response": {"status_code": 200, "body": {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}}, "error": null}"#,
        ),
    ]);
    let ws = Workspace::open(dir.path()).unwrap();
    let ev = evaluate_all(&ws).remove(0);
    let d = crate::tui::detail::Detail::new(Some(&ws), &ev);
    let text: Vec<&str> = d.response.iter().map(|(l, _)| l.as_str()).collect();
    let at = text
        .iter()
        .position(|l| l.starts_with("meta"))
        .unwrap_or_else(|| panic!("{text:#?}"));
    let block = text[at..].join("\n");
    assert!(block.contains("\"model\": \"gpt-4o-mini\""), "{block}");
    assert!(
        block.contains("\"input_tokens\": 3") && block.contains("\"total_tokens\": 5"),
        "{block}"
    );
}

/// The Contract tab of a capture whose request sent a schema beside the server contract:
/// the sent schema and the server contract side by side, the differing pointers marked,
/// the variant counted over the workspace (`samples/requests`).
#[test]
fn drift_contract_tab_shows_the_sent_schema_beside_the_server_contract() {
    let mut app = app_on(&sample("requests"), "samples/requests", 150, 40);
    select(&mut app, "refund-102");
    key(&mut app, KeyCode::Char('5'));
    let d = app.detail.detail().unwrap();
    let drift = d.contract.as_ref().unwrap().drift.as_ref().unwrap();
    assert_eq!(
        drift.lines[1].0,
        "variant 1 of 2: 3 captures (refund-101, refund-102, refund-103)"
    );
    assert_screen_snapshot!(
        "drift_contract_tab_shows_the_sent_schema_beside_the_server_contract",
        screen(&app)
    );
}

/// The drift view's render function draws only its sub-model: the heading lines, then the
/// two schemas side by side under their titles, the marked lines highlighted.
#[test]
fn the_drift_view_renders_its_sub_model_alone() {
    use crate::tui::detail::{DriftView, JsonView, Role};
    let view = |lines: &[&str], marks: Vec<Option<std::ops::RangeInclusive<usize>>>| JsonView {
        lines: lines.iter().map(|l| l.to_string()).collect(),
        marks,
    };
    let d = DriftView {
        lines: vec![
            ("sent  the text format \"t\"".into(), Role::Heading),
            ("REQUEST_LOOSER /minimum: gone".into(), Role::Highlight),
        ],
        hash: 1,
        sent: view(&["{", "  \"type\": \"integer\"", "}"], vec![Some(0..=0)]),
        server: view(
            &["{", "  \"type\": \"integer\",", "  \"minimum\": 1", "}"],
            vec![Some(2..=2)],
        ),
        sent_title: "sent".into(),
        server_title: "server".into(),
    };
    let theme = crate::tui::theme::Theme::default();
    let mut t = Terminal::new(TestBackend::new(50, 8)).unwrap();
    t.draw(|f| {
        crate::tui::ui::tabs::draw_drift(
            f,
            f.area(),
            &theme,
            &d,
            crate::tui::ui::tabs::Scroll {
                at: 0,
                most: &std::cell::Cell::new(0),
            },
        )
    })
    .unwrap();
    let buf = t.backend().buffer();
    let lines = rows_in(buf, buf.area);
    assert_eq!(
        lines,
        [
            "sent  the text format \"t\"                         ",
            "REQUEST_LOOSER /minimum: gone                     ",
            "sent                      server                  ",
            "  1 {                    │  1 {                   ",
            "  2   \"type\": \"integer\"  │  2   \"type\": \"integer\",",
            "  3 }                    │  3   \"minimum\": 1      ",
            "                         │  4 }                   ",
            "                         │                        ",
        ]
    );
    // the marked lines: the sent schema's first, the server's `minimum`
    assert_eq!(buf[(4, 3)].bg, theme.highlight().bg.unwrap());
    assert_eq!(buf[(30, 5)].bg, theme.highlight().bg.unwrap());
    assert_ne!(buf[(30, 4)].bg, theme.highlight().bg.unwrap());
}

#[test]
fn a_repairable_capture_says_which_repair_would_make_it_pass() {
    let mut app = refund(120, 30);
    select(&mut app, "extra-field-approved");
    let s = screen(&app);
    assert!(
        s.contains(" repair: would pass after `drop-unknown` (not applied)"),
        "{s}"
    );
    assert_screen_snapshot!(
        "a_repairable_capture_says_which_repair_would_make_it_pass",
        s
    );
    // a capture no repair helps: no repair line, the message keeps both lines
    select(&mut app, "missing-expected-version");
    assert_eq!(app.detail.detail().unwrap().repair, None);
    assert!(!screen(&app).contains(" repair: "));
}

#[test]
fn a_repair_that_leaves_another_error_names_it() {
    let r = crate::core::repair::Repair {
        name: crate::core::repair::RepairName::UnquoteNumber,
        would_be: crate::core::repair::WouldBe {
            stage: crate::core::verdict::Stage::Business,
            decision: crate::core::verdict::Decision::Reject,
            reason: Some(crate::core::verdict::Reason::new("EXCEEDS_REMAINING")),
        },
    };
    assert_eq!(
        crate::tui::detail::repair_line(&r),
        (
            "after `unquote-number` it would be business/EXCEEDS_REMAINING (reject; not applied)"
                .to_string(),
            false
        )
    );
}

/// The selected error's message is shown whole below the error table, wrapped over as many
/// lines as it takes (up to half the pane): a hint at its end is not cut off, with or
/// without a repair line under it.
#[test]
fn a_long_message_and_its_hint_wrap_below_the_error_table() {
    let mut app = app_on(&sample("providers"), "samples/providers", 120, 30);
    select(&mut app, "anthropic/several-tools-no-tool");
    let s = screen(&app);
    let below: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.contains("│ › "))
        .take(4)
        .collect();
    let text: String = below
        .iter()
        .map(|l| {
            // the detail pane's side of the line (`screen` quotes each line), without its
            // border and the mark
            let l = l
                .strip_prefix('"')
                .and_then(|l| l.strip_suffix('"'))
                .unwrap_or(l);
            let detail = l.rsplit("││").next().unwrap_or(l);
            detail
                .trim_end_matches(|c: char| c == '│' || c.is_whitespace())
                .trim_start_matches(|c: char| c == '›' || c.is_whitespace())
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.ends_with(
            "(hint: set `tool` to the name (or call id) of the call that is the proposal)"
        ),
        "{s}"
    );
    let mut app = refund(120, 30);
    select(&mut app, "fenced-json");
    let s = screen(&app);
    let at = s
        .lines()
        .position(|l| l.contains("│ › "))
        .expect("the message");
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[at + 1].contains("start with the value"), "{s}");
    assert!(lines[at + 2].contains(" repair: "), "{s}");
}

/// `n` on a capture with one error or none says so on the footer line (it used to do
/// nothing visible there).
#[test]
fn n_with_one_error_or_none_says_so() {
    let mut app = refund(120, 30);
    select(&mut app, "valid-proposal");
    keys(&mut app, "n");
    let none = "n/N: this capture has no errors to step through";
    assert_eq!(app.note.as_deref(), Some(none));
    assert!(screen(&app).contains(none));
    select(&mut app, "duplicate-key");
    assert_eq!(app.detail.detail().unwrap().errors.len(), 1);
    keys(&mut app, "n");
    let one = "n/N: no other error to step to (this capture has one)";
    assert_eq!(app.note.as_deref(), Some(one));
    assert_eq!(app.detail.tab, Tab::Proposal);
    assert!(screen(&app).contains(one));
}

/// The answer to a key is gone at the next key, and the key hints are back in its place; a
/// status (a watcher error) it covered shows again, and stays until its state changes.
#[test]
fn a_note_lasts_until_the_next_key_and_a_status_until_its_state_changes() {
    let mut app = refund(120, 30);
    select(&mut app, "valid-proposal");
    let footer = |app: &App| screen(app).lines().last().unwrap_or_default().to_string();
    let hints = footer(&app);
    assert!(hints.contains("help"), "{hints}");
    keys(&mut app, "n");
    let note = "n/N: this capture has no errors to step through";
    assert!(footer(&app).contains(note), "{}", footer(&app));
    keys(&mut app, "j");
    assert_eq!(app.note, None);
    assert_eq!(footer(&app), hints);
    app.status = Some("watcher: gone".into());
    keys(&mut app, "k");
    assert!(footer(&app).contains("watcher: gone"), "{}", footer(&app));
    select(&mut app, "valid-proposal");
    keys(&mut app, "n");
    assert!(footer(&app).contains(note), "{}", footer(&app));
    keys(&mut app, "j");
    assert!(footer(&app).contains("watcher: gone"), "{}", footer(&app));
}

#[test]
fn the_raw_tab_wraps_wide_characters_by_their_columns_and_sets_the_caret_under_the_error() {
    // the user's own case: CJK text, the schema error at `"五千"` (1:88), a wide row
    let output = r#"{"schema_version":"refund-v1","order_id":"注文番号一二三四五六七八九十注文番号一二三四五六七八九十","amount_minor":"五千","currency":"KRW","expected_version":1}"#;
    let record = serde_json::json!({"id": "wide", "output": output}).to_string();
    let dir = refund_workspace_with(&[("wide.json", &record)]);
    let mut app = app_on(dir.path(), "ws", 120, 30);
    select(&mut app, "wide");
    key(&mut app, KeyCode::Char('3'));
    let s = screen(&app);
    let rows: Vec<String> = s
        .lines()
        .filter_map(|l| l.split("││").nth(1))
        // the pane's text, without its border and the test backend's note on wide symbols
        .map(|d| d.split("│\"").next().unwrap_or("").trim_end().to_string())
        .collect();
    let at = rows.iter().position(|r| r.starts_with("  1 {")).expect(&s);
    // 66 columns of text a row (70 less the gutter's 4): no row is wider, the wide
    // characters are not split, continuation rows keep the gutter, and the caret, after
    // the whole line, is at the column of the quote that opens `"五千"` in its row (4 + 32
    // + 17 columns in)
    assert_eq!(
        &rows[at..at + 4],
        &[
            r#"  1 {"schema_version":"refund-v1","order_id":"注文番号一二三四五六七八"#,
            r#"    九十注文番号一二三四五六七八九十","amount_minor":"五千","currency""#,
            r#"    :"KRW","expected_version":1}"#,
            r#"                                                     ^"#,
        ],
        "{s}"
    );
    for r in &rows[at..at + 4] {
        assert!(
            unicode_width::UnicodeWidthStr::width(r.as_str()) <= 70,
            "{r}"
        );
    }
}

/// The error area's rows as drawn, from the selected error's message line (` › `) down,
/// joined with runs of spaces made one (the wrapped message whole again).
fn message_below_the_table(app: &App) -> String {
    let rows = rows_in(terminal(app).backend().buffer(), app.screen.areas.errors);
    let from = rows
        .iter()
        .position(|l| l.starts_with(" › "))
        .unwrap_or_else(|| panic!("no message line in {rows:#?}"));
    rows[from..]
        .join(" ")
        .trim_start()
        .trim_start_matches('›')
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// At 80x24 a message too long for the error area's rows is still read whole: its hint
/// (`did you mean output`, the end of an INVALID_CAPTURE message) is on screen.
#[test]
fn a_long_message_s_hint_is_readable_at_80x24() {
    let dir = refund_workspace_with(&[("typo.jsonl", "{\"id\":\"typo\",\"outptu\":\"{}\"}\n")]);
    let mut app = app_on(dir.path(), "ws", 80, 24);
    select(&mut app, "typo");
    let message = app.detail.detail().unwrap().errors[0].message.clone();
    assert!(message.contains("did you mean"), "{message}");
    let whole = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = message_below_the_table(&app);
    assert!(shown.starts_with(&whole), "{shown:?}\n{}", screen(&app));
    // the table grew by the rows the message takes past its two: the tab keeps the three
    // it always keeps
    assert_eq!(app.screen.areas.content.height, 3);
    // at the smallest size what does not fit ends in `…`
    let mut app = app_on(dir.path(), "ws", 60, 15);
    select(&mut app, "typo");
    let shown = message_below_the_table(&app);
    assert!(
        shown.ends_with('…') && whole.starts_with(shown.trim_end_matches('…').trim_end()),
        "{shown:?}"
    );
}

/// A message of wide characters or of one long word wraps inside the detail pane: every
/// row of the screen keeps its right border (the message's row drew over it).
#[test]
fn a_message_of_wide_characters_or_one_long_word_keeps_the_pane_s_border() {
    let output = |amount: &str| {
        serde_json::json!({"schema_version": "refund-v1", "order_id": "O-1",
            "amount_minor": amount, "currency": "KRW", "expected_version": 1})
        .to_string()
    };
    let records = [
        serde_json::json!({"id": "msg-cjk", "output": output(&"注".repeat(60))}),
        serde_json::json!({"id": "msg-ascii", "output": output(&"a".repeat(150))}),
    ];
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    let dir = refund_workspace_with(&[("wide.jsonl", &text)]);
    for width in [60, 61, 73, 75, 119, 120] {
        for id in ["msg-cjk", "msg-ascii"] {
            let mut app = app_on(dir.path(), "ws", width, 30);
            select(&mut app, id);
            let t = terminal(&app);
            let buf = t.backend().buffer();
            let right = app.screen.areas.detail.right() - 1;
            for y in app.screen.areas.detail.y + 1..app.screen.areas.detail.bottom() - 1 {
                assert_eq!(
                    buf[(right, y)].symbol(),
                    "│",
                    "{id} at {width} columns, row {y}:\n{}",
                    screen(&app)
                );
            }
        }
    }
}

/// A long id of wide characters is cut in the middle of the detail pane's title, its end
/// kept, and the border's corner stays (it ran into the corner, cut without a mark).
#[test]
fn a_long_wide_id_is_cut_in_the_title_and_keeps_its_end() {
    let id = format!("開始{}終了", "注".repeat(40));
    let record = serde_json::json!({"id": id, "output": "{}"}).to_string();
    let dir = refund_workspace_with(&[("wide.json", &record)]);
    for width in [61, 120, 150] {
        let mut app = app_on(dir.path(), "ws", width, 30);
        select(&mut app, &id);
        let t = terminal(&app);
        let buf = t.backend().buffer();
        let d = app.screen.areas.detail;
        let top: String = (d.x..d.right()).map(|x| buf[(x, d.y)].symbol()).collect();
        // (a wide character's second cell reads as a space: spaces left out)
        let top: String = top.chars().filter(|c| *c != ' ').collect();
        assert!(top.starts_with("┌開始注"), "{width}: {top}");
        assert!(top.contains('…') && top.contains("終了─"), "{width}: {top}");
        assert!(top.ends_with("─┐"), "{width}: {top}");
    }
}

/// After `G` in the detail pane, `k` and `PgUp` move back from the end at once (the scroll
/// was left far past the end, only clamped when drawn, so they did nothing).
#[test]
fn after_the_end_of_a_tab_k_moves_back_at_once() {
    let mut app = refund(120, 40);
    select(&mut app, "amount-9000");
    keys(&mut app, "5");
    key(&mut app, KeyCode::Tab);
    let top = |app: &App| {
        let s = screen(app);
        let line = s
            .lines()
            .find(|l| l.contains("Ctx") && l.contains("Diff"))
            .map(|_| ());
        assert!(line.is_some(), "{s}");
        let c = app.screen.areas.content;
        let t = terminal(app);
        let buf = t.backend().buffer();
        (c.x..c.right())
            .map(|x| buf[(x, c.y)].symbol())
            .collect::<String>()
    };
    let first = top(&app);
    key(&mut app, KeyCode::Char('G'));
    let end = top(&app);
    assert_ne!(first, end);
    key(&mut app, KeyCode::Char('k'));
    let back = top(&app);
    assert_ne!(back, end, "k moved back one line from the end");
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(top(&app), end);
    // j past the end stays at the end, and k then moves back at once
    for _ in 0..50 {
        key(&mut app, KeyCode::Char('j'));
    }
    assert_eq!(top(&app), end);
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(top(&app), back);
    key(&mut app, KeyCode::PageUp);
    assert_ne!(top(&app), back);
}

/// At the smallest screen the Diff and Repair tabs' heading wraps under its own text and,
/// cut to the rows it has, ends in `…`; a column title too wide ends in `…` (the heading's
/// second row started at the border, its rest was left out unmarked, and `confirmed
/// intent` was cut to `confirmed in`).
#[test]
fn the_side_by_side_heading_and_titles_mark_what_they_cut() {
    let mut app = refund(60, 15);
    select(&mut app, "amount-9000");
    keys(&mut app, "1");
    assert_eq!(
        content_rows(&app)[..3],
        [
            " not compared (decided",
            " before the intent check):…",
            " proposal       confirmed i…",
        ]
    );
    select(&mut app, "amount-as-string");
    keys(&mut app, "0");
    assert_eq!(
        content_rows(&app)[..2],
        ["would pass after…", "proposal       after unquot…"]
    );
}

/// At the smallest screen a line that is not wrapped is cut with `…` where the pane ends:
/// the error table's repair line, the Proposal's and the Context's lines (`repair: would
/// pass after `u`, `"5000",` as `"5000"`, `server-sid` were cut unmarked).
#[test]
fn an_unwrapped_line_cut_at_the_pane_s_edge_ends_in_an_ellipsis() {
    let mut app = refund(60, 15);
    select(&mut app, "amount-as-string");
    let errors = rows_of(&app, app.screen.areas.errors);
    assert_eq!(errors.last().unwrap(), " repair: would pass after `…");
    keys(&mut app, "2");
    assert_eq!(
        content_rows(&app),
        [
            "  1 {",
            "  2   \"amount_minor\": \"5000…",
            "  3   \"currency\": \"KRW\","
        ]
    );
    keys(&mut app, "6");
    assert_eq!(content_rows(&app)[0], "context (trusted, server-si…");
    // a capture without errors says so, cut with `…` (it was `every stage pass`)
    select(&mut app, "valid-proposal");
    let errors = rows_of(&app, app.screen.areas.errors);
    assert_eq!(errors, [" no errors: every stage pas…"]);
}

/// `G` in the Raw tab shows its last page full, the last row at the bottom (it scrolled
/// the last row to the top, the rest of the tab blank).
#[test]
fn g_in_the_raw_tab_shows_the_last_page_full() {
    let mut app = refund(80, 24);
    select(&mut app, "trailing-prose");
    keys(&mut app, "3");
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Char('G'));
    assert_eq!(
        content_rows(&app),
        [
            r#"    :"O-1042","amount_minor":5000,"currency""#,
            r#"    :"KRW","expected_version":7}"#,
            "  2",
            "  3 I've prepared a refund of 5,000 KRW for",
            "    order O-1042. Let me know if you'd like",
            "    to change anything.",
            "    ^",
            "",
            "▲ 3:1 expected the end of the text after the",
            r#"JSON value, found "I've prepared a refund of"#,
            r#"5,000 …""#,
        ]
    );
    // `k` moves back one row from there
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(
        content_rows(&app)[0],
        r#"  1 {"schema_version":"refund-v1","order_id""#
    );
}

/// The Raw tab's caret comes after the whole of a wrapped error line, at the error's
/// column in its row (it was drawn between the line's rows, splitting it).
#[test]
fn the_raw_tab_caret_comes_after_the_whole_wrapped_line() {
    let mut app = refund(80, 24);
    select(&mut app, "trailing-prose");
    keys(&mut app, "3");
    assert_eq!(
        content_rows(&app)[4..9],
        [
            "  3 I've prepared a refund of 5,000 KRW for",
            "    order O-1042. Let me know if you'd like",
            "    to change anything.",
            "    ^",
            "",
        ]
    );
}
