//! A workspace (`docs/README.md#workspace-layout`): a folder with `verdict.toml` (optional), `schemas/` and
//! `captures/`. Loading one ([`Workspace::load`]) reads the config, compiles every schema
//! file once and reads the `[[join]]` files, and reads no capture file; the facts that come
//! from the capture files (MCP `tools/list` contracts, batch requests) are added after the
//! shared pre-pass ([`crate::core::prescan`], [`Workspace::with_facts`]). [`Workspace::open`]
//! does both.

use crate::core::capture::{self, RawRecord};
use crate::core::config::{Config, ConfigError};
use crate::core::contract::Contracts;
use crate::core::join::{JoinError, Joins};
use crate::core::mcp::McpSessions;
use crate::core::request::{RequestContracts, Requests};
use crate::core::verdict::Warning;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The code of the workspace warning for a `[[join]]` line whose id matches no capture.
pub const UNMATCHED_JOIN: &str = "UNMATCHED_JOIN";

/// What a workspace without a capture file is told (by `check`, and in the TUI's list).
pub const NO_CAPTURES: &str = "no captures found (no *.json, *.jsonl, *.ndjson, *.jsonl.out or *.sse files, plain or .gz/.zst, in the workspace's captures folders)";

/// Why a workspace cannot be used at all (exit code 2), as opposed to a broken capture
/// or contract, which only fails its own verdicts.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The folder, its `verdict.toml`, its schemas folder or a captures folder does not
    /// exist or cannot be read.
    #[error(
        "cannot open workspace: cannot read {}: {cause}",
        crate::core::escape::path(path)
    )]
    Unreadable {
        /// The folder or file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// `verdict.toml` is broken.
    #[error("{}: {cause}", crate::core::escape::path(path))]
    Config {
        /// The config file.
        path: PathBuf,
        /// What is wrong.
        cause: ConfigError,
    },
    /// A `[[join]]` file or line cannot be used (`docs/config.md#join`).
    #[error(transparent)]
    Join(#[from] JoinError),
}

/// An opened workspace: its root, config and compiled contracts.
#[derive(Debug)]
pub struct Workspace {
    /// The workspace folder.
    pub root: PathBuf,
    /// The resolved `verdict.toml`.
    pub config: Config,
    /// Every contract, compiled once: the schema files', and the MCP tools' that the
    /// capture files' `tools/list` results declare (`docs/record-shapes.md#mcp`).
    pub contracts: Contracts,
    /// The MCP facts of the capture files (which tool each request id called, the tools
    /// declared), read before any record is validated ([`crate::core::mcp`]).
    pub mcp: Arc<McpSessions>,
    /// The `[[join]]` files' lines, by capture id.
    pub joins: Joins,
    /// The batch input requests of the capture files, by id (`docs/requests.md`), read
    /// before any record is validated.
    pub requests: Arc<Requests>,
    /// The generation schemas compiled so far (`docs/requests.md#zero-config`): each
    /// distinct schema once, shared by the workspaces made from this one.
    pub request_contracts: Arc<RequestContracts>,
    /// The captures come from the workspace's own folder (it has `verdict.toml` or a schemas
    /// folder, no `captures` folder, and `verdict.toml` names none): the schemas folder below
    /// it is not read as captures.
    pub own_folder: bool,
}

/// The workspace a path belongs to (`docs/config.md#workspaces`): the nearest folder at or
/// above it (a file's folder for a file) that holds `verdict.toml`, a `schemas` folder or a
/// `captures` folder; else the path's own folder. A folder that holds one of them is its own
/// workspace: nothing above it is looked at.
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
        if dir.join("verdict.toml").is_file()
            || dir.join("schemas").is_dir()
            || dir.join("captures").is_dir()
        {
            return dir.to_path_buf();
        }
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            // a relative path's last parent is "" (`captures` -> ""): that is the current folder
            Some(_) if dir != Path::new(".") => dir = Path::new("."),
            // then the folders above the current one, named relatively (`..`, `../..`), as
            // an absolute path's own parents are
            _ if start.is_relative() => return above_current(&start),
            _ => return start,
        }
    }
}

