//! `verdict lint [WORKSPACE|SCHEMA...]`: schema lint (`docs/commands.md#lint`). Exit 0 when no
//! finding is an error, 1 otherwise, 2 when it cannot run.

use crate::cli::args::{LintArgs, LintFormat};
use crate::core::config::Config;
use crate::core::lint::{self, LintFinding, LintOptions, Profile, Severity};
use crate::core::stage::parse;
use crate::core::workspace::{collect_files, find_root};
use crate::report::lint::{self as printer, LintSummary};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why `lint` could not run (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    /// A path given on the command line does not exist.
    #[error("{}: no such file or folder", crate::core::escape::path(.0))]
    NoSuchPath(PathBuf),
    /// `verdict.toml` is broken.
    #[error("{}: {}", crate::core::escape::path(.0), .1)]
    Config(PathBuf, crate::core::config::ConfigError),
    /// The profile cannot be used.
    #[error(transparent)]
    Profile(#[from] lint::profile::ProfileError),
    /// The schemas folder (or a folder named on the command line) cannot be listed.
    #[error("cannot read {}: {}", crate::core::escape::path(.0), .1)]
    Unreadable(PathBuf, String),
    /// `verdict lint` with no path, in a folder of no workspace (no schemas folder here or
    /// above): it does not lint every JSON file below as a schema.
    #[error(
        "no schemas folder in {} or above it (searched {}); pass a workspace folder or schema files, e.g. `verdict lint samples/refund`",
        crate::core::escape::path(.0),
        crate::core::escape::path(.1)
    )]
    NoSchemas(PathBuf, PathBuf),
}

/// Whether the folder `dir` is `schemas` or a folder below it (resolved: `.` in the
/// schemas folder is the schemas folder).
fn is_within(dir: &Path, schemas: &Path) -> bool {
    match (dir.canonicalize(), schemas.canonicalize()) {
        (Ok(d), Ok(s)) => d.starts_with(s),
        _ => false,
    }
}

/// The workspace config for `root`: its `verdict.toml`, or the defaults.
fn config_of(root: &Path) -> Result<Config, LintError> {
    let p = root.join("verdict.toml");
    match crate::core::bounded::read_to_string(&p) {
        Ok(text) => Config::from_toml(&text).map_err(|e| LintError::Config(p, e)),
        Err(crate::core::bounded::ReadError::NotFound) => Ok(Config::default()),
        Err(e) => Err(LintError::Config(
            p,
            crate::core::config::ConfigError {
                message: format!("cannot read it: {e}"),
            },
        )),
    }
}

/// A path as the user can open it: `./` stripped, `/`-separated.
fn shown(p: &Path) -> String {
    let s = crate::core::text::slash_path(p);
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

/// Loads every `*.rules.toml` below `dir` as `check` would; each problem is a
/// `RULES_INVALID` error (the message carries the file, line and column).
pub fn lint_rules(root: &Path, dir: &Path) -> Vec<LintFinding> {
    let mut files = Vec::new();
    // an unreadable folder is reported once, by the schema walk (`run`)
    let _reported = collect_files(
        dir,
        &|f| f.to_string_lossy().ends_with(".rules.toml"),
        &mut files,
    );
    files.sort();
    files
        .iter()
        .flat_map(|f| lint_rules_file(root, f))
        .collect()
}

/// Loads one rules file as `check` would: each problem is a `RULES_INVALID` error, and the
/// rules are checked against the sibling schema (`RULES_UNKNOWN_FIELD`).
pub fn lint_rules_file(root: &Path, f: &Path) -> Vec<LintFinding> {
    let mut out = Vec::new();
    let rel = crate::core::text::slash_path(f.strip_prefix(root).unwrap_or(f));
    let problems = match crate::core::bounded::read_to_string(f) {
        Err(e) => vec![format!("{rel}: cannot read: {e}")],
        Ok(text) => match crate::core::rules::RuleSet::load(&rel, &text) {
            Ok(rs) => {
                // the rules against their contract's schema (NAME.schema.json or NAME.json)
                if let Some(schema) = sibling_schema(f) {
                    out.extend(lint::rule_fields::lint_rule_fields(&rel, &rs, &schema));
                }
                Vec::new()
            }
            Err(errors) => errors.into_iter().map(|e| e.message).collect(),
        },
    };
    out.extend(problems.into_iter().map(|message| {
        // `schemas/c.rules.toml:4:1: unknown key`: the place is the finding's, once
        let (at, message) = split_place(&rel, message);
        LintFinding {
            code: lint::codes::RULES_INVALID.into(),
            severity: Severity::Error,
            file: rel.clone(),
            pointer: String::new(),
            at,
            message,
            hint: None,
        }
    }));
    out
}

/// A rules-file message that starts with `FILE:LINE:COLUMN: ` as its place and the rest;
/// any other message unchanged, with no place.
fn split_place(file: &str, message: String) -> (Option<crate::core::verdict::LineCol>, String) {
    let place = message
        .strip_prefix(file)
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| {
            let (line, r) = r.split_once(':')?;
            let (column, rest) = r.split_once(": ")?;
            let at = crate::core::verdict::LineCol {
                line: line.parse().ok()?,
                column: column.parse().ok()?,
            };
            Some((at, rest.to_string()))
        });
    match place {
        Some((at, rest)) => (Some(at), rest),
        None => (None, message),
    }
}

