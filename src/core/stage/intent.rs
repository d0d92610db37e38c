//! The confirmed-intent comparison (DESIGN 5): the last business check. Every leaf of the
//! capture's `intent` (or each pointer of the rules file's `[intent] fields`) must equal the
//! proposal at the same JSON Pointer; numbers compare by value (5000 equals 5000.0).

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
    let intent = Value::Object(intent.clone());
    let pointers: Vec<String> = match fields {
        Some(f) => f.to_vec(),
        None => {
            let mut out = Vec::new();
            leaves(&intent, String::new(), &mut out);
            out
        }
    };
    let mut findings = Vec::new();
    for p in pointers {
        let Some(want) = intent.pointer(&p) else {
            // the intent does not state this field: nothing was confirmed, nothing to compare
            continue;
        };
        let message = match proposal.pointer(&p) {
            Some(got) if json_equal(got, want) => continue,
            Some(got) => format!("proposal {}, confirmed intent {}", short(got), short(want)),
            None => format!(
                "proposal has no value at {p}, confirmed intent {}",
                short(want)
            ),
        };
        findings
            .push(Finding::new(Stage::Business, Reason::INTENT_MISMATCH, message).with_pointer(p));
    }
    findings
}

fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                leaves(
                    v,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, v) in a.iter().enumerate() {
                leaves(v, format!("{at}/{i}"), out);
            }
        }
        _ => out.push(at),
    }
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
}
