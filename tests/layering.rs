//! The layering rule (README "Development"): `src/core` and `src/engine` know no terminal,
//! so no source file under them names `ratatui` or `crossterm` (a `use`, an `extern crate`
//! or a path written inline). The files are scanned as text: comments and string literals
//! are left out, so a doc comment may still mention either crate.

use std::path::{Path, PathBuf};

/// The crates that draw on or read from the terminal.
const TERMINAL_CRATES: [&str; 2] = ["ratatui", "crossterm"];

/// The folders (below the repository root) that must not use them.
const PURE: [&str; 2] = ["src/core", "src/engine"];

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// One line's code: the line without its `//` comment and with the contents of its string
/// literals blanked. A line-by-line approximation: block comments and strings spanning
/// lines are read as code (reporting too much, never hiding a `use`); raw strings with a
/// `"` inside are not understood.
fn code_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_str = false;
                    out.push('"');
                }
                _ => out.push(' '),
            }
            continue;
        }
        match c {
            // a char literal of a double quote opens no string
            '\'' if chars.peek() == Some(&'"') => {
                chars.next();
                out.push_str("' '");
                if chars.peek() == Some(&'\'') {
                    chars.next();
                }
            }
            '"' => {
                in_str = true;
                out.push('"');
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// Whether `code` names the crate `name` as a whole identifier (not `my_ratatui`).
fn names(code: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(name).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The lines of `text` that use a terminal crate: `file:line: the line`, 1-based.
fn violations(file: &str, text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = code_of(line);
            TERMINAL_CRATES.iter().any(|c| names(&code, c))
        })
        .map(|(i, line)| format!("{file}:{}: {}", i + 1, line.trim()))
        .collect()
}

#[test]
fn core_and_engine_import_neither_ratatui_nor_crossterm() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut scanned = 0;
    let mut found = Vec::new();
    for dir in PURE {
        let files = rust_files(&root.join(dir));
        assert!(!files.is_empty(), "{dir}: no Rust files found");
        for f in files {
            let rel = f
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            found.extend(violations(&rel, &std::fs::read_to_string(&f).unwrap()));
            scanned += 1;
        }
    }
    assert!(scanned >= 20, "only {scanned} files scanned");
    assert!(
        found.is_empty(),
        "src/core and src/engine must not use a terminal crate (ratatui, crossterm); \
         move the code to src/tui or src/cli:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_finds_each_way_of_naming_a_terminal_crate_and_only_those() {
    let text = "\
use std::io;
use ratatui::layout::Rect;
    let k = crossterm::event::read();
extern crate crossterm;
pub use {ratatui as tui_crate, serde};
/// a doc comment may say ratatui::Frame
let s = \"crossterm\"; // nor does a string or a comment: ratatui
let my_ratatui = ratatuix; use crossterm_x;
let c = '\"'; crossterm::terminal::size();
";
    assert_eq!(
        violations("src/core/x.rs", text),
        [
            "src/core/x.rs:2: use ratatui::layout::Rect;",
            "src/core/x.rs:3: let k = crossterm::event::read();",
            "src/core/x.rs:4: extern crate crossterm;",
            "src/core/x.rs:5: pub use {ratatui as tui_crate, serde};",
            "src/core/x.rs:9: let c = '\"'; crossterm::terminal::size();",
        ]
    );
}
