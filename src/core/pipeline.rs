//! The pipeline: one capture record in, one [`Verdict`] out. The stages run in a fixed
//! order (input, response, parse, schema, business) and the first one that fails decides.

use crate::core::adapter::{self, Proposal};
use crate::core::capture::{self, Capture, Payload, RawRecord};
use crate::core::contract::Contract;
use crate::core::stage::{intent, parse, schema};
use crate::core::verdict::{Finding, Reason, ResponseInfo, Stage, Verdict};
use crate::core::workspace::Workspace;
use serde_json::Value;
use std::sync::Arc;

/// Everything the pipeline learnt about one capture: the verdict, and what screens need
/// to show it (the proposal and its raw text).
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// The verdict.
    pub verdict: Verdict,
    /// The capture record, when it could be read.
    pub capture: Option<Capture>,
    /// The proposal's raw text, when it came as text; for a record that is not a capture
    /// (`INVALID_CAPTURE`, `capture` is `None`), the record's own text.
    pub raw_output: Option<String>,
    /// The parsed (or structured) proposal, when the parse stage passed.
    pub proposal: Option<Value>,
}

/// The id a record gets when it has none: its source (`captures/a.json`, `captures/log.jsonl:9`).
pub fn default_id(raw: &RawRecord) -> &str {
    &raw.source
}

impl Workspace {
    /// Runs the whole pipeline on one record.
    pub fn evaluate(&self, raw: &RawRecord) -> Evaluation {
        let mut ev = Evaluation {
            verdict: Verdict::from_errors(raw.source.clone(), raw.source.clone(), None, Vec::new()),
            capture: None,
            raw_output: None,
            proposal: None,
        };
        let text = match &raw.text {
            Ok(t) => t,
            Err(f) => {
                ev.verdict = Verdict::from_errors(
                    raw.source.clone(),
                    raw.source.clone(),
                    None,
                    vec![f.clone()],
                );
                return ev;
            }
        };
        let capture = match capture::parse_record(text, default_id(raw)) {
            Ok(c) => c,
            Err(e) => {
                let id = e.id.unwrap_or_else(|| raw.source.clone());
                ev.verdict = Verdict::from_errors(id, raw.source.clone(), None, vec![e.finding]);
                ev.raw_output = Some(text.clone());
                if let Some(x) = e.expect {
                    ev.verdict.apply_expect(x);
                }
                return ev;
            }
        };
        let (contract, errors, info) = self.run_stages(&capture, &mut ev);
        let mut verdict =
            Verdict::from_errors(capture.id.clone(), raw.source.clone(), contract, errors);
        verdict.response = info;
        if let Ok(c) = self.contract_for(&capture) {
            verdict.warnings = c.warnings();
        }
        if let Some(info) = verdict.response.as_mut() {
            verdict.warnings.append(&mut info.warnings);
        }
        if let Some(x) = &capture.expect {
            verdict.apply_expect(x.clone());
        }
        ev.verdict = verdict;
        ev.capture = Some(capture);
        ev
    }

    /// Runs the pipeline and keeps only the verdict.
    pub fn check(&self, raw: &RawRecord) -> Verdict {
        self.evaluate(raw).verdict
    }

