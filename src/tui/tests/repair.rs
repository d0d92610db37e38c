//! The Repair tab (`docs/repairs.md#the-repair-tab`): the original beside the repaired copy,
//! the changed pointers marked, on `samples/refund`'s repairable captures.

use super::*;
use crate::tui::detail::{RepairView, Role, SideLine};

/// A side of the tab as text: each line's sign, then its pieces.
fn side(lines: &[SideLine]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let mut s = l.sign.to_string();
            for (p, _) in &l.pieces {
                s.push_str(p);
            }
            s
        })
        .collect()
}

/// The Repair tab of capture `id`, shown with its key.
fn repair_tab(app: &mut App, id: &str) -> RepairView {
    select(app, id);
    key(app, KeyCode::Char('0'));
    assert_eq!(app.detail.tab, Tab::Repair);
    app.detail
        .detail()
        .unwrap()
        .repair_tab
        .clone()
        .expect("a repair view")
}

#[test]
fn amount_as_string_marks_the_changed_amount() {
    let mut app = refund(120, 30);
    let v = repair_tab(&mut app, "amount-as-string");
    assert_eq!(
        v.lines,
        vec![
            (
                "would pass after `unquote-number` (not applied)".to_string(),
                Role::Heading
            ),
            ("changed /amount_minor".to_string(), Role::Highlight),
        ]
    );
    assert_eq!(
        (v.original_title.as_str(), v.copy_title.as_str()),
        ("proposal", "after unquote-number (not applied)")
    );
    assert_eq!(
        side(&v.original),
        [
            " {",
            "~  \"amount_minor\": \"5000\",",
            "   \"currency\": \"KRW\",",
            "   \"expected_version\": 7,",
            "   \"order_id\": \"O-1042\",",
            "   \"schema_version\": \"refund-v1\"",
            " }",
        ]
    );
    assert_eq!(side(&v.copy)[1], "~  \"amount_minor\": 5000,");
    assert!(side(&v.copy).iter().filter(|l| !l.starts_with(' ')).count() == 1);
    assert_screen_snapshot!("repair_tab_amount_as_string", screen(&app));
}

#[test]
fn extra_field_approved_marks_the_removed_key() {
    let mut app = refund(120, 30);
    let v = repair_tab(&mut app, "extra-field-approved");
    assert_eq!(
        v.lines[1],
        ("removed /approved".to_string(), Role::Highlight)
    );
    assert_eq!(side(&v.original)[2], "-  \"approved\": true,");
    assert_eq!(
        side(&v.original)
            .iter()
            .filter(|l| !l.starts_with(' '))
            .count(),
        1
    );
    assert!(
        side(&v.copy)
            .iter()
            .all(|l| l.starts_with(' ') && !l.contains("approved")),
        "{:?}",
        side(&v.copy)
    );
    assert_screen_snapshot!("repair_tab_extra_field_approved", screen(&app));
}

#[test]
fn fenced_json_shows_the_fence_removed() {
    let mut app = refund(120, 30);
    let v = repair_tab(&mut app, "fenced-json");
    assert_eq!(
        v.lines,
        vec![
            (
                "would pass after `strip-fence` (not applied)".to_string(),
                Role::Heading
            ),
            (
                "dropped: the text before and after the value (marked -)".to_string(),
                Role::Highlight
            ),
        ]
    );
    assert_eq!(v.original_title, "raw output");
    let raw = side(&v.original);
    assert_eq!(raw.first().map(String::as_str), Some("-```json"));
    assert_eq!(raw.last().map(String::as_str), Some("-```"));
    assert!(
        raw[1..raw.len() - 1].iter().all(|l| l.starts_with(' ')),
        "{raw:?}"
    );
    // the fence's pieces are the marked ones
    assert_eq!(v.original[0].pieces, vec![("```json".to_string(), true)]);
    assert_eq!(v.original[1].pieces, vec![("{".to_string(), false)]);
    assert!(side(&v.copy).iter().all(|l| l.starts_with(' ')));
    assert_screen_snapshot!("repair_tab_fenced_json", screen(&app));
}

#[test]
fn a_capture_without_a_repair_says_why_in_one_line() {
    let mut app = refund(120, 30);
    for (id, why) in [
        (
            "missing-expected-version",
            "no repair: no allowed repair would change schema/SCHEMA_MISMATCH (docs/repairs.md#the-table)",
        ),
        ("valid-proposal", "no repair: the capture is ready"),
        (
            "refusal",
            "no repair: repairs apply to parse and schema failures, not response/REFUSAL",
        ),
    ] {
        select(&mut app, id);
        key(&mut app, KeyCode::Char('0'));
        let d = app.detail.detail().unwrap();
        assert_eq!(d.repair_tab, Err(why.to_string()), "{id}");
        // the message wraps at the pane's width: its first words are on screen
        assert!(screen(&app).contains(&why[..30]), "{id}");
    }
}
