//! The workspace config `verdict.toml` (`docs/config.md`). Every key is optional; an unknown key
//! is an error with a "did you mean" hint, so a typo never silently disables a setting.

use crate::core::hint::hint_for;
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
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

const KEYS: [&str; 7] = [
    "schemas",
    "captures",
    "default_contract",
    "dialect",
    "format_assertion",
    "max_capture_bytes",
    "strict_schemas",
];

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
            if let Some(unknown) = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
                && let Some(h) = hint_for(unknown, KEYS)
            {
                message = format!("unknown key `{unknown}` ({h})");
            } else if message.starts_with("unknown field") {
                message = format!("{message}; known keys: {}", KEYS.join(", "));
            }
            if let Some(span) = e.span() {
                let at = crate::core::text::line_col(text, span.start);
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
        if let Some(s) = raw.strict_schemas {
            config.strict_schemas = s;
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_config_is_the_defaults() {
        assert_eq!(Config::from_toml("").unwrap(), Config::default());
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
