//! Requests (`docs/requests.md`): batch input files (not captures, joined to their results
//! by id), the generation schema per provider and source, the Gemini `responseSchema`
//! mapping, and zero-config checking against the schema the request sent.

use crate::common::{jsonl_verdicts, verdict_in, verdicts};
use serde_json::{Value, json};
use std::path::Path;
use verdict::core::generation::{RequestSchemas, SchemaSource, openapi_to_json_schema};
use verdict::core::workspace::Workspace;

pub(crate) const TICKET: &str = r#"{"type": "object", "properties": {"title": {"type": "string"}, "priority": {"enum": ["low", "high"]}}, "required": ["title", "priority"], "additionalProperties": false}"#;

/// An OpenAI batch input line for `/v1/chat/completions` sending `schema` as the
/// `ticket` text format.
pub(crate) fn chat_input(id: &str, schema: &str) -> String {
    format!(
        r#"{{"custom_id": "{id}", "method": "POST", "url": "/v1/chat/completions", "body": {{"model": "gpt-4.1-mini", "messages": [{{"role": "user", "content": "x"}}], "response_format": {{"type": "json_schema", "json_schema": {{"name": "ticket", "strict": true, "schema": {schema}}}}}}}}}"#
    )
}

/// An OpenAI batch output line whose Chat completion says `content` (JSON text).
pub(crate) fn chat_output(id: &str, content: &str) -> String {
    let body = json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion", "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]});
    json!({"id": format!("batch_req_{id}"), "custom_id": id, "response": {"status_code": 200, "request_id": "r", "body": body}, "error": null}).to_string()
}

