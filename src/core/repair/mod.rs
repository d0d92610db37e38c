//! Repairs: for a capture that fails at the parse or schema stage, whether one named,
//! narrow fix would change its outcome (`docs/repairs.md`). A repair is never applied: it
//! runs on a copy of the failing stage's input, the copy goes through the remaining stages
//! (schema, business rules, the confirmed-intent comparison), and the verdict keeps its own
//! stage, decision and reason and gains [`Repair`]: the first repair of [`TABLE`] whose copy
//! has another outcome, and that outcome ([`WouldBe`]).
//!
//! The table (the design contract's section on repairs, `docs/repairs.md#the-table`):
//!
//! | repair | applies to | what it does on a copy |
//! |---|---|---|
//! | `strip-fence` | `FENCED_JSON` | takes the one fenced (or tagged) JSON value ([`strip_fence`]) |
//! | `drop-trailing` | `TRAILING_CONTENT` | keeps the first complete value ([`drop_trailing`]) |
//! | `unquote-number` | `SCHEMA_MISMATCH` by `type` integer/number on a numeric string | the number the string spells ([`unquote_number`]) |
//! | `enum-case` | `SCHEMA_MISMATCH` by `enum` where one allowed value differs only in case | that value ([`enum_case`]) |
//! | `drop-unknown` | `SCHEMA_MISMATCH` by `additionalProperties: false` | removes the unknown keys ([`drop_unknown`]) |
//! | `decode-string` | `SCHEMA_MISMATCH` by `type` object/array on a string holding that JSON | the decoded value ([`decode_string`]) |
//!
//! Never a repair: closing a truncated document, filling a missing value, turning a refusal
//! into JSON (no repair applies to `TRUNCATED_JSON`, `required` or a response-stage reason).
//! Cost: nothing on a capture that passes the parse and schema stages; a failing one pays a
//! check of its findings' reasons and keywords. The value repairs read the schema stage's
//! own validator errors (kept from its one pass, `stage::schema::validate_keeping`: the
//! value is not validated again); a repair's copy is made only when it changes a value,
//! and judged by the outcome alone (`stage::schema::first_failure`, then the business
//! stage), in table order, stopping at the first copy with another outcome.

pub mod decode_string;
pub mod drop_trailing;
pub mod drop_unknown;
pub mod enum_case;
pub mod rebuild;
pub mod strip_fence;
pub mod unquote_number;

use crate::core::verdict::{Decision, Finding, Reason, Stage};
use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// The name of a repair, in [`TABLE`] order (`docs/repairs.md#the-table`). Serialized in
/// kebab-case (`"strip-fence"`), as `[repairs] allow` in `verdict.toml` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepairName {
    /// `strip-fence`: the one fenced (or tagged) JSON value of a `FENCED_JSON` text.
    StripFence,
    /// `drop-trailing`: the first complete value of a `TRAILING_CONTENT` text.
    DropTrailing,
    /// `unquote-number`: a numeric string where `type` wants an integer or a number.
    UnquoteNumber,
    /// `enum-case`: the one allowed `enum` value that differs from the string only in case.
    EnumCase,
    /// `drop-unknown`: the keys `additionalProperties: false` rejects, removed.
    DropUnknown,
    /// `decode-string`: a string holding the JSON object or array `type` wants, decoded.
    DecodeString,
}

impl RepairName {
    /// Every repair, in table order.
    pub const ALL: [RepairName; 6] = [
        RepairName::StripFence,
        RepairName::DropTrailing,
        RepairName::UnquoteNumber,
        RepairName::EnumCase,
        RepairName::DropUnknown,
        RepairName::DecodeString,
    ];

