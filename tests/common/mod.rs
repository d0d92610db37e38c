//! Helpers shared by the integration tests.

#[allow(dead_code)] // only the hostile-input tests use it
pub mod run;
#[allow(dead_code)] // only the watch and engine tests use it
pub mod watch;

use std::path::Path;

/// Copies a folder recursively (a sample workspace into a temporary folder, to edit it).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (p, t) = (e.path(), to.join(e.file_name()));
        if p.is_dir() {
            copy_dir(&p, &t)
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

/// A fresh copy of `samples/refund` in a temporary folder: the guard (keep it alive) and
/// the workspace path.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn refund_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("refund");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund"),
        &ws,
    );
    (tmp, ws)
}

/// A workspace in a temporary folder with one schema `c` (its text) and the given captures
/// (paths below `captures/`, folders created as needed).
#[allow(dead_code)] // only the hostile-input tests use it
pub fn workspace_with(schema: &str, captures: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("schemas")).unwrap();
    std::fs::create_dir_all(tmp.path().join("captures")).unwrap();
    std::fs::write(tmp.path().join("schemas/c.schema.json"), schema).unwrap();
    for (name, text) in captures {
        let p = tmp.path().join("captures").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    tmp
}

/// The verdicts of a `check --format jsonl` report: every line is
/// `{"type":"verdict","data":VERDICT}`, then the `{"type":"chain",...}` lines of the chains
/// if there are any, then `{"type":"summary","data":SUMMARY}` (asserted); the `data` of the
/// verdict lines, in order. No output (a run that found no
/// captures, exit 2) gives none.
#[allow(dead_code)] // not every module uses it
pub fn jsonl_verdicts(stdout: &str) -> Vec<serde_json::Value> {
    let mut lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let Some(summary) = lines.pop() else {
        return Vec::new();
    };
    assert_eq!(summary["type"], "summary", "{summary}");
    assert!(summary["data"].is_object(), "{summary}");
    // the chain lines come after every verdict line (`docs/chains.md#the-report`)
    let verdicts = lines.iter().take_while(|l| l["type"] != "chain").count();
    assert!(
        lines[verdicts..].iter().all(|l| l["type"] == "chain"),
        "a verdict line after a chain line"
    );
    lines.truncate(verdicts);
    lines
        .into_iter()
        .map(|mut l| {
            assert_eq!(l["type"], "verdict", "{l}");
            assert_eq!(l.as_object().map(|o| o.len()), Some(2), "{l}");
            l["data"].take()
        })
        .collect()
}

/// The binary with `args`, run in `dir`, without an inherited `NO_COLOR`.
#[allow(dead_code)] // not every module uses it
pub fn verdict_in(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .expect("run verdict")
}

/// The binary with `args`, run in the crate root (so `samples/refund` is a relative path).
#[allow(dead_code)] // not every module uses it
pub fn verdict(args: &[&str]) -> std::process::Output {
    verdict_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Every verdict of the workspace at `root`, in file and line order (records that are not
/// captures, such as MCP notifications, have none).
pub fn verdicts(root: &Path) -> Vec<verdict::core::verdict::Verdict> {
    let ws = verdict::core::workspace::Workspace::open(root).unwrap();
    ws.capture_files()
        .iter()
        .flat_map(|f| ws.read_file(f))
        .flat_map(|raw| ws.check_all(&raw))
        .collect()
}

/// One verdict as `id format provider stage decision reason: message` (the first error's
/// message, empty when there is none; `-` for a missing format, provider or reason): the
/// row the shape tests compare exactly.
#[allow(dead_code)] // not every module uses it
pub fn row(v: &verdict::core::verdict::Verdict) -> String {
    row_of(v, false)
}

/// [`row`] with the first error's pointer (`-` when none) after the reason:
/// `id format provider stage decision reason pointer: message`.
#[allow(dead_code)] // not every module uses it
pub fn row_with_pointer(v: &verdict::core::verdict::Verdict) -> String {
    row_of(v, true)
}

fn row_of(v: &verdict::core::verdict::Verdict, pointer: bool) -> String {
    let f = v.errors.first();
    let pointer = if pointer {
        format!(" {}", f.and_then(|f| f.pointer.as_deref()).unwrap_or("-"))
    } else {
        String::new()
    };
    format!(
        "{} {} {} {} {} {}{pointer}: {}",
        v.id,
        v.format.as_deref().unwrap_or("-"),
        v.provider.as_deref().unwrap_or("-"),
        v.stage.as_str(),
        v.decision.as_str(),
        v.reason.as_ref().map_or("-", |r| r.as_str()),
        f.map_or("", |f| f.message.as_str())
    )
}
