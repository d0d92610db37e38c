//! `verdict review [WORKSPACE]`: the verdicts that flip between the old and the new
//! contracts (`docs/commands.md#review`). The old side is `--base REV` (the schemas folder at a git
//! revision, read with `git show REV:path`; default `HEAD`) or `--old-schemas DIR`. Exit 1
//! when any capture becomes newly failing, 0 otherwise, 2 when it cannot run.

use crate::cli::args::{ReviewArgs, ReviewFormat};
use crate::core::contract::Contracts;
use crate::core::review;
use crate::core::workspace::Workspace;
use crate::report::review as printer;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why `review` could not run (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// A folder does not exist.
    #[error("{}: no such folder", crate::core::escape::path(.0))]
    NoSuchPath(PathBuf),
    /// git failed (not a repository, unknown revision, git missing). `args` and `message`
    /// are shown escaped (a revision or a file name is the user's or the repository's text).
    #[error(
        "git {}: {}",
        crate::core::escape::for_terminal(args),
        crate::core::escape::lines_for_terminal(message)
    )]
    Git {
        /// The git arguments.
        args: String,
        /// git's error output.
        message: String,
    },
    /// The temporary folder for the old schemas could not be written.
    #[error("cannot write the old schemas to {}: {}", crate::core::escape::path(.0), .1)]
    Temp(PathBuf, std::io::Error),
    /// The temporary folder (`TMPDIR`) is inside the workspace or its schemas folder (the
    /// second path): review writes nothing there.
    #[error(
        "the temporary folder {} is inside the workspace folder {}: review writes the old schemas to a private temporary folder, never among the workspace's files; point TMPDIR elsewhere",
        crate::core::escape::path(.0),
        crate::core::escape::path(.1)
    )]
    TempInside(PathBuf, PathBuf),
    /// The schemas folder is not in the git repository, so git has no old side of it.
    #[error(
        "the schemas folder {} is outside the git repository {}{OUTSIDE_GIT}",
        crate::core::escape::path(.0),
        crate::core::escape::path(.1)
    )]
    OutsideRepository(PathBuf, PathBuf),
}

/// What to do when the old side cannot come from git.
const OUTSIDE_GIT: &str =
    "; to review outside git, give the old schemas folder: `verdict review --old-schemas DIR`";

fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, ReviewError> {
    let fail = |message: String| ReviewError::Git {
        args: args.join(" "),
        message,
    };
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| fail(format!("cannot run git: {e}{OUTSIDE_GIT}")))?;
    if !out.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(out.stdout)
}

/// `p` made absolute and resolved (symbolic links, `..`) as far as it exists: the part that
/// does not exist is appended as written, without its `.` and `..` steps.
fn resolved(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut missing = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(c) = at.canonicalize() {
            let mut out = c;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                at = parent;
            }
            _ => return abs,
        }
    }
}

/// One schemas-folder file at the base revision: its path below the schemas folder (only
/// plain names, no `..`, as git stores paths) and its blob.
struct BaseFile {
    below: PathBuf,
    blob: String,
}

/// The blobs under `schemas` (a path relative to the repository's top folder, `""` for the
/// top itself) at `rev`, from `git ls-tree -r -z` (NUL-separated, so a name with a quote, a
/// line break or non-ASCII text comes as it is, never C-quoted). Symbolic links and
/// submodules are left out: they are no schema file.
fn base_files(top: &Path, rev: &str, schemas: &str) -> Result<Vec<BaseFile>, ReviewError> {
    let mut args = vec![
        "--literal-pathspecs",
        "ls-tree",
        "-r",
        "-z",
        "--full-tree",
        rev,
    ];
    if !schemas.is_empty() {
        args.extend(["--", schemas]);
    }
    let list = git(top, &args)?;
    let mut out = Vec::new();
    for entry in list.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        // `MODE SP TYPE SP OBJECT TAB PATH`
        let text = String::from_utf8_lossy(entry);
        let Some((meta, path)) = text.split_once('\t') else {
            continue;
        };
        let mut meta = meta.split(' ');
        let (Some(mode), Some("blob"), Some(blob)) = (meta.next(), meta.next(), meta.next()) else {
            continue;
        };
        if mode == "120000" {
            continue;
        }
        let below = if schemas.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(schemas).and_then(|r| r.strip_prefix('/'))
        };
        let Some(below) = below.map(Path::new) else {
            continue;
        };
        // git never stores `..` or an absolute path; a file that would leave the folder is
        // not written whatever the tree says
        if below
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            out.push(BaseFile {
                below: below.to_path_buf(),
                blob: blob.to_string(),
            });
        }
    }
    Ok(out)
}