    /// The name as written everywhere (`"unquote-number"`).
    pub fn as_str(self) -> &'static str {
        match self {
            RepairName::StripFence => "strip-fence",
            RepairName::DropTrailing => "drop-trailing",
            RepairName::UnquoteNumber => "unquote-number",
            RepairName::EnumCase => "enum-case",
            RepairName::DropUnknown => "drop-unknown",
            RepairName::DecodeString => "decode-string",
        }
    }

    /// Parses a repair's name (`"drop-unknown"`); `None` for any other text.
    pub fn parse(s: &str) -> Option<RepairName> {
        RepairName::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Its position in [`TABLE`] (0 for `strip-fence`).
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for RepairName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a repaired copy's verdict would be: `{stage, decision, reason}` (`reason` `null`
/// when it would be ready).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WouldBe {
    /// The first failing stage of the copy, or `ready`.
    pub stage: Stage,
    /// Its decision (`ready-for-commit` when ready).
    pub decision: Decision,
    /// Its first failure's reason; `None` when ready.
    pub reason: Option<Reason>,
}

impl WouldBe {
    /// The outcome the findings of a run give: decided by `findings[0]`, ready when empty.
    pub fn of(findings: &[Finding]) -> WouldBe {
        match findings.first() {
            Some(f) => WouldBe {
                stage: f.stage,
                decision: f.decision,
                reason: Some(f.reason.clone()),
            },
            None => WouldBe {
                stage: Stage::Ready,
                decision: Decision::ReadyForCommit,
                reason: None,
            },
        }
    }

    /// Whether the copy would pass every stage.
    pub fn is_ready(&self) -> bool {
        self.stage == Stage::Ready
    }

    /// `ready`, or `schema/SCHEMA_MISMATCH`.
    pub fn label(&self) -> String {
        match &self.reason {
            Some(r) => format!("{}/{r}", self.stage),
            None => self.stage.to_string(),
        }
    }
}

/// A verdict's `repair` (`docs/verdicts.md#repair`): the first repair of [`TABLE`], among
/// those `[repairs] allow` lets run, whose copy has another outcome than the verdict, and
/// that outcome. The verdict itself is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Repair {
    /// The repair.
    pub name: RepairName,
    /// The repaired copy's outcome.
    pub would_be: WouldBe,
}

impl Repair {
    /// The one sentence every front end gives a verdict's repair (`docs/repairs.md#in-words`):
    /// `` would pass after `drop-unknown` (not applied) `` when the copy would be ready, else
    /// `` after `unquote-number` it would be business/EXCEEDS_REMAINING (reject; not
    /// applied) ``. Names, stages and reasons only (a rule's reason is the contract's text,
    /// not the model's). `core::feedback` keeps its own model-facing wording.
    pub fn sentence(&self) -> String {
        if self.would_be.is_ready() {
            format!("would pass after `{}` (not applied)", self.name)
        } else {
            format!(
                "after `{}` it would be {} ({}; not applied)",
                self.name,
                self.would_be.label(),
                self.would_be.decision
            )
        }
    }

    /// The compact form the counts keep ([`RepairMark`]).
    pub fn mark(&self) -> RepairMark {
        RepairMark {
            name: self.name,
            ready: self.would_be.is_ready(),
        }
    }
}

/// What the funnel's rates need of a verdict's [`Repair`] (`docs/repairs.md#the-rates`):
/// which repair, and whether its copy would be ready. Two bytes, kept with a verdict's
/// outcome by the session and the workbench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RepairMark {
    /// The repair.
    pub name: RepairName,
    /// Whether the repaired copy would pass every stage.
    pub ready: bool,
}

/// Which failing stage, reason or schema keyword a repair applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// A parse-stage failure with this reason (the verdict's first finding).
    Parse(&'static str),
    /// A `SCHEMA_MISMATCH` where a finding (or one of its `anyOf` / `oneOf` branches)
    /// failed this keyword.
    Schema(&'static str),
}

/// A repair's function.
#[derive(Clone, Copy)]
pub enum Fix {
    /// Over the text that failed to parse and its parse finding: the repaired text, or
    /// `None` when the repair does not apply to it.
    Text(fn(&str, &Finding) -> Option<String>),
    /// Over the value that failed the schema and the validator's errors (with their
    /// `anyOf` / `oneOf` branches): the repaired copy, or `None` when nothing was changed.
    Value(fn(&Value, &[ValidationError<'_>]) -> Option<Value>),
}

impl fmt::Debug for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fix::Text(_) => "Fix::Text",
            Fix::Value(_) => "Fix::Value",
        })
    }
}

