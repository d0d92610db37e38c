//! The chain tree (`c`), the Chain tab and the header's chain funnel, on `samples/chains`
//! run through the real engine thread (the chains are computed there, from the same core
//! as `check`'s report).

use super::*;
use crate::engine::Engine;
use std::sync::mpsc::{Receiver, channel};

/// An app on `samples/chains` fed every event of a real engine's first run; the engine
/// answers the app's loads ([`EngineApp::pump`]).
struct EngineApp {
    app: App,
    engine: Engine,
    rx: Receiver<EngineEvent>,
}

impl EngineApp {
    fn new(w: u16, h: u16) -> EngineApp {
        let root = sample("chains");
        let ws = Arc::new(Workspace::load(&root).unwrap());
        let (tx, rx) = channel();
        let engine = Engine::spawn(root, ws, move |e| tx.send(e).is_ok());
        let app = App::new("samples/chains", None, Rect::new(0, 0, w, h));
        let mut e = EngineApp { app, engine, rx };
        e.app.request_validation(false);
        e.submit();
        loop {
            let ev = e.rx.recv_timeout(Duration::from_secs(120)).unwrap();
            let end = matches!(ev, EngineEvent::Finished { .. });
            e.app.update(Msg::Engine(ev));
            if end {
                break;
            }
        }
        e.pump();
        // the run's wall time is the machine's: the header shows a fixed one
        e.app.run.progress.elapsed = Some(Duration::from_millis(12));
        e
    }

    fn submit(&mut self) {
        for j in self.app.out.requests.drain(..) {
            self.engine.submit(j);
        }
    }

    /// Hands the app's jobs to the engine and its answers to the app, until none is
    /// asked for.
    fn pump(&mut self) {
        loop {
            let asked = self.app.out.requests.len();
            if asked == 0 {
                return;
            }
            self.submit();
            // one answer per load (a newer load of the same kind replaces a pending one,
            // so wait a little for any answer after the first)
            let mut got = 0;
            let mut wait = Duration::from_secs(60);
            while let Ok(ev) = self.rx.recv_timeout(wait) {
                self.app.update(Msg::Engine(ev));
                got += 1;
                wait = Duration::from_millis(200);
                if got == asked {
                    break;
                }
            }
            assert!(got > 0, "the engine answered none of {asked} jobs");
        }
    }

