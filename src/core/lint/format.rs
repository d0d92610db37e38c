//! `FORMAT_NOT_ASSERTED`: `format` is an annotation unless format assertion is on
//! (2020-12 Validation section 7.2, 2019-09 section 7.2; `format_assertion` in `docs/config.md`).

use super::walk::Node;
use super::{LintFinding, Severity, codes};
use serde_json::Value;

/// One finding per `format` keyword while `format_assertion` is off.
pub(super) fn check(node: &Node<'_>, format_assertion: bool, out: &mut Vec<LintFinding>) {
    if format_assertion || !node.live {
        return;
    }
    if let Some(Value::String(f)) = node.schema.get("format") {
        out.push(LintFinding::new(
            codes::FORMAT_NOT_ASSERTED,
            Severity::Warning,
            format!("{}/format", node.pointer),
            format!(
                "`format: \"{f}\"` is not checked: format assertion is off, so any string passes"
            ),
            Some("set `format_assertion = true` in verdict.toml, or add a `pattern`".into()),
        ));
    }
}
