//! The help and review overlays, and the footer that follows the keymap.

use super::*;

#[test]
fn help_overlay_from_the_keymap() {
    let mut app = refund(120, 34);
    keys(&mut app, "?");
    assert_eq!(app.modes.overlay, Some(Overlay::Help));
    let s = screen(&app);
    for b in crate::tui::keymap::KEYMAP {
        match b.action {
            crate::tui::keymap::Action::ShowTab(t) => {
                assert!(
                    s.contains(&format!("{} {}", b.label, t.title())),
                    "{t:?} missing"
                )
            }
            a => assert!(s.contains(a.description()), "{a:?} missing"),
        }
    }
    assert_screen_snapshot!("help_overlay_from_the_keymap", s);
    keys(&mut app, "x");
    assert!(app.modes.overlay.is_none() && !app.out.quit);
}

#[test]
fn help_and_footer_follow_the_config_overrides() {
    let config = crate::tui::config::Config::from_toml(
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
    assert_screen_snapshot!("help_and_footer_follow_the_config_overrides", s);
    keys(&mut app, "?");
    keys(&mut app, "x");
    assert!(app.out.quit);
}

#[test]
fn a_contract_change_is_summed_up_in_the_header_and_listed_in_review() {
    let mut app = refund(140, 30);
    fix_8000_by_a_schema_edit(&mut app);
    let s = screen(&app);
    assert!(
        s.contains("refund-v1 changed: 1 no longer meets expect"),
        "{s}"
    );
    keys(&mut app, "v");
    assert_eq!(app.modes.overlay, Some(Overlay::Review));
    let s = screen(&app);
    assert!(s.contains("Review: last schema or rules change"));
    assert!(s.contains("amount-8000-intent-5000 business/INTENT_MISMATCH → ready"));
    keys(&mut app, "x");
    assert!(app.modes.overlay.is_none() && !app.out.quit);
}

#[test]
fn an_overlay_opens_over_the_triage_tree_and_closing_it_keeps_the_tree() {
    let mut app = refund(120, 30);
    keys(&mut app, "t?");
    assert_eq!(app.modes.mode, Mode::Triage);
    assert_eq!(app.modes.overlay, Some(Overlay::Help));
    assert!(screen(&app).contains(" Help "));
    keys(&mut app, "x");
    assert_eq!(app.modes.overlay, None);
    assert_eq!(app.modes.mode, Mode::Triage);
    assert!(screen(&app).contains(" Triage "));
    // the overlays never stack: the key that would open help closes the review
    keys(&mut app, "v");
    assert_eq!(app.modes.overlay, Some(Overlay::Review));
    keys(&mut app, "?");
    assert_eq!(app.modes.overlay, None);
    assert!(!app.out.quit);
}

/// A flip whose cause is longer than the review overlay is wide wraps: its end is on
/// screen, not cut at the overlay's edge.
#[test]
fn a_long_flip_cause_wraps_in_the_review_overlay() {
    let mut app = refund(80, 30);
    select(&mut app, "valid-proposal");
    let ready = shown(&app).verdict.clone();
    select(&mut app, "extra-field-approved");
    let failing = shown(&app).clone();
    send(
        &mut app,
        flipped_by(
            failing,
            &ready,
            "schemas/refund-v1.schema.json",
            Some("refund-v1"),
        ),
    );
    keys(&mut app, "v");
    let s = screen(&app);
    assert!(
        s.contains("extra-field-approved ready → schema/SCHEMA_MISMATCH"),
        "{s}"
    );
    assert!(s.contains("was unexpected)"), "{s}");
}

/// The help overlay's rows as drawn (inside its border), and its top border.
fn help_box(app: &App) -> (String, Vec<String>) {
    overlay_box(app, "┌ Help ")
}

/// The rows of the overlay whose top border starts with `title` as drawn (inside its
/// border), and its top border.
fn overlay_box(app: &App, title: &str) -> (String, Vec<String>) {
    let t = terminal(app);
    let buf = t.backend().buffer();
    let area = app.screen.area;
    // the overlay's border: the first row whose text holds its title
    let row = |y: u16, x0: u16, x1: u16| -> String {
        (x0..x1).map(|x| buf[(x, y)].symbol()).collect::<String>()
    };
    let top = (0..area.height)
        .find(|&y| row(y, 0, area.width).contains(title))
        .expect("the overlay");
    let left = (0..area.width)
        .find(|&x| buf[(x, top)].symbol() == "┌" && row(top, x, area.width).starts_with(title))
        .unwrap();
    let right = (left + 1..area.width)
        .find(|&x| buf[(x, top)].symbol() == "┐")
        .unwrap();
    let bottom = (top + 1..area.height)
        .find(|&y| buf[(left, y)].symbol() == "└")
        .unwrap();
    let rows = (top + 1..bottom)
        .map(|y| row(y, left + 1, right).trim_end().to_string())
        .collect();
    (row(top, left, right + 1), rows)
}

/// Every row of the help, read by scrolling it from the top to the end with `j`.
fn whole_help(app: &mut App) -> Vec<String> {
    keys(app, "g");
    let (_, mut rows) = help_box(app);
    let shown = rows.len();
    loop {
        let before = app.modes.overlay_scroll;
        keys(app, "j");
        assert_eq!(app.modes.overlay, Some(Overlay::Help), "j closed the help");
        if app.modes.overlay_scroll == before {
            return rows;
        }
        let (_, now) = help_box(app);
        assert_eq!(now.len(), shown);
        rows.push(now.last().unwrap().clone());
    }
}

/// The help's text with its rows joined (the wrapped descriptions whole again) and runs of
/// spaces made one.
fn joined(rows: &[String]) -> String {
    rows.join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// At 80x24 and at the smallest size the help is drawn whole: its long lines wrap under the
/// description column, j/k/PgDn/PgUp/g/G scroll it (its top border says where and that
/// more is below or above) and Esc, ? and q close it.
#[test]
fn the_help_wraps_and_scrolls_on_a_small_terminal() {
    for (w, h) in [(80, 24), (60, 15)] {
        let mut app = refund(w, h);
        keys(&mut app, "?");
        let inner = help_box(&app).1.len();
        assert_eq!(inner, h as usize - 4, "{w}x{h}");
        let rows = whole_help(&mut app);
        let text = joined(&rows);
        for b in crate::tui::keymap::KEYMAP {
            if !matches!(b.action, crate::tui::keymap::Action::ShowTab(_)) {
                let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
                let row = format!("{} {}", keys.join("/"), b.action.description());
                assert!(
                    text.contains(&row),
                    "{w}x{h}: {row:?} not whole in {rows:#?}"
                );
            }
        }
        for tail in [
            "tabs 1 Diff 2 Proposal 3 Raw 4 Response 5 Contract 6 Context 7 Feedback 8 History 9 Chain 0 Repair",
            "mouse click selects a row or a tab, the wheel scrolls",
            "rows ✓ ready-for-commit ↻ retry ✗ regenerate ? recheck ⊘ reject (the decision)",
            "marks ↺ verdict flipped this session ≠ verdict misses the capture's expect",
        ] {
            assert!(
                text.ends_with(tail) || text.contains(&format!("{tail} ")),
                "{w}x{h}: {tail:?} not whole in {rows:#?}"
            );
        }
        // a wrapped description goes on under its first word, never under the keys
        let col = rows[0].chars().take_while(|&c| c != 'm').count();
        for r in &rows {
            let lead = r.chars().count() - r.trim_start().chars().count();
            assert!(lead == 1 || lead == col, "{w}x{h}: {r:?}");
        }
        // at the end: the last rows, `↑ more`; G and g, PgUp and PgDn
        let n = rows.len();
        let (top, last) = help_box(&app);
        assert!(
            top.ends_with(&format!(" {}-{n} of {n} ↑ more ┐", n - inner + 1)),
            "{top}"
        );
        assert_eq!(last, rows[n - inner..]);
        keys(&mut app, "g");
        let (top, first) = help_box(&app);
        assert_eq!(first, rows[..inner]);
        assert!(
            top.ends_with(&format!(" 1-{inner} of {n} ↓ more ┐")),
            "{top}"
        );
        key(&mut app, KeyCode::PageDown);
        // a page is the rows shown less one (the last page's rows at most)
        let at = (inner - 1).min(n - inner);
        let (top, page) = help_box(&app);
        assert_eq!(page, rows[at..at + inner]);
        let more = if at + inner < n {
            "↑↓ more"
        } else {
            "↑ more"
        };
        assert!(
            top.ends_with(&format!(" {}-{} of {n} {more} ┐", at + 1, at + inner)),
            "{top}"
        );
        key(&mut app, KeyCode::PageUp);
        assert_eq!(help_box(&app).1, rows[..inner]);
        keys(&mut app, "G");
        assert_eq!(help_box(&app).1, rows[n - inner..]);
        keys(&mut app, "k");
        assert_eq!(help_box(&app).1, rows[n - inner - 1..n - 1]);
        // Esc, ? and q close it (q no longer quits from it), and it opens at its top
        for close in [KeyCode::Esc, KeyCode::Char('?'), KeyCode::Char('q')] {
            key(&mut app, close);
            assert_eq!(app.modes.overlay, None, "{close:?}");
            assert!(!app.out.quit, "{close:?}");
            keys(&mut app, "?");
            assert_eq!(help_box(&app).1, rows[..inner], "{close:?}");
            keys(&mut app, "G");
        }
    }
}

/// The help at 80x24, its first page: the wrapped rows under the description column, the
/// position and `↓ more` in its top border, the scrolling and closing keys in its bottom.
#[test]
fn help_overlay_at_80x24() {
    let mut app = refund(80, 24);
    keys(&mut app, "?");
    assert_screen_snapshot!("help_overlay_at_80x24", screen(&app));
    // the wheel scrolls it, three rows a notch, and leaves it open
    let wheel = |app: &mut App, kind| {
        send(
            app,
            Msg::Mouse(crossterm::event::MouseEvent {
                kind,
                column: 40,
                row: 10,
                modifiers: KeyModifiers::NONE,
            }),
        )
    };
    let rows = help_box(&app).1;
    wheel(&mut app, crossterm::event::MouseEventKind::ScrollDown);
    assert_eq!(app.modes.overlay, Some(Overlay::Help));
    assert_eq!(help_box(&app).1[..rows.len() - 3], rows[3..]);
    wheel(&mut app, crossterm::event::MouseEventKind::ScrollUp);
    assert_eq!(help_box(&app).1, rows);
    // any other key closes it as before; Ctrl-C quits
    keys(&mut app, "x");
    assert!(app.modes.overlay.is_none() && !app.out.quit);
    keys(&mut app, "?");
    send(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
    );
    assert!(app.out.quit);
}

/// A left click at (`column`, `row`).
fn click(app: &mut App, column: u16, row: u16) {
    send(
        app,
        Msg::Mouse(crossterm::event::MouseEvent {
            kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }),
    );
}

/// A click over the help or the review never reaches the list behind it: inside the
/// overlay it changes nothing on screen, outside it it closes the overlay and selects
/// nothing (a click on the list's row 5 selected `other-owner` behind the overlay).
#[test]
fn a_click_over_an_overlay_never_selects_the_row_behind_it() {
    for open in ["?", "v"] {
        let mut app = refund(80, 24);
        select(&mut app, "amount-9000");
        keys(&mut app, open);
        let before = screen(&app);
        // the list's fifth row (`other-owner`), under the overlay
        click(&mut app, 10, 7);
        assert_eq!(app.list.current_id(), Some("amount-9000"), "{open}");
        assert!(app.modes.overlay.is_some(), "{open}");
        assert_eq!(screen(&app), before, "{open}");
        // the list's border at column 0, outside the overlay: closes it, selects nothing
        click(&mut app, 0, 7);
        assert_eq!(app.modes.overlay, None, "{open}");
        assert_eq!(app.list.current_id(), Some("amount-9000"), "{open}");
        assert_eq!(app.modes.focus, crate::tui::app::Focus::List, "{open}");
        let s = screen(&app);
        assert!(s.lines().nth(2).unwrap().contains(" amount-9000 "), "{s}");
        // with the overlay closed, the same click selects as ever
        click(&mut app, 10, 7);
        assert_eq!(app.list.current_id(), Some("other-owner"), "{open}");
    }
}

/// A change that flips 24 captures (every one but `valid-proposal` was ready before it):
/// its review is far taller than a small screen.
fn app_with_a_long_review(w: u16, h: u16) -> App {
    let mut app = refund(w, h);
    select(&mut app, "valid-proposal");
    let ready = shown(&app).verdict.clone();
    let ws = Workspace::open(&sample("refund")).unwrap();
    let file = "schemas/refund-v1.schema.json";
    let updated = evaluate_all(&ws)
        .into_iter()
        .filter(|e| e.verdict.id != "valid-proposal")
        .map(|e| {
            crate::engine::worker::Updated::of(
                e,
                Some(crate::core::review::Outcome::of(&ready)),
                Some(file.into()),
            )
        })
        .collect();
    send(
        &mut app,
        applied(
            2,
            updated,
            vec![],
            vec!["refund-v1".into()],
            vec![file.into()],
        ),
    );
    app
}

/// The review overlay scrolls as the help does when its flips are taller than the screen:
/// j/k, PgDn/PgUp, g/G and the wheel move it, its top border says which rows show and
/// that more is below or above, its bottom the keys; any other key still closes it. (It
/// showed its first rows only, and `j` closed it.)
#[test]
fn the_review_scrolls_when_its_flips_do_not_fit() {
    for (w, h) in [(60, 15), (80, 24)] {
        let mut app = app_with_a_long_review(w, h);
        keys(&mut app, "v");
        let (top, first) = overlay_box(&app, "┌ Review");
        let inner = first.len();
        assert_eq!(inner, h as usize - 6, "{w}x{h}");
        // every row, read by scrolling to the end with `j`
        let mut rows = first.clone();
        loop {
            let before = app.modes.overlay_scroll;
            keys(&mut app, "j");
            assert_eq!(
                app.modes.overlay,
                Some(Overlay::Review),
                "j closed the review"
            );
            if app.modes.overlay_scroll == before {
                break;
            }
            let (_, now) = overlay_box(&app, "┌ Review");
            assert_eq!(now[..inner - 1], rows[rows.len() - inner + 1..], "{w}x{h}");
            rows.push(now.last().unwrap().clone());
        }
        let n = rows.len();
        assert!(n > inner, "{w}x{h}: {n}");
        assert!(
            top.ends_with(&format!(" 1-{inner} of {n} ↓ more ┐")),
            "{w}x{h}: {top}"
        );
        let (top, last) = overlay_box(&app, "┌ Review");
        assert!(
            top.ends_with(&format!(" {}-{n} of {n} ↑ more ┐", n - inner + 1)),
            "{w}x{h}: {top}"
        );
        assert_eq!(last, rows[n - inner..]);
        // every flip is there, a wrapped one's rows under its id; no row is cut
        let text = joined(&rows);
        for id in [
            "amount-9000",
            "refusal",
            "negative-amount",
            "amount-as-string",
        ] {
            assert!(
                text.contains(&format!("{id} ready → ")),
                "{w}x{h}: {id} in {rows:#?}"
            );
        }
        for r in &rows {
            let lead = r.chars().take_while(|&c| c == ' ').count();
            assert!(
                r.is_empty() || [1, 3, 5, 8].contains(&lead),
                "{w}x{h}: {r:?}"
            );
        }
        // k, g, PgDn, PgUp, the wheel
        keys(&mut app, "k");
        let (top, shown_rows) = overlay_box(&app, "┌ Review");
        assert_eq!(shown_rows, rows[n - inner - 1..n - 1]);
        assert!(top.contains(" ↑↓ more ┐"), "{top}");
        keys(&mut app, "g");
        assert_eq!(overlay_box(&app, "┌ Review").1, first);
        key(&mut app, KeyCode::PageDown);
        assert_eq!(
            overlay_box(&app, "┌ Review").1,
            rows[inner - 1..2 * inner - 1]
        );
        key(&mut app, KeyCode::PageUp);
        assert_eq!(overlay_box(&app, "┌ Review").1, first);
        let wheel = |app: &mut App, kind| {
            send(
                app,
                Msg::Mouse(crossterm::event::MouseEvent {
                    kind,
                    column: 5,
                    row: 5,
                    modifiers: KeyModifiers::NONE,
                }),
            )
        };
        let cursor = app.list.cursor;
        wheel(&mut app, crossterm::event::MouseEventKind::ScrollDown);
        assert_eq!(overlay_box(&app, "┌ Review").1, rows[3..3 + inner]);
        assert_eq!(app.list.cursor, cursor, "the wheel moved the list behind");
        wheel(&mut app, crossterm::event::MouseEventKind::ScrollUp);
        assert_eq!(overlay_box(&app, "┌ Review").1, first);
        // the bottom border names the scrolling keys
        let s = screen(&app);
        assert!(s.contains("j/↓ k/↑ scroll · any other key closes ┘"), "{s}");
        // any other key closes it; it opens again at its top
        keys(&mut app, "G");
        keys(&mut app, "x");
        assert_eq!(app.modes.overlay, None);
        assert!(!app.out.quit);
        keys(&mut app, "v");
        assert_eq!(overlay_box(&app, "┌ Review").1, first);
    }
}
