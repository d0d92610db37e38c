//! Traces and gateway logs read where they lie (`docs/record-shapes.md#traces`): OTLP/JSON
//! GenAI spans, OpenInference spans and LiteLLM's StandardLoggingPayload, one case per
//! shape and per status path, each asserting id, format, provider, stage, decision, reason,
//! pointer and the message exactly; and the real emitters' quirks (messages as a JSON
//! string, `intValue` as a string, deprecated attribute names).

use crate::common;
use serde_json::{Value, json};
use verdict::core::verdict::Verdict;

/// A contract with a string `title` and a `priority` of `low` or `high`, and no other key.
const TICKET: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"title":{"type":"string"},"priority":{"enum":["low","high"]}},"required":["title","priority"],"additionalProperties":false}"#;

/// Every verdict of a workspace holding `schemas` (name, text) and one log of `lines`;
/// with several schemas, `ticket` is the default contract.
fn verdicts_with(schemas: &[(&str, &str)], file: &str, lines: &[String]) -> Vec<Verdict> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    for (name, text) in schemas {
        std::fs::write(dir.path().join(format!("schemas/{name}.schema.json")), text).unwrap();
    }
    if schemas.len() > 1 {
        std::fs::write(
            dir.path().join("verdict.toml"),
            "default_contract = \"ticket\"\n",
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("captures").join(file), lines.join("\n")).unwrap();
    common::verdicts(dir.path())
}

/// One verdict as `id format provider stage decision reason pointer: message`.
use common::row_with_pointer as row;

/// The rows of a log of `lines` checked against [`TICKET`] (the default contract) and a
/// `lookup_order` tool contract.
fn rows(lines: &[String]) -> Vec<String> {
    verdicts_with(
        &[("ticket", TICKET), ("lookup_order", LOOKUP)],
        "log.jsonl",
        lines,
    )
    .iter()
    .map(row)
    .collect()
}

/// `lookup_order`'s result: an `order_id` and a `status` of `open` or `shipped`.
const LOOKUP: &str = r#"{"type":"object","properties":{"order_id":{"type":"string"},"status":{"enum":["open","shipped"]}},"required":["order_id","status"]}"#;

/// An OTLP AnyValue string.
fn s(v: &str) -> Value {
    json!({ "stringValue": v })
}

/// One span of [`traces`]: its `spanId`, attributes, `status` and `events`.
type SpanSpec<'a> = (&'a str, Vec<(&'a str, Value)>, Value, Value);

/// A `TracesData` line of `spans`, each `(spanId, attributes, status, events)`, all in
/// trace `t1`.
fn traces(spans: &[SpanSpec]) -> String {
    let spans: Vec<Value> = spans
        .iter()
        .map(|(id, attrs, status, events)| {
            let attrs: Vec<Value> = attrs
                .iter()
                .map(|(k, v)| json!({"key": k, "value": v}))
                .collect();
            json!({"traceId": "t1", "spanId": id, "name": "span", "kind": 3,
                   "attributes": attrs, "status": status, "events": events})
        })
        .collect();
    json!({"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": s("svc")}]},
           "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]})
    .to_string()
}

/// A one-span line: span `id` with `attrs`, status OK, no events.
fn span(id: &str, attrs: Vec<(&str, Value)>) -> String {
    traces(&[(id, attrs, json!({"code": 1}), json!([]))])
}

