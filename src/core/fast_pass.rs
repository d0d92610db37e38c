//! The passing capture record, known without building it: `check -q`'s fast pass over a
//! log's lines (`docs/verdicts.md#the-fast-pass`).
//!
//! A line of a plain capture record (`id`, `output`, `context`, `intent`, `meta` and no
//! other key) is read on a tape (`core::stage::tape`: no `serde_json::Value` is built), its
//! `output` text on another, and the stages are run on the tapes: the schema by a validator
//! compiled for the tape, the rules by the direct evaluator (`core::rules::fast`), the
//! confirmed intent by equality of leaves. [`FastPass::passes`] is `true` only when every
//! step is one the full pipeline takes the same way and every stage passes, so the full
//! pipeline's verdict is a pass with no `expect`, no repair and no chain: the caller counts
//! it as that verdict without making it. On anything else (a key, a value or a text outside
//! what the tapes read, a rule the evaluator leaves undecided, any failing stage) it is
//! `false`, which says nothing, and the line takes the full pipeline.
//!
//! It applies only to a workspace where the full pipeline's choices do not depend on the
//! record beyond those keys ([`FastPass::of`]): one contract for every plain record (the
//! `default_contract`, or the only schema), no `[[route]]`, `[[source]]`, `[[join]]`,
//! batch input requests or chain keys, a contract that compiled, has no `$ref` and whose
//! rules the direct evaluator decides whole, and no `[intent] fields`.

use crate::core::contract::Contract;
use crate::core::rules::fast::DocVars;
use crate::core::stage::tape::{self, DocNode, NodeKind, Tape, TapeNode, Tok};
use crate::core::workspace::Workspace;
use std::cell::RefCell;
use std::sync::Arc;

/// The fast pass of one workspace: its contract for plain records, with the schema compiled
/// for the tape.
pub struct FastPass {
    contract: Arc<Contract>,
    validator: jsonschema::Validator<Tape>,
    /// `[intent] fields`, each a pointer to one member of the proposal (`/amount_minor`),
    /// as the member names; `None`: every leaf of the intent is compared.
    intent_fields: Option<Vec<String>>,
}

thread_local! {
    /// The record's tape, the output's tape and the output's text when it has escapes,
    /// reused line after line on each thread.
    static BUFFERS: RefCell<(Vec<Tok>, Vec<Tok>, String)> =
        const { RefCell::new((Vec::new(), Vec::new(), String::new())) };
}

impl FastPass {
    /// The fast pass of `ws`, or `None` when its captures' verdicts may depend on more than
    /// a plain record's own keys (see the module docs).
    pub fn of(ws: &Workspace) -> Option<FastPass> {
        let c = &ws.config;
        if !c.routes.is_empty()
            || !c.sources.is_empty()
            || !c.joins.is_empty()
            || !ws.joins.by_id.is_empty()
            || !ws.requests.is_empty()
            || c.chains.by.is_some()
            || c.chains.pattern.is_some()
        {
            return None;
        }
        // the contract `Workspace::server_contract` gives a record with no `contract`, no
        // tool and no model: the default, else the only schema file
        let contract = match c.default_contract.as_deref() {
            Some(name) => ws.contracts.get(name)?.clone(),
            None => {
                let mut it = ws.contracts.by_name.values().filter(|c| c.label.is_none());
                match (it.next(), it.next()) {
                    (Some(only), None) => only.clone(),
                    _ => return None,
                }
            }
        };
        contract.compiled.as_ref().ok()?;
        if contract.rules.as_ref().is_some_and(|r| !r.all_direct()) {
            return None;
        }
        // `[intent] fields` of one member name each (no `/` or `~` in it), as
        // `intent::compare` reads them without parsing a pointer
        let intent_fields = match contract
            .rules
            .as_ref()
            .and_then(|r| r.intent_fields.as_ref())
        {
            None => None,
            Some(fields) => Some(
                fields
                    .iter()
                    .map(|p| {
                        p.strip_prefix('/')
                            .filter(|n| !n.contains(['/', '~']))
                            .map(str::to_owned)
                    })
                    .collect::<Option<Vec<String>>>()?,
            ),
        };
        let validator =
            tape::validator_in(&contract.schema, c.format_assertion, c.dialect.draft())?;
        Some(FastPass {
            contract,
            validator,
            intent_fields,
        })
    }