/// `file` named from `root`, the workspace [`find_root`] found for it, so that its sources
/// are workspace-relative (`docs/capture-record.md`): a file named from a subfolder of the
/// workspace (`azure-filtered.jsonl`, whose root is `..`) becomes `root` joined with its
/// path below the root (`../responses/azure-filtered.jsonl`, named
/// `responses/azure-filtered.jsonl`), as if it had been named from the root. Folders are
/// compared resolved (symbolic links followed); the file keeps its own name (a symbolic
/// link is not resolved). A file already written under `root`, or whose folder is not
/// below it, is returned as it is.
pub fn under_root(file: &Path, root: &Path) -> PathBuf {
    if file.strip_prefix(root).is_ok() {
        return file.to_path_buf();
    }
    let Some(name) = file.file_name() else {
        return file.to_path_buf();
    };
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (dir.canonicalize(), root.canonicalize()) {
        (Ok(dir), Ok(base)) => match dir.strip_prefix(&base) {
            Ok(below) => root.join(below).join(name),
            Err(_) => file.to_path_buf(),
        },
        _ => file.to_path_buf(),
    }
}

/// [`find_root`] of a relative path past the current folder: the nearest folder above the
/// current one that holds `verdict.toml`, a `schemas` folder or a `captures` folder, as
/// `..`, `../..`...; else `start`.
fn above_current(start: &Path) -> PathBuf {
    let Ok(here) = std::env::current_dir() else {
        return start.to_path_buf();
    };
    let mut up = PathBuf::new();
    for dir in here.ancestors().skip(1) {
        up.push("..");
        if dir.join("verdict.toml").is_file()
            || dir.join("schemas").is_dir()
            || dir.join("captures").is_dir()
        {
            return up;
        }
    }
    start.to_path_buf()
}

impl Workspace {
    /// Opens the workspace at `root` ready to evaluate any of its records: [`Workspace::load`],
    /// then one read of every capture file for its MCP facts and batch requests
    /// ([`Workspace::read_facts`]). The front ends that read every record anyway (`check`,
    /// `watch`, the workbench) load the workspace and run the engine's pre-pass instead,
    /// which also collects the duplicate-id candidates in the same read.
    ///
    /// # Errors
    /// As [`Workspace::load`].
    pub fn open(root: &Path) -> Result<Workspace, WorkspaceError> {
        let ws = Workspace::load(root)?.read_facts();
        match ws.request_glob_error() {
            Some(e) => Err(e),
            None => Ok(ws),
        }
    }

    /// Loads the workspace at `root` without reading any capture file: reads `verdict.toml`
    /// if present, compiles every schema file and reads the `[[join]]` files. Its `mcp` and
    /// `requests` are empty (and its contracts the schema files' only) until
    /// [`Workspace::with_facts`] adds what the pre-pass read (`docs/commands.md#the-pre-pass`).
    ///
    /// # Errors
    /// The folder, its schemas folder or a captures folder cannot be read
    /// ([`WorkspaceError::Unreadable`]), or `verdict.toml` is invalid.
    pub fn load(root: &Path) -> Result<Workspace, WorkspaceError> {
        std::fs::read_dir(root).map_err(|cause| WorkspaceError::Unreadable {
            path: root.to_path_buf(),
            cause,
        })?;
        let config_path = root.join("verdict.toml");
        let config = match crate::core::bounded::read_to_string(&config_path) {
            Ok(text) => Config::from_toml(&text).map_err(|cause| WorkspaceError::Config {
                path: config_path.clone(),
                cause,
            })?,
            Err(crate::core::bounded::ReadError::NotFound) => Config::default(),
            Err(e) => {
                return Err(WorkspaceError::Config {
                    path: config_path.clone(),
                    cause: ConfigError {
                        message: format!("cannot read it: {e}"),
                    },
                });
            }
        };
        let mut config = config;
        confine(root, "schemas", &config.schemas).map_err(|cause| WorkspaceError::Config {
            path: config_path.clone(),
            cause,
        })?;
        for c in &config.captures {
            confine(root, "captures", c).map_err(|cause| WorkspaceError::Config {
                path: config_path.clone(),
                cause,
            })?;
        }
        let marked = root.join("verdict.toml").is_file()
            || root.join(&config.schemas).is_dir()
            || (!root.join("captures").is_dir() && holds_batch_input(root));
        if marked
            && config.captures == Config::default().captures
            && !root.join("captures").is_dir()
        {
            // a workspace (verdict.toml or schemas) with no captures folder: its own folder
            // holds its captures; a folder that is no workspace is never walked whole
            config.captures = vec![PathBuf::new()];
        }
        // the workspace's own folders: one that exists but cannot be listed stops the run
        // (a silent skip would pass CI with its captures or contracts unread)
        for dir in std::iter::once(&config.schemas).chain(config.captures.iter()) {
            let dir = root.join(dir);
            if dir.is_dir()
                && let Some(e) = unlistable(&dir)
            {
                return Err(e);
            }
        }
        let own_folder = config.captures == [PathBuf::new()];
        let mut ws = Workspace::unread(root, config);
        ws.own_folder = own_folder;
        let max = ws.config.max_capture_bytes;
        ws.joins = Joins::load(root, &ws.config.joins, &|p| ws.relative(p), max)?;
        Ok(ws)
    }

