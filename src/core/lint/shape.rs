//! Loose and impossible objects: `OPEN_OBJECT` (no `additionalProperties`, so an extra
//! `approved: true` passes), `OPTIONAL_PROPERTY` (declared, not required), `EMPTY_OBJECT`
//! (`type: object` that declares nothing), `UNSATISFIABLE_REQUIRED` (a required name that
//! no declared property matches while additional properties are forbidden: no instance
//! can pass; 2020-12 Core sections 10.3.2.1-10.3.2.3, Validation section 6.5.3).

use super::walk::{Node, escape};
use super::{LintFinding, Severity, codes};
use serde_json::{Map, Value};

/// Whether the subschema describes objects: `type` is or includes `object`, or it has
/// `properties` and no `type`.
pub fn is_object_schema(s: &Map<String, Value>) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => s.contains_key("properties"),
    }
}

/// The shape findings of one subschema.
pub(super) fn check(node: &Node<'_>, out: &mut Vec<LintFinding>) {
    let s = node.schema;
    if !node.live || !is_object_schema(s) {
        return;
    }
    let ptr = &node.pointer;
    let props = s.get("properties").and_then(Value::as_object);
    let closed = s.contains_key("additionalProperties") || s.contains_key("unevaluatedProperties");
    let composed = ["allOf", "anyOf", "oneOf", "$ref"]
        .iter()
        .any(|k| s.contains_key(*k));
    if !closed && !composed {
        out.push(LintFinding::new(
            codes::OPEN_OBJECT,
            Severity::Warning,
            ptr.clone(),
            "this object does not close: without `additionalProperties`, any extra key (`approved: true`) passes".into(),
            Some("add `\"additionalProperties\": false`".into()),
        ));
    }
    let has_pattern = s
        .get("patternProperties")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty());
    let extra_schema = s.get("additionalProperties").is_some_and(Value::is_object);
    if props.is_none_or(|p| p.is_empty()) && !has_pattern && !extra_schema && !composed {
        out.push(LintFinding::new(
            codes::EMPTY_OBJECT,
            Severity::Warning,
            ptr.clone(),
            "`type: object` with no properties: any object passes, so nothing in it is checked".into(),
            Some("declare its `properties` and `required`, or say why it is free-form in `description`".into()),
        ));
    }
    let required: std::collections::HashSet<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(p) = props {
        for name in p.keys() {
            if !required.contains(&name.as_str()) {
                out.push(LintFinding::new(
                    codes::OPTIONAL_PROPERTY,
                    Severity::Info,
                    format!("{ptr}/properties/{}", escape(name)),
                    format!("`{name}` is declared but not required: an output without it passes"),
                    Some(format!(
                        "add \"{name}\" to `required`; use a null type for \"unknown\""
                    )),
                ));
            }
        }
    }
    let forbidden = s.get("additionalProperties") == Some(&Value::Bool(false))
        || (s.get("additionalProperties").is_none()
            && s.get("unevaluatedProperties") == Some(&Value::Bool(false)));
    if forbidden
        && !has_pattern
        && let Some(Value::Array(names)) = s.get("required")
    {
        for (i, n) in names.iter().enumerate() {
            let Some(n) = n.as_str() else { continue };
            if props.is_some_and(|p| p.contains_key(n)) {
                continue;
            }
            let hint = props
                .and_then(|p| crate::core::hint::hint_for(n, p.keys().map(String::as_str)))
                .unwrap_or_else(|| {
                    format!("declare `{n}` in `properties`, or drop it from `required`")
                });
            out.push(LintFinding::new(
                    codes::UNSATISFIABLE_REQUIRED,
                    Severity::Error,
                    format!("{ptr}/required/{i}"),
                    format!("`{n}` is required but not declared, and additional properties are forbidden: no output can pass"),
                    Some(hint),
                ));
        }
    }
}
