//! The engine: what turns "these files changed" into updated verdicts, shared by the TUI
//! and `verdict watch --json`. [`session`] keeps the current verdict of every capture and
//! re-validates incrementally (pure, no threads); [`watcher`] is the file watcher thread.

pub mod session;
pub mod watcher;