/// The parsed schema beside a rules file (`NAME.rules.toml` -> `NAME.schema.json`, else
/// `NAME.json`), if there is one that parses.
fn sibling_schema(rules_file: &Path) -> Option<serde_json::Value> {
    let name = rules_file
        .file_name()?
        .to_str()?
        .strip_suffix(".rules.toml")?;
    let dir = rules_file.parent()?;
    [format!("{name}.schema.json"), format!("{name}.json")]
        .iter()
        .find_map(|n| crate::core::bounded::read_to_string(&dir.join(n)).ok())
        .and_then(|text| crate::core::stage::parse::from_str_no_duplicates(&text).ok())
}

/// Lints one schema file. A file that is not JSON is one `SCHEMA_UNREADABLE` error.
pub fn lint_file(path: &Path, opts: &LintOptions<'_>) -> Vec<LintFinding> {
    let file = shown(path);
    let unreadable = |message: String| {
        vec![LintFinding {
            code: lint::codes::SCHEMA_UNREADABLE.into(),
            severity: Severity::Error,
            file: file.clone(),
            pointer: String::new(),
            at: None,
            message,
            hint: None,
        }]
    };
    let text = match crate::core::bounded::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return unreadable(format!("cannot read the schema: {e}")),
    };
    match parse::parse_strict(&text) {
        // the same budget as `check` (docs/verdicts.md#limits): a larger schema is not walked
        Ok(v) if crate::core::schema_budget::document_nodes(&v) > opts.max_schema_nodes => {
            unreadable(format!(
                "the schema has {} nodes, over max_schema_nodes ({}); not linted (docs/verdicts.md#limits)",
                crate::core::schema_budget::document_nodes(&v),
                opts.max_schema_nodes
            ))
        }
        Ok(v) => lint::lint_schema(&file, &text, &v, opts),
        Err(f) => {
            let mut out = unreadable(format!("the schema is not valid JSON: {}", f.message));
            out[0].at = f.at;
            out
        }
    }
}

/// `SCHEMA_INVALID` errors: the schema files of `linted` (below `arg`, a schemas folder or
/// one file) compiled as `check` compiles them, with the other schema files of their folder
/// registered so `$ref`s resolve, and each `CONTRACT_ERROR` of theirs as one finding, so
/// `lint` never passes a schema that `check` refuses (`docs/commands.md#lint`). Rules-file
/// errors are left to `RULES_INVALID`, and `strict_schemas` does not apply: a lint finding
/// is reported once, as itself.
fn compile_findings(
    root: &Path,
    arg: &Path,
    config: &crate::core::config::Config,
    linted: &[PathBuf],
) -> Vec<LintFinding> {
    use crate::core::contract::Contracts;
    if linted.is_empty() {
        return Vec::new();
    }
    let mut config = config.clone();
    config.strict_schemas = false;
    let contracts = if arg.is_dir() {
        let dir = if arg.join(&config.schemas).is_dir() {
            arg.join(&config.schemas)
        } else {
            arg.to_path_buf()
        };
        Contracts::load_files(root, linted, &dir, &config)
    } else {
        let dir = arg.parent().filter(|d| !d.as_os_str().is_empty());
        Contracts::load_files(root, linted, dir.unwrap_or(Path::new(".")), &config)
    };
    let mut out = Vec::new();
    for c in contracts.by_name.values() {
        let (Err(errors), None) = (&c.compiled, &c.label) else {
            continue;
        };
        let Some(path) = linted
            .iter()
            .find(|f| f.strip_prefix(root).unwrap_or(f) == c.file)
        else {
            continue;
        };
        let name = crate::core::text::slash_path(&c.file);
        let rules_file = format!("{}.rules.toml", c.name);
        for e in errors.iter().filter(|e| !e.message.contains(&rules_file)) {
            let pointer = e.schema_path.clone().unwrap_or_default();
            let (at, message) = strip_place(&e.message, &name, &pointer);
            out.push(LintFinding {
                code: lint::codes::SCHEMA_INVALID.into(),
                severity: Severity::Error,
                file: shown(path),
                pointer,
                at,
                message,
                hint: Some(
                    "`check` gives every capture of this contract CONTRACT_ERROR until it is fixed"
                        .into(),
                ),
            });
        }
    }
    out
}