    /// Opens the workspace at `root` with a given config (no `verdict.toml` is read, and no
    /// `[[join]]` file), its capture files read for their facts ([`Workspace::read_facts`]).
    pub fn with_config(root: &Path, config: Config) -> Workspace {
        Workspace::unread(root, config).read_facts()
    }

    /// The workspace at `root` with `config`, its schema files compiled, no capture file read.
    fn unread(root: &Path, config: Config) -> Workspace {
        let mut ws = Workspace {
            root: root.to_path_buf(),
            config,
            contracts: Contracts::default(),
            mcp: Arc::default(),
            joins: Joins::default(),
            requests: Arc::default(),
            request_contracts: Arc::default(),
            own_folder: false,
        };
        ws.contracts = ws.compile(&McpSessions::default());
        ws
    }

    /// The same workspace with the facts of its capture files ([`Workspace::capture_files`]):
    /// one read of each ([`crate::core::prescan::facts`]), then [`Workspace::with_facts`].
    pub fn read_facts(&self) -> Workspace {
        let (mcp, requests) = crate::core::prescan::facts(self, &self.capture_files());
        self.with_facts(mcp, requests)
    }

    /// The same workspace with what the pre-pass read of its capture files: `mcp` as its MCP
    /// facts (the contracts compiled again, with the `mcp/TOOL.input` / `.output` of the
    /// tools it declares, when those differ from the ones held) and `requests` as its batch
    /// input requests (`docs/requests.md`).
    pub fn with_facts(&self, mcp: McpSessions, requests: Requests) -> Workspace {
        let mut ws = self.with_mcp(mcp);
        ws.requests = Arc::new(requests);
        ws
    }

    /// The same workspace with `requests` as its batch input requests.
    pub fn with_requests(&self, requests: Requests) -> Workspace {
        Workspace {
            root: self.root.clone(),
            config: self.config.clone(),
            contracts: self.contracts.clone(),
            mcp: self.mcp.clone(),
            joins: self.joins.clone(),
            requests: Arc::new(requests),
            request_contracts: self.request_contracts.clone(),
            own_folder: self.own_folder,
        }
    }

    /// The workspace warnings of the batch input requests (`UNMATCHED_REQUEST`,
    /// `DUPLICATE_REQUEST`; `docs/requests.md#batch-input-files`): `marks` holds the
    /// requests some result may join ([`Requests::mark`]; `None`: none).
    pub fn request_warnings(&self, marks: Option<&crate::core::request::Marks>) -> Vec<Warning> {
        let named = |f: &str| {
            self.config
                .sources
                .iter()
                .any(|s| s.requests.as_ref().is_some_and(|g| g.matches(f)))
        };
        let none;
        let marks = match marks {
            Some(m) => m,
            None => {
                none = self.requests.marks();
                &none
            }
        };
        self.requests.warnings(marks, &named)
    }

    /// The config error of a `[[source]] requests` glob that names no batch input file of
    /// the capture files (`docs/config.md#source`: it would leave its logs' requests silently
    /// missing), once the facts are read ([`Workspace::with_facts`]); `None` when each names
    /// one. Every front end stops on it (exit 2), as on any config error.
    pub fn request_glob_error(&self) -> Option<WorkspaceError> {
        self.check_request_globs()
            .err()
            .map(|cause| WorkspaceError::Config {
                path: self.root.join("verdict.toml"),
                cause,
            })
    }