    fn keys(&mut self, s: &str) {
        for c in s.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn key(&mut self, code: KeyCode) {
        self.app
            .update(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        self.pump();
    }
}

#[test]
fn c_groups_the_list_by_chain_and_enter_expands_a_chain_to_its_attempts() {
    let mut e = EngineApp::new(120, 32);
    e.keys("c");
    assert!(e.app.modes.chains());
    let s = screen(&e.app);
    assert!(
        s.contains(" chains 10 > first-pass 2 > recovered 4 > unrecovered 4  ·  3 wasted attempts  ·  1 over budget"),
        "{s}"
    );
    assert_screen_snapshot!("c_groups_the_list_by_chain", s);
    // the third chain (loop-recovered-3) expanded: its attempts in order, the first one
    // shown in the detail
    e.keys("jj");
    e.key(KeyCode::Enter);
    e.keys("j");
    assert_eq!(
        e.app.list.selected.as_deref(),
        Some("captures/agent-loop.jsonl:3")
    );
    assert_screen_snapshot!("enter_expands_a_chain_to_its_attempts", screen(&e.app));
    // Enter on an attempt collapses its chain, the cursor back on the chain
    e.key(KeyCode::Enter);
    assert_eq!(e.app.chains.tree.cursor, 2);
    assert_eq!(e.app.chains.tree.nodes.len(), 10);
    // c again: the list
    e.keys("c");
    assert!(!e.app.modes.chains());
}

#[test]
fn enter_expands_and_collapses_a_chain_in_place_keeping_the_cursor_and_the_other_chains() {
    use crate::tui::app::chains::ChainNode::{Attempt as A, Chain as C};
    let mut e = EngineApp::new(120, 32);
    e.keys("c");
    let chains: Vec<_> = (0..10).map(C).collect();
    assert_eq!(e.app.chains.tree.nodes, chains);
    // the last chain (refund-b3-same-proposal, 2 attempts), then the third
    // (loop-recovered-3, 3 attempts) expanded
    e.keys("G");
    e.key(KeyCode::Enter);
    assert_eq!(e.app.chains.tree.cursor, 9);
    assert_eq!(
        e.app.chains.tree.nodes,
        [&chains[..], &[A(9, 0), A(9, 1)]].concat()
    );
    e.keys("gjj");
    e.key(KeyCode::Enter);
    assert_eq!(e.app.chains.tree.cursor, 2);
    let both = [
        &chains[..3],
        &[A(2, 0), A(2, 1), A(2, 2)],
        &chains[3..],
        &[A(9, 0), A(9, 1)],
    ]
    .concat();
    assert_eq!(e.app.chains.tree.nodes, both);
    // what a rebuild of the tree from the expanded chains gives
    let mut rebuilt = crate::tui::app::ChainTree {
        view: e.app.chains.tree.view.clone(),
        expanded: e.app.chains.tree.expanded.clone(),
        ..crate::tui::app::ChainTree::default()
    };
    rebuilt.build();
    assert_eq!(rebuilt.nodes, both);
    // Enter on the third attempt collapses its chain, the cursor on the chain's row; the
    // last chain stays expanded
    e.keys("jjj");
    assert_eq!(e.app.chains.tree.nodes[e.app.chains.tree.cursor], A(2, 2));
    e.key(KeyCode::Enter);
    assert_eq!(e.app.chains.tree.cursor, 2);
    assert_eq!(
        e.app.chains.tree.nodes,
        [&chains[..], &[A(9, 0), A(9, 1)]].concat()
    );
    // and on the last chain's second attempt: the tree as it started
    e.keys("G");
    assert_eq!(e.app.chains.tree.nodes[e.app.chains.tree.cursor], A(9, 1));
    e.key(KeyCode::Enter);
    assert_eq!(e.app.chains.tree.cursor, 9);
    assert_eq!(e.app.chains.tree.nodes, chains);
    assert!(e.app.chains.tree.expanded.is_empty());
}

#[test]
fn the_chain_tab_lists_the_attempts_the_effects_and_the_proposal_diffs() {
    let mut e = EngineApp::new(120, 50);
    e.keys("cjj");
    e.key(KeyCode::Enter);
    e.keys("jj9");
    assert_eq!(e.app.detail.tab, Tab::Chain);
    let lines: Vec<&str> = e
        .app
        .chains
        .tab
        .lines
        .iter()
        .map(|(l, _)| l.as_str())
        .collect();
    assert_eq!(
        lines[..10],
        [
            "chain loop-recovered-3",
            "↻ recovered at attempt 3  ·  3 attempts  ·  linked by record  ·  tokens 1680",
            "",
            "attempts",
            "    1 ✗ schema SCHEMA_MISMATCH /currency  captures/agent-loop.jsonl:3",
            "›   2 ✗ schema SCHEMA_MISMATCH /expected_version  captures/agent-loop.jsonl:9",
            "    3 ✓ ready  captures/agent-loop.jsonl:14",
            "",
            "feedback effects",
            "  after attempt 1  /currency  moved",
        ]
    );
    assert_screen_snapshot!(
        "the_chain_tab_lists_the_attempts_the_effects_and_the_proposal_diffs",
        screen(&e.app)
    );
}

#[test]
fn a_capture_in_no_chain_says_so_and_a_workspace_without_chains_has_no_chain_funnel() {
    let mut app = refund(120, 30);
    key(&mut app, KeyCode::Char('9'));
    keys(&mut app, "c");
    assert!(!app.modes.chains());
    assert_eq!(
        app.note.as_deref(),
        Some("no chains in this workspace (docs/chains.md#linking)")
    );
    assert_eq!(app.status, None);
    assert_eq!(app.screen.areas.header.height, 2);
    let s = screen(&app);
    assert!(s.contains("this capture is in no chain"), "{s}");
    assert!(!s.contains("first-pass"), "{s}");
}

/// The chain tree's rows as text (one per node: a chain's id and attempt count, an
/// attempt's position and source).
fn tree_rows(app: &App) -> Vec<String> {
    use crate::tui::app::chains::ChainNode;
    let t = &app.chains.tree;
    let v = t.view.as_ref().unwrap();
    t.nodes
        .iter()
        .map(|n| match *n {
            ChainNode::Chain(c) => {
                let h = &v.heads[c as usize];
                format!("{} {} {}", h.chain, h.outcome.as_str(), h.attempts)
            }
            ChainNode::Attempt(c, k) => {
                format!("  {} {}", k + 1, t.attempt(c, k).unwrap().source)
            }
        })
        .collect()
}

#[test]
fn an_update_that_takes_out_one_attempt_changes_only_its_chain_and_an_expanded_chain_shows_its_current_attempts()
 {
    let mut evs = Vec::new();
    let mut app = app_with(&sample("chains"), "samples/chains", 120, 32, |e| {
        evs = e.clone();
    });
    app.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::NONE,
    )));
    app.chains.tree.cursor = 2;
    app.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    let before = tree_rows(&app);
    assert_eq!(before[2], "loop-recovered-3 recovered 3");
    assert_eq!(
        before[3..6],
        [
            "  1 captures/agent-loop.jsonl:3",
            "  2 captures/agent-loop.jsonl:9",
            "  3 captures/agent-loop.jsonl:14",
        ]
    );
    // 7 chains, one expanded
    assert_eq!(before.len(), 10);
    // the engine's next change: the chain's second attempt disappeared
    let mut chains = crate::engine::chains::LiveChains::default();
    for e in &evs {
        chains.add(&e.verdict);
    }
    chains.remove(&crate::core::record_ref::RecordRef::parse(
        "captures/agent-loop.jsonl:9",
    ));
    let budget = app.workspace.as_ref().unwrap().config.budget;
    let generation = app.run.progress.generation;
    app.update(Msg::Engine(EngineEvent::Chains {
        generation,
        chains: Arc::new(chains.view(&budget)),
    }));
    let after = tree_rows(&app);
    assert_eq!(after.len(), 9);
    assert_eq!(after[..2], before[..2]);
    assert_eq!(after[2], "loop-recovered-3 recovered 2");
    assert_eq!(
        after[3..5],
        [
            "  1 captures/agent-loop.jsonl:3",
            "  2 captures/agent-loop.jsonl:14",
        ]
    );
    assert_eq!(after[5..], before[6..]);
    // collapsed and expanded again (Enter): the chain's current attempts
    app.chains.tree.cursor = 2;
    app.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    assert_eq!(tree_rows(&app).len(), 7);
    app.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    assert_eq!(tree_rows(&app), after);
}

