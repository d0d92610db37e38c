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

/// Validates `value` and returns every error (empty when it meets the schema). `raw` is the
/// proposal's text, used to locate each error's value; `None` for structured proposals.
pub fn validate(validator: &Validator, value: &Value, raw: Option<&str>) -> Vec<Finding> {
    if validator.is_valid(value) {
        return Vec::new();
    }
    // at most MAX_ERRORS kept (and as many regex stalls), the rest only counted
    let mut findings: Vec<Finding> = Vec::new();
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
    }
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
        _ => Finding::new(Stage::Schema, Reason::SCHEMA_MISMATCH, e.to_string()),
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
