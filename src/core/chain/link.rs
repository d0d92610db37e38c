//! Linking captures into chains (`docs/chains.md#linking`): a capture record's own `chain`
//! and `attempt` keys, else `[chains] by` (a JSON Pointer into the record as read) or
//! `[chains] pattern` (a regex over the id with named groups `chain` and `attempt`), else
//! the natural link of a native batch line (its `custom_id` / `key` / `recordId`, the same
//! across the batch files of a retried batch) or of a trace (LiteLLM's `trace_id`; the
//! parent of an OTLP GenAI span, whose retries are its sibling spans). `[chains] order`
//! reads each attempt's order value from the record; a trace link is ordered by its start
//! time when `order` is not given.

use crate::core::capture::Capture;
use crate::core::config::ChainsConfig;
use crate::core::meta::MetaKey;
use crate::core::stage::parse;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a capture was linked to its chain: the `linked_by` of `docs/chains.md#linking`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkedBy {
    /// The capture record's own `chain` key.
    Record,
    /// `[chains] by`: the value at a pointer into the record.
    By,
    /// `[chains] pattern`: a regex over the capture's id.
    Pattern,
    /// A native batch line's id (`custom_id`, `key`, `recordId`), or a trace's key
    /// (LiteLLM's `trace_id`, an OTLP span's `TRACEID/PARENTSPANID`): a chain only when
    /// more than one capture has it.
    Natural,
}

impl LinkedBy {
    /// The name printed in reports (`record`, `by`, `pattern`, `natural`).
    pub fn as_str(self) -> &'static str {
        match self {
            LinkedBy::Record => "record",
            LinkedBy::By => "by",
            LinkedBy::Pattern => "pattern",
            LinkedBy::Natural => "natural",
        }
    }
}

/// The record shapes whose ids link a retried batch's lines naturally
/// (`docs/chains.md#natural-links`).
pub const NATURAL_FORMATS: [&str; 4] = [
    "openai-batch",
    "anthropic-batch",
    "gemini-batch",
    "bedrock-batch",
];

/// Where a capture sits in a chain: the verdict's `chain` (`docs/chains.md#on-the-verdict`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainLink {
    /// The chain's id.
    pub id: String,
    /// The attempt number (from 1) the record or the `pattern` gives; `None`: ordered by
    /// `order`, else by file name, then line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    /// How it was linked.
    pub linked_by: LinkedBy,
    /// The order value read at `[chains] order`, as a number: a JSON number as it is, an
    /// RFC 3339 timestamp in seconds since the Unix epoch; `None` without `order`, or when
    /// the value is missing or unusable (then `problem` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<f64>,
    /// 16 hex digits: the FNV-1a hash of the canonical proposal (keys sorted, numbers by
    /// value), or of the raw output text when it did not parse; `None` when there is
    /// neither. Two attempts with the same digest sent the same proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// What could not be read for the link (an attempt number or order value that is not
    /// usable): reported as a workspace warning naming the chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The link of `capture` (read from `text`, the record as read) under `config`, or `None`
/// when it belongs to no chain.
pub fn link_of(config: &ChainsConfig, capture: &Capture, text: &str) -> Option<ChainLink> {
    let mut problem = None;
    let (id, attempt, linked_by) = if let Some(c) = &capture.chain {
        (c.clone(), capture.attempt, LinkedBy::Record)
    } else if let Some(ptr) = &config.by {
        match value_at(text, ptr)? {
            Value::String(s) if !s.is_empty() => (s, None, LinkedBy::By),
            Value::Number(n) => (n.to_string(), None, LinkedBy::By),
            // null, empty, or a structure: no chain id here
            _ => return None,
        }
    } else if let Some(p) = &config.pattern {
        let caps = p.regex.captures(&capture.id)?;
        let chain = caps.name("chain")?.as_str();
        if chain.is_empty() {
            return None;
        }
        let attempt = caps.name("attempt").and_then(|a| {
            let a = a.as_str();
            match a.parse::<u64>() {
                Ok(n) if n >= 1 => Some(n),
                _ => {
                    problem = Some(format!(
                        "the attempt {} that `pattern` reads in the id {} is not an integer from 1",
                        crate::core::escape::quote(a, 40),
                        crate::core::escape::quote(&capture.id, 80)
                    ));
                    None
                }
            }
        });
        (chain.to_owned(), attempt, LinkedBy::Pattern)
    } else if NATURAL_FORMATS.contains(&capture.format) {
        (capture.id.clone(), None, LinkedBy::Natural)
    } else if let Some(key) = trace_key(capture) {
        (key, None, LinkedBy::Natural)
    } else {
        return None;
    };
    let order = match &config.order {
        // a trace's calls in the order they started (`meta.start_time`)
        None if linked_by == LinkedBy::Natural => capture
            .meta
            .as_ref()
            .and_then(|m| m.known_f64(MetaKey::StartTime)),
        None => None,
        Some(ptr) => match order_value(value_at(text, ptr).as_ref()) {
            Ok(o) => Some(o),
            Err(why) => {
                problem.get_or_insert(format!("`order` ({ptr}) {why}"));
                None
            }
        },
    };
    Some(ChainLink {
        id,
        attempt,
        linked_by,
        order,
        digest: None,
        problem,
    })
}

