//! The engine: what turns "these files changed" into updated verdicts, shared by the TUI
//! and `verdict watch --json`, with no terminal types.
//!
//! * [`session`] keeps the current verdict of every capture and re-validates incrementally
//!   (pure, no threads): what `watch --json` runs on.
//! * [`watcher`] is the file watcher thread (notify with a debouncer).
//! * [`worker`] validates on a background thread with coalescing jobs and generations:
//!   what the TUI runs on.

pub mod session;
pub mod watcher;
pub mod worker;

pub use worker::{Engine, EngineEvent, Job};
