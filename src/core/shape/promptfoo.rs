//! promptfoo's results file (`docs/record-shapes.md#promptfoo`): what `promptfoo eval -o
//! results.json` writes, one JSON document holding every result of an eval. Each result
//! (`results.results[]`) is a capture of its own, a part of the record
//! ([`Payload::Parts`]): its source is `FILE#PART`, the result's 1-based index.
//!
//! Sources: promptfoo.dev/docs/configuration/outputs and github.com/promptfoo/promptfoo
//! `src/types/index.ts` (`EvaluateResult`, `ResultFailureReason`: 0 NONE, 1 ASSERT,
//! 2 ERROR; `ProviderResponse`: `output`, `error`, `finishReason`, `isRefusal`,
//! `guardrails.flagged`, `tokenUsage`). The file is `{evalId, results: {version, timestamp,
//! prompts[], results: [EvaluateResult], stats}, config, shareableUrl}`; a result has `id`,
//! `promptIdx`, `testIdx`, `provider{id, label}`, `response`, `error`, `failureReason`,
//! `success`, `score` and `gradingResult{pass, score, reason}`.
//!
//! promptfoo's own outcome (its assertions, not verdict's stages) rides along in the
//! capture's `meta.promptfoo` (`{pass, failure_reason, score, reason}`), shown beside the
//! verdict by `check`'s human report and the workbench's Response tab.

use super::otlp::{finished, request_failed, span_payload};
use super::{Shape, broken, must_be, native, settled, str_at};
use crate::core::adapter::{quote, response_finding};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Reason, ResponseInfo, TokenUsage};
use serde_json::{Map, Value};

/// The `format` of a result of a promptfoo results file.
pub(crate) const FORMAT: &str = "promptfoo";

/// A promptfoo results file: a `results` object holding a `results` array (the top-level
/// `results` of no other shape is an object).
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "a promptfoo results file (promptfoo eval -o results.json)",
    keys: &["evalId", "results", "config", "shareableUrl"],
    detect: |v| {
        v.get("results")
            .and_then(|r| r.get("results"))
            .is_some_and(Value::is_array)
    },
    read,
};

/// The words of promptfoo's `failureReason` (`ResultFailureReason`).
fn failure_word(n: Option<u64>) -> &'static str {
    match n {
        Some(1) => "assert",
        Some(2) => "error",
        _ => "none",
    }
}

fn read(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let eval_id = str_at(&obj, "evalId").map(str::to_owned);
    let Some(Value::Object(mut results)) = obj.remove("results") else {
        unreachable!("detected by `results.results`")
    };
    let Some(Value::Array(rows)) = results.remove("results") else {
        unreachable!("detected by `results.results`")
    };
    let whole = source.with_part(None);
    let parts = (1u32..)
        .zip(rows)
        .enumerate()
        .map(|(i, (part, row))| {
            result(
                row,
                &format!("results.results[{i}]"),
                &whole.with_part(Some(part)),
                eval_id.as_deref(),
            )
        })
        .collect();
    Ok(native(
        FORMAT,
        source.as_str().to_owned(),
        Payload::Parts(parts),
        Map::new(),
    ))
}

