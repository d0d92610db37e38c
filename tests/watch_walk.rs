//! A live session (`watch --json`, the workbench) when what the workspace's walk lists
//! changes without a capture file being saved: `verdict.toml` narrowing `captures` or
//! dropping a `[[source]]`, the `[[join]]` folder deleted, an ignore file written or
//! removed, a symlinked folder made. After each change the session holds exactly the
//! captures a fresh `check` lists, with its counts, and says which went (`Change::Removed`).
//! The batches are those the file watcher may hand over (often only the folder, for a
//! folder deleted with its files).

use crate::common;
use common::refund_copy;
use serde_json::Value;
use std::path::{Path, PathBuf};
use verdict::engine::session::{Change, Session};

/// `check --format json`'s summary of the workspace at `root`.
fn check_summary(root: &Path) -> Value {
    let out = common::verdict_in(root, &["check", ".", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    report["summary"].clone()
}

/// The session's summary beside check's, field by field (`check` may say more: its
/// timing), and the same count of captures.
fn assert_agrees_with_check(session: &Session, root: &Path) {
    let ours = serde_json::to_value(session.summary()).unwrap();
    let theirs = check_summary(root);
    for (k, v) in ours.as_object().unwrap() {
        assert_eq!(
            &theirs[k], v,
            "summary field {k}: check {theirs}, session {ours}"
        );
    }
    assert_eq!(theirs["captures"], session.len());
}

/// The sources of the removed captures, sorted; and the sources of the updated ones.
fn split(changes: &[Change]) -> (Vec<String>, Vec<String>) {
    let mut removed = Vec::new();
    let mut updated = Vec::new();
    for c in changes {
        match c {
            Change::Removed { source, .. } => removed.push(source.as_str().to_string()),
            Change::Updated { evaluation, .. } => {
                updated.push(evaluation.verdict.source.as_str().to_string())
            }
        }
    }
    removed.sort();
    updated.sort();
    (removed, updated)
}

/// The 21 sources of the refund sample's `captures/cases.jsonl`.
fn cases() -> Vec<String> {
    let mut v: Vec<String> = (1..=21)
        .map(|l| format!("captures/cases.jsonl:{l}"))
        .collect();
    v.sort();
    v
}

fn append(path: &Path, text: &str) {
    let mut t = std::fs::read_to_string(path).unwrap();
    t.push_str(text);
    std::fs::write(path, t).unwrap();
}

#[test]
fn a_narrower_captures_in_verdict_toml_removes_the_captures_it_leaves_out() {
    let (_tmp, ws) = refund_copy();
    let (mut session, first) = Session::open(&ws).unwrap();
    assert_eq!(first.len(), 25);
    let toml = ws.join("verdict.toml");
    append(&toml, "captures = [\"captures/responses\"]\n");
    let changes = session.apply(std::slice::from_ref(&toml)).unwrap();
    let (removed, updated) = split(&changes);
    let mut want = cases();
    want.push("captures/valid-proposal.json".into());
    want.sort();
    assert_eq!(removed, want, "{changes:#?}");
    assert!(updated.is_empty(), "{updated:?}");
    assert_eq!(session.len(), 3);
    assert_agrees_with_check(&session, &ws);
}

#[test]
fn a_source_removed_from_verdict_toml_removes_its_captures() {
    let (_tmp, ws) = refund_copy();
    let toml = ws.join("verdict.toml");
    let plain = std::fs::read_to_string(&toml).unwrap();
    append(
        &toml,
        "[[source]]\npath = \"captures/*.log\"\nformat = \"ollama\"\n",
    );
    std::fs::write(
        ws.join("captures/a.log"),
        "{\"model\":\"x\",\"message\":{\"role\":\"assistant\",\"content\":\"{}\"},\"done\":true}\n",
    )
    .unwrap();
    let (mut session, first) = Session::open(&ws).unwrap();
    assert_eq!(first.len(), 26);
    std::fs::write(&toml, plain).unwrap();
    let changes = session.apply(std::slice::from_ref(&toml)).unwrap();
    let (removed, updated) = split(&changes);
    assert_eq!(removed, ["captures/a.log:1"], "{changes:#?}");
    assert!(updated.is_empty(), "{updated:?}");
    assert_eq!(session.len(), 25);
    assert_agrees_with_check(&session, &ws);
}

/// A logs sample copy and its session.
fn logs_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("logs");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/logs"),
        &ws,
    );
    (tmp, ws)
}