    fn check_request_globs(&self) -> Result<(), crate::core::config::ConfigError> {
        for (i, s) in self.config.sources.iter().enumerate() {
            if let Some(g) = &s.requests
                && !self.requests.files().any(|f| g.matches(f))
            {
                return Err(crate::core::config::ConfigError {
                    message: format!(
                        "[[source]] {}: `requests` = {:?} matches no batch input file of the workspace's capture files (docs/requests.md#batch-input-files)",
                        i + 1,
                        g.text
                    ),
                });
            }
        }
        Ok(())
    }

    /// Compiles the schema files and the tool schemas `mcp` declares.
    fn compile(&self, mcp: &McpSessions) -> Contracts {
        Contracts::load_with(
            &self.root,
            &self.root.join(&self.config.schemas),
            &self.config,
            mcp.inline_schemas(),
        )
    }

    /// Whether `path` (below the root) is read as captures: named like a capture file, or
    /// matched by a `[[source]]` glob; and neither a `[[join]]` file nor below the schemas
    /// folder (`docs/config.md#workspaces`).
    pub fn is_capture_path(&self, path: &Path) -> bool {
        let rel = self.relative(path);
        if self.is_join_path(&rel) || (self.own_folder && self.in_schemas(path)) {
            return false;
        }
        capture::is_capture_file(path) || self.config.sources_for(&rel).next().is_some()
    }

    /// Whether a workspace-relative path is a `[[join]]` file (matched by a join glob).
    pub fn is_join_path(&self, rel: &str) -> bool {
        self.config.joins.iter().any(|g| g.matches(rel))
    }

    fn in_schemas(&self, path: &Path) -> bool {
        let schemas = self.root.join(&self.config.schemas);
        match (std::path::absolute(&schemas), std::path::absolute(path)) {
            (Ok(s), Ok(p)) => p.starts_with(s),
            _ => path.starts_with(&schemas),
        }
    }

    /// Whether a capture file is a log (one record per line): a log by its name (`.jsonl`,
    /// `.ndjson`, `.jsonl.out`, compressed or not), or a file of no capture-file name that a
    /// `[[source]]` glob matches (`*.log`).
    pub fn is_log_file(&self, path: &Path) -> bool {
        match crate::core::capture_file::FileKind::of(path) {
            // a capture file's name says what it is (`.json`, `.jsonl.gz`, `.sse`, ...)
            Some(kind) => kind.layout == crate::core::capture_file::Layout::Log,
            None => self
                .config
                .sources_for(&self.relative(path))
                .next()
                .is_some(),
        }
    }

    /// The same workspace with `mcp` as its MCP facts: the contracts are recompiled when
    /// the tools `mcp` declares differ from those it declared, else shared.
    pub fn with_mcp(&self, mcp: McpSessions) -> Workspace {
        if !mcp.same_declarations(&self.mcp) {
            return self.recompiled(mcp);
        }
        Workspace {
            root: self.root.clone(),
            config: self.config.clone(),
            contracts: self.contracts.clone(),
            mcp: Arc::new(mcp),
            joins: self.joins.clone(),
            requests: self.requests.clone(),
            request_contracts: self.request_contracts.clone(),
            own_folder: self.own_folder,
        }
    }

    /// The same workspace with every contract compiled again (the schema files as they are
    /// now) and `mcp` as its MCP facts; `verdict.toml` is not read again.
    pub fn recompiled(&self, mcp: McpSessions) -> Workspace {
        let contracts = self.compile(&mcp);
        Workspace {
            root: self.root.clone(),
            config: self.config.clone(),
            contracts,
            mcp: Arc::new(mcp),
            joins: self.joins.clone(),
            requests: self.requests.clone(),
            request_contracts: self.request_contracts.clone(),
            own_folder: self.own_folder,
        }
    }

