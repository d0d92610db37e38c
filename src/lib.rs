//! # verdict
//!
//! A workbench for LLM structured outputs and agent tool calls: it reads a workspace of
//! captured model outputs and the contracts they must meet (JSON Schemas and CEL business
//! rules) and gives every capture a staged [`core::verdict::Verdict`].
//!
//! Layering (ripgrep-style): [`core`] is pure and synchronous, with no terminal types;
//! [`report`] turns verdicts into text for `verdict check`; [`cli`] is the thin command layer;
//! [`engine`] runs validation: `check`'s batch pipeline, and on a background thread for the
//! TUI and `watch`; [`tui`] is the terminal workbench and
//! the only module that imports ratatui or crossterm. The TUI and `check` share `core`, so
//! they can never disagree.

// A `Finding` is the error value of most core functions on purpose (it is what gets
// reported), so it is not boxed.
#![allow(clippy::result_large_err)]

pub mod cli;
pub mod core;
pub mod engine;
pub mod report;
pub mod tui;