    /// The contract a capture uses: its `contract`, else `default_contract`, else the only one.
    pub fn contract_for(&self, capture: &Capture) -> Result<&Arc<Contract>, Finding> {
        let name = capture
            .contract
            .as_deref()
            .or(self.config.default_contract.as_deref());
        match name {
            Some(name) => self.contracts.get(name).ok_or_else(|| {
                let known: Vec<&str> = self.contracts.by_name.keys().map(String::as_str).collect();
                let list = if known.is_empty() {
                    "the workspace has no schemas".to_string()
                } else {
                    format!("contracts: {}", known.join(", "))
                };
                let mut f = Finding::new(
                    Stage::Input,
                    Reason::UNKNOWN_CONTRACT,
                    format!("unknown contract {name:?}; {list}"),
                );
                if let Some(h) = self.contracts.hint(name) {
                    f = f.with_hint(h);
                }
                f
            }),
            None => {
                let mut it = self.contracts.by_name.values();
                match (it.next(), it.next()) {
                    (Some(only), None) => Ok(only),
                    (None, _) => Err(Finding::new(
                        Stage::Input,
                        Reason::UNKNOWN_CONTRACT,
                        format!(
                            "no contract: the workspace has no schemas in {}/",
                            self.config.schemas.display()
                        ),
                    )),
                    _ => Err(Finding::new(
                        Stage::Input,
                        Reason::UNKNOWN_CONTRACT,
                        "the capture names no `contract` and the workspace has several; set `contract` in the record or `default_contract` in verdict.toml",
                    )),
                }
            }
        }
    }

    fn run_stages(
        &self,
        capture: &Capture,
        ev: &mut Evaluation,
    ) -> (Option<String>, Vec<Finding>, Option<ResponseInfo>) {
        // input: the contract
        let contract = match self.contract_for(capture) {
            Ok(c) => c,
            Err(f) => return (capture.contract.clone(), vec![f], None),
        };
        let name = Some(contract.name.clone());
        let validator = match &contract.compiled {
            Ok(v) => v,
            Err(errors) => return (name, errors.clone(), None),
        };
        // response
        let adapted = match &capture.payload {
            Payload::Response(r) => {
                adapter::adapt_response(r, capture.provider.as_deref(), capture.tool.as_deref())
            }
            Payload::Output {
                output,
                status,
                status_detail,
            } => adapter::adapt_output(output, status.as_deref(), status_detail.as_deref()),
        };
        let info = Some(adapted.info);
        let proposal = match adapted.result {
            Ok(p) => p,
            Err(f) => return (name, vec![f], info),
        };
        // parse
        let value = match proposal {
            Proposal::Structured(v) => v,
            Proposal::Text(text) => {
                if text.trim().is_empty() {
                    let f = Finding::new(
                        Stage::Response,
                        Reason::NO_OUTPUT,
                        "the response completed but its output is empty",
                    );
                    return (name, vec![f], info);
                }
                let parsed = parse::parse_strict(&text);
                ev.raw_output = Some(text);
                match parsed {
                    Ok(v) => v,
                    Err(f) => return (name, vec![f], info),
                }
            }
        };
        // schema
        let errors = schema::validate(validator, &value, ev.raw_output.as_deref());
        ev.proposal = Some(value);
        if !errors.is_empty() {
            return (name, errors, info);
        }
        // business: the rules in order, then the confirmed intent
        let value = ev.proposal.as_ref().expect("set above");
        if let Some(rules) = &contract.rules
            && let Some(mut f) =
                rules.evaluate(value, capture.context.as_ref(), capture.intent.as_ref())
        {
            if let Some(text) = ev.raw_output.as_deref() {
                locate(&mut f, text, &mut { parse::LOCATE_BUDGET });
            }
            return (name, vec![f], info);
        }
        if let Some(i) = &capture.intent {
            let fields = contract
                .rules
                .as_ref()
                .and_then(|r| r.intent_fields.as_deref());
            let mut errors = intent::compare(value, i, fields);
            if let Some(text) = ev.raw_output.as_deref() {
                let mut budget = parse::LOCATE_BUDGET;
                for f in &mut errors {
                    locate(f, text, &mut budget);
                }
            }
            if !errors.is_empty() {
                return (name, errors, info);
            }
        }
        (name, Vec::new(), info)
    }
}

/// Sets a finding's span and line:column from its pointer in the raw text, within `budget`
/// (see [`parse::locate_within`]).
fn locate(f: &mut Finding, text: &str, budget: &mut usize) {
    if let Some(p) = &f.pointer
        && let Some(span) = parse::locate_within(text, p, budget)
    {
        f.span = Some(span);
        f.at = Some(crate::core::text::line_col(text, span.start));
    }
}
