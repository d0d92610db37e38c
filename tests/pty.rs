//! End-to-end tests of the TUI in a real pseudo-terminal (portable-pty + vt100): the binary
//! runs on a temporary copy of a workspace, keys are typed, the screen is read back. Every
//! wait polls the screen with a deadline; nothing relies on a fixed sleep.
mod common;
use common::copy_dir;
use common::refund_copy;

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ROWS: u16 = 40;
const COLS: u16 = 140;

/// Records window-title changes (an OSC 0/2 from model text would land here).
#[derive(Default)]
struct Titles(Vec<Vec<u8>>);

impl vt100::Callbacks for Titles {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0.push(title.to_vec());
    }
}

type Parser = vt100::Parser<Titles>;

struct Tui {
    parser: Arc<Mutex<Parser>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    done: Arc<Mutex<bool>>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Tui {
    fn start(ws: &Path) -> Tui {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_verdict"));
        cmd.arg(ws);
        cmd.env("TERM", "xterm-256color");
        cmd.env("RUST_BACKTRACE", "0");
        cmd.env("XDG_CONFIG_HOME", ws.join("no-config"));
        cmd.env_remove("NO_COLOR");
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            NonZeroU16::new(ROWS).unwrap(),
            NonZeroU16::new(COLS).unwrap(),
            0,
            Titles::default(),
        )));
        let done = Arc::new(Mutex::new(false));
        let (p, d) = (parser.clone(), done.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => p.lock().unwrap().process(&buf[..n]),
                }
            }
            *d.lock().unwrap() = true;
        });
        Tui {
            parser,
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
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
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

#[test]
fn filter_see_the_mismatch_fix_it_on_disk_see_it_flip_help_quit() {
    let (_dir, ws) = refund_copy();
    let mut tui = Tui::start(&ws);
    tui.wait_text("amount-8000-intent-50", LONG);
    tui.wait_text("● live", LONG);
    tui.send("/8000\r");
    tui.wait_text("Captures 3/25", LONG);
    // sorted by severity: amount-9000 (reject), then the 8000 case (recheck)
    tui.send("j");
    tui.wait_for("the 8000 case's detail", LONG, |s| {
        s.contains("┌ amount-8000-intent-5000") && s.contains("INTENT_MISMATCH")
    });
    let s = tui.screen();
    assert!(s.contains("/amount_minor"), "{s}");
    assert!(s.contains("\"amount_minor\": 8000"), "{s}");
    assert!(s.contains("\"amount_minor\": 5000"), "{s}");
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
    let took = tui.wait_for(
        "the flip to ready-for-commit",
        Duration::from_secs(2),
        |s| s.contains("┌ amount-8000-intent-5000") && s.contains("✓ ready-for-commit"),
    );
    eprintln!("save to screen: {took:?}");
    let s = tui.screen();
    assert!(s.contains("↺ 1 flipped"), "{s}");
    assert!(s.contains("last change"), "{s}");

    tui.send("?");
    tui.wait_text("this help", LONG);
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
