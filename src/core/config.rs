//! The workspace config `verdict.toml` (`docs/config.md`). Every key is optional; an unknown key
//! is an error with a "did you mean" hint, so a typo never silently disables a setting.

use crate::core::hint::hint_for;
use crate::core::verdict::{Decision, Reason};
use serde::Deserialize;
use std::path::PathBuf;

/// Default `max_capture_bytes`: 16 MiB.
pub const DEFAULT_MAX_CAPTURE_BYTES: u64 = 16 * 1024 * 1024;

/// A JSON Schema dialect for schemas without `$schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// Draft 4.
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7.
    Draft7,
    /// 2019-09.
    Draft201909,
    /// 2020-12 (the default).
    #[default]
    Draft202012,
}

impl Dialect {
    /// The names accepted in `verdict.toml`.
    pub const NAMES: [&'static str; 5] = ["4", "6", "7", "2019-09", "2020-12"];

    /// Parses `"7"`, `"2020-12"` (also `"draft7"`, `"draft-07"`, `"draft2020-12"`).
    pub fn parse(s: &str) -> Option<Dialect> {
        let s = s.trim().trim_start_matches("draft").trim_start_matches('-');
        Some(match s.trim_start_matches('0') {
            "4" => Dialect::Draft4,
            "6" => Dialect::Draft6,
            "7" => Dialect::Draft7,
            "2019-09" => Dialect::Draft201909,
            "2020-12" => Dialect::Draft202012,
            _ => return None,
        })
    }

    /// The `jsonschema` draft.
    pub fn draft(self) -> jsonschema::Draft {
        match self {
            Dialect::Draft4 => jsonschema::Draft::Draft4,
            Dialect::Draft6 => jsonschema::Draft::Draft6,
            Dialect::Draft7 => jsonschema::Draft::Draft7,
            Dialect::Draft201909 => jsonschema::Draft::Draft201909,
            Dialect::Draft202012 => jsonschema::Draft::Draft202012,
        }
    }
}

/// `verdict.toml`, resolved: defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Folder of schemas and rules, relative to the workspace (`schemas`).
    pub schemas: PathBuf,
    /// Folders or files of captures, relative to the workspace (`["captures"]`).
    pub captures: Vec<PathBuf>,
    /// Contract for captures that name none.
    pub default_contract: Option<String>,
    /// Dialect of schemas without `$schema` (2020-12).
    pub dialect: Dialect,
    /// Whether `format` is asserted (false, as the spec says for 2019-09 and later).
    pub format_assertion: bool,
    /// Larger capture records get `INVALID_CAPTURE` before they are parsed (16 MiB).
    pub max_capture_bytes: u64,
    /// Lint findings become `CONTRACT_ERROR` instead of warnings.
    pub strict_schemas: bool,
    /// A contract whose schema has more nodes than this with every `$ref` inlined is
    /// `CONTRACT_ERROR`, never compiled (200,000; [`crate::core::schema_budget`]).
    pub max_schema_nodes: u64,
    /// `[[source]]` tables, in file order (`docs/config.md#source`).
    pub sources: Vec<Source>,
    /// `[[route]]` tables, in file order (`docs/config.md#route`).
    pub routes: Vec<Route>,
    /// `[[join]]` globs of trusted-data files (`docs/config.md#join`).
    pub joins: Vec<Pattern>,
    /// `[decisions]`: built-in reasons whose default decision is overridden
    /// (`docs/config.md#decisions`), in file order.
    pub decisions: Vec<(Reason, Decision)>,
    /// `[chains]`: how captures are linked into self-correction chains
    /// (`docs/chains.md#linking`).
    pub chains: ChainsConfig,
    /// `[budget]`: the attempt and token budget of one chain (`docs/chains.md#flags`).
    pub budget: Budget,
    /// `[repairs] allow`: the repairs tried on a failing capture, in table order
    /// (`docs/config.md#repairs`, `docs/repairs.md`); default every one.
    pub repairs: Vec<crate::core::repair::RepairName>,
}

