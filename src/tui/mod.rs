//! The terminal workbench (`docs/commands.md#the-terminal-workbench`). The ONLY module that imports ratatui and crossterm.
//!
//! Architecture (Elm-like, as in the ratatui event-driven template):
//! - one [`app::App`] holds the state; [`app::App::update`] applies one [`app::Msg`];
//! - input and validation results arrive as messages over one channel: an input thread
//!   forwards crossterm events, the [`crate::engine`] thread validates in batches tagged
//!   with a generation (older generations are dropped);
//! - the loop drains every pending message, then draws once with [`ui::draw`], a pure
//!   function of the state that never does I/O or validation;
//! - the engine's batches go through an acknowledged queue ([`crate::engine::worker::Acks`]):
//!   the engine sends one only while fewer than
//!   [`TUI_BATCHES_IN_FLIGHT`] are unconsumed, and `drain` acknowledges each it takes, so
//!   a model that lags the engine holds a bounded number of batches in the channel; the
//!   channel itself stays unbounded, so the signal forwarder, the watcher and the input
//!   thread never block.

pub mod allocator;
pub mod app;
pub mod chain;
pub mod config;
pub mod detail;
pub mod diff;
pub mod filter;
pub mod keymap;
pub mod signals;
pub mod store;
pub mod theme;
pub mod ui;

use crate::core::workspace::Workspace;
use crate::engine::Engine;
use crate::engine::watcher::{self, WatchEvent};
use crate::engine::worker::{Acks, TUI_BATCHES_IN_FLIGHT};
use app::{App, Effect, Msg, WatchState};
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use ratatui::DefaultTerminal;
use ratatui::layout::Rect;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// Opens the TUI on the workspace at `root` and runs it until the user quits. The config
/// file (keys and colours) is `config_file`, else the default place (see [`config`]).
///
/// # Errors
/// The config or the workspace cannot be read (both before the terminal is touched), or
/// the terminal fails.
pub fn run(root: &Path, config_file: Option<&Path>) -> anyhow::Result<()> {
    // before any thread starts: freed engine batches go back to the system within 10 ms
    allocator::return_freed_memory_sooner();
    let config = config::Config::load(config_file)?;
    let label = root.display().to_string();
    // from here on, an ending or stopping signal waits for the loop, which restores the
    // terminal first (`docs/commands.md#signals`)
    #[cfg(unix)]
    let mut signals = signals::Signals::new()?;
    let ws = match open_workspace(root, &label, &config, &mut || {
        #[cfg(unix)]
        return signals.pending();
        #[cfg(not(unix))]
        Vec::new()
    })? {
        Opened::Workspace(ws) => Arc::new(*ws),
        // quit while the workspace was opening
        Opened::Quit => return Ok(()),
        Opened::Signal(n) => end_by(n),
    };
    let (tx, rx) = channel::<Msg>();
    #[cfg(unix)]
    {
        let tx = tx.clone();
        signals.forward(move |s| tx.send(Msg::Signal(s)).is_ok())?;
    }
    let engine_tx = tx.clone();
    let engine = Engine::spawn_bounded(
        root.to_path_buf(),
        ws.clone(),
        TUI_BATCHES_IN_FLIGHT,
        move |e| engine_tx.send(Msg::Engine(e)).is_ok(),
    );
    let acks = engine.acks();
    // watch before the first run, so nothing saved meanwhile is missed
    let (wtx, wrx) = channel::<WatchEvent>();
    let watcher = watcher::watch(root, watcher::DEFAULT_DEBOUNCE, wtx);
    let off_reason = watcher
        .as_ref()
        .err()
        .map(|e| crate::core::text::escape_control(&e.to_string()).into_owned());
    let watcher = watcher.ok();
    if watcher.is_some() {
        let tx = tx.clone();
        std::thread::Builder::new()
            .name("verdict-watch".into())
            .spawn(move || {
                for e in wrx {
                    if tx.send(Msg::Watch(e)).is_err() {
                        break;
                    }
                }
            })?;
    }

    let mut terminal = ratatui::init();
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    let gate = Arc::new(InputGate::default());
    let mut ending = None;
    let result = (|| -> anyhow::Result<()> {
        let size = terminal.size()?;
        let mut app = App::new(label, Some(ws), Rect::new(0, 0, size.width, size.height));
        app.settings.theme = theme::Theme::from_env().with_palette(config.palette);
        app.settings.keymap = config.keymap;
        if watcher.is_some() {
            app.watch.state = WatchState::Live;
        }
        app.watch.off_reason = off_reason;
        app.request_validation(false);
        spawn_input(tx, gate.clone())?;
        terminal.draw(|f| ui::draw(&app, f))?;
        let mut signals = Vec::new();
        loop {
            for job in app.out.requests.drain(..) {
                engine.submit(job);
            }
            for effect in std::mem::take(&mut app.out.effects) {
                run_effect(&mut terminal, &gate, &mut app, effect)?;
            }
            let busy = app.busy();
            if !drain(&rx, &mut app, acks.as_ref(), !busy, &mut signals) || app.out.quit {
                break;
            }
            for s in signals.drain(..) {
                match s {
                    signals::Signal::End(n) => ending = Some(n),
                    signals::Signal::Stop => suspend(&mut terminal)?,
                    signals::Signal::Continue => reenter(&mut terminal)?,
                }
            }
            if ending.is_some() {
                break;
            }
            if busy {
                // a long filter goes on between frames
                app.work(app::FILTER_SLICE);
            }
            terminal.draw(|f| ui::draw(&app, f))?;
            if !app.busy() {
                // at most ~60 frames a second: let messages pile up, then drain them at once
                std::thread::sleep(Duration::from_millis(8));
            }
        }
        Ok(())
    })();
    leave_terminal();
    if let Some(n) = ending {
        end_by(n);
    }
    drop(watcher);
    drop(engine);
    result
}