/// One `EvaluateResult` at `path` in the file (its source `source`) as a capture: its id is
/// its `id`, else its source.
fn result(
    row: Value,
    path: &str,
    source: &RecordRef,
    eval_id: Option<&str>,
) -> Result<Capture, RecordError> {
    let Value::Object(mut row) = row else {
        return Err(broken(FORMAT, path, &must_be("an object", &row), None));
    };
    let id = match row.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        None | Some(Value::Null) => source.as_str().to_owned(),
        Some(v) => {
            return Err(broken(
                FORMAT,
                &format!("{path}.id"),
                &must_be("a non-empty string", v),
                None,
            ));
        }
    };
    let fail = |key: &str, problem: &str| {
        broken(FORMAT, &format!("{path}.{key}"), problem, Some(id.clone()))
    };
    let failure = match row.get("failureReason") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Number(n)) => match n.as_u64() {
            Some(n @ 0..=2) => Some(n),
            _ => {
                return Err(fail(
                    "failureReason",
                    &format!("is {v}: expected 0, 1 or 2"),
                ));
            }
        },
        Some(v) => return Err(fail("failureReason", &must_be("a number", v))),
    };
    let success = match row.get("success") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(v) => return Err(fail("success", &must_be("a boolean", v))),
    };
    // promptfoo's own outcome, beside verdict's
    let mut own = Map::new();
    own.insert("pass".into(), success.map_or(Value::Null, Value::Bool));
    own.insert("failure_reason".into(), failure_word(failure).into());
    if let Some(s) = row.get("score").filter(|s| s.is_number()) {
        own.insert("score".into(), s.clone());
    }
    let grading = row
        .get("gradingResult")
        .and_then(|g| g.get("reason"))
        .and_then(Value::as_str);
    if let Some(r) = grading
        .or_else(|| str_at(&row, "error"))
        .filter(|r| !r.is_empty())
    {
        own.insert("reason".into(), r.into());
    }
    let mut meta = Map::new();
    meta.insert("promptfoo".into(), Value::Object(own));
    if let Some(e) = eval_id {
        meta.insert("eval_id".into(), e.into());
    }
    for (from, to) in [("testIdx", "test_idx"), ("promptIdx", "prompt_idx")] {
        if let Some(n) = row.get(from).filter(|n| n.is_u64()) {
            meta.insert(to.into(), n.clone());
        }
    }
    let provider = match row.get("provider") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(p) => p.get("id").and_then(Value::as_str).map(str::to_owned),
        None => None,
    };
    if let Some(p) = &provider {
        meta.insert("provider".into(), p.clone().into());
    }
    let response = match row.remove("response") {
        None | Some(Value::Null) => None,
        Some(Value::Object(r)) => Some(r),
        Some(v) => return Err(fail("response", &must_be("an object", &v))),
    };
    let mut info = ResponseInfo {
        provider: FORMAT.to_owned(),
        model: provider,
        ..ResponseInfo::default()
    };
    if let Some(u) = response.as_ref().and_then(|r| r.get("tokenUsage")) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        if n("prompt").is_some() || n("completion").is_some() {
            info.tokens = Some(TokenUsage {
                input_tokens: n("prompt"),
                output_tokens: n("completion"),
                total_tokens: n("total"),
            });
        }
    }
    let r = response.unwrap_or_default();
    let text_of = |k: &str| r.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    // an error (the provider's, or the eval's: failureReason 2): the request failed
    let error = text_of("error").or_else(|| {
        (failure == Some(2))
            .then(|| str_at(&row, "error").filter(|s| !s.is_empty()))
            .flatten()
    });
    let payload = if let Some(e) = error.or((failure == Some(2)).then_some("")) {
        let what = if e.is_empty() {
            "failureReason 2 (ERROR)".to_owned()
        } else {
            format!(
                "failureReason {} (ERROR): {}",
                failure.unwrap_or(2),
                quote(e)
            )
        };
        let mut p = settled(FORMAT, None, request_failed(what, e));
        if let Payload::Settled(a) = &mut p {
            a.info.model.clone_from(&info.model);
            a.info.tokens.clone_from(&info.tokens);
        }
        p
    } else if r.get("isRefusal") == Some(&Value::Bool(true)) {
        span_payload(
            info,
            Err(response_finding(
                Reason::REFUSAL,
                "response.isRefusal true: the model declined",
            )),
        )
    } else if r
        .get("guardrails")
        .and_then(|g| g.get("flagged"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        span_payload(
            info,
            Err(response_finding(
                Reason::CONTENT_FILTERED,
                "response.guardrails.flagged true: a guardrail blocked the output",
            )),
        )
    } else {
        let finish = r.get("finishReason").and_then(Value::as_str);
        match r.get("output") {
            None | Some(Value::Null) => span_payload(
                info,
                Err(response_finding(
                    Reason::NO_OUTPUT,
                    "the result has no response.output: nothing to validate",
                )),
            ),
            // text: the finish reason decides, then the text is parsed as the model's
            Some(Value::String(text)) => {
                let result = finished(
                    &mut info,
                    finish.map(|f| (f, "response.finishReason".to_owned())),
                    &[],
                    Some(text.clone()),
                    "response.output",
                );
                span_payload(info, result)
            }
            // an object (a tool-calling or structured provider): already structured
            Some(other) => {
                let other = other.clone();
                match finish.map(|f| {
                    finished(
                        &mut info,
                        Some((f, "response.finishReason".to_owned())),
                        &[],
                        Some(String::from("{}")),
                        "response.output",
                    )
                }) {
                    Some(Err(f)) => span_payload(info, Err(f)),
                    _ => Payload::Output {
                        output: other,
                        status: None,
                        status_detail: None,
                    },
                }
            }
        }
    };
    Ok(native(FORMAT, id, payload, meta))
}
