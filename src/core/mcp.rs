//! MCP session logs across records (`docs/record-shapes.md#mcp`). What one JSON-RPC message
//! means depends on others: a `tools/call` result needs its request (the same JSON-RPC id in
//! the same file) to know which tool answered, and a tool's contracts (`mcp/TOOL.input`,
//! `mcp/TOOL.output`) come from a `tools/list` result in any capture file.
//!
//! [`McpSessions`] holds those facts for a workspace: per capture file, the tool each
//! request id called and the tools its `tools/list` results declare. They are read once,
//! before any record is validated (by the shared pre-pass, `crate::core::prescan`, which
//! parses only the records that may be JSON-RPC messages: [`fact_of`]), and kept in the
//! [`crate::core::workspace::Workspace`]; the live session replaces one file's facts when
//! that file changes ([`crate::engine::session`]). Every record is evaluated against the
//! same facts whichever front end reads it, in whatever order or block: `check` (records in
//! parallel), `watch --json`, the TUI and its lazy re-read of one record all agree.
//!
//! The record shape itself (one message alone) is `core::shape::mcp`.

use crate::core::adapter::{Adapted, Proposal, request_error_as, response_finding};
use crate::core::capture::Payload;
use crate::core::contract::InlineSchema;
use crate::core::escape::quote;
use crate::core::prescan::Sniff;
use crate::core::record_ref::RecordRef;
use crate::core::stage::parse;
use crate::core::verdict::{Finding, Reason, ResponseInfo, Stage, Warning};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// The `provider` of an MCP verdict's response info.
pub const PROVIDER: &str = "mcp";

/// A JSON-RPC id (a string or a number), as it pairs a response with its request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RpcId {
    /// The id as JSON text (`5`, `"a"`): what pairs (the number 5 and the string "5" differ).
    key: String,
    /// The id as a capture id shows it: a number as JSON text, a string as it is.
    shown: String,
}

impl RpcId {
    /// The id of a JSON string or number.
    pub fn of(v: &Value) -> RpcId {
        let key = v.to_string();
        let shown = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        RpcId { key, shown }
    }

    /// The id as a capture id shows it (`5`, `abc`).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The id as a JSON value.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.key).unwrap_or(Value::Null)
    }
}

/// One JSON-RPC message of an MCP session log, read alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The capture file it is in (workspace-relative): its session.
    pub file: Arc<str>,
    /// Its JSON-RPC id (`None`: a notification, or an error that answers no request).
    pub id: Option<RpcId>,
    /// What it is.
    pub body: Body,
}

/// What a JSON-RPC message is.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A `tools/call` request: the model's `params.arguments` for `params.name` (a capture).
    Call {
        /// The called tool.
        tool: String,
        /// The arguments (`{}` when the call sends none).
        arguments: Value,
    },
    /// Any other request (`initialize`, `tools/list`, ...): not a capture.
    Request {
        /// Its method.
        method: String,
    },
    /// A notification (no id): not a capture.
    Notification {
        /// Its method.
        method: String,
    },
    /// A response's `result`: a capture when its request is a `tools/call`.
    Result(Map<String, Value>),
    /// A response's `error` (with an integer `code`): a capture when its request is a
    /// `tools/call`.
    Error(Map<String, Value>),
    /// An error whose id is null (it answers no request, e.g. a parse error): not a capture.
    Unanswerable,
}

/// Whether a record's bytes may hold a `jsonrpc` key (the key itself, or a `\u` escape that
/// might spell it): the records [`fact_of`] parses.
pub fn may_be_jsonrpc(bytes: &[u8]) -> bool {
    let sniff = Sniff::of(bytes);
    sniff.jsonrpc || sniff.escape
}

/// What a request id of a file asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// `tools/call` of this tool.
    Call(String),
    /// Another method.
    Other(String),
}

/// One tool of a `tools/list` result.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    /// The tool's `name`.
    pub tool: String,
    /// The `tools/list` result that declares it.
    pub at: RecordRef,
    /// Its `inputSchema` (`None`: missing, a `CONTRACT_ERROR`).
    pub input: Option<Value>,
    /// Its `outputSchema` (optional).
    pub output: Option<Value>,
}

/// The MCP facts of one capture file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFacts {
    /// What each request id asked for (the first request of an id, when ids repeat).
    pub requests: HashMap<String, Requested>,
    /// The tools its `tools/list` results declare, in line order.
    pub tools: Vec<Declared>,
}

/// What the pipeline makes of a message ([`McpSessions::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Not a capture: no verdict, not counted.
    NotACapture,
    /// A capture of a call to this tool (a request, or a response paired with its request).
    Tool(String),
    /// A response whose request is not in its file: a capture whose tool is unknown.
    Unpaired,
}

