//! `strip-fence` (`docs/repairs.md#strip-fence`): a `FENCED_JSON` text whose value stands
//! alone inside a markdown code fence (```` ``` ```` or `~~~`, with or without an info
//! string such as `json`) or an XML-style tag (`<json>...</json>`) becomes that value. The
//! text may hold only that one fence (or tag): with a second one, which value was meant is
//! not known. A value preceded by prose with no fence or tag around it is not repaired.

use crate::core::verdict::{Finding, Reason};

/// The value inside the one fence or tag of a `FENCED_JSON` text (the parse finding's span
/// is that value); `None` for any other finding, or when the value is not alone between an
/// opening and a closing fence (or tag).
pub fn repair(text: &str, finding: &Finding) -> Option<String> {
    if finding.reason != Reason::FENCED_JSON {
        return None;
    }
    let span = finding.span?;
    let value = text.get(span.start..span.end)?;
    let before = text.get(..span.start)?.trim_end();
    let after = text.get(span.end..)?.trim_start();
    let opener = before.rsplit('\n').next().unwrap_or("").trim();
    let fenced = ["```", "~~~"].into_iter().any(|mark| {
        opener.starts_with(mark)
            && opener[mark.len()..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.'))
            && after.split('\n').next().unwrap_or("").trim() == mark
            && text.matches(mark).count() == 2
    });
    let tagged = || {
        let open = before.strip_suffix('>')?;
        let lt = open.rfind('<')?;
        let name: String = open[lt + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .collect();
        let close = format!("</{name}>");
        (!name.is_empty()
            && after.starts_with(&close)
            && text.matches(&format!("<{name}")).count() == 1
            && text.matches(&close).count() == 1)
            .then_some(())
    };
    (fenced || tagged().is_some()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    fn fix(text: &str) -> Option<String> {
        fix_text(text, repair)
    }

    #[test]
    fn takes_the_value_out_of_its_one_fence_or_tag() {
        assert_eq!(
            fix("```json\n{\"a\": 1}\n```").as_deref(),
            Some("{\"a\": 1}")
        );
        assert_eq!(fix("~~~\n[1, 2]\n~~~\n").as_deref(), Some("[1, 2]"));
        assert_eq!(
            fix("Here it is:\n```json\n{\"a\": 1}\n```\nDone.").as_deref(),
            Some("{\"a\": 1}")
        );
        assert_eq!(
            fix("<json>{\"a\": 1}</json>").as_deref(),
            Some("{\"a\": 1}")
        );
        assert_eq!(
            fix("<output format=\"json\">\n{\"a\": 1}\n</output>").as_deref(),
            Some("{\"a\": 1}")
        );
    }

    #[test]
    fn leaves_prose_two_fences_and_other_reasons_alone() {
        // prose before the value, no fence or tag
        assert_eq!(fix("Sure! {\"a\": 1}"), None);
        // two fenced values: which one was meant is not known
        assert_eq!(
            fix("```json\n{\"a\": 1}\n```\n```json\n{\"a\": 2}\n```"),
            None
        );
        // the fence does not close right after the value
        assert_eq!(fix("```json\n{\"a\": 1} and more\n```"), None);
        // a truncated document inside a fence is never closed
        assert_eq!(fix("```json\n{\"a\": 1"), None);
        assert_eq!(fix("{\"a\": 1} trailing"), None);
    }

    #[test]
    fn makes_a_fenced_proposal_ready() {
        let v = refund(&format!("```json\n{}\n```", proposal("5000")));
        assert_eq!(own(&v), "parse/FENCED_JSON");
        assert_eq!(
            repair_of(&v),
            Some((
                "strip-fence".into(),
                "ready".into(),
                "ready-for-commit".into()
            ))
        );
    }

    #[test]
    fn does_not_help_when_another_error_remains() {
        // the fenced value breaks the schema: the would-be outcome names it
        let v = refund(&format!("```json\n{}\n```", proposal("-5")));
        assert_eq!(own(&v), "parse/FENCED_JSON");
        assert_eq!(
            repair_of(&v),
            Some((
                "strip-fence".into(),
                "schema/SCHEMA_MISMATCH".into(),
                "regenerate".into()
            ))
        );
    }

    #[test]
    fn never_closes_a_truncated_fenced_document() {
        // a fence around a document cut short holds no complete value: not FENCED_JSON
        let v = refund("```json\n{\"schema_version\":\"refund-v1\",\"order_id\":\"O-1042\"\n```");
        assert_eq!(own(&v), "parse/INVALID_JSON");
        assert_eq!(repair_of(&v), None);
    }
}