/// `[chains]` in `verdict.toml` (`docs/chains.md#linking`): a capture's own `chain` and
/// `attempt` keys win over these.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChainsConfig {
    /// `by`: a JSON Pointer (RFC 6901) into the record as read (`"/custom_id"`,
    /// `"/meta/trace_id"`); a string or integer there is the chain's id.
    pub by: Option<String>,
    /// `pattern`: a regex over the capture's id with the named group `chain` and optionally
    /// `attempt` (`^(?P<chain>.+)#(?P<attempt>\d+)$`).
    pub pattern: Option<ChainPattern>,
    /// `order`: a JSON Pointer into the record as read to a number or an RFC 3339
    /// timestamp that orders a chain's attempts (default: attempt number, else file name,
    /// then line).
    pub order: Option<String>,
}

/// A compiled `[chains] pattern` (the `regex` crate's syntax).
#[derive(Debug, Clone)]
pub struct ChainPattern {
    /// The regex as written.
    pub text: String,
    /// The compiled regex.
    pub regex: regex::Regex,
}

impl PartialEq for ChainPattern {
    fn eq(&self, other: &ChainPattern) -> bool {
        self.text == other.text
    }
}

/// `[budget]` in `verdict.toml` (`docs/chains.md#flags`): a chain over either is flagged
/// `over-budget`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// `max_attempts`: the most attempts a chain may take (at least 1).
    pub max_attempts: Option<u64>,
    /// `max_tokens`: the most tokens (summed over its attempts' `meta.usage`) a chain may
    /// spend (at least 1).
    pub max_tokens: Option<u64>,
}

/// A glob over `/`-separated, workspace-relative paths (or over names: tool, id, model):
/// `*` and `?` stay inside one path component, `**` crosses them, `{a,b}` and `[ab]` work
/// (the `globset` crate's syntax).
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The glob as written.
    pub text: String,
    matcher: globset::GlobMatcher,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.text == other.text
    }
}

impl Pattern {
    /// Compiles `text`.
    ///
    /// # Errors
    /// The glob's syntax error, as `globset` words it.
    pub fn new(text: &str) -> Result<Pattern, String> {
        let glob = globset::GlobBuilder::new(text)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| e.kind().to_string())?;
        Ok(Pattern {
            text: text.to_owned(),
            matcher: glob.compile_matcher(),
        })
    }

    /// Whether `s` (a workspace-relative `/`-separated path, or a name) matches.
    pub fn matches(&self, s: &str) -> bool {
        self.matcher.is_match(s)
    }
}

/// One `[[source]]` table: how the files its glob matches are read
/// (`docs/config.md#source`).
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The files it applies to (workspace-relative glob).
    pub path: Pattern,
    /// The record shape forced on every record of those files (a [`crate::core::shape`]
    /// format name, or `bedrock-converse`, `ollama`, `cohere`: the response shape with that
    /// provider); `None`: detected record by record.
    pub format: Option<String>,
    /// Which tool call is the proposal, for every record of those files that names none.
    pub tool: Option<String>,
    /// The contract of every record of those files.
    pub contract: Option<String>,
    /// The batch input files the results of those files join their requests in
    /// (workspace-relative glob; `docs/requests.md#batch-input-files`): only these, not
    /// the input file their name pairs with, nor the workspace's other input files.
    pub requests: Option<Pattern>,
}

/// One `[[route]]` table: a contract for the records all of whose given keys match
/// (`docs/config.md#route`).
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// The contract chosen.
    pub contract: String,
    /// The called tool's name (glob).
    pub tool: Option<Pattern>,
    /// The capture's id (glob).
    pub id: Option<Pattern>,
    /// The model the response names (glob).
    pub model: Option<Pattern>,
    /// The capture's file, workspace-relative (glob).
    pub path: Option<Pattern>,
}

