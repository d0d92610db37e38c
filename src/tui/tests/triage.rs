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