/// One row of [`TABLE`].
#[derive(Debug, Clone, Copy)]
pub struct Def {
    /// Its name.
    pub name: RepairName,
    /// What it applies to.
    pub applies: Applies,
    /// What it does on a copy.
    pub fix: Fix,
}

/// The repairs, in the order they are tried (`docs/repairs.md#the-table`).
pub const TABLE: [Def; 6] = [
    Def {
        name: RepairName::StripFence,
        applies: Applies::Parse("FENCED_JSON"),
        fix: Fix::Text(strip_fence::repair),
    },
    Def {
        name: RepairName::DropTrailing,
        applies: Applies::Parse("TRAILING_CONTENT"),
        fix: Fix::Text(drop_trailing::repair),
    },
    Def {
        name: RepairName::UnquoteNumber,
        applies: Applies::Schema("type"),
        fix: Fix::Value(unquote_number::repair),
    },
    Def {
        name: RepairName::EnumCase,
        applies: Applies::Schema("enum"),
        fix: Fix::Value(enum_case::repair),
    },
    Def {
        name: RepairName::DropUnknown,
        applies: Applies::Schema("additionalProperties"),
        fix: Fix::Value(drop_unknown::repair),
    },
    Def {
        name: RepairName::DecodeString,
        applies: Applies::Schema("type"),
        fix: Fix::Value(decode_string::repair),
    },
];

/// Whether any finding of a failing parse stage has `reason`.
pub(crate) fn parse_applies(findings: &[Finding], reason: &str) -> bool {
    findings
        .first()
        .is_some_and(|f| f.stage == Stage::Parse && f.reason.as_str() == reason)
}

/// Whether a `SCHEMA_MISMATCH` finding, or one of its branches' (recursively), failed
/// `keyword`.
pub(crate) fn schema_applies(findings: &[Finding], keyword: &str) -> bool {
    findings.iter().any(|f| {
        f.reason == Reason::SCHEMA_MISMATCH
            && (f.keyword.as_deref() == Some(keyword)
                || f.branches
                    .iter()
                    .any(|b| schema_applies(&b.errors, keyword)))
    })
}

/// Whether any repair of `allowed` applies to the schema findings `findings`: the cheap
/// test before the validator is run again for its errors' details.
pub(crate) fn any_schema_repair(findings: &[Finding], allowed: &[RepairName]) -> bool {
    TABLE.iter().any(|d| {
        allowed.contains(&d.name)
            && matches!(d.applies, Applies::Schema(k) if schema_applies(findings, k))
    })
}

/// The most validator errors a repair reads (a value with more is not repaired: one narrow
/// fix is not what such a value needs, and the cost stays bounded). The schema stage keeps
/// up to this many of its own errors for the repairs (`stage::schema::validate_keeping`).
pub const MAX_REPAIR_ERRORS: usize = 10_000;

/// Calls `f` on every error of `errors` and of their `anyOf` / `oneOf` branches,
/// recursively (a branch's instance paths are from the root, as the top level's).
pub fn each_error(errors: &[ValidationError<'_>], f: &mut dyn FnMut(&ValidationError<'_>)) {
    for e in errors {
        f(e);
        match e.kind() {
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                for branch in context {
                    each_error(branch, f);
                }
            }
            _ => {}
        }
    }
}

/// Whether `e` is a `type` error whose allowed types include one `wanted` accepts.
pub(crate) fn type_wants(
    e: &ValidationError<'_>,
    wanted: impl Fn(jsonschema::JsonType) -> bool,
) -> bool {
    match e.kind() {
        ValidationErrorKind::Type { kind } => match kind {
            jsonschema::error::TypeKind::Single(t) => wanted(*t),
            jsonschema::error::TypeKind::Multiple(set) => set.iter().any(wanted),
        },
        _ => false,
    }
}

