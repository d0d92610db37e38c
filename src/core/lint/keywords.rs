//! `FOREIGN_KEYWORD` and `UNKNOWN_KEYWORD`: keywords the declared dialect ignores.
//!
//! A validator ignores keywords it does not know (2020-12 Core section 4.3.1, draft-07
//! Core section 4.3.1), so a keyword of another dialect (`prefixItems` in draft-07,
//! `dependencies` in 2020-12) or a typo (`minimun`) silently checks nothing (`docs/verdicts.md`).

use super::walk::{Node, escape, rank};
use super::{LintFinding, Severity, codes};
use crate::core::config::Dialect;
use crate::core::hint::did_you_mean;
use serde_json::Value;

/// Keywords that belong to some dialects only: keyword, first and last dialect (by
/// [`rank`]: 4, 6, 7, 19 = 2019-09, 20 = 2020-12) and what to write instead outside them.
const VERSIONED: &[(&str, u8, u8, &str)] = &[
    (
        "$defs",
        19,
        20,
        "use `definitions`, or declare 2019-09 or later in `$schema`",
    ),
    (
        "dependentRequired",
        19,
        20,
        "use `dependencies` with an array of names",
    ),
    (
        "dependentSchemas",
        19,
        20,
        "use `dependencies` with a schema",
    ),
    (
        "unevaluatedProperties",
        19,
        20,
        "use `additionalProperties`, which does not see through `allOf`",
    ),
    (
        "unevaluatedItems",
        19,
        20,
        "use `additionalItems` with array-form `items`",
    ),
    (
        "prefixItems",
        20,
        20,
        "use array-form `items`, with `additionalItems` for the rest",
    ),
    ("$dynamicRef", 20, 20, "use `$ref`"),
    ("$dynamicAnchor", 20, 20, "use `$anchor` or an `$id`"),
    (
        "$recursiveRef",
        19,
        19,
        "use `$dynamicRef` in 2020-12, `$ref` before 2019-09",
    ),
    (
        "$recursiveAnchor",
        19,
        19,
        "use `$dynamicAnchor` in 2020-12",
    ),
    (
        "$anchor",
        19,
        20,
        "use `$id` with a fragment: `\"$id\": \"#name\"`",
    ),
    ("minContains", 19, 20, "no equivalent before 2019-09"),
    ("maxContains", 19, 20, "no equivalent before 2019-09"),
    ("contentSchema", 19, 20, "no equivalent before 2019-09"),
    ("definitions", 4, 7, "use `$defs`"),
    (
        "dependencies",
        4,
        7,
        "use `dependentRequired` for an array of names, `dependentSchemas` for a schema",
    ),
    ("additionalItems", 4, 19, "use `items` after `prefixItems`"),
    ("const", 6, 20, "use `enum` with one value"),
    ("contains", 6, 20, "no equivalent in draft-04"),
    ("propertyNames", 6, 20, "no equivalent in draft-04"),
    ("if", 7, 20, "use `anyOf`/`not` combinations"),
    ("then", 7, 20, "use `anyOf`/`not` combinations"),
    ("else", 7, 20, "use `anyOf`/`not` combinations"),
];

/// Keywords every dialect knows (validation, applicators, core, annotations, format).
const COMMON: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$ref",
    "$comment",
    "$vocabulary",
    "type",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "items",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "properties",
    "patternProperties",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "format",
    "title",
    "description",
    "default",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentEncoding",
    "contentMediaType",
];

fn dialect_name(d: Dialect) -> &'static str {
    match d {
        Dialect::Draft4 => "draft-04",
        Dialect::Draft6 => "draft-06",
        Dialect::Draft7 => "draft-07",
        Dialect::Draft201909 => "2019-09",
        Dialect::Draft202012 => "2020-12",
    }
}

fn range_name(from: u8, to: u8) -> String {
    let n = |r: u8| match r {
        4 => "draft-04",
        6 => "draft-06",
        7 => "draft-07",
        19 => "2019-09",
        _ => "2020-12",
    };
    match (from, to) {
        (a, b) if a == b => n(a).to_string(),
        (a, 20) => format!("{} and later", n(a)),
        (4, b) => format!("{} and earlier", n(b)),
        (a, b) => format!("{} to {}", n(a), n(b)),
    }
}