#[test]
fn deleting_the_join_folder_drops_the_joined_expectations_as_check_does() {
    let (_tmp, ws) = logs_copy();
    let (mut session, _) = Session::open(&ws).unwrap();
    let before = serde_json::to_value(session.summary()).unwrap();
    assert_eq!(
        (&before["passed"], &before["failed"]),
        (&36.into(), &0.into())
    );
    std::fs::remove_dir_all(ws.join("joins")).unwrap();
    // the watcher names the folder alone
    let changes = session.apply(&[ws.join("joins")]).unwrap();
    let (removed, updated) = split(&changes);
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(updated.len(), 36, "every capture loses its `expect`");
    let after = serde_json::to_value(session.summary()).unwrap();
    assert_eq!(
        (&after["passed"], &after["failed"]),
        (&13.into(), &23.into())
    );
    assert_agrees_with_check(&session, &ws);
    // and made again, with its file inside, named by the folder alone
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/logs/joins"),
        &ws.join("joins"),
    );
    session.apply(&[ws.join("joins")]).unwrap();
    assert_eq!(serde_json::to_value(session.summary()).unwrap(), before);
    assert_agrees_with_check(&session, &ws);
}

#[test]
fn an_ignore_file_written_or_removed_hides_or_shows_its_captures() {
    let (_tmp, ws) = refund_copy();
    let (mut session, _) = Session::open(&ws).unwrap();
    let ignore = ws.join("captures/.gitignore");
    std::fs::write(&ignore, "cases.jsonl\n").unwrap();
    let changes = session.apply(std::slice::from_ref(&ignore)).unwrap();
    let (removed, updated) = split(&changes);
    assert_eq!(removed, cases(), "{changes:#?}");
    assert!(updated.is_empty(), "{updated:?}");
    assert_eq!(session.len(), 4);
    assert_agrees_with_check(&session, &ws);
    std::fs::remove_file(&ignore).unwrap();
    let changes = session.apply(std::slice::from_ref(&ignore)).unwrap();
    let (removed, updated) = split(&changes);
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(updated, cases(), "{changes:#?}");
    assert_eq!(session.len(), 25);
    assert_agrees_with_check(&session, &ws);
    // a `.ignore` above the captures folder, hiding a folder of it
    let ignore = ws.join(".ignore");
    std::fs::write(&ignore, "responses/\n").unwrap();
    let changes = session.apply(std::slice::from_ref(&ignore)).unwrap();
    let (removed, _) = split(&changes);
    assert_eq!(
        removed,
        [
            "captures/responses/content-filtered.json",
            "captures/responses/rate-limited.json",
            "captures/responses/refusal.json"
        ]
    );
    assert_agrees_with_check(&session, &ws);
}

