//! Schema lint (`verdict lint`, `docs/verdicts.md` and 7): what in a schema checks nothing, checks
//! less than it seems, or can never pass. One file per finding family:
//!
//! * [`keywords`] has `FOREIGN_KEYWORD` (a keyword of another dialect, which the declared one
//!   ignores), `UNKNOWN_KEYWORD` (no dialect knows it; with "did you mean");
//! * [`mod@format`] has `FORMAT_NOT_ASSERTED`;
//! * [`shape`] has `OPEN_OBJECT`, `OPTIONAL_PROPERTY`, `EMPTY_OBJECT`, `UNSATISFIABLE_REQUIRED`;
//! * [`profile`] has `PROFILE_ROOT`, `PROFILE_OPTIONAL`, `PROFILE_OPEN_OBJECT`,
//!   `PROFILE_KEYWORD` (with `--profile`).
//!
//! The schema is walked as a tree of subschemas ([`walk`]), knowing which keywords hold
//! subschemas in each dialect. Every finding names the schema file, the JSON Pointer and
//! the line:column of the value at that pointer, and carries a fix hint. The lint of each
//! contract runs once when it loads; its findings ride on every verdict of the contract as
//! `warnings`, and `strict_schemas = true` turns the error- and warning-level ones into
//! `CONTRACT_ERROR` (info-level findings stay warnings).

pub mod format;
pub mod keywords;
pub mod profile;
pub mod rule_fields;
pub mod shape;
pub mod walk;

use crate::core::config::{Config, Dialect};
use crate::core::stage::parse;
use crate::core::verdict::{Finding, LineCol, Reason, Stage, Warning};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

pub use profile::Profile;

/// The stable finding codes.
pub mod codes {
    /// A keyword of another dialect, which the declared dialect ignores.
    pub const FOREIGN_KEYWORD: &str = "FOREIGN_KEYWORD";
    /// A keyword no dialect knows (a typo such as `minimun`).
    pub const UNKNOWN_KEYWORD: &str = "UNKNOWN_KEYWORD";
    /// `format` while format assertion is off.
    pub const FORMAT_NOT_ASSERTED: &str = "FORMAT_NOT_ASSERTED";
    /// An object schema without `additionalProperties`.
    pub const OPEN_OBJECT: &str = "OPEN_OBJECT";
    /// A declared property that is not required.
    pub const OPTIONAL_PROPERTY: &str = "OPTIONAL_PROPERTY";
    /// `type: object` that declares no properties.
    pub const EMPTY_OBJECT: &str = "EMPTY_OBJECT";
    /// A required name that cannot be present: not declared, extra properties forbidden.
    pub const UNSATISFIABLE_REQUIRED: &str = "UNSATISFIABLE_REQUIRED";
    /// Profile: the root is not an object, or is `anyOf`.
    pub const PROFILE_ROOT: &str = "PROFILE_ROOT";
    /// Profile: a property is not required.
    pub const PROFILE_OPTIONAL: &str = "PROFILE_OPTIONAL";
    /// Profile: an object without `additionalProperties: false`.
    pub const PROFILE_OPEN_OBJECT: &str = "PROFILE_OPEN_OBJECT";
    /// Profile: a keyword the provider does not support or ignores.
    pub const PROFILE_KEYWORD: &str = "PROFILE_KEYWORD";
    /// The schema file cannot be read or is not JSON (`verdict lint` only).
    pub const SCHEMA_UNREADABLE: &str = "SCHEMA_UNREADABLE";
    /// The schema file is JSON but does not compile as `check` compiles it: it breaks its
    /// meta-schema, names an unknown dialect, has an invalid or duplicate `$id`, or a `$ref`
    /// that does not resolve (`verdict lint` only; `check` reports it as `CONTRACT_ERROR`
    /// on the contract's captures).
    pub const SCHEMA_INVALID: &str = "SCHEMA_INVALID";
    /// A rules file (`NAME.rules.toml`) does not load: TOML, unknown keys, CEL that does not
    /// compile (`verdict lint` only; `check` reports it as `CONTRACT_ERROR`).
    pub const RULES_INVALID: &str = "RULES_INVALID";
    /// A rule reads a proposal member the schema does not define but nearly names
    /// (`proposal.amount_minr` beside `amount_minor`): at check time it would be a
    /// `RULE_ERROR` on every capture (`verdict lint` only).
    pub const RULES_UNKNOWN_FIELD: &str = "RULES_UNKNOWN_FIELD";
    /// Drift report (`verdict lint` on a workspace): a constraint the server contract has
    /// and the schema the request sent lacks (`core::drift`).
    pub const REQUEST_LOOSER: &str = crate::core::drift::REQUEST_LOOSER;
    /// Drift report: a constraint the sent schema adds to the server contract's.
    pub const REQUEST_STRICTER: &str = crate::core::drift::REQUEST_STRICTER;
    /// Drift report: an optional property of the server contract that the sent schema
    /// makes required and nullable.
    pub const REQUEST_NULLABLE_FOR_OPTIONAL: &str =
        crate::core::drift::REQUEST_NULLABLE_FOR_OPTIONAL;
    /// Every code, in documentation order.
    pub const ALL: [&str; 18] = [
        SCHEMA_UNREADABLE,
        SCHEMA_INVALID,
        RULES_INVALID,
        RULES_UNKNOWN_FIELD,
        FOREIGN_KEYWORD,
        UNKNOWN_KEYWORD,
        FORMAT_NOT_ASSERTED,
        OPEN_OBJECT,
        OPTIONAL_PROPERTY,
        EMPTY_OBJECT,
        UNSATISFIABLE_REQUIRED,
        PROFILE_ROOT,
        PROFILE_OPTIONAL,
        PROFILE_OPEN_OBJECT,
        PROFILE_KEYWORD,
        REQUEST_LOOSER,
        REQUEST_STRICTER,
        REQUEST_NULLABLE_FOR_OPTIONAL,
    ];
}

