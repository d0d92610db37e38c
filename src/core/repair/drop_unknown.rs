//! `drop-unknown` (`docs/repairs.md#drop-unknown`): where `additionalProperties: false`
//! rejects members of an object, the copy is that object without them. A schema-valued
//! `additionalProperties` (members it validates) and `unevaluatedProperties` are not this
//! repair's.

use crate::core::repair::each_error;
use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// The copy of `value` without the members `additionalProperties: false` rejects; `None`
/// when there are none.
pub fn repair(value: &Value, errors: &[ValidationError<'_>]) -> Option<Value> {
    let mut drops: Vec<(String, Vec<String>)> = Vec::new();
    each_error(errors, &mut |e| {
        if let ValidationErrorKind::AdditionalProperties { unexpected } = e.kind() {
            let p = e.instance_path().as_str().to_owned();
            match drops.iter_mut().find(|(q, _)| *q == p) {
                Some((_, keys)) => keys.extend(unexpected.iter().cloned()),
                None => drops.push((p, unexpected.clone())),
            }
        }
    });
    // copied only when one of the keys is there to drop
    let present = drops.iter().any(|(p, keys)| {
        matches!(value.pointer(p), Some(Value::Object(map)) if keys.iter().any(|k| map.contains_key(k)))
    });
    if !present {
        return None;
    }
    let mut copy = value.clone();
    for (p, keys) in &drops {
        if let Some(Value::Object(map)) = copy.pointer_mut(p) {
            for k in keys {
                map.remove(k);
            }
        }
    }
    Some(copy)
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn makes_a_proposal_with_an_extra_field_ready() {
        let v = refund(&proposal("5000").replace('}', ",\"approved\":true}"));
        assert_eq!(own(&v), "schema/SCHEMA_MISMATCH");
        assert_eq!(
            repair_of(&v),
            Some((
                "drop-unknown".into(),
                "ready".into(),
                "ready-for-commit".into()
            ))
        );
    }

    #[test]
    fn does_not_help_when_a_rule_still_fails() {
        let v = refund(&proposal("9000").replace('}', ",\"note\":\"x\"}"));
        assert_eq!(
            repair_of(&v),
            Some((
                "drop-unknown".into(),
                "business/EXCEEDS_REMAINING".into(),
                "reject".into()
            ))
        );
    }

    #[test]
    fn never_fills_the_missing_key_an_extra_one_stands_for() {
        // `amount` instead of `amount_minor`: dropping it leaves `required` failing
        let text = proposal("5000").replace("amount_minor", "amount");
        let v = refund(&text);
        assert_eq!(
            (own(&v), repair_of(&v)),
            ("schema/SCHEMA_MISMATCH".into(), None)
        );
    }
}
