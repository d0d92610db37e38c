//! The structural summary of a schema change (`docs/commands.md#review`): required properties added or
//! removed, types narrowed or widened, enum values added or removed, bounds tightened or
//! loosened, properties added or removed, objects closed or opened. Each change names the
//! JSON Pointer (in the new schema; in the old one for what was removed).

use crate::core::config::Dialect;
use crate::core::lint::walk::{escape, walk};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// One structural change of one contract's schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaChange {
    /// The contract.
    pub contract: String,
    /// `required_added`, `required_removed`, `type_narrowed`, `type_widened`,
    /// `type_changed`, `enum_added`, `enum_removed`, `bound_tightened`, `bound_loosened`,
    /// `property_added`, `property_removed`, `object_closed`, `object_opened`,
    /// `contract_added`, `contract_removed`.
    pub kind: String,
    /// JSON Pointer of the keyword that changed.
    pub pointer: String,
    /// What changed, old to new.
    pub message: String,
}

/// Lower bounds (a larger value is tighter) and upper bounds (a smaller value is tighter).
const LOWER: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

fn types(s: &Map<String, Value>) -> Option<BTreeSet<String>> {
    let mut set: BTreeSet<String> = match s.get("type")? {
        Value::String(t) => [t.clone()].into(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => return None,
    };
    if set.contains("number") {
        set.insert("integer".into());
    }
    Some(set)
}

fn show_types(s: Option<&Value>) -> String {
    s.map_or("any".into(), |v| v.to_string())
}

/// The changes from `old` to `new` (one contract).
pub fn diff(contract: &str, old: &Value, new: &Value, dialect: Dialect) -> Vec<SchemaChange> {
    let mut out = Vec::new();
    let mut push = |kind: &str, pointer: String, message: String| {
        out.push(SchemaChange {
            contract: contract.into(),
            kind: kind.into(),
            pointer,
            message,
        })
    };
    for node in walk(new, dialect) {
        let p = &node.pointer;
        let n = node.schema;
        let Some(Value::Object(o)) = old.pointer(p) else {
            continue;
        };
        // required
        let req = |m: &Map<String, Value>| -> Vec<String> {
            m.get("required")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (ro, rn) = (req(o), req(n));
        for (i, name) in rn.iter().enumerate() {
            if !ro.contains(name) {
                push(
                    "required_added",
                    format!("{p}/required/{i}"),
                    format!("`{name}` is now required"),
                );
            }
        }
        for name in ro.iter().filter(|x| !rn.contains(x)) {
            push(
                "required_removed",
                format!("{p}/required"),
                format!("`{name}` is no longer required"),
            );
        }
        // type
        let (to, tn) = (types(o), types(n));
        if to != tn {
            let kind = match (&to, &tn) {
                (None, Some(_)) => "type_narrowed",
                (Some(_), None) => "type_widened",
                (Some(a), Some(b)) if b.is_subset(a) => "type_narrowed",
                (Some(a), Some(b)) if a.is_subset(b) => "type_widened",
                _ => "type_changed",
            };
            push(
                kind,
                format!("{p}/type"),
                format!(
                    "type {} -> {}",
                    show_types(o.get("type")),
                    show_types(n.get("type"))
                ),
            );
        }
        // enum
        if let (Some(Value::Array(eo)), Some(Value::Array(en))) = (o.get("enum"), n.get("enum")) {
            for v in en.iter().filter(|v| !eo.contains(v)) {
                push(
                    "enum_added",
                    format!("{p}/enum"),
                    format!("enum value {v} added"),
                );
            }
            for v in eo.iter().filter(|v| !en.contains(v)) {
                push(
                    "enum_removed",
                    format!("{p}/enum"),
                    format!("enum value {v} removed"),
                );
            }
        }
        // bounds
        for (k, lower) in LOWER
            .iter()
            .map(|k| (k, true))
            .chain(UPPER.iter().map(|k| (k, false)))
        {
            let (a, b) = (
                o.get(*k).and_then(Value::as_f64),
                n.get(*k).and_then(Value::as_f64),
            );
            let tighter = match (a, b) {
                (Some(a), Some(b)) if a == b => continue,
                (Some(a), Some(b)) => (b > a) == lower,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (None, None) => continue,
            };
            let show = |v: Option<&Value>| v.map_or("none".into(), |v| v.to_string());
            push(
                if tighter {
                    "bound_tightened"
                } else {
                    "bound_loosened"
                },
                format!("{p}/{k}"),
                format!("{k} {} -> {}", show(o.get(*k)), show(n.get(*k))),
            );
        }
        // properties
        let props = |m: &Map<String, Value>| -> Vec<String> {
            m.get("properties")
                .and_then(Value::as_object)
                .map(|x| x.keys().cloned().collect())
                .unwrap_or_default()
        };
        let (po, pn) = (props(o), props(n));
        for name in pn.iter().filter(|x| !po.contains(x)) {
            push(
                "property_added",
                format!("{p}/properties/{}", escape(name)),
                format!("property `{name}` declared"),
            );
        }
        for name in po.iter().filter(|x| !pn.contains(x)) {
            push(
                "property_removed",
                format!("{p}/properties/{}", escape(name)),
                format!("property `{name}` no longer declared"),
            );
        }
        let closed =
            |m: &Map<String, Value>| m.get("additionalProperties") == Some(&Value::Bool(false));
        match (closed(o), closed(n)) {
            (false, true) => push(
                "object_closed",
                format!("{p}/additionalProperties"),
                "additional properties are now forbidden".into(),
            ),
            (true, false) => push(
                "object_opened",
                format!("{p}/additionalProperties"),
                "additional properties are now allowed".into(),
            ),
            _ => {}
        }
    }
    out
}
