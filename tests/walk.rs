//! Folder walks skip what ripgrep skips (issue 12 item 9): files matched by `.gitignore` or
//! `.ignore` (outside a git repository too, and from folders above the walked one) and
//! hidden files, in `check` (workspace and `--schema` mode), `lint`, and the live session
//! (`watch --json`'s first pass and later saves), so they agree.

use crate::common;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_verdict");

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run verdict")
}

fn ids(o: &std::process::Output) -> Vec<String> {
    common::jsonl_verdicts(&String::from_utf8_lossy(&o.stdout))
        .iter()
        .map(|v| v["source"].as_str().unwrap().to_string())
        .collect()
}

/// A workspace (not a git repository) with captures that are ignored in every way, and
/// two that are not.
fn workspace() -> tempfile::TempDir {
    let rec = r#"{"id": "ID", "output": "{}"}"#;
    let ws = common::workspace_with(
        r#"{"type": "object"}"#,
        &[
            ("a.json", &rec.replace("ID", "a")),
            ("keep/b.json", &rec.replace("ID", "b")),
            ("skip/c.json", &rec.replace("ID", "c")),
            ("skip/deeper/d.jsonl", &rec.replace("ID", "d")),
            (".hidden/e.json", &rec.replace("ID", "e")),
            (".f.json", &rec.replace("ID", "f")),
            ("by-dot-ignore.json", &rec.replace("ID", "g")),
            ("keep/z.json", &rec.replace("ID", "z")),
        ],
    );
    std::fs::write(
        ws.path().join("captures/.gitignore"),
        "skip/\nkeep/z.json\n",
    )
    .unwrap();
    // a folder above the walked one (`captures`), and `.ignore` beating `.gitignore`
    std::fs::write(
        ws.path().join(".ignore"),
        "captures/by-dot-ignore.json\n!captures/keep/z.json\n",
    )
    .unwrap();
    ws
}

const KEPT: [&str; 3] = [
    "captures/a.json",
    "captures/keep/b.json",
    "captures/keep/z.json",
];

