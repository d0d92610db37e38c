//! Bodies that mix providers' signals (`docs/verdicts.md#response-reason-order`): a
//! `chat.completion` that also carries a top-level `error`, or Anthropic's
//! `stop_reason: "refusal"`, or a Gemini `finishReason: "SAFETY"`. The adapter that reads the
//! body by its shape sees only its own fields; here every provider's own failure signal
//! found in the same object is read too, and the most severe signal present decides, with a
//! message that names the conflict. A body whose fields agree is left as its adapter read it.

use super::{
    Adapted, Provider, error_body, is_filter, is_truncation, quote, response_finding, str_at,
};
use crate::core::verdict::{Finding, Reason, Stage};
use serde_json::Value;

/// The response-stage reasons, most severe first: when one body carries several signals,
/// the first of these decides. A refusal or a filter says the content must not be used; an
/// error says the request failed; a malformed call, a truncation or an unfinished state
/// says the content is partial; an empty output is the mildest.
pub const REASON_ORDER: [&str; 8] = [
    "REFUSAL",
    "CONTENT_FILTERED",
    "REQUEST_ERROR",
    "TOOL_ERROR",
    "MALFORMED_TOOL_CALL",
    "TRUNCATED_OUTPUT",
    "INCOMPLETE",
    "NO_OUTPUT",
];

/// The rank of a response-stage reason in [`REASON_ORDER`] (0 is the most severe); any
/// other reason ranks after them all.
fn rank(r: &Reason) -> usize {
    REASON_ORDER
        .iter()
        .position(|n| *n == r.as_str())
        .unwrap_or(REASON_ORDER.len())
}

/// Which provider's fields a signal is read from (the Chat variants share OpenAI Chat's).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Error,
    Chat,
    Responses,
    Anthropic,
    Gemini,
    Bedrock,
    Cohere,
    Ollama,
}

fn family(p: Provider) -> Family {
    match p {
        Provider::OpenAiChat | Provider::AzureOpenAi | Provider::OpenAiCompatible => Family::Chat,
        Provider::OpenAiResponses => Family::Responses,
        Provider::Anthropic => Family::Anthropic,
        Provider::Gemini => Family::Gemini,
        Provider::BedrockConverse => Family::Bedrock,
        Provider::Cohere => Family::Cohere,
        Provider::Ollama => Family::Ollama,
    }
}

fn signal(reason: Reason, place: String, what: &str) -> Finding {
    response_finding(reason, format!("{place}: {what}"))
}