/// Gives the terminal back as it was before the workbench took it: mouse reporting off,
/// the main screen, the cursor shown, raw mode off. What every way out writes (`q`, an
/// ending signal, a stop, an editor). The bytes, for a terminal that supports them:
/// `ESC[?1006l ESC[?1015l ESC[?1003l ESC[?1002l ESC[?1000l` (crossterm's
/// `DisableMouseCapture`), `ESC[?1049l` (leave the alternate screen), `ESC[?25h` (show the
/// cursor).
fn leave_terminal() {
    let _ = crossterm::execute!(
        std::io::stdout(),
        DisableMouseCapture,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = crossterm::terminal::disable_raw_mode();
}

/// Takes the terminal again after [`leave_terminal`] (raw mode, the alternate screen, mouse
/// reporting) and redraws everything on the next draw: entering the alternate screen
/// cleared it.
fn enter_terminal(terminal: &mut DefaultTerminal) -> anyhow::Result<()> {
    crossterm::terminal::enable_raw_mode()?;
    crossterm::execute!(
        std::io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        EnableMouseCapture
    )?;
    // a full clear and redraw without `Terminal::clear`, which asks the terminal for
    // the cursor position (ratatui 0.30) and fails the whole run if no answer comes
    // within 2 s (a slow or non-answering terminal)
    let size = terminal.size()?;
    terminal.resize(Rect::new(0, 0, size.width, size.height))?;
    Ok(())
}

/// SIGTSTP: the terminal restored, the process stops; on SIGCONT it goes on here, takes
/// the terminal again and redraws (the caller draws next).
fn suspend(terminal: &mut DefaultTerminal) -> anyhow::Result<()> {
    leave_terminal();
    #[cfg(unix)]
    signals::stop();
    enter_terminal(terminal)
}

/// SIGCONT without a stop of ours (a `kill -STOP` then `-CONT`, say: the shell may have
/// changed the terminal meanwhile): take it again and redraw everything.
fn reenter(terminal: &mut DefaultTerminal) -> anyhow::Result<()> {
    enter_terminal(terminal)
}

/// Ends the process by the signal `n` (the terminal already restored).
fn end_by(n: i32) -> ! {
    #[cfg(unix)]
    signals::end(n);
    #[cfg(not(unix))]
    std::process::exit(128 + n)
}

/// How long loading the workspace may take before the terminal shows that it is opening.
/// Loading reads `verdict.toml`, compiles the schema files and reads the `[[join]]` files,
/// never a capture file ([`Workspace::load`]: the engine's pre-pass reads those behind the
/// first frame, its progress in the header, `docs/commands.md#the-pre-pass`), so it is
/// quick unless the schemas or joins are large; a workspace that opens faster (or fails
/// to) never touches the terminal, so its errors are printed as `check` prints them.
const OPEN_QUIETLY: Duration = Duration::from_millis(150);

/// How [`open_workspace`] ended.
enum Opened {
    /// The workspace, opened (boxed: the other variants are a word).
    Workspace(Box<Workspace>),
    /// `q`, Esc or Ctrl-C while it was opening.
    Quit,
    /// An ending signal (its number) while it was opening; the terminal is restored.
    Signal(i32),
}

/// Loads the workspace at `root` on another thread. Past [`OPEN_QUIETLY`] the terminal shows
/// the workbench's frame with `opening the workspace…` and keeps answering `q`, Esc and
/// Ctrl-C (which quit), an ending signal (taken from `signals`, each poll), a stop and a
/// resume. The terminal is restored before this returns.
///
/// # Errors
/// The workspace cannot be opened.
fn open_workspace(
    root: &Path,
    label: &str,
    config: &config::Config,
    signals: &mut dyn FnMut() -> Vec<signals::Signal>,
) -> anyhow::Result<Opened> {
    let (tx, rx) = channel();
    let at = root.to_path_buf();
    std::thread::Builder::new()
        .name("verdict-open".into())
        .spawn(move || {
            let _ = tx.send(Workspace::load(&at));
        })?;
    match rx.recv_timeout(OPEN_QUIETLY) {
        Ok(opened) => return Ok(Opened::Workspace(Box::new(opened?))),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            anyhow::bail!("opening the workspace failed")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
    }
    let mut terminal = ratatui::init();
    let started = Instant::now();
    let result = (|| -> anyhow::Result<Opened> {
        let size = terminal.size()?;
        let mut app = App::new(label, None, Rect::new(0, 0, size.width, size.height));
        app.settings.theme = theme::Theme::from_env().with_palette(config.palette);
        loop {
            app.status = Some(format!(
                "opening the workspace: reading its config, schemas and joins ({} s)",
                started.elapsed().as_secs()
            ));
            terminal.draw(|f| ui::draw(&app, f))?;
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(opened) => return Ok(Opened::Workspace(Box::new(opened?))),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    anyhow::bail!("opening the workspace failed")
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            for s in signals() {
                match s {
                    signals::Signal::End(n) => return Ok(Opened::Signal(n)),
                    signals::Signal::Stop => suspend(&mut terminal)?,
                    signals::Signal::Continue => reenter(&mut terminal)?,
                }
            }
            while event::poll(Duration::ZERO)? {
                match event::read()? {
                    Event::Key(k) if quits_while_opening(&k) => return Ok(Opened::Quit),
                    Event::Resize(w, h) => app.update(Msg::Resize(w, h)),
                    _ => {}
                }
            }
        }
    })();
    leave_terminal();
    result
}

/// `q`, Esc or Ctrl-C: what quits while the workspace is opening.
fn quits_while_opening(k: &crossterm::event::KeyEvent) -> bool {
    use crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};
    k.kind == KeyEventKind::Press
        && match k.code {
            KeyCode::Char('q') | KeyCode::Esc => true,
            KeyCode::Char('c') => k.modifiers.contains(KeyModifiers::CONTROL),
            _ => false,
        }
}

