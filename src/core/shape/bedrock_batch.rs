//! AWS Bedrock batch inference output lines (`<input>.jsonl.out`;
//! `docs/record-shapes.md#bedrock-batch`).
//!
//! Source: "View the results of a batch inference job"
//! (docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html): a line is
//! `{"recordId": .., "modelInput": {..}, "modelOutput": {..}}`, or with `"error":
//! {"errorCode", "errorMessage"}` in place of `modelOutput`. `error` set: REQUEST_ERROR,
//! transient for an `errorCode` of 429 or 5xx (a number, or a numeric string). Else
//! `modelOutput` is the model's native InvokeModel body, read by the adapter its shape names
//! (`adapter::recognise`): an Anthropic Messages body (`"type": "message"`) or a Converse
//! body (`output.message`, `stopReason`) for Converse-type jobs; a body no adapter reads
//! (Titan's `results[]`, ...) is `INVALID_CAPTURE`. `modelInput` (the echoed request) is kept
//! as it is.

use super::{Shape, broken, id_key, must_be, native, settled, str_at};
use crate::core::adapter::{self, quote, response_finding, show, transient_http};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::escape;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Decision, Reason};
use serde_json::{Map, Value};

const FORMAT: &str = "bedrock-batch";

/// A Bedrock batch line: `recordId` with `modelInput`, `modelOutput` or `error`.
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "an AWS Bedrock batch inference output line",
    keys: &["recordId", "modelInput", "modelOutput", "error"],
    detect: |v| {
        v.get("recordId").is_some()
            && (v.get("modelInput").is_some()
                || v.get("modelOutput").is_some()
                || v.get("error").is_some())
    },
    read,
};

fn read(mut obj: Map<String, Value>, _source: &RecordRef) -> Result<Capture, RecordError> {
    let id = id_key(FORMAT, &obj, "recordId")?;
    let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, Some(id.clone()));
    let mut meta = Map::new();
    let error = obj.remove("error").filter(|e| !e.is_null());
    let output = obj.remove("modelOutput").filter(|o| !o.is_null());
    if let Some(error) = error {
        let Value::Object(e) = &error else {
            return Err(fail("error", &must_be("an object or null", &error)));
        };
        let code = match e.get("errorCode") {
            None | Some(Value::Null) => None,
            Some(c @ (Value::Number(_) | Value::String(_))) => Some(c),
            Some(v) => {
                return Err(fail("error.errorCode", &must_be("a number or a string", v)));
            }
        };
        let numeric = code.and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))
        });
        if let Some(n) = numeric {
            meta.insert("status_code".into(), n.into());
        }
        let transient = numeric.is_some_and(transient_http);
        let what = code.map_or_else(
            || "no errorCode".to_owned(),
            |c| format!("errorCode {}", show(c)),
        );
        let said = str_at(e, "errorMessage")
            .map(|m| format!(" ({})", quote(m)))
            .unwrap_or_default();
        let tail = if transient {
            "transient, retry"
        } else {
            "not transient"
        };
        let finding = response_finding(
            Reason::REQUEST_ERROR,
            format!("error: request failed with {what}{said}: {tail}"),
        );
        let finding = if transient {
            finding.with_decision(Decision::Retry)
        } else {
            finding
        };
        let stop = code.map(|c| match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        return Ok(native(FORMAT, id, settled(FORMAT, stop, finding), meta));
    }
    let Some(output) = output else {
        return Err(fail(
            "modelOutput",
            "and `error` are both null or missing: a batch line has one of them",
        ));
    };
    let Value::Object(body) = &output else {
        return Err(fail("modelOutput", &must_be("an object or null", &output)));
    };
    if adapter::recognise(&output).is_none() {
        let keys: Vec<String> = body.keys().take(8).map(|k| escape::quote(k, 60)).collect();
        return Err(fail(
            "modelOutput",
            &format!(
                "is no model body verdict reads (keys {}): expected an Anthropic Messages body (`\"type\": \"message\"`) or a Converse body (`output.message`, `stopReason`)",
                if keys.is_empty() {
                    "none".to_owned()
                } else {
                    keys.join(", ")
                }
            ),
        ));
    }
    if let Some(r) = str_at(body, "id") {
        meta.insert("response_id".into(), r.into());
    }
    if let Some(r) = body
        .get("ResponseMetadata")
        .and_then(|m| m.get("RequestId"))
        .and_then(Value::as_str)
    {
        meta.insert("request_id".into(), r.into());
    }
    let mut c = native(FORMAT, id, Payload::Response(output), meta);
    c.request = super::echoed(obj.remove("modelInput"), "/modelInput");
    Ok(c)
}
