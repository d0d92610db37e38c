//! What to do next with a verdict: the `next_action` sentence of every verdict, and the
//! self-correction message an agent loop re-injects for a `regenerate` verdict (the
//! practice of feeding a failed structured output back to the model with the error and
//! the contract). For other decisions it says why regenerating would not help. A capture
//! with a `repair` (`docs/repairs.md#feedback`) also gets a note for the loop's author, kept
//! out of the model's message: which repair would pass, and that the contract or the prompt,
//! not a repair, should change.

use crate::core::pipeline::Evaluation;
use crate::core::stage::intent::short;
use crate::core::verdict::{Decision, Finding, Reason, Stage, Verdict};
use crate::core::workspace::Workspace;
use serde::Serialize;
use serde_json::Value;

/// One sentence: what to do next with a verdict of this decision and reason.
pub fn next_action(decision: Decision, reason: Option<&Reason>) -> &'static str {
    let r = reason.map(Reason::as_str).unwrap_or("");
    match (decision, r) {
        (Decision::ReadyForCommit, _) => {
            "Ready for the write step: execute it, and re-check state at commit time."
        }
        (Decision::Retry, "TRUNCATED_OUTPUT") => {
            "Retry the same request with a larger output token budget (bounded retries)."
        }
        (Decision::Retry, "REQUEST_ERROR") => {
            "Retry the same request after a backoff (bounded retries); the error was transient."
        }
        (Decision::Retry, _) => "Retry the same request (bounded retries with backoff).",
        (Decision::Regenerate, _) => {
            "Ask the model again with the error and the contract as feedback (`verdict feedback ID`)."
        }
        (Decision::Recheck, "INTENT_MISMATCH") => {
            "Confirm with the user: the proposal differs from what they confirmed."
        }
        (Decision::Recheck, "STALE_STATE") => {
            "Re-fetch the current state and confirm with the user before acting."
        }
        (Decision::Recheck, _) => "Re-fetch state or confirm with the user before anything else.",
        (Decision::Reject, "REFUSAL") => {
            "Do not execute: surface the model's refusal to the user; never repair it into data."
        }
        (Decision::Reject, "CONTENT_FILTERED") => {
            "Do not execute: a provider filter stopped the output; surface it to a person."
        }
        (Decision::Reject, "CONTRACT_ERROR" | "UNKNOWN_CONTRACT" | "INVALID_CAPTURE") => {
            "Fix the capture or the contract; nothing about the model's output was judged."
        }
        (Decision::Reject, "RULE_ERROR") => {
            "Do not execute: a rule could not be evaluated (fails closed); fix the rule or the context."
        }
        (Decision::Reject, _) => "Do not execute; surface this to a person.",
    }
}

/// The self-correction feedback for one capture.
#[derive(Debug, Clone, Serialize)]
pub struct Feedback {
    /// The capture id.
    pub id: String,
    /// The verdict's decision.
    pub decision: Decision,
    /// Whether regenerating with this feedback is the right next step.
    pub regenerate: bool,
    /// The message: for `regenerate`, written for the model; otherwise for the agent loop's
    /// author: why regenerating would not help and what to do instead.
    pub message: String,
    /// The findings it is about.
    pub errors: Vec<Finding>,
    /// The contract shown to the model: the JSON Schema, or the failing rule's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract: Option<Value>,
    /// The verdict's `repair`, when it has one (`docs/repairs.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repair: Option<crate::core::repair::Repair>,
    /// For a verdict with a `repair`, a note for the loop's author, never part of
    /// `message` (which is for the model): [`repair_advice`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repair_advice: Option<String>,
}