/// The natural chain key of a trace capture (`docs/chains.md#natural-links`): LiteLLM's
/// `trace_id` ("trace multiple LLM calls belonging to same overall request (e.g.
/// fallbacks/retries)"), and for an OTLP or OpenInference LLM span its trace and parent
/// span, `TRACEID/PARENTSPANID` (a retry is a sibling span under the same parent). A root
/// span (no parent) and a tool span have none.
fn trace_key(capture: &Capture) -> Option<String> {
    let meta = capture.meta.as_ref()?;
    let at = |k: MetaKey| meta.known_str(k).filter(|s| !s.is_empty());
    match capture.format {
        "litellm" => at(MetaKey::TraceId).map(str::to_owned),
        // a tool span's capture names its tool as it is read; an LLM span's does not
        "otlp" | "openinference" if capture.tool.is_none() => {
            let (trace, parent) = (at(MetaKey::TraceId)?, at(MetaKey::ParentSpanId)?);
            let mut key = String::with_capacity(trace.len() + 1 + parent.len());
            key.push_str(trace);
            key.push('/');
            key.push_str(parent);
            Some(key)
        }
        _ => None,
    }
}

/// The value at `pointer` in the record `text`, parsed alone (the record is not parsed
/// again whole).
fn value_at(text: &str, pointer: &str) -> Option<Value> {
    let span = parse::locate(text, pointer)?;
    serde_json::from_str(text.get(span.start..span.end)?).ok()
}

/// An order value as a number: a JSON number, or an RFC 3339 timestamp in seconds.
///
/// # Errors
/// What the value is instead (missing, or not a number or a timestamp).
pub fn order_value(v: Option<&Value>) -> Result<f64, String> {
    match v {
        None => Err("has no value in this record".into()),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .ok_or_else(|| format!("is {n}, not a finite number")),
        Some(Value::String(s)) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.timestamp() as f64 + f64::from(t.timestamp_subsec_nanos()) / 1e9)
            .map_err(|_| {
                format!(
                    "is {}: not a number or an RFC 3339 timestamp",
                    crate::core::escape::quote(s, 40)
                )
            }),
        Some(v) => Err(format!(
            "is {}: not a number or an RFC 3339 timestamp",
            crate::core::text::json_kind(v)
        )),
    }
}

/// The digest of a proposal (`ChainLink::digest`): FNV-1a 64 over its canonical form
/// (object keys sorted, numbers by value, so `5000` and `5000.0` are the same proposal).
pub fn digest_value(v: &Value) -> String {
    let mut h = Fnv::default();
    canonical(v, &mut h);
    hex16(h.0)
}

/// The digest of a raw output text that did not parse (`ChainLink::digest`).
pub fn digest_text(s: &str) -> String {
    let mut h = Fnv::default();
    h.write(b"t");
    h.write(s.as_bytes());
    hex16(h.0)
}

/// `format!("{:016x}", x)`, without the formatting machinery (a digest per attempt).
fn hex16(x: u64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits: Vec<u8> = (0..16)
        .rev()
        .map(|i| HEX[((x >> (i * 4)) & 0xf) as usize])
        .collect();
    String::from_utf8(digits).expect("hex digits are ASCII")
}

struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// FNV-1a 64 over `bytes`, eight a step (the same hash as one at a time, with fewer
    /// loop turns: a digest per attempt of every chain).
    fn write(&mut self, bytes: &[u8]) {
        const PRIME: u64 = 0x0100_0000_01b3;
        let mut h = self.0;
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            for b in w {
                h = (h ^ u64::from(*b)).wrapping_mul(PRIME);
            }
        }
        for b in words.remainder() {
            h = (h ^ u64::from(*b)).wrapping_mul(PRIME);
        }
        self.0 = h;
    }
}

