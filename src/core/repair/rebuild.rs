//! A verdict's repaired copy, rebuilt on demand for one capture (the workbench's Repair tab,
//! `docs/repairs.md#the-repair-tab`): the named repair run again on the failing stage's
//! input, and what it changed: the text it dropped (a parse-stage repair) or every JSON
//! Pointer whose value it removed, changed or added (a schema-stage repair). Never applied
//! to the verdict, and never run by `check`: only for the capture a user looks at.

use super::{Fix, MAX_REPAIR_ERRORS, RepairName, TABLE};
use crate::core::stage::parse::parse_strict;
use serde_json::Value;
use std::ops::Range;

/// How a value repair changed a pointer of the proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The member is not in the copy (`drop-unknown`).
    Removed,
    /// The copy holds another value there (`unquote-number`, `enum-case`, `decode-string`).
    Changed,
    /// The member is only in the copy.
    Added,
}

/// One changed pointer of a repaired copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The JSON Pointer (RFC 6901; `""` for the root), in the proposal (a removed or changed
    /// value) or the copy (an added one).
    pub pointer: String,
    /// How it changed.
    pub kind: ChangeKind,
}

/// What one repair makes of a capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebuilt {
    /// The repair.
    pub name: RepairName,
    /// A parse-stage repair: the byte ranges of the raw output it drops (the fence, the
    /// trailing content), in order; empty for a value repair.
    pub dropped: Vec<Range<usize>>,
    /// The repaired copy (for a parse-stage repair, the kept text parsed).
    pub copy: Value,
    /// A schema-stage repair: every pointer whose value differs between the proposal and
    /// the copy, in document order (object members in key order); empty for a text repair
    /// (its value is the text it keeps, unchanged).
    pub changes: Vec<Change>,
}

/// Runs repair `name` again on a capture: on `raw`, the output text that failed to parse,
/// for `strip-fence` and `drop-trailing`; on `proposal`, the value that failed `validator`
/// (the capture's contract), for the value repairs.
///
/// # Errors
/// Why there is no copy, in words: the input the repair needs is missing, the text parses,
/// the repair changes nothing, the value has more than [`MAX_REPAIR_ERRORS`] schema errors,
/// or the kept text does not parse.
pub fn rebuild(
    name: RepairName,
    validator: &jsonschema::Validator,
    raw: Option<&str>,
    proposal: Option<&Value>,
) -> Result<Rebuilt, String> {
    match TABLE[name.index()].fix {
        Fix::Text(fix) => {
            let text = raw.ok_or("there is no raw output to repair")?;
            let finding = match parse_strict(text) {
                Ok(_) => return Err("the output parses: there is nothing to repair".into()),
                Err(f) => f,
            };
            let kept = fix(text, &finding)
                .ok_or_else(|| format!("`{name}` does not apply to this output"))?;
            // the kept text is a piece of the output: where the finding's span says, else
            // its first occurrence
            let start = finding
                .span
                .filter(|s| text.get(s.start..s.end) == Some(kept.as_str()))
                .map(|s| s.start)
                .or_else(|| text.find(kept.as_str()))
                .ok_or_else(|| format!("`{name}` kept text that is not in the output"))?;
            let end = start + kept.len();
            let copy = parse_strict(&kept)
                .map_err(|f| format!("the text `{name}` keeps does not parse: {}", f.message))?;
            Ok(Rebuilt {
                name,
                dropped: [0..start, end..text.len()]
                    .into_iter()
                    .filter(|r| !r.is_empty())
                    .collect(),
                copy,
                changes: Vec::new(),
            })
        }
        Fix::Value(fix) => {
            let value = proposal.ok_or("there is no proposal to repair")?;
            let errors: Vec<_> = validator
                .iter_errors(value)
                .take(MAX_REPAIR_ERRORS + 1)
                .collect();
            if errors.len() > MAX_REPAIR_ERRORS {
                return Err(format!(
                    "the proposal has more than {MAX_REPAIR_ERRORS} schema errors"
                ));
            }
            let copy = fix(value, &errors)
                .ok_or_else(|| format!("`{name}` changes nothing in this proposal"))?;
            let changes = changes(value, &copy);
            Ok(Rebuilt {
                name,
                dropped: Vec::new(),
                copy,
                changes,
            })
        }
    }
}

/// Every pointer where `a` and `b` differ: a member only in `a` is removed, one only in `b`
/// added, a value of another type or content changed (an array of another length is one
/// change at the array).
pub fn changes(a: &Value, b: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk(a, b, &mut String::new(), &mut out);
    out
}

fn push_token(at: &mut String, token: &str) {
    at.push('/');
    at.push_str(&token.replace('~', "~0").replace('/', "~1"));
}

