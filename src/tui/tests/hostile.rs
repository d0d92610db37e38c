//! Hostile text: escape sequences in every field render escaped; the core and the engine stay free of terminal imports.

use super::*;

/// A workspace whose captures carry terminal escape sequences everywhere: in the raw output
/// (colour, OSC title, clear screen, a right-to-left override, zero-width and line
/// separator characters), in parsed values, ids, context, intent and meta.
fn hostile_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("schemas")).unwrap();
    std::fs::create_dir_all(root.join("captures")).unwrap();
    for f in ["refund-v1.schema.json", "refund-v1.rules.toml"] {
        std::fs::copy(
            sample("refund").join("schemas").join(f),
            root.join("schemas").join(f),
        )
        .unwrap();
    }
    std::fs::copy(
        sample("refund").join("verdict.toml"),
        root.join("verdict.toml"),
    )
    .unwrap();
    let esc =
        "\u{1b}[31mRED\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}1m\r\t\u{202e}\u{200b}\u{2028}\u{feff}";
    let ctx = serde_json::json!({"actor": {"user_id": "U-7", "allowed_actions": ["refund"]},
        "order": {"order_id": "O-1042", "owner_id": "U-7", "currency": "KRW", "paid_minor": 10000,
                  "refunded_minor": 0, "version": 7}, "note": esc});
    let raw_text = format!("{{\"order_id\": \"{esc}\"}}\n{esc}");
    let good = serde_json::json!({"schema_version": "refund-v1", "order_id": "O-1042",
        "amount_minor": 8000, "currency": "KRW", "expected_version": 7});
    let records = [
        serde_json::json!({"id": format!("raw-{esc}"), "output": raw_text, "context": ctx,
            "meta": {"model": esc}}),
        serde_json::json!({"id": format!("schema-{esc}"), "output": serde_json::json!({
            "schema_version": esc, "order_id": esc, "amount_minor": esc}).to_string(),
            "context": ctx, "intent": {"order_id": esc}}),
        serde_json::json!({"id": format!("intent-{esc}"), "output": good.to_string(),
            "context": ctx, "intent": {"order_id": "O-1042", "amount_minor": 5000, "currency": esc},
            "meta": {esc: esc}}),
        serde_json::json!({"id": format!("bad-{esc}"), "output": good.to_string(), esc: 1}),
    ];
    let mut text = String::new();
    for r in &records {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    std::fs::write(root.join("captures").join("hostile.jsonl"), text).unwrap();
    dir
}

fn assert_no_control(t: &Terminal<TestBackend>, what: &str) {
    let buf = t.backend().buffer();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let s = buf[(x, y)].symbol();
            assert!(
                !s.chars()
                    .any(|c| c.is_control() || crate::core::escape::invisible(c)),
                "{what}: raw control or invisible character {s:?} at {x},{y}\n{}",
                t.backend()
            );
        }
    }
}

#[test]
fn escape_sequences_render_escaped_in_every_pane() {
    let dir = hostile_workspace();
    let mut app = app_on(dir.path(), "hostile", 140, 40);
    assert_eq!(app.list.store.len(), 4);
    let mut seen_escaped = false;
    for i in 0..app.list.view.len() {
        app.select(i);
        pump(&mut app);
        for tab in "12345678".chars() {
            keys(&mut app, &tab.to_string());
            let t = terminal(&app);
            assert_no_control(&t, &format!("row {i} tab {tab}"));
            seen_escaped |= t.backend().to_string().contains("\\u{1b}");
        }
    }
    keys(&mut app, "t");
    assert_no_control(&terminal(&app), "triage");
    keys(&mut app, "t/\u{1b}x");
    assert_no_control(&terminal(&app), "filter");
    assert!(seen_escaped, "the escapes are shown as text");
}

#[test]
fn core_and_engine_have_no_terminal_imports() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (dir, banned) in [
        ("core", &["ratatui", "crossterm", "notify"][..]),
        ("engine", &["ratatui", "crossterm"][..]),
    ] {
        let mut files = Vec::new();
        walk(&src.join(dir), &mut files);
        assert!(!files.is_empty());
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for b in banned {
                assert!(!text.contains(b), "{} mentions {b}", f.display());
            }
        }
    }
}

/// An id with a zero-width space looks like another id unless it is shown escaped; so do
/// the direction marks and the bidi isolates.
#[test]
fn invisible_characters_in_ids_render_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("schemas")).unwrap();
    std::fs::create_dir_all(root.join("captures")).unwrap();
    std::fs::write(root.join("schemas/c.schema.json"), r#"{"type":"object"}"#).unwrap();
    let mut text = String::new();
    for id in [
        "good",
        "go\u{200b}od",
        "a\u{202e}b",
        "rlm\u{200f}\u{2066}x\u{2069}\u{2028}",
    ] {
        text.push_str(&serde_json::json!({"id": id, "output": "{}"}).to_string());
        text.push('\n');
    }
    std::fs::write(root.join("captures/ids.jsonl"), text).unwrap();
    let app = app_on(root, "ids", 140, 20);
    let shown = screen(&app);
    assert!(shown.contains("go\\u{200b}od"), "{shown}");
    assert!(shown.contains("a\\u{202e}b"), "{shown}");
    assert!(
        shown.contains("rlm\\u{200f}\\u{2066}x\\u{2069}\\u{2028}"),
        "{shown}"
    );
    for c in [
        '\u{200b}', '\u{202e}', '\u{200f}', '\u{2066}', '\u{2069}', '\u{2028}',
    ] {
        assert!(
            !shown.contains(c),
            "raw U+{:04X} on screen:\n{shown}",
            c as u32
        );
    }
}