/// The instance pointers (deduplicated, in error order) of the errors of `errors` and their
/// branches that `pick` selects.
pub(crate) fn pointers_where(
    errors: &[ValidationError<'_>],
    pick: impl Fn(&ValidationError<'_>) -> bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    each_error(errors, &mut |e| {
        let p = e.instance_path().as_str();
        if pick(e) && !out.iter().any(|q| q == p) {
            out.push(p.to_owned());
        }
    });
    out
}

/// Replaces the values at `pointers` of a copy of `value` with what `with` gives for each
/// (its pointer and value; `None`: left as it is); `None` when nothing changed.
/// The new values are worked out on `value` itself; it is copied only when one of them
/// differs from what it replaces.
pub(crate) fn replace_at(
    value: &Value,
    pointers: &[String],
    with: impl Fn(&str, &Value) -> Option<Value>,
) -> Option<Value> {
    let news: Vec<(&String, Value)> = pointers
        .iter()
        .filter_map(|p| {
            let old = value.pointer(p)?;
            let new = with(p, old)?;
            (new != *old).then_some((p, new))
        })
        .collect();
    if news.is_empty() {
        return None;
    }
    let mut copy = value.clone();
    for (p, new) in news {
        if let Some(slot) = copy.pointer_mut(p) {
            *slot = new;
        }
    }
    Some(copy)
}

#[cfg(test)]
pub(crate) mod testkit {
    //! A workspace in a temporary folder and one capture record through the whole pipeline,
    //! for the repairs' tests.
    use crate::core::capture::RawRecord;
    use crate::core::record_ref::RecordRef;
    use crate::core::verdict::Verdict;
    use crate::core::workspace::Workspace;

    /// What the text-level repair `repair` makes of `text`, a text that fails to parse.
    pub fn fix_text(
        text: &str,
        repair: fn(&str, &crate::core::verdict::Finding) -> Option<String>,
    ) -> Option<String> {
        let f = crate::core::stage::parse::parse_strict(text).expect_err("the text fails to parse");
        repair(text, &f)
    }

    /// The refund contract of `samples/refund` (copied from
    /// `samples/refund/schemas/refund-v1.schema.json`, descriptions left out).
    pub const REFUND: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "schema_version": {"const": "refund-v1"},
    "order_id": {"type": "string", "minLength": 1},
    "amount_minor": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
    "currency": {"enum": ["KRW", "USD"]},
    "expected_version": {"type": "integer", "minimum": 0}
  },
  "required": ["schema_version", "order_id", "amount_minor", "currency", "expected_version"],
  "additionalProperties": false
}"#;

    /// One rule of the sample's rules file: the amount fits the remainder.
    pub const RULES: &str = r#"[[rule]]
