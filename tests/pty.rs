//! End-to-end tests of the TUI in a real pseudo-terminal (portable-pty + vt100): the binary
//! runs on a temporary copy of a workspace, keys are typed, the screen is read back. Every
//! wait polls the screen with a deadline; nothing relies on a fixed sleep.
use crate::common;
use common::copy_dir;
use common::refund_copy;

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ROWS: u16 = 40;
const COLS: u16 = 140;

/// Records window-title changes (an OSC 0/2 from model text would land here), and, as a
/// real terminal does, answers cursor position queries (DSR 6, which ratatui's
/// `Terminal::clear` sends): the second field holds the replies not yet written back.
#[derive(Default)]
struct Titles(Vec<Vec<u8>>, Vec<u8>);

impl vt100::Callbacks for Titles {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0.push(title.to_vec());
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if c == 'n' && i1.is_none() && params == [&[6]] {
            let (row, col) = screen.cursor_position();
            let reply = format!("\x1b[{};{}R", row + 1, col + 1);
            self.1.extend_from_slice(reply.as_bytes());
        }
    }
}

type Parser = vt100::Parser<Titles>;

struct Tui {
    parser: Arc<Mutex<Parser>>,
    /// Every byte the TUI wrote, as written (the exact escape sequences).
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    done: Arc<Mutex<bool>>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Tui {
    fn start(ws: &Path) -> Tui {
        Tui::start_with(ws, (ROWS, COLS), &[])
    }

    /// Like [`Tui::start`], on a terminal of `(rows, cols)`, with extra environment
    /// variables: `Some(value)` sets one, `None` removes it (the child otherwise inherits
    /// the test's environment).
    fn start_with(ws: &Path, (rows, cols): (u16, u16), env: &[(&str, Option<&str>)]) -> Tui {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_verdict"));
        cmd.arg(ws);
        cmd.env("TERM", "xterm-256color");
        cmd.env("RUST_BACKTRACE", "0");
        cmd.env("XDG_CONFIG_HOME", ws.join("no-config"));
        // a core file (SIGQUIT) lands in the temporary workspace
        cmd.cwd(ws);
        cmd.env_remove("NO_COLOR");
        for (k, v) in env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            }
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        let parser = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(cols).unwrap(),
            0,
            Titles::default(),
        )));
        let done = Arc::new(Mutex::new(false));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (p, d, w, r) = (parser.clone(), done.clone(), writer.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        r.lock().unwrap().extend_from_slice(&buf[..n]);
                        let mut p = p.lock().unwrap();
                        p.process(&buf[..n]);
                        let replies = std::mem::take(&mut p.callbacks_mut().1);
                        if !replies.is_empty() {
                            let mut w = w.lock().unwrap();
                            let _ = w.write_all(&replies).and_then(|()| w.flush());
                        }
                    }
                }
            }
            *d.lock().unwrap() = true;
        });
        Tui {
            parser,
            raw,
            writer,
            child,
            done,
            _master: pair.master,
        }
    }

    fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen satisfies `ok`, or panics with the screen after `within`.
    fn wait_for(&self, what: &str, within: Duration, ok: impl Fn(&str) -> bool) -> Duration {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return start.elapsed();
            }
            if start.elapsed() > within {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn wait_text(&self, text: &str, within: Duration) -> Duration {
        self.wait_for(text, within, |s| s.contains(text))
    }

    fn send(&mut self, keys: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(keys.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Runs `f` on the vt100 screen (modes and cell attributes, beyond the text).
    fn with_screen<T>(&self, f: impl FnOnce(&vt100::Screen) -> T) -> T {
        f(self.parser.lock().unwrap().screen())
    }

    /// Waits until the vt100 screen satisfies `ok`, or panics with the screen after `within`.
    fn wait_screen(&self, what: &str, within: Duration, ok: impl Fn(&vt100::Screen) -> bool) {
        let start = Instant::now();
        while !self.with_screen(&ok) {
            if start.elapsed() > within {
                panic!("timed out waiting for {what}; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the list as drawn satisfies `ok` and returns it (a frame can be read
    /// half-written, so a list read once may miss rows).
    fn wait_list(&self, what: &str, within: Duration, ok: impl Fn(&List) -> bool) -> List {
        let start = Instant::now();
        loop {
            let list = self.with_screen(List::read);
            if let Some(list) = list.as_ref().filter(|l| ok(l)) {
                return list.clone();
            }
            if start.elapsed() > within {
                panic!(
                    "timed out waiting for {what}; {list:?}; screen:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the selection is the capture drawn as `id` (see [`List::shows`]).
    fn wait_selected(&self, id: &str, within: Duration) -> List {
        self.wait_list(&format!("{id} selected"), within, |l| l.shows(id))
    }

    /// Types a left click (press and release, SGR 1006) on the 0-based screen cell.
    fn click(&mut self, row: u16, col: u16) {
        let (r, c) = (row + 1, col + 1);
        self.send(&format!("\x1b[<0;{c};{r}M\x1b[<0;{c};{r}m"));
    }

    /// Turns the mouse wheel one notch (SGR 1006) over the 0-based screen cell.
    fn wheel(&mut self, down: bool, row: u16, col: u16) {
        let button = if down { 65 } else { 64 };
        self.send(&format!("\x1b[<{button};{};{}M", col + 1, row + 1));
    }

    /// How many bytes the TUI has written so far.
    fn written(&self) -> usize {
        self.raw.lock().unwrap().len()
    }

    /// The bytes the TUI wrote from `from` on ([`Tui::written`]).
    fn written_since(&self, from: usize) -> Vec<u8> {
        self.raw.lock().unwrap()[from..].to_vec()
    }

    /// Sends the signal `sig` to the TUI's process.
    fn signal(&self, sig: i32) {
        let pid = self.child.process_id().unwrap() as i32;
        // SAFETY: kill has no memory preconditions; the pid is our own child's
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    }

    /// The process's state letter in `/proc/PID/stat` (`T`: stopped).
    fn state(&self) -> char {
        let pid = self.child.process_id().unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(')')
            .next()
            .and_then(|r| r.trim_start().chars().next())
            .unwrap_or('?')
    }

    /// Waits for the process to exit (whatever its status) and for the reader to drain its
    /// output; the exit status.
    fn exited(&mut self, within: Duration) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the TUI did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        while !*self.done.lock().unwrap() && Instant::now() < deadline + Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        status
    }

    /// Waits for the process to exit successfully and for the reader to drain its output.
    fn finish(mut self) -> Arc<Mutex<Parser>> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status:?}");
                break;
            }
            assert!(Instant::now() < deadline, "the TUI did not quit");
            std::thread::sleep(Duration::from_millis(10));
        }
        while !*self.done.lock().unwrap() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.parser.clone()
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The capture list and the detail pane's title as drawn, read off the vt100 screen (the
/// panes are found by their borders, so the test follows the layout rather than copy it).
#[derive(Debug, Clone, PartialEq)]
struct List {
    /// The screen row of the list's top border.
    top: u16,
    /// The rows inside the list's borders: screen row, capture id (as drawn: a long id
    /// ends in `…`), whether the row is highlighted as the selection.
    rows: Vec<(u16, String, bool)>,
    /// The first column right of the list pane (the detail pane's left border).
    detail_x: u16,
    /// The detail pane's title: the selected capture's id.
    title: String,
}

impl List {
    /// The list on the screen; none while no list is drawn (or half of its border).
    fn read(s: &vt100::Screen) -> Option<List> {
        let (rows, cols) = s.size();
        let (rows, cols) = (rows.get(), cols.get());
        let text = |r: u16, c: u16| match s.cell(r, c) {
            Some(c) if c.is_wide_continuation() => String::new(),
            Some(c) if c.has_contents() => c.contents().to_string(),
            _ => " ".to_string(),
        };
        let line = |r: u16, from: u16, to: u16| (from..to).map(|c| text(r, c)).collect::<String>();
        let top = (0..rows).find(|&r| line(r, 0, 10) == "┌ Captures")?;
        let right = (1..cols).find(|&c| text(top, c) == "┐")?;
        let mut list = Vec::new();
        for r in top + 1..rows {
            if text(r, 0) != "│" {
                break;
            }
            let row = line(r, 1, right);
            let id = row
                .split_whitespace()
                .rfind(|w| *w != "≠")
                .unwrap_or("")
                .to_string();
            let cell = s.cell(r, 2).unwrap();
            let selected = cell.inverse() || cell.bgcolor() != vt100::Color::Default;
            if !id.is_empty() {
                list.push((r, id, selected));
            }
        }
        let title = line(top, right + 1, cols);
        let title = title
            .strip_prefix("┌ ")
            .and_then(|t| t.split(" ─").next())
            .unwrap_or("")
            .to_string();
        Some(List {
            top,
            rows: list,
            detail_x: right + 1,
            title,
        })
    }

    /// The detail pane's tab content as drawn: (screen row, text without trailing blanks)
    /// below the tab bar.
    fn content(s: &vt100::Screen) -> Vec<(u16, String)> {
        let Some(l) = List::read(s) else {
            return Vec::new();
        };
        let (rows, cols) = s.size();
        let width = cols.get() - l.detail_x - 2;
        let lines: Vec<String> = s.rows(l.detail_x + 1, width).collect();
        let Some(tabs) = (0..rows.get()).find(|&r| lines[usize::from(r)].contains(" 1 Diff "))
        else {
            return Vec::new();
        };
        (tabs + 1..rows.get() - 2)
            .map(|r| (r, lines[usize::from(r)].trim_end().to_string()))
            .collect()
    }

    /// The screen row of the capture `id`.
    fn row_of(&self, id: &str) -> u16 {
        self.rows
            .iter()
            .find(|(_, i, _)| i == id)
            .unwrap_or_else(|| panic!("{id} is not in the list: {self:?}"))
            .0
    }

    /// The capture drawn on screen row `row`.
    fn id_at(&self, row: u16) -> &str {
        &self.rows.iter().find(|(r, _, _)| *r == row).unwrap().1
    }

    /// The highlighted rows: (screen row, id).
    fn selected(&self) -> Vec<(u16, &str)> {
        self.rows
            .iter()
            .filter(|(_, _, s)| *s)
            .map(|(r, i, _)| (*r, i.as_str()))
            .collect()
    }

    /// Whether the selection is the capture `id` (whole, or as drawn in a row: a long id
    /// is cut with `…`): its row alone highlighted, its verdict in the detail pane.
    fn shows(&self, id: &str) -> bool {
        let sel = self.selected();
        same_id(&self.title, id) && sel.len() == 1 && same_id(sel[0].1, id)
    }
}

/// Whether two ids as drawn can be the same capture's (either may be cut with `…`: at its
/// end, as a title is, or in its middle, as a list row is).
fn same_id(a: &str, b: &str) -> bool {
    let cut = |x: &str, y: &str| {
        x.split_once('…').is_some_and(|(head, tail)| {
            y.len() >= head.len() + tail.len() && y.starts_with(head) && y.ends_with(tail)
        })
    };
    a == b || cut(a, b) || cut(b, a)
}

/// Replaces `path` atomically: write a temporary file next to it, then rename over it.
fn atomic_save(path: &Path, text: &str) {
    let tmp = path.with_file_name(format!(
        ".{}.tmp",
        path.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

const LONG: Duration = Duration::from_secs(15);

/// The deadline for a change on disk to reach the screen: generous, for a loaded machine.
const EVENTUALLY: Duration = Duration::from_secs(20);

#[test]
fn filter_see_the_mismatch_fix_it_on_disk_see_it_flip_help_quit() {
    let (_dir, ws) = refund_copy();
    let mut tui = Tui::start(&ws);
    tui.wait_text("ntent-5000", LONG);
    tui.wait_text("● live", LONG);
    tui.send("/8000\r");
    tui.wait_text("Captures 2/25", LONG);
    // ranked by match: the id holding `8000` first, then amount-9000 (its message holds
    // it), which stays selected
    tui.send("k");
    // the detail is re-read from disk on the engine thread: wait for the diff itself
    tui.wait_for("the 8000 case's detail", LONG, |s| {
        s.contains("┌ amount-8000-intent-5000")
            && s.contains("INTENT_MISMATCH")
            && s.contains("\"amount_minor\": 8000")
            && s.contains("\"amount_minor\": 5000")
    });
    let s = tui.screen();
    assert!(s.contains("/amount_minor"), "{s}");
    assert!(s.contains("? recheck"), "{s}");

    let file = ws.join("captures/cases.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let fixed: String = text
        .lines()
        .map(|l| {
            if l.contains("\"amount-8000-intent-5000\"") {
                l.replace(r#"\"amount_minor\":8000"#, r#"\"amount_minor\":5000"#)
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    assert_ne!(fixed, text);
    atomic_save(&file, &fixed);
    // eventually: how fast a save reaches the screen is the benchmark's question (bench/)
    let took = tui.wait_for("the flip to ready-for-commit", EVENTUALLY, |s| {
        s.contains("┌ amount-8000-intent-5000") && s.contains("✓ ready-for-commit")
    });
    eprintln!("save to screen: {took:?}");
    let s = tui.screen();
    assert!(s.contains("↺ 1 flipped"), "{s}");
    assert!(s.contains("last change"), "{s}");

    tui.send("?");
    tui.wait_text("this help", LONG);
    // q closes the help, then quits
    tui.send("q");
    tui.wait_for("the help closed", LONG, |s| !s.contains("this help"));
    tui.send("q");
    let parser = tui.finish();
    let p = parser.lock().unwrap();
    assert!(
        !p.screen().alternate_screen(),
        "the terminal is still in the alternate screen"
    );
}

#[test]
fn escape_sequences_in_model_text_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("hostile");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund");
    std::fs::create_dir_all(ws.join("captures")).unwrap();
    copy_dir(&sample.join("schemas"), &ws.join("schemas"));
    std::fs::copy(sample.join("verdict.toml"), ws.join("verdict.toml")).unwrap();
    let esc = "\u{1b}[31mRED\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let ctx = serde_json::json!({"actor": {"user_id": "U-7", "allowed_actions": ["refund"]},
        "order": {"order_id": "O-1042", "owner_id": "U-7", "currency": "KRW", "paid_minor": 10000,
                  "refunded_minor": 0, "version": 7}, "note": esc});
    let proposal = serde_json::json!({"schema_version": "refund-v1", "order_id": esc,
        "amount_minor": 5000, "currency": esc, "expected_version": 7});
    let records = [
        // raw ESC in the output text: a parse error, the Raw tab shows the text
        serde_json::json!({"id": format!("raw-{esc}"),
            "output": format!("{{\"order_id\": \"{esc}\"}}\n{esc}"),
            "context": ctx, "meta": {"model": esc}}),
        // ESC inside JSON strings: parsed values, diff, context, feedback carry it
        serde_json::json!({"id": format!("values-{esc}"), "output": proposal.to_string(),
            "context": ctx, "intent": {"order_id": esc, "amount_minor": 5000, "currency": esc},
            "meta": {esc: esc}}),
    ];
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(ws.join("captures/hostile.jsonl"), text).unwrap();

    let mut tui = Tui::start(&ws);
    tui.wait_text("captures 2 >", LONG);
    let shown = r"\u{1b}[31mRED\u{1b}]0;pwned\u{7}\u{1b}[2J";
    for (row, name) in [("g", "raw-"), ("j", "values-")] {
        tui.send(row);
        let title = format!("┌ {name}{shown}");
        for tab in '1'..='8' {
            tui.send(&tab.to_string());
            // the detail title carries the capture id: escaped, on every tab
            tui.wait_for(&format!("{name} tab {tab}"), LONG, |s| {
                s.contains(&title) && s.contains(" verdict ") && s.contains("captures 2 >")
            });
        }
    }
    // the raw text itself, escaped, in the Raw tab of the first capture
    tui.send("g3");
    tui.wait_for("the raw output escaped", LONG, |s| {
        s.contains(&format!("{{\"order_id\": \"{shown}\"}}")) && s.contains("┌ raw-")
    });
    let titles = tui.parser.lock().unwrap().callbacks().0.clone();
    assert!(
        !titles.iter().any(|t| t.windows(5).any(|w| w == b"pwned")),
        "the window title was changed: {titles:?}"
    );
    tui.send("q");
    let parser = tui.finish();
    assert!(!parser.lock().unwrap().screen().alternate_screen());
}

/// Waits until the TUI has validated the whole sample workspace and watches it.
fn wait_validated(tui: &Tui) {
    tui.wait_for("the first validation", LONG, |s| {
        s.contains("validated in") && s.contains("● live") && s.contains("┌ Captures 25 ")
    });
}

#[test]
fn mouse_click_selects_a_row_and_the_wheel_moves_the_selection_or_scrolls_the_detail() {
    let (_dir, ws) = refund_copy();
    let mut tui = Tui::start(&ws);
    wait_validated(&tui);
    tui.with_screen(|s| {
        assert_eq!(s.mouse_protocol_mode(), vt100::MouseProtocolMode::AnyMotion);
        assert_eq!(
            s.mouse_protocol_encoding(),
            vt100::MouseProtocolEncoding::Sgr
        );
    });
    // the whole list drawn, the first row selected (a frame can be read half-written)
    let list = tui.wait_list("the full list", LONG, |l| {
        l.rows.len() == 25 && l.shows(&l.rows[0].1)
    });
    let col = 10; // inside the list, on the stage column

    // a click on a row selects it: highlighted, and its verdict in the detail pane
    let row = list.row_of("ledger-version-8");
    tui.click(row, col);
    tui.wait_selected("ledger-version-8", LONG);
    tui.wait_text("STALE_STATE", LONG);
    let row2 = list.row_of("duplicate-key");
    tui.click(row2, list.detail_x - 2);
    tui.wait_selected("duplicate-key", LONG);
    tui.wait_text("DUPLICATE_KEY", LONG);

    // a click on the list's top border selects nothing: the wheel then moves from
    // duplicate-key, three rows a notch
    tui.click(list.top, col);
    tui.wheel(true, row2, col);
    let below = list.id_at(row2 + 3).to_string();
    tui.wait_selected(&below, LONG);
    tui.wheel(false, row2, col);
    tui.wheel(false, row2, col);
    let above = list.id_at(row2 - 3).to_string();
    tui.wait_selected(&above, LONG);
    // the wheel stops at the first row
    for _ in 0..10 {
        tui.wheel(false, row2, col);
    }
    let first = list.rows[0].1.clone();
    tui.wait_selected(&first, LONG);
    // every capture fits on this screen: the list itself never scrolled
    let unscrolled: Vec<_> = list
        .rows
        .iter()
        .map(|(r, id, _)| (*r, id.clone(), *id == first))
        .collect();
    tui.wait_list("the list as first drawn", LONG, |l| l.rows == unscrolled);

    // the wheel over the detail pane scrolls its content three lines a notch and leaves
    // the selection alone (the Contract tab of amount-9000 is longer than the pane)
    tui.send("5");
    tui.wait_screen("the contract tab drawn", LONG, |s| {
        let c = List::content(s);
        c.first()
            .is_some_and(|l| l.1.starts_with("rules  schemas/refund-v1.rules.toml"))
            && c.iter().any(|l| l.1.contains("\"$schema\""))
    });
    let before = tui.with_screen(List::content);
    let (r0, x) = (before[0].0, list.detail_x + 10);
    tui.wheel(true, r0 + 2, x);
    tui.wait_screen("the contract scrolled by three lines", LONG, |s| {
        List::content(s).first().map(|l| &l.1) == Some(&before[3].1)
    });
    tui.wheel(false, r0 + 2, x);
    // (the rows above the schema's, complete in any read after the wait above)
    tui.wait_screen("the contract scrolled back", LONG, |s| {
        List::content(s).get(..6) == Some(&before[..6])
    });
    tui.wait_selected(&first, LONG);

    // a click on the tab bar switches the tab
    let (tabs_row, raw_col) = tui.with_screen(|s| {
        let lines: Vec<String> = s.rows(0, s.size().1.get()).collect();
        (0..)
            .zip(lines)
            .find_map(|(r, line)| {
                let i = line.find(" 3 Raw")?;
                Some((r, line[..i].chars().count() as u16 + 3)) // on the R
            })
            .unwrap()
    });
    assert!(!tui.with_screen(|s| s.cell(tabs_row, raw_col).unwrap().inverse()));
    tui.click(tabs_row, raw_col);
    tui.wait_screen("the Raw tab active", LONG, |s| {
        s.cell(tabs_row, raw_col).unwrap().inverse()
    });

    tui.send("q");
    let parser = tui.finish();
    let p = parser.lock().unwrap();
    assert_eq!(
        p.screen().mouse_protocol_mode(),
        vt100::MouseProtocolMode::None,
        "mouse reporting is still on after quit"
    );
    assert!(!p.screen().alternate_screen());
}

#[test]
fn mouse_on_a_list_longer_than_the_screen_scrolls_it_and_a_click_hits_the_row_drawn() {
    let (_dir, ws) = refund_copy();
    // 20 rows: the list shows 15 of the 25 captures
    let mut tui = Tui::start_with(&ws, (20, COLS), &[]);
    wait_validated(&tui);
    let list = tui.wait_list("the first 15 rows drawn, the first selected", LONG, |l| {
        l.rows.len() == 15 && l.shows(&l.rows[0].1)
    });
    let ids: Vec<String> = list.rows.iter().map(|r| r.1.clone()).collect();
    let (col, first_row, last_row) = (10, list.rows[0].0, list.rows[14].0);

    // four notches: the 13th row, the list still at the top
    for _ in 0..4 {
        tui.wheel(true, first_row + 5, col);
    }
    let l = tui.wait_selected(&ids[12], LONG);
    assert_eq!(l.id_at(first_row), ids[0]);
    // the fifth goes past the last visible row: the list follows, one row
    tui.wheel(true, first_row + 5, col);
    let l = tui.wait_list(
        "the list scrolled one row, the new row selected",
        LONG,
        |l| {
            l.rows.len() == 15
                && l.id_at(first_row) == ids[1]
                && l.selected().first().is_some_and(|s| s.0 == last_row)
                && !ids.iter().any(|id| id == l.id_at(last_row))
        },
    );
    tui.wait_selected(l.id_at(last_row), LONG);

    // a click on the top row selects what is drawn there (the list's offset counts)
    tui.click(first_row, col);
    tui.wait_selected(&ids[1], LONG);

    // down to the end: the last capture on the last row; one notch up moves the
    // selection three rows up and leaves the list where it is
    for _ in 0..10 {
        tui.wheel(true, first_row, col);
    }
    let end = tui.wait_selected("valid-proposal", LONG);
    assert_eq!(end.row_of("valid-proposal"), last_row, "{end:?}");
    tui.wheel(false, first_row, col);
    let l = tui.wait_selected(end.id_at(last_row - 3), LONG);
    assert_eq!(l.rows[0].1, end.rows[0].1, "{l:?}");
    // and back to the top
    for _ in 0..10 {
        tui.wheel(false, first_row, col);
    }
    let l = tui.wait_selected(&ids[0], LONG);
    assert_eq!(l.id_at(first_row), ids[0]);
    tui.send("q");
    tui.finish();
}

/// Polls `ok` until it holds, or panics after `within`.
fn wait_until(what: &str, within: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < within, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A stand-in editor: the executable shell script `bin/name` writes its arguments, one a
/// line, to `bin/args.txt` (atomically), prints `fake editor running`, then, if
/// `read_line`, reads one line from the terminal into `bin/typed.txt`, and exits `code`.
fn fake_editor(bin: &Path, name: &str, read_line: bool, code: i32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).unwrap();
    let d = bin.display();
    let read = if read_line {
        format!(
            "IFS= read -r line\nprintf '%s\\n' \"$line\" > '{d}/typed.tmp' && mv '{d}/typed.tmp' '{d}/typed.txt'\n"
        )
    } else {
        String::new()
    };
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{d}/args.tmp' && mv '{d}/args.tmp' '{d}/args.txt'\n\
         printf 'fake editor running\\n'\n{read}exit {code}\n"
    );
    let path = bin.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The 1-based line of the record `id` in the JSONL file `path`.
fn line_of(path: &Path, id: &str) -> usize {
    let needle = format!("\"id\": \"{id}\"");
    let compact = format!("\"id\":\"{id}\"");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .position(|l| l.contains(&needle) || l.contains(&compact))
        .unwrap_or_else(|| panic!("{id} is not in {}", path.display()))
        + 1
}

/// Waits until the TUI owns the terminal again after an editor: alternate screen, mouse
/// reporting on, the list drawn with `id` selected.
fn wait_resumed(tui: &Tui, id: &str) {
    tui.wait_screen("the alternate screen and mouse reporting back", LONG, |s| {
        s.alternate_screen()
            && s.mouse_protocol_mode() == vt100::MouseProtocolMode::AnyMotion
            && s.mouse_protocol_encoding() == vt100::MouseProtocolEncoding::Sgr
    });
    tui.wait_selected(id, LONG);
}

#[test]
fn e_opens_the_capture_in_editor_at_its_line_gives_it_the_keys_and_the_tui_resumes() {
    let (dir, ws) = refund_copy();
    let bin = dir.path().join("bin");
    let editor = fake_editor(&bin, "vim", true, 0);
    let mut tui = Tui::start_with(
        &ws,
        (ROWS, COLS),
        &[("EDITOR", Some(editor.to_str().unwrap())), ("VISUAL", None)],
    );
    wait_validated(&tui);
    tui.send("/8000\r");
    tui.wait_text("Captures 2/25", LONG);
    tui.send("k");
    tui.wait_selected("amount-8000-intent-5000", LONG);

    tui.send("e");
    let args = bin.join("args.txt");
    wait_until("the editor's arguments", LONG, || args.exists());
    let file = ws.join("captures/cases.jsonl");
    let line = line_of(&file, "amount-8000-intent-5000");
    assert_eq!(line, 20);
    assert_eq!(
        std::fs::read_to_string(&args).unwrap(),
        format!("+{line}\n{}\n", file.display())
    );
    // the editor owns the terminal: main screen, no mouse reporting, and every key typed
    // now reaches it (were the TUI still reading, `q` would quit it)
    tui.wait_screen("the editor on the main screen", LONG, |s| {
        !s.alternate_screen()
            && s.mouse_protocol_mode() == vt100::MouseProtocolMode::None
            && s.contents().contains("fake editor running")
    });
    tui.send("q to the editor\r");
    let typed = bin.join("typed.txt");
    wait_until("the line typed into the editor", LONG, || typed.exists());
    assert_eq!(
        std::fs::read_to_string(&typed).unwrap(),
        "q to the editor\n"
    );

    // back: the same list and selection, the footer's key hints (no error status)
    wait_resumed(&tui, "amount-8000-intent-5000");
    tui.wait_for("the filtered list and the hints", LONG, |s| {
        s.contains("Captures 2/25") && s.contains("INTENT_MISMATCH") && s.contains("? help")
    });
    // and it still takes keys and clicks
    tui.send("?");
    tui.wait_text("this help", LONG);
    tui.send("?");
    tui.wait_for("the help closed", LONG, |s| !s.contains("this help"));
    let list = tui.wait_list("the list", LONG, |l| l.rows.len() == 2);
    // the other row (the selected 8000 case is first)
    let other = list.rows[1].1.clone();
    tui.click(list.rows[1].0, 10);
    tui.wait_selected(&other, LONG);
    tui.send("q");
    let parser = tui.finish();
    let p = parser.lock().unwrap();
    assert!(!p.screen().alternate_screen());
    assert_eq!(
        p.screen().mouse_protocol_mode(),
        vt100::MouseProtocolMode::None
    );
}

#[test]
fn e_with_visual_and_editor_blank_runs_vi_from_the_path_on_a_json_capture_at_line_1() {
    let (dir, ws) = refund_copy();
    let bin = dir.path().join("bin");
    fake_editor(&bin, "vi", false, 0);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut tui = Tui::start_with(
        &ws,
        (ROWS, COLS),
        &[
            ("VISUAL", Some("  ")),
            ("EDITOR", Some("")),
            ("PATH", Some(&path)),
        ],
    );
    wait_validated(&tui);
    tui.send("/valid-proposal\r");
    tui.wait_text("Captures 1/25", LONG);
    tui.wait_selected("valid-proposal", LONG);
    tui.send("e");
    let args = bin.join("args.txt");
    wait_until("the editor's arguments", LONG, || args.exists());
    assert_eq!(
        std::fs::read_to_string(&args).unwrap(),
        format!(
            "+1\n{}\n",
            ws.join("captures/valid-proposal.json").display()
        )
    );
    wait_resumed(&tui, "valid-proposal");
    tui.wait_text("? help", LONG);
    tui.send("q");
    tui.finish();
}

#[test]
fn e_with_a_failing_or_missing_editor_says_so_and_the_tui_resumes() {
    let (dir, ws) = refund_copy();
    let bin = dir.path().join("bin");
    // an editor the code does not know takes the bare path; it exits 3
    let failing = fake_editor(&bin, "my-edit", false, 3);
    let missing = dir.path().join("no-such-editor");
    for (editor, status) in [
        (
            failing.clone(),
            format!("{} exited with exit status: 3", failing.display()),
        ),
        (
            missing.clone(),
            format!(
                "cannot run {}: No such file or directory",
                missing.display()
            ),
        ),
    ] {
        let mut tui = Tui::start_with(
            &ws,
            (ROWS, COLS),
            &[("EDITOR", Some(editor.to_str().unwrap())), ("VISUAL", None)],
        );
        wait_validated(&tui);
        tui.send("/duplicate-key\r");
        tui.wait_text("Captures 1/25", LONG);
        tui.wait_selected("duplicate-key", LONG);
        tui.send("e");
        tui.wait_text(&status, LONG);
        wait_resumed(&tui, "duplicate-key");
        tui.send("?");
        tui.wait_text("this help", LONG);
        // q closes the help, then quits
        tui.send("q");
        tui.wait_for("the help closed", LONG, |s| !s.contains("this help"));
        tui.send("q");
        tui.finish();
    }
    // the unknown editor got the bare path: no `+LINE`
    assert_eq!(
        std::fs::read_to_string(bin.join("args.txt")).unwrap(),
        format!("{}\n", ws.join("captures/cases.jsonl").display())
    );
}

/// A workspace with a large log (400,000 lines, read once by the first run's pre-pass for
/// its MCP `tools/list` results, batch requests and duplicate-id candidates,
/// `docs/commands.md#the-pre-pass`) draws the workbench's frame at once, the pre-pass's
/// progress in the header while it reads (`reading capture files: 0 of 1`), and `q` quits
/// from there at once (the pre-pass stops), with the terminal restored. A first frame that
/// waited for the pre-pass would show `validating`, never that progress.
#[test]
fn a_large_log_is_read_behind_the_first_frame_and_q_quits() {
    let ws = common::workspace_with(r#"{"type":"object"}"#, &[]);
    let mut log = String::with_capacity(400_000 * 40);
    for i in 0..400_000 {
        log.push_str(&format!("{{\"id\":\"c{i}\",\"output\":\"{{}}\"}}\n"));
    }
    std::fs::write(ws.path().join("captures/big.jsonl"), log).unwrap();
    let mut tui = Tui::start(ws.path());
    tui.wait_text("reading capture files: 0 of 1", Duration::from_secs(20));
    let asked = Instant::now();
    tui.send("q");
    let parser = tui.finish();
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "q took {:?} to quit during the pre-pass",
        asked.elapsed()
    );
    let p = parser.lock().unwrap();
    assert!(
        !p.screen().alternate_screen(),
        "the terminal is still in the alternate screen"
    );
}

/// What the TUI writes to give the terminal back (`docs/commands.md#signals`): mouse
/// reporting off (crossterm's `DisableMouseCapture`: SGR, RXVT, any-motion, button-motion
/// and normal tracking), the main screen, the cursor shown.
const RESTORE: &str = "\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1049l\x1b[?25h";

/// What it writes to take the terminal again on resume: the alternate screen, mouse
/// reporting on (normal, button-motion, any-motion, RXVT, SGR).
const REENTER: &str = "\x1b[?1049h\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1015h\x1b[?1006h";

/// The terminal as the TUI holds it: the alternate screen, any-motion mouse reporting in
/// SGR encoding, the cursor hidden.
fn held(s: &vt100::Screen) -> bool {
    s.alternate_screen()
        && s.mouse_protocol_mode() == vt100::MouseProtocolMode::AnyMotion
        && s.mouse_protocol_encoding() == vt100::MouseProtocolEncoding::Sgr
        && s.hide_cursor()
}

/// The terminal as it was before the TUI: the main screen, no mouse reporting, the cursor
/// shown.
fn given_back(s: &vt100::Screen) -> bool {
    !s.alternate_screen()
        && s.mouse_protocol_mode() == vt100::MouseProtocolMode::None
        && !s.hide_cursor()
}

fn count(haystack: &[u8], needle: &str) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle.as_bytes())
        .count()
}

/// SIGTERM, SIGINT, SIGHUP and SIGQUIT: the TUI writes [`RESTORE`] (once, the last bytes it
/// writes), turns raw mode off, and ends by the signal itself (the parent sees it killed by
/// that signal). Each of them used to end it with the alternate screen, the mouse reporting
/// and a hidden cursor left on.
#[test]
fn an_ending_signal_gives_the_terminal_back_and_ends_the_process_by_it() {
    let (_dir, ws) = refund_copy();
    for (sig, name) in [
        (libc::SIGTERM, "Terminated"),
        (libc::SIGINT, "Interrupt"),
        (libc::SIGHUP, "Hangup"),
        (libc::SIGQUIT, "Quit"),
    ] {
        let mut tui = Tui::start(&ws);
        wait_validated(&tui);
        tui.wait_screen("the terminal held", LONG, held);
        let from = tui.written();
        tui.signal(sig);
        let status = tui.exited(LONG);
        assert_eq!(status.signal(), Some(name), "{name}: {status:?}");
        let out = tui.written_since(from);
        assert!(
            out.ends_with(RESTORE.as_bytes()),
            "{name}: the last bytes written are not the restore sequence: {:?}",
            String::from_utf8_lossy(&out[out.len().saturating_sub(200)..])
        );
        assert_eq!(count(&out, RESTORE), 1, "{name}");
        assert!(tui.with_screen(given_back), "{name}: {}", tui.screen());
    }
}

/// SIGTSTP (Ctrl-Z) gives the terminal back ([`RESTORE`]) and stops the process; SIGCONT
/// (`fg`) takes it again ([`REENTER`]) and redraws the whole screen (entering the
/// alternate screen cleared it), and the TUI goes on taking keys. It used to stay in the
/// alternate screen, mouse reporting on (and, in a session of its own, not even stop).
#[test]
fn a_stop_gives_the_terminal_back_and_a_resume_takes_it_again_and_redraws() {
    let (_dir, ws) = refund_copy();
    let mut tui = Tui::start(&ws);
    wait_validated(&tui);
    tui.wait_screen("the terminal held", LONG, held);
    let from = tui.written();
    tui.signal(libc::SIGTSTP);
    tui.wait_screen("the terminal given back on stop", LONG, given_back);
    wait_until("the process stopped", LONG, || tui.state() == 'T');
    let out = tui.written_since(from);
    assert!(
        out.ends_with(RESTORE.as_bytes()),
        "{:?}",
        String::from_utf8_lossy(&out)
    );
    assert_eq!(count(&out, RESTORE), 1);

    let from = tui.written();
    tui.signal(libc::SIGCONT);
    tui.wait_screen("the terminal held again", LONG, held);
    wait_validated(&tui);
    wait_until("the whole screen redrawn", LONG, || {
        let out = tui.written_since(from);
        out.starts_with(REENTER.as_bytes())
            && count(&out, "Captures 25") >= 1
            && count(&out, "valid-proposal") >= 1
    });
    assert_ne!(tui.state(), 'T');
    tui.send("?");
    tui.wait_text("this help", LONG);
    // q closes the help, then quits
    tui.send("q");
    tui.wait_for("the help closed", LONG, |s| !s.contains("this help"));
    tui.send("q");
    let parser = tui.finish();
    assert!(given_back(parser.lock().unwrap().screen()));
}

/// `q` while a long validation runs (two captures of 1,000,000 schema errors each, many
/// seconds of work in a debug build) quits at once: the engine's workers stop between
/// captures and the process does not wait for the capture being validated. It used to
/// wait for the whole run.
#[test]
fn q_during_a_long_validation_quits_at_once() {
    let items = vec!["1"; 1_000_000].join(",");
    let record = serde_json::json!({"id": "ID", "output": format!("[{items}]")}).to_string();
    let ws = common::workspace_with(
        r#"{"type": "array", "items": {"type": "string"}}"#,
        &[
            ("a.json", &record.replace("ID", "a")),
            ("b.json", &record.replace("ID", "b")),
        ],
    );
    let mut tui = Tui::start(ws.path());
    tui.wait_text("validating 0/2", Duration::from_secs(30));
    let asked = Instant::now();
    tui.send("q");
    let status = tui.exited(Duration::from_secs(30));
    let took = asked.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(2), "q took {took:?} to quit");
    assert!(tui.with_screen(given_back), "{}", tui.screen());
}
