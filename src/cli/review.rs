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

/// A temporary folder, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The contracts of `ws` as they are at git revision `rev`: every file under the schemas
/// folder at that revision is written to a temporary folder and loaded from there.
pub fn contracts_at(ws: &Workspace, rev: &str) -> Result<Contracts, ReviewError> {
    let root = &ws.root;
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
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
    let schemas = ws.config.schemas.to_string_lossy().replace('\\', "/");
    let list = git(root, &["ls-tree", "-r", "--name-only", rev, "--", &schemas])?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = TempDir(
        std::env::temp_dir().join(format!("verdict-review-{}-{nanos}", std::process::id())),
    );
    let tmp_schemas = tmp.0.join(&ws.config.schemas);
    std::fs::create_dir_all(&tmp_schemas).map_err(|e| ReviewError::Temp(tmp.0.clone(), e))?;
    for name in String::from_utf8_lossy(&list)
        .lines()
        .filter(|l| !l.is_empty())
    {
        let text = git(root, &["show", &format!("{rev}:./{name}")])?;
        let dest = tmp.0.join(name);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ReviewError::Temp(tmp.0.clone(), e))?;
        }
        std::fs::write(&dest, text).map_err(|e| ReviewError::Temp(tmp.0.clone(), e))?;
    }
    // the MCP tools the capture files declare are the same on both sides
    Ok(Contracts::load_with(
        &tmp.0,
        &tmp_schemas,
        &ws.config,
        ws.mcp.inline_schemas(),
    ))
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