/// The MCP facts of a workspace's capture files (module docs).
#[derive(Debug, Clone, Default)]
pub struct McpSessions {
    /// Per capture file read (workspace-relative), its facts (empty for most files).
    files: BTreeMap<String, Arc<FileFacts>>,
}

impl McpSessions {
    /// The facts of the capture files read (workspace-relative name, facts), as the
    /// shared pre-pass gives them (`crate::core::prescan`).
    pub fn of_files(files: impl IntoIterator<Item = (String, FileFacts)>) -> McpSessions {
        McpSessions {
            files: files.into_iter().map(|(n, f)| (n, Arc::new(f))).collect(),
        }
    }

    /// Whether the facts of the file `rel` were read.
    pub fn covers(&self, rel: &str) -> bool {
        self.files.contains_key(rel)
    }

    /// The facts of the file `rel`, if read.
    pub fn facts(&self, rel: &str) -> Option<&FileFacts> {
        self.files.get(rel).map(|f| &**f)
    }

    /// The same facts with the file `rel`'s replaced (`None`: the file is gone).
    pub fn with_file(&self, rel: &str, facts: Option<FileFacts>) -> McpSessions {
        let mut files = self.files.clone();
        match facts {
            Some(f) => {
                files.insert(rel.to_owned(), Arc::new(f));
            }
            None => {
                files.remove(rel);
            }
        }
        McpSessions { files }
    }

    /// Every tool's first declaration: files by name, then lines (a later declaration of a
    /// tool already declared is ignored).
    pub fn declarations(&self) -> Vec<&Declared> {
        let mut seen = HashSet::new();
        self.files
            .values()
            .flat_map(|f| f.tools.iter())
            .filter(|d| seen.insert(d.tool.as_str()))
            .collect()
    }

    /// The first declaration of `tool`.
    pub fn tool(&self, tool: &str) -> Option<&Declared> {
        self.files
            .values()
            .flat_map(|f| f.tools.iter())
            .find(|d| d.tool == tool)
    }

    /// Whether both declare the same tools, with the same schemas, in the same places.
    pub fn same_declarations(&self, other: &McpSessions) -> bool {
        self.declarations() == other.declarations()
    }

    /// The contracts the declarations make: `mcp/TOOL.input` for every tool, and
    /// `mcp/TOOL.output` for a tool with an `outputSchema`.
    pub fn inline_schemas(&self) -> Vec<InlineSchema> {
        let mut out = Vec::new();
        for d in self.declarations() {
            let rules = safe_name(&d.tool);
            let label = |side: &str| format!("{} tools/list {} {side}", d.at, quote(&d.tool, 60));
            out.push(InlineSchema {
                name: contract_name(&d.tool, Side::Input),
                label: label("inputSchema"),
                file: PathBuf::from(&**d.at.file()),
                schema: d.input.clone(),
                rules,
            });
            if let Some(o) = &d.output {
                out.push(InlineSchema {
                    name: contract_name(&d.tool, Side::Output),
                    label: label("outputSchema"),
                    file: PathBuf::from(&**d.at.file()),
                    schema: Some(o.clone()),
                    rules,
                });
            }
        }
        out
    }

    /// Whether a message is a capture, and of which tool.
    pub fn resolve(&self, m: &Message) -> Resolved {
        let (id, result) = match &m.body {
            Body::Call { tool, .. } => return Resolved::Tool(tool.clone()),
            Body::Request { .. } | Body::Notification { .. } | Body::Unanswerable => {
                return Resolved::NotACapture;
            }
            Body::Result(r) => (&m.id, Some(r)),
            Body::Error(_) => (&m.id, None),
        };
        let requested = id
            .as_ref()
            .and_then(|id| self.facts(&m.file)?.requests.get(&id.key));
        match requested {
            Some(Requested::Call(tool)) => Resolved::Tool(tool.clone()),
            Some(Requested::Other(_)) => Resolved::NotACapture,
            // no request in the file: a result that is a tool result by its shape (not a
            // `tools/list` or `initialize` result) is a capture, as is an error
            None => match result {
                Some(r)
                    if !r.contains_key("tools")
                        && ["content", "structuredContent", "isError"]
                            .iter()
                            .any(|k| r.contains_key(*k)) =>
                {
                    Resolved::Unpaired
                }
                Some(_) => Resolved::NotACapture,
                None => Resolved::Unpaired,
            },
        }
    }
}

/// Which of a tool's two contracts a capture uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `mcp/TOOL.input`: a `tools/call` request's arguments.
    Input,
    /// `mcp/TOOL.output`: a result's structured content or text.
    Output,
}