/// A schema-file `CONTRACT_ERROR` message (`schemas/a.json:2:14 at /$schema cannot be ...`)
/// split into its line:column and the rest, which the lint report prints beside the file and
/// pointer it already shows. A message of another form is kept whole.
fn strip_place(
    message: &str,
    file: &str,
    pointer: &str,
) -> (Option<crate::core::verdict::LineCol>, String) {
    let Some(rest) = message.strip_prefix(file) else {
        return (None, message.to_string());
    };
    let mut at = None;
    let mut rest = rest;
    if let Some(tail) = rest.strip_prefix(':') {
        let mut parts = tail.splitn(3, [':', ' ']);
        if let (Some(l), Some(c)) = (parts.next(), parts.next())
            && let (Ok(line), Ok(column)) = (l.parse(), c.parse())
        {
            at = Some(crate::core::verdict::LineCol { line, column });
            rest = &tail[l.len() + 1 + c.len()..];
        }
    }
    if !pointer.is_empty()
        && let Some(r) = rest.strip_prefix(&format!(" at {pointer}"))
    {
        rest = r;
    }
    match rest.strip_prefix(' ') {
        Some(r) => (at, r.to_string()),
        None => (None, message.to_string()),
    }
}

/// Runs `lint` and writes the report. Returns whether no finding is an error.
///
/// # Errors
/// [`LintError`] when the run cannot proceed; I/O errors writing the report.
pub fn run(args: &LintArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    let profile = args.profile.as_deref().map(Profile::load).transpose()?;
    let paths: Vec<PathBuf> = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let mut findings = Vec::new();
    let mut unreadable = Vec::new();
    let mut drift = Vec::new();
    let mut schemas = 0;
    for p in &paths {
        if !p.exists() {
            return Err(LintError::NoSuchPath(p.clone()).into());
        }
        let root = find_root(p);
        let config = config_of(&root)?;
        let mut opts = LintOptions::from_config(&config);
        opts.profile = profile.as_ref();
        let files = if p.is_dir() {
            let schemas = root.join(&config.schemas);
            let dir = if p.join(&config.schemas).is_dir() {
                p.join(&config.schemas)
            } else if !args.paths.is_empty() || is_within(p, &schemas) {
                // a folder named on the command line (a folder of schemas), or the schemas
                // folder (or one below it) the command runs in
                p.clone()
            } else if schemas.is_dir() {
                // run elsewhere in a workspace (its captures folder): its schemas
                schemas
            } else {
                return Err(LintError::NoSchemas(p.clone(), schemas).into());
            };
            let mut files = Vec::new();
            for u in collect_files(
                &dir,
                &|f| f.extension().is_some_and(|e| e == "json"),
                &mut files,
            ) {
                // the folder itself stops the run; one below it is an error finding
                if u.depth == 0 {
                    return Err(LintError::Unreadable(u.path, u.error).into());
                }
                unreadable.push(LintFinding {
                    code: lint::codes::SCHEMA_UNREADABLE.into(),
                    severity: Severity::Error,
                    file: shown(&u.path),
                    pointer: String::new(),
                    at: None,
                    message: format!("cannot read this folder: {}", u.error),
                    hint: None,
                });
            }
            files.sort();
            files
        } else {
            vec![p.clone()]
        };
        let mut linted = Vec::new();
        for f in &files {
            // a rules file named on the command line is linted as rules, not as a schema
            if f.to_string_lossy().ends_with(".rules.toml") {
                findings.extend(lint_rules_file(&root, f));
                continue;
            }
            schemas += 1;
            let own = lint_file(f, &opts);
            // a file that is no schema at all says so once: it is not compiled as well
            if !own.iter().any(|x| x.code == lint::codes::SCHEMA_UNREADABLE) {
                linted.push(f.clone());
            }
            findings.extend(own);
        }
        findings.extend(compile_findings(&root, p, &config, &linted));
        if p.is_dir() {
            findings.extend(lint_rules(&root, &root.join(&config.schemas)));
            // the drift report: the schemas the captures' requests sent, against their
            // server contracts (a folder that does not open as a workspace has none)
            if let Ok(ws) = crate::core::workspace::Workspace::open(&root) {
                for v in crate::core::drift::report(&ws) {
                    drift.push(printer::DriftVariant::new(v, &|f| shown(&root.join(f))));
                }
            }
        }
    }
    findings.append(&mut unreadable);
    let summary = LintSummary::of(schemas, &findings).with_drift(&drift);
    let color = args.color.enabled();
    // JSON formats: DEL and the C1 controls escaped too (`docs/commands.md#untrusted-text`)
    let json = crate::core::escape::JsonSafe::new;
    match args.format {
        LintFormat::Human => printer::human(out, &findings, &drift, &summary, color)?,
        LintFormat::Json => printer::json(&mut json(&mut *out), &findings, &drift, &summary)?,
        LintFormat::Sarif => printer::sarif(&mut json(&mut *out), &findings, &drift)?,
        LintFormat::Github => printer::github(out, &findings, &drift, &summary)?,
    }
    out.flush()?;
    Ok(summary.errors == 0)
}
