//! Folders and files that cannot be read are never skipped silently
//! (`docs/commands.md#unreadable-files-and-folders`): a capture folder below the captures
//! folder is an `INVALID_CAPTURE` row naming it and the OS error; a schemas folder below
//! `schemas/` is a lint error; the workspace's own `schemas/` and `captures/` stop the run
//! (exit 2).
//!
//! Mode 000 stops no one running as root: run as root, the mode-000 tests run the binary as
//! `nobody` (uid 65534, [`as_user`]), so they prove the same thing either way. A folder nested
//! deeper than the system's path limit (`ENAMETOOLONG`) cannot be listed by anyone, root
//! included.

use crate::common;
use common::run::{run, run_with};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn record(id: &str) -> String {
    json!({"id": id, "output": "{}"}).to_string()
}

fn schema() -> String {
    json!({"type": "object"}).to_string()
}

/// `verdict ARGS` in the workspace `ws` as [`as_user`]: the run a mode-000 folder stops.
fn run_locked(args: &[&str], ws: &Path) -> common::run::Run {
    run_with(args, ws, DEADLINE, |cmd| as_user(cmd, ws))
}

/// Sets `dir`'s mode; restores 0o755 when dropped (so the temporary folder can go).
struct Mode(std::path::PathBuf);

impl Mode {
    fn set(dir: std::path::PathBuf, mode: u32) -> Mode {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        Mode(dir)
    }
}

impl Mode {
    /// Takes over the restoring of `old` (a folder since moved here): `old` no longer
    /// restores its path.
    fn keep(self, old: Mode) -> Mode {
        std::mem::forget(old);
        self
    }
}

impl Drop for Mode {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

/// The verdicts of `check --format jsonl .` in `dir` (as [`as_user`]), and its exit code.
fn check(dir: &Path) -> (Option<i32>, Vec<Value>, String) {
    let r = run_locked(&["check", "--format", "jsonl", "."], dir);
    (r.code, common::jsonl_verdicts(&r.stdout), r.stderr)
}

#[test]
fn a_locked_capture_folder_is_a_row_naming_it() {
    let ws = common::workspace_with(
        &schema(),
        &[
            ("ok.json", &record("ok")),
            ("locked/hidden.json", &record("hidden")),
        ],
    );
    let _mode = Mode::set(ws.path().join("captures/locked"), 0o000);
    let (code, verdicts, stderr) = check(ws.path());
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    let row = &verdicts[0];
    assert_eq!(row["source"], "captures/locked", "{row}");
    assert_eq!(row["reason"], "INVALID_CAPTURE", "{row}");
    assert_eq!(
        row["errors"][0]["message"],
        "cannot read captures/locked: Permission denied (os error 13)"
    );
    assert_eq!(verdicts[1]["id"], "ok");
}

#[test]
fn a_locked_schemas_or_captures_folder_stops_the_run() {
    for folder in ["schemas", "captures"] {
        let ws = common::workspace_with(&schema(), &[("ok.json", &record("ok"))]);
        let _mode = Mode::set(ws.path().join(folder), 0o000);
        let want = format!(
            "verdict: cannot open workspace: cannot read ./{folder}: Permission denied (os error 13)\n"
        );
        let r = run_locked(&["check", "."], ws.path());
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (Some(2), want.as_str()),
            "check, {folder}"
        );
        if folder == "schemas" {
            let r = run_locked(&["lint", "."], ws.path());
            assert_eq!(
                (r.code, r.stderr.as_str()),
                (
                    Some(2),
                    "verdict: cannot read ./schemas: Permission denied (os error 13)\n"
                ),
                "lint"
            );
        }
    }
}