    /// The contract it checks records against.
    pub fn contract(&self) -> &Arc<Contract> {
        &self.contract
    }

    /// The name of the contract it checks records against.
    pub fn contract_name(&self) -> &str {
        &self.contract.name
    }

    /// Whether the log line `line` (without its line ending) is a capture record the full
    /// pipeline passes: `true` only then; `false` says nothing.
    pub fn passes(&self, line: &[u8]) -> bool {
        // an OTLP record is read by its own walk first (`capture::parse_record_as`)
        static RESOURCE_SPANS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"resourceSpans"));
        let Ok(text) = std::str::from_utf8(line) else {
            return false;
        };
        if RESOURCE_SPANS.find(line).is_some() {
            return false;
        }
        BUFFERS.with(|b| {
            let Ok(mut b) = b.try_borrow_mut() else {
                return false;
            };
            let (record, output, unescaped) = &mut *b;
            self.passes_on(text, record, output, unescaped)
        })
    }

    fn passes_on(
        &self,
        text: &str,
        record: &mut Vec<Tok>,
        output_toks: &mut Vec<Tok>,
        unescaped: &mut String,
    ) -> bool {
        let Some(rec) = tape::read_record(text, record) else {
            return false;
        };
        if !matches!(rec.kind(), NodeKind::Obj(_)) {
            return false;
        }
        let (mut output, mut context, mut intent) = (None, None, None);
        for (name, value) in rec.object_members() {
            let object = matches!(value.kind(), NodeKind::Obj(_));
            match name {
                // `id` must not be empty (`INVALID_CAPTURE`); an escaped one is not
                "id" => match value.kind() {
                    NodeKind::Str(s) if !s.is_empty() => {}
                    NodeKind::Esc(_) => {}
                    _ => return false,
                },
                "output" => output = Some(value),
                "context" if object => context = Some(value),
                "intent" if object => intent = Some(value),
                "meta" if object => {}
                _ => return false,
            }
        }
        let Some(output) = output else {
            return false;
        };
        // the response stage (`status` `completed`): a string is the text to parse
        let text = match output.kind() {
            NodeKind::Str(s) => s,
            NodeKind::Esc(raw) => {
                unescaped.clear();
                tape::unescape_into(raw, unescaped);
                unescaped.as_str()
            }
            _ => return false,
        };
        // parse: the tape reads a subset of what `parse_strict` accepts, as the same value
        let Some(proposal) = tape::read_proposal(text, output_toks) else {
            return false;
        };
        // schema
        if !self.validator.is_valid(proposal) {
            return false;
        }
        // business: the rules, then the confirmed intent
        let (on_record, on_output) = (rec.doc(), proposal.doc());
        let vars = DocVars {
            proposal: on_output.node(proposal),
            context: context.map_or_else(DocNode::empty_object, |c| on_record.node(c)),
            intent: intent.map_or_else(DocNode::empty_object, |i| on_record.node(i)),
        };
        if let Some(rules) = &self.contract.rules
            && !rules.hold_directly(&vars)
        {
            return false;
        }
        let Some(intent) = intent else {
            return true;
        };
        match &self.intent_fields {
            None => intent_holds(proposal, intent),
            // a field the intent does not state is not compared
            Some(names) => names.iter().all(|name| {
                intent
                    .member(name)
                    .is_none_or(|want| proposal.member(name).is_some_and(|got| equal(got, want)))
            }),
        }
    }
}