impl Side {
    /// `input` or `output` (a `[[route]]`'s `side`).
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Input => "input",
            Side::Output => "output",
        }
    }

    /// The side of a message: a request's arguments are input, a response is output.
    pub fn of(m: &Message) -> Side {
        match m.body {
            Body::Call { .. } => Side::Input,
            _ => Side::Output,
        }
    }
}

/// The contract name of a tool's side: `mcp/get_weather.input`.
pub fn contract_name(tool: &str, side: Side) -> String {
    format!("mcp/{tool}.{}", side.as_str())
}

/// Whether a tool name can name a rules file (`schemas/mcp/TOOL.input.rules.toml`): the MCP
/// spec's tool name characters (2025-11-25: `A-Z a-z 0-9 _ - .`), not starting with a dot,
/// so no name reaches outside the schemas folder.
fn safe_name(tool: &str) -> bool {
    !tool.is_empty()
        && !tool.starts_with('.')
        && tool
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// The `UNKNOWN_CONTRACT` of an MCP capture with no contract: what was tried and why it
/// failed. `tool` is the called tool (`None`: a response whose request is not in its file).
pub fn unknown_contract(
    sessions: &McpSessions,
    m: &Message,
    tool: Option<&str>,
    known: &[&str],
) -> Finding {
    let side = Side::of(m);
    let unknown = |message: String| Finding::new(Stage::Input, Reason::UNKNOWN_CONTRACT, message);
    let Some(tool) = tool else {
        let id = m.id.as_ref().map_or("null".to_owned(), |i| i.key.clone());
        return unknown(format!(
            "the request of this response (JSON-RPC id {}) is not in {}, so its tool and contract are unknown",
            quote(&id, 60),
            quote(&m.file, 200)
        ))
        .with_hint("keep the whole session in one file: the tools/call request and its response");
    };
    let name = contract_name(tool, side);
    let file = format!("schemas/{name}.schema.json");
    let message = match (sessions.tool(tool), side) {
        (Some(d), Side::Output) => format!(
            "tool {} declares no outputSchema (tools/list at {}); tried contract {} ({} and the tools/list results)",
            quote(tool, 60),
            d.at,
            quote(&name, 80),
            quote(&file, 120)
        ),
        _ => format!(
            "no tools/list result in the workspace's captures declares tool {}; tried contract {} ({} and the tools/list results)",
            quote(tool, 60),
            quote(&name, 80),
            quote(&file, 120)
        ),
    };
    let mut f = unknown(message);
    if let Some(h) = crate::core::hint::hint_for(tool, known.iter().copied()) {
        f = f.with_hint(h);
    }
    f
}

/// The response stage of an MCP capture (`docs/record-shapes.md#mcp`): a call's arguments
/// are the (structured) proposal; a result with `isError: true` is `TOOL_ERROR` (whatever
/// else it holds); else its `structuredContent`, else its one text content block (parsed
/// strictly); a JSON-RPC `error` is `REQUEST_ERROR`, transient (retry) for -32603 (internal
/// error) and -32000 to -32099 (server errors), else reject.
pub fn adapt(m: &Message, tool: Option<&str>) -> Adapted {
    let mut info = ResponseInfo {
        provider: PROVIDER.to_owned(),
        tool: tool.map(str::to_owned),
        ..ResponseInfo::default()
    };
    let result = match &m.body {
        Body::Call { arguments, .. } => Ok(Proposal::Structured(arguments.clone())),
        Body::Result(r) => tool_result(r, &mut info),
        Body::Error(e) => {
            let code = e.get("code").and_then(Value::as_i64).unwrap_or_default();
            info.stop_reason = Some(code.to_string());
            let transient = code == -32603 || (-32099..=-32000).contains(&code);
            Err(request_error_as(
                &Value::Object(e.clone()),
                "error",
                transient,
            ))
        }
        Body::Request { .. } | Body::Notification { .. } | Body::Unanswerable => Err(
            crate::core::shape::invalid("mcp record: not a tools/call request or response"),
        ),
    };
    Adapted { info, result }
}

/// A `CallToolResult`'s proposal, or the finding that stops it.
fn tool_result(r: &Map<String, Value>, info: &mut ResponseInfo) -> Result<Proposal, Finding> {
    let texts: Vec<&str> = match r.get("content") {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    };
    match r.get("isError") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            info.stop_reason = Some("isError".to_owned());
            let said = if texts.is_empty() {
                " with no text content".to_owned()
            } else {
                format!(": {}", quote(&texts.join("\n"), 300))
            };
            let unchecked = if r.contains_key("structuredContent") {
                " (its structuredContent is not checked: isError wins)"
            } else {
                ""
            };
            return Err(response_finding(
                Reason::TOOL_ERROR,
                format!("the tool reported an error (result.isError is true){said}{unchecked}"),
            ));
        }
        Some(v) => {
            return Err(crate::core::shape::invalid(format!(
                "mcp record: `result.isError` {}",
                crate::core::shape::must_be("a boolean", v)
            )));
        }
    }
    if let Some(sc) = r.get("structuredContent").filter(|v| !v.is_null()) {
        return Ok(Proposal::Structured(sc.clone()));
    }
    match texts.as_slice() {
        [] => Err(response_finding(
            Reason::NO_OUTPUT,
            "the tool result has no structuredContent and no text content block",
        )),
        [one] => Ok(Proposal::Text((*one).to_owned())),
        [first, rest @ ..] => {
            info.warnings.push(Warning::capture(
                "TEXT_BLOCKS_IGNORED",
                None,
                format!(
                    "the tool result has no structuredContent and {} text content blocks: the first is validated, the other {} ignored (return structuredContent)",
                    rest.len() + 1,
                    if rest.len() == 1 { "is" } else { "are" }
                ),
            ));
            Ok(Proposal::Text((*first).to_owned()))
        }
    }
}

