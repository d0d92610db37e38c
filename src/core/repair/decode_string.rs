//! `decode-string` (`docs/repairs.md#decode-string`): where `type` wants an object or an
//! array and the value is a string holding one as strict JSON (the parse stage's rules:
//! RFC 8259, no duplicate keys, nothing around it but whitespace), the copy holds the
//! decoded value (a tool argument sent as `"{\"a\": 1}"`).

use crate::core::repair::{pointers_where, replace_at, type_wants};
use crate::core::stage::parse::parse_strict;
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

/// The copy of `value` with each such string decoded; `None` when there is none.
pub fn repair(value: &Value, errors: &[ValidationError<'_>]) -> Option<Value> {
    let wants_object = |e: &ValidationError<'_>| type_wants(e, |t| t == JsonType::Object);
    let wants_array = |e: &ValidationError<'_>| type_wants(e, |t| t == JsonType::Array);
    let objects = pointers_where(errors, |e| wants_object(e) && e.instance().is_string());
    let arrays = pointers_where(errors, |e| wants_array(e) && e.instance().is_string());
    let mut at = objects.clone();
    at.extend(arrays.iter().filter(|p| !objects.contains(p)).cloned());
    replace_at(value, &at, |p, v| {
        let decoded = parse_strict(v.as_str()?).ok()?;
        let fits = match &decoded {
            Value::Object(_) => objects.iter().any(|q| q == p),
            Value::Array(_) => arrays.iter().any(|q| q == p),
            _ => false,
        };
        fits.then_some(decoded)
    })
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    /// A contract whose proposal holds an object `refund` (the refund contract inside).
    fn wrapper() -> String {
        format!(
            r#"{{"type": "object", "properties": {{"refund": {REFUND}}}, "required": ["refund"], "additionalProperties": false}}"#
        )
    }

    fn wrapped(refund_json: &str) -> crate::core::verdict::Verdict {
        let text = serde_json::json!({"refund": refund_json}).to_string();
        verdict_with(&wrapper(), false, "", &record(&text))
    }

    #[test]
    fn makes_an_object_sent_as_a_string_ready() {
        let v = wrapped(&proposal("5000"));
        assert_eq!(own(&v), "schema/SCHEMA_MISMATCH");
        assert_eq!(
            repair_of(&v),
            Some((
                "decode-string".into(),
                "ready".into(),
                "ready-for-commit".into()
            ))
        );
    }

    #[test]
    fn does_not_help_when_the_decoded_value_breaks_the_schema() {
        // the decoded object still has a negative amount: the would-be outcome names it
        let v = wrapped(&proposal("-5"));
        assert_eq!(own(&v), "schema/SCHEMA_MISMATCH");
        assert_eq!(
            repair_of(&v),
            None,
            "still SCHEMA_MISMATCH: the outcome is the same"
        );
        // with the outcome changed (a rule over it), the would-be outcome names the rule
        let schema = r#"{"type": "object", "properties": {"amount_minor": {"type": "integer"}, "meta": {"type": "object"}}}"#;
        let text = serde_json::json!({"amount_minor": 9000, "meta": "{\"a\": 1}"}).to_string();
        let v = verdict_with(schema, true, "", &record(&text));
        assert_eq!(
            repair_of(&v),
            Some((
                "decode-string".into(),
                "business/EXCEEDS_REMAINING".into(),
                "reject".into()
            ))
        );
    }

    #[test]
    fn never_closes_a_truncated_string_or_decodes_prose() {
        let v = wrapped(&proposal("5000")[..40]);
        assert_eq!(
            (own(&v), repair_of(&v)),
            ("schema/SCHEMA_MISMATCH".into(), None)
        );
        let v = wrapped("the refund of 5000 KRW");
        assert_eq!(
            (own(&v), repair_of(&v)),
            ("schema/SCHEMA_MISMATCH".into(), None)
        );
    }
}