    /// Every capture file of the workspace (the config's `captures` folders and files,
    /// recursively), sorted, as absolute-or-root-joined paths; a folder below them that
    /// cannot be read is listed too ([`Unreadable`]), so that it is a row, not a gap.
    pub fn capture_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for c in &self.config.captures {
            let p = self.root.join(c);
            if p.is_file() {
                out.push(p);
            } else {
                // a folder that cannot be read is listed itself: reading it gives its
                // `INVALID_CAPTURE` row with the OS error (the folder itself, at depth 0,
                // stops `Workspace::open` first)
                let unreadable = collect_files(&p, &|f| self.is_capture_path(f), &mut out);
                out.extend(unreadable.into_iter().map(|u| u.path));
            }
        }
        // one folder comes out sorted already; several may overlap or interleave
        if !out.is_sorted() {
            out.sort();
        }
        out.dedup();
        out
    }

    /// The `UNMATCHED_JOIN` warning of every `[[join]]` line whose id no capture has
    /// (`matched` holds the joined ids that some capture has), in file order: reported
    /// once per line, never silently dropped (`docs/config.md#join`).
    pub fn unmatched_joins(&self, matched: &std::collections::HashSet<String>) -> Vec<Warning> {
        let mut out: Vec<(&str, &String)> = self
            .joins
            .by_id
            .iter()
            .filter(|(id, _)| !matched.contains(*id))
            .map(|(id, j)| (j.at.as_str(), id))
            .collect();
        out.sort_by(|a, b| {
            crate::core::record_ref::RecordRef::parse(a.0)
                .cmp(&crate::core::record_ref::RecordRef::parse(b.0))
        });
        out.into_iter()
            .map(|(at, id)| Warning {
                code: UNMATCHED_JOIN.into(),
                severity: Some("warning".into()),
                file: Some(at.to_owned()),
                pointer: Some("/id".into()),
                at: None,
                message: format!(
                    "join line for id {} matches no capture of the workspace",
                    crate::core::escape::quote(id, 80)
                ),
            })
            .collect()
    }

    /// A path's name relative to the workspace root, `/`-separated.
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.to_string_lossy().replace('\\', "/")
    }

    /// Reads every record of one capture file (see [`capture::read_file`]).
    pub fn read_file(&self, path: &Path) -> Vec<RawRecord> {
        let mut out = Vec::new();
        capture::for_each_record_as(
            path,
            &self.relative(path),
            self.config.max_capture_bytes,
            self.is_log_file(path),
            |r| out.push(r),
        );
        out
    }
}

/// At most this many files directly in a folder are looked at by [`holds_batch_input`].
const INPUT_PROBE_FILES: usize = 64;

/// At most this many bytes of a file's first line are read by [`holds_batch_input`].
const INPUT_PROBE_BYTES: u64 = 1024 * 1024;

/// Whether a folder holds, directly (not below), a batch input file
/// (`docs/requests.md#batch-input-files`): a plain `.jsonl` / `.ndjson` file whose first
/// line, or a `.json` file whose record, is a batch request. Such a folder is a workspace
/// that reads its own folder (`docs/config.md#workspaces`), so a folder of downloaded batch
/// input and output files is checked as it is. Looks at the first 64
/// capture files by name, 1 MiB of each; never a FIFO or device.
pub fn holds_batch_input(root: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(entries) = std::fs::read_dir(root) else {
        return false;
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                !n.starts_with('.')
                    && (n.ends_with(".jsonl") || n.ends_with(".ndjson") || n.ends_with(".json"))
            })
        })
        .collect();
    files.sort();
    files.iter().take(INPUT_PROBE_FILES).any(|f| {
        let Ok((file, _)) = capture::open_regular(f) else {
            return false;
        };
        let mut text = String::new();
        let mut reader = std::io::BufReader::new(file.take(INPUT_PROBE_BYTES));
        let read = if f.extension().is_some_and(|e| e == "json") {
            reader.read_to_string(&mut text)
        } else {
            reader.read_line(&mut text)
        };
        if read.is_err() || text.trim().is_empty() {
            return false;
        }
        let source = crate::core::record_ref::RecordRef::new("", None);
        capture::parse_record(text.trim_end(), &source)
            .is_ok_and(|c| matches!(c.payload, capture::Payload::Requests(_)))
    })
}

