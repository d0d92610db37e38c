//! The terminal workbench (DESIGN 8). The ONLY module that imports ratatui and crossterm.
//!
//! Architecture (Elm-like, as in the ratatui event-driven template):
//! - one [`app::App`] holds the state; [`app::App::update`] applies one [`app::Msg`];
//! - input and validation results arrive as messages over one channel: an input thread
//!   forwards crossterm events, the [`crate::engine`] thread validates in batches tagged
//!   with a generation (older generations are dropped);
//! - the loop drains every pending message, then draws once with [`ui::draw`], a pure
//!   function of the state that never does I/O or validation.

pub mod app;
pub mod detail;
pub mod filter;
pub mod keymap;
pub mod theme;
pub mod ui;

use crate::core::workspace::Workspace;
use crate::engine::Engine;
use app::{App, Msg};
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use ratatui::layout::Rect;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Opens the TUI on the workspace at `root` and runs it until the user quits.
///
/// # Errors
/// The workspace cannot be opened (before the terminal is touched), or the terminal fails.
pub fn run(root: &Path) -> anyhow::Result<()> {
    let ws = Arc::new(Workspace::open(root)?);
    let label = root.display().to_string();
    let (tx, rx) = channel::<Msg>();
    let engine_tx = tx.clone();
    let engine = Engine::spawn(root.to_path_buf(), ws.clone(), move |e| {
        engine_tx.send(Msg::Engine(e)).is_ok()
    });

    let mut terminal = ratatui::init();
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    let result = (|| -> anyhow::Result<()> {
        let size = terminal.size()?;
        let mut app = App::new(label, Some(ws), Rect::new(0, 0, size.width, size.height));
        app.theme = theme::Theme::from_env();
        app.request_validation(false);
        // input thread: blocking reads, forwarded as messages; it ends with the process
        std::thread::Builder::new()
            .name("verdict-input".into())
            .spawn(move || {
                while let Ok(ev) = event::read() {
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
        terminal.draw(|f| ui::draw(&app, f))?;
        loop {
            for job in app.requests.drain(..) {
                engine.submit(job);
            }
            if !drain(&rx, &mut app) || app.quit {
                break;
            }
            terminal.draw(|f| ui::draw(&app, f))?;
            // at most ~60 frames a second: let messages pile up, then drain them at once
            std::thread::sleep(Duration::from_millis(8));
        }
        Ok(())
    })();
    let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    drop(engine);
    result
}

/// Waits for one message, then applies every pending one. False when the channel closed.
fn drain(rx: &Receiver<Msg>, app: &mut App) -> bool {
    let Ok(first) = rx.recv() else { return false };
    app.update(first);
    while let Ok(m) = rx.try_recv() {
        app.update(m);
        if app.quit {
            break;
        }
    }
    true
}

#[cfg(test)]
mod tests;