/// The formats a `[[source]]` may force that are not shapes of their own: bare responses of
/// these providers, read by the response shape with that provider
/// (`docs/record-shapes.md#record-shapes`).
pub const PROVIDER_FORMATS: [&str; 3] = ["bedrock-converse", "ollama", "cohere"];

/// Every `format` a `[[source]]` accepts: the shapes' formats, then [`PROVIDER_FORMATS`].
pub fn source_formats() -> Vec<&'static str> {
    crate::core::shape::formats()
        .chain(PROVIDER_FORMATS)
        .collect()
}

impl Default for Config {
    fn default() -> Self {
        Config {
            schemas: PathBuf::from("schemas"),
            captures: vec![PathBuf::from("captures")],
            default_contract: None,
            dialect: Dialect::default(),
            format_assertion: false,
            max_capture_bytes: DEFAULT_MAX_CAPTURE_BYTES,
            strict_schemas: false,
            max_schema_nodes: crate::core::schema_budget::DEFAULT_MAX_SCHEMA_NODES,
            sources: Vec::new(),
            routes: Vec::new(),
            joins: Vec::new(),
            decisions: Vec::new(),
            chains: ChainsConfig::default(),
            budget: Budget::default(),
            repairs: crate::core::repair::RepairName::ALL.to_vec(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    schemas: Option<PathBuf>,
    captures: Option<OneOrMany>,
    default_contract: Option<String>,
    dialect: Option<String>,
    format_assertion: Option<bool>,
    max_capture_bytes: Option<u64>,
    strict_schemas: Option<bool>,
    max_schema_nodes: Option<u64>,
    source: Option<Vec<RawSource>>,
    route: Option<Vec<RawRoute>>,
    join: Option<Vec<RawJoin>>,
    decisions: Option<toml::Table>,
    chains: Option<RawChains>,
    budget: Option<RawBudget>,
    repairs: Option<RawRepairs>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepairs {
    allow: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChains {
    by: Option<String>,
    pattern: Option<String>,
    order: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBudget {
    max_attempts: Option<u64>,
    max_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    path: String,
    format: Option<String>,
    tool: Option<String>,
    contract: Option<String>,
    requests: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    contract: String,
    tool: Option<String>,
    id: Option<String>,
    model: Option<String>,
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJoin {
    path: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

const KEYS: [&str; 15] = [
    "schemas",
    "captures",
    "default_contract",
    "dialect",
    "format_assertion",
    "max_capture_bytes",
    "strict_schemas",
    "max_schema_nodes",
    "source",
    "route",
    "join",
    "decisions",
    "chains",
    "budget",
    "repairs",
];

/// The keys serde says it expected, from its "unknown field `x`, expected one of `a`, `b`"
/// (or "expected `a`"): a nested table's keys.
fn expected_keys(message: &str) -> Vec<&str> {
    let Some((_, rest)) = message.split_once("expected ") else {
        return Vec::new();
    };
    rest.split('`')
        .skip(1)
        .step_by(2)
        .filter(|k| !k.is_empty())
        .collect()
}

/// A `verdict.toml` that cannot be used: the message names the key and gives a hint.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// What is wrong, with line and column when TOML gave them.
    pub message: String,
}

impl Config {
    /// Parses the text of a `verdict.toml`.
    ///
    /// # Errors
    /// A TOML syntax error, a value of the wrong type, an unknown key (with a "did you mean"
    /// hint), an unknown dialect, or a zero `max_capture_bytes`.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let mut message = e.message().trim_end().to_string();
            // a nested table's unknown key: serde names the keys it expected
            let nested = expected_keys(&message);
            let keys: Vec<&str> = if nested.is_empty() {
                KEYS.to_vec()
            } else {
                nested
            };
            if let Some(unknown) = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
            {
                message = match hint_for(unknown, keys.iter().copied()) {
                    Some(h) => format!("unknown key `{unknown}` ({h})"),
                    None => format!("unknown key `{unknown}`; known keys: {}", keys.join(", ")),
                };
            }
            if let Some(span) = e.span() {
                let at = crate::core::text::line_col(text, span.start);
                // a value of the wrong type: name its key (`requests = 5`)
                let before = text.get(..span.start).unwrap_or("");
                let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
                let key = line
                    .trim_end()
                    .strip_suffix('=')
                    .map(str::trim)
                    .filter(|k| {
                        !k.is_empty()
                            && k.chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    });
                if let Some(k) = key {
                    message = format!("`{k}`: {message}");
                }
                message = format!("line {}, column {}: {message}", at.line, at.column);
            }
            ConfigError { message }
        })?;
        let mut config = Config::default();
        if let Some(s) = raw.schemas {
            config.schemas = s;
        }
        match raw.captures {
            Some(OneOrMany::One(p)) => config.captures = vec![p],
            Some(OneOrMany::Many(v)) => config.captures = v,
            None => {}
        }
        config.default_contract = raw.default_contract;
        if let Some(d) = raw.dialect {
            config.dialect = Dialect::parse(&d).ok_or_else(|| ConfigError {
                message: format!(
                    "unknown dialect {d:?}; use one of {}",
                    Dialect::NAMES.map(|n| format!("\"{n}\"")).join(", ")
                ),
            })?;
        }
        if let Some(f) = raw.format_assertion {
            config.format_assertion = f;
        }
        if let Some(m) = raw.max_capture_bytes {
            if m == 0 {
                return Err(ConfigError {
                    message: "max_capture_bytes must be at least 1".into(),
                });
            }
            config.max_capture_bytes = m;
        }
        if let Some(m) = raw.max_schema_nodes {
            if m == 0 {
                return Err(ConfigError {
                    message: "max_schema_nodes must be at least 1".into(),
                });
            }
            config.max_schema_nodes = m;
        }
        if let Some(s) = raw.strict_schemas {
            config.strict_schemas = s;
        }
        let pattern = |table: &str, n: usize, key: &str, text: &str| {
            Pattern::new(text).map_err(|e| ConfigError {
                message: format!("[[{table}]] {n}: `{key}` is not a valid glob ({text:?}): {e}"),
            })
        };
        for (i, s) in raw.source.unwrap_or_default().into_iter().enumerate() {
            let n = i + 1;
            if let Some(f) = &s.format
                && !source_formats().contains(&f.as_str())
            {
                let known = source_formats();
                let hint = hint_for(f, known.iter().copied())
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                return Err(ConfigError {
                    message: format!(
                        "[[source]] {n}: unknown `format` {f:?}{hint}; formats: {}",
                        known.join(", ")
                    ),
                });
            }
            config.sources.push(Source {
                path: pattern("source", n, "path", &s.path)?,
                format: s.format,
                tool: s.tool,
                contract: s.contract,
                requests: s
                    .requests
                    .map(|t| pattern("source", n, "requests", &t))
                    .transpose()?,
            });
        }
        for (i, r) in raw.route.unwrap_or_default().into_iter().enumerate() {
            let n = i + 1;
            let opt =
                |key: &str, v: Option<String>| v.map(|t| pattern("route", n, key, &t)).transpose();
            config.routes.push(Route {
                contract: r.contract,
                tool: opt("tool", r.tool)?,
                id: opt("id", r.id)?,
                model: opt("model", r.model)?,
                path: opt("path", r.path)?,
            });
        }
        for (i, j) in raw.join.unwrap_or_default().into_iter().enumerate() {
            config.joins.push(pattern("join", i + 1, "path", &j.path)?);
        }
        for (reason, decision) in raw.decisions.unwrap_or_default() {
            let codes = Reason::BUILT_IN.iter().map(|r| r.as_str());
            if !Reason::BUILT_IN.iter().any(|r| r.as_str() == reason) {
                let hint = hint_for(&reason, codes)
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                return Err(ConfigError {
                    message: format!(
                        "[decisions]: unknown reason `{reason}`{hint}; a built-in reason's code (docs/verdicts.md#reasons)"
                    ),
                });
            }
            let names = Decision::ALL.map(Decision::as_str);
            let parsed = decision.as_str().and_then(Decision::parse);
            let Some(d) = parsed else {
                let hint = decision
                    .as_str()
                    .and_then(|s| hint_for(s, names))
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                return Err(ConfigError {
                    message: format!(
                        "[decisions]: `{reason}` = {decision} is not a decision{hint}; decisions: {}",
                        names.join(", ")
                    ),
                });
            };
            config.decisions.push((Reason::new(reason), d));
        }
        if let Some(c) = raw.chains {
            config.chains = chains_config(c)?;
        }
        if let Some(b) = raw.budget {
            for (key, v) in [
                ("max_attempts", b.max_attempts),
                ("max_tokens", b.max_tokens),
            ] {
                if v == Some(0) {
                    return Err(ConfigError {
                        message: format!("[budget] `{key}` must be at least 1"),
                    });
                }
            }
            config.budget = Budget {
                max_attempts: b.max_attempts,
                max_tokens: b.max_tokens,
            };
        }
        if let Some(allow) = raw.repairs.and_then(|r| r.allow) {
            config.repairs = repairs_allowed(&allow)?;
        }
        Ok(config)
    }

    /// The `[[source]]` tables whose glob matches `rel` (a workspace-relative path), in order.
    pub fn sources_for<'a>(&'a self, rel: &'a str) -> impl Iterator<Item = (usize, &'a Source)> {
        self.sources
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.path.matches(rel))
            .map(|(i, s)| (i + 1, s))
    }

    /// The `requests` glob of the first `[[source]]` table matching `rel` that gives one
    /// (`docs/config.md#source`).
    pub fn requests_for(&self, rel: &str) -> Option<&Pattern> {
        self.sources
            .iter()
            .filter(|s| s.path.matches(rel))
            .find_map(|s| s.requests.as_ref())
    }

    /// The decision `[decisions]` gives `reason` instead of its default, if any.
    pub fn decision_for(&self, reason: &Reason) -> Option<Decision> {
        self.decisions
            .iter()
            .find(|(r, _)| r == reason)
            .map(|&(_, d)| d)
    }
}

/// Reads `[repairs] allow`: every name a repair's (`docs/repairs.md#the-table`), kept in
/// table order whatever the order written.
fn repairs_allowed(allow: &[String]) -> Result<Vec<crate::core::repair::RepairName>, ConfigError> {
    use crate::core::repair::RepairName;
    let names = RepairName::ALL.map(RepairName::as_str);
    let mut out = Vec::new();
    for a in allow {
        let Some(r) = RepairName::parse(a) else {
            let hint = hint_for(a, names)
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            return Err(ConfigError {
                message: format!(
                    "[repairs] `allow`: unknown repair {a:?}{hint}; repairs: {} (docs/repairs.md)",
                    names.join(", ")
                ),
            });
        };
        out.push(r);
    }
    Ok(RepairName::ALL
        .into_iter()
        .filter(|r| out.contains(r))
        .collect())
}

/// Checks `[chains]`: `by` and `order` are JSON Pointers, `pattern` compiles and has the
/// named group `chain`; `by` and `pattern` are not both given.
fn chains_config(c: RawChains) -> Result<ChainsConfig, ConfigError> {
    let err = |message: String| ConfigError { message };
    for (key, v) in [("by", &c.by), ("order", &c.order)] {
        if let Some(p) = v
            && !(p.is_empty() || p.starts_with('/'))
        {
            return Err(err(format!(
                "[chains] `{key}` = {p:?} is not a JSON Pointer: it must be empty or start with `/` (e.g. \"/custom_id\")"
            )));
        }
    }
    if c.by.is_some() && c.pattern.is_some() {
        return Err(err(
            "[chains]: give `by` or `pattern`, not both (docs/chains.md#linking)".into(),
        ));
    }
    let pattern = match c.pattern {
        None => None,
        Some(text) => {
            let regex = regex::Regex::new(&text).map_err(|e| {
                let why = e.to_string();
                let last = why.lines().last().unwrap_or_default().trim().to_string();
                err(format!(
                    "[chains] `pattern` does not compile ({text:?}): {last}"
                ))
            })?;
            let names: Vec<&str> = regex.capture_names().flatten().collect();
            if !names.contains(&"chain") {
                return Err(err(format!(
                    "[chains] `pattern` ({text:?}) has no named group `chain`: write `(?P<chain>...)`, and `(?P<attempt>\\d+)` for the attempt number"
                )));
            }
            Some(ChainPattern { text, regex })
        }
    };
    Ok(ChainsConfig {
        by: c.by,
        pattern,
        order: c.order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_config_is_the_defaults() {
        assert_eq!(Config::from_toml("").unwrap(), Config::default());
    }

    #[test]
    fn chains_and_budget_are_read_and_checked() {
        let c = Config::from_toml(
            "[chains]\npattern = '^(?P<chain>.+)#(?P<attempt>\\d+)$'\norder = \"/meta/ts\"\n\
             [budget]\nmax_attempts = 3\nmax_tokens = 900\n",
        )
        .unwrap();
        let p = c.chains.pattern.as_ref().unwrap();
        assert_eq!(p.text, "^(?P<chain>.+)#(?P<attempt>\\d+)$");
        assert!(p.regex.is_match("r-1#2"));
        assert_eq!(c.chains.order.as_deref(), Some("/meta/ts"));
        assert_eq!(
            c.budget,
            Budget {
                max_attempts: Some(3),
                max_tokens: Some(900)
            }
        );
        let err = |t: &str| Config::from_toml(t).unwrap_err().message;
        assert_eq!(
            err("[chains]\npattern = '(?P<chain>'\n"),
            "[chains] `pattern` does not compile (\"(?P<chain>\"): error: unclosed group"
        );
        assert_eq!(
            err("[chains]\npattern = '(?P<c>.+)'\n"),
            "[chains] `pattern` (\"(?P<c>.+)\") has no named group `chain`: write `(?P<chain>...)`, and `(?P<attempt>\\d+)` for the attempt number"
        );
        assert_eq!(
            err("[chains]\nby = 'custom_id'\n"),
            "[chains] `by` = \"custom_id\" is not a JSON Pointer: it must be empty or start with `/` (e.g. \"/custom_id\")"
        );
        assert_eq!(
            err("[chains]\nby = '/a'\npattern = '(?P<chain>.+)'\n"),
            "[chains]: give `by` or `pattern`, not both (docs/chains.md#linking)"
        );
        assert_eq!(
            err("[budget]\nmax_attempts = 0\n"),
            "[budget] `max_attempts` must be at least 1"
        );
        assert!(err("[chains]\nordr = '/a'\n").contains("unknown key `ordr`"));
    }

    #[test]
    fn every_key_is_read() {
        let c = Config::from_toml(
            "schemas = \"contracts\"\ncaptures = [\"a\", \"b.jsonl\"]\ndefault_contract = \"refund-v1\"\n\
             dialect = \"7\"\nformat_assertion = true\nmax_capture_bytes = 1024\nstrict_schemas = true\n",
        )
        .unwrap();
        assert_eq!(c.schemas, PathBuf::from("contracts"));
        assert_eq!(
            c.captures,
            vec![PathBuf::from("a"), PathBuf::from("b.jsonl")]
        );
        assert_eq!(c.default_contract.as_deref(), Some("refund-v1"));
        assert_eq!(c.dialect, Dialect::Draft7);
        assert!(c.format_assertion && c.strict_schemas);
        assert_eq!(c.max_capture_bytes, 1024);
        assert_eq!(
            Config::from_toml("captures = \"logs\"").unwrap().captures,
            vec![PathBuf::from("logs")]
        );
    }

    #[test]
    fn unknown_key_gets_a_hint_and_position() {
        let e = Config::from_toml("schemas = \"s\"\nformat_asertion = true\n").unwrap_err();
        assert_eq!(
            e.message,
            "line 2, column 1: unknown key `format_asertion` (did you mean `format_assertion`?)"
        );
    }

    #[test]
    fn tables_are_read_in_order() {
        let c = Config::from_toml(
            "[[source]]\npath = \"b/*.jsonl.out\"\nformat = \"cohere\"\ntool = \"t\"\ncontract = \"c\"\n\
             [[route]]\ncontract = \"r\"\ntool = \"open_*\"\nid = \"i\"\nmodel = \"m\"\npath = \"p/**\"\n\
             [[join]]\npath = \"joins/*.jsonl\"\n[decisions]\nREFUSAL = \"retry\"\n",
        )
        .unwrap();
        assert_eq!(c.sources.len(), 1);
        let s = &c.sources[0];
        assert_eq!(
            (
                s.format.as_deref(),
                s.tool.as_deref(),
                s.contract.as_deref()
            ),
            (Some("cohere"), Some("t"), Some("c"))
        );
        assert!(s.path.matches("b/x.jsonl.out") && !s.path.matches("b/c/x.jsonl.out"));
        assert_eq!(
            c.sources_for("b/x.jsonl.out")
                .map(|(n, _)| n)
                .collect::<Vec<_>>(),
            [1]
        );
        let r = &c.routes[0];
        assert_eq!(r.contract, "r");
        assert!(r.tool.as_ref().unwrap().matches("open_ticket"));
        assert!(r.path.as_ref().unwrap().matches("p/a/b.json"));
        assert_eq!(r.id.as_ref().unwrap().text, "i");
        assert_eq!(r.model.as_ref().unwrap().text, "m");
        assert_eq!(c.joins[0].text, "joins/*.jsonl");
        assert_eq!(c.decision_for(&Reason::REFUSAL), Some(Decision::Retry));
        assert_eq!(c.decision_for(&Reason::SCHEMA_MISMATCH), None);
        // a required key missing
        let e = Config::from_toml("[[route]]\ntool = \"x\"\n").unwrap_err();
        assert!(
            e.message.contains("missing field `contract`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn repairs_allow_is_read_in_table_order_and_checked() {
        use crate::core::repair::RepairName;
        assert_eq!(Config::default().repairs, RepairName::ALL.to_vec());
        let c =
            Config::from_toml("[repairs]\nallow = [\"drop-unknown\", \"strip-fence\"]\n").unwrap();
        assert_eq!(c.repairs, [RepairName::StripFence, RepairName::DropUnknown]);
        assert!(
            Config::from_toml("[repairs]\nallow = []\n")
                .unwrap()
                .repairs
                .is_empty()
        );
        assert_eq!(
            Config::from_toml("[repairs]\nallow = [\"strip-fences\"]\n")
                .unwrap_err()
                .message,
            "[repairs] `allow`: unknown repair \"strip-fences\" (did you mean `strip-fence`?); repairs: strip-fence, drop-trailing, unquote-number, enum-case, drop-unknown, decode-string (docs/repairs.md)"
        );
        let e = Config::from_toml("[repairs]\nalow = []\n")
            .unwrap_err()
            .message;
        assert!(
            e.contains("unknown key `alow` (did you mean `allow`?)"),
            "{e}"
        );
    }

    #[test]
    fn bad_dialect_and_types_are_errors() {
        let e = Config::from_toml("dialect = \"2021\"").unwrap_err();
        assert!(
            e.message.starts_with("unknown dialect \"2021\""),
            "{}",
            e.message
        );
        let e = Config::from_toml("format_assertion = \"yes\"").unwrap_err();
        assert!(e.message.contains("line 1"), "{}", e.message);
    }
}
