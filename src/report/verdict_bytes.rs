//! A verdict as compact JSON, written without serde's serializer for the parts every
//! verdict has: the fixed keys are written as bytes, a string value is copied between its
//! quotes when it holds nothing JSON escapes (a control character, `"`, `\`), and only such
//! a string goes through `serde_json` (its own escaping, so the bytes are the same); numbers
//! through `itoa`, as `serde_json` writes them. A chain's `chain` is written here too (every
//! attempt of a chain has one), but for an `order` value; the other optional parts a
//! schema-mode verdict never has (`expect`, `repair`, `response`, `meta`, `generation`) are
//! written by `serde_json`. The text is byte for byte `serde_json::to_vec(verdict)` (the
//! tests below).

use crate::core::chain::ChainLink;
use crate::core::chain::outcome::ChainRow;
use crate::core::verdict::{Branch, Finding, LineCol, Span, Verdict, Warning};
use serde::Serialize;

/// Appends `v` as compact JSON (no newline) to `out`: exactly `serde_json::to_writer`'s text.
pub(crate) fn verdict(v: &Verdict, out: &mut Vec<u8>) {
    // every field by name: a field added to `Verdict` does not compile here until it is written
    let Verdict {
        id,
        source,
        contract,
        contract_from,
        format,
        provider,
        stage,
        decision,
        reason,
        errors,
        warnings,
        expect,
        repair,
        response,
        meta,
        generation,
        chain,
        next_action,
    } = v;
    out.extend_from_slice(b"{\"id\":");
    string(out, id);
    out.extend_from_slice(b",\"source\":");
    string(out, source.as_str());
    out.extend_from_slice(b",\"contract\":");
    nullable(out, contract.as_deref());
    if let Some(s) = contract_from {
        out.extend_from_slice(b",\"contract_from\":");
        string(out, s);
    }
    if let Some(s) = format {
        out.extend_from_slice(b",\"format\":");
        string(out, s);
    }
    if let Some(s) = provider {
        out.extend_from_slice(b",\"provider\":");
        string(out, s);
    }
    out.extend_from_slice(b",\"stage\":");
    string(out, stage.as_str());
    out.extend_from_slice(b",\"decision\":");
    string(out, decision.as_str());
    out.extend_from_slice(b",\"reason\":");
    nullable(out, reason.as_ref().map(|r| r.as_str()));
    out.extend_from_slice(b",\"errors\":");
    findings(out, errors);
    out.extend_from_slice(b",\"warnings\":[");
    for (i, w) in warnings.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        warning(out, w);
    }
    out.push(b']');
    if let Some(x) = expect {
        out.extend_from_slice(b",\"expect\":");
        serde(out, x);
    }
    if let Some(x) = repair {
        out.extend_from_slice(b",\"repair\":");
        serde(out, x);
    }
    if let Some(x) = response {
        out.extend_from_slice(b",\"response\":");
        serde(out, x);
    }
    if let Some(x) = meta {
        out.extend_from_slice(b",\"meta\":");
        serde(out, x);
    }
    if let Some(x) = generation {
        out.extend_from_slice(b",\"generation\":");
        serde(out, x);
    }
    if let Some(x) = chain {
        out.extend_from_slice(b",\"chain\":");
        chain_link(out, x);
    }
    out.extend_from_slice(b",\"next_action\":");
    string(out, next_action);
    out.push(b'}');
}

/// A verdict's `chain`: written here but for an `order` value (a float, `serde_json`'s).
fn chain_link(out: &mut Vec<u8>, c: &ChainLink) {
    let ChainLink {
        id,
        attempt,
        linked_by,
        order,
        digest,
        problem,
    } = c;
    if order.is_some() {
        return serde(out, c);
    }
    out.extend_from_slice(b"{\"id\":");
    string(out, id);
    if let Some(n) = attempt {
        out.extend_from_slice(b",\"attempt\":");
        out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes());
    }
    out.extend_from_slice(b",\"linked_by\":");
    string(out, linked_by.as_str());
    if let Some(s) = digest {
        out.extend_from_slice(b",\"digest\":");
        string(out, s);
    }
    if let Some(s) = problem {
        out.extend_from_slice(b",\"problem\":");
        string(out, s);
    }
    out.push(b'}');
}

/// A map of names to counts (a chain row's `wasted_by`, `effect_counts`) as a compact JSON
/// object, in the map's order, appended to `out`.
fn counts<'a>(out: &mut Vec<u8>, pairs: impl Iterator<Item = (&'a str, usize)>) {
    out.push(b'{');
    for (i, (name, n)) in pairs.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(out, name);
        out.push(b':');
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
    out.push(b'}');
}

