//! `drop-trailing` (`docs/repairs.md#drop-trailing`): a `TRAILING_CONTENT` text (one
//! complete JSON value, then prose or a second value) becomes its first complete value.

use crate::core::verdict::{Finding, Reason};

/// The text up to where its trailing content starts (the parse finding's span), for a
/// `TRAILING_CONTENT` finding; `None` for any other.
pub fn repair(text: &str, finding: &Finding) -> Option<String> {
    if finding.reason != Reason::TRAILING_CONTENT {
        return None;
    }
    let first = text.get(..finding.span?.start)?.trim_end();
    (!first.is_empty()).then(|| first.to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    fn fix(text: &str) -> Option<String> {
        fix_text(text, repair)
    }

    #[test]
    fn keeps_the_first_complete_value() {
        assert_eq!(
            fix("{\"a\": 1}\n\nLet me know!").as_deref(),
            Some("{\"a\": 1}")
        );
        assert_eq!(fix("[1] [2]").as_deref(), Some("[1]"));
        assert_eq!(
            fix("{\"a\": 1"),
            None,
            "a truncated text has no trailing content"
        );
        assert_eq!(
            fix("```json\n{\"a\": 1}\n```"),
            None,
            "fenced is not trailing"
        );
    }

    #[test]
    fn makes_a_proposal_with_trailing_prose_ready() {
        let v = refund(&format!(
            "{}\n\nI've prepared the refund.",
            proposal("5000")
        ));
        assert_eq!(own(&v), "parse/TRAILING_CONTENT");
        assert_eq!(
            repair_of(&v),
            Some((
                "drop-trailing".into(),
                "ready".into(),
                "ready-for-commit".into()
            ))
        );
    }

    #[test]
    fn does_not_help_when_a_rule_still_fails() {
        // 9000 exceeds the remainder 8000: the would-be outcome is the rule's
        let v = refund(&format!("{} Done.", proposal("9000")));
        assert_eq!(own(&v), "parse/TRAILING_CONTENT");
        assert_eq!(
            repair_of(&v),
            Some((
                "drop-trailing".into(),
                "business/EXCEEDS_REMAINING".into(),
                "reject".into()
            ))
        );
    }

    #[test]
    fn never_closes_a_truncated_document() {
        let v = refund(
            "{\"schema_version\":\"refund-v1\",\"order_id\":\"O-1042\",\"amount_minor\": 50",
        );
        assert_eq!(own(&v), "parse/TRUNCATED_JSON");
        assert_eq!(repair_of(&v), None);
    }
}
