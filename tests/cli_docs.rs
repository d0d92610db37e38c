//! The binary's auxiliary commands and flags: `verdict completions SHELL` and `verdict man`
//! (generated from the clap definitions), and `review --color`.

use serde_json::json;

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_verdict");
use crate::common::{verdict, verdict_in};

/// The commands every completion script and the man page must name.
const COMMANDS: [&str; 8] = [
    "check",
    "chains",
    "feedback",
    "watch",
    "lint",
    "review",
    "completions",
    "man",
];

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

/// Runs `verdict ARGS`, which must fail as an error does (exit 2, nothing on stdout), and
/// gives its stderr.
fn fails_with(args: &[&str]) -> String {
    let o = verdict(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
    assert!(o.stdout.is_empty(), "{args:?}: {o:?}");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn completions_for_every_shell_name_the_commands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = verdict(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {o:?}");
        assert!(o.stderr.is_empty(), "{shell}: {o:?}");
        let text = stdout(&o);
        for c in COMMANDS {
            assert!(text.contains(c), "{shell} completions lack `{c}`:\n{text}");
        }
        // flags of a command are completed too
        assert!(text.contains("format-assertion"), "{shell}:\n{text}");
    }
    let bash = stdout(&verdict(&["completions", "bash"]));
    assert!(bash.contains("complete -F _verdict"), "{bash}");
    let zsh = stdout(&verdict(&["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef verdict\n"), "{zsh}");
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let err = fails_with(&["completions", "tcsh"]);
    assert!(
        err.contains("invalid value 'tcsh'") && err.contains("bash, elvish, fish, powershell, zsh"),
        "{err}"
    );
}

/// docs/commands.md#exit-codes: a command-line usage error is clap's (`error: ...`, the
/// possible values or a usage line), every other error `verdict: MESSAGE`; both exit 2.
#[test]
fn usage_errors_are_claps_and_other_errors_verdicts() {
    assert_eq!(
        fails_with(&["check", "--format", "yaml", "samples/refund"]),
        "error: invalid value 'yaml' for '--format <FORMAT>'\n  \
         [possible values: human, json, jsonl, junit, sarif, github]\n\n\
         For more information, try '--help'.\n"
    );
    assert_eq!(
        fails_with(&["feedback"]),
        "error: the following required arguments were not provided:\n  <ID>\n\n\
         Usage: verdict feedback <ID> [WORKSPACE]\n\n\
         For more information, try '--help'.\n"
    );
    assert_eq!(
        fails_with(&["check", "no-such-folder"]),
        "verdict: no-such-folder: no such file or folder\n"
    );
}

#[test]
fn the_man_page_is_roff_naming_the_commands() {
    let o = verdict(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let page = stdout(&o);
    assert!(page.starts_with(".ie \\n(.g .ds Aq \\(aq"), "{page}");
    assert!(page.contains("\n.TH verdict 1 "), "{page}");
    assert!(page.contains("\n.SH SUBCOMMANDS\n"), "{page}");
    for c in COMMANDS {
        assert!(
            page.contains(&format!("verdict\\-{c}(1)")),
            "man lacks `{c}`:\n{page}"
        );
    }
    let check = stdout(&verdict(&["man", "check"]));
    assert!(check.contains("\n.TH verdict-check 1 "), "{check}");
    assert!(check.contains("\\-\\-format\\-assertion"), "{check}");
}

#[test]
fn man_of_an_unknown_command_exits_2() {
    assert_eq!(
        fails_with(&["man", "chek"]),
        "verdict: `chek` is not a command; did you mean `verdict man check`? (commands: check, feedback, watch, lint, review, chains, completions, man)\n"
    );
    // the name given is shown escaped, and nothing close is not guessed at
    assert_eq!(
        fails_with(&["man", "x\u{1b}[2J"]),
        "verdict: `x\\u{1b}[2J` is not a command (commands: check, feedback, watch, lint, review, chains, completions, man)\n"
    );
}

/// A workspace whose schema now requires `amount >= 100`, with the old schemas (`>= 1`)
/// in `old/`: `small` (50) is now failing, `big` (500) stays ready.
fn tightened() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for d in ["schemas", "old", "captures"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    let schema = |min: u32| {
        json!({"type": "object",
               "properties": {"amount": {"type": "integer", "minimum": min}},
               "required": ["amount"]})
        .to_string()
    };
    std::fs::write(p.join("schemas/pay.schema.json"), schema(100)).unwrap();
    std::fs::write(p.join("old/pay.schema.json"), schema(1)).unwrap();
    let lines = [
        json!({"id": "small", "output": r#"{"amount":50}"#}).to_string(),
        json!({"id": "big", "output": r#"{"amount":500}"#}).to_string(),
    ];
    std::fs::write(p.join("captures/log.jsonl"), lines.join("\n") + "\n").unwrap();
    dir
}

#[test]
fn review_color_never_has_no_escape_bytes() {
    let ws = tightened();
    let o = verdict_in(
        ws.path(),
        &["review", "--old-schemas", "old", "--color", "never"],
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let text = stdout(&o);
    assert!(!text.contains('\x1b'), "{text:?}");
    assert_eq!(
        text,
        "schema changes:\n  \
         pay bound_tightened /properties/amount/minimum: minimum 1 -> 100\n\
         now failing (1):\n  \
         ✗ small  ready -> schema/SCHEMA_MISMATCH  captures/log.jsonl:1\n      \
         /amount: 50 is less than the minimum of 100\n\
         1 now failing, 0 no longer meets expect, 0 now passing, 0 now meets expect, 0 changed of 2 captures (base old)\n"
    );
}

#[test]
fn review_color_always_colours_titles_glyphs_and_outcomes() {
    let ws = tightened();
    let o = verdict_in(
        ws.path(),
        &["review", "--old-schemas", "old", "--color", "always"],
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let text = stdout(&o);
    assert!(
        text.contains("\x1b[1;31mnow failing\x1b[0m \x1b[2m(1)\x1b[0m:\n"),
        "{text:?}"
    );
    assert!(
        text.contains("  \x1b[31m✗\x1b[0m small  \x1b[32mready\x1b[0m -> \x1b[31mschema/SCHEMA_MISMATCH\x1b[0m  \x1b[2mcaptures/log.jsonl:1\x1b[0m\n"),
        "{text:?}"
    );
    // `always` colours even with `NO_COLOR` set, as in `check`
    let o = Command::new(BIN)
        .args(["review", "--old-schemas", "old", "--color", "always"])
        .current_dir(ws.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), text);
    // `auto` with stdout a pipe: no colour
    let auto = verdict_in(ws.path(), &["review", "--old-schemas", "old"]);
    assert!(!auto.stdout.contains(&0x1b), "{auto:?}");
}