/// Lets the event loop stop the input thread from reading while an editor owns the terminal.
#[derive(Default)]
struct InputGate {
    /// Set by the loop: stop reading.
    paused: AtomicBool,
    /// Set by the input thread: not reading.
    parked: AtomicBool,
}

/// The input thread: reads terminal events (polling, so it can be parked) and forwards
/// them as messages; it ends with the process or when the channel closes.
fn spawn_input(tx: std::sync::mpsc::Sender<Msg>, gate: Arc<InputGate>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("verdict-input".into())
        .spawn(move || {
            loop {
                if gate.paused.load(Ordering::SeqCst) {
                    gate.parked.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
                gate.parked.store(false, Ordering::SeqCst);
                match event::poll(Duration::from_millis(50)) {
                    Ok(false) => continue,
                    Ok(true) => {}
                    Err(_) => break,
                }
                let Ok(ev) = event::read() else { break };
                let msg = match ev {
                    Event::Key(k) if k.kind != event::KeyEventKind::Release => Msg::Key(k),
                    Event::Mouse(m) => Msg::Mouse(m),
                    Event::Resize(w, h) => Msg::Resize(w, h),
                    _ => continue,
                };
                if tx.send(msg).is_err() {
                    break;
                }
            }
        })?;
    Ok(())
}

/// Carries out one effect the model asked for.
fn run_effect(
    terminal: &mut DefaultTerminal,
    gate: &InputGate,
    app: &mut App,
    effect: Effect,
) -> anyhow::Result<()> {
    match effect {
        Effect::Copy(text) => {
            let mut out = std::io::stdout();
            out.write_all(osc52(&text).as_bytes())?;
            out.flush()?;
        }
        Effect::Edit { path, line } => {
            let editor = std::env::var("VISUAL")
                .ok()
                .filter(|e| !e.trim().is_empty())
                .or_else(|| std::env::var("EDITOR").ok())
                .filter(|e| !e.trim().is_empty())
                .unwrap_or_else(|| "vi".into());
            let Some((program, args)) = editor_command(&editor, &path, line) else {
                app.note = Some("$EDITOR is empty".into());
                return Ok(());
            };
            // park the input thread so the editor gets every key
            gate.parked.store(false, Ordering::SeqCst);
            gate.paused.store(true, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(1);
            while !gate.parked.load(Ordering::SeqCst) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            leave_terminal();
            signals::EDITING.store(true, Ordering::SeqCst);
            let status = std::process::Command::new(&program).args(&args).status();
            signals::EDITING.store(false, Ordering::SeqCst);
            enter_terminal(terminal)?;
            gate.paused.store(false, Ordering::SeqCst);
            // the editor's failure answers `e` until the next key (a status would stay,
            // and a success cleared whatever status, such as a watcher error, was shown)
            app.note = match status {
                Ok(s) if s.success() => None,
                Ok(s) => Some(format!(
                    "{} exited with {s}",
                    crate::core::text::escape_control(&program)
                )),
                Err(e) => Some(format!(
                    "cannot run {}: {e}",
                    crate::core::text::escape_control(&program)
                )),
            };
            terminal.draw(|f| ui::draw(app, f))?;
        }
    }
    Ok(())
}

/// The OSC 52 sequence that puts `text` on the system clipboard (base64, BEL-terminated).
/// The payload is base64, so nothing in `text` reaches the terminal as a control.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The command that opens `path` at `line` in `editor` (`$VISUAL`/`$EDITOR`, which may
/// carry arguments): `+LINE path` for vi, vim, nvim, nano, hx, kak, emacs and micro-likes
/// that take it, `--goto path:line` for VS Code, the bare path otherwise.
pub fn editor_command(editor: &str, path: &Path, line: usize) -> Option<(String, Vec<String>)> {
    let mut words = editor.split_whitespace().map(str::to_string);
    let program = words.next()?;
    let mut args: Vec<String> = words.collect();
    let name = Path::new(&program)
        .file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let p = path.display().to_string();
    match name {
        "vi" | "vim" | "nvim" | "nano" | "hx" | "helix" | "kak" | "emacs" | "emacsclient"
        | "gvim" | "mvim" => {
            args.push(format!("+{line}"));
            args.push(p);
        }
        "code" | "code-insiders" | "codium" | "cursor" => {
            args.push("--goto".into());
            args.push(format!("{p}:{line}"));
        }
        _ => args.push(p),
    }
    Some((program, args))
}

/// Waits for one message (when `wait`), then applies every pending one; signals go to
/// `signals` for the loop (and end the draining). Each engine batch taken off the channel
/// is acknowledged on `acks` once the model applied it (or dropped it as stale). False
/// when the channel closed.
fn drain(
    rx: &Receiver<Msg>,
    app: &mut App,
    acks: Option<&Acks>,
    wait: bool,
    signals: &mut Vec<signals::Signal>,
) -> bool {
    let mut take = |m: Msg| match m {
        Msg::Signal(s) => {
            signals.push(s);
            false
        }
        m => {
            let batch = matches!(m, Msg::Engine(crate::engine::EngineEvent::Batch { .. }));
            app.update(m);
            if batch && let Some(a) = acks {
                a.applied();
            }
            !app.out.quit
        }
    };
    if wait {
        let Ok(first) = rx.recv() else { return false };
        if !take(first) {
            return true;
        }
    }
    while let Ok(m) = rx.try_recv() {
        if !take(m) {
            break;
        }
    }
    true
}

#[cfg(test)]
mod tests;