fn chat(extra: Vec<(&'static str, Value)>) -> Vec<(&'static str, Value)> {
    let mut a = vec![
        ("gen_ai.operation.name", s("chat")),
        ("gen_ai.provider.name", s("openai")),
    ];
    a.extend(extra);
    a
}

/// `gen_ai.output.messages` of one assistant message with `text`, finishing with `finish`.
fn messages(text: &str, finish: &str) -> String {
    json!([{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": finish}])
        .to_string()
}

#[test]
fn otlp_inference_spans_by_status() {
    let ok = r#"{"title": "Printer", "priority": "high"}"#;
    let lines = [
        // messages as a JSON string (what real emitters write), operation `completion`
        span(
            "s1",
            vec![
                ("gen_ai.operation.name", s("completion")),
                ("gen_ai.system", s("openai")),
                ("gen_ai.output.messages", s(&messages(ok, "stop"))),
            ],
        ),
        // structured arrayValue / kvlistValue messages
        span(
            "s2",
            chat(vec![(
                "gen_ai.output.messages",
                json!({"arrayValue": {"values": [{"kvlistValue": {"values": [
                    {"key": "role", "value": s("assistant")},
                    {"key": "parts", "value": {"arrayValue": {"values": [{"kvlistValue": {"values": [
                        {"key": "type", "value": s("text")},
                        {"key": "content", "value": s(r#"{"title": "Badge", "priority": "urgent"}"#)}]}}]}}},
                    {"key": "finish_reason", "value": s("stop")}]}}]}}),
            )]),
        ),
        // the finish reason from gen_ai.response.finish_reasons when the message has none
        span(
            "s3",
            chat(vec![
                (
                    "gen_ai.output.messages",
                    s(
                        r#"[{"role": "assistant", "parts": [{"type": "text", "content": "{\"title\": \"Lap"}]}]"#,
                    ),
                ),
                (
                    "gen_ai.response.finish_reasons",
                    json!({"arrayValue": {"values": [s("length")]}}),
                ),
            ]),
        ),
        span(
            "s4",
            chat(vec![(
                "gen_ai.output.messages",
                s(&messages("", "content_filter")),
            )]),
        ),
        span(
            "s5",
            chat(vec![(
                "gen_ai.output.messages",
                s(&messages("no", "refusal")),
            )]),
        ),
        span(
            "s6",
            chat(vec![("gen_ai.output.messages", s(&messages(ok, "paused")))]),
        ),
        // no output messages: content capture is opt-in
        span(
            "s7",
            chat(vec![(
                "gen_ai.response.finish_reasons",
                json!({"arrayValue": {"values": [s("stop")]}}),
            )]),
        ),
        // a tool call part: its arguments (an object) are the proposal
        span(
            "s8",
            chat(vec![(
                "gen_ai.output.messages",
                s(
                    r#"[{"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "ticket", "arguments": {"title": "Wi-Fi", "priority": "low", "extra": 1}}], "finish_reason": "tool_call"}]"#,
                ),
            )]),
        ),
        span(
            "s9",
            chat(vec![("gen_ai.output.messages", s(&messages("  ", "stop")))]),
        ),
    ];
    assert_eq!(
        rows(&lines),
        [
            "t1/s1 otlp otlp ready ready-for-commit - -: ",
            "t1/s2 otlp otlp schema regenerate SCHEMA_MISMATCH /priority: \"urgent\" is not one of \"low\" or \"high\"",
            "t1/s3 otlp otlp response retry TRUNCATED_OUTPUT -: gen_ai.response.finish_reasons[0] \"length\": the output hit the token limit",
            "t1/s4 otlp otlp response reject CONTENT_FILTERED -: gen_ai.output.messages[0].finish_reason \"content_filter\": a content filter stopped the output",
            "t1/s5 otlp otlp response reject REFUSAL -: gen_ai.output.messages[0].finish_reason \"refusal\": the model declined",
            "t1/s6 otlp otlp response retry INCOMPLETE -: gen_ai.output.messages[0].finish_reason \"paused\": not a normal finish",
            "t1/s7 otlp otlp response regenerate NO_OUTPUT -: the span has no output messages (gen_ai.output.messages, gen_ai.completion.0.*, gen_ai.choice events): content capture is opt-in in the GenAI instrumentations; nothing to validate",
            "t1/s8 otlp otlp schema regenerate SCHEMA_MISMATCH : Additional properties are not allowed ('extra' was unexpected)",
            "t1/s9 otlp otlp response regenerate NO_OUTPUT -: gen_ai.output.messages[0].finish_reason \"stop\", but the output message's text is empty: nothing to validate",
        ]
    );
}

#[test]
fn otlp_failed_spans_are_request_errors() {
    let lines = [
        // status.code as the enum name, with error.type: transient
        traces(&[(
            "e1",
            chat(vec![("error.type", s("RateLimitError"))]),
            json!({"code": "STATUS_CODE_ERROR", "message": "Error code: 429"}),
            json!([]),
        )]),
        // status.code as an integer: not transient
        traces(&[(
            "e2",
            chat(vec![("error.type", s("BadRequestError"))]),
            json!({"code": 2, "message": "invalid schema"}),
            json!([]),
        )]),
        // error.type alone (the span status unset), an HTTP status as the type
        traces(&[(
            "e3",
            chat(vec![("error.type", s("503"))]),
            json!({}),
            json!([]),
        )]),
        // status ERROR beats an output that is there
        traces(&[(
            "e4",
            chat(vec![(
                "gen_ai.output.messages",
                s(&messages(r#"{"title": "x", "priority": "low"}"#, "stop")),
            )]),
            json!({"code": 2}),
            json!([]),
        )]),
    ];
    assert_eq!(
        rows(&lines),
        [
            "t1/e1 otlp otlp response retry REQUEST_ERROR -: span status ERROR (\"Error code: 429\"), error.type \"RateLimitError\": the request failed: transient, retry",
            "t1/e2 otlp otlp response reject REQUEST_ERROR -: span status ERROR (\"invalid schema\"), error.type \"BadRequestError\": the request failed: not transient",
            "t1/e3 otlp otlp response retry REQUEST_ERROR -: the span, error.type \"503\": the request failed: transient, retry",
            "t1/e4 otlp otlp response reject REQUEST_ERROR -: span status ERROR: the request failed: not transient",
        ]
    );
}

/// Deprecated names real emitters still write: `gen_ai.completion.0.*` attributes (with
/// `llm.request.type` instead of the operation name), `gen_ai.choice` events, and
/// `gen_ai.usage.prompt_tokens` / `completion_tokens`; `intValue` as a string.
#[test]
fn otlp_deprecated_attributes_and_events() {
    let lines = [
        span(
            "d1",
            vec![
                ("llm.request.type", s("chat")),
                ("gen_ai.system", s("OpenAI")),
                ("gen_ai.completion.0.finish_reason", s("tool_calls")),
                ("gen_ai.completion.0.tool_calls.0.id", s("call_9")),
                ("gen_ai.completion.0.tool_calls.0.name", s("ticket")),
                (
                    "gen_ai.completion.0.tool_calls.0.arguments",
                    s(r#"{"title": "Desk", "priority": "medium"}"#),
                ),
                ("gen_ai.usage.prompt_tokens", json!({"intValue": "40"})),
                ("gen_ai.usage.completion_tokens", json!({"intValue": 22})),
            ],
        ),
        traces(&[(
            "d2",
            chat(vec![]),
            json!({"code": "STATUS_CODE_OK"}),
            json!([{"name": "gen_ai.choice", "attributes": [
                {"key": "index", "value": {"intValue": "0"}},
                {"key": "finish_reason", "value": s("end_turn")},
                {"key": "message", "value": s(r#"{"role": "assistant", "content": "{\"title\": \"Mouse\", \"priority\": \"low\"}"}"#)}]}]),
        )]),
        traces(&[(
            "d3",
            chat(vec![]),
            json!({"code": 1}),
            json!([{"name": "gen_ai.choice", "attributes": [
                {"key": "finish_reason", "value": s("max_tokens")},
                {"key": "message", "value": {"kvlistValue": {"values": [{"key": "content", "value": s("{\"ti")}]}}}]}]),
        )]),
    ];
    let vs = verdicts_with(&[("ticket", TICKET)], "log.jsonl", &lines);
    let got: Vec<String> = vs.iter().map(row).collect();
    assert_eq!(
        got,
        [
            "t1/d1 otlp otlp schema regenerate SCHEMA_MISMATCH /priority: \"medium\" is not one of \"low\" or \"high\"",
            "t1/d2 otlp otlp ready ready-for-commit - -: ",
            "t1/d3 otlp otlp response retry TRUNCATED_OUTPUT -: gen_ai.choice event finish_reason \"max_tokens\": the output hit the token limit",
        ]
    );
    // the tool call named the contract; the token counts were read from the old names,
    // `intValue` as a string included
    let r = vs[0].response.as_ref().unwrap();
    assert_eq!(r.tool.as_deref(), Some("ticket"));
    assert_eq!(vs[0].contract_from.as_deref(), Some("tool"));
    let t = r.tokens.as_ref().unwrap();
    assert_eq!((t.input_tokens, t.output_tokens), (Some(40), Some(22)));
    let meta = vs[0].meta.as_ref().unwrap();
    assert_eq!(meta["trace_id"], "t1");
    assert_eq!(meta["span_id"], "d1");
    assert_eq!(meta["gen_ai_provider"], "OpenAI");
}

#[test]
fn otlp_tool_spans_against_the_tool_contract() {
    let tool = |id: &str, extra: Vec<(&'static str, Value)>| {
        let mut a = vec![
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("lookup_order")),
        ];
        a.extend(extra);
        span(id, a)
    };
    let lines = [
        tool(
            "k1",
            vec![(
                "gen_ai.tool.call.result",
                s(r#"{"order_id": "A-1", "status": "open"}"#),
            )],
        ),
        tool(
            "k2",
            vec![(
                "gen_ai.tool.call.result",
                json!({"kvlistValue": {"values": [{"key": "order_id", "value": s("A-2")}, {"key": "status", "value": s("lost")}]}}),
            )],
        ),
        tool("k3", vec![("error.type", s("TimeoutError"))]),
        tool("k4", vec![]),
        tool("k5", vec![("gen_ai.tool.call.result", s("not json"))]),
    ];
    assert_eq!(
        rows(&lines),
        [
            "t1/k1 otlp otlp ready ready-for-commit - -: ",
            "t1/k2 otlp otlp schema regenerate SCHEMA_MISMATCH /status: \"lost\" is not one of \"open\" or \"shipped\"",
            "t1/k3 otlp otlp response reject TOOL_ERROR -: tool \"lookup_order\" failed, error.type \"TimeoutError\"",
            "t1/k4 otlp otlp response regenerate NO_OUTPUT -: the tool span has no gen_ai.tool.call.result: nothing to validate",
            "t1/k5 otlp otlp parse regenerate INVALID_JSON -: expected a JSON value, found \"not\"",
        ]
    );
}

/// Spans that are not LLM or tool spans (HTTP, agent, embeddings) are not captures: a
/// record of only those has no verdict; one beside a GenAI span leaves that span the
/// record's capture.
#[test]
fn otlp_other_spans_are_not_captures() {
    let http = (
        "h1",
        vec![("http.request.method", s("POST"))],
        json!({"code": 0}),
        json!([]),
    );
    let agent = (
        "a1",
        vec![("gen_ai.operation.name", s("invoke_agent"))],
        json!({"code": 0}),
        json!([]),
    );
    let embed = (
        "m1",
        vec![("gen_ai.operation.name", s("embeddings"))],
        json!({"code": 1}),
        json!([]),
    );
    let llm = (
        "l1",
        chat(vec![(
            "gen_ai.output.messages",
            s(&messages(r#"{"title": "x", "priority": "low"}"#, "stop")),
        )]),
        json!({"code": 1}),
        json!([]),
    );
    let lines = [
        traces(&[http.clone(), agent.clone(), embed]),
        traces(&[agent, llm, http]),
    ];
    let vs = verdicts_with(&[("ticket", TICKET)], "log.jsonl", &lines);
    let got: Vec<String> = vs.iter().map(row).collect();
    assert_eq!(got, ["t1/l1 otlp otlp ready ready-for-commit - -: "]);
    assert_eq!(vs[0].source.as_str(), "captures/log.jsonl:2");
}

#[test]
fn otlp_records_that_break_the_shape() {
    let llm = |id: &str| {
        (
            id.to_owned(),
            chat(vec![(
                "gen_ai.output.messages",
                s(&messages(r#"{"title": "x", "priority": "low"}"#, "stop")),
            )]),
        )
    };
    let a = llm("x1");
    // a part of a record of several spans that breaks the shape: its own INVALID_CAPTURE,
    // under its own id; the record's other span is read
    let b = (
        "x2".to_owned(),
        chat(vec![("gen_ai.output.messages", s("[{\"role\": "))]),
    );
    let lines = [
        span(
            "b1",
            chat(vec![("gen_ai.output.messages", s("[{\"role\": "))]),
        ),
        span(
            "b2",
            chat(vec![(
                "gen_ai.output.messages",
                s(r#"{"role": "assistant"}"#),
            )]),
        ),
        traces(&[
            (a.0.as_str(), a.1, json!({}), json!([])),
            (b.0.as_str(), b.1, json!({}), json!([])),
        ]),
        json!({"resourceSpans": {"spans": []}}).to_string(),
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t1", "attributes": [
            {"key": "gen_ai.operation.name", "value": s("chat")}]}]}]}]})
        .to_string(),
    ];
    assert_eq!(
        rows(&lines),
        [
            "t1/b1 otlp - input reject INVALID_CAPTURE -: otlp record: `resourceSpans[0].scopeSpans[0].spans[0].attributes.gen_ai.output.messages` is a string that is not JSON (the text ends inside an object opened at 1:2: expected a value, found the end of the text at 1:10)",
            "t1/b2 otlp - input reject INVALID_CAPTURE -: otlp record: `resourceSpans[0].scopeSpans[0].spans[0].attributes.gen_ai.output.messages` must be an array of messages, found an object",
            "t1/x1 otlp otlp ready ready-for-commit - -: ",
            "t1/x2 otlp - input reject INVALID_CAPTURE -: otlp record: `resourceSpans[0].scopeSpans[0].spans[1].attributes.gen_ai.output.messages` is a string that is not JSON (the text ends inside an object opened at 1:2: expected a value, found the end of the text at 1:10)",
            "captures/log.jsonl:4 otlp - input reject INVALID_CAPTURE -: otlp record: `resourceSpans` must be an array, found an object",
            "captures/log.jsonl:5 otlp - input reject INVALID_CAPTURE -: otlp record: `resourceSpans[0].scopeSpans[0].spans[0].spanId` is missing",
        ]
    );
}

/// A single exported document (`.json`, pretty-printed) is one record; the tools of
/// `gen_ai.tool.definitions` are the schema the model was given, the contract when no
/// server contract reaches the span.
#[test]
fn otlp_document_and_tool_definitions() {
    let doc = serde_json::to_string_pretty(
        &serde_json::from_str::<Value>(&span(
            "j1",
            chat(vec![
                (
                    "gen_ai.tool.definitions",
                    s(r#"[{"type": "function", "name": "ticket", "parameters": {"type": "object", "properties": {"priority": {"enum": ["low", "high"]}}, "required": ["priority"]}}]"#),
                ),
                (
                    "gen_ai.output.messages",
                    s(r#"[{"role": "assistant", "parts": [{"type": "tool_call", "name": "ticket", "arguments": "{\"priority\": \"soon\"}"}], "finish_reason": "tool_call"}]"#),
                ),
            ]),
        ))
        .unwrap(),
    )
    .unwrap();
    let vs = verdicts_with(&[], "export.json", &[doc]);
    let got: Vec<String> = vs.iter().map(row).collect();
    assert_eq!(
        got,
        [
            "t1/j1 otlp otlp schema regenerate SCHEMA_MISMATCH /priority: \"soon\" is not one of \"low\" or \"high\""
        ]
    );
    assert_eq!(vs[0].source.as_str(), "captures/export.json");
    assert_eq!(vs[0].contract_from.as_deref(), Some("request"));
    assert_eq!(vs[0].contract.as_deref(), Some("request:ticket"));
}

/// OpenInference spans: flattened output messages (tool calls, contents), `output.value`
/// holding the provider's response, a span error with its exception event, a TOOL span.
#[test]
fn openinference_spans_by_status() {
    let llm = |extra: Vec<(&'static str, Value)>| {
        let mut a = vec![
            ("openinference.span.kind", s("LLM")),
            ("llm.model_name", s("gpt-4o")),
        ];
        a.extend(extra);
        a
    };
    let response = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"title\": \"Mouse\", \"priority\": \"low\"}"}, "finish_reason": "stop"}]});
    let lines = [
        span(
            "o1",
            llm(vec![
                ("llm.output_messages.0.message.role", s("assistant")),
                (
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
                    s("ticket"),
                ),
                (
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
                    s(r#"{"title": "Keys", "priority": "low"}"#),
                ),
            ]),
        ),
        span(
            "o2",
            llm(vec![
                ("output.value", s(&response.to_string())),
                ("output.mime_type", s("application/json")),
            ]),
        ),
        span(
            "o3",
            llm(vec![
                (
                    "llm.output_messages.0.message.contents.0.message_content.type",
                    s("text"),
                ),
                (
                    "llm.output_messages.0.message.contents.0.message_content.text",
                    s(r#"{"title": "Pro"#),
                ),
                ("llm.finish_reason", s("max_tokens")),
            ]),
        ),
        traces(&[(
            "o4",
            llm(vec![]),
            json!({"code": 2, "message": "APIConnectionError"}),
            json!([{"name": "exception", "attributes": [
                {"key": "exception.type", "value": s("openai.APIConnectionError")},
                {"key": "exception.message", "value": s("Connection error.")}]}]),
        )]),
        span("o5", llm(vec![])),
        span(
            "o6",
            vec![
                ("openinference.span.kind", s("TOOL")),
                ("tool.name", s("lookup_order")),
                ("output.value", s(r#"{"order_id": "A-3", "status": 7}"#)),
            ],
        ),
        span(
            "o7",
            vec![
                ("openinference.span.kind", s("CHAIN")),
                ("output.value", s("{}")),
            ],
        ),
        span(
            "o8",
            llm(vec![
                (
                    "output.value",
                    s(r#"{"title": "Screen", "priority": "high"}"#),
                ),
                ("output.mime_type", s("text/plain")),
            ]),
        ),
    ];
    assert_eq!(
        rows(&lines),
        [
            "t1/o1 openinference openinference ready ready-for-commit - -: ",
            "t1/o2 openinference openai-chat ready ready-for-commit - -: ",
            "t1/o3 openinference openinference response retry TRUNCATED_OUTPUT -: llm.finish_reason \"max_tokens\": the output hit the token limit",
            "t1/o4 openinference openinference response retry REQUEST_ERROR -: span status ERROR (\"APIConnectionError\"), exception \"openai.APIConnectionError\" (\"Connection error.\"): the request failed: transient, retry",
            "t1/o5 openinference openinference response regenerate NO_OUTPUT -: the span has no output (llm.output_messages, output.value): nothing to validate",
            "t1/o6 openinference openinference schema regenerate SCHEMA_MISMATCH /status: 7 is not one of \"open\" or \"shipped\"",
            "t1/o8 openinference openinference ready ready-for-commit - -: ",
        ]
    );
}

/// The request an OpenInference span records is the schema the model was given:
/// `llm.tools.N.tool.json_schema` (the tool definitions), `llm.invocation_parameters`
/// (`response_format`), or the full request in `input.value`.
#[test]
fn openinference_request_schemas() {
    let tool = r#"{"type": "function", "function": {"name": "ticket", "parameters": {"type": "object", "properties": {"priority": {"enum": ["low", "high"]}}, "required": ["priority"]}}}"#;
    let format = json!({"type": "json_schema", "json_schema": {"name": "triage", "strict": true, "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}}});
    let lines = [
        span(
            "r1",
            vec![
                ("openinference.span.kind", s("LLM")),
                ("llm.tools.0.tool.json_schema", s(tool)),
                (
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
                    s("ticket"),
                ),
                (
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
                    s(r#"{"priority": "later"}"#),
                ),
            ],
        ),
        span(
            "r2",
            vec![
                ("openinference.span.kind", s("LLM")),
                (
                    "llm.invocation_parameters",
                    s(&json!({"model": "gpt-4o", "response_format": format}).to_string()),
                ),
                ("llm.output_messages.0.message.content", s(r#"{"n": "1"}"#)),
            ],
        ),
        span(
            "r3",
            vec![
                ("openinference.span.kind", s("LLM")),
                (
                    "input.value",
                    s(&json!({"messages": [], "response_format": format}).to_string()),
                ),
                ("llm.output_messages.0.message.content", s(r#"{"n": 2}"#)),
            ],
        ),
        span(
            "r4",
            vec![
                ("openinference.span.kind", s("LLM")),
                ("llm.invocation_parameters", s("{model")),
                ("llm.output_messages.0.message.content", s(r#"{"n": 2}"#)),
            ],
        ),
    ];
    let vs = verdicts_with(&[], "log.jsonl", &lines);
    let got: Vec<String> = vs
        .iter()
        .map(|v| format!("{} {}", row(v), v.contract.as_deref().unwrap_or("-")))
        .collect();
    assert_eq!(
        got,
        [
            "t1/r1 openinference openinference schema regenerate SCHEMA_MISMATCH /priority: \"later\" is not one of \"low\" or \"high\" request:ticket",
            "t1/r2 openinference openinference schema regenerate SCHEMA_MISMATCH /n: \"1\" is not of type \"integer\" request:triage",
            "t1/r3 openinference openinference ready ready-for-commit - -:  request:triage",
            "t1/r4 openinference - input reject INVALID_CAPTURE -: openinference record: `resourceSpans[0].scopeSpans[0].spans[0].attributes.llm.invocation_parameters` is a string that is not JSON (expected an object key in double quotes, found \"model\" at 1:2) -",
        ]
    );
    assert!(
        vs[..3]
            .iter()
            .all(|v| v.contract_from.as_deref() == Some("request"))
    );
}

/// A StandardLoggingPayload as LiteLLM writes it, the other fields trimmed.
fn litellm(id: &str, status: &str, extra: Value) -> String {
    let mut p = json!({"id": id, "trace_id": "trace-1", "call_type": "acompletion", "stream": false,
        "status": status, "custom_llm_provider": "openai", "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}], "response": null, "model_parameters": {},
        "error_str": null, "error_information": {"error_code": "", "error_class": "", "llm_provider": "", "traceback": "", "error_message": ""}});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p.to_string()
}

fn completion(content: &str, finish: &str) -> Value {
    json!({"id": "chatcmpl-x", "object": "chat.completion", "model": "gpt-4o", "choices": [{"finish_reason": finish, "index": 0,
        "message": {"content": content, "role": "assistant", "tool_calls": null, "function_call": null}}]})
}

#[test]
fn litellm_payloads_by_status() {
    let lines = [
        litellm(
            "l1",
            "success",
            json!({"response": completion(r#"{"title": "VPN", "priority": "high"}"#, "stop")}),
        ),
        litellm(
            "l2",
            "success",
            json!({"response": completion(r#"{"title": "VPN", "priority": 3}"#, "stop")}),
        ),
        litellm(
            "l3",
            "success",
            json!({"response": completion(r#"{"title": "V"#, "length")}),
        ),
        litellm(
            "l4",
            "failure",
            json!({"error_str": "litellm.RateLimitError", "error_information": {"error_code": "429", "error_class": "RateLimitError", "llm_provider": "openai", "traceback": "", "error_message": "Rate limit reached"}}),
        ),
        litellm(
            "l5",
            "failure",
            json!({"error_information": {"error_code": "400", "error_class": "BadRequestError", "llm_provider": "openai", "traceback": "", "error_message": "Invalid schema"}}),
        ),
        // an older payload: error_str only
        litellm(
            "l6",
            "failure",
            json!({"error_str": "Connection reset", "error_information": null}),
        ),
        litellm(
            "l7",
            "success",
            json!({"status_fields": {"llm_api_status": "success", "guardrail_status": "guardrail_intervened"},
                   "response": completion("blocked", "stop")}),
        ),
        litellm("l8", "success", json!({})),
        litellm("l9", "pending", json!({})),
        // an embedding call is not a capture
        litellm("l10", "success", json!({"call_type": "aembedding"})),
    ];
    assert_eq!(
        rows(&lines),
        [
            "l1 litellm openai-chat ready ready-for-commit - -: ",
            "l2 litellm openai-chat schema regenerate SCHEMA_MISMATCH /priority: 3 is not one of \"low\" or \"high\"",
            "l3 litellm openai-chat response retry TRUNCATED_OUTPUT -: choices[0].finish_reason \"length\": the output hit the token limit",
            "l4 litellm litellm response retry REQUEST_ERROR -: status \"failure\", error_class \"RateLimitError\", error_code \"429\": \"Rate limit reached\": the request failed: transient, retry",
            "l5 litellm litellm response reject REQUEST_ERROR -: status \"failure\", error_class \"BadRequestError\", error_code \"400\": \"Invalid schema\": the request failed: not transient",
            "l6 litellm litellm response reject REQUEST_ERROR -: status \"failure\": \"Connection reset\": the request failed: not transient",
            "l7 litellm litellm response reject CONTENT_FILTERED -: status_fields.guardrail_status \"guardrail_intervened\": a LiteLLM guardrail blocked or changed the output",
            "l8 litellm litellm response regenerate NO_OUTPUT -: status \"success\", but `response` is null: nothing to validate",
            "l9 litellm - input reject INVALID_CAPTURE -: litellm record: `status` is \"pending\": expected \"success\" or \"failure\"",
        ]
    );
}

/// `model_parameters` is the request: its `response_format` is the schema the model was
/// given; `trace_id` (LiteLLM's key for the calls of one request: retries, fallbacks) is
/// kept in `meta`.
#[test]
fn litellm_model_parameters_are_the_request() {
    let format = json!({"type": "json_schema", "json_schema": {"name": "ticket", "strict": true, "schema": {"type": "object", "properties": {"priority": {"type": "string", "enum": ["low", "high"]}}, "required": ["priority"], "additionalProperties": false}}});
    let lines = [litellm(
        "p1",
        "success",
        json!({"model_parameters": {"response_format": format},
               "response": completion(r#"{"priority": "mid"}"#, "stop")}),
    )];
    let vs = verdicts_with(&[], "log.jsonl", &lines);
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>(),
        [
            "p1 litellm openai-chat schema regenerate SCHEMA_MISMATCH /priority: \"mid\" is not one of \"low\" or \"high\""
        ]
    );
    assert_eq!(vs[0].contract_from.as_deref(), Some("request"));
    assert_eq!(vs[0].contract.as_deref(), Some("request:ticket"));
    assert_eq!(vs[0].meta.as_ref().unwrap()["trace_id"], "trace-1");
}

/// `check` names spans by `TRACEID/SPANID` and the duplicate-id pre-pass knows that name:
/// two records of one span are both flagged.
#[test]
fn span_ids_in_check_and_the_duplicate_pre_pass() {
    let line = span(
        "same",
        chat(vec![(
            "gen_ai.output.messages",
            s(&messages(r#"{"title": "x", "priority": "low"}"#, "stop")),
        )]),
    );
    let dir = common::workspace_with(TICKET, &[("a.jsonl", &format!("{line}\n{line}\n"))]);
    let out = common::verdict_in(dir.path(), &["check", "--format", "jsonl", "."]);
    let text = String::from_utf8_lossy(&out.stdout);
    let ids: Vec<(String, String, String)> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "verdict")
        .map(|v| {
            let d = &v["data"];
            let dup = d["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["code"] == "DUPLICATE_ID")
                .map_or("-", |w| w["message"].as_str().unwrap());
            (
                d["id"].as_str().unwrap().to_owned(),
                d["source"].as_str().unwrap().to_owned(),
                dup.to_owned(),
            )
        })
        .collect();
    let dup = |other: &str| {
        format!(
            "id `t1/same` is also the id of {other}: `verdict feedback t1/same` is ambiguous (give each capture its own id, or name it by its source)"
        )
    };
    assert_eq!(
        ids,
        [
            (
                "t1/same".to_owned(),
                "captures/a.jsonl:1".to_owned(),
                dup("captures/a.jsonl:2")
            ),
            (
                "t1/same".to_owned(),
                "captures/a.jsonl:2".to_owned(),
                dup("captures/a.jsonl:1")
            ),
        ],
        "{text}"
    );
}

/// A Langfuse observation as its API and exports give it, the other fields trimmed.
fn langfuse(id: &str, ty: &str, extra: Value) -> String {
    let mut o = json!({"id": id, "traceId": "lf-trace", "type": ty, "name": "chat", "startTime": "2026-12-01T10:00:00.000Z",
        "model": "gpt-4o", "input": [{"role": "user", "content": "hi"}], "output": null, "metadata": {},
        "level": "DEFAULT", "statusMessage": null, "parentObservationId": "lf-parent"});
    for (k, v) in extra.as_object().unwrap() {
        o[k] = v.clone();
    }
    o.to_string()
}

#[test]
fn langfuse_observations_by_level() {
    let ok = r#"{"title": "VPN", "priority": "high"}"#;
    let lines = [
        langfuse(
            "f1",
            "GENERATION",
            json!({"output": {"role": "assistant", "content": ok, "tool_calls": null, "function_call": null}}),
        ),
        langfuse(
            "f2",
            "GENERATION",
            json!({"output": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "ticket", "arguments": "{\"title\": \"VPN\", \"priority\": \"soon\"}"}}]}}),
        ),
        // streamed: the content only, the finish reason in metadata
        langfuse(
            "f3",
            "GENERATION",
            json!({"output": "{\"title\": \"V", "metadata": {"finish_reason": "length"}}),
        ),
        langfuse(
            "f4",
            "GENERATION",
            json!({"level": "ERROR", "statusMessage": "Error code: 429 - rate limit exceeded"}),
        ),
        langfuse(
            "f5",
            "GENERATION",
            json!({"level": "ERROR", "statusMessage": "Error code: 400 - invalid request"}),
        ),
        langfuse("f6", "GENERATION", json!({})),
        langfuse(
            "f7",
            "TOOL",
            json!({"name": "lookup_order", "output": {"order_id": "A-1", "status": "gone"}}),
        ),
        langfuse("f8", "SPAN", json!({"output": {"anything": 1}})),
        // an ingestion event carrying a generation (LiteLLM's Langfuse logger writes these)
        json!({"id": "evt-1", "type": "generation-create", "timestamp": "2026-12-01T10:00:01Z",
               "body": {"id": "f9", "traceId": "lf-trace", "name": "litellm-acompletion", "model": "gpt-4o",
                        "output": {"content": ok, "role": "assistant", "tool_calls": null}, "level": "DEFAULT"}})
        .to_string(),
    ];
    assert_eq!(
        rows(&lines),
        [
            "f1 langfuse langfuse ready ready-for-commit - -: ",
            "f2 langfuse langfuse schema regenerate SCHEMA_MISMATCH /priority: \"soon\" is not one of \"low\" or \"high\"",
            "f3 langfuse langfuse response retry TRUNCATED_OUTPUT -: metadata.finish_reason \"length\": the output hit the token limit",
            "f4 langfuse langfuse response retry REQUEST_ERROR -: level \"ERROR\" (\"Error code: 429 - rate limit exceeded\"): the request failed: transient, retry",
            "f5 langfuse langfuse response reject REQUEST_ERROR -: level \"ERROR\" (\"Error code: 400 - invalid request\"): the request failed: not transient",
            "f6 langfuse langfuse response regenerate NO_OUTPUT -: the generation has no output: nothing to validate",
            "f7 langfuse langfuse schema regenerate SCHEMA_MISMATCH /status: \"gone\" is not one of \"open\" or \"shipped\"",
            "f9 langfuse langfuse ready ready-for-commit - -: ",
        ]
    );
}

/// `metadata.response_format` (where the OpenAI integration keeps it) is the schema the
/// model was given.
#[test]
fn langfuse_response_format_is_the_request() {
    let format = json!({"type": "json_schema", "json_schema": {"name": "ticket", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}});
    let lines = [langfuse(
        "q1",
        "GENERATION",
        json!({"metadata": {"response_format": format}, "output": {"role": "assistant", "content": "{\"n\": 1.5}"}}),
    )];
    let vs = verdicts_with(&[], "log.jsonl", &lines);
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>(),
        [
            "q1 langfuse langfuse schema regenerate SCHEMA_MISMATCH /n: 1.5 is not of type \"integer\""
        ]
    );
    assert_eq!(vs[0].contract.as_deref(), Some("request:ticket"));
    let meta = vs[0].meta.as_ref().unwrap();
    assert_eq!(
        (&meta["trace_id"], &meta["parent_observation_id"]),
        (&json!("lf-trace"), &json!("lf-parent"))
    );
}

/// A LangSmith run as the API gives it, the other fields trimmed.
fn langsmith(id: &str, run_type: &str, extra: Value) -> String {
    let mut r = json!({"id": id, "name": "ChatOpenAI", "run_type": run_type, "start_time": "2026-12-01T10:00:00",
        "inputs": {"messages": [{"role": "user", "content": "hi"}]}, "outputs": null, "error": null,
        "extra": {}, "trace_id": "ls-trace", "parent_run_id": "ls-parent", "dotted_order": "20261201T100000000000Zls-trace"});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r.to_string()
}

#[test]
fn langsmith_runs_by_status() {
    let ok = r#"{"title": "VPN", "priority": "high"}"#;
    // a wrap_openai run: outputs is the ChatCompletion's model_dump()
    let dump = json!({"id": "chatcmpl-ls", "object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": ok}, "finish_reason": "stop"}]});
    let generation = |kwargs: Value, info: Value| {
        json!({"outputs": {"generations": [[{"text": "", "generation_info": info, "type": "ChatGeneration",
            "message": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": kwargs}}]]}})
    };
    let lines = [
        langsmith("r1", "llm", json!({"outputs": dump})),
        // a LangChain chat-model run: a tool call with structured args
        langsmith(
            "r2",
            "llm",
            generation(
                json!({"content": "", "tool_calls": [{"name": "ticket", "args": {"title": "VPN", "priority": 2}, "id": "call_2"}]}),
                json!({"finish_reason": "tool_calls"}),
            ),
        ),
        langsmith(
            "r3",
            "llm",
            generation(
                json!({"content": "{\"title\": \"V", "response_metadata": {"stop_reason": "max_tokens"}}),
                json!(null),
            ),
        ),
        langsmith(
            "r4",
            "llm",
            json!({"error": "RateLimitError('Error code: 429')"}),
        ),
        langsmith(
            "r5",
            "llm",
            json!({"error": "BadRequestError('Error code: 400')"}),
        ),
        langsmith("r6", "llm", json!({})),
        langsmith(
            "r7",
            "tool",
            json!({"name": "lookup_order", "outputs": {"output": "{\"order_id\": \"A-1\", \"status\": \"open\"}"}}),
        ),
        langsmith(
            "r8",
            "tool",
            json!({"name": "lookup_order", "error": "TimeoutError()"}),
        ),
        langsmith("r9", "chain", json!({"outputs": {"output": 1}})),
        langsmith("r10", "llm", json!({"outputs": {"weird": 1}})),
    ];
    assert_eq!(
        rows(&lines),
        [
            "r1 langsmith openai-chat ready ready-for-commit - -: ",
            "r2 langsmith langsmith schema regenerate SCHEMA_MISMATCH /priority: 2 is not one of \"low\" or \"high\"",
            "r3 langsmith langsmith response retry TRUNCATED_OUTPUT -: generations[0][0].message.kwargs.response_metadata.stop_reason \"max_tokens\": the output hit the token limit",
            "r4 langsmith langsmith response retry REQUEST_ERROR -: error \"RateLimitError('Error code: 429')\": the request failed: transient, retry",
            "r5 langsmith langsmith response reject REQUEST_ERROR -: error \"BadRequestError('Error code: 400')\": the request failed: not transient",
            "r6 langsmith langsmith response regenerate NO_OUTPUT -: the run has no outputs and no error: nothing to validate",
            "r7 langsmith langsmith ready ready-for-commit - -: ",
            "r8 langsmith langsmith response reject TOOL_ERROR -: tool \"lookup_order\" failed: error \"TimeoutError()\"",
            "r10 langsmith - input reject INVALID_CAPTURE -: langsmith record: `outputs` holds no `choices`, `generations` or `output`: not an LLM run's output",
        ]
    );
}

/// A wrap_openai run's `inputs` are the request as sent: its `response_format` is the
/// schema the model was given; `trace_id` and `parent_run_id` are kept in `meta`.
#[test]
fn langsmith_inputs_are_the_request() {
    let format = json!({"type": "json_schema", "json_schema": {"name": "ticket", "strict": true, "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}}});
    let dump = json!({"id": "chatcmpl-ls2", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "{\"n\": 1, \"m\": 2}"}, "finish_reason": "stop"}]});
    let lines = [langsmith(
        "i1",
        "llm",
        json!({"inputs": {"messages": [], "model": "gpt-4o", "response_format": format}, "outputs": dump}),
    )];
    let vs = verdicts_with(&[], "log.jsonl", &lines);
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>(),
        [
            "i1 langsmith openai-chat schema regenerate SCHEMA_MISMATCH : Additional properties are not allowed ('m' was unexpected)"
        ]
    );
    assert_eq!(vs[0].contract.as_deref(), Some("request:ticket"));
    let meta = vs[0].meta.as_ref().unwrap();
    assert_eq!(
        (&meta["trace_id"], &meta["parent_run_id"]),
        (&json!("ls-trace"), &json!("ls-parent"))
    );
}

/// Several LLM and tool spans in one `TracesData` (a batching exporter's line, a whole
/// exported document): each span is its own capture, with its own `TRACEID/SPANID` id and a
/// source naming its part of the record (`FILE:LINE#PART`, `FILE#PART`), in `check`'s
/// every format and in `watch --json` (`docs/record-shapes.md#traces`).
#[test]
fn otlp_several_spans_in_one_record_are_each_a_capture() {
    let ok = r#"{"title": "Printer", "priority": "high"}"#;
    let http = vec![("http.request.method", s("POST"))];
    let three = traces(&[
        (
            "p1",
            chat(vec![("gen_ai.output.messages", s(&messages(ok, "stop")))]),
            json!({"code": 1}),
            json!([]),
        ),
        // not a capture: it takes no part number
        ("h1", http, json!({}), json!([])),
        (
            "p2",
            chat(vec![(
                "gen_ai.output.messages",
                s(&messages(r#"{"title": "Lap"#, "length")),
            )]),
            json!({}),
            json!([]),
        ),
        (
            "p3",
            vec![
                ("gen_ai.operation.name", s("execute_tool")),
                ("gen_ai.tool.name", s("lookup_order")),
                (
                    "gen_ai.tool.call.result",
                    s(r#"{"order_id": "A1", "status": "lost"}"#),
                ),
            ],
            json!({}),
            json!([]),
        ),
    ]);
    let one = span(
        "q1",
        chat(vec![("gen_ai.output.messages", s(&messages(ok, "stop")))]),
    );
    let doc: Vec<SpanSpec> = (1..=4)
        .map(|n| {
            (
                ["d1", "d2", "d3", "d4"][n - 1],
                chat(vec![(
                    "gen_ai.output.messages",
                    s(&messages(
                        if n == 3 {
                            r#"{"title": "x", "priority": "soon"}"#
                        } else {
                            ok
                        },
                        "stop",
                    )),
                )]),
                json!({"code": "STATUS_CODE_OK"}),
                json!([]),
            )
        })
        .collect();
    let doc = serde_json::to_string_pretty(&serde_json::from_str::<Value>(&traces(&doc)).unwrap())
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for d in ["schemas", "captures"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    std::fs::write(dir.path().join("schemas/ticket.schema.json"), TICKET).unwrap();
    std::fs::write(dir.path().join("schemas/lookup_order.schema.json"), LOOKUP).unwrap();
    std::fs::write(
        dir.path().join("verdict.toml"),
        "default_contract = \"ticket\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("captures/log.jsonl"),
        format!("{three}\n{one}\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("captures/export.json"), &doc).unwrap();
    let expected = [
        ("t1/d1", "captures/export.json#1", "ready"),
        ("t1/d2", "captures/export.json#2", "ready"),
        ("t1/d3", "captures/export.json#3", "SCHEMA_MISMATCH"),
        ("t1/d4", "captures/export.json#4", "ready"),
        ("t1/p1", "captures/log.jsonl:1#1", "ready"),
        ("t1/p2", "captures/log.jsonl:1#2", "TRUNCATED_OUTPUT"),
        ("t1/p3", "captures/log.jsonl:1#3", "SCHEMA_MISMATCH"),
        // a record of one such span keeps the plain source
        ("t1/q1", "captures/log.jsonl:2", "ready"),
    ];
    let of = |d: &Value| {
        (
            d["id"].as_str().unwrap().to_owned(),
            d["source"].as_str().unwrap().to_owned(),
            d["reason"].as_str().unwrap_or("ready").to_owned(),
        )
    };
    let want: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    // the library
    let vs = common::verdicts(dir.path());
    let got: Vec<_> = vs
        .iter()
        .map(|v| of(&serde_json::to_value(v).unwrap()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>()[4..7],
        [
            "t1/p1 otlp otlp ready ready-for-commit - -: ",
            "t1/p2 otlp otlp response retry TRUNCATED_OUTPUT -: gen_ai.output.messages[0].finish_reason \"length\": the output hit the token limit",
            "t1/p3 otlp otlp schema regenerate SCHEMA_MISMATCH /status: \"lost\" is not one of \"open\" or \"shipped\"",
        ]
    );
    // check --format jsonl: one verdict line per span, each naming its part
    let out = common::verdict_in(dir.path(), &["check", "--format", "jsonl", "."]);
    let text = String::from_utf8_lossy(&out.stdout);
    let got: Vec<_> = common::jsonl_verdicts(&text).iter().map(of).collect();
    assert_eq!(got, want, "{text}");
    // the human report names each part's source
    let out = common::verdict_in(dir.path(), &["check", "--color", "never", "."]);
    let human = String::from_utf8_lossy(&out.stdout);
    for (id, source, _) in &expected {
        assert!(
            human
                .lines()
                .any(|l| l.contains(&format!(" {id}  ")) && l.ends_with(&format!("  {source}"))),
            "{id} {source}: {human}"
        );
    }
    // watch --json: the same captures, the same sources
    let w = common::watch::WatchJson::start(dir.path(), &[]);
    let first = w.batch("the first run", std::time::Duration::from_secs(60));
    let mut got: Vec<_> = first
        .iter()
        .filter(|l| l["type"] == "verdict")
        .map(|l| of(&l["data"]))
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(first.last().unwrap()["data"]["captures"], 8, "{first:?}");
}

/// promptfoo's results file (`promptfoo eval -o results.json`): one capture per result,
/// each a part of the document (`FILE#PART`), its id the result's `id`; one case per status
/// path, and promptfoo's own pass/fail beside verdict's (`meta.promptfoo`, the human
/// report's note).
#[test]
fn promptfoo_results_by_status() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces");
    let vs: Vec<Verdict> = common::verdicts(&root)
        .into_iter()
        .filter(|v| v.format.as_deref() == Some("promptfoo"))
        .collect();
    let got: Vec<String> = vs
        .iter()
        .map(|v| format!("{} {}", v.source, row(v)))
        .collect();
    assert_eq!(
        got,
        [
            "promptfoo/results.json#1 pf-1-ready promptfoo promptfoo ready ready-for-commit - -: ",
            "promptfoo/results.json#2 pf-2-promptfoo-only promptfoo promptfoo ready ready-for-commit - -: ",
            "promptfoo/results.json#3 pf-3-schema promptfoo promptfoo schema regenerate SCHEMA_MISMATCH /priority: \"urgent\" is not one of \"low\" or \"high\"",
            "promptfoo/results.json#4 pf-4-rate-limit promptfoo promptfoo response retry REQUEST_ERROR -: failureReason 2 (ERROR): \"API error: 429 Too Many Requests: Rate limit reached for gpt-4o-mini\": the request failed: transient, retry",
            "promptfoo/results.json#5 pf-5-length promptfoo promptfoo response retry TRUNCATED_OUTPUT -: response.finishReason \"length\": the output hit the token limit",
            "promptfoo/results.json#6 pf-6-refusal promptfoo promptfoo response reject REFUSAL -: response.isRefusal true: the model declined",
            "promptfoo/results.json#7 pf-7-fenced promptfoo promptfoo parse regenerate FENCED_JSON -: the JSON value is wrapped in a markdown code fence: expected the text to start with the value, found \"```json\"",
            "promptfoo/results.json#8 pf-8-structured promptfoo output schema regenerate SCHEMA_MISMATCH : Additional properties are not allowed ('approved' was unexpected)",
            "promptfoo/results.json#9 pf-9-no-output promptfoo promptfoo response regenerate NO_OUTPUT -: the result has no response.output: nothing to validate",
        ]
    );
    let own = |i: usize| vs[i].meta.as_ref().unwrap()["promptfoo"].clone();
    assert_eq!(
        own(1),
        json!({"pass": false, "failure_reason": "assert", "score": 0, "reason": "Expected output to contain \"urgent\""})
    );
    assert_eq!(
        own(0),
        json!({"pass": true, "failure_reason": "none", "score": 1, "reason": "All assertions passed"})
    );
    assert_eq!(
        vs[0].meta.as_ref().unwrap()["eval_id"],
        "eval-7Xk-2026-12-01T10:00:00"
    );
    assert_eq!(
        vs[0].meta.as_ref().unwrap()["usage"],
        json!({"input_tokens": 90, "output_tokens": 30, "total_tokens": 120})
    );
    // the human report shows promptfoo's outcome under verdict's
    let out = common::verdict_in(&root, &["check", "--color", "never", "."]);
    let human = String::from_utf8_lossy(&out.stdout);
    for note in [
        "pf-2-promptfoo-only  ready-for-commit  promptfoo/results.json#2  (as expected)\n      promptfoo: FAIL (assert, score 0): Expected output to contain \"urgent\"\n",
        "pf-1-ready  ready-for-commit  promptfoo/results.json#1  (as expected)\n      promptfoo: pass (score 1): All assertions passed\n",
    ] {
        assert!(human.contains(note), "{note}\n{human}");
    }
}

/// A promptfoo results file that breaks the shape: a result that is not an object, a
/// `failureReason` outside 0-2, `success` not a boolean: that result's `INVALID_CAPTURE`
/// (under its id, else its source), the others read.
#[test]
fn promptfoo_results_that_break_the_shape() {
    let doc = json!({"evalId": "e1", "results": {"version": 3, "results": [
        "x",
        {"id": "r2", "failureReason": 7, "response": {"output": "{}"}},
        {"id": "r3", "success": "yes", "response": {"output": "{}"}},
        {"response": {"output": "{\"title\": \"a\", \"priority\": \"low\"}"}, "success": true, "failureReason": 0},
    ]}});
    let got: Vec<String> = verdicts_with(&[("ticket", TICKET)], "results.json", &[doc.to_string()])
        .iter()
        .map(|v| format!("{} {}", v.source, row(v)))
        .collect();
    assert_eq!(
        got,
        [
            "captures/results.json#1 captures/results.json#1 promptfoo - input reject INVALID_CAPTURE -: promptfoo record: `results.results[0]` must be an object, found a string",
            "captures/results.json#2 r2 promptfoo - input reject INVALID_CAPTURE -: promptfoo record: `results.results[1].failureReason` is 7: expected 0, 1 or 2",
            "captures/results.json#3 r3 promptfoo - input reject INVALID_CAPTURE -: promptfoo record: `results.results[2].success` must be a boolean, found a string",
            "captures/results.json#4 captures/results.json#4 promptfoo promptfoo ready ready-for-commit - -: ",
        ]
    );
}

/// Chains from traces (`docs/chains.md#natural-links`): LiteLLM's `trace_id` links a
/// request's calls, and the LLM spans under one parent span (its retries) are one chain
/// `TRACEID/PARENTSPANID`, each ordered by start time whatever the file order; a trace key
/// seen once is no chain.
#[test]
fn chains_from_traces_on_the_sample() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces");
    let out = common::verdict_in(&root, &["check", "--format", "json", "."]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<Value> = report["chains"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!([
                r["chain"],
                r["linked_by"],
                r["attempts"],
                r["outcome"],
                r["recovered_at"],
                r["first_failure"]["reason"],
                r["tokens"],
                r["sources"]
            ])
        })
        .collect();
    assert_eq!(
        rows,
        [
            json!([
                "litellm-trace-retry",
                "natural",
                2,
                "recovered",
                2,
                "REQUEST_ERROR",
                30,
                [
                    "retries/litellm-retries.jsonl:2",
                    "retries/litellm-retries.jsonl:1"
                ]
            ]),
            json!([
                "7d3f5a1e9b2c4d6f8a0b1c2d3e4f5a6b/a1b2c3d4e5f60718",
                "natural",
                3,
                "recovered",
                3,
                "REQUEST_ERROR",
                null,
                [
                    "retries/otel-retries.jsonl:2",
                    "retries/otel-retries.jsonl:3",
                    "retries/otel-retries.jsonl:1"
                ]
            ]),
        ]
    );
    let s = &report["chains"]["summary"];
    assert_eq!(
        [
            &s["chains"],
            &s["first_pass"],
            &s["recovered"],
            &s["unrecovered"],
            &s["attempts"]
        ],
        [2, 0, 2, 0, 5]
    );
    // each attempt's link on its verdict: the trace key, the start time as its order
    let vs = common::verdicts(&root);
    let link = |id: &str| {
        let v = vs.iter().find(|v| v.id == id).unwrap();
        serde_json::to_value(v.chain.as_ref()).unwrap()
    };
    assert_eq!(link("chatcmpl-retry-1")["order"], 1764583260.0);
    assert_eq!(link("chatcmpl-alone")["id"], "litellm-trace-alone");
    assert_eq!(
        link("7d3f5a1e9b2c4d6f8a0b1c2d3e4f5a6b/2b2b2b2b2b2b2b02")["order"],
        1764583202.0
    );
}

/// The ids the main pass gives the captures of the record `text`: each part's id (a broken
/// part keeps its span's), the record's own, none for a record that holds no capture or
/// breaks the shape as a whole (it is named by its source).
fn main_pass_ids(text: &str) -> Vec<String> {
    use verdict::core::capture::{Payload, parse_record};
    let source = verdict::core::record_ref::RecordRef::new("captures/t.jsonl", Some(1));
    match parse_record(text, &source) {
        Ok(c) => match c.payload {
            Payload::Parts(parts) => parts
                .into_iter()
                .map(|p| match p {
                    Ok(c) => c.id,
                    Err(e) => e.id.expect("a broken span keeps its id"),
                })
                .collect(),
            Payload::NotACapture => Vec::new(),
            _ => vec![c.id],
        },
        Err(e) => e.id.into_iter().collect(),
    }
}

/// The duplicate-id pre-pass reads an OTLP record's span ids without building the record
/// (`otlp::span_ids`): they are exactly the main pass's capture ids, on every OTLP record
/// of samples/traces and on records built to trip a typed reading (escapes in ids and in
/// member names, every AnyValue kind of the attributes that decide a span's kind, repeated
/// attribute keys, member order, spans that are not captures, records the main pass
/// rejects).
#[test]
fn span_ids_are_the_main_pass_capture_ids() {
    use verdict::core::shape::otlp::span_ids;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces");
    let mut records = Vec::new();
    for file in [
        "otel/collector.jsonl",
        "otel/export.json",
        "openinference/phoenix.jsonl",
        "retries/otel-retries.jsonl",
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        if file.ends_with(".json") {
            records.push(text);
        } else {
            records.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned),
            );
        }
    }
    let mut ids = 0;
    for text in &records {
        let want = main_pass_ids(text);
        assert_eq!(span_ids(text.as_bytes()), want, "{text}");
        ids += want.len();
    }
    assert_eq!((records.len(), ids), (18, 17), "the samples' OTLP records");

    let op = |v: Value| json!({"key": "gen_ai.operation.name", "value": v});
    let one =
        |span: Value| json!({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).to_string();
    let with = |attrs: Value| one(json!({"traceId": "t1", "spanId": "s1", "attributes": attrs}));
    let cases: Vec<(String, &[&str])> = vec![
        // escapes: in the ids, and in member names
        (
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t\u0031\"x\\","spanId":"s\u00e9","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]}]}]}]}"#.into(),
            &["t1\"x\\/sé"],
        ),
        (
            r#"{"resource\u0053pans":[{"scope\u0053pans":[{"sp\u0061ns":[{"\u0074raceId":"t","spanI\u0064":"s","attribute\u0073":[{"k\u0065y":"gen_ai.operation.n\u0061me","v\u0061lue":{"stringV\u0061lue":"ch\u0061t"}}]}]}]}]}"#.into(),
            &["t/s"],
        ),
        // AnyValue kinds of gen_ai.operation.name: plain, string, intValue that is no
        // number, other kinds that are no string, an empty AnyValue, stringValue first
        (with(json!([op(json!("chat"))])), &["t1/s1"]),
        (with(json!([op(json!({"intValue": "chat"}))])), &["t1/s1"]),
        (with(json!([op(json!({"intValue": 7}))])), &[]),
        (with(json!([op(json!({"intValue": "7"}))])), &[]),
        (with(json!([op(json!({"doubleValue": "chat"}))])), &["t1/s1"]),
        (with(json!([op(json!({"boolValue": "chat"}))])), &["t1/s1"]),
        (with(json!([op(json!({"bytesValue": "chat"}))])), &["t1/s1"]),
        (with(json!([op(json!({"arrayValue": {"values": [{"stringValue": "chat"}]}}))])), &[]),
        (with(json!([op(json!({"kvlistValue": {"values": []}}))])), &[]),
        (with(json!([op(json!({}))])), &[]),
        (with(json!([op(json!({"other": "chat"}))])), &[]),
        (with(json!([op(json!({"intValue": 1, "stringValue": "chat"}))])), &["t1/s1"]),
        (with(json!([op(json!({"stringValue": "execute_tool"}))])), &["t1/s1"]),
        (with(json!([op(json!({"stringValue": "embeddings"}))])), &[]),
        // a value before its key; a missing value; a key that is no string
        (with(json!([{"value": {"stringValue": "chat"}, "key": "gen_ai.operation.name"}])), &["t1/s1"]),
        (with(json!([{"key": "gen_ai.operation.name"}])), &[]),
        (with(json!([{"key": 5, "value": "chat"}, "x", 3])), &[]),
        // a later attribute of the same key wins
        (with(json!([op(json!("embeddings")), op(json!("chat"))])), &["t1/s1"]),
        (with(json!([op(json!("chat")), op(json!("embeddings"))])), &[]),
        // the object form of attributes
        (with(json!({"gen_ai.operation.name": {"stringValue": "chat"}})), &["t1/s1"]),
        // OpenLLMetry's llm.request.type, shadowed by any gen_ai.operation.name
        (with(json!([{"key": "llm.request.type", "value": {"stringValue": "chat"}}])), &["t1/s1"]),
        (
            with(json!([op(json!({"intValue": 1})), {"key": "llm.request.type", "value": {"stringValue": "chat"}}])),
            &[],
        ),
        // OpenInference: LLM and TOOL spans are captures, any other kind shadows GenAI
        (with(json!([{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}}])), &["t1/s1"]),
        (with(json!([{"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}}])), &["t1/s1"]),
        (
            with(json!([{"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}}, op(json!("chat"))])),
            &[],
        ),
        // not GenAI spans; no attributes; attributes of another kind
        (with(json!([{"key": "http.request.method", "value": {"stringValue": "POST"}}])), &[]),
        (one(json!({"traceId": "t1", "spanId": "s1"})), &[]),
        (with(json!("chat")), &[]),
        (with(Value::Null), &[]),
        // member order: attributes before the ids, spans before their scope's other members
        (
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}],"name":"n","spanId":"b","traceId":"a"}],"scope":{"name":"x"}}],"resource":{}}]}"#.into(),
            &["a/b"],
        ),
        // several spans and scopes in file order; a non-object resource or scope is skipped
        (
            json!({"resourceSpans": [7, {"scopeSpans": [null, {"spans": [
                {"traceId": "t", "spanId": "1", "attributes": [op(json!("chat"))]},
                {"traceId": "t", "spanId": "2", "attributes": []},
                {"traceId": "t", "spanId": "3", "attributes": [op(json!("execute_tool"))]}
            ]}]}, {"scopeSpans": [{"spans": [{"traceId": "u", "spanId": "4", "attributes": [op(json!("chat"))]}]}]}]})
            .to_string(),
            &["t/1", "t/3", "u/4"],
        ),
        // old exports: instrumentationLibrarySpans, unless scopeSpans is there (even null)
        (
            json!({"resourceSpans": [{"instrumentationLibrarySpans": [{"spans": [{"traceId": "t", "spanId": "1", "attributes": [op(json!("chat"))]}]}]}]}).to_string(),
            &["t/1"],
        ),
        (
            json!({"resourceSpans": [{"instrumentationLibrarySpans": [{"spans": [{"traceId": "t", "spanId": "1", "attributes": [op(json!("chat"))]}]}], "scopeSpans": null}]}).to_string(),
            &[],
        ),
        (
            json!({"resourceSpans": [{"instrumentationLibrarySpans": "junk", "scopeSpans": [{"spans": [{"traceId": "t", "spanId": "1", "attributes": [op(json!("chat"))]}]}]}]}).to_string(),
            &["t/1"],
        ),
        // records the main pass rejects as a whole: named by their source, no span ids
        (one(json!({"spanId": "s1", "attributes": [op(json!("chat"))]})), &[]),
        (one(json!({"traceId": "", "spanId": "s1", "attributes": [op(json!("chat"))]})), &[]),
        (one(json!({"traceId": 5, "spanId": "s1", "attributes": [op(json!("chat"))]})), &[]),
        (one(json!("a span")), &[]),
        (json!({"resourceSpans": {"scopeSpans": []}}).to_string(), &[]),
        (json!({"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]}).to_string(), &[]),
        (json!({"resourceSpans": [{"scopeSpans": 3}]}).to_string(), &[]),
        (json!({"resourceSpans": null}).to_string(), &[]),
        // a span the main pass reads but finds broken keeps its id
        (
            with(json!([op(json!("chat")), {"key": "gen_ai.output.messages", "value": {"stringValue": "[not json"}}])),
            &["t1/s1"],
        ),
        // a non-capture span needs no ids
        (
            json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": []}, {"traceId": "t", "spanId": "2", "attributes": [op(json!("chat"))]}]}]}]}).to_string(),
            &["t/2"],
        ),
        // not JSON, or no OTLP record
        (r#"{"resourceSpans": [}"#.into(), &[]),
    ];
    for (text, want) in &cases {
        assert_eq!(main_pass_ids(text), *want, "main pass: {text}");
        assert_eq!(span_ids(text.as_bytes()), *want, "pre-pass: {text}");
    }
    assert!(span_ids(br#"{"id": "x", "output": "{}"}"#).is_empty());
}

/// A `TracesData` line of GenAI chat spans of the trace `t`, each `(spanId, parentSpanId,
/// start second)`, each answering `output`.
fn chat_spans_line(t: &str, spans: &[(&str, &str, u64)], output: &str) -> String {
    let message = json!([{"role": "assistant", "parts": [{"type": "text", "content": output}],
                          "finish_reason": "stop"}]);
    let spans: Vec<Value> = spans
        .iter()
        .map(|(s, p, at)| {
            json!({"traceId": t, "spanId": s, "parentSpanId": p,
                   "startTimeUnixNano": (at * 1_000_000_000).to_string(),
                   "attributes": [
                       {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                       {"key": "gen_ai.output.messages", "value": {"stringValue": message.to_string()}}]})
        })
        .collect();
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

/// A workspace whose span chain keys are shared across records, within one record, with a
/// capture record's `chain` (also one written `\u002f`), by a record whose `resourceSpans`
/// is written with an escape, and one key seen once; returns it and its capture files.
fn shared_keys_workspace() -> (tempfile::TempDir, Vec<std::path::PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    std::fs::write(dir.path().join("schemas/ticket.schema.json"), TICKET).unwrap();
    let (bad, good) = (r#"{"title": "a"}"#, r#"{"title": "a", "priority": "low"}"#);
    let t = "0af7651916cd43dd8448eb211c80319c";
    let spans = [
        chat_spans_line(t, &[("00000000000000a1", "p1", 10)], bad),
        chat_spans_line(t, &[("00000000000000a2", "p1", 11)], good),
        chat_spans_line(
            t,
            &[
                ("00000000000000a3", "p2", 21),
                ("00000000000000a4", "p2", 20),
            ],
            good,
        ),
        chat_spans_line(t, &[("00000000000000a5", "p3", 30)], good),
        chat_spans_line(t, &[("00000000000000a6", "p4", 40)], bad),
        chat_spans_line(t, &[("00000000000000a7", "p5", 50)], bad).replacen(
            "resourceSpans",
            "resourceSp\\u0061ns",
            1,
        ),
        chat_spans_line(t, &[("00000000000000a8", "p5", 51)], good),
        chat_spans_line(t, &[("00000000000000a9", "p6", 60)], bad),
    ];
    std::fs::write(dir.path().join("captures/spans.jsonl"), spans.join("\n")).unwrap();
    let records = [
        format!(
            r#"{{"id": "rec-1", "chain": "{t}/p4", "output": {}}}"#,
            json!(good)
        ),
        format!(
            r#"{{"id": "rec-2", "chain": "{t}\u002fp6", "output": {}}}"#,
            json!(good)
        ),
    ];
    std::fs::write(
        dir.path().join("captures/records.jsonl"),
        records.join("\n"),
    )
    .unwrap();
    let files = vec![
        dir.path().join("captures/records.jsonl"),
        dir.path().join("captures/spans.jsonl"),
    ];
    (dir, files)
}

/// The pre-pass counts each span's natural chain key (`ids::chain_keys_in`): `check` keeps
/// a step only for a span whose key another capture may have, and leaves the span whose
/// key is seen once out of its chain set (`docs/chains.md#memory`).
#[test]
fn the_pre_pass_knows_which_span_chain_keys_are_shared() {
    use verdict::engine::ids::{Scan, chain_keys_in};
    let (dir, files) = shared_keys_workspace();
    let ws = verdict::core::workspace::Workspace::load(dir.path()).unwrap();
    let keys = Scan::read(&ws, &files).chain_keys();
    let t = "0af7651916cd43dd8448eb211c80319c";
    let lone: Vec<bool> = ["p1", "p2", "p3", "p4", "p5", "p6", "p7"]
        .iter()
        .map(|p| keys.lone(&format!("{t}/{p}")))
        .collect();
    // p7: no capture has it (a key the pre-pass never read is no one else's either)
    assert_eq!(lone, [false, false, true, false, false, false, true]);
    assert_eq!(keys.len(), 5);
    // what one record gives: each span's key (twice for two siblings), a capture record's
    // `chain` holding a `/` (decoded), no value without one
    let keys_of = |text: &str| {
        let mut out: Vec<String> = Vec::new();
        chain_keys_in(
            text.as_bytes(),
            "captures/x.jsonl",
            true,
            &mut |_| {},
            &mut |k| {
                out.push(String::from_utf8(k.to_vec()).unwrap());
            },
        );
        out
    };
    assert_eq!(
        keys_of(&chat_spans_line(
            "t1",
            &[("s1", "p", 1), ("s2", "p", 2), ("s3", "", 3)],
            "{}"
        )),
        ["t1/p", "t1/p"]
    );
    assert_eq!(
        keys_of(
            r#"{"id": "a/b", "chain": "c\/d", "trace_id": "e/f", "custom_id": "g", "key": "h\u002fi"}"#
        ),
        ["c/d", "e/f", "h/i"]
    );
    assert_eq!(
        keys_of(r#"{"id": "a/b", "chain": "c/d", "trace_id": 7, "recordId": "r/1"}"#),
        ["c/d", "r/1"]
    );
    assert!(keys_of(r#"{"id": "a", "chain": "c", "output": "x/y"}"#).is_empty());
}

/// Spans whose chain key is shared make the same chains whether the other attempt is a
/// span of another record, a sibling in the same record, a capture record's `chain`, or a
/// record whose `resourceSpans` is written with an escape; a key seen once is no chain.
#[test]
fn span_chains_whose_keys_are_shared_anywhere() {
    let (dir, _) = shared_keys_workspace();
    let out = common::verdict_in(dir.path(), &["check", "--format", "json", "."]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<Value> = report["chains"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!([
                r["chain"],
                r["linked_by"],
                r["attempts"],
                r["outcome"],
                r["sources"]
            ])
        })
        .collect();
    let t = "0af7651916cd43dd8448eb211c80319c";
    assert_eq!(
        rows,
        [
            // a capture record's `chain` names the chain (records.jsonl is read first)
            json!([
                format!("{t}/p4"),
                "record",
                2,
                "unrecovered",
                ["captures/records.jsonl:1", "captures/spans.jsonl:5"]
            ]),
            json!([
                format!("{t}/p6"),
                "record",
                2,
                "unrecovered",
                ["captures/records.jsonl:2", "captures/spans.jsonl:8"]
            ]),
            json!([
                format!("{t}/p1"),
                "natural",
                2,
                "recovered",
                ["captures/spans.jsonl:1", "captures/spans.jsonl:2"]
            ]),
            // two sibling spans of one record (ordered by start time)
            json!([
                format!("{t}/p2"),
                "natural",
                2,
                "first-pass",
                ["captures/spans.jsonl:3", "captures/spans.jsonl:3"]
            ]),
            // `resourceSp\u0061ns` on line 6
            json!([
                format!("{t}/p5"),
                "natural",
                2,
                "recovered",
                ["captures/spans.jsonl:6", "captures/spans.jsonl:7"]
            ]),
        ],
        "{}",
        serde_json::to_string_pretty(&report["chains"]["rows"]).unwrap()
    );
}