pub(crate) fn write(root: &Path, files: &[(&str, String)]) {
    for (name, text) in files {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// `check --format jsonl` in `root`: the verdicts and the summary.
pub(crate) fn check(root: &Path) -> (Vec<Value>, Value, Option<i32>) {
    let out = verdict_in(root, &["check", ".", "--format", "jsonl"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let summary: Value = stdout
        .lines()
        .last()
        .map(|l| serde_json::from_str(l).unwrap())
        .unwrap_or(Value::Null);
    (
        jsonl_verdicts(&stdout),
        summary["data"].clone(),
        out.status.code(),
    )
}

/// `id contract contract_from stage reason pointer` of a verdict.
pub(crate) fn row(v: &Value) -> String {
    format!(
        "{} {} {} {} {} {}",
        v["id"].as_str().unwrap(),
        v["contract"].as_str().unwrap_or("-"),
        v["contract_from"].as_str().unwrap_or("-"),
        v["stage"].as_str().unwrap(),
        v["reason"].as_str().unwrap_or("-"),
        v["errors"][0]["pointer"].as_str().unwrap_or("-"),
    )
}

#[test]
fn a_folder_of_batch_input_and_output_files_is_checked_against_the_requests_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    // the input in the folder, the results in another file below it: joined by custom_id
    write(
        tmp.path(),
        &[
            (
                "input.jsonl",
                [
                    chat_input("t1", TICKET),
                    chat_input("t2", TICKET),
                    chat_input("t3", TICKET),
                ]
                .join("\n"),
            ),
            (
                "out/output.jsonl",
                [
                    chat_output("t2", r#"{"title": "a", "priority": "urgent"}"#),
                    chat_output("t1", r#"{"title": "a", "priority": "high"}"#),
                ]
                .join("\n"),
            ),
        ],
    );
    assert!(!tmp.path().join("schemas").exists());
    let (vs, summary, code) = check(tmp.path());
    let rows: Vec<String> = vs.iter().map(row).collect();
    assert_eq!(
        rows,
        [
            "t2 request:ticket request schema SCHEMA_MISMATCH /priority",
            "t1 request:ticket request ready - -",
        ]
    );
    assert_eq!(
        vs[0]["errors"][0]["message"],
        "\"urgent\" is not one of \"low\" or \"high\""
    );
    assert_eq!(
        vs[1]["generation"],
        json!({"schema": "ticket", "source": "text", "strict": true,
               "request": "input.jsonl:1", "pointer": "/body/response_format/json_schema/schema"})
    );
    assert_eq!(vs[0]["generation"]["request"], "input.jsonl:2");
    assert_eq!(code, Some(1));
    // the input lines are not captures; the one with no result is warned about once
    assert_eq!(summary["captures"], 2);
    assert_eq!(summary["funnel"]["completed"], 2);
    assert_eq!(
        summary["warnings"],
        json!([{"code": "UNMATCHED_REQUEST", "severity": "warning", "file": "input.jsonl:3",
                "pointer": "/custom_id",
                "message": "request for id \"t3\" has no result (no capture that may join it, of its own batch, has its id)"}])
    );
    // the library says the same, and the pre-pass id of an input line is its source
    let ws = Workspace::open(tmp.path()).unwrap();
    let input = ws.read_file(&tmp.path().join("input.jsonl"));
    assert_eq!(input.len(), 3);
    assert!(input.iter().all(|r| ws.check(r).is_none()));
    assert_eq!(ws.record_id(&input[0]), "input.jsonl:1");
    assert_eq!(verdicts(tmp.path()).len(), 2);
}

#[test]
fn a_repeated_request_id_is_warned_about_and_gives_no_request() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[
            (
                "input.jsonl",
                [chat_input("t1", TICKET), chat_input("t1", TICKET)].join("\n"),
            ),
            (
                "output.jsonl",
                chat_output("t1", r#"{"title": "a", "priority": "high"}"#),
            ),
        ],
    );
    let (vs, summary, _) = check(tmp.path());
    assert_eq!(rows_of(&vs), ["t1 - - input UNKNOWN_CONTRACT -"]);
    assert_eq!(
        vs[0]["errors"][0]["message"],
        "no contract: the workspace has no schemas in schemas/; its id \"t1\" is the id of several batch input requests (input.jsonl:1, input.jsonl:2), so no request schema is used"
    );
    assert_eq!(
        summary["warnings"],
        json!([{"code": "DUPLICATE_REQUEST", "severity": "warning", "file": "input.jsonl:2",
                "pointer": "/custom_id",
                "message": "request id \"t1\" repeats (first at input.jsonl:1): `custom_id` must be unique, so its results get no request"}])
    );
}

pub(crate) fn rows_of(vs: &[Value]) -> Vec<String> {
    vs.iter().map(row).collect()
}

#[test]
fn a_request_schema_that_is_no_json_schema_fails_only_its_captures() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[
            (
                "input.jsonl",
                [chat_input("t1", TICKET), chat_input("t2", r#"{"type": 5}"#)].join("\n"),
            ),
            (
                "output.jsonl",
                [
                    chat_output("t1", r#"{"title": "a", "priority": "low"}"#),
                    chat_output("t2", r#"{"title": "a", "priority": "low"}"#),
                ]
                .join("\n"),
            ),
        ],
    );
    let (vs, _, _) = check(tmp.path());
    assert_eq!(
        rows_of(&vs),
        [
            "t1 request:ticket request ready - -",
            "t2 request:ticket request input CONTRACT_ERROR -",
        ]
    );
    let m = vs[1]["errors"][0]["message"].as_str().unwrap();
    assert!(
        m.starts_with(
            "input.jsonl:2 /body/response_format/json_schema/schema: request schema \"ticket\" at /type does not meet its meta-schema: "
        ),
        "{m}"
    );
}

#[test]
fn an_input_file_with_no_outputs_has_no_captures_and_warns_per_request() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[(
            "input.jsonl",
            [chat_input("t1", TICKET), chat_input("t2", TICKET)].join("\n"),
        )],
    );
    assert!(verdicts(tmp.path()).is_empty());
    let ws = Workspace::open(tmp.path()).unwrap();
    let w: Vec<(String, Option<String>)> = ws
        .request_warnings(None)
        .into_iter()
        .map(|w| (w.code, w.file))
        .collect();
    assert_eq!(
        w,
        [
            (
                "UNMATCHED_REQUEST".to_owned(),
                Some("input.jsonl:1".to_owned())
            ),
            (
                "UNMATCHED_REQUEST".to_owned(),
                Some("input.jsonl:2".to_owned())
            ),
        ]
    );
    // nothing to check: `check` says so (exit 2), as for a folder of no captures
    let out = verdict_in(tmp.path(), &["check", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("verdict: no captures found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (name, source, strict, pointer) of the generation schema a proposal gets.
fn chosen(body: Value, tool: Option<&str>) -> (String, SchemaSource, bool, String) {
    let s = RequestSchemas::read(&body);
    let g = s
        .for_proposal(tool)
        .unwrap_or_else(|| panic!("no schema for {tool:?} in {body}"))
        .as_ref()
        .unwrap();
    (g.name.clone(), g.source, g.strict, g.pointer.clone())
}

fn t(
    name: &str,
    source: SchemaSource,
    strict: bool,
    ptr: &str,
) -> (String, SchemaSource, bool, String) {
    (name.to_owned(), source, strict, ptr.to_owned())
}

#[test]
fn the_generation_schema_is_picked_per_provider_and_per_source() {
    use SchemaSource::{Text, Tool};
    let s = json!({"type": "object"});
    // OpenAI Chat: a tool's function.parameters, or response_format.json_schema.schema
    let chat = json!({"tools": [{"type": "function", "function": {"name": "a", "parameters": s}},
                                {"type": "function", "function": {"name": "b", "parameters": s, "strict": true}}],
                      "response_format": {"type": "json_schema", "json_schema": {"name": "fmt", "schema": s}}});
    assert_eq!(
        chosen(chat.clone(), Some("b")),
        t("b", Tool, true, "/tools/1/function/parameters")
    );
    assert_eq!(
        chosen(chat.clone(), Some("a")),
        t("a", Tool, false, "/tools/0/function/parameters")
    );
    assert_eq!(
        chosen(chat.clone(), None),
        t("fmt", Text, false, "/response_format/json_schema/schema")
    );
    assert!(
        RequestSchemas::read(&chat)
            .for_proposal(Some("c"))
            .is_none()
    );
    // OpenAI Responses: tools[].parameters, text.format.schema
    let responses = json!({"tools": [{"type": "function", "name": "a", "parameters": s, "strict": true}],
                           "text": {"format": {"type": "json_schema", "name": "fmt", "schema": s, "strict": true}}});
    assert_eq!(
        chosen(responses.clone(), Some("a")),
        t("a", Tool, true, "/tools/0/parameters")
    );
    assert_eq!(
        chosen(responses, None),
        t("fmt", Text, true, "/text/format/schema")
    );
    // Anthropic: tools[].input_schema, output_config.format.schema, beta output_format.schema
    let anthropic = json!({"tools": [{"name": "a", "input_schema": s, "strict": true}],
                           "output_config": {"format": {"type": "json_schema", "schema": s}}});
    assert_eq!(
        chosen(anthropic.clone(), Some("a")),
        t("a", Tool, true, "/tools/0/input_schema")
    );
    assert_eq!(
        chosen(anthropic, None),
        t("response", Text, false, "/output_config/format/schema")
    );
    let beta = json!({"output_format": {"type": "json_schema", "schema": s}});
    assert_eq!(
        chosen(beta, None),
        t("response", Text, false, "/output_format/schema")
    );
    // Gemini: functionDeclarations (camel and snake), responseJsonSchema, responseSchema
    let gemini = json!({"tools": [{"functionDeclarations": [{"name": "a", "parametersJsonSchema": s},
                                                             {"name": "b", "parameters": {"type": "OBJECT"}}]}],
                        "generationConfig": {"responseJsonSchema": s}});
    assert_eq!(
        chosen(gemini.clone(), Some("a")),
        t(
            "a",
            Tool,
            false,
            "/tools/0/functionDeclarations/0/parametersJsonSchema"
        )
    );
    assert_eq!(
        chosen(gemini.clone(), Some("b")),
        t(
            "b",
            Tool,
            false,
            "/tools/0/functionDeclarations/1/parameters"
        )
    );
    assert_eq!(
        *RequestSchemas::read(&gemini)
            .for_proposal(Some("b"))
            .unwrap()
            .as_ref()
            .unwrap()
            .schema,
        json!({"type": "object"})
    );
    assert_eq!(
        chosen(gemini, None),
        t(
            "response",
            Text,
            false,
            "/generationConfig/responseJsonSchema"
        )
    );
    let snake = json!({"generation_config": {"response_schema": {"type": "STRING"}}});
    assert_eq!(
        chosen(snake.clone(), None),
        t(
            "response",
            Text,
            false,
            "/generation_config/response_schema"
        )
    );
    assert_eq!(
        *RequestSchemas::read(&snake).text.unwrap().unwrap().schema,
        json!({"type": "string"})
    );
    // Bedrock Converse: toolSpec.inputSchema.json, outputConfig's schema string
    let bedrock = json!({"toolConfig": {"tools": [{"toolSpec": {"name": "a", "inputSchema": {"json": s}, "strict": true}}]},
                         "outputConfig": {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"name": "fmt", "schema": "{\"type\": \"object\"}"}}}}});
    assert_eq!(
        chosen(bedrock.clone(), Some("a")),
        t(
            "a",
            Tool,
            true,
            "/toolConfig/tools/0/toolSpec/inputSchema/json"
        )
    );
    assert_eq!(
        chosen(bedrock.clone(), None),
        t(
            "fmt",
            Text,
            false,
            "/outputConfig/textFormat/structure/jsonSchema/schema"
        )
    );
    assert_eq!(
        *RequestSchemas::read(&bedrock).text.unwrap().unwrap().schema,
        s
    );
    // Ollama: format (an object)
    assert_eq!(
        chosen(json!({"format": s}), None),
        t("response", Text, false, "/format")
    );
    assert!(RequestSchemas::read(&json!({"format": "json"})).is_empty());
    // equal schemas hash equal, different ones not
    let h = |v: Value| RequestSchemas::read(&v).text.unwrap().unwrap().hash;
    assert_eq!(
        h(json!({"format": {"type": "object"}})),
        h(json!({"format": {"type": "object"}}))
    );
    assert_ne!(
        h(json!({"format": {"type": "object"}})),
        h(json!({"format": {"type": "array"}}))
    );
}

#[test]
fn gemini_response_schema_maps_keyword_by_keyword() {
    let m = |v: Value| openapi_to_json_schema(&v);
    // type: upper-case names, any case; TYPE_UNSPECIFIED dropped
    for (g, j) in [
        ("STRING", "string"),
        ("NUMBER", "number"),
        ("INTEGER", "integer"),
        ("BOOLEAN", "boolean"),
        ("ARRAY", "array"),
        ("OBJECT", "object"),
        ("NULL", "null"),
        ("string", "string"),
    ] {
        assert_eq!(m(json!({"type": g})), json!({"type": j}), "{g}");
    }
    assert_eq!(m(json!({"type": "TYPE_UNSPECIFIED"})), json!({}));
    // nullable
    assert_eq!(
        m(json!({"type": "STRING", "nullable": true})),
        json!({"type": ["string", "null"]})
    );
    assert_eq!(
        m(json!({"type": "STRING", "nullable": false})),
        json!({"type": "string"})
    );
    assert_eq!(
        m(json!({"type": "STRING", "nullable": true, "enum": ["a"]})),
        json!({"type": ["string", "null"], "enum": ["a", null]})
    );
    // format: kept, but "enum" dropped
    assert_eq!(
        m(json!({"type": "STRING", "format": "date-time"})),
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(
        m(json!({"type": "STRING", "format": "enum", "enum": ["a", "b"]})),
        json!({"type": "string", "enum": ["a", "b"]})
    );
    // kept as they are
    let kept = json!({"required": ["a"], "pattern": "^x", "minimum": 1, "maximum": 2.5, "title": "t", "description": "d", "default": 3});
    assert_eq!(m(kept.clone()), kept);
    // counts: numeric strings made numbers, snake_case read as camelCase
    assert_eq!(
        m(
            json!({"minItems": "1", "max_items": 3, "minLength": "2", "maxLength": 4, "min_properties": "1", "maxProperties": "9"})
        ),
        json!({"minItems": 1, "maxItems": 3, "minLength": 2, "maxLength": 4, "minProperties": 1, "maxProperties": 9})
    );
    // properties, items, anyOf converted in turn
    assert_eq!(
        m(
            json!({"type": "OBJECT", "properties": {"a": {"type": "ARRAY", "items": {"type": "INTEGER"}}},
                 "any_of": [{"type": "STRING"}, {"type": "NUMBER", "nullable": true}]})
        ),
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
               "anyOf": [{"type": "string"}, {"type": ["number", "null"]}]})
    );
    // example -> examples, propertyOrdering dropped, other keywords kept
    assert_eq!(
        m(
            json!({"example": {"a": 1}, "propertyOrdering": ["a"], "property_ordering": ["a"], "x-other": 1})
        ),
        json!({"examples": [{"a": 1}], "x-other": 1})
    );
}

#[test]
fn a_broken_bedrock_schema_string_is_a_contract_error_naming_its_pointer() {
    let tmp = tempfile::tempdir().unwrap();
    let model_input = json!({"messages": [], "outputConfig": {"textFormat": {"type": "json_schema",
        "structure": {"jsonSchema": {"name": "ticket", "schema": "{\"type\": \"object\""}}}}});
    let good_input = json!({"messages": [], "outputConfig": {"textFormat": {"type": "json_schema",
        "structure": {"jsonSchema": {"name": "ticket", "schema": TICKET}}}}});
    let output = |text: &str| json!({"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": "end_turn"});
    let lines = [
        json!({"recordId": "b1", "modelInput": model_input, "modelOutput": output("{\"title\": \"a\", \"priority\": \"low\"}")}),
        json!({"recordId": "b2", "modelInput": good_input, "modelOutput": output("{\"title\": \"a\", \"priority\": \"x\"}")}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    write(
        tmp.path(),
        &[("captures/bedrock.jsonl.out", text.join("\n"))],
    );
    let vs = verdicts(tmp.path());
    let got: Vec<(String, Option<String>, Option<String>, String)> = vs
        .iter()
        .map(|v| {
            (
                v.id.clone(),
                v.contract.clone(),
                v.contract_from.clone(),
                v.reason.as_ref().map_or("-".into(), |r| r.to_string()),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "b1".into(),
                Some("request:ticket".into()),
                Some("request".into()),
                "CONTRACT_ERROR".into()
            ),
            (
                "b2".into(),
                Some("request:ticket".into()),
                Some("request".into()),
                "SCHEMA_MISMATCH".into()
            ),
        ]
    );
    let f = &vs[0].errors[0];
    assert_eq!(
        f.message,
        "echo /modelInput/outputConfig/textFormat/structure/jsonSchema/schema: the request's text format \"ticket\" is a schema string that is not valid JSON at 1:18: the text ends inside an object opened at 1:1: expected \",\" or \"}\", found the end of the text"
    );
    assert_eq!(
        f.schema_path.as_deref(),
        Some("/modelInput/outputConfig/textFormat/structure/jsonSchema/schema")
    );
    assert_eq!(vs[1].errors[0].pointer.as_deref(), Some("/priority"));
    assert_eq!(vs[1].generation.as_ref().unwrap().request, "echo");
}

#[test]
fn a_capture_records_request_and_an_anthropic_tool_call_zero_config() {
    let tmp = tempfile::tempdir().unwrap();
    // a capture record's own `request`: its tool's input_schema governs the tool_use
    let record = json!({"id": "r1",
        "request": {"model": "claude", "tools": [{"name": "ticket", "input_schema": serde_json::from_str::<Value>(TICKET).unwrap(), "strict": true}]},
        "response": {"id": "msg_1", "type": "message", "role": "assistant",
                     "content": [{"type": "tool_use", "id": "tu", "name": "ticket", "input": {"title": "a", "priority": "low", "x": 1}}],
                     "stop_reason": "tool_use"}});
    // an Anthropic input line and its result: a tool the request does not declare
    let input = json!({"custom_id": "a1", "params": {"model": "claude", "tools": [{"name": "other", "input_schema": {"type": "object"}}]}});
    let result = json!({"custom_id": "a1", "result": {"type": "succeeded", "message": {"id": "msg_2", "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": "tu", "name": "ticket", "input": {}}], "stop_reason": "tool_use"}}});
    write(
        tmp.path(),
        &[
            ("captures/record.json", record.to_string()),
            ("captures/requests.jsonl", input.to_string()),
            ("captures/results.jsonl", result.to_string()),
        ],
    );
    let vs = verdicts(tmp.path());
    assert_eq!(vs.len(), 2);
    assert_eq!(vs[0].contract.as_deref(), Some("request:ticket"));
    assert_eq!(vs[0].contract_from.as_deref(), Some("request"));
    assert_eq!(vs[0].errors[0].pointer.as_deref(), Some(""));
    assert_eq!(
        vs[0].errors[0].message,
        "Additional properties are not allowed ('x' was unexpected)"
    );
    let g = vs[0].generation.as_ref().unwrap();
    assert_eq!(
        (
            g.schema.as_str(),
            g.source,
            g.strict,
            g.request.as_str(),
            g.pointer.as_str()
        ),
        (
            "ticket",
            SchemaSource::Tool,
            true,
            "record",
            "/request/tools/0/input_schema"
        )
    );
    assert_eq!(
        vs[1].reason.as_ref().map(|r| r.as_str()),
        Some("UNKNOWN_CONTRACT")
    );
    assert_eq!(
        vs[1].errors[0].message,
        "no contract: the workspace has no schemas in schemas/; its request (captures/requests.jsonl:1) declares no tool \"ticket\""
    );
}