fn walk(a: &Value, b: &Value, at: &mut String, out: &mut Vec<Change>) {
    let len = at.len();
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                push_token(at, k);
                match y.get(k) {
                    Some(vb) => walk(va, vb, at, out),
                    None => out.push(Change {
                        pointer: at.clone(),
                        kind: ChangeKind::Removed,
                    }),
                }
                at.truncate(len);
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                push_token(at, k);
                out.push(Change {
                    pointer: at.clone(),
                    kind: ChangeKind::Added,
                });
                at.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                push_token(at, &i.to_string());
                walk(va, vb, at, out);
                at.truncate(len);
            }
        }
        _ if a != b => out.push(Change {
            pointer: at.clone(),
            kind: ChangeKind::Changed,
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{REFUND, proposal};
    use super::*;
    use serde_json::json;

    fn refund_validator() -> jsonschema::Validator {
        let schema: Value = serde_json::from_str(REFUND).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    }

    fn on_text(name: RepairName, text: &str) -> Result<Rebuilt, String> {
        rebuild(name, &refund_validator(), Some(text), None)
    }

    fn on_value(name: RepairName, v: &Value) -> Result<Rebuilt, String> {
        rebuild(name, &refund_validator(), None, Some(v))
    }

    fn good() -> Value {
        serde_json::from_str(&proposal("5000")).unwrap()
    }

    #[test]
    fn strip_fence_drops_the_fence_lines_and_keeps_the_value() {
        let p = proposal("5000");
        let text = format!("```json\n{p}\n```\n");
        let r = on_text(RepairName::StripFence, &text).unwrap();
        assert_eq!(r.dropped, vec![0..8, 8 + p.len()..text.len()]);
        assert_eq!(&text[r.dropped[0].clone()], "```json\n");
        assert_eq!(&text[r.dropped[1].clone()], "\n```\n");
        assert_eq!(r.copy, good());
        assert_eq!(r.changes, vec![]);
    }

    #[test]
    fn drop_trailing_drops_what_follows_the_first_value() {
        let p = proposal("5000");
        let text = format!("{p}\nLet me know if you need anything else!");
        let r = on_text(RepairName::DropTrailing, &text).unwrap();
        assert_eq!(r.dropped, vec![p.len()..text.len()]);
        assert_eq!(r.copy, good());
        assert_eq!(r.changes, vec![]);
    }

    #[test]
    fn unquote_number_changes_the_amount() {
        let v: Value = serde_json::from_str(&proposal("\"5000\"")).unwrap();
        let r = on_value(RepairName::UnquoteNumber, &v).unwrap();
        assert_eq!(r.copy, good());
        assert_eq!(
            r.changes,
            vec![Change {
                pointer: "/amount_minor".into(),
                kind: ChangeKind::Changed
            }]
        );
        assert!(r.dropped.is_empty());
    }

    #[test]
    fn enum_case_changes_the_currency() {
        let v: Value = serde_json::from_str(&proposal("5000").replace("KRW", "krw")).unwrap();
        let r = on_value(RepairName::EnumCase, &v).unwrap();
        assert_eq!(r.copy, good());
        assert_eq!(
            r.changes,
            vec![Change {
                pointer: "/currency".into(),
                kind: ChangeKind::Changed
            }]
        );
    }

    #[test]
    fn drop_unknown_removes_the_extra_member() {
        let v: Value =
            serde_json::from_str(&proposal("5000").replace('}', ",\"approved\":true}")).unwrap();
        let r = on_value(RepairName::DropUnknown, &v).unwrap();
        assert_eq!(r.copy, good());
        assert_eq!(
            r.changes,
            vec![Change {
                pointer: "/approved".into(),
                kind: ChangeKind::Removed
            }]
        );
    }

    #[test]
    fn decode_string_changes_the_string_to_its_object() {
        let schema = json!({"type": "object", "properties": {"args": {"type": "object"}}});
        let validator = jsonschema::validator_for(&schema).unwrap();
        let v = json!({"args": "{\"a/b\": 1}", "n": 2});
        let r = rebuild(RepairName::DecodeString, &validator, None, Some(&v)).unwrap();
        assert_eq!(r.copy, json!({"args": {"a/b": 1}, "n": 2}));
        assert_eq!(
            r.changes,
            vec![Change {
                pointer: "/args".into(),
                kind: ChangeKind::Changed
            }]
        );
    }

    #[test]
    fn no_copy_says_why() {
        let p = proposal("5000");
        assert_eq!(
            on_text(RepairName::StripFence, &p).unwrap_err(),
            "the output parses: there is nothing to repair"
        );
        assert_eq!(
            on_text(RepairName::StripFence, "{\"a\": 1").unwrap_err(),
            "`strip-fence` does not apply to this output"
        );
        assert_eq!(
            on_value(RepairName::DropUnknown, &good()).unwrap_err(),
            "`drop-unknown` changes nothing in this proposal"
        );
        assert_eq!(
            rebuild(
                RepairName::UnquoteNumber,
                &refund_validator(),
                Some("x"),
                None
            )
            .unwrap_err(),
            "there is no proposal to repair"
        );
    }

    #[test]
    fn changes_escape_their_pointers_and_name_added_members() {
        let a = json!({"a~b": [1, 2], "c/d": 1, "same": true});
        let b = json!({"a~b": [1, 3], "same": true, "new": null});
        assert_eq!(
            changes(&a, &b),
            vec![
                Change {
                    pointer: "/a~0b/1".into(),
                    kind: ChangeKind::Changed
                },
                Change {
                    pointer: "/c~1d".into(),
                    kind: ChangeKind::Removed
                },
                Change {
                    pointer: "/new".into(),
                    kind: ChangeKind::Added
                },
            ]
        );
        assert_eq!(changes(&json!([1]), &json!([1, 2]))[0].pointer, "");
    }
}