/// A folder (or file) below a walked folder that could not be read: its path and the OS
/// error. Never skipped silently: a capture folder's is an `INVALID_CAPTURE` row naming it
/// (the folder is listed among the capture files, and reading it gives the error), a
/// schemas folder's a lint error, and a workspace folder's own (`schemas/`, a `captures`
/// folder) an error that stops the run (`docs/commands.md#unreadable-files-and-folders`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The folder or file, as the walk names it (`dir` joined with the names below it).
    pub path: PathBuf,
    /// How deep below `dir` (0: `dir` itself).
    pub depth: usize,
    /// The OS error (`Permission denied (os error 13)`).
    pub error: String,
}

/// The OS error at the bottom of a walk error (`File name too long (os error 36)`), without
/// the walk's own wording around it (which repeats the path).
fn os_error(io: &std::io::Error) -> String {
    let mut at: &dyn std::error::Error = io;
    while let Some(next) = at.source() {
        at = next;
    }
    at.to_string()
}

/// The path an `ignore` walk error is about, if it names one.
fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

/// Checks that the folder or file `key` (`schemas`, `captures`) of `verdict.toml` names,
/// `rel` below `root`, is inside the workspace (`docs/config.md#limits`): once symbolic
/// links and `..` are resolved it is `root` or below it, and it is not a loop of symbolic
/// links. A walk never leaves the workspace: `schemas = "/"` would read the whole file
/// system.
///
/// # Errors
/// A [`ConfigError`] naming the key and the path.
pub fn confine(root: &Path, key: &str, rel: &Path) -> Result<(), ConfigError> {
    let path = root.join(rel);
    let shown = rel.display();
    let err = |why: String| ConfigError {
        message: format!("{key} = {:?}: {why}", shown.to_string()),
    };
    let looped = |e: &std::io::Error| {
        #[cfg(unix)]
        {
            e.raw_os_error() == Some(libc::ELOOP)
        }
        #[cfg(not(unix))]
        {
            let _ = e;
            false
        }
    };
    let root_abs = match root.canonicalize() {
        Ok(r) => r,
        Err(_) => match std::path::absolute(root) {
            Ok(r) => normalize(&r),
            Err(_) => return Ok(()),
        },
    };
    let resolved = match path.canonicalize() {
        Ok(p) => p,
        Err(e) if looped(&e) => {
            return Err(err(
                "is a loop of symbolic links; name a folder inside the workspace".into(),
            ));
        }
        // not there (yet): where it would be, `..` resolved
        Err(_) => match std::path::absolute(&path) {
            Ok(p) => {
                let p = normalize(&p);
                // the part that exists, with its links resolved
                let mut base = p.as_path();
                let mut rest = Vec::new();
                while !base.exists() {
                    match (base.parent(), base.file_name()) {
                        (Some(parent), Some(name)) => {
                            rest.push(name.to_os_string());
                            base = parent;
                        }
                        _ => break,
                    }
                }
                let mut out = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
                out.extend(rest.iter().rev());
                out
            }
            Err(_) => return Ok(()),
        },
    };
    if !resolved.starts_with(&root_abs) {
        return Err(err(format!(
            "resolves to {}, outside the workspace {}; a walk never leaves the workspace (name a folder inside it)",
            resolved.display(),
            root_abs.display()
        )));
    }
    Ok(())
}

