//! `verdict check`: validate once, print a report, exit 0 / 1 / 2 (DESIGN 7).

use crate::cli::args::{CheckArgs, ColorChoice, Format};
use crate::core::capture::{self, RawRecord};
use crate::core::config::Config;
use crate::core::contract::Contracts;
use crate::core::stage::{parse, schema};
use crate::core::summary::Summary;
use crate::core::text::line_col;
use crate::core::verdict::{Finding, Reason, Stage, Verdict};
use crate::core::workspace::{Workspace, find_root};
use crate::report::{self, Item, ReportOptions};
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why `check` could not run at all (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A path given on the command line does not exist.
    #[error("{0}: no such file or folder")]
    NoSuchPath(PathBuf),
    /// The workspace cannot be opened.
    #[error(transparent)]
    Workspace(#[from] crate::core::workspace::WorkspaceError),
    /// The `--schema` file cannot be used.
    #[error("{0}")]
    Schema(String),
}

/// Runs `check` and writes the report to `out`. Returns whether every capture passed.
///
/// # Errors
/// [`CheckError`] when the run cannot proceed; I/O errors writing the report.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    let items = match &args.schema {
        Some(schema_file) => validator_mode(schema_file, &args.paths, args.format_assertion)?,
        None => workspace_mode(&args.paths)?,
    };
    if items.is_empty() {
        eprintln!(
            "verdict: warning: no captures found (*.json, *.jsonl, *.ndjson under the workspace's captures folders)"
        );
    }
    let mut summary = Summary::default();
    for it in &items {
        summary.add(&it.verdict);
    }
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            use std::io::IsTerminal;
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let opts = ReportOptions {
        color,
        quiet: args.quiet,
    };
    match args.format {
        Format::Human => report::human::write(out, &items, &summary, &opts)?,
        Format::Json => report::json::write(out, &items, &summary)?,
        Format::Jsonl => report::json::write_lines(out, &items)?,
        Format::Junit => report::junit::write(out, &items, &summary)?,
        Format::Sarif => report::sarif::write(out, &items)?,
        Format::Github => report::github::write(out, &items, &summary)?,
    }
    out.flush()?;
    Ok(summary.failed == 0)
}

/// Where a record's report should point: the capture file (as the user can open it) and
/// the line and column of the record (JSONL) or of its `output`/`response` value (`.json`).
fn locate_record(root: &Path, raw: &RawRecord) -> (String, usize, usize) {
    let path = root.join(&raw.file).to_string_lossy().replace('\\', "/");
    let path = path.strip_prefix("./").map(str::to_string).unwrap_or(path);
    if let Some(line) = raw.line {
        return (path, line, 1);
    }
    if let Ok(text) = &raw.text {
        for key in ["/output", "/response"] {
            if let Some(span) = parse::locate(text, key) {
                let at = line_col(text, span.start);
                return (path, at.line as usize, at.column as usize);
            }
        }
    }
    (path, 1, 1)
}

fn evaluate_all(
    records: Vec<(PathBuf, RawRecord)>,
    check: impl Fn(&RawRecord) -> Verdict + Sync,
) -> Vec<Item> {
    records
        .into_par_iter()
        .map(|(root, raw)| {
            let verdict = check(&raw);
            let (path, line, column) = locate_record(&root, &raw);
            Item {
                verdict,
                path,
                line,
                column,
            }
        })
        .collect()
}

fn workspace_mode(paths: &[PathBuf]) -> Result<Vec<Item>, CheckError> {
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    // group the paths by workspace, keeping the order of first appearance
    let mut groups: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    for p in &paths {
        if !p.exists() {
            return Err(CheckError::NoSuchPath(p.clone()));
        }
        let root = find_root(p);
        match groups.iter_mut().find(|(r, _)| *r == root) {
            Some((_, v)) => v.push(p.clone()),
            None => groups.push((root, vec![p.clone()])),
        }
    }
    let mut items = Vec::new();
    for (root, targets) in groups {
        let ws = Workspace::open(&root)?;
        let mut files: Vec<PathBuf> = Vec::new();
        for t in &targets {
            if same_dir(t, &root) {
                files.extend(ws.capture_files());
            } else if t.is_dir() {
                let canon = t.canonicalize().unwrap_or_else(|_| t.clone());
                files.extend(
                    ws.capture_files()
                        .into_iter()
                        .filter(|f| f.canonicalize().is_ok_and(|c| c.starts_with(&canon))),
                );
            } else {
                files.push(t.clone());
            }
        }
        files.dedup();
        let records: Vec<(PathBuf, RawRecord)> = files
            .par_iter()
            .map(|f| ws.read_file(f))
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .map(|r| (root.clone(), r))
            .collect();
        items.extend(evaluate_all(records, |raw| ws.check(raw)));
    }
    Ok(items)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// `--schema FILE`: each `.json` file or JSONL line is one raw instance (the output text).
fn validator_mode(
    schema_file: &Path,
    paths: &[PathBuf],
    format_assertion: bool,
) -> Result<Vec<Item>, CheckError> {
    if !schema_file.is_file() {
        return Err(CheckError::NoSuchPath(schema_file.to_path_buf()));
    }
    let dir = schema_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let config = Config {
        format_assertion,
        ..Config::default()
    };
    let contracts = Contracts::load_files(dir, &[schema_file.to_path_buf()], dir, &config);
    let contract = contracts.by_name.values().next().cloned().ok_or_else(|| {
        CheckError::Schema(format!("{}: not a schema file", schema_file.display()))
    })?;
    let name = contract.name.clone();
    let mut files = Vec::new();
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    for p in &paths {
        if !p.exists() {
            return Err(CheckError::NoSuchPath(p.clone()));
        }
        if p.is_dir() {
            let ws = Workspace {
                root: p.clone(),
                config: Config {
                    // empty, not ".": `in/./a.json` would become the id
                    captures: vec![PathBuf::new()],
                    ..Config::default()
                },
                contracts: Contracts::default(),
            };
            files.extend(ws.capture_files());
        } else {
            files.push(p.clone());
        }
    }
    let records: Vec<(PathBuf, RawRecord)> = files
        .par_iter()
        .map(|f| {
            let rel = f.to_string_lossy().replace('\\', "/");
            let rel = rel.strip_prefix("./").unwrap_or(&rel).to_string();
            capture::read_file(f, &rel, u64::MAX)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .map(|r| (PathBuf::new(), r))
        .collect();
    Ok(evaluate_all(records, |raw| {
        let errors = match (&raw.text, &contract.compiled) {
            (Err(f), _) => vec![f.clone()],
            (_, Err(errs)) => errs.clone(),
            (Ok(text), Ok(validator)) => instance_errors(text, validator),
        };
        let mut v = Verdict::from_errors(
            raw.source.clone(),
            raw.source.clone(),
            Some(name.clone()),
            errors,
        );
        v.warnings = contract.warnings();
        v
    }))
}

fn instance_errors(text: &str, validator: &jsonschema::Validator) -> Vec<Finding> {
    if text.trim().is_empty() {
        return vec![Finding::new(
            Stage::Response,
            Reason::NO_OUTPUT,
            "the instance is empty",
        )];
    }
    match parse::parse_strict(text) {
        Ok(v) => schema::validate(validator, &v, Some(text)),
        Err(f) => vec![f],
    }
}