/// The contracts of `ws` as they are at git revision `rev`: every file under the schemas
/// folder at that revision (found from the repository's top folder, so an absolute or
/// `../` `schemas` path is the same folder as a relative one) is written to a private
/// temporary folder of review's own (created fresh, removed when done, never inside the
/// workspace or its schemas folder: [`ReviewError::TempInside`]) and loaded from there.
///
/// # Errors
/// git fails or the revision is unknown; the schemas folder is not in the repository; the
/// temporary folder is inside the workspace or cannot be written.
pub fn contracts_at(ws: &Workspace, rev: &str) -> Result<Contracts, ReviewError> {
    let root = &ws.root;
    // the commit's object name: what every later git call is given (a revision spelt like
    // an option never reaches them as one)
    let commit = git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| {
        let in_repo = git(root, &["rev-parse", "--git-dir"]).is_ok();
        ReviewError::Git {
            args: format!("rev-parse {rev}"),
            message: if in_repo {
                format!("unknown revision {}", crate::core::escape::quoted(rev))
            } else {
                format!(
                    "{} is not in a git repository{OUTSIDE_GIT}",
                    crate::core::escape::path(root)
                )
            },
        }
    })?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    let top = git(root, &["rev-parse", "--show-toplevel"])?;
    let top = resolved(Path::new(
        String::from_utf8_lossy(&top).trim_end_matches('\n'),
    ));
    let schemas_abs = resolved(&root.join(&ws.config.schemas));
    let in_repo = schemas_abs
        .strip_prefix(&top)
        .map_err(|_| ReviewError::OutsideRepository(schemas_abs.clone(), top.clone()))?;
    let in_repo = in_repo.to_string_lossy().replace('\\', "/");
    let files = base_files(&top, &commit, &in_repo)?;

    // a private folder: never inside the workspace (a TMPDIR there would put the old
    // schemas among the user's files, where a watcher or a crash would leave them)
    let temp = resolved(&std::env::temp_dir());
    let root_abs = resolved(root);
    for folder in [&root_abs, &schemas_abs] {
        if temp.starts_with(folder) {
            return Err(ReviewError::TempInside(temp, folder.clone()));
        }
    }
    let tmp = tempfile::Builder::new()
        .prefix("verdict-review-")
        .tempdir_in(&temp)
        .map_err(|e| ReviewError::Temp(temp.clone(), e))?;
    // the old schemas folder, named as the workspace names its own (`schemas`), so
    // messages read the same on both sides
    let shown = schemas_abs
        .strip_prefix(&root_abs)
        .ok()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("schemas"), Path::to_path_buf);
    let tmp_schemas = tmp.path().join(&shown);
    let fail = |e| ReviewError::Temp(tmp.path().to_path_buf(), e);
    std::fs::create_dir_all(&tmp_schemas).map_err(fail)?;
    for f in files {
        let text = git(&top, &["cat-file", "blob", &f.blob])?;
        let dest = tmp_schemas.join(&f.below);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::write(&dest, text).map_err(fail)?;
    }
    // the MCP tools the capture files declare are the same on both sides
    let contracts = Contracts::load_with(
        tmp.path(),
        &tmp_schemas,
        &ws.config,
        ws.mcp.inline_schemas(),
    );
    tmp.close().map_err(|e| ReviewError::Temp(temp, e))?;
    Ok(contracts)
}

/// Runs `review` and writes the report. Returns whether no capture became newly failing.
///
/// # Errors
/// [`ReviewError`] or a workspace error when the run cannot proceed; I/O errors writing.
pub fn run(args: &ReviewArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    let root = args.workspace.clone().unwrap_or_else(|| PathBuf::from("."));
    if !root.is_dir() {
        return Err(ReviewError::NoSuchPath(root).into());
    }
    let ws = Workspace::open(&root)?;
    let (old, base) = match &args.old_schemas {
        Some(dir) => {
            if !dir.is_dir() {
                return Err(ReviewError::NoSuchPath(dir.clone()).into());
            }
            let parent = dir.parent().unwrap_or(Path::new("."));
            (
                Contracts::load_with(parent, dir, &ws.config, ws.mcp.inline_schemas()),
                dir.display().to_string(),
            )
        }
        None => {
            let rev = args.base.as_deref().unwrap_or("HEAD");
            (contracts_at(&ws, rev)?, rev.to_string())
        }
    };
    let r = review::review(&ws, old, &base);
    match args.format {
        ReviewFormat::Human => printer::human(out, &r, args.color.enabled())?,
        // DEL and the C1 controls escaped too (`docs/commands.md#untrusted-text`)
        ReviewFormat::Json => {
            printer::json(&mut crate::core::escape::JsonSafe::new(&mut *out), &r)?
        }
        ReviewFormat::Markdown => printer::markdown(out, &r)?,
        ReviewFormat::Github => printer::github(out, &r, &root)?,
    }
    out.flush()?;
    Ok(!r.flips.iter().any(|f| f.kind.fails()))
}