/// A chain row (`docs/chains.md#the-report`) as compact JSON, appended to `out`: exactly
/// `serde_json::to_writer`'s text (the tests below), what `check --format jsonl` prints in a
/// `chain` line.
pub(crate) fn chain_row(out: &mut Vec<u8>, r: &ChainRow) {
    let ChainRow {
        chain,
        linked_by,
        contract,
        attempts,
        outcome,
        recovered_at,
        first_failure,
        last_stage,
        last_decision,
        last_reason,
        tokens,
        tokens_to_recover,
        flags,
        wasted_count,
        wasted_by,
        wasted,
        over_budget,
        effect_counts,
        effects,
        sources,
    } = r;
    let int = |out: &mut Vec<u8>, n: u64| {
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    };
    let opt_int = |out: &mut Vec<u8>, n: Option<u64>| match n {
        Some(n) => int(out, n),
        None => out.extend_from_slice(b"null"),
    };
    let list = |out: &mut Vec<u8>, n: usize, each: &mut dyn FnMut(&mut Vec<u8>, usize)| {
        out.push(b'[');
        for i in 0..n {
            if i > 0 {
                out.push(b',');
            }
            each(out, i);
        }
        out.push(b']');
    };
    out.extend_from_slice(b"{\"chain\":");
    string(out, chain);
    out.extend_from_slice(b",\"linked_by\":");
    string(out, linked_by.as_str());
    out.extend_from_slice(b",\"contract\":");
    nullable(out, contract.as_deref());
    out.extend_from_slice(b",\"attempts\":");
    int(out, *attempts as u64);
    out.extend_from_slice(b",\"outcome\":");
    string(out, outcome.as_str());
    out.extend_from_slice(b",\"recovered_at\":");
    opt_int(out, recovered_at.map(|n| n as u64));
    out.extend_from_slice(b",\"first_failure\":");
    match first_failure {
        Some(f) => {
            out.extend_from_slice(b"{\"stage\":");
            string(out, f.stage.as_str());
            out.extend_from_slice(b",\"reason\":");
            string(out, f.reason.as_str());
            out.extend_from_slice(b",\"pointer\":");
            nullable(out, f.pointer.as_deref());
            out.push(b'}');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"last_stage\":");
    string(out, last_stage.as_str());
    out.extend_from_slice(b",\"last_decision\":");
    string(out, last_decision.as_str());
    out.extend_from_slice(b",\"last_reason\":");
    nullable(out, last_reason.as_ref().map(|r| r.as_str()));
    out.extend_from_slice(b",\"tokens\":");
    opt_int(out, *tokens);
    out.extend_from_slice(b",\"tokens_to_recover\":");
    opt_int(out, *tokens_to_recover);
    out.extend_from_slice(b",\"flags\":");
    list(out, flags.len(), &mut |out, i| string(out, flags[i]));
    out.extend_from_slice(b",\"wasted_count\":");
    int(out, *wasted_count as u64);
    out.extend_from_slice(b",\"wasted_by\":");
    counts(out, wasted_by.iter().map(|(why, n)| (why.as_str(), *n)));
    out.extend_from_slice(b",\"wasted\":");
    list(out, wasted.len(), &mut |out, i| {
        let w = &wasted[i];
        out.extend_from_slice(b"{\"attempt\":");
        int(out, w.attempt as u64);
        out.extend_from_slice(b",\"why\":");
        string(out, w.why.as_str());
        out.extend_from_slice(b",\"after\":");
        nullable(out, w.after.as_ref().map(|r| r.as_str()));
        out.push(b'}');
    });
    out.extend_from_slice(b",\"over_budget\":");
    list(out, over_budget.len(), &mut |out, i| {
        string(out, &over_budget[i])
    });
    out.extend_from_slice(b",\"effect_counts\":");
    counts(out, effect_counts.iter().map(|(e, n)| (e.as_str(), *n)));
    out.extend_from_slice(b",\"effects\":");
    list(out, effects.len(), &mut |out, i| {
        let e = &effects[i];
        out.extend_from_slice(b"{\"attempt\":");
        int(out, e.attempt as u64);
        out.extend_from_slice(b",\"pointer\":");
        string(out, &e.pointer);
        out.extend_from_slice(b",\"effect\":");
        string(out, e.effect.as_str());
        out.push(b'}');
    });
    out.extend_from_slice(b",\"sources\":");
    list(out, sources.len(), &mut |out, i| string(out, &sources[i]));
    out.push(b'}');
}

/// `[finding, ...]`.
fn findings(out: &mut Vec<u8>, list: &[Finding]) {
    out.push(b'[');
    for (i, f) in list.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        finding(out, f);
    }
    out.push(b']');
}