reason = "EXCEEDS_REMAINING"
rule = "proposal.amount_minor <= context.order.paid_minor - context.order.refunded_minor"
message = "the amount exceeds what is left to refund"
field = "/amount_minor"
"#;

    /// The verdict of `record` (a capture record's JSON) in a workspace with `schema` as
    /// `schemas/c.schema.json`, the rules [`RULES`] when `rules`, and `toml` as
    /// `verdict.toml`.
    pub fn verdict_with(schema: &str, rules: bool, toml: &str, record: &str) -> Verdict {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::create_dir_all(dir.path().join("schemas")).expect("schemas/");
        std::fs::create_dir_all(dir.path().join("captures")).expect("captures/");
        std::fs::write(dir.path().join("schemas/c.schema.json"), schema).expect("schema");
        if rules {
            std::fs::write(dir.path().join("schemas/c.rules.toml"), RULES).expect("rules");
        }
        std::fs::write(dir.path().join("verdict.toml"), toml).expect("verdict.toml");
        let ws = Workspace::open(dir.path()).expect("the workspace opens");
        let raw = RawRecord::json(
            RecordRef::new("captures/x.json", None),
            Ok(record.to_owned()),
        );
        ws.check(&raw).expect("a capture")
    }

    /// [`verdict_with`] the refund contract and its rule, every repair allowed; `output` is
    /// the model's text, with the sample's context.
    pub fn refund(output: &str) -> Verdict {
        verdict_with(REFUND, true, "", &record(output))
    }

    /// A capture record with `output` as its text and the sample's context.
    pub fn record(output: &str) -> String {
        serde_json::json!({
            "output": output,
            "context": {"order": {"paid_minor": 10000, "refunded_minor": 2000}}
        })
        .to_string()
    }

    /// A passing proposal's text, with `amount` as the amount's JSON.
    pub fn proposal(amount: &str) -> String {
        format!(
            r#"{{"schema_version":"refund-v1","order_id":"O-1042","amount_minor":{amount},"currency":"KRW","expected_version":7}}"#
        )
    }

    /// `(repair name, would-be stage/reason/decision)` of a verdict, or `None`.
    pub fn repair_of(v: &Verdict) -> Option<(String, String, String)> {
        v.repair.as_ref().map(|r| {
            (
                r.name.to_string(),
                r.would_be.label(),
                r.would_be.decision.to_string(),
            )
        })
    }

    /// The verdict's own `stage/REASON`.
    pub fn own(v: &Verdict) -> String {
        v.outcome().label()
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;

    #[test]
    fn the_table_is_in_name_order_and_names_round_trip() {
        for (i, d) in TABLE.iter().enumerate() {
            assert_eq!(d.name.index(), i);
            assert_eq!(RepairName::parse(d.name.as_str()), Some(d.name));
            assert_eq!(
                serde_json::to_value(d.name).unwrap(),
                Value::String(d.name.as_str().into())
            );
        }
        assert_eq!(RepairName::parse("strip_fence"), None);
    }

    #[test]
    fn one_sentence_names_the_repair_and_what_would_remain() {
        let ready = Repair {
            name: RepairName::DropUnknown,
            would_be: WouldBe::of(&[]),
        };
        assert_eq!(
            ready.sentence(),
            "would pass after `drop-unknown` (not applied)"
        );
        let v = refund(&proposal("\"9000\""));
        let r = v.repair.expect("unquote-number applies");
        assert_eq!(
            r.sentence(),
            "after `unquote-number` it would be business/EXCEEDS_REMAINING (reject; not applied)"
        );
    }

    #[test]
    fn a_ready_capture_gets_no_repair_and_neither_does_a_refusal() {
        let v = refund(&proposal("5000"));
        assert_eq!((own(&v), repair_of(&v)), ("ready".into(), None));
        let refusal = serde_json::json!({
            "output": "I can't help with that refund.",
            "status": "refusal"
        })
        .to_string();
        let v = verdict_with(REFUND, true, "", &refusal);
        assert_eq!((own(&v), repair_of(&v)), ("response/REFUSAL".into(), None));
    }

    #[test]
    fn allow_chooses_which_repairs_run() {
        let fenced = record(&format!("```json\n{}\n```", proposal("5000")));
        let v = verdict_with(
            REFUND,
            true,
            "[repairs]\nallow = [\"drop-unknown\"]\n",
            &fenced,
        );
        assert_eq!((own(&v), repair_of(&v)), ("parse/FENCED_JSON".into(), None));
        let v = verdict_with(
            REFUND,
            true,
            "[repairs]\nallow = [\"strip-fence\"]\n",
            &fenced,
        );
        assert_eq!(
            repair_of(&v),
            Some((
                "strip-fence".into(),
                "ready".into(),
                "ready-for-commit".into()
            ))
        );
        let none = verdict_with(REFUND, true, "[repairs]\nallow = []\n", &fenced);
        assert_eq!(repair_of(&none), None);
    }

    #[test]
    fn the_verdict_keeps_its_own_outcome_and_the_json_carries_repair() {
        let v = refund(&proposal("\"5000\""));
        assert_eq!(
            (v.stage, v.decision, v.reason.clone()),
            (
                Stage::Schema,
                Decision::Regenerate,
                Some(Reason::SCHEMA_MISMATCH)
            )
        );
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(
            json["repair"],
            serde_json::json!({"name": "unquote-number", "would_be": {"stage": "ready", "decision": "ready-for-commit", "reason": null}})
        );
        let ready = serde_json::to_value(refund(&proposal("5000"))).unwrap();
        assert!(ready.get("repair").is_none(), "absent when none: {ready}");
    }
}