/// Every provider's failure signal in `v` (a provider's own field saying the output did
/// not finish normally), read as that provider's adapter reads it, with its family.
fn signals(v: &Value) -> Vec<(Family, Finding)> {
    let mut out = Vec::new();
    let stop = |key: &str| str_at(v, key).map(|s| (s, format!("{key} {}", quote(s))));
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        let e = match e {
            Value::Object(_) => e.clone(),
            other => {
                serde_json::json!({"message": other.as_str().map_or_else(|| other.to_string(), str::to_owned)})
            }
        };
        out.push((
            Family::Error,
            error_body::request_error(&e, "top-level `error`"),
        ));
    }
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    if let Some(r) = choice
        .and_then(|c| c.get("message"))
        .and_then(|m| m.get("refusal"))
        .filter(|r| !r.is_null())
    {
        let said = r.as_str().map_or_else(|| r.to_string(), quote);
        out.push((
            Family::Chat,
            signal(
                Reason::REFUSAL,
                "choices[0].message.refusal".into(),
                &format!("the model declined: {said}"),
            ),
        ));
    }
    if let Some(f) = choice.and_then(|c| str_at(c, "finish_reason")) {
        let place = format!("choices[0].finish_reason {}", quote(f));
        if is_truncation(f) {
            out.push((
                Family::Chat,
                signal(
                    Reason::TRUNCATED_OUTPUT,
                    place,
                    "the output hit the token limit",
                ),
            ));
        } else if f == "content_filter" {
            out.push((
                Family::Chat,
                signal(
                    Reason::CONTENT_FILTERED,
                    place,
                    "a content filter stopped the output",
                ),
            ));
        }
    }
    match str_at(v, "status") {
        Some(s @ "failed") => {
            let e = v
                .get("error")
                .filter(|e| e.is_object())
                .cloned()
                .unwrap_or(Value::Null);
            out.push((
                Family::Responses,
                error_body::request_error(&e, &format!("status {}", quote(s))),
            ));
        }
        Some(s @ "incomplete") => {
            let why = v
                .get("incomplete_details")
                .and_then(|d| str_at(d, "reason"))
                .unwrap_or_default();
            let place = format!("status {}", quote(s));
            out.push((
                Family::Responses,
                if is_truncation(why) {
                    signal(
                        Reason::TRUNCATED_OUTPUT,
                        place,
                        "the output hit the token limit",
                    )
                } else if why == "content_filter" {
                    signal(
                        Reason::CONTENT_FILTERED,
                        place,
                        "a content filter stopped the output",
                    )
                } else {
                    signal(Reason::INCOMPLETE, place, "the response did not finish")
                },
            ));
        }
        _ => {}
    }
    if let Some((s, place)) = stop("stop_reason") {
        match s {
            "refusal" => out.push((
                Family::Anthropic,
                signal(Reason::REFUSAL, place, "the model declined"),
            )),
            s if is_truncation(s) => out.push((
                Family::Anthropic,
                signal(
                    Reason::TRUNCATED_OUTPUT,
                    place,
                    "the output hit the token limit",
                ),
            )),
            "pause_turn" => out.push((
                Family::Anthropic,
                signal(Reason::INCOMPLETE, place, "the turn was paused"),
            )),
            _ => {}
        }
    }
    if let Some(b) = v
        .get("promptFeedback")
        .and_then(|p| p.get("blockReason"))
        .filter(|b| !b.is_null())
    {
        let place = format!(
            "promptFeedback.blockReason {}",
            b.as_str().map_or_else(|| b.to_string(), quote)
        );
        out.push((
            Family::Gemini,
            signal(Reason::CONTENT_FILTERED, place, "the prompt was blocked"),
        ));
    }
    if let Some(f) = v
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| str_at(c, "finishReason"))
    {
        let place = format!("candidates[0].finishReason {}", quote(f));
        if is_truncation(f) {
            out.push((
                Family::Gemini,
                signal(
                    Reason::TRUNCATED_OUTPUT,
                    place,
                    "the output hit the token limit",
                ),
            ));
        } else if is_filter(f) {
            out.push((
                Family::Gemini,
                signal(
                    Reason::CONTENT_FILTERED,
                    place,
                    "a safety filter stopped the output",
                ),
            ));
        } else if matches!(f, "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL") {
            out.push((
                Family::Gemini,
                signal(
                    Reason::MALFORMED_TOOL_CALL,
                    place,
                    "the tool call was malformed",
                ),
            ));
        }
    }
    if let Some((s, place)) = stop("stopReason") {
        if is_truncation(s) {
            out.push((
                Family::Bedrock,
                signal(
                    Reason::TRUNCATED_OUTPUT,
                    place,
                    "the output hit the token limit",
                ),
            ));
        } else if matches!(s, "guardrail_intervened" | "content_filtered") {
            out.push((
                Family::Bedrock,
                signal(
                    Reason::CONTENT_FILTERED,
                    place,
                    "a guardrail or filter stopped the output",
                ),
            ));
        } else if matches!(s, "malformed_tool_use" | "malformed_model_output") {
            out.push((
                Family::Bedrock,
                signal(
                    Reason::MALFORMED_TOOL_CALL,
                    place,
                    "the tool call was malformed",
                ),
            ));
        }
    }
    if let Some((s, place)) = stop("finish_reason") {
        match s {
            "MAX_TOKENS" => out.push((
                Family::Cohere,
                signal(
                    Reason::TRUNCATED_OUTPUT,
                    place,
                    "the output hit the token limit",
                ),
            )),
            "ERROR" | "TIMEOUT" => {
                let e = serde_json::json!({"type": if s == "TIMEOUT" { "timeout_error" } else { "error" }});
                out.push((Family::Cohere, error_body::request_error(&e, &place)));
            }
            _ => {}
        }
    }
    if let Some((_, place)) = stop("done_reason").filter(|(s, _)| is_truncation(s)) {
        out.push((
            Family::Ollama,
            signal(
                Reason::TRUNCATED_OUTPUT,
                place,
                "the output hit the token limit",
            ),
        ));
    }
    out
}