/// Builds the feedback for an evaluated capture. A capture with a `GENERATION_GAP`
/// warning (it meets the schema its request sent, the server contract rejects it:
/// `docs/requests.md#both-contracts`) gets a message for the loop's author, not the model:
/// the request schema, not the model, needs the fix.
pub fn feedback(ws: &Workspace, ev: &Evaluation) -> Feedback {
    let v: &Verdict = &ev.verdict;
    let contract = v.contract.as_deref().and_then(|n| ws.contracts.get(n));
    if let Some(g) = v.generation.as_ref().filter(|_| {
        v.warnings
            .iter()
            .any(|w| w.code == crate::core::verdict::Warning::GENERATION_GAP)
    }) {
        return generation_gap(v, g, contract.map(|c| (*c.schema).clone()), ev);
    }
    let regenerate = v.decision == Decision::Regenerate;
    let mut contract_value = None;
    let message = if regenerate {
        let mut m = String::new();
        let stage_words = match v.stage {
            Stage::Response => "Your previous response could not be used",
            Stage::Parse => "Your previous output is not valid JSON",
            Stage::Schema => "Your previous output does not meet the required JSON Schema",
            _ => "Your previous output was rejected by a business rule",
        };
        m.push_str(&format!(
            "{stage_words} ({} stage, {}).\n\nWhat failed:\n",
            v.stage,
            v.reason.as_ref().map_or("", |r| r.as_str())
        ));
        for f in v.errors.iter().take(20) {
            m.push_str(&format!("- {}\n", describe(f, ev)));
        }
        if v.errors.len() > 20 {
            m.push_str(&format!("- ... and {} more\n", v.errors.len() - 20));
        }
        match (v.stage, contract) {
            (Stage::Business, _) => {
                m.push_str("\nThe rule that must hold:\n");
                for f in &v.errors {
                    m.push_str(&format!("- {}\n", f.message));
                }
                contract_value = Some(Value::String(
                    v.errors
                        .first()
                        .map(|f| f.message.clone())
                        .unwrap_or_default(),
                ));
            }
            (_, Some(c)) => {
                // the schema as its author wrote it (key order and all)
                let written = c.text.trim_end();
                m.push_str(&format!("\nThe output must be one JSON value that meets this JSON Schema (contract `{}`):\n{written}\n", c.name));
                contract_value = Some((*c.schema).clone());
            }
            _ => {}
        }
        m.push_str(
            "\nReply again with only the corrected JSON value: no prose, no markdown fences, no comments. \
             Fix what failed and keep every other value as it was.",
        );
        m
    } else {
        let why = match v.decision {
            Decision::ReadyForCommit => "Nothing to correct: every stage passed.".to_string(),
            Decision::Retry => "Regenerating with feedback would not help: the failure is transient or a budget limit, not a mistake in the output.".to_string(),
            Decision::Recheck => "Regenerating would not help: the output is well-formed, but it depends on state or on what the user confirmed.".to_string(),
            Decision::Reject => "Regenerating would not help, and must not be tried automatically.".to_string(),
            Decision::Regenerate => unreachable!(),
        };
        let mut m = format!("{why}\n");
        for f in &v.errors {
            m.push_str(&format!("- {}\n", describe(f, ev)));
        }
        m.push_str(&format!(
            "Instead: {}",
            next_action(v.decision, v.reason.as_ref())
        ));
        m
    };
    Feedback {
        id: v.id.clone(),
        decision: v.decision,
        regenerate,
        message,
        errors: v.errors.clone(),
        contract: contract_value,
        repair: v.repair.clone(),
        repair_advice: repair_advice(v),
    }
}

/// For a verdict with a `repair` (`docs/repairs.md#feedback`), the note for the loop's
/// author beside its feedback: which repair would make the output pass (or what it would
/// still fail on), that it was not applied, and that the contract or the prompt, not a
/// repair step, should change. `None` without a repair.
pub fn repair_advice(v: &Verdict) -> Option<String> {
    let r = v.repair.as_ref()?;
    let outcome = if r.would_be.is_ready() {
        format!(
            "the `{}` repair would make this output pass every stage",
            r.name
        )
    } else {
        format!(
            "after the `{}` repair this output would still fail: {} ({})",
            r.name,
            r.would_be.label(),
            r.would_be.decision
        )
    };
    Some(format!(
        "Note for the loop's author: {outcome}. It was not applied: the verdict stands. Change the contract or the prompt so the model meets the contract as written, rather than adding a repair step; a repair that is allowed silently hides a generator that keeps breaking its contract (docs/repairs.md)."
    ))
}

/// The feedback of a `GENERATION_GAP` capture: the request schema, not the model, needs
/// the fix (the model met what it was sent).
fn generation_gap(
    v: &Verdict,
    g: &crate::core::verdict::Generation,
    contract: Option<Value>,
    ev: &Evaluation,
) -> Feedback {
    let named = crate::core::generation::describe(&g.schema, g.source);
    let mut m = format!(
        "Regenerating would not fix the cause: the proposal meets the {named} its request sent ({} {}), and the server contract `{}` rejects it, so constrained decoding could never have caught it. The request schema, not the model, needs the fix: send the server contract's constraints with the request (`verdict lint` lists what the request schema lacks).\n",
        g.request,
        g.pointer,
        v.contract.as_deref().unwrap_or("")
    );
    for f in v.errors.iter().take(20) {
        m.push_str(&format!("- {}\n", describe(f, ev)));
    }
    if v.errors.len() > 20 {
        m.push_str(&format!("- ... and {} more\n", v.errors.len() - 20));
    }
    m.push_str(&format!(
        "Instead: fix the request schema ({} {}), then send the request again.",
        g.request, g.pointer
    ));
    Feedback {
        id: v.id.clone(),
        decision: v.decision,
        regenerate: false,
        message: m,
        errors: v.errors.clone(),
        contract,
        repair: v.repair.clone(),
        repair_advice: repair_advice(v),
    }
}

