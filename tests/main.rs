//! The integration tests, as one test binary: each file beside this one is a module here,
//! so the library and its dependencies are linked once (`autotests = false` and one
//! `[[test]]` in `Cargo.toml`). Run a file's tests with its module path as the filter, for
//! example `cargo test --test main json_schema_suite::` or `cargo test --test main pty::`.
//!
//! The modules share one process and run on parallel threads: a test must not change the
//! process's environment or current folder, and works in its own temporary folder.

// helpers outside #[test] functions unwrap too: a failed setup step fails its test
#![allow(clippy::unwrap_used)]

mod common;

mod bad_input;
mod bench_otlp;
mod bounds;
mod capture_schema;
mod chains;
mod cli;
mod cli_docs;
mod compressed;
mod drift;
mod dup_ids;
mod hostile;
mod hostile_engine;
mod json_schema_suite;
mod layering;
mod lint;
mod mcp;
mod prescan;
mod provider_samples;
mod pty;
mod reasons;
mod repairs;
mod request_index;
mod request_pairs;
mod requests;
mod review;
mod routing;
mod samples;
mod shapes;
mod strictness;
mod terminal;
mod traces;
mod unreadable;
mod walk;
mod watch;
mod watch_faults;
mod watch_walk;