/// Every provider's own field in `v` saying the output finished normally (Chat
/// `finish_reason` `stop` / `tool_calls`, Responses `status: completed`, Anthropic
/// `stop_reason` `end_turn` / `stop_sequence` / `tool_use`, Gemini `finishReason: STOP`,
/// Bedrock `stopReason` `end_turn` / `tool_use` / `stop_sequence`, Cohere `finish_reason`
/// `COMPLETE` / `STOP_SEQUENCE` / `TOOL_CALL`, Ollama `done_reason: stop`), with its family
/// and place: the other side of a conflict whose failing side decides.
fn finished_signals(v: &Value) -> Vec<(Family, String)> {
    let mut out = Vec::new();
    let mut at = |fam: Family, key: &str, value: Option<&str>, ok: &[&str]| {
        if let Some(s) = value.filter(|s| ok.contains(s)) {
            out.push((fam, format!("{key} {} says it finished", quote(s))));
        }
    };
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    at(
        Family::Chat,
        "choices[0].finish_reason",
        choice.and_then(|c| str_at(c, "finish_reason")),
        &["stop", "tool_calls", "function_call"],
    );
    at(
        Family::Responses,
        "status",
        str_at(v, "status"),
        &["completed"],
    );
    at(
        Family::Anthropic,
        "stop_reason",
        str_at(v, "stop_reason"),
        &["end_turn", "stop_sequence", "tool_use"],
    );
    let candidate = v
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    at(
        Family::Gemini,
        "candidates[0].finishReason",
        candidate.and_then(|c| str_at(c, "finishReason")),
        &["STOP"],
    );
    at(
        Family::Bedrock,
        "stopReason",
        str_at(v, "stopReason"),
        &["end_turn", "tool_use", "stop_sequence"],
    );
    at(
        Family::Cohere,
        "finish_reason",
        str_at(v, "finish_reason"),
        &["COMPLETE", "STOP_SEQUENCE", "TOOL_CALL"],
    );
    at(
        Family::Ollama,
        "done_reason",
        str_at(v, "done_reason"),
        &["stop"],
    );
    out
}

/// `adapted`, the reading of the object `v` by the adapter of `p`, with the other
/// providers' signals in `v` weighed in: when one is more severe than what the adapter
/// found (a finished proposal, or a milder reason), it decides; whenever signals disagree
/// the deciding finding's message names the others. An input-stage result
/// (`INVALID_CAPTURE`) is kept as it is.
pub(super) fn resolve(p: Provider, v: &Value, mut adapted: Adapted) -> Adapted {
    if matches!(&adapted.result, Err(f) if f.stage != Stage::Response) {
        return adapted;
    }
    let own = family(p);
    let foreign: Vec<Finding> = signals(v)
        .into_iter()
        .filter(|(fam, _)| *fam != own)
        .map(|(_, f)| f)
        .filter(|f| !matches!(&adapted.result, Err(e) if e.reason == f.reason))
        .collect();
    // another provider's field saying the output finished, beside the failure the adapter
    // found: the failure decides, and the message names the field it overrides
    let finished: Vec<String> = match &adapted.result {
        Err(_) => finished_signals(v)
            .into_iter()
            .filter(|(fam, _)| *fam != own)
            .map(|(_, place)| place)
            .collect(),
        Ok(_) => Vec::new(),
    };
    if foreign.is_empty() && finished.is_empty() {
        return adapted;
    }
    let said = |f: &Finding| f.message.clone();
    let own_said = match &adapted.result {
        Ok(_) => format!(
            "{} read it as finished{}",
            p.name(),
            adapted
                .info
                .stop_reason
                .as_deref()
                .map(|s| format!(" (stop reason {})", quote(s)))
                .unwrap_or_default()
        ),
        Err(f) => said(f),
    };
    // the adapter's own finding first, so it wins a tie; then the others in reading order
    let mut all: Vec<Finding> = adapted.result.as_ref().err().cloned().into_iter().collect();
    all.extend(foreign);
    let best = (0..all.len())
        .min_by_key(|&i| rank(&all[i].reason))
        .unwrap_or(0);
    let mut winner = all[best].clone();
    let mut others: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best)
        .map(|(_, f)| said(f))
        .collect();
    if adapted.result.is_ok() {
        others.insert(0, own_said);
    }
    others.extend(finished);
    winner.message = format!(
        "{} (the body mixes signals, the most severe decides; also: {})",
        winner.message,
        others.join("; ")
    );
    adapted.result = Err(winner);
    adapted
}

#[cfg(test)]
mod tests {
    use super::REASON_ORDER;
    use crate::core::verdict::{Reason, Stage};

    #[test]
    fn the_order_is_the_documented_one_and_names_every_response_reason() {
        let doc = include_str!("../../../docs/verdicts.md");
        let section = doc
            .split("### Response reason order")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .unwrap_or_default();
        let listed: Vec<&str> = section
            .lines()
            .filter_map(|l| l.split_once(". `"))
            .filter(|(n, _)| n.parse::<u32>().is_ok())
            .filter_map(|(_, r)| r.split('`').next())
            .collect();
        assert_eq!(listed, REASON_ORDER);
        for r in Reason::BUILT_IN
            .iter()
            .filter(|r| r.builtin_stage() == Some(Stage::Response))
        {
            assert!(REASON_ORDER.contains(&r.as_str()), "{}", r.as_str());
        }
    }
}
