//! Provider profiles (`verdict lint --profile NAME`): what a provider's structured-output
//! mode rejects or ignores. Each profile is a data file in `profiles/` (bundled into the
//! binary) naming the documentation page it was read from and the date; a path to a
//! `.toml` file of the same shape works too.
//!
//! Codes: `PROFILE_ROOT` (the root is not an object, or is `anyOf`), `PROFILE_OPTIONAL`
//! (a property is not required), `PROFILE_OPEN_OBJECT` (an object without
//! `additionalProperties: false`), `PROFILE_KEYWORD` (a keyword the provider does not
//! support).

use super::shape::is_object_schema;
use super::walk::{Node, escape};
use super::{LintFinding, Severity, codes};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// The bundled profiles: name and TOML text.
pub const BUNDLED: [(&str, &str); 3] = [
    (
        "openai-strict",
        include_str!("../../../profiles/openai-strict.toml"),
    ),
    (
        "anthropic",
        include_str!("../../../profiles/anthropic.toml"),
    ),
    ("gemini", include_str!("../../../profiles/gemini.toml")),
];

/// One provider profile (a `profiles/*.toml` file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name (`openai-strict`).
    pub name: String,
    /// What it describes (`OpenAI Structured Outputs (strict: true)`).
    pub provider: String,
    /// The documentation page the rules were read from.
    pub source: String,
    /// When it was read (ISO date).
    pub read_on: String,
    /// Pages that quote or apply the source, where the source was read through them.
    #[serde(default)]
    pub corroborated_by: Vec<String>,
    /// Severity of every finding: `error` when the provider rejects the schema or does not
    /// hold the model to it, `warning` when it silently ignores the keyword.
    pub severity: Severity,
    /// The root must be an object (and not `anyOf`).
    #[serde(default)]
    pub root_object: bool,
    /// Every declared property must be in `required`.
    #[serde(default)]
    pub all_required: bool,
    /// Every object must say `additionalProperties: false`.
    #[serde(default)]
    pub closed_objects: bool,
    /// Keywords the provider does not support (a denylist).
    #[serde(default)]
    pub unsupported: Vec<String>,
    /// Keywords the provider supports (an allowlist: any other keyword is reported).
    #[serde(default)]
    pub supported: Option<Vec<String>>,
    /// With `supported`: keywords never reported.
    #[serde(default)]
    pub neutral: Vec<String>,
}

/// Why a profile cannot be used (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ProfileError(pub String);

impl Profile {
    /// A bundled profile by name, or a profile file by path.
    ///
    /// # Errors
    /// Neither a bundled name nor a readable, valid profile file.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some((_, text)) = BUNDLED.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text);
        }
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            let text = crate::core::bounded::read_to_string(path)
                .map_err(|e| ProfileError(format!("cannot read {name_or_path}: {e}")))?;
            return Profile::parse(&text).map_err(|e| ProfileError(format!("{name_or_path}: {e}")));
        }
        let names: Vec<&str> = BUNDLED.iter().map(|(n, _)| *n).collect();
        let hint = crate::core::hint::hint_for(name_or_path, names.iter().copied())
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        Err(ProfileError(format!(
            "unknown profile {name_or_path:?}{hint}; profiles: {}, or a path to a .toml profile",
            names.join(", ")
        )))
    }

    /// Parses a profile file's text.
    ///
    /// # Errors
    /// Invalid TOML or a missing or unknown key.
    pub fn parse(text: &str) -> Result<Profile, ProfileError> {
        toml::from_str(text).map_err(|e| ProfileError(e.message().trim_end().to_string()))
    }

    fn finding(
        &self,
        code: &'static str,
        pointer: String,
        message: String,
        hint: String,
    ) -> LintFinding {
        LintFinding::new(
            code,
            self.severity,
            pointer,
            format!("{}: {message}", self.name),
            Some(format!(
                "{hint}; source: {}, read {}",
                self.source, self.read_on
            )),
        )
    }

    /// Whether the profile reports the keyword `key` as one the provider does not support
    /// (or ignores): on the `unsupported` denylist, or, with a `supported` allowlist, on
    /// neither it nor `neutral` (and not an `x-` extension).
    pub fn drops(&self, key: &str) -> bool {
        match &self.supported {
            Some(list) => {
                !list.iter().any(|k| k == key)
                    && !self.neutral.iter().any(|k| k == key)
                    && !key.starts_with("x-")
            }
            None => self.unsupported.iter().any(|k| k == key),
        }
    }

    /// The profile findings of one subschema.
    pub(super) fn check(&self, node: &Node<'_>, out: &mut Vec<LintFinding>) {
        let s = node.schema;
        let ptr = &node.pointer;
        if node.root && self.root_object {
            if s.contains_key("anyOf") {
                out.push(self.finding(
                    codes::PROFILE_ROOT,
                    ptr.clone(),
                    "the root schema is `anyOf`; the root must be an object".into(),
                    "wrap the alternatives in a property of a root object".into(),
                ));
            } else if s.get("type") != Some(&Value::String("object".into())) {
                out.push(self.finding(
                    codes::PROFILE_ROOT,
                    ptr.clone(),
                    "the root schema is not `type: object`".into(),
                    "make the root an object and put the value in a property".into(),
                ));
            }
        }
        for (key, _) in s {
            if self.drops(key) {
                let what = if self.severity == Severity::Warning {
                    "ignores"
                } else {
                    "does not support"
                };
                out.push(self.finding(codes::PROFILE_KEYWORD, format!("{ptr}/{}", escape(key)),
                    format!("{} {what} `{key}`", self.provider),
                    "remove it, and check the value with verdict's schema stage or a business rule instead".into()));
            }
        }
        if !is_object_schema(s) {
            return;
        }
        if self.closed_objects && s.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(self.finding(
                codes::PROFILE_OPEN_OBJECT,
                ptr.clone(),
                "this object lacks `additionalProperties: false`".into(),
                "add `\"additionalProperties\": false`".into(),
            ));
        }
        if self.all_required
            && let Some(Value::Object(props)) = s.get("properties")
        {
            let required: std::collections::HashSet<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for name in props.keys().filter(|n| !required.contains(&n.as_str())) {
                out.push(self.finding(
                    codes::PROFILE_OPTIONAL,
                    format!("{ptr}/properties/{}", escape(name)),
                    format!("`{name}` is not in `required`; every property must be"),
                    format!(
                        "add \"{name}\" to `required` and allow null in its type for \"no value\""
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_profile_parses_and_names_its_source() {
        for (name, _) in BUNDLED {
            let p = Profile::load(name).unwrap();
            assert_eq!(p.name, name);
            assert!(p.source.starts_with("https://"), "{name}");
            assert_eq!(p.read_on.len(), 10, "{name}");
        }
        let e = Profile::load("openai-strit").unwrap_err();
        assert!(e.0.contains("did you mean `openai-strict`?"), "{}", e.0);
    }
}
