//! The schema stage: the proposal against its contract's compiled JSON Schema
//! (the `jsonschema` crate), one `SCHEMA_MISMATCH` finding per violated keyword.
//!
//! Each finding carries the instance location (`pointer`), the keyword location
//! (`schema_path`, without `$ref` hops), the keyword, the validator's message, and, when the
//! proposal came as text, the line:column and byte span of the offending value. For
//! `anyOf`/`oneOf` the branches' own errors are kept, the best-matching branch first.

use crate::core::stage::parse;
use crate::core::verdict::{Branch, Finding, MAX_ERRORS, Reason, Stage, cap_findings};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;
use std::fmt::Write as _;

/// Validates `value` and returns every error (empty when it meets the schema). `raw` is the
/// proposal's text, used to locate each error's value; `None` for structured proposals.
pub fn validate(validator: &Validator, value: &Value, raw: Option<&str>) -> Vec<Finding> {
    validate_keeping(validator, value, raw, None).0
}

/// [`validate`], keeping the validator's own errors for the repairs
/// (`docs/repairs.md#how-a-repair-is-judged`): with `keep` `Some(n)`, the second item is
/// every error of the same single pass over the value (with their `anyOf` / `oneOf`
/// branches), `None` when there are more than `n` (or `keep` is `None`, or the value is
/// valid: then no error is iterated at all). The repairs read these instead of validating
/// the value once more.
pub fn validate_keeping<'v>(
    validator: &'v Validator,
    value: &'v Value,
    raw: Option<&str>,
    keep: Option<usize>,
) -> (Vec<Finding>, Option<Vec<ValidationError<'v>>>) {
    if validator.is_valid(value) {
        return (Vec::new(), None);
    }
    // at most MAX_ERRORS kept (and as many regex stalls), the rest only counted
    let mut findings: Vec<Finding> = Vec::new();
    let mut kept: Option<Vec<ValidationError<'v>>> = keep.map(|_| Vec::new());
    let limit = keep.unwrap_or(0);
    let (mut kept_stalls, mut rest) = (0usize, 0u64);
    for e in validator.iter_errors(value) {
        let stall = matches!(e.kind(), ValidationErrorKind::BacktrackLimitExceeded { .. });
        if stall && kept_stalls < MAX_ERRORS {
            kept_stalls += 1;
            findings.push(finding(&e));
        } else if !stall && findings.len() - kept_stalls < MAX_ERRORS {
            findings.push(finding(&e));
        } else {
            rest += 1;
        }
        if let Some(errors) = &mut kept {
            if errors.len() == limit {
                kept = None;
            } else {
                errors.push(e);
            }
        }
    }
    (validate_tail(findings, rest, raw), kept)
}

/// The first finding [`validate`] would give `value`, built only as far as a verdict's
/// outcome needs it (stage, reason and decision; no message, location or branches): `None`
/// when the value meets the schema, a `CONTRACT_ERROR` when a `pattern` hit the regex
/// backtrack limit anywhere, else a `SCHEMA_MISMATCH`. What a repaired copy is judged by
/// (`docs/repairs.md#how-a-repair-is-judged`): its errors are never shown.
pub fn first_failure(validator: &Validator, value: &Value) -> Option<Finding> {
    if validator.is_valid(value) {
        return None;
    }
    let stalled = validator
        .iter_errors(value)
        .any(|e| matches!(e.kind(), ValidationErrorKind::BacktrackLimitExceeded { .. }));
    Some(if stalled {
        Finding::new(Stage::Input, Reason::CONTRACT_ERROR, String::new())
    } else {
        Finding::new(Stage::Schema, Reason::SCHEMA_MISMATCH, String::new())
    })
}

/// The findings of one pass in the order a verdict keeps them: located in `raw`, the
/// stalls alone when there are any, then reading order, and the count of the `rest` not
/// kept.
fn validate_tail(mut findings: Vec<Finding>, rest: u64, raw: Option<&str>) -> Vec<Finding> {
    // every value (the branches' too) located in one scan of the text
    if let Some(text) = raw {
        parse::locate_findings(text, &mut findings);
    }
    // A regex that hit the backtrack limit did not judge the value: the contract is at
    // fault, not the model, so regenerating cannot help.
    let stalled: Vec<Finding> = findings
        .iter()
        .filter(|f| f.reason == Reason::CONTRACT_ERROR)
        .cloned()
        .collect();
    if !stalled.is_empty() {
        return stalled;
    }
    // reading order: errors at a value first, nearest the start of the text first, then
    // errors about the whole document (`required`, `additionalProperties` at the root)
    findings.sort_by_key(|f| {
        (
            f.pointer.as_deref() == Some(""),
            f.span.map_or(usize::MAX, |s| s.start),
        )
    });
    if rest > 0
        && let Some(last) = findings.last()
    {
        let more = Finding::omitted(last, rest);
        findings.push(more);
    }
    findings
}