/// Creates folders named `d` x 250 nested `depth` deep below `dir`, with a file `name`
/// holding `text` at the bottom: each step relative to the last (`mkdirat`, `openat`), as no
/// single path may be that long.
fn nest(dir: &Path, depth: usize, name: &str, text: &str) {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let step = CString::new("d".repeat(250)).unwrap();
    let dir = CString::new(dir.as_os_str().as_bytes()).unwrap();
    let name = CString::new(name).unwrap();
    // SAFETY: plain system calls on NUL-terminated strings and descriptors opened here
    unsafe {
        let mut fd = libc::open(dir.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
        assert!(fd >= 0);
        for _ in 0..depth {
            assert_eq!(libc::mkdirat(fd, step.as_ptr(), 0o755), 0);
            let next = libc::openat(fd, step.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
            assert!(next >= 0);
            libc::close(fd);
            fd = next;
        }
        let f = libc::openat(fd, name.as_ptr(), libc::O_WRONLY | libc::O_CREAT, 0o644);
        assert!(f >= 0);
        let n = libc::write(f, text.as_ptr().cast(), text.len());
        assert_eq!(n, text.len() as isize);
        libc::close(f);
        libc::close(fd);
    }
}

/// The first folder of [`nest`]'s chain below `rel` (as the walk spells it from the
/// workspace, `./rel/d…/d…`) whose path the system refuses: 4096 bytes or more (Linux's
/// `PATH_MAX`, the terminating NUL included); workspace-relative, without the `./`.
fn first_too_long(rel: &str) -> String {
    let step = "d".repeat(250);
    let mut path = format!("./{rel}");
    loop {
        path.push('/');
        path.push_str(&step);
        if path.len() >= 4096 {
            return path.trim_start_matches("./").to_string();
        }
    }
}

#[test]
fn a_capture_folder_past_the_path_limit_is_a_row_naming_it_for_root_too() {
    let ws = common::workspace_with(&schema(), &[("ok.json", &record("ok"))]);
    nest(
        &ws.path().join("captures"),
        18,
        "deep.json",
        &record("deep"),
    );
    let (code, verdicts, stderr) = check(ws.path());
    assert_eq!(code, Some(1), "{stderr}");
    let too_long = first_too_long("captures");
    let rows: Vec<(String, String, String)> = verdicts
        .iter()
        .map(|v| {
            (
                v["source"].as_str().unwrap().to_string(),
                v["reason"].as_str().unwrap_or("").to_string(),
                v["errors"][0]["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                too_long.clone(),
                "INVALID_CAPTURE".to_string(),
                format!("cannot read {too_long}: File name too long (os error 36)")
            ),
            ("captures/ok.json".into(), String::new(), String::new()),
        ]
    );
    // the live session (watch --json, the workbench) has the same row
    let (_, first) = verdict::engine::session::Session::open(ws.path()).unwrap();
    let mut live: Vec<(String, String)> = first
        .iter()
        .filter_map(|c| match c {
            verdict::engine::session::Change::Updated { evaluation, .. } => Some((
                evaluation.verdict.source.to_string(),
                evaluation
                    .verdict
                    .reason
                    .as_ref()
                    .map_or(String::new(), |r| r.to_string()),
            )),
            _ => None,
        })
        .collect();
    live.sort();
    assert_eq!(
        live,
        [
            (too_long, "INVALID_CAPTURE".to_string()),
            ("captures/ok.json".into(), String::new()),
        ]
    );
}

#[test]
fn a_schemas_folder_past_the_path_limit_is_a_lint_error_for_root_too() {
    let ws = common::workspace_with(&schema(), &[("ok.json", &record("ok"))]);
    nest(
        &ws.path().join("schemas"),
        18,
        "deep.schema.json",
        &schema(),
    );
    let r = run(&["lint", "--format", "json", "."], ws.path(), DEADLINE);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let too_long = first_too_long("schemas");
    let findings: Vec<(String, String, String)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["file"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        findings,
        [(
            "SCHEMA_UNREADABLE".to_string(),
            too_long,
            "cannot read this folder: File name too long (os error 36)".to_string()
        )]
    );
    assert_eq!(doc["summary"]["errors"], 1, "{doc}");
}

/// The user the watch test's processes run as: this one, or `nobody` (65534) when this is
/// root, whom mode 000 does stop (so the test runs either way); the workspace is opened to
/// everyone for that, once (a `chmod` of the workspace folder while a watch runs is a
/// change of its own, which re-reads every capture).
fn as_user(cmd: &mut std::process::Command, ws: &Path) {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions and cannot fail
    if unsafe { libc::geteuid() } == 0 {
        let open = std::fs::Permissions::from_mode(0o777);
        if std::fs::metadata(ws).unwrap().permissions().mode() & 0o7777 != 0o777 {
            std::fs::set_permissions(ws, open).unwrap();
        }
        cmd.uid(65534).gid(65534);
    }
}

/// `watch --json` as [`as_user`], its lines on a channel; killed when dropped.
struct Watch(std::process::Child, std::sync::mpsc::Receiver<Value>);

impl Watch {
    fn start(ws: &Path) -> Watch {
        use std::io::BufRead;
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"));
        cmd.args(["watch", "--json", "--debounce-ms", "50", "."])
            .current_dir(ws)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        as_user(&mut cmd, ws);
        let mut child = cmd.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Watch(child, rx)
    }

    /// The verdict lines (their `data`) up to the next summary line.
    fn batch(&mut self, what: &str) -> Vec<Value> {
        self.lines(what)
            .0
            .into_iter()
            .filter(|(kind, _)| kind == "verdict")
            .map(|(_, data)| data)
            .collect()
    }

    /// The lines up to the next summary line, each as its `type` and `data` (an `error`
    /// line fails the test), and the summary's `data`.
    fn lines(&mut self, what: &str) -> (Vec<(String, Value)>, Value) {
        let mut got = Vec::new();
        loop {
            match self.1.recv_timeout(DEADLINE) {
                Ok(v) if v["type"] == "summary" => return (got, v["data"].clone()),
                Ok(v) => {
                    assert_ne!(v["type"], "error", "{what}: {v}");
                    got.push((v["type"].as_str().unwrap().to_string(), v["data"].clone()));
                }
                Err(e) => {
                    let mut stderr = String::new();
                    if let Some(mut s) = self.0.stderr.take() {
                        use std::io::Read;
                        let _ = self.0.kill();
                        let _ = s.read_to_string(&mut stderr);
                    }
                    panic!("{what}: {e}; the watch said {stderr:?}; got {got:?}")
                }
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `watch --json` on a workspace whose capture folder holds a mode-000 folder: the first
/// pass gives that folder its `INVALID_CAPTURE` row naming the OS error (as `check` does)
/// and the watch goes on; once the folder is readable again its captures come, and an
/// edit inside it is seen. It used to exit 2 at once (`Permission denied (os error 13)
/// about ["…/captures/locked"]`: the OS refuses to watch a folder it will not list).
#[test]
fn watch_gives_a_locked_capture_folder_its_row_and_goes_on() {
    let ws = common::workspace_with(
        &schema(),
        &[
            ("ok.json", &record("ok")),
            ("locked/hidden.json", &record("hidden")),
        ],
    );
    let mode = Mode::set(ws.path().join("captures/locked"), 0o000);
    let mut w = Watch::start(ws.path());
    let first = w.batch("the first pass");
    let by = |rows: &[Value], source: &str| {
        rows.iter()
            .find(|v| v["source"] == source)
            .unwrap_or_else(|| panic!("no {source} in {rows:?}"))
            .clone()
    };
    assert_eq!(first.len(), 2, "{first:?}");
    let row = by(&first, "captures/locked");
    assert_eq!(row["reason"], "INVALID_CAPTURE", "{row}");
    assert_eq!(
        row["errors"][0]["message"],
        "cannot read captures/locked: Permission denied (os error 13)"
    );
    assert_eq!(
        by(&first, "captures/ok.json")["decision"],
        "ready-for-commit"
    );

    // it goes on watching the rest
    std::fs::write(
        ws.path().join("captures/new.json"),
        json!({"id": "new", "output": "[]"}).to_string(),
    )
    .unwrap();
    let next = w.batch("a capture saved beside the locked folder");
    assert_eq!(by(&next, "captures/new.json")["reason"], "SCHEMA_MISMATCH");

    // the folder unlocked: its capture comes
    drop(mode);
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|v: &Value| v["source"] == "captures/locked/hidden.json")
    {
        seen.extend(w.batch("the folder unlocked"));
    }
    assert_eq!(
        by(&seen, "captures/locked/hidden.json")["decision"],
        "ready-for-commit"
    );
    // and it is watched now
    std::fs::write(
        ws.path().join("captures/locked/hidden.json"),
        json!({"id": "hidden", "output": "[]"}).to_string(),
    )
    .unwrap();
    let edited = w.batch("a capture in the unlocked folder edited");
    assert_eq!(
        by(&edited, "captures/locked/hidden.json")["reason"],
        "SCHEMA_MISMATCH"
    );
}

/// A mode-000 folder that appears below the captures folder while `watch --json` runs (moved
/// in whole, its capture inside): the watch reports it with the row `check` gives it
/// (`INVALID_CAPTURE` naming the folder and the OS error), goes on watching the rest, and
/// once the folder is made readable (`chmod 755`) its capture comes and is watched.
#[test]
fn watch_reports_a_locked_folder_that_appears_while_it_runs() {
    let ws = common::workspace_with(&schema(), &[("ok.json", &record("ok"))]);
    // built beside the workspace (the same file system), then moved in locked
    let staging = tempfile::tempdir_in(ws.path().parent().unwrap()).unwrap();
    let built = staging.path().join("late");
    std::fs::create_dir(&built).unwrap();
    std::fs::write(built.join("hidden.json"), record("hidden")).unwrap();
    let mut w = Watch::start(ws.path());
    let first = w.batch("the first pass");
    assert_eq!(first.len(), 1, "{first:?}");
    let late = ws.path().join("captures/late");
    let mode = Mode::set(built.clone(), 0o000);
    std::fs::rename(&built, &late).unwrap();
    let mode = Mode(late.clone()).keep(mode);
    let by = |rows: &[Value], source: &str| {
        rows.iter()
            .find(|v| v["source"] == source)
            .unwrap_or_else(|| panic!("no {source} in {rows:?}"))
            .clone()
    };
    let mut seen = Vec::new();
    while !seen.iter().any(|v: &Value| v["source"] == "captures/late") {
        seen.extend(w.batch("a locked folder moved in"));
    }
    let row = by(&seen, "captures/late");
    assert_eq!(row["reason"], "INVALID_CAPTURE", "{row}");
    assert_eq!(row["decision"], "reject", "{row}");
    assert_eq!(
        row["errors"][0]["message"],
        "cannot read captures/late: Permission denied (os error 13)"
    );
    // as `check` gives it
    let (_, checked, _) = check(ws.path());
    assert_eq!(by(&checked, "captures/late"), row);

    // it goes on watching the rest
    std::fs::write(
        ws.path().join("captures/new.json"),
        json!({"id": "new", "output": "[]"}).to_string(),
    )
    .unwrap();
    let mut next = Vec::new();
    while !next
        .iter()
        .any(|v: &Value| v["source"] == "captures/new.json")
    {
        next.extend(w.batch("a capture saved beside the locked folder"));
    }
    assert_eq!(by(&next, "captures/new.json")["reason"], "SCHEMA_MISMATCH");

    // chmod 755: its capture comes (and the folder's row goes)
    drop(mode);
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|v: &Value| v["source"] == "captures/late/hidden.json")
    {
        seen.extend(w.batch("the folder unlocked"));
    }
    assert_eq!(
        by(&seen, "captures/late/hidden.json")["decision"],
        "ready-for-commit"
    );
    // and it is watched now
    std::fs::write(
        late.join("hidden.json"),
        json!({"id": "hidden", "output": "[]"}).to_string(),
    )
    .unwrap();
    let mut edited = Vec::new();
    while !edited
        .iter()
        .any(|v: &Value| v["source"] == "captures/late/hidden.json")
    {
        edited.extend(w.batch("a capture in the unlocked folder edited"));
    }
    assert_eq!(
        by(&edited, "captures/late/hidden.json")["reason"],
        "SCHEMA_MISMATCH"
    );
    let (_, checked, _) = check(ws.path());
    assert_eq!(checked.len(), 3, "{checked:?}");
    assert!(checked.iter().all(|v| v["source"] != "captures/late"));
}

/// The workspace's own captures folder made unreadable while watching: `check` stops
/// (exit 2, `cannot open workspace`), and watch says so with an `error` line naming the
/// folder (its verdicts stay as they were), not with rows; readable again, the next summary
/// counts the captures as before.
#[test]
fn watch_says_an_error_when_its_captures_folder_becomes_unreadable() {
    let ws = common::workspace_with(&schema(), &[("ok.json", &record("ok"))]);
    let mut w = Watch::start(ws.path());
    let first = w.batch("the first pass");
    assert_eq!(first.len(), 1, "{first:?}");
    let captures = ws.path().join("captures");
    let mode = Mode::set(captures.clone(), 0o000);
    let checked = run_locked(&["check", "."], ws.path());
    assert_eq!(checked.code, Some(2), "{}", checked.stderr);
    assert!(
        checked.stderr.contains("cannot open workspace"),
        "{}",
        checked.stderr
    );
    let line = loop {
        match w.1.recv_timeout(DEADLINE) {
            Ok(v) if v["type"] == "error" => break v,
            Ok(v) => assert_ne!(v["type"], "verdict", "{v}"),
            Err(e) => panic!("no error line: {e}"),
        }
    };
    let message = line["data"]["message"].as_str().unwrap();
    assert!(
        message.contains("captures") && message.contains("Permission denied"),
        "{line}"
    );
    drop(mode);
    let again = loop {
        match w.1.recv_timeout(DEADLINE) {
            Ok(v) if v["type"] == "summary" => break v,
            Ok(v) => assert_ne!(v["type"], "verdict", "{v}"),
            Err(e) => panic!("no summary once readable: {e}"),
        }
    };
    assert_eq!(again["data"]["captures"], 1, "{again}");
}

/// A capture folder made unreadable while `watch --json` runs (`chmod 000`), then deleted:
/// the watch gives what `check` gives at each step. Locked: the folder's one
/// `INVALID_CAPTURE` row, and its captures `removed` (it gave each capture file below it a
/// row of its own besides, `cannot read captures/locked/a.json: Permission denied`, which
/// `check` never lists); deleted: the folder's row `removed` (it stayed until a full
/// re-check).
#[test]
fn watch_follows_a_capture_folder_locked_then_deleted_as_check_does() {
    let ws = common::workspace_with(
        &schema(),
        &[
            ("ok.json", &record("ok")),
            ("locked/a.json", &record("a")),
            ("locked/b.json", &record("b")),
        ],
    );
    let locked = ws.path().join("captures/locked");
    let mut w = Watch::start(ws.path());
    let (first, _) = w.lines("the first pass");
    assert_eq!(first.len(), 3, "{first:?}");
    let mode = Mode::set(locked.clone(), 0o000);
    let mut got = Vec::new();
    while !got
        .iter()
        .any(|(kind, v): &(String, Value)| kind == "verdict" && v["source"] == "captures/locked")
    {
        got.extend(w.lines("the folder locked").0);
    }
    let (_, checked, _) = check(ws.path());
    assert_eq!(checked.len(), 2, "{checked:?}");
    assert_eq!(checked[0]["source"], "captures/locked", "{checked:?}");
    assert_eq!(
        got,
        [
            ("verdict".to_string(), checked[0].clone()),
            (
                "removed".to_string(),
                json!({"id": "a", "source": "captures/locked/a.json"})
            ),
            (
                "removed".to_string(),
                json!({"id": "b", "source": "captures/locked/b.json"})
            ),
        ]
    );

    // deleted (`rm -rf`, as root); its owner, whom mode 000 keeps from emptying it, moves
    // it out of the workspace, which the watch sees the same way
    let _mode = if std::fs::remove_dir_all(&locked).is_ok() {
        std::mem::forget(mode);
        None
    } else {
        let out = tempfile::tempdir_in(ws.path().parent().unwrap()).unwrap();
        let moved = out.path().join("locked");
        std::fs::rename(&locked, &moved).unwrap();
        Some((Mode(moved).keep(mode), out))
    };
    let (_, checked, _) = check(ws.path());
    assert_eq!(checked.len(), 1, "{checked:?}");
    let mut got = Vec::new();
    loop {
        let (lines, summary) = w.lines("the folder deleted");
        got.extend(lines);
        if summary["captures"] == 1 {
            break;
        }
    }
    assert_eq!(
        got,
        [(
            "removed".to_string(),
            json!({"id": "captures/locked", "source": "captures/locked"})
        )]
    );
}