/// `path` with `.` and `..` components resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Every file below `dir` (recursively) for which `keep` holds, in path order (each folder's
/// entries sorted by name, so the result is sorted as `Path`s sort); and the folders and
/// files that could not be read ([`Unreadable`]: `dir` itself at depth 0), for the caller
/// to report, never to skip. A folder that does not exist (`dir` included) is not one of
/// them, nor an ignore file that cannot be read or parsed (the walk goes on without its
/// rules, as ripgrep's does). Files and folders that ripgrep would skip are left out ([`walker`]): those
/// matched by a `.gitignore` or `.ignore` file (in `dir`, below it, or in a folder above
/// it; inside a git repository or not), and hidden ones (named `.…`) below `dir`. Entries
/// are not followed: a symbolic link, a FIFO or a device is kept as a file (`keep` decides),
/// never opened here.
pub fn collect_files(
    dir: &Path,
    keep: &dyn Fn(&Path) -> bool,
    out: &mut Vec<PathBuf>,
) -> Vec<Unreadable> {
    let mut unreadable = Vec::new();
    for entry in walker(dir).build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                if let (Some(io), Some(path)) = (e.io_error(), error_path(&e)) {
                    let name = path.file_name().and_then(|n| n.to_str());
                    // a folder that does not exist (or went away during the walk) hides
                    // nothing; an ignore file is not a capture or schema folder
                    let gone = io.kind() == std::io::ErrorKind::NotFound;
                    if !gone && !name.is_some_and(|n| IGNORE_FILES.contains(&n)) {
                        let depth = path.strip_prefix(dir).map_or(0, |r| r.components().count());
                        unreadable.push(Unreadable {
                            path: path.to_path_buf(),
                            depth,
                            error: os_error(io),
                        });
                    }
                }
                continue;
            }
        };
        // the folder itself (depth 0) and every folder below are walked, not kept
        if entry.depth() == 0 || entry.file_type().is_none_or(|t| t.is_dir()) {
            continue;
        }
        let path = entry.into_path();
        if keep(&path) {
            out.push(path);
        }
    }
    unreadable
}

/// The error that stops the run when the folder `dir` (a workspace's schemas or captures
/// folder) cannot be listed.
fn unlistable(dir: &Path) -> Option<WorkspaceError> {
    std::fs::read_dir(dir)
        .err()
        .map(|cause| WorkspaceError::Unreadable {
            path: dir.to_path_buf(),
            cause,
        })
}

/// The folder walk of every command (`check`, `lint`, `review`, `feedback`, `watch` and the
/// workbench): ripgrep's defaults (`.gitignore`, `.ignore`, hidden files, the folders
/// above `dir` too), with `.gitignore` honoured outside a git repository as well
/// (`require_git(false)`: a workspace is often not a repository's root), and neither git's
/// global excludes file nor `.git/info/exclude` (a run must not depend on the machine's git
/// configuration). Links are not followed; entries come sorted by name. [`is_ignored`]
/// tells the same for one path.
pub fn walker(dir: &Path) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(dir);
    b.standard_filters(true)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    b
}

/// The ignore files [`walker`] reads, in its order of precedence: a match in any `.ignore`
/// beats one in any `.gitignore`.
pub const IGNORE_FILES: [&str; 2] = [".ignore", ".gitignore"];

/// Whether [`collect_files`] under `root` leaves `path` out (`path` below `root`; both made
/// absolute): some component of `path` below `root` is hidden, or is matched by an ignore
/// file of a folder above it (the deepest match decides, a `!` pattern un-ignores). Reads
/// the ignore files of `path`'s folders: what a live session asks of one saved file, so it
/// agrees with a fresh walk without one. A path not below `root` is not ignored.
pub fn is_ignored(root: &Path, path: &Path) -> bool {
    let (Ok(root), Ok(path)) = (std::path::absolute(root), std::path::absolute(path)) else {
        return false;
    };
    let Ok(rel) = path.strip_prefix(&root) else {
        return false;
    };
    let mut matchers: std::collections::HashMap<(PathBuf, usize), ignore::gitignore::Gitignore> =
        std::collections::HashMap::new();
    let mut at = root.clone();
    for (i, part) in rel.components().enumerate() {
        at.push(part);
        let is_dir = i + 1 < rel.components().count() || at.is_dir();
        let mut decided = ignore::Match::None;
        'kinds: for (k, name) in IGNORE_FILES.iter().enumerate() {
            for dir in at.ancestors().skip(1) {
                let gi = matchers.entry((dir.to_path_buf(), k)).or_insert_with(|| {
                    let mut b = ignore::gitignore::GitignoreBuilder::new(dir);
                    b.add(dir.join(name));
                    b.build()
                        .unwrap_or_else(|_| ignore::gitignore::Gitignore::empty())
                });
                let m = gi.matched(&at, is_dir);
                if !m.is_none() {
                    decided = m.map(|_| ());
                    break 'kinds;
                }
            }
        }
        // as the walker: an ignore file decides first, then a hidden name is left out
        let hidden = part.as_os_str().to_string_lossy().starts_with('.');
        match decided {
            ignore::Match::Ignore(()) => return true,
            ignore::Match::None if hidden => return true,
            _ => {}
        }
    }
    false
}