fn finding(e: &ValidationError<'_>) -> Finding {
    let pointer = e.instance_path().as_str().to_string();
    let mut f = match e.kind() {
        ValidationErrorKind::BacktrackLimitExceeded { .. } => Finding::new(
            Stage::Input,
            Reason::CONTRACT_ERROR,
            format!(
                "the schema's `pattern` at {} exceeded the regex backtrack limit ({}) on this value, so the contract cannot judge it; simplify the pattern (no lookaround or backreferences)",
                e.schema_path().as_str(),
                crate::core::contract::REGEX_BACKTRACK_LIMIT
            ),
        ),
        _ => Finding::new(Stage::Schema, Reason::SCHEMA_MISMATCH, message(e)),
    };
    f.schema_path = Some(e.schema_path().as_str().to_string());
    f.keyword = Some(e.kind().keyword().to_string());
    f.pointer = Some(pointer);
    let context = match e.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            Some(context)
        }
        _ => None,
    };
    if let Some(context) = context {
        let mut branches: Vec<Branch> = context
            .iter()
            .enumerate()
            .map(|(index, errs)| Branch {
                index,
                errors: cap_findings(errs.iter().map(finding).collect()),
            })
            .collect();
        let own = f.pointer.clone().unwrap_or_default();
        branches.sort_by_key(|b| (mismatch_score(b, &own), b.index));
        f.branches = branches;
    }
    f
}

/// The longest value a schema finding's message quotes whole: the compact JSON text of the
/// failing value, in bytes (`docs/verdicts.md#limits`).
pub const MAX_QUOTED_VALUE: usize = 256;

/// The bytes of a longer value's text that its message quotes before `...`.
const QUOTED_HEAD: usize = 60;

/// The validator's message of `e`, with the failing value it quotes (most of its messages
/// start with it: `{...} is not of type "array"`, `[...] has more than 5 items`) cut to its
/// first [`QUOTED_HEAD`] bytes and its size when its text is over [`MAX_QUOTED_VALUE`]
/// bytes: a 10 MB line that fails `type` at its root is a short finding, not a 10 MB one.
fn message(e: &ValidationError<'_>) -> String {
    // room for most messages at once (`to_string` starts empty and grows it piece by
    // piece: a reallocation per piece of the message)
    let mut message = String::with_capacity(128);
    let _ = write!(message, "{e}");
    if message.len() <= MAX_QUOTED_VALUE {
        return message;
    }
    let quoted = e.instance().to_string();
    if quoted.len() <= MAX_QUOTED_VALUE {
        return message;
    }
    match message.find(&quoted) {
        Some(at) => {
            let mut head = QUOTED_HEAD;
            while !quoted.is_char_boundary(head) {
                head -= 1;
            }
            format!(
                "{}{}... ({} bytes){}",
                &message[..at],
                &quoted[..head],
                quoted.len(),
                &message[at + quoted.len()..]
            )
        }
        None => message,
    }
}