fn finding(out: &mut Vec<u8>, f: &Finding) {
    let Finding {
        stage,
        reason,
        decision,
        pointer,
        schema_path,
        keyword,
        message,
        at,
        span,
        branches,
        hint,
    } = f;
    out.extend_from_slice(b"{\"stage\":");
    string(out, stage.as_str());
    out.extend_from_slice(b",\"reason\":");
    string(out, reason.as_str());
    out.extend_from_slice(b",\"decision\":");
    string(out, decision.as_str());
    out.extend_from_slice(b",\"pointer\":");
    nullable(out, pointer.as_deref());
    out.extend_from_slice(b",\"schema_path\":");
    nullable(out, schema_path.as_deref());
    if let Some(s) = keyword {
        out.extend_from_slice(b",\"keyword\":");
        string(out, s);
    }
    out.extend_from_slice(b",\"message\":");
    string(out, message);
    if let Some(at) = at {
        out.extend_from_slice(b",\"at\":");
        line_col(out, *at);
    }
    if let Some(Span { start, end }) = span {
        out.extend_from_slice(b",\"span\":{\"start\":");
        number(out, *start as u64);
        out.extend_from_slice(b",\"end\":");
        number(out, *end as u64);
        out.push(b'}');
    }
    if !branches.is_empty() {
        out.extend_from_slice(b",\"branches\":[");
        for (i, Branch { index, errors }) in branches.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"index\":");
            number(out, *index as u64);
            out.extend_from_slice(b",\"errors\":");
            findings(out, errors);
            out.push(b'}');
        }
        out.push(b']');
    }
    if let Some(s) = hint {
        out.extend_from_slice(b",\"hint\":");
        string(out, s);
    }
    out.push(b'}');
}

fn warning(out: &mut Vec<u8>, w: &Warning) {
    let Warning {
        code,
        severity,
        file,
        pointer,
        at,
        message,
    } = w;
    out.extend_from_slice(b"{\"code\":");
    string(out, code);
    if let Some(s) = severity {
        out.extend_from_slice(b",\"severity\":");
        string(out, s);
    }
    if let Some(s) = file {
        out.extend_from_slice(b",\"file\":");
        string(out, s);
    }
    if let Some(s) = pointer {
        out.extend_from_slice(b",\"pointer\":");
        string(out, s);
    }
    if let Some(at) = at {
        out.extend_from_slice(b",\"at\":");
        line_col(out, *at);
    }
    out.extend_from_slice(b",\"message\":");
    string(out, message);
    out.push(b'}');
}

fn line_col(out: &mut Vec<u8>, at: LineCol) {
    out.extend_from_slice(b"{\"line\":");
    number(out, u64::from(at.line));
    out.extend_from_slice(b",\"column\":");
    number(out, u64::from(at.column));
    out.push(b'}');
}

fn number(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// `null`, or the string.
fn nullable(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// `s` as a JSON string, byte for byte `serde_json`'s (`format_escaped_str`): the runs of
/// bytes that stand for themselves copied whole (found eight bytes a step,
/// [`crate::core::json_string::to_special`]), and between them `\"`, `\\`, `\b`, `\f`, `\n`,
/// `\r`, `\t`, or `\u00XX` (lower-case hex) for the other bytes below 0x20.
fn string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let i = crate::core::json_string::to_special(b, start);
        out.extend_from_slice(&b[start..i]);
        let Some(&c) = b.get(i) else { break };
        let short: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => {
                let hex = [HEX[usize::from(c >> 4)], HEX[usize::from(c & 0xf)]];
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&hex);
                start = i + 1;
                continue;
            }
        };
        out.extend_from_slice(short);
        start = i + 1;
    }
    out.push(b'"');
}

