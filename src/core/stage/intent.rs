//! The confirmed-intent comparison (`docs/verdicts.md`): the last business check. Every leaf of the
//! capture's `intent` (or each pointer of the rules file's `[intent] fields`) must equal the
//! proposal at the same JSON Pointer; numbers compare by value (5000 equals 5000.0), and
//! exactly: the parse stage holds every number exactly or refuses it
//! (`docs/verdicts.md#numbers`), so two different decimals never compare equal.

use crate::core::pointer;
use crate::core::verdict::{Finding, Reason, Stage};
use serde_json::{Map, Value};

/// Compares the proposal with the confirmed intent and returns one `INTENT_MISMATCH`
/// finding per differing pointer (`proposal 8000, confirmed intent 5000`). `fields` are
/// the pointers to compare; `None` means every leaf of `intent`.
pub fn compare(
    proposal: &Value,
    intent: &Map<String, Value>,
    fields: Option<&[String]>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    match fields {
        Some(fields) => {
            for p in fields {
                if p.is_empty() {
                    // the whole document: compare it with the whole intent
                    let whole = Value::Object(intent.clone());
                    check(Some(proposal), &whole, p, &mut findings);
                    continue;
                }
                // one member name with nothing escaped (`/amount_minor`, most pointers):
                // the member itself, no pointer parsed
                if let Some(name) = p.strip_prefix('/').filter(|n| !n.contains(['/', '~'])) {
                    if let Some(want) = intent.get(name) {
                        check(pointer::child(proposal, name), want, p, &mut findings);
                    }
                    continue;
                }
                // the intent does not state this field: nothing was confirmed, nothing to compare
                let Some(want) = resolve_map(intent, p) else {
                    continue;
                };
                check(pointer::resolve(proposal, p), want, p, &mut findings);
            }
        }
        None => {
            let mut at = String::new();
            for (k, want) in intent {
                let len = at.len();
                pointer::push(&mut at, k);
                leaves(pointer::child(proposal, k), want, &mut at, &mut findings);
                at.truncate(len);
            }
        }
    }
    findings
}

/// Compares every leaf of `want` (empty objects and arrays are leaves) with the proposal's
/// value at the same place, `at` being the pointer of `want` (extended and restored).
fn leaves(got: Option<&Value>, want: &Value, at: &mut String, out: &mut Vec<Finding>) {
    match want {
        Value::Object(m) if !m.is_empty() => {
            for (k, w) in m {
                let len = at.len();
                pointer::push(at, k);
                leaves(got.and_then(|g| pointer::child(g, k)), w, at, out);
                at.truncate(len);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, w) in a.iter().enumerate() {
                let len = at.len();
                let token = i.to_string();
                at.push('/');
                at.push_str(&token);
                leaves(got.and_then(|g| pointer::child(g, &token)), w, at, out);
                at.truncate(len);
            }
        }
        _ => check(got, want, at, out),
    }
}

fn check(got: Option<&Value>, want: &Value, pointer: &str, out: &mut Vec<Finding>) {
    let message = match got {
        Some(got) if json_equal(got, want) => return,
        Some(got) => format!("proposal {}, confirmed intent {}", short(got), short(want)),
        None => format!(
            "proposal has no value at {pointer}, confirmed intent {}",
            short(want)
        ),
    };
    out.push(
        Finding::new(Stage::Business, Reason::INTENT_MISMATCH, message)
            .with_pointer(pointer.to_string()),
    );
}

/// The value at `at` in the intent object `m` (RFC 6901; `None` for `""`, which names
/// the object itself, or a malformed pointer).
fn resolve_map<'v>(m: &'v Map<String, Value>, at: &str) -> Option<&'v Value> {
    let mut tokens = pointer::raw_tokens(at).ok()?;
    let first = pointer::unescape(tokens.next()?).ok()?;
    let v = m.get(first.as_ref())?;
    tokens.try_fold(v, |v, raw| pointer::child(v, &pointer::unescape(raw).ok()?))
}

/// JSON equality with numbers compared by value: `5000 == 5000.0`, `-0 == 0`.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            // integers exactly (an f64 cannot hold 2^53 + 1), an integer and a fraction
            // only when the fraction is that integer exactly
            let int = |n: &serde_json::Number| {
                n.as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
            };
            let float_is = |f: f64, i: i128| {
                // inside ±2^127 `as` converts an integral f64 exactly
                f.fract() == 0.0 && f.abs() < 2f64.powi(127) && f as i128 == i
            };
            match (int(x), int(y), x.as_f64(), y.as_f64()) {
                (Some(a), Some(b), _, _) => a == b,
                (Some(a), None, _, Some(f)) | (None, Some(a), Some(f), _) => float_is(f, a),
                (None, None, Some(a), Some(b)) => a == b,
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A value as compact JSON, abbreviated to about 60 characters.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 60 {
        s
    } else {
        let head: String = s.chars().take(57).collect();
        format!("{head}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn intent() -> Map<String, Value> {
        json!({"order_id": "O-1042", "amount_minor": 5000, "currency": "KRW"})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn equal_values_and_numbers_by_value_pass() {
        let p =
            json!({"order_id": "O-1042", "amount_minor": 5000.0, "currency": "KRW", "extra": 1});
        assert!(compare(&p, &intent(), None).is_empty());
    }

    #[test]
    fn each_mismatch_names_pointer_and_both_values() {
        let p = json!({"order_id": "O-1042", "amount_minor": 8000, "currency": "USD"});
        let f = compare(&p, &intent(), None);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].pointer.as_deref(), Some("/amount_minor"));
        assert_eq!(f[0].message, "proposal 8000, confirmed intent 5000");
        assert_eq!(f[1].pointer.as_deref(), Some("/currency"));
        assert_eq!(f[1].message, "proposal \"USD\", confirmed intent \"KRW\"");
        assert_eq!(f[0].decision, crate::core::verdict::Decision::Recheck);
    }

    #[test]
    fn missing_pointer_is_a_mismatch_and_fields_limit_the_check() {
        let p = json!({"order_id": "O-1042", "currency": "USD"});
        let fields = vec!["/amount_minor".to_string()];
        let f = compare(&p, &intent(), Some(&fields));
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].message,
            "proposal has no value at /amount_minor, confirmed intent 5000"
        );
    }

    #[test]
    fn nested_leaves_arrays_escapes_and_pointer_fields_resolve_like_rfc_6901() {
        let intent = json!({"a/b": {"~k": [1, {"x": 2}]}, "empty": {}, "list": [7]})
            .as_object()
            .unwrap()
            .clone();
        // an object keyed "0" answers the array index token, as a JSON Pointer would
        let p = json!({"a/b": {"~k": [1, {"x": 3}]}, "empty": {"y": 1}, "list": {"0": 7}});
        let f = compare(&p, &intent, None);
        let got: Vec<_> = f
            .iter()
            .map(|f| (f.pointer.as_deref().unwrap(), f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/a~1b/~0k/1/x", "proposal 3, confirmed intent 2"),
                ("/empty", "proposal {\"y\":1}, confirmed intent {}"),
            ]
        );
        let fields: Vec<String> = ["/a~1b/~0k/1/x", "/a~1b/~0k/01", "/nope", "/list/0"]
            .map(String::from)
            .to_vec();
        let f = compare(&p, &intent, Some(&fields));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer.as_deref(), Some("/a~1b/~0k/1/x"));
        let whole = vec![String::new()];
        let f = compare(&p, &intent, Some(&whole));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer.as_deref(), Some(""));
    }
}