/// How bad a finding is. `lint` exits 1 when any finding is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The schema cannot do what it says (no instance passes, the provider rejects it).
    Error,
    /// Something is silently not checked.
    Warning,
    /// Worth knowing; often intended.
    Info,
}

impl Severity {
    /// `error`, `warning`, `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LintFinding {
    /// Stable code ([`codes`]).
    pub code: String,
    /// Severity.
    pub severity: Severity,
    /// The schema file, relative to the workspace (empty until [`lint_schema`] sets it).
    pub file: String,
    /// JSON Pointer inside the schema.
    pub pointer: String,
    /// Line:column of the value at `pointer` in the schema file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<LineCol>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl LintFinding {
    fn new(
        code: &'static str,
        severity: Severity,
        pointer: String,
        message: String,
        hint: Option<String>,
    ) -> Self {
        LintFinding {
            code: code.to_string(),
            severity,
            file: String::new(),
            pointer,
            at: None,
            message,
            hint,
        }
    }

    /// `file:line:column` (or `file` when the position is unknown).
    pub fn place(&self) -> String {
        match self.at {
            Some(at) => format!("{}:{}:{}", self.file, at.line, at.column),
            None => self.file.clone(),
        }
    }

    /// As a verdict warning (`docs/verdicts.md`).
    pub fn to_warning(&self) -> Warning {
        let mut message = self.message.clone();
        if let Some(h) = &self.hint {
            message = format!("{message} ({h})");
        }
        Warning {
            code: self.code.clone(),
            severity: Some(self.severity.as_str().to_string()),
            file: Some(self.file.clone()),
            pointer: Some(self.pointer.clone()),
            at: self.at,
            message,
        }
    }

    /// As a `CONTRACT_ERROR` (`strict_schemas = true`).
    pub fn to_contract_error(&self) -> Finding {
        let ptr = if self.pointer.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.pointer)
        };
        let mut f = Finding::new(
            Stage::Input,
            Reason::CONTRACT_ERROR,
            format!(
                "{}{ptr} {} [{}; strict_schemas is on]",
                self.place(),
                self.message,
                self.code
            ),
        );
        f.schema_path = Some(self.pointer.clone());
        f.hint = self.hint.clone();
        f
    }
}

/// What a lint run needs besides the schema.
#[derive(Debug, Clone, Copy, Default)]
pub struct LintOptions<'a> {
    /// Dialect of a schema without `$schema` (the workspace `dialect`).
    pub dialect: Dialect,
    /// Whether `format` is asserted (the workspace `format_assertion`).
    pub format_assertion: bool,
    /// A provider profile to check against.
    pub profile: Option<&'a Profile>,
    /// `verdict lint` does not walk a schema of more nodes than this (the workspace
    /// `max_schema_nodes`, `docs/verdicts.md#limits`).
    pub max_schema_nodes: u64,
}

impl<'a> LintOptions<'a> {
    /// The options of a workspace config, without a profile.
    pub fn from_config(config: &Config) -> LintOptions<'a> {
        LintOptions {
            dialect: config.dialect,
            format_assertion: config.format_assertion,
            profile: None,
            max_schema_nodes: config.max_schema_nodes,
        }
    }
}

/// The dialect a schema declares in `$schema`, else `default`. An unknown `$schema` gives
/// `default` (compiling the contract reports it).
pub fn declared_dialect(schema: &Value, default: Dialect) -> Dialect {
    let Some(uri) = schema.get("$schema").and_then(Value::as_str) else {
        return default;
    };
    match jsonschema::Draft::from_schema_uri(uri) {
        jsonschema::Draft::Draft4 => Dialect::Draft4,
        jsonschema::Draft::Draft6 => Dialect::Draft6,
        jsonschema::Draft::Draft7 => Dialect::Draft7,
        jsonschema::Draft::Draft201909 => Dialect::Draft201909,
        jsonschema::Draft::Draft202012 => Dialect::Draft202012,
        _ => default,
    }
}

/// Lints one schema: `file` is how findings name it, `text` its text (for line:column; a
/// text that parsed with `parse_strict`, as schema files are read).
/// Findings come in reading order (by line:column, then code).
pub fn lint_schema(
    file: &str,
    text: &str,
    schema: &Value,
    opts: &LintOptions<'_>,
) -> Vec<LintFinding> {
    let dialect = declared_dialect(schema, opts.dialect);
    let mut refs = Vec::new();
    keywords::refs(schema, &mut refs);
    let mut out = Vec::new();
    for node in walk::walk(schema, dialect) {
        keywords::check(&node, dialect, &refs, &mut out);
        format::check(&node, opts.format_assertion, &mut out);
        shape::check(&node, &mut out);
        if let Some(p) = opts.profile {
            p.check(&node, &mut out);
        }
    }
    // every finding located in ONE scan of the text (a scan per finding was quadratic:
    // 20,000 optional properties took minutes)
    let pointers: Vec<&str> = out.iter().map(|f| f.pointer.as_str()).collect();
    let spans = parse::locate_all_in_strict(text, &pointers);
    let lines = crate::core::text::LineIndex::new(text);
    for (f, span) in out.iter_mut().zip(spans) {
        f.file = file.to_string();
        f.at = span.map(|span| lines.line_col(span.start));
    }
    out.sort_by(|a, b| {
        let key = |f: &LintFinding| f.at.map(|a| (a.line, a.column));
        key(a).cmp(&key(b)).then_with(|| a.code.cmp(&b.code))
    });
    out
}
