//! The engine: what turns "these files changed" into updated verdicts, shared by the TUI
//! and `verdict watch --json`, with no terminal types.
//!
//! * [`batch`] is `verdict check`'s pipeline: files and logs read in blocks, validated in
//!   parallel batches, delivered in order to a report (what `check` runs on).
//! * [`chains`] is a live session's chain set (the workbench's and `watch`'s), from the
//!   same core as `check`'s chain report.
//! * [`ids`] finds the captures that share an id (the `DUPLICATE_ID` warning), for
//!   `check` and the session alike.
//! * [`prescan`] is the pre-pass every front end starts with: one read of each capture
//!   file for the MCP facts, batch requests and duplicate-id candidates.
//! * [`session`] keeps compact state for every capture and re-validates incrementally
//!   (pure, no threads): what `watch --json` runs on.
//! * [`summary`] is the compact per-capture summary a front end keeps, where each record
//!   lives on disk, and re-reading one record for its full evaluation.
//! * [`watcher`] is the file watcher thread (notify with a debouncer).
//! * [`worker`] validates on a background thread with coalescing jobs and generations:
//!   what the TUI runs on.

pub mod batch;
pub mod chains;
pub mod ids;
pub mod prescan;
pub mod session;
pub mod summary;
pub mod watcher;
pub mod worker;

pub use worker::{Engine, EngineEvent, Job};
