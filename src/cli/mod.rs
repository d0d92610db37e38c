//! The command layer: argument parsing and the commands, on top of [`crate::core`].

pub mod args;
pub mod chains;
pub mod check;
pub mod completions;
pub mod feedback;
pub mod lint;
pub mod review;
pub mod watch;
