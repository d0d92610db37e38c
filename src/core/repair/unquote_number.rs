//! `unquote-number` (`docs/repairs.md#unquote-number`): where `type` wants an integer or a
//! number and the value is a string that spells one (`"5000"`, `"-1.5e3"`: exactly the
//! RFC 8259 number grammar, nothing around it), the copy holds that number.

use crate::core::repair::{pointers_where, replace_at, type_wants};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

/// The copy of `value` with every such string turned into its number; `None` when there is
/// none.
pub fn repair(value: &Value, errors: &[ValidationError<'_>]) -> Option<Value> {
    let at = pointers_where(errors, |e| {
        type_wants(e, |t| matches!(t, JsonType::Integer | JsonType::Number))
            && e.instance().as_str().is_some()
    });
    replace_at(value, &at, |_, v| v.as_str().and_then(number))
}

/// The number `s` spells in JSON's grammar (RFC 8259 section 6), within the double range.
fn number(s: &str) -> Option<Value> {
    if s.trim() != s || s.is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(s) {
        Ok(n @ Value::Number(_)) => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    #[test]
    fn spells_numbers_in_json_grammar_only() {
        assert_eq!(number("5000"), Some(serde_json::json!(5000)));
        assert_eq!(number("-1.5e3"), Some(serde_json::json!(-1500.0)));
        for not in [
            "", " 5", "5 ", "+5", "05", "5,000", "0x10", "NaN", "1e400", "five",
        ] {
            assert_eq!(number(not), None, "{not:?}");
        }
    }

    #[test]
    fn makes_a_string_amount_ready() {
        let v = refund(&proposal("\"5000\""));
        assert_eq!(own(&v), "schema/SCHEMA_MISMATCH");
        assert_eq!(
            repair_of(&v),
            Some((
                "unquote-number".into(),
                "ready".into(),
                "ready-for-commit".into()
            ))
        );
    }

    #[test]
    fn does_not_help_when_a_rule_still_fails() {
        let v = refund(&proposal("\"9000\""));
        assert_eq!(own(&v), "schema/SCHEMA_MISMATCH");
        assert_eq!(
            repair_of(&v),
            Some((
                "unquote-number".into(),
                "business/EXCEEDS_REMAINING".into(),
                "reject".into()
            ))
        );
    }

    #[test]
    fn never_fills_a_missing_value_or_reads_prose_as_a_number() {
        let missing = r#"{"schema_version":"refund-v1","order_id":"O-1042","currency":"KRW","expected_version":7}"#;
        let v = refund(missing);
        assert_eq!(
            (own(&v), repair_of(&v)),
            ("schema/SCHEMA_MISMATCH".into(), None)
        );
        let v = refund(&proposal("\"5,000 KRW\""));
        assert_eq!(
            (own(&v), repair_of(&v)),
            ("schema/SCHEMA_MISMATCH".into(), None)
        );
    }
}
