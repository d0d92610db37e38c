//! The whole screen at small and odd sizes.

use super::*;

#[test]
fn too_small_terminal_says_so_and_resizing_never_panics() {
    let mut app = refund(120, 30);
    app.update(Msg::Resize(50, 12));
    assert_screen_snapshot!(
        "too_small_terminal_says_so_and_resizing_never_panics",
        screen(&app)
    );
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
    let s = screen(&app);
    // every tab has a readable label, and an id keeps at least 20 characters
    let bar = s
        .lines()
        .find(|l| l.contains(" Diff "))
        .expect("the tab bar");
    for tab in Tab::ALL {
        assert!(bar.contains(&format!(" {} ", tab.short_title())), "{bar}");
    }
    assert!(s.contains("│ ⊘ CURREN… currency-u…-krw-order│"), "{s}");
    assert_screen_snapshot!(
        "at_80x24_the_footer_keeps_help_and_quit_and_the_tabs_are_readable",
        screen(&app)
    );
    for (w, h) in [(80, 24), (60, 20), (40, 12), (1, 1), (200, 3)] {
        app.update(Msg::Resize(w, h));
        let _ = screen(&app);
    }
    app.update(Msg::Resize(0, 0)); // (a TestBackend cannot be 0 wide; the update must not panic)
}

#[test]
fn the_stored_layout_follows_the_resize_and_the_error_count() {
    use crate::tui::app::layout::areas;
    let mut app = refund(120, 30);
    select(&mut app, "extra-field-approved");
    let n = app.detail.detail().unwrap().errors.len();
    assert!(n > 0, "{n}");
    assert_eq!(app.screen.areas, areas(app.screen.area, n));
    assert_eq!(app.screen.areas.errors.height, (n.min(4) + 3) as u16);
    select(&mut app, "valid-proposal");
    assert!(app.detail.detail().unwrap().errors.is_empty());
    assert_eq!(app.screen.areas.errors.height, 1);
    assert_eq!(app.screen.areas, areas(app.screen.area, 0));
    app.update(Msg::Resize(100, 40));
    assert_eq!(app.screen.area, Rect::new(0, 0, 100, 40));
    assert_eq!(app.screen.areas, areas(Rect::new(0, 0, 100, 40), 0));
    assert_eq!(app.screen.areas.footer.y, 39);
    app.update(Msg::Resize(50, 12));
    assert_eq!(app.screen.areas, crate::tui::app::Areas::default());
}

/// A schema with two `warning` lint findings (OPEN_OBJECT, FORMAT_NOT_ASSERTED) and one
/// `info` (OPTIONAL_PROPERTY): `verdict lint` says `0 errors, 2 warnings, 1 info`.
const LINTED_SCHEMA: &str = r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"to": {"type": "string", "format": "email"}, "n": {"type": "integer"}}, "required": ["to"]}"#;

#[test]
fn lint_findings_are_counted_and_labelled_by_severity_and_shown_on_the_contract_tab() {
    let dir = workspace_of(&[
        ("schemas/note.schema.json", LINTED_SCHEMA),
        (
            "captures/note.json",
            r#"{"id": "note-1", "output": "{\"to\": \"a@b.c\"}"}"#,
        ),
    ]);
    let mut app = app_on(dir.path(), "ws", 140, 30);
    select(&mut app, "note-1");
    let s = screen(&app);
    let header = s.lines().next().unwrap();
    assert!(
        header.contains("1 contract  ·  2 warnings, 1 info  "),
        "{header}"
    );
    // the Response tab no longer lists the contract's findings
    keys(&mut app, "4");
    let s = screen(&app);
    assert!(
        !s.contains("OPEN_OBJECT") && !s.contains("OPTIONAL_PROPERTY"),
        "{s}"
    );
    // the Contract tab does, each under its own severity, as `check` prints them
    keys(&mut app, "5");
    let c = app.detail.detail().unwrap().contract.as_ref().unwrap();
    let lines: Vec<&str> = c.rules.iter().take(4).map(|(l, _)| l.as_str()).collect();
    assert_eq!(lines[0], "lint  3 findings");
    assert!(lines[1].starts_with("schemas/note.schema.json:1:1 warning[OPEN_OBJECT] "));
    assert!(lines[2].starts_with("schemas/note.schema.json:1:129 warning[FORMAT_NOT_ASSERTED] "));
    assert!(
        lines[3]
            .starts_with("schemas/note.schema.json:1:144 info[OPTIONAL_PROPERTY] `n` is declared"),
        "{}",
        lines[3]
    );
    let s = screen(&app);
    assert!(s.contains("info[OPTIONAL_PROPERTY]"), "{s}");
}

/// The header says why nothing is watched when the watcher could not start (its error,
/// control characters escaped: the message may hold a path), in place of a bare
/// `○ not watching`.
#[test]
fn the_header_says_why_nothing_is_watched() {
    let mut app = refund(140, 30);
    let first = |app: &App| screen(app).lines().next().unwrap_or("").to_string();
    assert!(
        first(&app).starts_with(
            "\" verdict   samples/refund  ○ not watching  1 contract  ·  0 warnings  "
        ),
        "{}",
        first(&app)
    );
    app.watch.off_reason = Some(
        crate::core::text::escape_control(
            "OS file watch limit reached. about [\"/w/evil\u{1b}]0;x\u{7}\"]",
        )
        .into_owned(),
    );
    assert!(
        first(&app).starts_with(
            "\" verdict   samples/refund  ○ not watching: OS file watch limit reached. about [\"/w/evil\\u{1b}]0;x\\u{7}\"]  1 contract  ·  0 warnings  "
        ),
        "{}",
        first(&app)
    );
}

/// The first `n` rows of the screen as drawn, trailing spaces trimmed.
fn top_rows(app: &App, n: u16) -> Vec<String> {
    rows_of(
        app,
        ratatui::layout::Rect::new(0, 0, app.screen.area.width, n),
    )
}

/// At the smallest screen (60x15) the header's lines are wider than the terminal: each
/// is cut with `…` (the first line was cut in `0 warnings` unmarked, the funnel in
/// `business`), the funnel after a whole stage; beside the note of a contract change, the
/// note too.
#[test]
fn a_header_line_too_wide_is_cut_with_an_ellipsis() {
    let mut app = refund(60, 15);
    assert_eq!(
        top_rows(&app, 2),
        [
            " verdict   samples/refund  ○ not watching  1 contract  ·  0…",
            " captures 25 > completed 21 > parsed 15 > schema 9 > …",
        ]
    );
    fix_8000_by_a_schema_edit(&mut app);
    assert_eq!(
        top_rows(&app, 2),
        [
            " verdict   samples/refund  ○ not watching  1 contract  ·  0…",
            " captures 25 > …               refund-v1 changed: 1 no lon…",
        ]
    );
    for (w, h) in [(80, 24), (100, 30)] {
        app.update(Msg::Resize(w, h));
        for row in top_rows(&app, 2) {
            assert!(
                unicode_width::UnicodeWidthStr::width(row.as_str()) <= w as usize,
                "{row}"
            );
        }
    }
    app.update(Msg::Resize(80, 24));
    assert_eq!(
        top_rows(&app, 2),
        [
            " verdict   samples/refund  ○ not watching  1 contract  ·  0 warnings  ·  ↺ 1 fl…",
            " captures 25 > completed 21 > …          refund-v1 changed: 1 no longer meets …",
        ]
    );
}
