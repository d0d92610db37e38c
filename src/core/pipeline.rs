//! The pipeline: one capture record in, one [`Verdict`] out. The stages run in a fixed
//! order (input, response, parse, schema, business) and the first one that fails decides.

use crate::core::adapter::{self, Proposal};
use crate::core::capture::{self, Capture, Payload, RawRecord, RecordKind};
use crate::core::capture_file;
use crate::core::contract::Contract;
use crate::core::mcp::{self, Resolved};
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
pub fn default_id(raw: &RawRecord) -> String {
    raw.source.to_string()
}

impl Workspace {
    /// Runs the whole pipeline on one record. `None` when the record is not a capture at
    /// all: an MCP message other than a `tools/call` request or its response
    /// (`docs/record-shapes.md#mcp`), which has no verdict and is not counted.
    pub fn evaluate(&self, raw: &RawRecord) -> Option<Evaluation> {
        let mut ev = Evaluation {
            // a placeholder: every way out below sets the verdict
            verdict: Verdict::from_errors(String::new(), raw.source.clone(), None, Vec::new()),
            capture: None,
            raw_output: None,
            proposal: None,
        };
        let text = match &raw.text {
            Ok(t) => t,
            Err(f) => {
                ev.verdict = Verdict::from_errors(
                    default_id(raw),
                    raw.source.clone(),
                    None,
                    vec![f.clone()],
                );
                return Some(ev);
            }
        };
        // a `.sse` file is its stream as the `response`, no record to parse
        let parsed = match raw.kind {
            RecordKind::Sse => Ok(capture_file::sse_capture(text, &default_id(raw))),
            RecordKind::Json => capture::parse_record(text, &raw.source),
        };
        let mut capture = match parsed {
            Ok(c) => c,
            Err(e) => {
                let id = e.id.unwrap_or_else(|| default_id(raw));
                ev.verdict = Verdict::from_errors(id, raw.source.clone(), None, vec![e.finding]);
                ev.verdict.format = e.format.map(str::to_owned);
                ev.raw_output = Some(text.clone());
                if let Some(x) = e.expect {
                    ev.verdict.apply_expect(x);
                }
                return Some(ev);
            }
        };
        // an MCP message is a capture only as part of its session: its request, if it is a
        // response; skipped when it is not a tools/call request or response
        if let Payload::Mcp(m) = &capture.payload {
            match self.mcp.resolve(m) {
                Resolved::NotACapture => return None,
                Resolved::Tool(tool) => capture.tool = Some(tool),
                Resolved::Unpaired => capture.tool = None,
            }
        }
        let (contract, errors, info) = self.run_stages(&capture, &mut ev);
        let mut verdict =
            Verdict::from_errors(capture.id.clone(), raw.source.clone(), contract, errors);
        verdict.format = Some(capture.format.to_owned());
        verdict.provider = info.as_ref().map(|i| i.provider.clone());
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
        Some(ev)
    }

    /// Runs the pipeline and keeps only the verdict (`None`: not a capture, as
    /// [`Workspace::evaluate`]).
    pub fn check(&self, raw: &RawRecord) -> Option<Verdict> {
        self.evaluate(raw).map(|ev| ev.verdict)
    }

    /// The contract a capture uses: its `contract`, else `default_contract`, else the only
    /// one. An MCP capture uses its tool's contract ([`Workspace::mcp_contract`]).
    pub fn contract_for(&self, capture: &Capture) -> Result<&Arc<Contract>, Finding> {
        if let Payload::Mcp(m) = &capture.payload {
            return self.mcp_contract(m, capture.tool.as_deref());
        }
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
                // the only schema file: the tool schemas of MCP `tools/list` results are
                // not candidates (they serve MCP captures)
                let mut it = self
                    .contracts
                    .by_name
                    .values()
                    .filter(|c| c.label.is_none());
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

    /// The contract of an MCP capture (`docs/record-shapes.md#mcp`): `mcp/TOOL.input` for a
    /// `tools/call` request, `mcp/TOOL.output` for its response, from the schemas folder
    /// (`schemas/mcp/TOOL.input.schema.json`, which wins) or the `tools/list` results of the
    /// capture files; else `UNKNOWN_CONTRACT` saying what was tried. `tool` is the called
    /// tool (`None`: a response whose request is not in its file).
    pub fn mcp_contract(
        &self,
        m: &mcp::Message,
        tool: Option<&str>,
    ) -> Result<&Arc<Contract>, Finding> {
        if let Some(tool) = tool
            && let Some(c) = self
                .contracts
                .by_name
                .get(&mcp::contract_name(tool, mcp::Side::of(m)))
        {
            return Ok(c);
        }
        let known: Vec<&str> = self
            .mcp
            .declarations()
            .into_iter()
            .map(|d| d.tool.as_str())
            .collect();
        Err(mcp::unknown_contract(&self.mcp, m, tool, &known))
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
            Payload::Settled(adapted) => (**adapted).clone(),
            Payload::Mcp(m) => mcp::adapt(m, capture.tool.as_deref()),
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
                if let Some(f) = no_output(&text, "the response completed but its output is empty")
                {
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
                parse::locate_findings(text, std::slice::from_mut(&mut f));
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
                parse::locate_findings(text, &mut errors);
            }
            if !errors.is_empty() {
                return (name, errors, info);
            }
        }
        (name, Vec::new(), info)
    }
}

/// The pipeline of one plain JSON instance, with no capture record and no workspace (what
/// `check --schema` runs on each `.json` file or JSONL line): the parse stage (an empty or
/// blank text is the response stage's `NO_OUTPUT`), then the schema stage against
/// `validator`, its findings located in `text` (line:column and byte spans). Returns the
/// findings of the first failing stage, in order; empty when the instance passes.
pub fn validate_instance(text: &str, validator: &jsonschema::Validator) -> Vec<Finding> {
    if let Some(f) = no_output(text, "the instance is empty") {
        return vec![f];
    }
    match parse::parse_strict(text) {
        Ok(v) => schema::validate(validator, &v, Some(text)),
        Err(f) => vec![f],
    }
}

/// `NO_OUTPUT` when a text to parse is empty or blank (`message` says what is empty).
fn no_output(text: &str, message: &str) -> Option<Finding> {
    text.trim()
        .is_empty()
        .then(|| Finding::new(Stage::Response, Reason::NO_OUTPUT, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_instances_run_the_parse_then_the_schema_stage() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "required": ["a"]
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        let findings = |text: &str| {
            validate_instance(text, &validator)
                .into_iter()
                .map(|f| {
                    let at = f.at.map(|a| a.to_string());
                    (f.stage, f.reason.to_string(), f.pointer, at)
                })
                .collect::<Vec<_>>()
        };
        assert!(findings("{\"a\": 1}").is_empty());
        for blank in ["", " \r\n\t"] {
            let f = validate_instance(blank, &validator);
            assert_eq!(f.len(), 1);
            assert_eq!(
                (f[0].stage, f[0].reason.as_str(), f[0].message.as_str()),
                (Stage::Response, "NO_OUTPUT", "the instance is empty")
            );
        }
        let parse = findings("{\"a\": 1} x");
        assert_eq!(parse.len(), 1);
        assert_eq!(
            (parse[0].0, parse[0].1.as_str()),
            (Stage::Parse, "TRAILING_CONTENT")
        );
        assert_eq!(
            findings("{\n  \"a\": \"x\"\n}"),
            [(
                Stage::Schema,
                "SCHEMA_MISMATCH".to_string(),
                Some("/a".to_string()),
                Some("2:8".to_string())
            )]
        );
    }
}
