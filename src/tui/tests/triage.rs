//! The triage tree.

use super::*;

#[test]
fn triage_tree_and_enter_filters_the_list() {
    let mut app = refund(120, 30);
    key(&mut app, KeyCode::Char('t'));
    assert!(app.modes.triage());
    assert_screen_snapshot!("triage_tree_and_enter_filters_the_list", screen(&app));
    // the first node is the largest stage; Enter opens it as a filter
    let first = app.triage.tree[0].clone();
    key(&mut app, KeyCode::Enter);
    assert!(!app.modes.triage());
    assert_eq!(app.filter.text, first.query);
    assert_eq!(app.list.view.len(), first.count);
}

#[test]
fn triage_stages_in_pipeline_order() {
    let mut app = refund(120, 30);
    keys(&mut app, "t");
    let stages: Vec<_> = app
        .triage
        .tree
        .iter()
        .filter(|n| n.depth == 0)
        .map(|n| n.stage)
        .collect();
    let mut sorted = stages.clone();
    sorted.sort();
    assert_eq!(stages, sorted);
    // within a stage, reasons (and pointers under a reason) come largest first
    // (the last count seen at each depth, reset when a parent row starts)
    let mut last: [Option<usize>; 3] = [None; 3];
    for n in &app.triage.tree {
        if let Some(prev) = last[n.depth as usize]
            && n.depth > 0
        {
            assert!(prev >= n.count, "{:?} after a smaller sibling", n.label);
        }
        last[n.depth as usize] = Some(n.count);
        for deeper in last.iter_mut().skip(n.depth as usize + 1) {
            *deeper = None;
        }
    }
}

#[test]
fn an_arrow_bound_to_triage_opens_the_tree_under_the_filter_prompt() {
    let config =
        crate::tui::config::Config::from_toml("[keys]\ndown = \"j\"\ntriage = [\"t\", \"down\"]\n")
            .unwrap();
    let mut app = refund(120, 30);
    app.settings.keymap = config.keymap;
    keys(&mut app, "/");
    assert_eq!(app.modes.mode, Mode::Editing { triage: false });
    // the prompt lets the arrows through to the keymap
    key(&mut app, KeyCode::Down);
    assert_eq!(app.modes.mode, Mode::Editing { triage: true });
    let s = screen(&app);
    assert!(s.contains(" Triage ") && s.contains(" /█"), "{s}");
    // typed keys still edit the filter, `t` included
    keys(&mut app, "ts");
    assert_eq!(app.filter.text, "ts");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.modes.mode, Mode::Triage);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.modes.mode, Mode::List);
    assert_eq!(app.filter.text, "ts");
}