/// What one record tells of its file's MCP session (read alone, in parallel with the others
/// of its file: [`fact_of`]); a [`FactsBuilder`] makes the file's [`FileFacts`] of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    /// A request of this id (JSON text) asked for this.
    Requested(String, Requested),
    /// A result with a `tools` array for this id: a `tools/list` result if its request is
    /// one (or is not in the file).
    List(String, RecordRef, Map<String, Value>),
}

/// The MCP fact of one record's bytes (`source` names it), if it is a JSON-RPC message that
/// tells one: a request, or a result with a `tools` array. Only a record that may be a
/// JSON-RPC message ([`may_be_jsonrpc`]) is parsed, strictly, as the pipeline reads it.
pub fn fact_of(bytes: &[u8], source: &dyn Fn() -> RecordRef) -> Option<Fact> {
    fact_of_with(bytes, Sniff::of(bytes), source)
}

/// [`fact_of`] given the pre-pass's searches of the bytes (`sniff`, [`may_be_jsonrpc`] from
/// them).
pub(crate) fn fact_of_with(
    bytes: &[u8],
    sniff: Sniff,
    source: &dyn Fn() -> RecordRef,
) -> Option<Fact> {
    if !(sniff.jsonrpc || sniff.escape) {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let value @ Value::Object(_) = parse::parse_strict(text).ok()? else {
        return None;
    };
    value.get("jsonrpc")?;
    let source = source();
    let c = crate::core::shape::read(value, &source, None).ok()?;
    let Payload::Mcp(m) = c.payload else {
        return None;
    };
    let Message { id, body, .. } = *m;
    let id = id?;
    match body {
        Body::Call { tool, .. } => Some(Fact::Requested(id.key, Requested::Call(tool))),
        Body::Request { method } => Some(Fact::Requested(id.key, Requested::Other(method))),
        Body::Result(r) if r.get("tools").is_some_and(Value::is_array) => {
            Some(Fact::List(id.key, source, r))
        }
        _ => None,
    }
}

/// The [`FileFacts`] of one capture file, from the [`Fact`]s of its records in file order
/// (the shared pre-pass, `crate::core::prescan`, feeds it).
#[derive(Debug, Default)]
pub struct FactsBuilder {
    facts: FileFacts,
    /// tools/list candidates: (request key, where, result)
    lists: Vec<(String, RecordRef, Map<String, Value>)>,
}

impl FactsBuilder {
    /// Adds the fact of the next record that has one.
    pub fn push(&mut self, fact: Fact) {
        match fact {
            Fact::Requested(key, r) => {
                // the first request of an id, when ids repeat
                self.facts.requests.entry(key).or_insert(r);
            }
            Fact::List(key, at, r) => self.lists.push((key, at, r)),
        }
    }

    /// The file's facts: each `tools/list` result (one whose request is a `tools/list`, or
    /// is not in the file) declares its tools, in line order.
    pub fn finish(self) -> FileFacts {
        let FactsBuilder { mut facts, lists } = self;
        for (key, at, r) in lists {
            let is_list = match facts.requests.get(&key) {
                None => true,
                Some(Requested::Other(m)) => m == "tools/list",
                Some(Requested::Call(_)) => false,
            };
            if !is_list {
                continue;
            }
            let Some(Value::Array(tools)) = r.get("tools") else {
                continue;
            };
            for t in tools {
                let Some(tool) = t
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                else {
                    continue;
                };
                let schema = |key: &str| t.get(key).filter(|v| !v.is_null()).cloned();
                facts.tools.push(Declared {
                    tool: tool.to_owned(),
                    at: at.clone(),
                    input: schema("inputSchema"),
                    output: schema("outputSchema"),
                });
            }
        }
        facts
    }
}