/// `c` in a workspace without chains answers on the footer until the next key, like every
/// answer to a key: the hints come back at `j` (the answer was held as a status, which
/// nothing cleared, and came back after every other answer, such as `y`'s).
#[test]
fn the_no_chains_answer_lasts_until_the_next_key() {
    let mut app = refund(120, 30);
    let footer = |app: &App| screen(app).lines().last().unwrap_or_default().to_string();
    let hints = footer(&app);
    assert!(
        hints.contains("? help") && hints.contains("q quit"),
        "{hints}"
    );
    keys(&mut app, "c");
    let answer = "no chains in this workspace (docs/chains.md#linking)";
    assert_eq!(
        footer(&app),
        format!("\" {answer:<width$}\"", width = 120 - 1)
    );
    keys(&mut app, "j");
    assert_eq!(footer(&app), hints);
    keys(&mut app, "c");
    keys(&mut app, "k");
    assert_eq!(footer(&app), hints);
    keys(&mut app, "c3");
    assert_eq!(footer(&app), hints);
    // another answer replaces it, and the hints follow that one too
    select(&mut app, "valid-proposal");
    keys(&mut app, "c");
    keys(&mut app, "n");
    assert_eq!(
        footer(&app),
        format!(
            "\" {:<width$}\"",
            "n/N: this capture has no errors to step through",
            width = 119
        )
    );
    keys(&mut app, "k");
    assert_eq!(footer(&app), hints);
}

/// Moving the chain tree onto an attempt the filter hides says so until the next key, and
/// is not left on the footer once the tree is closed.
#[test]
fn a_hidden_attempt_is_said_until_the_next_key() {
    let mut e = EngineApp::new(120, 32);
    let footer = |app: &App| screen(app).lines().last().unwrap_or_default().to_string();
    let hints = footer(&e.app);
    e.keys("/stage:ready");
    e.key(KeyCode::Enter);
    assert_eq!(footer(&e.app), hints);
    // loop-recovered-3 expanded, its first attempt (a schema failure) is filtered out
    e.keys("cjj");
    e.key(KeyCode::Enter);
    e.keys("j");
    let hidden = "that attempt is hidden by the filter (Esc in the list clears it)";
    assert_eq!(footer(&e.app), format!("\" {hidden:<119}\""));
    e.keys("c");
    assert!(!e.app.modes.chains());
    assert_eq!(footer(&e.app), hints);
}

/// At 80 columns the chain tree's ids are cut in their middle, as the capture list's are,
/// so the chains whose ids differ only at their end stay apart.
#[test]
fn a_chain_id_too_long_for_the_tree_is_cut_in_its_middle() {
    let mut e = EngineApp::new(80, 24);
    e.keys("c");
    let s = screen(&e.app);
    let rows: Vec<&str> = s
        .lines()
        .skip(4)
        .take(10)
        .map(|l| l.trim_matches('"').split("││").next().unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            "│▸ ✓ first-pass    1  loop-…-pass",
            "│▸ ↻ recovered     2  loop-…red-2",
            "│▸ ↻ recovered     3  loop-…red-3",
            "│▸ ✗ unrecovered   3  loop-…vered",
            "│▸ ✗ unrecovered   2  loop-…eject",
            "│▸ ↻ recovered     3  loop-…posal",
            "│▸ ↻ recovered     4  loop-…udget",
            "│▸ ✓ first-pass    2  refun…ready",
            "│▸ ✗ unrecovered   2  refun…mited",
            "│▸ ✗ unrecovered   2  refun…posal",
        ]
    );
}
