//! `enum-case` (`docs/repairs.md#enum-case`): where `enum` fails on a string and exactly
//! one allowed value is a string that differs from it only in letter case (`"krw"` for
//! `["KRW", "USD"]`; Unicode lower-casing), the copy holds that allowed value.

use crate::core::repair::{each_error, replace_at};
use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// The copy of `value` with each such string replaced by its allowed spelling; `None` when
/// there is none.
pub fn repair(value: &Value, errors: &[ValidationError<'_>]) -> Option<Value> {
    let mut fixes: Vec<(String, Value)> = Vec::new();
    each_error(errors, &mut |e| {
        let ValidationErrorKind::Enum { options } = e.kind() else {
            return;
        };
        let (Some(s), Some(options)) = (e.instance().as_str(), options.as_array()) else {
            return;
        };
        let p = e.instance_path().as_str();
        if fixes.iter().any(|(q, _)| q == p) {
            return;
        }
        if let Some(allowed) = only_case_differs(s, options) {
            fixes.push((p.to_owned(), Value::String(allowed.to_owned())));
        }
    });
    let pointers: Vec<String> = fixes.iter().map(|(p, _)| p.clone()).collect();
    replace_at(value, &pointers, |p, _| {
        fixes.iter().find(|(q, _)| q == p).map(|(_, a)| a.clone())
    })
}

/// The one option that is a string equal to `s` but for letter case (and not `s` itself);
/// `None` when none is, or several are.
fn only_case_differs<'o>(s: &str, options: &'o [Value]) -> Option<&'o str> {
    let lower = s.to_lowercase();
    let mut it = options
        .iter()
        .filter_map(Value::as_str)
        .filter(|o| *o != s && o.to_lowercase() == lower);
    match (it.next(), it.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    #[test]
    fn one_allowed_value_differing_only_in_case() {
        let opts = serde_json::json!(["KRW", "USD", "Aa", "aA"]);
        let opts = opts.as_array().unwrap();
        assert_eq!(only_case_differs("krw", opts), Some("KRW"));
        assert_eq!(only_case_differs("aa", opts), None, "two candidates");
        assert_eq!(only_case_differs("EUR", opts), None);
    }

    #[test]
    fn makes_a_lower_case_currency_ready() {
        let v = refund(&proposal("5000").replace("\"KRW\"", "\"krw\""));
        assert_eq!(own(&v), "schema/SCHEMA_MISMATCH");
        assert_eq!(
            repair_of(&v),
            Some((
                "enum-case".into(),
                "ready".into(),
                "ready-for-commit".into()
            ))
        );
    }

    #[test]
    fn does_not_help_when_a_rule_still_fails() {
        let v = refund(&proposal("9000").replace("\"KRW\"", "\"Krw\""));
        assert_eq!(
            repair_of(&v),
            Some((
                "enum-case".into(),
                "business/EXCEEDS_REMAINING".into(),
                "reject".into()
            ))
        );
    }

    #[test]
    fn never_picks_another_value_or_fills_a_missing_one() {
        let v = refund(&proposal("5000").replace("\"KRW\"", "\"EUR\""));
        assert_eq!(
            (own(&v), repair_of(&v)),
            ("schema/SCHEMA_MISMATCH".into(), None)
        );
        let missing = r#"{"schema_version":"refund-v1","order_id":"O-1042","amount_minor":5000,"expected_version":7}"#;
        let v = refund(missing);
        assert_eq!(
            (own(&v), repair_of(&v)),
            ("schema/SCHEMA_MISMATCH".into(), None)
        );
    }
}
