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

#[test]
fn b_groups_the_triage_tree_by_repair_and_enter_opens_a_group() {
    let mut app = refund(120, 30);
    keys(&mut app, "b");
    assert!(app.modes.triage() && app.triage.by_repair);
    let tree: Vec<(u8, &str, usize, &str)> = app
        .triage
        .tree
        .iter()
        .map(|n| (n.depth, n.label.as_str(), n.count, n.query.as_str()))
        .collect();
    assert_eq!(
        tree,
        vec![
            (0, "strip-fence", 1, "repair:strip-fence"),
            (1, "would be ready", 1, "repair:strip-fence would:ready"),
            (0, "drop-trailing", 1, "repair:drop-trailing"),
            (1, "would be ready", 1, "repair:drop-trailing would:ready"),
            (0, "unquote-number", 1, "repair:unquote-number"),
            (1, "would be ready", 1, "repair:unquote-number would:ready"),
            (0, "drop-unknown", 1, "repair:drop-unknown"),
            (1, "would be ready", 1, "repair:drop-unknown would:ready"),
            (0, "not repairable", 20, "!stage:ready repair:none"),
        ]
    );
    let s = screen(&app);
    assert!(s.contains(" Triage repair > would-be outcome "), "{s}");
    // each node opens its captures: drop-unknown's is extra-field-approved alone
    keys(&mut app, "jjjjjj");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.filter.text, "repair:drop-unknown");
    let ids: Vec<&str> = (0..app.list.view.len())
        .filter_map(|p| app.list.id_at(p))
        .collect();
    assert_eq!(ids, ["extra-field-approved"]);
    // `not repairable`: the 20 failing captures without a repair
    keys(&mut app, "b");
    keys(&mut app, "G");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.filter.text, "!stage:ready repair:none");
    assert_eq!(app.list.view.len(), 20);
    // again: back by stage
    keys(&mut app, "bb");
    assert!(app.modes.triage() && !app.triage.by_repair);
    assert_eq!(app.triage.tree[0].query, "stage:response");
}

/// The pane borders' row (the third line of the screen, unquoted).
fn border_row(app: &App) -> String {
    screen(app)
        .lines()
        .nth(2)
        .unwrap()
        .trim_matches('"')
        .to_string()
}

#[test]
fn a_title_too_long_for_its_pane_is_cut_with_an_ellipsis() {
    let mut app = refund(80, 24);
    keys(&mut app, "b");
    assert_eq!(
        border_row(&app),
        "┌ Triage repair > would-be ou… ──┐┌ amount-9000 ───────────────────────────────┐"
    );
    key(&mut app, KeyCode::Esc);
    keys(&mut app, "/repair:unquote-number would:ready");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        border_row(&app),
        "┌ Captures 1/25 /repair:unquo… ──┐┌ amount-as-string ──────────────────────────┐"
    );
}

/// `t` is the tree by stage (`docs/commands.md`): in the tree by repair it switches to it
/// (it closed the triage), and after the tree by repair was closed it opens by stage (it
/// reopened the tree by repair); in its own tree it closes it.
#[test]
fn t_in_the_tree_by_repair_switches_to_the_tree_by_stage() {
    let mut app = refund(80, 24);
    let stage = "┌ Triage stage > reason > poi… ──┐┌ amount-9000 ───────────────────────────────┐";
    keys(&mut app, "bjt");
    assert_eq!(border_row(&app), stage);
    assert_eq!(
        screen(&app).lines().nth(3).unwrap(),
        "\"│ ▾ response                   4 ││ ✓ ✓ ✓ business ✗                  ⊘ reject │\""
    );
    assert_eq!(app.triage.cursor, 0);
    keys(&mut app, "t");
    assert!(!app.modes.triage());
    keys(&mut app, "b");
    key(&mut app, KeyCode::Esc);
    keys(&mut app, "t");
    assert_eq!(border_row(&app), stage);
}