/// Lower is a better match: a branch that failed only on the type of the value itself
/// did not match at all; otherwise fewer errors, deeper in the value, is closer.
fn mismatch_score(b: &Branch, own_pointer: &str) -> (bool, usize, usize) {
    let type_only = !b.errors.is_empty()
        && b.errors.iter().all(|e| {
            e.pointer.as_deref() == Some(own_pointer)
                && matches!(
                    e.keyword.as_deref(),
                    Some("type" | "const" | "enum" | "false")
                )
        });
    let shallowest = b
        .errors
        .iter()
        .map(|e| e.pointer.as_deref().map_or(0, |p| p.matches('/').count()))
        .min()
        .unwrap_or(0);
    (type_only, b.errors.len(), usize::MAX - shallowest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compile(schema: Value) -> Validator {
        jsonschema::options()
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex()
                    .backtrack_limit(crate::core::contract::REGEX_BACKTRACK_LIMIT),
            )
            .build(&schema)
            .expect("the schema compiles")
    }

    fn refund() -> Validator {
        compile(
            serde_json::from_str(crate::core::repair::testkit::REFUND).expect("the refund schema"),
        )
    }

    /// `(stage, reason, decision)` of a finding.
    fn outcome(f: &Finding) -> (Stage, String, crate::core::verdict::Decision) {
        (f.stage, f.reason.to_string(), f.decision)
    }

    #[test]
    fn a_long_failing_value_is_quoted_by_its_head_and_size() {
        let v = compile(json!({"type": "object", "properties": {"s": {"maxLength": 2}}}));
        // 10,000 zeros: `[0,0,...]` is 20,001 bytes of JSON
        let big = Value::Array(vec![json!(0); 10_000]);
        let f = validate(&v, &big, None);
        assert_eq!(
            f[0].message,
            format!(
                "{}... (20001 bytes) is not of type \"object\"",
                "[0,".to_owned() + &"0,".repeat(28) + "0"
            )
        );
        // 200 two-byte characters: the cut falls back to a character boundary (59 bytes)
        let s = json!({"s": "é".repeat(200)});
        let f = validate(&v, &s, None);
        assert_eq!(
            f[0].message,
            format!(
                "\"{}... (402 bytes) is longer than 2 characters",
                "é".repeat(29)
            )
        );
        // at most 256 bytes: quoted whole, as the validator writes it
        let s = json!({"s": "x".repeat(254)});
        let f = validate(&v, &s, None);
        assert_eq!(
            f[0].message,
            format!("\"{}\" is longer than 2 characters", "x".repeat(254))
        );
    }

    #[test]
    fn the_kept_errors_are_the_same_pass_as_the_findings() {
        let v = refund();
        let value = json!({"schema_version": "refund-v2", "order_id": "", "amount_minor": "5000",
            "currency": "krw", "expected_version": 7, "approved": true});
        let (findings, kept) = validate_keeping(&v, &value, None, Some(100));
        assert_eq!(findings, validate(&v, &value, None));
        let kept = kept.expect("fewer than 100 errors");
        let again: Vec<(String, String)> = v
            .iter_errors(&value)
            .map(|e| (e.instance_path().to_string(), e.to_string()))
            .collect();
        let kept: Vec<(String, String)> = kept
            .iter()
            .map(|e| (e.instance_path().to_string(), e.to_string()))
            .collect();
        assert_eq!(kept, again);
        assert_eq!(kept.len(), 5, "{kept:?}");
        // more errors than the limit: none kept; none asked for or valid: none iterated
        assert!(validate_keeping(&v, &value, None, Some(4)).1.is_none());
        assert!(validate_keeping(&v, &value, None, Some(5)).1.is_some());
        assert!(validate_keeping(&v, &value, None, None).1.is_none());
        let ok = json!({"schema_version": "refund-v1", "order_id": "O-1", "amount_minor": 5,
            "currency": "KRW", "expected_version": 7});
        let (findings, kept) = validate_keeping(&v, &ok, None, Some(100));
        assert_eq!((findings, kept.is_none()), (Vec::new(), true));
    }

    #[test]
    fn first_failure_gives_the_outcome_validate_gives() {
        let v = refund();
        let ok = json!({"schema_version": "refund-v1", "order_id": "O-1", "amount_minor": 5,
            "currency": "KRW", "expected_version": 7});
        assert_eq!(first_failure(&v, &ok), None);
        let bad = json!({"schema_version": "refund-v1", "order_id": "O-1", "amount_minor": "5",
            "currency": "KRW"});
        let f = first_failure(&v, &bad).expect("fails");
        assert_eq!(outcome(&f), outcome(&validate(&v, &bad, None)[0]));
        assert_eq!(
            outcome(&f),
            (
                Stage::Schema,
                "SCHEMA_MISMATCH".into(),
                crate::core::verdict::Decision::Regenerate
            )
        );
        // a stalled pattern: the contract's fault decides, as in validate
        let evil = compile(json!({"type": "string", "pattern": "^(?:(a|a)+)(?<!b)$"}));
        let value = json!(format!("{}!", "a".repeat(28)));
        let f = first_failure(&evil, &value).expect("fails");
        assert_eq!(outcome(&f), outcome(&validate(&evil, &value, None)[0]));
        assert_eq!(
            outcome(&f),
            (
                Stage::Input,
                "CONTRACT_ERROR".into(),
                crate::core::verdict::Decision::Reject
            )
        );
    }
}
