//! A workspace (`docs/README.md#workspace-layout`): a folder with `verdict.toml` (optional), `schemas/` and
//! `captures/`. Opening one reads the config and compiles every contract once.

use crate::core::capture::{self, RawRecord};
use crate::core::config::{Config, ConfigError};
use crate::core::contract::Contracts;
use std::path::{Path, PathBuf};

/// What a workspace without a capture file is told (by `check`, and in the TUI's list).
pub const NO_CAPTURES: &str =
    "no captures found (no *.json, *.jsonl or *.ndjson files in the workspace's captures folders)";

/// Why a workspace cannot be used at all (exit code 2), as opposed to a broken capture
/// or contract, which only fails its own verdicts.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The folder does not exist or cannot be read.
    #[error("cannot open workspace {path}: {cause}")]
    Unreadable {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// `verdict.toml` is broken.
    #[error("{path}: {cause}")]
    Config {
        /// The config file.
        path: PathBuf,
        /// What is wrong.
        cause: ConfigError,
    },
}

/// An opened workspace: its root, config and compiled contracts.
#[derive(Debug)]
pub struct Workspace {
    /// The workspace folder.
    pub root: PathBuf,
    /// The resolved `verdict.toml`.
    pub config: Config,
    /// Every contract, compiled once.
    pub contracts: Contracts,
}

/// The workspace a path belongs to: the nearest folder at or above it (a file's folder for
/// a file) that holds `verdict.toml` or a `schemas` folder; else the path's own folder.
pub fn find_root(path: &Path) -> PathBuf {
    let start = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let start = if start.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        start
    };
    let mut dir = start.as_path();
    loop {
        if dir.join("verdict.toml").is_file() || dir.join("schemas").is_dir() {
            return dir.to_path_buf();
        }
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            // a relative path's last parent is "" (`captures` -> ""): that is the current folder
            Some(_) if dir != Path::new(".") => dir = Path::new("."),
            _ => return start,
        }
    }
}

impl Workspace {
    /// Opens the workspace at `root`: reads `verdict.toml` if present and compiles every schema.
    ///
    /// # Errors
    /// The folder cannot be read, or `verdict.toml` is invalid.
    pub fn open(root: &Path) -> Result<Workspace, WorkspaceError> {
        std::fs::read_dir(root).map_err(|cause| WorkspaceError::Unreadable {
            path: root.to_path_buf(),
            cause,
        })?;
        let config_path = root.join("verdict.toml");
        let config = match std::fs::read_to_string(&config_path) {
            Ok(text) => Config::from_toml(&text).map_err(|cause| WorkspaceError::Config {
                path: config_path,
                cause,
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Config::default(),
            Err(e) => {
                return Err(WorkspaceError::Unreadable {
                    path: config_path,
                    cause: e,
                });
            }
        };
        Ok(Workspace::with_config(root, config))
    }

    /// Opens the workspace at `root` with a given config (no `verdict.toml` is read).
    pub fn with_config(root: &Path, config: Config) -> Workspace {
        let contracts = Contracts::load(root, &root.join(&config.schemas), &config);
        Workspace {
            root: root.to_path_buf(),
            config,
            contracts,
        }
    }

    /// Every capture file of the workspace (the config's `captures` folders and files,
    /// recursively), sorted, as absolute-or-root-joined paths.
    pub fn capture_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for c in &self.config.captures {
            let p = self.root.join(c);
            if p.is_file() {
                out.push(p);
            } else {
                collect_files(&p, &capture::is_capture_file, &mut out);
            }
        }
        // one folder comes out sorted already; several may overlap or interleave
        if !out.is_sorted() {
            out.sort();
        }
        out.dedup();
        out
    }

    /// A path's name relative to the workspace root, `/`-separated.
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.to_string_lossy().replace('\\', "/")
    }

    /// Reads every record of one capture file (see [`capture::read_file`]).
    pub fn read_file(&self, path: &Path) -> Vec<RawRecord> {
        capture::read_file(path, &self.relative(path), self.config.max_capture_bytes)
    }
}

/// Every file below `dir` (recursively) for which `keep` holds, in path order (each folder's
/// entries sorted by name, so the result is sorted as `Path`s sort); unreadable folders are
/// skipped.
pub fn collect_files(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<std::fs::DirEntry> = entries.flatten().collect();
    entries.sort_by_cached_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            collect_files(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}
