//! MCP session logs: JSON-RPC 2.0 messages, one a line (`docs/record-shapes.md#mcp`).
//!
//! Sources: the JSON-RPC 2.0 specification (jsonrpc.org/specification: a request has
//! `method` and `id`, a notification `method` and no `id`, a response `id` and exactly one of
//! `result` and `error{code, message, data?}`), and the MCP specification's "Base protocol"
//! and "Tools" pages, revisions 2025-06-18 and 2025-11-25
//! (modelcontextprotocol.io/specification/2025-11-25/server/tools): request ids are strings
//! or integers, never null; `tools/call` has `params.name` and optional `params.arguments`
//! (an object).
//!
//! This reads one message alone: a `tools/call` request with its tool and arguments, a
//! response with its `result` or `error`, or any other request or notification. Whether a
//! response is a capture, and for which tool, needs its request; the pipeline resolves
//! that against the workspace's MCP facts ([`crate::core::mcp`]).

use super::{Shape, broken, must_be, native};
use crate::core::capture::{Capture, Payload, RecordError};
use crate::core::mcp::{Body, Message, RpcId};
use crate::core::record_ref::RecordRef;
use serde_json::{Map, Value};

/// The `format` of an MCP message.
pub(crate) const FORMAT: &str = "mcp";

/// A JSON-RPC message: it has a `jsonrpc` key (its value is checked by the read).
pub(super) const SHAPE: Shape = Shape {
    format: FORMAT,
    describe: "a JSON-RPC 2.0 message of an MCP session log",
    keys: &["jsonrpc", "id", "method", "params", "result", "error"],
    detect: |v| v.get("jsonrpc").is_some(),
    read,
};

/// The id of the message's capture: `FILE#ID` for a request, `FILE#ID/result` for a
/// result, `FILE#ID/error` for an error (`docs/record-shapes.md#mcp`).
fn capture_id(file: &str, id: &RpcId, suffix: &str) -> String {
    format!("{file}#{}{suffix}", id.shown())
}

fn read(mut obj: Map<String, Value>, source: &RecordRef) -> Result<Capture, RecordError> {
    let file = source.file().clone();
    match obj.get("jsonrpc") {
        Some(Value::String(s)) if s == "2.0" => {}
        Some(Value::String(s)) => {
            return Err(broken(
                FORMAT,
                "jsonrpc",
                &format!("is {}: expected \"2.0\"", crate::core::escape::quote(s, 40)),
                None,
            ));
        }
        Some(v) => {
            return Err(broken(
                FORMAT,
                "jsonrpc",
                &must_be("the string \"2.0\"", v),
                None,
            ));
        }
        None => return Err(broken(FORMAT, "jsonrpc", "is missing", None)),
    }
    // `id`: a string or a number; null only on an error that answers no request
    let id = match obj.remove("id") {
        None | Some(Value::Null) => None,
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(RpcId::of(&v)),
        Some(v) => {
            return Err(broken(
                FORMAT,
                "id",
                &must_be("a string or a number", &v),
                None,
            ));
        }
    };
    let message = |id: Option<RpcId>, body: Body| Message {
        file: file.clone(),
        id,
        body,
    };
    let skipped = |m: Message| {
        // not a capture: its id is never shown
        Ok(native(
            FORMAT,
            source.as_str().to_owned(),
            Payload::Mcp(Box::new(m)),
            Map::new(),
        ))
    };
    if let Some(method) = obj.remove("method") {
        let Value::String(method) = method else {
            return Err(broken(
                FORMAT,
                "method",
                &must_be("a string", &method),
                None,
            ));
        };
        let Some(id) = id else {
            return skipped(message(None, Body::Notification { method }));
        };
        if method != "tools/call" {
            return skipped(message(Some(id), Body::Request { method }));
        }
        let cid = capture_id(&file, &id, "");
        let fail = |path: &str, problem: &str| broken(FORMAT, path, problem, Some(cid.clone()));
        let params = obj.remove("params").unwrap_or(Value::Null);
        let Value::Object(mut params) = params else {
            return Err(fail("params", &must_be("an object", &params)));
        };
        let tool = match params.remove("name") {
            Some(Value::String(s)) if !s.is_empty() => s,
            Some(Value::String(_)) => return Err(fail("params.name", "must not be empty")),
            Some(v) => return Err(fail("params.name", &must_be("a string", &v))),
            None => return Err(fail("params.name", "is missing")),
        };
        // `arguments` is optional: a call without it sends no arguments (`{}`)
        let arguments = match params.remove("arguments") {
            None => Value::Object(Map::new()),
            Some(v @ Value::Object(_)) => v,
            Some(v) => return Err(fail("params.arguments", &must_be("an object", &v))),
        };
        let mut meta = Map::new();
        meta.insert("jsonrpc_id".into(), id.value());
        meta.insert("method".into(), "tools/call".into());
        let mut c = native(
            FORMAT,
            cid,
            Payload::Mcp(Box::new(message(
                Some(id),
                Body::Call {
                    tool: tool.clone(),
                    arguments,
                },
            ))),
            meta,
        );
        c.tool = Some(tool);
        return Ok(c);
    }
    let (result, error) = (obj.remove("result"), obj.remove("error"));
    let (body, suffix) = match (result, error) {
        (Some(_), Some(_)) => {
            return Err(broken(
                FORMAT,
                "result",
                "and `error` are both present: a response has one of them",
                id.map(|i| capture_id(&file, &i, "")),
            ));
        }
        (None, None) => {
            return Err(broken(
                FORMAT,
                "method",
                "is missing, and so are `result` and `error`: a JSON-RPC message is a request, a notification or a response",
                None,
            ));
        }
        (Some(r), None) => {
            let Some(id) = &id else {
                return Err(broken(
                    FORMAT,
                    "id",
                    "is missing: a result carries the id of its request",
                    None,
                ));
            };
            let Value::Object(r) = r else {
                return Err(broken(
                    FORMAT,
                    "result",
                    &must_be("an object", &r),
                    Some(capture_id(&file, id, "/result")),
                ));
            };
            (Body::Result(r), "/result")
        }
        (None, Some(e)) => {
            let Some(id) = &id else {
                // a JSON-RPC error with a null id answers no request (a parse error)
                return skipped(message(None, Body::Unanswerable));
            };
            let cid = capture_id(&file, id, "/error");
            let Value::Object(e) = e else {
                return Err(broken(
                    FORMAT,
                    "error",
                    &must_be("an object", &e),
                    Some(cid),
                ));
            };
            if e.get("code").is_none_or(|c| c.as_i64().is_none()) {
                let problem = match e.get("code") {
                    None => "is missing".to_owned(),
                    Some(v) => must_be("an integer", v),
                };
                return Err(broken(FORMAT, "error.code", &problem, Some(cid)));
            }
            (Body::Error(e), "/error")
        }
    };
    let id = id.expect("a response here has an id");
    let mut meta = Map::new();
    meta.insert("jsonrpc_id".into(), id.value());
    Ok(native(
        FORMAT,
        capture_id(&file, &id, suffix),
        Payload::Mcp(Box::new(message(Some(id), body))),
        meta,
    ))
}