#[cfg(unix)]
#[test]
fn a_symlinked_folder_is_not_walked_as_check_does_not_walk_it() {
    let (_tmp, ws) = refund_copy();
    let (mut session, _) = Session::open(&ws).unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::copy(
        ws.join("captures/valid-proposal.json"),
        ws.join("sub/x.json"),
    )
    .unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(
        ws.join("captures/valid-proposal.json"),
        outside.path().join("y.json"),
    )
    .unwrap();
    let inside = ws.join("captures/insidelink");
    let out = ws.join("captures/outlink");
    std::os::unix::fs::symlink("../sub", &inside).unwrap();
    std::os::unix::fs::symlink(outside.path(), &out).unwrap();
    // the links, then what the platform watcher reports from inside them
    for batch in [
        vec![inside.clone(), out.clone()],
        vec![inside.join("x.json"), out.join("y.json")],
    ] {
        let changes = session.apply(&batch).unwrap();
        assert!(changes.is_empty(), "{changes:#?}");
        assert_eq!(session.len(), 25);
    }
    std::fs::write(out.join("late.json"), "{\"id\":\"late\",\"output\":\"{}\"}").unwrap();
    let changes = session.apply(&[out.join("late.json")]).unwrap();
    assert!(changes.is_empty(), "{changes:#?}");
    assert_agrees_with_check(&session, &ws);
}

#[cfg(unix)]
#[test]
fn a_folder_replaced_by_a_symlink_loses_its_captures() {
    let (_tmp, ws) = refund_copy();
    let (mut session, _) = Session::open(&ws).unwrap();
    let responses = ws.join("captures/responses");
    std::fs::rename(&responses, ws.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", &responses).unwrap();
    let changes = session.apply(std::slice::from_ref(&responses)).unwrap();
    let (removed, updated) = split(&changes);
    assert_eq!(
        removed,
        [
            "captures/responses/content-filtered.json",
            "captures/responses/rate-limited.json",
            "captures/responses/refusal.json"
        ],
        "{changes:#?}"
    );
    assert!(updated.is_empty(), "{updated:?}");
    assert_agrees_with_check(&session, &ws);
}

/// A `.gitignore` in the folder above the workspace, written then deleted while `watch
/// --json` runs: the walk reads it (`docs/commands.md#check`), so the watch drops the
/// captures it names (a `removed` line each) and brings them back, as a fresh `check` lists
/// them. The folders above were not watched: the captures stayed.
#[test]
fn a_gitignore_above_the_workspace_is_followed_as_check_reads_it() {
    let (tmp, ws) = refund_copy();
    let w = common::watch::WatchJson::start(&ws, &["--debounce-ms", "50"]);
    let within = std::time::Duration::from_secs(60);
    let first = w.batch("the first pass", within);
    assert_eq!(first.last().unwrap()["data"]["captures"], 25);
    // the lines (their type and source) until a summary counts `captures`, and that summary
    let until = |captures: u64, what: &str| {
        let mut got = Vec::new();
        loop {
            let mut batch = w.batch(what, within);
            let summary = batch.pop().unwrap()["data"].clone();
            got.extend(batch.into_iter().map(|l| {
                let source = l["data"]["source"].as_str().unwrap().to_string();
                (l["type"].as_str().unwrap().to_string(), source)
            }));
            if summary["captures"] == captures {
                return (got, summary);
            }
        }
    };
    let lines = |kind: &str| -> Vec<(String, String)> {
        (1..=21)
            .map(|l| (kind.to_string(), format!("captures/cases.jsonl:{l}")))
            .collect()
    };
    let ignore = tmp.path().join(".gitignore");
    std::fs::write(&ignore, "cases.jsonl\n").unwrap();
    let (got, summary) = until(4, "the .gitignore above written");
    assert_eq!(got, lines("removed"));
    assert_same_summary(&summary, &ws);
    std::fs::remove_file(&ignore).unwrap();
    let (got, summary) = until(25, "the .gitignore above deleted");
    assert_eq!(got, lines("verdict"));
    assert_same_summary(&summary, &ws);
}

/// A watch's summary line (its `data`) beside `check`'s, field by field (`check` may say
/// more: its timing).
fn assert_same_summary(ours: &Value, root: &Path) {
    let theirs = check_summary(root);
    for (k, v) in ours.as_object().unwrap() {
        assert_eq!(
            &theirs[k], v,
            "summary field {k}: check {theirs}, watch {ours}"
        );
    }
}