/// One finding as a line: where, what, and the offending value abbreviated.
fn describe(f: &Finding, ev: &Evaluation) -> String {
    let mut s = String::new();
    match f.pointer.as_deref() {
        Some("") => s.push_str("at the root: "),
        Some(p) => s.push_str(&format!("at {p}: ")),
        None => {}
    }
    if let (None, Some(at)) = (f.pointer.as_deref(), f.at) {
        s.push_str(&format!("at line {}, column {}: ", at.line, at.column));
    }
    s.push_str(&f.message);
    if let (Some(k), Some(sp)) = (f.keyword.as_deref(), f.schema_path.as_deref())
        && f.stage == Stage::Schema
    {
        s.push_str(&format!(" (keyword `{k}` at {sp})"));
    }
    let offending = match (f.pointer.as_deref(), &ev.proposal, f.span, &ev.raw_output) {
        // the value as the model wrote it (its key order, its spacing), where it is located
        (Some(_), Some(_), Some(span), Some(raw))
            if f.stage != Stage::Parse && raw.get(span.start..span.end).is_some() =>
        {
            Some(as_written(&raw[span.start..span.end]))
        }
        (Some(p), Some(v), _, _) if f.stage != Stage::Parse => v.pointer(p).map(short),
        // a cut-off text is wrong where it ends, not where the unclosed value opened
        (_, _, Some(span), Some(raw)) if f.reason == Reason::TRUNCATED_JSON => {
            Some(excerpt(raw, span.end.min(raw.trim_end().len())))
        }
        (_, _, Some(span), Some(raw)) => Some(excerpt(raw, span.start)),
        _ => None,
    };
    if let Some(best) = f.branches.first() {
        let alts: Vec<String> = best
            .errors
            .iter()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.pointer
                        .as_deref()
                        .filter(|p| !p.is_empty())
                        .unwrap_or("(root)"),
                    e.message
                )
            })
            .collect();
        s.push_str(&format!(
            "; the closest alternative (branch {}) fails because {}",
            best.index,
            alts.join("; ")
        ));
    }
    if let Some(o) = offending {
        s.push_str(&format!("; you wrote {o}"));
    }
    s
}

/// A value's text as the model wrote it (its key order, its spacing), on one line (a line
/// break and the indentation after it become one space; other control characters are
/// escaped) and abbreviated to about 60 characters, as [`short`] abbreviates a value.
fn as_written(text: &str) -> String {
    let mut joined = String::with_capacity(text.len());
    let mut lines = text.trim().lines();
    if let Some(first) = lines.next() {
        joined.push_str(first.trim_end());
    }
    for line in lines {
        joined.push(' ');
        joined.push_str(line.trim());
    }
    let one_line = crate::core::text::escape_control(&joined);
    if one_line.chars().count() <= 60 {
        one_line.into_owned()
    } else {
        let head: String = one_line.chars().take(57).collect();
        format!("{head}...")
    }
}

/// About 24 characters of `raw` on each side of byte `at`, with `⟨here⟩` marking the spot,
/// in backticks, control characters escaped: `` `..."O-1042" ⟨here⟩"amount_minor"...` ``.
fn excerpt(raw: &str, at: usize) -> String {
    let at = (0..=at.min(raw.len()))
        .rev()
        .find(|i| raw.is_char_boundary(*i))
        .unwrap_or(0);
    let before: String = raw[..at]
        .chars()
        .rev()
        .take(24)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let after: String = raw[at..].chars().take(24).collect();
    let lead = if before.len() < at { "..." } else { "" };
    let tail = if at + after.len() < raw.len() {
        "..."
    } else {
        ""
    };
    let text = format!("{lead}{before}⟨here⟩{after}{tail}");
    format!("`{}`", crate::core::text::escape_control(&text))
}
