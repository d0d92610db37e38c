//! `RULES_UNKNOWN_FIELD`: a CEL rule that reads a proposal member its contract's schema does
//! not define but nearly names (a typo). On a proposal without that member the rule cannot
//! be evaluated, so it is a `RULE_ERROR` (fails closed); with `additionalProperties: false`
//! that is every capture.
//! Only near-misses are reported (Jaro-Winkler, as the other "did you mean" hints), and only
//! where the schema lists `properties` at that level, so a rule over an open or composed
//! object is never flagged.

use crate::core::hint::did_you_mean;
use crate::core::lint::{LintFinding, Severity, codes};
use crate::core::rules::RuleSet;
use crate::core::verdict::LineCol;
use serde_json::Value;

/// The findings for one rules file (`file`, workspace-relative) against its contract's
/// schema (the parsed JSON Schema document).
pub fn lint_rule_fields(file: &str, rules: &RuleSet, schema: &Value) -> Vec<LintFinding> {
    let mut out = Vec::new();
    for rule in &rules.rules {
        for path in rule.proposal_paths() {
            let mut level = schema;
            for (depth, field) in path.iter().enumerate() {
                let Some(props) = level.get("properties").and_then(Value::as_object) else {
                    break;
                };
                if let Some(next) = props.get(field) {
                    level = next;
                    continue;
                }
                if let Some(near) = did_you_mean(field, props.keys().map(String::as_str)) {
                    let read = format!("proposal.{}", path[..=depth].join("."));
                    let mut pointer = String::new();
                    for f in &path[..depth] {
                        pointer.push_str("/properties/");
                        crate::core::pointer::push_escaped(&mut pointer, f);
                    }
                    out.push(LintFinding {
                        code: codes::RULES_UNKNOWN_FIELD.into(),
                        severity: Severity::Warning,
                        file: file.to_string(),
                        // the file is the rules file: its pointer would mislead
                        pointer: String::new(),
                        at: Some(LineCol {
                            line: rule.line,
                            column: 1,
                        }),
                        message: format!(
                            "rule {} ({}) reads {read}, a member the schema does not define (at {pointer}/properties); a capture without it fails the rule as RULE_ERROR",
                            rule.index, rule.reason
                        ),
                        hint: Some(format!("did you mean `{near}`?")),
                    });
                }
                break;
            }
        }
    }
    out.sort_by(|a, b| (a.at, &a.message).cmp(&(b.at, &b.message)));
    out.dedup_by(|a, b| a.at == b.at && a.message == b.message);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(src: &str) -> RuleSet {
        RuleSet::load("c.rules.toml", src).unwrap()
    }

    #[test]
    fn near_misses_at_any_depth_are_found_and_open_levels_are_not_judged() {
        let schema = json!({"type": "object", "properties": {
            "amount_minor": {"type": "integer"},
            "order": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            "meta": {"type": "object"}
        }});
        let rs = rules(
            "[[rule]]\nreason = \"A\"\nrule = \"proposal.amount_minr > 0 && has(proposal.order.ordr_id)\"\nmessage = \"m\"\n\n[[rule]]\nreason = \"B\"\nrule = \"proposal.meta.anything == 1 && proposal.zzz == 2 && [1].all(x, x < proposal.amount_minor)\"\nmessage = \"m\"\n",
        );
        let f = lint_rule_fields("schemas/c.rules.toml", &rs, &schema);
        let got: Vec<(&str, Option<&str>)> = f
            .iter()
            .map(|f| (f.message.as_str(), f.hint.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "rule 1 (A) reads proposal.amount_minr, a member the schema does not define (at /properties); a capture without it fails the rule as RULE_ERROR",
                    Some("did you mean `amount_minor`?")
                ),
                (
                    "rule 1 (A) reads proposal.order.ordr_id, a member the schema does not define (at /properties/order/properties); a capture without it fails the rule as RULE_ERROR",
                    Some("did you mean `order_id`?")
                ),
            ]
        );
        assert!(f.iter().all(|f| f.pointer.is_empty()));
        assert_eq!(f[0].at, Some(LineCol { line: 3, column: 1 }));
        assert_eq!(f[0].code, codes::RULES_UNKNOWN_FIELD);
    }
}