/// Whether every leaf of the object `intent` equals the proposal's value at the same place
/// (`core::stage::intent::compare` without `[intent] fields`); `false` also when a leaf is
/// one this comparison leaves to the full pipeline (a non-empty array, an escaped string).
fn intent_holds(proposal: TapeNode<'_>, intent: TapeNode<'_>) -> bool {
    intent
        .object_members()
        .all(|(name, want)| leaf_holds(proposal.member(name), want))
}

fn leaf_holds(got: Option<TapeNode<'_>>, want: TapeNode<'_>) -> bool {
    match want.kind() {
        NodeKind::Obj(n) if n > 0 => want
            .object_members()
            .all(|(name, w)| leaf_holds(got.and_then(|g| g.member(name)), w)),
        // an array's elements are compared by index: left to the full pipeline
        NodeKind::Arr(n) if n > 0 => false,
        _ => got.is_some_and(|g| equal(g, want)),
    }
}

/// JSON equality of two tape values (`core::stage::intent::json_equal`; the tapes hold
/// integers only, so numbers compare exactly); `false` for an escaped string.
fn equal(a: TapeNode<'_>, b: TapeNode<'_>) -> bool {
    match (a.kind(), b.kind()) {
        (NodeKind::Null, NodeKind::Null) => true,
        (NodeKind::Bool(x), NodeKind::Bool(y)) => x == y,
        (NodeKind::Int(x), NodeKind::Int(y)) => x == y,
        (NodeKind::Str(x), NodeKind::Str(y)) => x == y,
        (NodeKind::Arr(n), NodeKind::Arr(m)) => {
            n == m
                && a.array_elements()
                    .zip(b.array_elements())
                    .all(|(x, y)| equal(x, y))
        }
        (NodeKind::Obj(n), NodeKind::Obj(m)) => {
            n == m
                && a.object_members()
                    .all(|(k, v)| b.member(k).is_some_and(|w| equal(v, w)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::capture::RawRecord;
    use crate::core::record_ref::RecordRef;
    use std::path::Path;

    fn refund() -> Workspace {
        Workspace::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund"))
            .expect("the bundled sample loads")
    }

    /// A record the refund sample's contract passes, with `output` and the rest as given.
    fn record(id: &str, output: &str, context: &str, intent: &str) -> String {
        format!(
            r#"{{"id":{id},"output":{},"context":{context},"intent":{intent},"meta":{{"model":"m"}}}}"#,
            serde_json::to_string(output).unwrap()
        )
    }

    const OUTPUT: &str = r#"{"schema_version":"refund-v1","order_id":"O-1","amount_minor":500,"currency":"KRW","expected_version":7}"#;
    const CONTEXT: &str = r#"{"actor":{"user_id":"U-7","allowed_actions":["refund","view"]},"order":{"order_id":"O-1","owner_id":"U-7","currency":"KRW","paid_minor":10000,"refunded_minor":2000,"version":7}}"#;
    const INTENT: &str = r#"{"order_id":"O-1","amount_minor":500,"currency":"KRW"}"#;

    /// What the full pipeline says of the log line `line`: whether it is one capture
    /// whose verdict passes, outside any chain, with no `expect` and no repair.
    fn full_passes(ws: &Workspace, line: &str) -> bool {
        let raw = RawRecord::json(
            RecordRef::new("captures/log.jsonl", Some(1)),
            Ok(line.to_owned()),
        );
        let vs = ws.check_all(&raw);
        vs.len() == 1
            && vs[0].passes()
            && vs[0].chain.is_none()
            && vs[0].expect.is_none()
            && vs[0].repair.is_none()
    }

    #[test]
    fn the_refund_sample_has_a_fast_pass_and_it_passes_a_plain_passing_record() {
        let ws = refund();
        let fp = FastPass::of(&ws).expect("one contract, rules the direct evaluator decides");
        assert_eq!(fp.contract_name(), "refund-v1");
        let line = record(r#""c1""#, OUTPUT, CONTEXT, INTENT);
        assert!(full_passes(&ws, &line));
        assert!(fp.passes(line.as_bytes()));
        // escapes in the record's strings (the output's own text has none)
        let line = record(r#""c\u00e9\n""#, OUTPUT, CONTEXT, INTENT);
        assert!(fp.passes(line.as_bytes()));
        // no context: the first rule fails (NOT_AUTHORIZED)
        let line = record(r#""c1""#, OUTPUT, "{}", INTENT);
        assert!(!full_passes(&ws, &line));
        assert!(!fp.passes(line.as_bytes()));
    }

    /// Every change below either keeps the record passing or not; whatever it does, the
    /// fast pass says `true` only where the full pipeline passes the record, and says it
    /// for most of the passing ones.
    #[test]
    fn the_fast_pass_passes_only_what_the_full_pipeline_passes() {
        let ws = refund();
        let fp = FastPass::of(&ws).unwrap();
        let base = record(r#""c1""#, OUTPUT, CONTEXT, INTENT);
        // (from, to) replacements in the record's text, applied one, two or three at a time
        let edits: &[(&str, &str)] = &[
            ("", ""),
            (r#"\"amount_minor\":500"#, r#"\"amount_minor\":8000"#),
            (r#"\"amount_minor\":500"#, r#"\"amount_minor\":500.0"#),
            (r#"\"amount_minor\":500"#, r#"\"amount_minor\":5e2"#),
            (r#"\"amount_minor\":500"#, r#"\"amount_minor\":null"#),
            (r#"\"amount_minor\":500"#, r#"\"amount_minor\":\"500\""#),
            (r#"\"amount_minor\":500"#, r#"\"amount_minor\":-0"#),
            (
                r#"\"amount_minor\":500"#,
                r#"\"amount_minor\":99999999999999999999"#,
            ),
            (
                r#"\"amount_minor\":500"#,
                r#"\"amount_minor\":500,\"amount_minor\":500"#,
            ),
            (
                r#"\"currency\":\"KRW\",\"exp"#,
                r#"\"currency\":\"krw\",\"exp"#,
            ),
            (
                r#"\"currency\":\"KRW\",\"exp"#,
                r#"\"currency\":\"USD\",\"exp"#,
            ),
            (
                r#"\"currency\":\"KRW\",\"exp"#,
                r#"\"currency\":\"\\u004bRW\",\"exp"#,
            ),
            (r#"\"expected_version\":7}"#, r#"\"expected_version\":8}"#),
            (
                r#"\"expected_version\":7}"#,
                r#"\"expected_version\":7,\"approved\":true}"#,
            ),
            (r#"\"expected_version\":7}"#, r#"\"expected_version\":7} "#),
            (r#"\"expected_version\":7}"#, r#"\"expected_version\":7}x"#),
            (r#"\"expected_version\":7}"#, r#"\"expected_version\":7"#),
            (r#""output":"{"#, r#""output":"```json\n{"#),
            (r#""output":"{"#, r#""output":" \n\t{"#),
            (r#""output":"{"#, r#""output":"\ufeff{"#),
            (r#""output":"{"#, r#""output":"\ud83d\ude00{"#),
            (
                r#"\"order_id\":\"O-1\",\"amount"#,
                r#"\"order_id\":\"O-2\",\"amount"#,
            ),
            (
                r#"\"order_id\":\"O-1\",\"amount"#,
                r#"\"order_id\":\"\",\"amount"#,
            ),
            (
                r#"\"order_id\":\"O-1\",\"amount"#,
                r#"\"order_id\":\"O-1\\u0000\",\"amount"#,
            ),
            (r#""id":"c1""#, r#""id":"""#),
            (r#""id":"c1""#, r#""id":1"#),
            (r#""id":"c1""#, r#""id":null"#),
            (r#""id":"c1","#, ""),
            (r#""id":"c1""#, r#""id":"c1","id":"c2""#),
            (r#""id":"c1""#, r#""id":"c1","chain":"k""#),
            (r#""id":"c1""#, r#""id":"c1","expect":{"stage":"passed"}"#),
            (r#""id":"c1""#, r#""id":"c1","contract":"refund-v1""#),
            (r#""id":"c1""#, r#""id":"c1","status":"completed""#),
            (r#""id":"c1""#, r#""id":"c1","status":"refusal""#),
            (r#""id":"c1""#, r#""id":"c1","extra":1"#),
            (r#""id":"c1""#, r#""id":"c1","resourceSpans":[]"#),
            (r#""meta":{"model":"m"}"#, r#""meta":[]"#),
            (
                r#""meta":{"model":"m"}"#,
                r#""meta":{"model":"m","model":"n"}"#,
            ),
            (
                r#""meta":{"model":"m"}"#,
                r#""meta":{"usage":{"input_tokens":1.5}}"#,
            ),
            (r#""meta":{"model":"m"}"#, r#""meta":{"x":"\ud800"}"#),
            (r#""user_id":"U-7","allowed"#, r#""user_id":"U-8","allowed"#),
            (r#"["refund","view"]"#, r#"["view"]"#),
            (
                r#"["refund","view"]"#,
                r#"["view",1,null,true,2.5,"refund"]"#,
            ),
            (r#"["refund","view"]"#, r#"["view",["refund"]]"#),
            (r#"["refund","view"]"#, r#"["re\u0066und"]"#),
            (r#""paid_minor":10000"#, r#""paid_minor":10000.5"#),
            (r#""paid_minor":10000"#, r#""paid_minor":2500"#),
            (
                r#""paid_minor":10000"#,
                r#""paid_minor":9223372036854775807"#,
            ),
            (
                r#""refunded_minor":2000"#,
                r#""refunded_minor":-9223372036854775808"#,
            ),
            (r#""version":7}}"#, r#""version":7,"version":7}}"#),
            (r#""currency":"KRW","paid"#, r#""currency":"USD","paid"#),
            (r#""owner_id":"U-7""#, r#""owner_id":"U-\u0037""#),
            (
                r#""intent":{"order_id":"O-1","#,
                r#""intent":{"order_id":"O-9","#,
            ),
            (r#""intent":{"order_id":"O-1","#, r#""intent":{"#),
            (
                r#""amount_minor":500,"currency":"KRW"}"#,
                r#""amount_minor":500.0,"currency":"KRW"}"#,
            ),
            (
                r#""amount_minor":500,"currency":"KRW"}"#,
                r#""amount_minor":501,"currency":"KRW"}"#,
            ),
            (
                r#""amount_minor":500,"currency":"KRW"}"#,
                r#""amount_minor":500,"currency":"KRW","note":[1]}"#,
            ),
            (r#""intent":{"#, r#""intent":[],"x":{"#),
            (r#""context":{"actor""#, r#""context":null,"c":{"actor""#),
            (r#""context":{"actor""#, r#""context":{"order":{},"actor""#),
        ];
        let (mut passing, mut fast) = (0, 0);
        let n = edits.len();
        for i in 0..n {
            for j in i..n {
                for k in [0, (i * 7 + j * 13) % n, (i * 31 + j * 5 + 3) % n] {
                    let mut line = base.clone();
                    for (from, to) in [edits[i], edits[j], edits[k]] {
                        if !from.is_empty() {
                            line = line.replacen(from, to, 1);
                        }
                    }
                    let full = full_passes(&ws, &line);
                    let quick = fp.passes(line.as_bytes());
                    assert!(
                        full || !quick,
                        "the fast pass passes a record the full pipeline does not: {line}"
                    );
                    // one edit alone: a passing record the fast pass leaves to the full
                    // pipeline is one of these (a `5e2`, an escaped string compared by a
                    // rule or the intent, a 19-digit integer, a `500.0` in the intent)
                    if i == j && j == k && full && !quick {
                        assert!(
                            [3, 11, 44, 47, 51, 54].contains(&i),
                            "edit {i} passes, but not by the fast pass: {line}"
                        );
                    }
                    passing += usize::from(full);
                    fast += usize::from(quick);
                }
            }
        }
        // the test is only worth its cases if both kinds occur
        assert!(passing > 100 && passing < n * n, "{passing} passing");
        assert!(fast > 50, "{fast} of {passing} passing taken");
    }

    /// A copy of the refund sample with `toml` appended to its verdict.toml and `edit`
    /// done to it.
    fn refund_with(toml: &str, edit: impl Fn(&Path)) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund");
        for sub in ["schemas", "captures"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        for f in [
            "verdict.toml",
            "schemas/refund-v1.schema.json",
            "schemas/refund-v1.rules.toml",
        ] {
            std::fs::copy(from.join(f), dir.path().join(f)).unwrap();
        }
        let config = dir.path().join("verdict.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(toml);
        std::fs::write(&config, text).unwrap();
        edit(dir.path());
        let ws = Workspace::load(dir.path()).unwrap();
        (dir, ws)
    }

    /// Where the contract or the verdict of a plain record may depend on more than the
    /// record's own keys, or the rules are not the direct evaluator's whole, there is no
    /// fast pass: every record takes the full pipeline.
    #[test]
    fn a_workspace_whose_verdicts_depend_on_more_than_the_record_has_no_fast_pass() {
        let nothing = |_: &Path| {};
        let (_d, ws) = refund_with("", nothing);
        assert!(FastPass::of(&ws).is_some(), "the copy itself has one");
        let rules = |text: &'static str| {
            move |root: &Path| {
                std::fs::write(root.join("schemas/refund-v1.rules.toml"), text).unwrap();
            }
        };
        type Edit = Box<dyn Fn(&Path)>;
        let cases: Vec<(&str, Edit)> = vec![
            (
                "\n[[route]]\ncontract = \"refund-v1\"\nmodel = \"gpt-*\"\n",
                Box::new(nothing),
            ),
            (
                "\n[[source]]\npath = \"captures/*.jsonl\"\ncontract = \"refund-v1\"\n",
                Box::new(nothing),
            ),
            ("\n[[join]]\npath = \"joins/*.jsonl\"\n", Box::new(nothing)),
            ("\n[chains]\nby = \"/meta/trace_id\"\n", Box::new(nothing)),
            (
                "\n[chains]\npattern = '^(?P<chain>.+)#(?P<attempt>\\d+)$'\n",
                Box::new(nothing),
            ),
            // a rule with a comprehension
            (
                "",
                Box::new(rules(
                    "[[rule]]\nreason = \"R\"\nrule = \"context.xs.all(x, x > 0)\"\nmessage = \"m\"\n",
                )),
            ),
            // a rule the direct evaluator does not know (a function)
            (
                "",
                Box::new(rules(
                    "[[rule]]\nreason = \"R\"\nrule = \"size(proposal.order_id) > 0\"\nmessage = \"m\"\n",
                )),
            ),
            // an intent field deeper than one member
            ("", Box::new(rules("[intent]\nfields = [\"/a/b\"]\n"))),
            ("", Box::new(rules("[intent]\nfields = [\"\"]\n"))),
            // a schema with a `$ref`
            (
                "",
                Box::new(|root: &Path| {
                    std::fs::write(
                    root.join("schemas/refund-v1.schema.json"),
                    r##"{"$defs": {"s": {"type": "string"}}, "properties": {"order_id": {"$ref": "#/$defs/s"}}}"##,
                )
                .unwrap();
                }),
            ),
            // two schemas and no default
            (
                "",
                Box::new(|root: &Path| {
                    let config = root.join("verdict.toml");
                    let text = std::fs::read_to_string(&config).unwrap();
                    std::fs::write(
                        &config,
                        text.replace("default_contract", "# default_contract"),
                    )
                    .unwrap();
                    std::fs::write(root.join("schemas/other.schema.json"), "{}").unwrap();
                }),
            ),
        ];
        for (i, (toml, edit)) in cases.iter().enumerate() {
            let (_d, ws) = refund_with(toml, edit);
            assert!(FastPass::of(&ws).is_none(), "case {i}: {toml}");
        }
    }
}