/// Every known keyword name (all dialects), for "did you mean".
fn all_known() -> impl Iterator<Item = &'static str> {
    COMMON
        .iter()
        .copied()
        .chain(VERSIONED.iter().map(|(k, ..)| *k))
}

/// The keyword findings of one subschema.
pub(super) fn check(
    node: &Node<'_>,
    dialect: Dialect,
    refs: &[String],
    out: &mut Vec<LintFinding>,
) {
    let r = rank(dialect);
    for (key, value) in node.schema {
        let pointer = format!("{}/{}", node.pointer, escape(key));
        if key == "items" && value.is_array() && r >= 20 {
            out.push(LintFinding::new(
                codes::FOREIGN_KEYWORD,
                Severity::Error,
                pointer,
                "array-form `items` is a draft-04 to 2019-09 keyword; 2020-12 requires a schema here (the meta-schema rejects the contract)".to_string(),
                Some("use `prefixItems` for the positions and `items` for the rest".into()),
            ));
            continue;
        }
        if let Some((_, from, to, instead)) = VERSIONED.iter().find(|(k, ..)| k == key) {
            if (*from..=*to).contains(&r) {
                continue;
            }
            // `definitions`/`$defs` under another dialect only hold schemas: nothing is
            // checked less, and `$ref`s into them still resolve as JSON Pointers
            let holder = matches!(key.as_str(), "definitions" | "$defs");
            let used = refs.iter().any(|r| r.starts_with(&format!("#{pointer}/")));
            let (severity, tail) = if holder {
                (
                    Severity::Info,
                    if used {
                        "; the `$ref`s into it resolve as plain JSON Pointers, but its `$id`s and anchors are not indexed".to_string()
                    } else {
                        "; nothing refers to it".to_string()
                    },
                )
            } else {
                (Severity::Warning, " and checks nothing".to_string())
            };
            out.push(LintFinding::new(
                codes::FOREIGN_KEYWORD,
                severity,
                pointer,
                format!(
                    "`{key}` is a {} keyword; this schema is {}, which ignores it{tail}",
                    range_name(*from, *to),
                    dialect_name(dialect)
                ),
                Some(instead.to_string()),
            ));
            continue;
        }
        if COMMON.contains(&key.as_str()) || key.starts_with("x-") {
            continue;
        }
        // OpenAPI 3.0's `nullable` (Gemini's `responseSchema`, many generators): JSON Schema
        // says "or null" in `type`
        if key == "nullable" {
            let with_null = match node.schema.get("type") {
                Some(Value::String(t)) => format!("`\"type\": [\"{t}\", \"null\"]`"),
                _ => "`\"type\": [T, \"null\"]`".to_string(),
            };
            out.push(LintFinding::new(
                codes::UNKNOWN_KEYWORD,
                Severity::Warning,
                pointer,
                "`nullable` is an OpenAPI 3.0 keyword, not JSON Schema; validators ignore it, so `null` is not allowed by it".to_string(),
                Some(format!(
                    "say it the JSON Schema way: {with_null}, or `anyOf` with `{{\"type\": \"null\"}}`"
                )),
            ));
            continue;
        }
        // a `properties` map's own keys are names, not keywords: `walk` never yields them
        let hint = did_you_mean(key, all_known()).map(|k| format!("did you mean `{k}`?"));
        // a near miss of a real keyword is almost surely a typo that disables a check
        let severity = if hint.is_some() {
            Severity::Error
        } else {
            Severity::Warning
        };
        out.push(LintFinding::new(
            codes::UNKNOWN_KEYWORD,
            severity,
            pointer,
            format!("`{key}` is not a JSON Schema keyword in any dialect; validators ignore it"),
            hint.or_else(|| {
                Some(
                    "remove it, or prefix it with `x-` if it is an annotation for another tool"
                        .into(),
                )
            }),
        ));
    }
}

/// Every `$ref` string in the schema (for "is this `definitions` block referred to").
pub(super) fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(s)) => out.push(s.clone()),
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    /// A hint rides in parentheses after its message (`MESSAGE (HINT)`: a verdict's
    /// warnings, SARIF, GitHub): no hint of a keyword of another dialect holds its own.
    #[test]
    fn versioned_hints_hold_no_parentheses() {
        for (key, _, _, instead) in super::VERSIONED {
            assert!(!instead.contains(['(', ')']), "{key}: {instead}");
        }
    }
}
