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
    select(&mut app, "amount-8000-intent-5000");
    let before = shown(&app).verdict.clone();
    send(
        &mut app,
        flipped_by(
            fixed_8000(),
            &before,
            "schemas/refund-v1.schema.json",
            Some("refund-v1"),
        ),
    );
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
