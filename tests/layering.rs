//! The layering rule (README "Development"): `src/core` and `src/engine` know no terminal,
//! so no source file under them names `ratatui` or `crossterm` (a `use`, an `extern crate`
//! or a path written inline), and `src/core` watches no files either (no `notify`). The
//! files are scanned as text: comments and string literals are left out, so a doc comment
//! may still mention a crate.

use std::path::{Path, PathBuf};

/// The crates that draw on or read from the terminal.
const TERMINAL_CRATES: &[&str] = &["ratatui", "crossterm"];

/// The folders (below the repository root) and the crates they must not use: the terminal's,
/// and in `src/core` the file watcher's too.
const BANNED: [(&str, &[&str]); 2] = [
    (
        "src/core",
        &["ratatui", "crossterm", "notify", "notify_debouncer_full"],
    ),
    ("src/engine", TERMINAL_CRATES),
];

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

/// The lines of `text` that use one of the `banned` crates: `file:line: the line`, 1-based.
fn violations(file: &str, text: &str, banned: &[&str]) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = code_of(line);
            banned.iter().any(|c| names(&code, c))
        })
        .map(|(i, line)| format!("{file}:{}: {}", i + 1, line.trim()))
        .collect()
}

#[test]
fn core_and_engine_import_neither_ratatui_nor_crossterm_and_core_no_notify() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut scanned = 0;
    let mut found = Vec::new();
    for (dir, banned) in BANNED {
        let files = rust_files(&root.join(dir));
        assert!(!files.is_empty(), "{dir}: no Rust files found");
        for f in files {
            let rel = f
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&f).unwrap();
            found.extend(violations(&rel, &text, banned));
            scanned += 1;
        }
    }
    assert!(scanned >= 20, "only {scanned} files scanned");
    assert!(
        found.is_empty(),
        "src/core and src/engine must not use a terminal crate (ratatui, crossterm), nor \
         src/core the file watcher (notify); move the code to src/tui, src/engine or src/cli:\n{}",
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
        violations("src/core/x.rs", text, TERMINAL_CRATES),
        [
            "src/core/x.rs:2: use ratatui::layout::Rect;",
            "src/core/x.rs:3: let k = crossterm::event::read();",
            "src/core/x.rs:4: extern crate crossterm;",
            "src/core/x.rs:5: pub use {ratatui as tui_crate, serde};",
            "src/core/x.rs:9: let c = '\"'; crossterm::terminal::size();",
        ]
    );
}

#[test]
fn core_may_not_use_the_file_watcher_and_engine_may() {
    let text = "use notify_debouncer_full::new_debouncer;\nlet n = notify::recommended_watcher;\n";
    let core = BANNED.iter().find(|(d, _)| *d == "src/core").unwrap().1;
    let engine = BANNED.iter().find(|(d, _)| *d == "src/engine").unwrap().1;
    assert_eq!(violations("f.rs", text, core).len(), 2);
    assert!(violations("f.rs", text, engine).is_empty());
}
