//! The schema tree: which keywords hold subschemas, per dialect (JSON Schema Core 2020-12
//! section 10 "A Vocabulary for Applying Subschemas", 2019-09 section 9, and draft-07 /
//! draft-06 / draft-04 Validation sections 6.5-6.7).
//!
//! [`walk`] visits every object subschema, depth first in document order, with its JSON
//! Pointer and whether the declared dialect applies it (`live`). A subschema held by a
//! keyword of another dialect (`prefixItems` in draft-07, `definitions` in 2020-12) is
//! visited too, as not live: its contents can still hold typos worth reporting.

use crate::core::config::Dialect;
use serde_json::{Map, Value};

/// Ordinal of a dialect, oldest first, for "from ... to ..." ranges.
pub fn rank(d: Dialect) -> u8 {
    match d {
        Dialect::Draft4 => 4,
        Dialect::Draft6 => 6,
        Dialect::Draft7 => 7,
        Dialect::Draft201909 => 19,
        Dialect::Draft202012 => 20,
    }
}

/// How a keyword holds subschemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// One subschema (`not`).
    One,
    /// An object of subschemas (`properties`).
    Map,
    /// An array of subschemas (`allOf`).
    List,
}

/// Keywords that hold subschemas, with the first and last dialect (by [`rank`]) that
/// applies them. `items` is special-cased: a schema in every dialect, an array of schemas
/// up to 2019-09.
const APPLICATORS: &[(&str, Holds, u8, u8)] = &[
    ("additionalProperties", Holds::One, 4, 20),
    ("additionalItems", Holds::One, 4, 19),
    ("contains", Holds::One, 6, 20),
    ("propertyNames", Holds::One, 6, 20),
    ("not", Holds::One, 4, 20),
    ("if", Holds::One, 7, 20),
    ("then", Holds::One, 7, 20),
    ("else", Holds::One, 7, 20),
    ("unevaluatedProperties", Holds::One, 19, 20),
    ("unevaluatedItems", Holds::One, 19, 20),
    ("contentSchema", Holds::One, 19, 20),
    ("properties", Holds::Map, 4, 20),
    ("patternProperties", Holds::Map, 4, 20),
    ("definitions", Holds::Map, 4, 7),
    ("$defs", Holds::Map, 19, 20),
    ("dependentSchemas", Holds::Map, 19, 20),
    ("dependencies", Holds::Map, 4, 7),
    ("allOf", Holds::List, 4, 20),
    ("anyOf", Holds::List, 4, 20),
    ("oneOf", Holds::List, 4, 20),
    ("prefixItems", Holds::List, 20, 20),
];

/// One object subschema met by [`walk`].
#[derive(Debug)]
pub struct Node<'a> {
    /// JSON Pointer (RFC 6901) of the subschema in the schema file.
    pub pointer: String,
    /// The subschema.
    pub schema: &'a Map<String, Value>,
    /// Whether the declared dialect applies it (false under a keyword of another dialect).
    pub live: bool,
    /// Whether this is the root schema.
    pub root: bool,
}

/// Escapes a reference token (RFC 6901 section 3: `~` as `~0`, `/` as `~1`).
pub use crate::core::pointer::escape;

/// Every object subschema of `schema` (the root first), for `dialect`.
pub fn walk(schema: &Value, dialect: Dialect) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    visit(schema, String::new(), dialect, true, true, &mut out);
    out
}

fn visit<'a>(
    v: &'a Value,
    pointer: String,
    dialect: Dialect,
    live: bool,
    root: bool,
    out: &mut Vec<Node<'a>>,
) {
    let Value::Object(map) = v else { return };
    out.push(Node {
        pointer: pointer.clone(),
        schema: map,
        live,
        root,
    });
    let r = rank(dialect);
    for (key, value) in map {
        let here = format!("{pointer}/{}", escape(key));
        if key == "items" {
            match value {
                Value::Array(list) => {
                    let applies = live && r <= 19;
                    for (i, s) in list.iter().enumerate() {
                        visit(s, format!("{here}/{i}"), dialect, applies, false, out);
                    }
                }
                _ => visit(value, here, dialect, live, false, out),
            }
            continue;
        }
        let Some((_, holds, from, to)) = APPLICATORS.iter().find(|(k, ..)| k == key) else {
            continue;
        };
        let applies = live && (*from..=*to).contains(&r);
        match (holds, value) {
            (Holds::One, _) => visit(value, here, dialect, applies, false, out),
            (Holds::Map, Value::Object(m)) => {
                for (name, s) in m {
                    // `dependencies` also holds arrays of names: only its schemas are visited
                    visit(
                        s,
                        format!("{here}/{}", escape(name)),
                        dialect,
                        applies,
                        false,
                        out,
                    );
                }
            }
            (Holds::List, Value::Array(list)) => {
                for (i, s) in list.iter().enumerate() {
                    visit(s, format!("{here}/{i}"), dialect, applies, false, out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn walks_every_subschema_and_marks_foreign_ones() {
        let s = json!({"properties": {"a/b": {"type": "string"}},
                       "prefixItems": [{"type": "integer"}],
                       "items": [{"type": "null"}],
                       "dependencies": {"x": ["y"], "z": {"minProperties": 1}}});
        let nodes = walk(&s, Dialect::Draft7);
        let seen: Vec<(&str, bool)> = nodes.iter().map(|n| (n.pointer.as_str(), n.live)).collect();
        assert!(seen.contains(&("", true)));
        assert!(seen.contains(&("/properties/a~1b", true)));
        assert!(seen.contains(&("/prefixItems/0", false)));
        assert!(seen.contains(&("/items/0", true)));
        assert!(seen.contains(&("/dependencies/z", true)));
        assert_eq!(nodes.len(), 5);
        let nodes = walk(&s, Dialect::Draft202012);
        let live: Vec<&str> = nodes
            .iter()
            .filter(|n| n.live)
            .map(|n| n.pointer.as_str())
            .collect();
        assert_eq!(live, ["", "/prefixItems/0", "/properties/a~1b"]);
    }
}
