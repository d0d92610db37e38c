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
