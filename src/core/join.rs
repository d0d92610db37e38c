//! `[[join]]` files (`docs/config.md#join`): trusted `context`, `intent` and `expect` (and
//! `tool`, `contract`) for captures whose records carry none, keyed by capture id, so that
//! business rules, the intent comparison and `expect` run on batch lines and bare responses.
//!
//! A join file is JSONL, whatever its extension: one object per non-blank line,
//! `{"id": "..", "context": {..}, "intent": {..}, "expect": {..}, "tool": "..", "contract": ".."}`
//! (only `id` is required). It is read with the capture files' bounded, non-blocking
//! reading ([`capture::open_regular`], `max_capture_bytes` per line). A file or line that
//! cannot be used is a [`JoinError`] naming `file:line`: the workspace cannot be opened
//! (exit 2), as with an invalid `verdict.toml`, because a join that silently dropped its
//! trusted data would let a batch line skip its business checks.

use crate::core::capture::{self, parse_expect};
use crate::core::config::Pattern;
use crate::core::escape::quote;
use crate::core::hint::hint_for;
use crate::core::stage::parse;
use crate::core::text::json_kind;
use crate::core::verdict::Expect;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// The keys of a join line.
pub const JOIN_KEYS: [&str; 6] = ["id", "context", "intent", "expect", "tool", "contract"];

/// One join line: the trusted data of the capture with its `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinLine {
    /// Where it was read: `joins/a.jsonl:3`.
    pub at: String,
    /// Trusted context for rules.
    pub context: Option<Map<String, Value>>,
    /// The confirmed intent.
    pub intent: Option<Map<String, Value>>,
    /// The expected verdict.
    pub expect: Option<Expect>,
    /// Which tool call is the proposal.
    pub tool: Option<String>,
    /// The contract.
    pub contract: Option<String>,
}

/// Every join line of a workspace, by capture id.
#[derive(Debug, Clone, Default)]
pub struct Joins {
    /// The lines, by the capture id they join.
    pub by_id: HashMap<String, JoinLine>,
    /// The join files read, workspace-relative, sorted.
    pub files: Vec<String>,
}

/// A join file or line that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", crate::core::escape::for_terminal(at))]
pub struct JoinError {
    /// `joins/a.jsonl:3` (or the file alone when it cannot be read).
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl Joins {
    /// Reads the join files under `root` that `patterns` match (workspace-relative globs).
    /// `rel` names a path workspace-relative.
    ///
    /// # Errors
    /// The first file or line that cannot be used: unreadable, over `max_bytes`, not strict
    /// JSON, not an object, an unknown key (with a "did you mean" hint), a key of the wrong
    /// type, a missing or empty `id`, or an id two lines join.
    pub fn load(
        root: &Path,
        patterns: &[Pattern],
        rel: &dyn Fn(&Path) -> String,
        max_bytes: u64,
    ) -> Result<Joins, JoinError> {
        let mut joins = Joins::default();
        if patterns.is_empty() {
            return Ok(joins);
        }
        let mut files: Vec<PathBuf> = Vec::new();
        let unreadable = crate::core::workspace::collect_files(
            root,
            &|p| {
                let r = rel(p);
                patterns.iter().any(|g| g.matches(&r))
            },
            &mut files,
        );
        // a folder that cannot be read may hold join files: never a silent gap
        if let Some(u) = unreadable.first() {
            return Err(JoinError {
                at: rel(&u.path),
                message: format!(
                    "cannot read this folder to look for join files: {}",
                    u.error
                ),
            });
        }
        for f in files {
            let name = rel(&f);
            let (file, _) = capture::open_sized(&f).map_err(|message| JoinError {
                at: name.clone(),
                message: format!("cannot read join file: {message}"),
            })?;
            let mut failed = None;
            capture::read_lines(
                BufReader::with_capacity(64 * 1024, file),
                max_bytes,
                |n, line| {
                    if failed.is_some() {
                        return;
                    }
                    let at = format!("{name}:{n}");
                    let res = line
                        .map_err(|f| f.message)
                        .and_then(|text| read_line(&text, &at))
                        .and_then(|(id, line)| match joins.by_id.get(&id) {
                            Some(first) => Err(format!(
                                "id {} is joined twice (first at {})",
                                quote(&id, 80),
                                first.at
                            )),
                            None => {
                                joins.by_id.insert(id, line);
                                Ok(())
                            }
                        });
                    if let Err(message) = res {
                        failed = Some(JoinError { at, message });
                    }
                },
            );
            if let Some(e) = failed {
                return Err(e);
            }
            joins.files.push(name);
        }
        Ok(joins)
    }

    /// Whether a workspace-relative path is one of the join files.
    pub fn is_join_file(&self, rel: &str) -> bool {
        self.files.iter().any(|f| f == rel)
    }
}

/// One join line's id and data.
pub(crate) fn read_line(text: &str, at: &str) -> Result<(String, JoinLine), String> {
    let value = parse::parse_strict(text).map_err(|f| {
        let pos = f.at.map(|a| format!(" at {a}")).unwrap_or_default();
        format!("join line is not valid JSON{pos}: {}", f.message)
    })?;
    let Value::Object(mut obj) = value else {
        return Err(format!(
            "a join line must be a JSON object, found {}",
            json_kind(&value)
        ));
    };
    if let Some(k) = obj.keys().find(|k| !JOIN_KEYS.contains(&k.as_str())) {
        let hint = hint_for(k, JOIN_KEYS)
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        return Err(format!(
            "unknown key {} in join line{hint}; keys: {}",
            quote(k, 60),
            JOIN_KEYS.join(", ")
        ));
    }
    let string = |obj: &Map<String, Value>, key: &str| match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(format!("`{key}` must be a string, found {}", json_kind(v))),
    };
    let object = |obj: &mut Map<String, Value>, key: &str| match obj.remove(key) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(v) => Err(format!(
            "`{key}` must be an object, found {}",
            json_kind(&v)
        )),
    };
    let id = match string(&obj, "id")? {
        Some(id) if !id.is_empty() => id,
        Some(_) => return Err("`id` must not be empty".into()),
        None => return Err("a join line needs `id` (the capture id it joins)".into()),
    };
    let expect = obj
        .get("expect")
        .map(parse_expect)
        .transpose()
        .map_err(|f| f.message)?;
    let line = JoinLine {
        at: at.to_owned(),
        tool: string(&obj, "tool")?,
        contract: string(&obj, "contract")?,
        context: object(&mut obj, "context")?,
        intent: object(&mut obj, "intent")?,
        expect,
    };
    Ok((id, line))
}
