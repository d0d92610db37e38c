//! Hostile input for the engine behind the TUI and `watch --json` (compact summaries,
//! records re-read from disk by byte offset, the incremental session): each test is a
//! regression test for a way a log changing under the TUI, or a capture path that is not a
//! regular file, broke a promise (the detail shows the selected record; no hang; the same
//! verdicts from `check`, `watch --json` and the TUI).

use crate::common;

use ratatui::layout::Rect;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};
use verdict::core::workspace::Workspace;
use verdict::engine::{Engine, EngineEvent};
use verdict::tui::app::{App, Msg};

/// A workspace with one permissive schema `c` and the given captures.
fn workspace(captures: &[(&str, &str)]) -> tempfile::TempDir {
    common::workspace_with(r#"{"type":"object"}"#, captures)
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

/// The TUI's model wired to a real engine thread: requests go to the engine, its events
/// come back into the model.
struct Tui {
    app: App,
    engine: Engine,
    rx: Receiver<EngineEvent>,
    root: PathBuf,
}

impl Tui {
    /// The model after a complete first run (fails if the run does not finish in time:
    /// a hang).
    fn open(root: &Path) -> Tui {
        let ws = Arc::new(Workspace::open(root).unwrap());
        let (tx, rx) = channel();
        let engine = Engine::spawn(root.to_path_buf(), ws.clone(), move |e| tx.send(e).is_ok());
        let mut app = App::new("ws", Some(ws), Rect::new(0, 0, 120, 40));
        app.request_validation(false);
        let mut t = Tui {
            app,
            engine,
            rx,
            root: root.to_path_buf(),
        };
        t.settle(Duration::from_secs(20));
        assert!(
            !t.app.run.progress.running,
            "the first run did not finish (a hang)"
        );
        t
    }

    /// Hands the model's requests to the engine and its events to the model until nothing
    /// is left to do (no request, no event for a short while).
    fn settle(&mut self, deadline: Duration) {
        let start = Instant::now();
        loop {
            for j in std::mem::take(&mut self.app.out.requests) {
                self.engine.submit(j);
            }
            match self.rx.recv_timeout(Duration::from_millis(300)) {
                Ok(e) => self.app.update(Msg::Engine(e)),
                Err(_) => {
                    let waiting =
                        self.app.run.progress.running || self.app.detail.loading().is_some();
                    if self.app.out.requests.is_empty() && !waiting {
                        return;
                    }
                }
            }
            if start.elapsed() > deadline {
                return;
            }
        }
    }

    /// Tells the model (as the watcher would) that these captures changed.
    fn changed(&mut self, files: &[&str]) {
        let paths = files.iter().map(|f| self.root.join(f)).collect();
        self.app
            .update(Msg::Watch(verdict::engine::watcher::WatchEvent::Changed(
                paths,
            )));
        self.settle(Duration::from_secs(20));
    }

    /// Selects the capture with this source and waits for its detail.
    fn select(&mut self, source: &str) {
        let pos = (0..self.app.list.view.len())
            .find(|&p| {
                let r = &self.app.list.store.rows[self.app.list.view[p] as usize];
                self.app.list.store.source(r) == source
            })
            .unwrap_or_else(|| panic!("no row for {source}"));
        self.app.select(pos);
        self.settle(Duration::from_secs(20));
    }

    /// The id of the record the detail pane was built from.
    fn shown_id(&self) -> String {
        let ev = self
            .app
            .detail
            .evaluation()
            .expect("the selected capture is loaded");
        ev.verdict.id.clone()
    }
}

/// A log rewritten in place (a formatter re-indenting a record, a tool normalising
/// whitespace) keeps every verdict, so the session reports no change and the list keeps
/// the old byte offsets. When an old offset lands on the start of another line of the new
/// file, re-reading from it returned that other record: the detail of `log.jsonl:2` showed
/// the capture of line 3.
#[test]
fn a_log_rewritten_with_the_same_verdicts_still_shows_the_selected_record() {
    let pad = " ".repeat(40);
    let line = |id: &str| format!("{{\"id\":\"{id}\",\"output\":\"{{}}\"}}\n");
    // line 1 carries padding worth exactly one line; lines 2..4 have the same length
    let before = format!(
        "{{\"id\":\"a\",{pad}\"output\":\"{{}}\"}}\n{}{}{}",
        line("b"),
        line("c"),
        line("d")
    );
    assert_eq!(line("b").len(), 25);
    let ws = workspace(&[("log.jsonl", &before)]);
    let mut t = Tui::open(ws.path());
    // the padding shrinks by the length of one line: the old offset of line 2 is now
    // where line 3 starts, the old offset of line 3 where line 4 starts
    let after = format!(
        "{{\"id\":\"a\",{}\"output\":\"{{}}\"}}\n{}{}{}",
        " ".repeat(40 - 25),
        line("b"),
        line("c"),
        line("d")
    );
    std::fs::write(ws.path().join("captures/log.jsonl"), &after).unwrap();
    t.changed(&["captures/log.jsonl"]);
    t.select("captures/log.jsonl:2");
    assert_eq!(
        t.shown_id(),
        "b",
        "the detail of line 2 shows another record"
    );
    t.select("captures/log.jsonl:3");
    assert_eq!(
        t.shown_id(),
        "c",
        "the detail of line 3 shows another record"
    );
}

/// Every verdict source and its outcome from `verdict check --format jsonl`.
fn check_verdicts(root: &Path) -> Vec<(String, String, String)> {
    let out = run_bin(
        &["check", "--format", "jsonl", "."],
        root,
        Duration::from_secs(30),
    );
    let mut v: Vec<_> = common::jsonl_verdicts(&out).iter().map(outcome).collect();
    v.sort();
    v
}

fn outcome(d: &serde_json::Value) -> (String, String, String) {
    (
        d["source"].as_str().unwrap().to_string(),
        d["stage"].as_str().unwrap().to_string(),
        d["reason"].as_str().unwrap_or("-").to_string(),
    )
}

/// The first pass of `verdict watch --json` (up to its first summary line).
fn watch_verdicts(root: &Path) -> Vec<(String, String, String)> {
    let w = common::watch::WatchJson::start(root, &[]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut v = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let d = w
            .lines
            .recv_timeout(left)
            .expect("watch --json gave no first pass (a hang)");
        match d["type"].as_str() {
            Some("verdict") => v.push(outcome(&d["data"])),
            Some("summary") => break,
            _ => {}
        }
    }
    v.sort();
    v
}

/// The TUI's rows after its first run.
fn tui_verdicts(t: &Tui) -> Vec<(String, String, String)> {
    let s = &t.app.list.store;
    let mut v: Vec<_> = s
        .rows
        .iter()
        .map(|r| {
            let k = s.kind(r);
            (
                s.source(r),
                k.outcome.stage.as_str().to_string(),
                k.outcome
                    .reason
                    .as_ref()
                    .map_or("-", |r| r.as_str())
                    .to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn run_bin(args: &[&str], dir: &Path, deadline: Duration) -> String {
    common::run::run(args, dir, deadline).stdout
}

/// A FIFO named like a capture log: `check` opens it without blocking and reports it as
/// `INVALID_CAPTURE`; the TUI's engine counted its records and streamed it with a plain
/// blocking `open`, which waits for a writer forever (the list never filled).
#[cfg(unix)]
#[test]
fn a_fifo_among_the_captures_does_not_hang_the_tui() {
    let ws = workspace(&[("a.jsonl", "{\"id\":\"a\",\"output\":\"{}\"}\n")]);
    mkfifo(&ws.path().join("captures/pipe.jsonl"));
    mkfifo(&ws.path().join("captures/pipe.json"));
    let root = ws.path().to_path_buf();
    // the engine thread may block for good: run the model on a thread and give it a deadline
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let t = Tui::open(&root);
        let _ = tx.send(tui_verdicts(&t));
        // a blocked engine thread would block the drop too
        std::mem::forget(t);
    });
    let rows = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the TUI's first run hangs on a FIFO");
    assert_eq!(rows, check_verdicts(ws.path()));
}

/// Entries of the captures folder that are not regular files (a FIFO, a broken symlink, a
/// symlink loop, a symlink to a folder): `check` lists each as an `INVALID_CAPTURE`
/// verdict, `watch --json` and the TUI left them out (their session took "not a file" for
/// "deleted"), so the three disagreed on the same workspace.
#[cfg(unix)]
#[test]
fn check_watch_and_the_tui_agree_on_captures_that_are_not_regular_files() {
    let ws = workspace(&[
        (
            "log.jsonl",
            "{\"id\":\"a\",\"output\":\"{}\"}\r\n\n  \n{\"id\":\"b\",\"output\":\"[]\"}",
        ),
        ("real.json/in.json", "{\"id\":\"x\",\"output\":\"{}\"}"),
        ("empty.jsonl", ""),
        ("empty.json", ""),
    ]);
    let c = ws.path().join("captures");
    mkfifo(&c.join("pipe.json"));
    std::os::unix::fs::symlink("nowhere.json", c.join("broken.json")).unwrap();
    std::os::unix::fs::symlink("loop.jsonl", c.join("loop.jsonl")).unwrap();
    std::os::unix::fs::symlink("real.json", c.join("dirlink.json")).unwrap();
    let want = check_verdicts(ws.path());
    assert_eq!(want.len(), 8, "{want:#?}");
    assert_eq!(
        watch_verdicts(ws.path()),
        want,
        "watch --json differs from check"
    );
    let t = Tui::open(ws.path());
    assert_eq!(tui_verdicts(&t), want, "the TUI differs from check");
}

/// Every verdict of `verdict check --format jsonl`, by source.
fn check_by_source(root: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let out = run_bin(
        &["check", "--format", "jsonl", "."],
        root,
        Duration::from_secs(30),
    );
    common::jsonl_verdicts(&out)
        .into_iter()
        .map(|d| (d["source"].as_str().unwrap().to_string(), d))
        .collect()
}

/// The TUI's list and every row's detail (selected and re-read from disk) against `check`.
fn assert_tui_matches_check(t: &mut Tui, step: &str) {
    let want = check_by_source(&t.root);
    let rows: Vec<String> = t
        .app
        .list
        .store
        .rows
        .iter()
        .map(|r| t.app.list.store.source(r))
        .collect();
    let mut sorted = rows.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        want.keys().cloned().collect::<Vec<_>>(),
        "{step}: the TUI's rows differ from check's verdicts"
    );
    for source in rows {
        t.select(&source);
        let ev = t
            .app
            .detail
            .evaluation()
            .unwrap_or_else(|| panic!("{step}: {source} not loaded"));
        let got = serde_json::to_value(&ev.verdict).unwrap();
        assert_eq!(
            got, want[&source],
            "{step}: the detail of {source} differs from check"
        );
    }
}

/// A log edited under the TUI in every hostile way (appended to, truncated, rewritten
/// shorter and longer, lines reordered, CRLF, blank lines, a final line without newline,
/// invalid UTF-8, a line over `max_capture_bytes`, duplicate ids, escapes in ids, emptied):
/// after each edit and its change batch, the list and the detail of every row equal what
/// `check` says.
#[test]
fn the_tui_follows_a_log_edited_every_which_way() {
    let ws = workspace(&[]);
    std::fs::write(ws.path().join("verdict.toml"), "max_capture_bytes = 120\n").unwrap();
    let log = ws.path().join("captures/log.jsonl");
    let rec = |id: &str, out: &str| {
        serde_json::to_string(&serde_json::json!({"id": id, "output": out})).unwrap()
    };
    std::fs::write(
        &log,
        format!(
            "{}\n{}\n{}\n",
            rec("a", "{}"),
            rec("b", "[]"),
            rec("c", "{}")
        ),
    )
    .unwrap();
    let mut t = Tui::open(ws.path());
    assert_tui_matches_check(&mut t, "first run");
    let big = rec("big", &format!("{{\"k\":\"{}\"}}", "x".repeat(200)));
    let steps: Vec<(&str, Vec<u8>)> = vec![
        (
            "append",
            format!(
                "{}\n{}\n{}\n{}\n",
                rec("a", "{}"),
                rec("b", "[]"),
                rec("c", "{}"),
                rec("d", "1")
            )
            .into_bytes(),
        ),
        ("truncate", format!("{}\n", rec("a", "{}")).into_bytes()),
        (
            "longer",
            format!(
                "{}\n{}\n{}\n",
                rec("a", "{\"a\":   1}"),
                rec("b", "{}"),
                rec("c", "[]")
            )
            .into_bytes(),
        ),
        (
            "reorder",
            format!(
                "{}\n{}\n{}\n",
                rec("c", "[]"),
                rec("a", "{\"a\":   1}"),
                rec("b", "{}")
            )
            .into_bytes(),
        ),
        (
            "crlf and blanks",
            format!(
                "\r\n{}\r\n\n   \n{}\r\n{}",
                rec("c", "[]"),
                rec("a", "{\"a\":   1}"),
                rec("b", "{}")
            )
            .into_bytes(),
        ),
        ("over max and utf-8", {
            let mut v = format!("{}\n{big}\n", rec("a", "{}")).into_bytes();
            v.extend_from_slice(b"{\"id\":\"bad\xff\",\"output\":\"{}\"}\n");
            v.extend_from_slice(format!("{}\n", rec("c", "{}")).as_bytes());
            v
        }),
        (
            "duplicates and escapes",
            format!(
                "{}\n{}\n{}\n",
                rec("dup", "{}"),
                rec("dup", "[]"),
                rec("\u{1b}]52;c;AAAA\u{7}\u{202e}x", "{}")
            )
            .into_bytes(),
        ),
        (
            "shorter same verdicts",
            format!(
                "{}\n{}\n{}\n",
                rec("dup", "{}"),
                rec("dup", "[]"),
                rec("\u{1b}]52;c;AAAA\u{7}\u{202e}x", "{}")
            )
            .replace(',', ", ")
            .into_bytes(),
        ),
        ("emptied", Vec::new()),
        ("back", format!("{}\n", rec("z", "{}")).into_bytes()),
    ];
    for (step, bytes) in steps {
        std::fs::write(&log, bytes).unwrap();
        t.changed(&["captures/log.jsonl"]);
        assert_tui_matches_check(&mut t, step);
    }
}

/// A capture file replaced by a folder of the same name (`a.json` becomes `a.json/`, with
/// captures inside): `check` lists the folder's captures only; the session kept the old
/// file's verdict as well (a folder in a change batch was only scanned for new files).
#[test]
fn a_capture_file_replaced_by_a_folder_is_removed() {
    use verdict::engine::session::{Change, Session};
    let ws = workspace(&[
        ("a.json", "{\"id\":\"a\",\"output\":\"{}\"}"),
        ("b.json", "{\"id\":\"b\",\"output\":\"{}\"}"),
    ]);
    let (mut session, first) = Session::open(ws.path()).unwrap();
    assert_eq!(first.len(), 2);
    let a = ws.path().join("captures/a.json");
    std::fs::remove_file(&a).unwrap();
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join("in.json"), "{\"id\":\"in\",\"output\":\"{}\"}").unwrap();
    let changes = session.apply(std::slice::from_ref(&a)).unwrap();
    let removed: Vec<&str> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Removed { source, .. } => Some(source.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(removed, ["captures/a.json"], "{changes:#?}");
    assert_eq!(session.len(), check_verdicts(ws.path()).len());
}

/// The list's line index had one slot per line number, blank lines included: a log that
/// is mostly blank lines (8 MB of `\n` and one record) cost 32 MB of index for one row,
/// four times the file (a 1 GB file of newlines: 4 GB), where `check` reads it in
/// constant memory.
#[test]
fn a_log_of_blank_lines_does_not_blow_up_the_list_index() {
    use verdict::engine::summary::{CaptureSummary, Locator};
    let ws = workspace(&[]);
    let log = ws.path().join("captures/log.jsonl");
    let mut text = "\n".repeat(8 << 20);
    text.push_str("{\"id\":\"a\",\"output\":\"{}\"}\n");
    std::fs::write(&log, &text).unwrap();
    let w = Workspace::open(ws.path()).unwrap();
    let mut store = verdict::tui::store::Store::default();
    let rel: Arc<str> = Arc::from("captures/log.jsonl");
    verdict::engine::summary::for_each_located(&log, &rel, 1 << 20, |r, loc: Locator| {
        store.put(&CaptureSummary::of(&w.evaluate(&r).unwrap(), loc), 1);
        true
    });
    assert_eq!(store.len(), 1);
    assert!(
        store.heap_bytes() < text.len() / 4,
        "{} bytes held for one row of an {} byte log",
        store.heap_bytes(),
        text.len()
    );
}

/// Deleting a line above the selected capture moves it up one line: the selection follows
/// the capture (not the line number), its detail is that capture, and nothing counts as
/// flipped (the captures below only moved).
#[test]
fn the_selection_follows_its_capture_when_a_line_above_is_deleted() {
    let line = |id: &str, amount: &str| {
        format!("{{\"id\":\"{id}\",\"output\":\"{{\\\"amount\\\": {amount}}}\"}}\n")
    };
    let before = [
        line("a", "1"),
        line("b", "\\\"x\\\""),
        line("c", "3"),
        line("d", "4"),
    ]
    .concat();
    let ws = workspace(&[("log.jsonl", &before)]);
    let mut t = Tui::open(ws.path());
    t.select("captures/log.jsonl:3");
    assert_eq!(t.shown_id(), "c");
    let after = [line("b", "\\\"x\\\""), line("c", "3"), line("d", "4")].concat();
    std::fs::write(ws.path().join("captures/log.jsonl"), &after).unwrap();
    t.changed(&["captures/log.jsonl"]);
    assert_eq!(t.app.list.selected.as_deref(), Some("captures/log.jsonl:2"));
    assert_eq!(t.shown_id(), "c");
    assert!(t.app.history.flips.is_empty(), "{:?}", t.app.history.flips);
    assert_eq!(t.app.list.store.len(), 3);
}

/// The screen's rows as text, drawn at 200x40 (wide enough that no warning wraps).
fn screen(t: &mut Tui) -> Vec<String> {
    t.app.update(Msg::Resize(200, 40));
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 40)).unwrap();
    term.draw(|f| verdict::tui::ui::draw(&t.app, f)).unwrap();
    let buf = term.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

/// A second capture file taking the id of the one on screen: the detail (re-reported by
/// the engine, not re-selected) shows the DUPLICATE_ID warning on its Response tab, every
/// row's detail equals `check`'s verdict (warnings included), and deleting the second file
/// takes the warning away again.
#[test]
fn the_tui_detail_shows_a_duplicate_id_as_check_does() {
    let ws = workspace(&[
        ("a.json", r#"{"id": "dup", "output": "{}"}"#),
        ("log.jsonl", "{\"id\": \"x\", \"output\": \"{}\"}\n"),
    ]);
    let mut t = Tui::open(ws.path());
    assert_tui_matches_check(&mut t, "first run");
    t.select("captures/a.json");
    t.app.update(Msg::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('4'),
        crossterm::event::KeyModifiers::NONE,
    )));
    let rows = screen(&mut t);
    assert!(
        rows.iter().all(|r| !r.contains("DUPLICATE_ID")),
        "{rows:#?}"
    );

    std::fs::write(
        ws.path().join("captures/b.json"),
        r#"{"id": "dup", "output": "[]"}"#,
    )
    .unwrap();
    t.changed(&["captures/b.json"]);
    let want = "warning DUPLICATE_ID: id `dup` is also the id of captures/b.json: `verdict \
                feedback dup` is ambiguous (give each capture its own id, or name it by its \
                source)";
    let rows = screen(&mut t);
    assert_eq!(
        rows.iter().filter(|r| r.contains("DUPLICATE_ID")).count(),
        1,
        "{rows:#?}"
    );
    // the detail pane's text of that row and the next (the message wraps once at 200)
    let at = rows
        .iter()
        .position(|r| r.contains("DUPLICATE_ID"))
        .unwrap();
    let detail = |r: &str| {
        let (_, d) = r.split_once("││").unwrap();
        d.trim_end_matches('│').trim().to_string()
    };
    assert_eq!(
        format!("{} {}", detail(&rows[at]), detail(&rows[at + 1])),
        want,
        "{rows:#?}"
    );
    assert_tui_matches_check(&mut t, "second file");

    std::fs::remove_file(ws.path().join("captures/b.json")).unwrap();
    t.changed(&["captures/b.json"]);
    t.select("captures/a.json");
    let rows = screen(&mut t);
    assert!(
        rows.iter().all(|r| !r.contains("DUPLICATE_ID")),
        "{rows:#?}"
    );
    assert_tui_matches_check(&mut t, "second file deleted");
}

/// MCP session logs (`docs/record-shapes.md#mcp`): the messages that are no capture
/// (`initialize`, notifications, `tools/list`, a null-id error) have no verdict in `check`,
/// none in `watch --json` and no row in the TUI; every row's detail (re-read from disk by
/// offset, so evaluated alone) equals `check`'s verdict, which needs the file's other
/// records (the request of a result, the tools/list of the contracts). After the
/// `tools/list` results change under the TUI, its rows and details equal a fresh `check`.
#[test]
fn check_watch_and_the_tui_agree_on_mcp_session_logs() {
    let s = crate::mcp::session().join("\n") + "\n";
    let t_log = crate::mcp::broken_session().join("\n") + "\n";
    let ws = workspace(&[("s.jsonl", &s), ("t.jsonl", &t_log)]);
    let want = check_verdicts(ws.path());
    assert_eq!(want.len(), 22 + 2, "{want:#?}");
    assert_eq!(
        watch_verdicts(ws.path()),
        want,
        "watch --json differs from check"
    );
    let mut t = Tui::open(ws.path());
    assert_eq!(tui_verdicts(&t), want, "the TUI differs from check");
    assert_tui_matches_check(&mut t, "first run");
    let edit = |rel: &str, from: &str, to: &str| {
        let p = ws.path().join(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(from), "{from}");
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    };
    // the broken inputSchema of t's tools/list fixed: its call's contract compiles
    edit(
        "captures/t.jsonl",
        r#"{"type":"objekt"}"#,
        r#"{"type":"object"}"#,
    );
    t.changed(&["captures/t.jsonl"]);
    assert_tui_matches_check(&mut t, "inputSchema fixed");
    // s's tools/list moves down a line and renames echo: t's echo call is undeclared
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools""#;
    edit(
        "captures/s.jsonl",
        list,
        &format!(
            "{}\n{list}",
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
        ),
    );
    edit("captures/s.jsonl", r#""name":"echo""#, r#""name":"echo2""#);
    t.changed(&["captures/s.jsonl"]);
    assert_tui_matches_check(&mut t, "tool renamed");
}

/// The DUPLICATE_ID warnings (source, message) of the TUI's detail of every row, in
/// source order.
fn tui_dups(t: &mut Tui) -> Vec<(String, String)> {
    let mut rows: Vec<String> = t
        .app
        .list
        .store
        .rows
        .iter()
        .map(|r| t.app.list.store.source(r))
        .collect();
    rows.sort();
    let mut out = Vec::new();
    for source in rows {
        t.select(&source);
        let ev = t.app.detail.evaluation().unwrap();
        for w in &ev.verdict.warnings {
            if w.code == "DUPLICATE_ID" {
                out.push((source.clone(), w.message.clone()));
            }
        }
    }
    out
}

/// Two OpenAI batch files with a `custom_id` in common (and lines that share only the line
/// `id`): the TUI's first run flags the two lines by their `custom_id` as `check` does,
/// and so does its session when a third file takes another line's `custom_id`.
#[test]
fn the_tui_flags_batch_lines_sharing_a_custom_id_as_check_does() {
    use crate::dup_ids::batch_line;
    let (a, b) = crate::dup_ids::two_batch_files();
    let ws = workspace(&[("a.jsonl", &a), ("b.jsonl", &b)]);
    let msg = |id: &str, other: &str| {
        format!(
            "id `{id}` is also the id of {other}: `verdict feedback {id}` is ambiguous (give \
             each capture its own id, or name it by its source)"
        )
    };
    let mut t = Tui::open(ws.path());
    assert_tui_matches_check(&mut t, "first run");
    assert_eq!(
        tui_dups(&mut t),
        [
            (
                "captures/a.jsonl:1".to_string(),
                msg("req-1", "captures/b.jsonl:2")
            ),
            (
                "captures/b.jsonl:2".to_string(),
                msg("req-1", "captures/a.jsonl:1")
            ),
        ]
    );
    std::fs::write(
        ws.path().join("captures/c.jsonl"),
        format!("{}\n", batch_line("req_error", "req-2")),
    )
    .unwrap();
    t.changed(&["captures/c.jsonl"]);
    assert_tui_matches_check(&mut t, "third file");
    assert_eq!(
        tui_dups(&mut t),
        [
            (
                "captures/a.jsonl:1".to_string(),
                msg("req-1", "captures/b.jsonl:2")
            ),
            (
                "captures/a.jsonl:2".to_string(),
                msg("req-2", "captures/c.jsonl:1")
            ),
            (
                "captures/b.jsonl:2".to_string(),
                msg("req-1", "captures/a.jsonl:1")
            ),
            (
                "captures/c.jsonl:1".to_string(),
                msg("req-2", "captures/a.jsonl:2")
            ),
        ]
    );
}

/// `[[join]]` lines whose id no capture has (`UNMATCHED_JOIN`, `docs/config.md#join`): the
/// TUI holds the same workspace warnings `check` prints after its verdicts and says so in
/// its header; a capture taking the id clears it, as a fresh `check` does.
#[test]
fn the_tui_reports_unmatched_join_lines_as_check_does() {
    let ws = workspace(&[("a.jsonl", "{\"id\":\"a\",\"output\":\"{}\"}\n")]);
    std::fs::write(
        ws.path().join("verdict.toml"),
        "[[join]]\npath = \"joins/*.jsonl\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join("joins")).unwrap();
    std::fs::write(
        ws.path().join("joins/j.jsonl"),
        "{\"id\":\"a\",\"context\":{}}\n{\"id\":\"nowhere\",\"context\":{}}\n",
    )
    .unwrap();
    let check_warnings = |root: &Path| -> Vec<(String, String)> {
        let out = run_bin(
            &["check", "--format", "json", "."],
            root,
            Duration::from_secs(30),
        );
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        // (no `warnings` member when there are none)
        doc["summary"]["warnings"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|w| {
                (
                    w["file"].as_str().unwrap().to_owned(),
                    w["message"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let tui_warnings = |t: &Tui| -> Vec<(String, String)> {
        t.app
            .run
            .workspace_warnings
            .iter()
            .map(|w| (w.file.clone().unwrap(), w.message.clone()))
            .collect()
    };
    let want = vec![(
        "joins/j.jsonl:2".to_string(),
        "join line for id \"nowhere\" matches no capture of the workspace".to_string(),
    )];
    assert_eq!(check_warnings(ws.path()), want);
    let mut t = Tui::open(ws.path());
    assert_eq!(tui_warnings(&t), want);
    assert!(
        screen(&mut t)[0].contains("1 join line matches no capture"),
        "{:?}",
        screen(&mut t)[0]
    );
    std::fs::write(
        ws.path().join("captures/b.jsonl"),
        "{\"id\":\"nowhere\",\"output\":\"{}\"}\n",
    )
    .unwrap();
    t.changed(&["captures/b.jsonl"]);
    assert_eq!(check_warnings(ws.path()), []);
    assert_eq!(tui_warnings(&t), []);
    assert!(!screen(&mut t)[0].contains("join line"));
}

/// A log only a `[[source]]` makes one (`captures/x.log`, `docs/config.md#source`): its
/// rows are `x.log:N` like any log's; the TUI selects each (the detail re-read from disk
/// equals `check`'s verdict) and applies an edit of the file to the same rows.
#[test]
fn the_tui_follows_the_rows_of_a_log_only_a_source_makes_one() {
    let line = |id: &str, content: &str| {
        crate::dup_ids::batch_line(id, id)
            .replace(r#""content": "{}""#, &format!(r#""content": "{content}""#))
    };
    let ws = workspace(&[]);
    std::fs::write(
        ws.path().join("verdict.toml"),
        "[[source]]\npath = \"captures/*.log\"\nformat = \"openai-batch\"\n",
    )
    .unwrap();
    let log = ws.path().join("captures/x.log");
    std::fs::write(
        &log,
        format!("{}\n{}\n", line("r1", "[]"), line("r2", "{}")),
    )
    .unwrap();
    let mut t = Tui::open(ws.path());
    assert_tui_matches_check(&mut t, "first run");
    assert_eq!(
        check_verdicts(ws.path()),
        [
            (
                "captures/x.log:1".to_string(),
                "schema".to_string(),
                "SCHEMA_MISMATCH".to_string()
            ),
            (
                "captures/x.log:2".to_string(),
                "ready".to_string(),
                "-".to_string()
            ),
        ]
    );
    // the selection is found by its source, and stays on its line through an edit
    let selected = |t: &Tui| {
        let row = t.app.list.selected_row().expect("a selected row");
        t.app.list.store.source(&t.app.list.store.rows[row])
    };
    t.select("captures/x.log:2");
    assert_eq!(selected(&t), "captures/x.log:2");
    std::fs::write(
        &log,
        format!("{}\n{}\n", line("r1", "{}"), line("r2", "[]")),
    )
    .unwrap();
    t.changed(&["captures/x.log"]);
    assert_eq!(selected(&t), "captures/x.log:2");
    assert_tui_matches_check(&mut t, "both lines edited");
    assert_eq!(t.app.list.store.len(), 2);
}

/// The sources of the TUI's rows, sorted.
fn tui_sources(t: &Tui) -> Vec<String> {
    let s = &t.app.list.store;
    let mut v: Vec<String> = s.rows.iter().map(|r| s.source(r)).collect();
    v.sort();
    v
}

/// `rm -rf captures/`: the watcher may name only the folder (or the folder and some of its
/// files). Every capture below it goes at once, in the session, the TUI and
/// `watch --json`, without `r`; a new `captures/` made in its place is read fresh.
#[test]
fn removing_the_whole_captures_folder_removes_every_capture_below_it() {
    use verdict::engine::session::{Change, Session};
    let files = [
        ("a.json", "{\"id\":\"a\",\"output\":\"{}\"}"),
        ("sub/b.json", "{\"id\":\"b\",\"output\":\"{}\"}"),
        ("sub/deeper/c.jsonl", "{\"id\":\"c\",\"output\":\"{}\"}\n"),
    ];
    // the paths a watcher may report for it
    for reported in [
        &["captures"][..],
        &["captures", "captures/a.json"],
        &["captures/sub", "captures/a.json", "captures"],
    ] {
        let ws = workspace(&files);
        let (mut session, first) = Session::open(ws.path()).unwrap();
        assert_eq!(first.len(), 3);
        std::fs::remove_dir_all(ws.path().join("captures")).unwrap();
        let paths: Vec<PathBuf> = reported.iter().map(|p| ws.path().join(p)).collect();
        let changes = session.apply(&paths).unwrap();
        let mut removed: Vec<&str> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Removed { source, .. } => Some(source.as_str()),
                _ => None,
            })
            .collect();
        removed.sort();
        assert_eq!(
            removed,
            [
                "captures/a.json",
                "captures/sub/b.json",
                "captures/sub/deeper/c.jsonl:1"
            ],
            "{reported:?}: {changes:#?}"
        );
        assert_eq!(session.len(), 0, "{reported:?}");
        // made again, with other captures: only those
        std::fs::create_dir_all(ws.path().join("captures/sub")).unwrap();
        std::fs::write(
            ws.path().join("captures/sub/new.json"),
            "{\"id\":\"new\",\"output\":\"{}\"}",
        )
        .unwrap();
        let changes = session.apply(&[ws.path().join("captures")]).unwrap();
        assert_eq!(changes.len(), 1, "{changes:#?}");
        assert_eq!(session.len(), 1);
    }
    // removed and made again before the watcher's batch: one batch that may name only the
    // folder, which exists again; the old captures go, the new one comes, nothing mixes
    let ws = workspace(&files);
    let (mut session, _) = Session::open(ws.path()).unwrap();
    std::fs::remove_dir_all(ws.path().join("captures")).unwrap();
    std::fs::create_dir_all(ws.path().join("captures/sub")).unwrap();
    std::fs::write(
        ws.path().join("captures/sub/b.json"),
        "{\"id\":\"b2\",\"output\":\"{}\"}",
    )
    .unwrap();
    let changes = session.apply(&[ws.path().join("captures")]).unwrap();
    let mut seen: Vec<String> = changes
        .iter()
        .map(|c| match c {
            Change::Removed { source, .. } => format!("removed {source}"),
            Change::Updated { evaluation, .. } => {
                format!("{} {}", evaluation.verdict.id, evaluation.verdict.source)
            }
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            "b2 captures/sub/b.json",
            "removed captures/a.json",
            "removed captures/sub/deeper/c.jsonl:1"
        ]
    );
    assert_eq!(session.len(), 1);
    // the TUI's rows follow, without `r`
    let ws = workspace(&files);
    let mut t = Tui::open(ws.path());
    assert_eq!(tui_sources(&t).len(), 3);
    std::fs::remove_dir_all(ws.path().join("captures")).unwrap();
    t.changed(&["captures"]);
    assert_eq!(tui_sources(&t), Vec::<String>::new());
    std::fs::create_dir_all(ws.path().join("captures")).unwrap();
    std::fs::write(
        ws.path().join("captures/new.json"),
        "{\"id\":\"new\",\"output\":\"{}\"}",
    )
    .unwrap();
    t.changed(&["captures", "captures/new.json"]);
    assert_eq!(tui_sources(&t), ["captures/new.json"]);
    // removed and made again within one batch that names only the folder
    std::fs::remove_dir_all(ws.path().join("captures")).unwrap();
    std::fs::create_dir_all(ws.path().join("captures")).unwrap();
    std::fs::write(
        ws.path().join("captures/other.json"),
        "{\"id\":\"other\",\"output\":\"{}\"}",
    )
    .unwrap();
    t.changed(&["captures"]);
    assert_eq!(tui_sources(&t), ["captures/other.json"]);
}

/// `watch --json` on `rm -rf captures/` and a new `captures/`: a `removed` line for every
/// capture, then only the new folder's captures.
#[test]
fn watch_reports_a_removed_captures_folder_and_a_new_one_apart() {
    let ws = workspace(&[
        ("a.json", "{\"id\":\"a\",\"output\":\"{}\"}"),
        ("sub/b.json", "{\"id\":\"b\",\"output\":\"{}\"}"),
    ]);
    let w = common::watch::WatchJson::start(ws.path(), &["--debounce-ms", "50"]);
    let first = w.batch("first pass", Duration::from_secs(30));
    assert_eq!(first.len(), 3, "{first:?}");
    std::fs::remove_dir_all(ws.path().join("captures")).unwrap();
    let mut removed = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while removed.len() < 2 && Instant::now() < deadline {
        for l in w.batch("removal", Duration::from_secs(30)) {
            if l["type"] == "removed" {
                removed.push(l["data"]["source"].as_str().unwrap().to_string());
            }
            if l["type"] == "summary" {
                assert_eq!(l["data"]["captures"], 2 - removed.len(), "{l}");
            }
        }
    }
    removed.sort();
    assert_eq!(removed, ["captures/a.json", "captures/sub/b.json"]);
    std::fs::create_dir_all(ws.path().join("captures")).unwrap();
    std::fs::write(
        ws.path().join("captures/c.json"),
        "{\"id\":\"c\",\"output\":\"{}\"}",
    )
    .unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let batch = w.batch("new folder", Duration::from_secs(30));
        for l in &batch {
            assert_ne!(l["type"], "removed", "{l}");
            if l["type"] == "verdict" {
                seen.push(l["data"]["source"].as_str().unwrap().to_string());
            }
        }
        let summary = batch.last().unwrap();
        if summary["data"]["captures"] == 1 || Instant::now() > deadline {
            assert_eq!(summary["data"]["captures"], 1, "{summary}");
            break;
        }
    }
    assert_eq!(seen, ["captures/c.json"]);
    // removed and made again at once (one batch, or two): `c` goes, `d` comes, and the
    // last summary counts only `d`
    std::fs::remove_dir_all(ws.path().join("captures")).unwrap();
    std::fs::create_dir_all(ws.path().join("captures")).unwrap();
    std::fs::write(
        ws.path().join("captures/d.json"),
        "{\"id\":\"d\",\"output\":\"{}\"}",
    )
    .unwrap();
    let (mut removed, mut seen) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let batch = w.batch("made again", Duration::from_secs(30));
        for l in &batch {
            match l["type"].as_str() {
                Some("removed") => removed.push(l["data"]["source"].as_str().unwrap().to_string()),
                Some("verdict") => seen.push(l["data"]["source"].as_str().unwrap().to_string()),
                _ => {}
            }
        }
        let summary = batch.last().unwrap();
        if (summary["data"]["captures"] == 1 && !removed.is_empty()) || Instant::now() > deadline {
            break;
        }
    }
    assert_eq!(removed, ["captures/c.json"]);
    assert_eq!(seen, ["captures/d.json"]);
}

/// A one-line OTLP `TracesData` of chat spans in trace `t1` with these `spanId`s, each
/// answering `{}`.
fn trace_line(span_ids: &[&str]) -> String {
    let spans: Vec<serde_json::Value> = span_ids
        .iter()
        .map(|id| {
            serde_json::json!({"traceId": "t1", "spanId": id, "name": "chat", "kind": 3,
                "attributes": [
                    {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                    {"key": "gen_ai.output.messages", "value": {"stringValue":
                        r#"[{"role":"assistant","parts":[{"type":"text","content":"{}"}],"finish_reason":"stop"}]"#}}
                ],
                "status": {"code": 1}})
        })
        .collect();
    serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

/// The DUPLICATE_ID warnings (source, message) of `check --format json`, in source order.
fn check_json_dups(root: &Path) -> Vec<(String, String)> {
    let out = run_bin(
        &["check", "--format", "json", "."],
        root,
        Duration::from_secs(30),
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut got: Vec<(String, String)> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| {
            let source = v["source"].as_str().unwrap().to_string();
            v["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|w| w["code"] == "DUPLICATE_ID")
                .map(move |w| (source.clone(), w["message"].as_str().unwrap().to_string()))
        })
        .collect();
    got.sort();
    got
}

/// The DUPLICATE_ID warnings (source, message) of one batch of `watch --json` (up to its
/// summary line), in source order.
fn watch_batch_dups(w: &common::watch::WatchJson, what: &str) -> Vec<(String, String)> {
    let mut got: Vec<(String, String)> = w
        .batch(what, Duration::from_secs(30))
        .iter()
        .filter(|l| l["type"] == "verdict")
        .filter_map(|l| {
            let d = &l["data"];
            let m = d["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["code"] == "DUPLICATE_ID")?;
            Some((
                d["source"].as_str().unwrap().to_string(),
                m["message"].as_str().unwrap().to_string(),
            ))
        })
        .collect();
    got.sort();
    got
}

/// Spans sharing a `traceId/spanId`, in one OTLP record and in two: each span's warning
/// names the other captures by their full source, part included (`FILE:LINE#N`), and
/// `check --format json`, `watch --json` (first pass, and after a line taking the id is
/// appended) and the TUI's detail of every row agree. Before the fix, the shared ids named
/// records: two spans of one record were one source (no warning at all), and a span's
/// twin in another record was named `captures/t.jsonl:1`, not `captures/t.jsonl:1#3`.
#[test]
fn spans_sharing_an_id_name_each_other_by_part_in_check_watch_and_the_tui() {
    let msg = |id: &str, others: &str| {
        format!(
            "id `{id}` is also the id of {others}: `verdict feedback {id}` is ambiguous (give \
             each capture its own id, or name it by its source)"
        )
    };
    let s = |a: &str, b: String| (a.to_string(), b);
    let log = format!(
        "{}\n{}\n",
        trace_line(&["s1", "s1", "s2"]),
        trace_line(&["s2"])
    );
    let ws = workspace(&[("t.jsonl", &log)]);
    let first = vec![
        s("captures/t.jsonl:1#1", msg("t1/s1", "captures/t.jsonl:1#2")),
        s("captures/t.jsonl:1#2", msg("t1/s1", "captures/t.jsonl:1#1")),
        s("captures/t.jsonl:1#3", msg("t1/s2", "captures/t.jsonl:2")),
        s("captures/t.jsonl:2", msg("t1/s2", "captures/t.jsonl:1#3")),
    ];
    assert_eq!(check_json_dups(ws.path()), first);
    let w = common::watch::WatchJson::start(ws.path(), &["--debounce-ms", "150"]);
    assert_eq!(watch_batch_dups(&w, "the first pass"), first);
    let mut t = Tui::open(ws.path());
    assert_eq!(tui_dups(&mut t), first);
    assert_tui_matches_check(&mut t, "first run");

    // a third record, of two spans, one taking `s1`: every span of `s1` names it
    std::fs::write(
        ws.path().join("captures/t.jsonl"),
        format!("{log}{}\n", trace_line(&["s3", "s1"])),
    )
    .unwrap();
    let then = vec![
        s(
            "captures/t.jsonl:1#1",
            msg("t1/s1", "captures/t.jsonl:1#2, captures/t.jsonl:3#2"),
        ),
        s(
            "captures/t.jsonl:1#2",
            msg("t1/s1", "captures/t.jsonl:1#1, captures/t.jsonl:3#2"),
        ),
        s("captures/t.jsonl:1#3", msg("t1/s2", "captures/t.jsonl:2")),
        s("captures/t.jsonl:2", msg("t1/s2", "captures/t.jsonl:1#3")),
        s(
            "captures/t.jsonl:3#2",
            msg("t1/s1", "captures/t.jsonl:1#1, captures/t.jsonl:1#2"),
        ),
    ];
    assert_eq!(check_json_dups(ws.path()), then);
    // watch re-reports the captures whose warning changed (and the new ones)
    let batch = watch_batch_dups(&w, "the appended line");
    assert_eq!(
        batch,
        [then[0].clone(), then[1].clone(), then[4].clone()],
        "the appended line"
    );
    t.changed(&["captures/t.jsonl"]);
    assert_eq!(tui_dups(&mut t), then);
    assert_tui_matches_check(&mut t, "appended line");
}

/// Random edits of two logs, each applied to a live session (`watch --json`'s and the
/// TUI's): lines appended (one, several, a line written in two saves), edited, inserted,
/// deleted, duplicated (a shared id), rewritten with the same text, records without an id
/// (named by their line), and an MCP request with its response. After each edit the session
/// equals one opened fresh on the same files: every capture's verdict hash, the shared
/// ids and the totals. The session keeps the verdict of a record whose text and place are
/// unchanged without evaluating it (`Session::revalidate_with`); this holds it to what a
/// fresh run gives.
#[test]
fn a_session_kept_up_by_random_edits_equals_a_fresh_one() {
    use verdict::engine::session::Session;
    let ws = workspace(&[]);
    let root = ws.path();
    let names = ["captures/l0.jsonl", "captures/l1.jsonl"];
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let line = |next: &mut dyn FnMut(usize) -> usize| -> String {
        let output = ["{}", "[]", "{\"k\":1}", "{", "{\"a\":1,\"a\":2}"][next(5)];
        match next(10) {
            // an MCP request and its response: the response's verdict depends on the request
            0 => r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{}}}"#
                .to_string(),
            1 => r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{}"}]}}"#
                .to_string(),
            // no id: named by its line
            2 => serde_json::json!({ "output": output }).to_string(),
            _ => {
                let id = ["a", "b", "c", "d", "e", "f", "g", "h"][next(8)];
                serde_json::json!({ "id": id, "output": output }).to_string()
            }
        }
    };
    let mut logs: Vec<Vec<String>> = vec![Vec::new(), Vec::new()];
    // a line written without its newline yet (a save in the middle of a write)
    let mut partial: Vec<Option<String>> = vec![None, None];
    for k in 0..2 {
        for _ in 0..6 {
            let l = line(&mut next);
            logs[k].push(l);
        }
        std::fs::write(root.join(names[k]), logs[k].join("\n") + "\n").unwrap();
    }
    let (mut session, _) = Session::open(root).unwrap();
    for step in 0..160 {
        let k = next(2);
        let n = logs[k].len();
        let what = match next(9) {
            0 | 1 => {
                for _ in 0..1 + next(3) {
                    let l = line(&mut next);
                    logs[k].push(l);
                }
                "append"
            }
            2 if n > 0 => {
                let i = next(n);
                logs[k][i] = line(&mut next);
                "edit"
            }
            3 => {
                let i = next(n + 1);
                let l = line(&mut next);
                logs[k].insert(i, l);
                "insert"
            }
            4 if n > 0 => {
                logs[k].remove(next(n));
                "delete"
            }
            5 if n > 0 => {
                let l = logs[k][next(n)].clone();
                logs[k].push(l);
                "duplicate"
            }
            6 => match partial[k].take() {
                Some(p) => {
                    logs[k].push(p);
                    "finish a line"
                }
                None => {
                    partial[k] = Some(line(&mut next));
                    "half a line"
                }
            },
            _ => "same text",
        };
        let mut text = logs[k].join("\n");
        if !logs[k].is_empty() {
            text.push('\n');
        }
        if let Some(p) = &partial[k] {
            text.push_str(&p[..p.len() / 2]);
        }
        std::fs::write(root.join(names[k]), text).unwrap();
        session.apply(&[root.join(names[k])]).unwrap();
        let (fresh, _) = Session::open(root).unwrap();
        let at = format!("step {step} ({what} in {})", names[k]);
        assert_eq!(session.len(), fresh.len(), "{at}: captures");
        for name in names {
            for l in 0..=200 {
                assert_eq!(
                    session.hash_of(name, l, None),
                    fresh.hash_of(name, l, None),
                    "{at}: the verdict at {name}:{l}"
                );
            }
        }
        assert_eq!(session.shared(), fresh.shared(), "{at}: shared ids");
        assert_eq!(session.summary(), fresh.summary(), "{at}: totals");
    }
}

/// A log rewritten shorter with another record at a line (`a b c d` becomes `a B`): each
/// line that went is `removed` under the id it held (`c` at line 3, `d` at line 4), not
/// under the id of a capture replaced at a line that is still there (`b`). A line deleted
/// in the middle is still named after the deleted capture (`deleting_a_jsonl_line...` in
/// tests/watch.rs).
#[test]
fn a_log_rewritten_shorter_removes_each_line_under_the_id_it_held() {
    use verdict::engine::session::{Change, Session};
    let rec = |id: &str| format!("{{\"id\":\"{id}\",\"output\":\"{{}}\"}}\n");
    let ws = workspace(&[("l.jsonl", &["a", "b", "c", "d"].map(rec).concat())]);
    let log = ws.path().join("captures/l.jsonl");
    let (mut session, _) = Session::open(ws.path()).unwrap();
    std::fs::write(&log, ["a", "B"].map(rec).concat()).unwrap();
    let changes = session.apply(std::slice::from_ref(&log)).unwrap();
    let removed: Vec<(String, String)> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Removed { id, source, .. } => Some((id.clone(), source.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        removed,
        vec![
            ("c".to_string(), "captures/l.jsonl:3".to_string()),
            ("d".to_string(), "captures/l.jsonl:4".to_string())
        ]
    );
    // line 2's new capture is reported as new (no flip from `b`)
    let updated: Vec<String> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Updated { evaluation, .. } => Some(evaluation.verdict.source.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(updated, vec!["captures/l.jsonl:2".to_string()]);
}