#[test]
fn check_skips_ignored_and_hidden_captures_outside_git() {
    let ws = workspace();
    let o = run(ws.path(), &["check", "--format", "jsonl"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(ids(&o), KEPT);
    // the same files from a folder of the workspace, and from outside it
    let o = run(ws.path(), &["check", "--format", "jsonl", "captures"]);
    assert_eq!(ids(&o), KEPT);
    let o = run(
        ws.path().parent().unwrap(),
        &["check", "--format", "jsonl"]
            .iter()
            .copied()
            .chain([ws.path().to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert_eq!(ids(&o), KEPT);
    // a file named on the command line is checked, ignored or not
    let o = run(
        ws.path(),
        &["check", "--format", "jsonl", "captures/skip/c.json"],
    );
    assert_eq!(ids(&o), ["captures/skip/c.json"]);
}

#[test]
fn watch_agrees_with_check_on_the_first_pass_and_on_saves() {
    let ws = workspace();
    let w = common::watch::WatchJson::start(ws.path(), &["--debounce-ms", "50"]);
    let batch = || {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v: Value = w.lines.recv_timeout(left).expect("a summary line");
            match v["type"].as_str() {
                Some("verdict") => got.push(v["data"]["source"].as_str().unwrap().to_string()),
                Some("summary") => return (got, v["data"]["captures"].clone()),
                _ => {}
            }
        }
    };
    let (first, n) = batch();
    assert_eq!(first, KEPT);
    assert_eq!(n, 3);
    // a save in an ignored folder, a hidden file and a kept one: only the kept one counts
    let rec = r#"{"id": "n", "output": "{}"}"#;
    std::fs::write(ws.path().join("captures/skip/new.json"), rec).unwrap();
    std::fs::write(ws.path().join("captures/.new.json"), rec).unwrap();
    std::fs::write(ws.path().join("captures/keep/new.json"), rec).unwrap();
    let mut seen = Vec::new();
    let mut n = Value::Null;
    // the saves may come in more than one batch: until the kept one is in
    while !seen.contains(&"captures/keep/new.json".to_string()) {
        let (got, count) = batch();
        seen.extend(got);
        n = count;
    }
    assert_eq!(seen, ["captures/keep/new.json"]);
    assert_eq!(n, 4);
    let o = run(ws.path(), &["check", "--format", "jsonl"]);
    assert_eq!(ids(&o).len(), 4);
}

#[test]
fn schema_mode_without_paths_skips_ignored_folders_such_as_target() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("s.json"), r#"{"type": "object"}"#).unwrap();
    std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
    for f in [
        "in/a.json",
        "target/report.json",
        ".cache/x.json",
        "b.jsonl",
    ] {
        std::fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
        std::fs::write(p.join(f), "{}\n").unwrap();
    }
    let o = run(p, &["check", "--schema", "s.json", "--format", "jsonl"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(ids(&o), ["b.jsonl:1", "in/a.json"]);
}

#[test]
fn lint_and_contracts_skip_ignored_schema_files() {
    let ws = common::workspace_with(
        r#"{"type": "object"}"#,
        &[("a.json", r#"{"id": "a", "output": "{}"}"#)],
    );
    let old = ws.path().join("schemas/old");
    std::fs::create_dir_all(&old).unwrap();
    // a broken schema, ignored: neither lint nor check sees it
    std::fs::write(old.join("broken.schema.json"), "{").unwrap();
    std::fs::write(ws.path().join("schemas/.gitignore"), "old/\n").unwrap();
    let o = run(ws.path(), &["lint", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("broken"));
    std::fs::remove_file(ws.path().join("schemas/.gitignore")).unwrap();
    let o = run(ws.path(), &["lint", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("old/broken.schema.json"));
}

#[test]
fn is_ignored_tells_what_the_walk_leaves_out() {
    use verdict::core::workspace::{collect_files, is_ignored};
    let ws = workspace();
    let root = ws.path().join("captures");
    let mut walked = Vec::new();
    collect_files(&root, &|_| true, &mut walked);
    let mut all = Vec::new();
    fn every(d: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                every(&e.path(), out);
            } else {
                out.push(e.path());
            }
        }
    }
    every(&root, &mut all);
    all.sort();
    let kept: Vec<_> = all
        .iter()
        .filter(|p| !is_ignored(&root, p))
        .cloned()
        .collect();
    assert_eq!(kept, walked);
    assert_eq!(walked.len(), 3, "{walked:?}");
}

#[test]
fn check_flags_captures_that_share_an_id_in_every_format() {
    let rec = |id: &str| format!(r#"{{"id": "{id}", "output": "{{}}"}}"#);
    let log = format!("{}\n{}\n{}\n", rec("dup"), rec("solo"), rec("dup"));
    let ws = common::workspace_with(
        r#"{"type": "object"}"#,
        &[
            ("a.json", &rec("dup")),
            ("b.json", &rec("other")),
            ("log.jsonl", &log),
        ],
    );
    let o = run(ws.path(), &["check", "--format", "jsonl"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a warning does not fail the capture"
    );
    let verdicts = common::jsonl_verdicts(&String::from_utf8_lossy(&o.stdout));
    let flagged: Vec<(String, String)> = verdicts
        .iter()
        .filter_map(|v| {
            let w = v["warnings"]
                .as_array()?
                .iter()
                .find(|w| w["code"] == "DUPLICATE_ID")?;
            Some((
                v["source"].as_str()?.to_string(),
                w["message"].as_str()?.to_string(),
            ))
        })
        .collect();
    let msg = |others: &str| {
        format!(
            "id `dup` is also the id of {others}: `verdict feedback dup` is ambiguous (give \
             each capture its own id, or name it by its source)"
        )
    };
    assert_eq!(
        flagged,
        [
            (
                "captures/a.json".to_string(),
                msg("captures/log.jsonl:1, captures/log.jsonl:3")
            ),
            (
                "captures/log.jsonl:1".to_string(),
                msg("captures/a.json, captures/log.jsonl:3")
            ),
            (
                "captures/log.jsonl:3".to_string(),
                msg("captures/a.json, captures/log.jsonl:1")
            ),
        ]
    );
    // the human report shows it with each verdict; json carries the same warnings as jsonl
    let human =
        String::from_utf8_lossy(&run(ws.path(), &["check", "--color", "never"]).stdout).to_string();
    assert_eq!(human.matches("DUPLICATE_ID").count(), 3, "{human}");
    let doc: Value =
        serde_json::from_slice(&run(ws.path(), &["check", "--format", "json"]).stdout).unwrap();
    assert_eq!(doc["verdicts"], Value::Array(verdicts));
    // checking one of the files alone: the others are not in the run
    let o = run(
        ws.path(),
        &["check", "--format", "jsonl", "captures/a.json"],
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("DUPLICATE_ID"));
}

/// A relative path inside a workspace, named from a folder below the workspace's own
/// (`docs/config.md#workspaces`: the nearest folder at or above it): `check responses` and
/// `check .` from `captures/` find the workspace above, as the absolute paths do.
#[test]
fn a_relative_path_from_inside_a_workspace_finds_the_workspace_above() {
    let (_tmp, ws) = common::refund_copy();
    let inside = ws.join("captures");
    let summary = |o: &std::process::Output| {
        let out = String::from_utf8_lossy(&o.stdout);
        out.lines().last().unwrap_or_default().to_string()
    };
    for (args, want) in [
        (vec!["check", "responses"], "3 passed, 0 failed"),
        (vec!["check", "./responses/"], "3 passed, 0 failed"),
        (vec!["check", "."], "25 passed, 0 failed"),
        (vec!["check", "cases.jsonl"], "21 passed, 0 failed"),
    ] {
        let o = common::verdict_in(&inside, &args);
        assert_eq!(
            summary(&o),
            want,
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let abs = inside.join(args[1]);
        let o = common::verdict_in(&inside, &["check", abs.to_str().unwrap()]);
        assert_eq!(summary(&o), want, "{args:?} as {}", abs.display());
    }
    // piped, `verdict PATH` prints check's report for the same workspace
    let o = common::verdict_in(&inside, &["responses"]);
    assert_eq!(summary(&o), "3 passed, 0 failed");
}

/// A file named from a folder below the workspace's is named from the workspace
/// (`docs/capture-record.md`: sources are relative to the workspace), so its records keep
/// the sources and default ids (`FILE:LINE`) they have when it is named from the root: an
/// `expect` or a join keyed by such an id still meets its capture.
#[test]
fn a_file_named_from_a_subfolder_keeps_its_workspace_relative_sources() {
    let (_tmp, ws) = common::refund_copy();
    let sources = |dir: &std::path::Path, file: &str| -> Vec<String> {
        let o = common::verdict_in(dir, &["check", "--format", "jsonl", file]);
        common::jsonl_verdicts(&String::from_utf8_lossy(&o.stdout))
            .iter()
            .map(|v| format!("{} {}", v["id"], v["source"]))
            .collect()
    };
    // (the file from the root, its first source, the same file from subfolders)
    for (from_root_as, first, elsewhere) in [
        (
            "captures/cases.jsonl",
            "captures/cases.jsonl:1",
            [
                ("captures", "cases.jsonl"),
                ("captures/responses", "../cases.jsonl"),
            ],
        ),
        (
            "captures/responses/refusal.json",
            "captures/responses/refusal.json",
            [
                ("captures/responses", "refusal.json"),
                ("captures", "responses/refusal.json"),
            ],
        ),
    ] {
        let from_root = sources(&ws, from_root_as);
        assert!(
            from_root[0].ends_with(&format!(" \"{first}\"")),
            "{}",
            from_root[0]
        );
        for (dir, name) in elsewhere {
            assert_eq!(sources(&ws.join(dir), name), from_root, "{name} from {dir}");
        }
    }
    assert_eq!(sources(&ws, "captures/cases.jsonl").len(), 21);
}