fn serde<T: Serialize + ?Sized>(out: &mut Vec<u8>, x: &T) {
    serde_json::to_writer(out, x).expect("a verdict serializes");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::record_ref::RecordRef;
    use crate::core::verdict::{Decision, Reason, Stage};

    fn same(v: &Verdict) {
        let mut ours = Vec::new();
        verdict(v, &mut ours);
        let theirs = serde_json::to_vec(v).expect("serializes");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut texts: Vec<String> = (0u8..0x80)
            .map(|c| format!("a{}b\"\\{}", char::from(c), char::from(c)))
            .collect();
        texts.extend(["", "\"", "\u{7f}\u{80}é🙂\u{2028}", "\n\n\u{1}x"].map(String::from));
        for t in texts {
            let mut ours = Vec::new();
            string(&mut ours, &t);
            let theirs = serde_json::to_vec(&t).expect("serializes");
            assert_eq!(ours, theirs, "{t:?}");
        }
    }

    #[test]
    fn every_byte_at_every_place_is_written_as_serde_json_writes_it() {
        for len in 0..20 {
            for at in 0..len {
                for byte in 0u8..0x80 {
                    let mut b = vec![b'a'; len];
                    b[at] = byte;
                    let t = String::from_utf8(b).expect("ascii");
                    let mut ours = Vec::new();
                    string(&mut ours, &t);
                    assert_eq!(ours, serde_json::to_vec(&t).expect("serializes"), "{t:?}");
                }
            }
        }
    }

    #[test]
    fn chain_links_are_written_as_serde_writes_them() {
        use crate::core::chain::LinkedBy;
        let src = RecordRef::new("captures/log.jsonl", Some(3));
        let mut v = Verdict::from_errors("c1".into(), src.clone(), None, Vec::new());
        let odd = "loop \"7\"\t\u{1} \u{7f} é 🙂";
        let mut n = 0;
        for linked_by in [
            LinkedBy::Record,
            LinkedBy::By,
            LinkedBy::Pattern,
            LinkedBy::Natural,
        ] {
            for attempt in [None, Some(0), Some(1), Some(u64::MAX)] {
                for order in [None, Some(1.5), Some(-0.0), Some(1e300)] {
                    for digest in [None, Some("f933927b59bee64e")] {
                        for problem in [None, Some(odd)] {
                            v.chain = Some(ChainLink {
                                id: if n % 2 == 0 {
                                    odd.into()
                                } else {
                                    "loop-1".into()
                                },
                                attempt,
                                linked_by,
                                order,
                                digest: digest.map(String::from),
                                problem: problem.map(String::from),
                            });
                            same(&v);
                            n += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(n, 256);
        let mut ours = Vec::new();
        chain_link(
            &mut ours,
            &ChainLink {
                id: "loop-1".into(),
                attempt: Some(2),
                linked_by: LinkedBy::Record,
                order: None,
                digest: Some("22d0657f79a0ae25".into()),
                problem: None,
            },
        );
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            r#"{"id":"loop-1","attempt":2,"linked_by":"record","digest":"22d0657f79a0ae25"}"#
        );
    }

    #[test]
    fn chain_rows_are_written_as_serde_writes_them() {
        use crate::core::chain::LinkedBy;
        use crate::core::chain::effect::Effect;
        use crate::core::chain::outcome::{FirstFailure, Outcome, PointerEffect, Waste, Wasted};
        let odd = "loop \"7\"\t\u{1} \u{7f} é 🙂 \\";
        let bare = ChainRow {
            linked_by: LinkedBy::Natural,
            ..ChainRow::bare("c")
        };
        let full = ChainRow {
            chain: odd.into(),
            linked_by: LinkedBy::Record,
            contract: Some(odd.into()),
            attempts: usize::MAX,
            outcome: Outcome::Recovered,
            recovered_at: Some(3),
            first_failure: Some(FirstFailure {
                stage: Stage::Schema,
                reason: Reason::SCHEMA_MISMATCH,
                pointer: Some(format!("/a~1b/{odd}")),
            }),
            last_stage: Stage::Business,
            last_decision: Decision::Reject,
            last_reason: Some(Reason::INVALID_CAPTURE),
            tokens: Some(u64::MAX),
            tokens_to_recover: Some(0),
            flags: vec!["wasted", "over-budget"],
            wasted_count: 7,
            wasted_by: [
                (Waste::SameProposal, 1),
                (Waste::AfterReject, 5),
                (Waste::AfterRecheck, 1),
            ]
            .into(),
            wasted: vec![
                Wasted {
                    attempt: 2,
                    why: Waste::AfterReject,
                    after: Some(Reason::SCHEMA_MISMATCH),
                },
                Wasted {
                    attempt: 4,
                    why: Waste::SameProposal,
                    after: None,
                },
            ],
            over_budget: vec!["attempts 4 > max_attempts 3".into(), odd.into()],
            effect_counts: [
                (Effect::Moved, 2),
                (Effect::Fixed, 1),
                (Effect::Persisted, 3),
            ]
            .into(),
            effects: vec![
                PointerEffect {
                    attempt: 1,
                    pointer: odd.into(),
                    effect: Effect::Fixed,
                },
                PointerEffect {
                    attempt: 2,
                    pointer: "/amount_minor".into(),
                    effect: Effect::Moved,
                },
            ],
            sources: vec!["captures/log.jsonl:1".into(), odd.into()],
        };
        let mut half = full.clone();
        half.first_failure = Some(FirstFailure {
            stage: Stage::Parse,
            reason: Reason::INVALID_CAPTURE,
            pointer: None,
        });
        half.outcome = Outcome::Unrecovered;
        half.flags = vec!["wasted"];
        half.wasted_by = [(Waste::AfterRecheck, 2)].into();
        half.effect_counts = [(Effect::Persisted, 1)].into();
        for row in [&bare, &full, &half] {
            let mut ours = Vec::new();
            chain_row(&mut ours, row);
            let theirs = serde_json::to_vec(row).expect("serializes");
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
        }
        let mut ours = Vec::new();
        chain_row(&mut ours, &bare);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            r#"{"chain":"c","linked_by":"natural","contract":null,"attempts":1,"outcome":"first-pass","recovered_at":null,"first_failure":null,"last_stage":"ready","last_decision":"ready-for-commit","last_reason":null,"tokens":null,"tokens_to_recover":null,"flags":[],"wasted_count":0,"wasted_by":{},"wasted":[],"over_budget":[],"effect_counts":{},"effects":[],"sources":[]}"#
        );
    }

    #[test]
    fn stage_and_decision_names_are_serdes() {
        for s in Stage::ALL {
            assert_eq!(
                serde_json::to_string(&s).expect("serializes"),
                format!("\"{}\"", s.as_str())
            );
        }
        for d in Decision::ALL {
            assert_eq!(
                serde_json::to_string(&d).expect("serializes"),
                format!("\"{}\"", d.as_str())
            );
        }
    }

    #[test]
    fn every_field_is_written_as_serde_writes_it() {
        let odd = "tab\t quote\" back\\ nl\n \u{1} \u{1f} \u{7f} \u{85} é 🙂 \u{2028}";
        let src = RecordRef::new("in/\"log\"\t.jsonl", Some(9));
        let ready = Verdict::from_errors(src.to_string(), src.clone(), None, Vec::new());
        same(&ready);
        let mut f = Finding::new(Stage::Schema, Reason::SCHEMA_MISMATCH, odd)
            .with_pointer("/a~1b/0")
            .with_hint(odd)
            .with_span(
                Span {
                    start: 0,
                    end: usize::MAX,
                },
                LineCol {
                    line: u32::MAX,
                    column: 1,
                },
            );
        f.schema_path = Some("/properties/a\"".into());
        f.keyword = Some("minimum".into());
        let inner = Finding::new(Stage::Schema, Reason::new("OWN_CODE"), "inner");
        f.branches = vec![
            Branch {
                index: 0,
                errors: vec![inner.clone(), inner.clone()],
            },
            Branch {
                index: 7,
                errors: Vec::new(),
            },
        ];
        let mut v = Verdict::from_errors(
            odd.into(),
            src,
            Some(odd.into()),
            vec![f, inner.with_decision(Decision::Reject)],
        );
        same(&v);
        v.contract_from = Some("route 2".into());
        v.format = Some("capture".into());
        v.provider = Some(odd.into());
        v.warnings = vec![
            Warning::capture("GENERATION_GAP", None, odd.into()),
            Warning {
                code: "FORMAT_NOT_ASSERTED".into(),
                severity: Some("warning".into()),
                file: Some("s.schema.json".into()),
                pointer: Some("/x".into()),
                at: Some(LineCol { line: 3, column: 4 }),
                message: String::new(),
            },
        ];
        v.apply_expect(crate::core::verdict::Expect {
            stage: Some(Stage::Ready),
            decision: None,
            reason: Some(None),
        });
        v.response = Some(crate::core::verdict::ResponseInfo {
            provider: "openai-chat".into(),
            stream: true,
            stop_reason: Some("length".into()),
            usage: Some(serde_json::json!({"prompt_tokens": 3})),
            ..Default::default()
        });
        let mut meta = serde_json::Map::new();
        meta.insert(odd.into(), serde_json::json!([1, 2.5, null, "x"]));
        v.meta = Some(meta.into());
        same(&v);
        v.next_action = String::new();
        v.reason = Some(Reason::new(""));
        same(&v);
    }
}