fn canonical(v: &Value, h: &mut Fnv) {
    match v {
        Value::Null => h.write(b"n"),
        Value::Bool(b) => h.write(if *b { b"T" } else { b"F" }),
        Value::Number(n) => {
            h.write(b"#");
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    h.write(&(f as i64).to_le_bytes())
                }
                Some(f) => h.write(&f.to_bits().to_le_bytes()),
                None => h.write(n.to_string().as_bytes()),
            }
        }
        Value::String(s) => {
            h.write(b"s");
            h.write(&(s.len() as u64).to_le_bytes());
            h.write(s.as_bytes());
        }
        Value::Array(a) => {
            h.write(b"[");
            h.write(&(a.len() as u64).to_le_bytes());
            for x in a {
                canonical(x, h);
            }
        }
        Value::Object(m) => {
            h.write(b"{");
            h.write(&(m.len() as u64).to_le_bytes());
            let member = |h: &mut Fnv, k: &String, v: &Value| {
                h.write(&(k.len() as u64).to_le_bytes());
                h.write(k.as_bytes());
                canonical(v, h);
            };
            // a map keeps its keys sorted unless serde_json's `preserve_order` is on
            if m.keys().is_sorted() {
                for (k, v) in m {
                    member(h, k, v);
                }
            } else {
                let mut members: Vec<(&String, &Value)> = m.iter().collect();
                members.sort_by(|a, b| a.0.cmp(b.0));
                for (k, v) in members {
                    member(h, k, v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hex16_is_format_016x() {
        for x in [
            0,
            1,
            0xf,
            0x10,
            0xf933_927b_59be_e64e,
            u64::MAX,
            1 << 63,
            0x0123_4567_89ab_cdef,
        ] {
            assert_eq!(hex16(x), format!("{x:016x}"));
        }
        assert_eq!(hex16(0xab), "00000000000000ab");
    }

    #[test]
    fn fnv_is_fnv_1a_64_eight_bytes_a_step_or_one() {
        // the published FNV-1a 64 test vectors
        for (text, want) in [
            ("", 0xcbf2_9ce4_8422_2325u64),
            ("a", 0xaf63_dc4c_8601_ec8c),
            ("foobar", 0x8594_4171_f739_67e8),
        ] {
            let mut h = Fnv::default();
            h.write(text.as_bytes());
            assert_eq!(h.0, want, "{text:?}");
        }
        // split anywhere, any length: the hash of the whole
        let bytes: Vec<u8> = (0u8..=200).map(|b| b.wrapping_mul(37)).collect();
        let mut whole = Fnv::default();
        whole.write(&bytes);
        for cut in [0, 1, 7, 8, 9, 63, 64, 65, 200] {
            let mut h = Fnv::default();
            h.write(&bytes[..cut]);
            h.write(&bytes[cut..]);
            assert_eq!(h.0, whole.0, "cut at {cut}");
        }
    }

    #[test]
    fn digests_compare_canonical_proposals() {
        let a = json!({"amount_minor": 5000, "order_id": "o-1"});
        let b: Value = serde_json::from_str(r#"{"order_id":"o-1","amount_minor":5000.0}"#).unwrap();
        assert_eq!(digest_value(&a), digest_value(&b));
        assert_ne!(
            digest_value(&a),
            digest_value(&json!({"amount_minor": 5001, "order_id": "o-1"}))
        );
        assert_ne!(digest_value(&json!("x")), digest_text("x"));
        assert_eq!(digest_value(&a).len(), 16);
    }

    #[test]
    fn order_values_are_numbers_or_timestamps() {
        assert_eq!(order_value(Some(&json!(3))), Ok(3.0));
        assert_eq!(
            order_value(Some(&json!("1970-01-01T00:00:10.5Z"))),
            Ok(10.5)
        );
        assert_eq!(
            order_value(Some(&json!("soon"))),
            Err("is \"soon\": not a number or an RFC 3339 timestamp".into())
        );
        assert_eq!(
            order_value(Some(&json!(true))),
            Err("is a boolean: not a number or an RFC 3339 timestamp".into())
        );
        assert_eq!(order_value(None), Err("has no value in this record".into()));
    }
}
