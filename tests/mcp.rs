//! MCP session logs (`docs/record-shapes.md#mcp`): JSON-RPC 2.0 messages where only
//! `tools/call` requests and their responses are captures, checked against the contracts
//! the `tools/list` results declare. The payloads follow the MCP specification's examples
//! (modelcontextprotocol.io/specification/2025-11-25/server/tools: `get_weather`,
//! `get_weather_data`, the rate-limit tool error, the -32602 unknown-tool error).
//!
//! Each case asserts id, format, provider, stage, decision, reason, pointer and message
//! exactly; then the records that are no capture are left out of every count, and the live
//! session follows a changed `tools/list` as a fresh `check` sees it.

use crate::common::verdicts;
use std::collections::BTreeMap;
use std::path::Path;
use verdict::core::verdict::Verdict;
use verdict::engine::session::{Change, Session};

/// The weather tool of the spec, with an `outputSchema`, and an `echo` tool without one.
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_weather","title":"Weather Data Retriever","description":"Get current weather data for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or zip code"}},"required":["location"]},"outputSchema":{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"},"humidity":{"type":"number"}},"required":["temperature","conditions","humidity"]}},{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}}]}}"#;

/// One session: every kind of message, one per line (line numbers in the comments).
pub(crate) fn session() -> Vec<String> {
    [
        // 1-3: the handshake: no captures
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        // 4-5: tools/list: no captures, the contracts
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        TOOLS_LIST,
        // 6-7: a good call and its structured result
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"temperature\": 22.5, \"conditions\": \"Partly cloudy\", \"humidity\": 65}"}],"structuredContent":{"temperature":22.5,"conditions":"Partly cloudy","humidity":65}}}"#,
        // 8-9: arguments that break inputSchema; structuredContent that breaks outputSchema
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":7}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"temperature":"hot","conditions":"sunny","humidity":10}}}"#,
        // 10-12: text-only results, parsed strictly
        r#"{"jsonrpc":"2.0","id":"t-4","result":{"content":[{"type":"text","text":"{\"temperature\": 1, \"conditions\": \"snow\", \"humidity\": 80}"}]}}"#,
        r#"{"jsonrpc":"2.0","id":"t-4","method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Oslo"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{\"temperature\": 1, \"conditions\": \"snow\", \"humidity\": 80,}"}]}}"#,
        // 13: a notification in between
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#,
        // 14-15: the call of 12; a tool execution error
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Bergen"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Paris"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"Failed to fetch weather data: API rate limit exceeded\u001b[31m"}],"isError":true}}"#,
        // 17-20: JSON-RPC errors: internal (transient) and invalid params
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Rome"}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Lima"}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid params"}}"#,
        // 21-22: a tool without outputSchema
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}]}}"#,
        // 23-24 hostile: structuredContent and isError both (isError wins)
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Kyiv"}}}"#,
        r#"{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"upstream down"}],"structuredContent":{"temperature":1,"conditions":"x","humidity":1},"isError":true}}"#,
        // 25: an id that is an object
        r#"{"jsonrpc":"2.0","id":{"n":11},"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Quito"}}}"#,
        // 26-27: a call for a tool no tools/list declared, and its -32602 error
        r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_wether","arguments":{"location":"Oslo"}}}"#,
        r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"Unknown tool: get_wether"}}"#,
        // 28: a result whose request is not in the file
        r#"{"jsonrpc":"2.0","id":99,"result":{"content":[{"type":"text","text":"{}"}]}}"#,
        // 29: an error that answers no request (null id): no capture
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A second session whose tools/list declares a tool with a broken inputSchema, and calls
/// both it and a tool the first session declared.
pub(crate) fn broken_session() -> Vec<String> {
    [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"broken","inputSchema":{"type":"objekt"}}]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broken","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","extra":1}}}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A workspace of MCP logs only (no schemas folder): `captures/NAME` holds `lines`.
fn workspace(logs: &[(&str, Vec<String>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, lines) in logs {
        let p = dir.path().join("captures").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    }
    dir
}

/// `source id format provider stage decision reason pointer: message`.
fn row(v: &Verdict) -> String {
    format!("{} {}", v.source, crate::common::row_with_pointer(v))
}

const S: &str = "captures/s.jsonl";

#[test]
fn a_session_log_gives_one_verdict_per_tools_call_request_and_response() {
    let dir = workspace(&[("s.jsonl", session())]);
    let got: Vec<String> = verdicts(dir.path()).iter().map(row).collect();
    let want = [
        "captures/s.jsonl:6 captures/s.jsonl#2 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:7 captures/s.jsonl#2/result mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:8 captures/s.jsonl#3 mcp mcp schema regenerate SCHEMA_MISMATCH /location: 7 is not of type \"string\"",
        "captures/s.jsonl:9 captures/s.jsonl#3/result mcp mcp schema regenerate SCHEMA_MISMATCH /temperature: \"hot\" is not of type \"number\"",
        "captures/s.jsonl:10 captures/s.jsonl#t-4/result mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:11 captures/s.jsonl#t-4 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:12 captures/s.jsonl#5/result mcp mcp parse regenerate INVALID_JSON -: trailing comma before \"}\"",
        "captures/s.jsonl:14 captures/s.jsonl#5 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:15 captures/s.jsonl#6 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:16 captures/s.jsonl#6/result mcp mcp response reject TOOL_ERROR -: the tool reported an error (result.isError is true): \"Failed to fetch weather data: API rate limit exceeded\\u001b[31m\"",
        "captures/s.jsonl:17 captures/s.jsonl#7 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:18 captures/s.jsonl#7/error mcp mcp response retry REQUEST_ERROR -: error: request failed with code -32603 (\"Internal error\"): transient, retry",
        "captures/s.jsonl:19 captures/s.jsonl#8 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:20 captures/s.jsonl#8/error mcp mcp response reject REQUEST_ERROR -: error: request failed with code -32602 (\"Invalid params\"): not transient",
        "captures/s.jsonl:21 captures/s.jsonl#9 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:22 captures/s.jsonl#9/result mcp - input reject UNKNOWN_CONTRACT -: tool \"echo\" declares no outputSchema (tools/list at captures/s.jsonl:5); tried contract \"mcp/echo.output\" (\"schemas/mcp/echo.output.schema.json\" and the tools/list results)",
        "captures/s.jsonl:23 captures/s.jsonl#10 mcp mcp ready ready-for-commit - -: ",
        "captures/s.jsonl:24 captures/s.jsonl#10/result mcp mcp response reject TOOL_ERROR -: the tool reported an error (result.isError is true): \"upstream down\" (its structuredContent is not checked: isError wins)",
        "captures/s.jsonl:25 captures/s.jsonl:25 mcp - input reject INVALID_CAPTURE -: mcp record: `id` must be a string or a number, found an object",
        "captures/s.jsonl:26 captures/s.jsonl#12 mcp - input reject UNKNOWN_CONTRACT -: no tools/list result in the workspace's captures declares tool \"get_wether\"; tried contract \"mcp/get_wether.input\" (\"schemas/mcp/get_wether.input.schema.json\" and the tools/list results)",
        "captures/s.jsonl:27 captures/s.jsonl#12/error mcp - input reject UNKNOWN_CONTRACT -: no tools/list result in the workspace's captures declares tool \"get_wether\"; tried contract \"mcp/get_wether.output\" (\"schemas/mcp/get_wether.output.schema.json\" and the tools/list results)",
        "captures/s.jsonl:28 captures/s.jsonl#99/result mcp - input reject UNKNOWN_CONTRACT -: the request of this response (JSON-RPC id \"99\") is not in \"captures/s.jsonl\", so its tool and contract are unknown",
    ];
    assert_eq!(got, want);
}

#[test]
fn an_undeclared_tool_is_hinted_and_a_broken_input_schema_fails_only_its_calls() {
    let dir = workspace(&[("s.jsonl", session()), ("t.jsonl", broken_session())]);
    let vs = verdicts(dir.path());
    let by_id: BTreeMap<&str, &Verdict> = vs.iter().map(|v| (v.id.as_str(), v)).collect();
    let typo = &by_id["captures/s.jsonl#12"].errors[0];
    assert_eq!(typo.hint.as_deref(), Some("did you mean `get_weather`?"));
    let broken = by_id["captures/t.jsonl#2"];
    assert_eq!(
        row(broken),
        "captures/t.jsonl:3 captures/t.jsonl#2 mcp - input reject CONTRACT_ERROR -: captures/t.jsonl:2 tools/list \"broken\" inputSchema at /type does not meet its meta-schema: \"objekt\" is not valid under any of the schemas listed in the 'anyOf' keyword"
    );
    assert_eq!(broken.contract.as_deref(), Some("mcp/broken.input"));
    // another session's declaration serves this session's call
    assert_eq!(
        row(by_id["captures/t.jsonl#3"]),
        "captures/t.jsonl:4 captures/t.jsonl#3 mcp mcp schema regenerate SCHEMA_MISMATCH : Additional properties are not allowed ('extra' was unexpected)"
    );
    // the first session's verdicts are untouched by the broken tool
    assert_eq!(by_id["captures/s.jsonl#2"].stage.as_str(), "ready");
}

#[test]
fn explicit_schema_files_win_and_rules_attach() {
    let dir = workspace(&[("s.jsonl", session())]);
    let schemas = dir.path().join("schemas/mcp");
    std::fs::create_dir_all(&schemas).unwrap();
    // an explicit input schema that also bans New York, and a rule on the output
    std::fs::write(
        schemas.join("get_weather.input.schema.json"),
        r#"{"type":"object","properties":{"location":{"type":"string","not":{"const":"New York"}}},"required":["location"]}"#,
    )
    .unwrap();
    std::fs::write(
        schemas.join("get_weather.output.rules.toml"),
        "[[rule]]\nreason = \"TOO_HUMID\"\nrule = \"proposal.humidity < 50.0\"\nmessage = \"too humid\"\nfield = \"/humidity\"\n",
    )
    .unwrap();
    let vs = verdicts(dir.path());
    let by_id: BTreeMap<&str, &Verdict> = vs.iter().map(|v| (v.id.as_str(), v)).collect();
    assert_eq!(
        row(by_id["captures/s.jsonl#2"]),
        "captures/s.jsonl:6 captures/s.jsonl#2 mcp mcp schema regenerate SCHEMA_MISMATCH /location: {\"const\":\"New York\"} is not allowed for \"New York\""
    );
    assert_eq!(
        row(by_id["captures/s.jsonl#2/result"]),
        "captures/s.jsonl:7 captures/s.jsonl#2/result mcp mcp business reject TOO_HUMID /humidity: too humid"
    );
}

#[test]
fn records_that_are_no_capture_are_not_counted_by_check() {
    let dir = workspace(&[("s.jsonl", session())]);
    let out = crate::common::run::run(
        &["check", "--format", "json", "."],
        dir.path(),
        std::time::Duration::from_secs(30),
    );
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    // 29 lines; 7 are no capture (initialize and its result, two notifications, tools/list
    // and its result, the null-id error)
    assert_eq!(doc["summary"]["captures"], 22, "{}", out.stdout);
    let sources: Vec<&str> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["source"].as_str().unwrap())
        .collect();
    for skipped in [1, 2, 3, 4, 5, 13, 29] {
        assert!(
            !sources.contains(&format!("{S}:{skipped}").as_str()),
            "{skipped}"
        );
    }
}

/// The live session's verdicts, by source, from its changes.
#[derive(Default)]
struct Live(BTreeMap<String, String>);

impl Live {
    fn take(&mut self, changes: Vec<Change>) {
        for c in changes {
            match c {
                Change::Updated { evaluation, .. } => {
                    let v = &evaluation.verdict;
                    self.0.insert(v.source.to_string(), row(v));
                }
                Change::Removed { source, .. } => {
                    self.0.remove(source.as_str());
                }
            }
        }
    }
}

fn fresh(root: &Path) -> BTreeMap<String, String> {
    verdicts(root)
        .iter()
        .map(|v| (v.source.to_string(), row(v)))
        .collect()
}

#[test]
fn the_live_session_follows_a_changed_tools_list_and_request_index() {
    let dir = workspace(&[("s.jsonl", session()), ("t.jsonl", broken_session())]);
    let root = dir.path();
    let (mut session, changes) = Session::open(root).unwrap();
    let mut live = Live::default();
    live.take(changes);
    assert_eq!(live.0, fresh(root), "first run");
    let s = root.join(S);
    let t = root.join("captures/t.jsonl");
    let edit = |path: &Path, from: &str, to: &str| {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains(from), "{from}");
        std::fs::write(path, text.replacen(from, to, 1)).unwrap();
    };
    // the broken inputSchema fixed in t: its call passes
    edit(&t, r#"{"type":"objekt"}"#, r#"{"type":"object"}"#);
    live.take(session.apply(std::slice::from_ref(&t)).unwrap());
    assert_eq!(live.0, fresh(root), "fixed inputSchema");
    assert!(live.0["captures/t.jsonl:3"].contains(" ready "));
    // get_weather's outputSchema changed in s: results in s re-validated
    edit(
        &s,
        r#""humidity":{"type":"number"}"#,
        r#""humidity":{"type":"string"}"#,
    );
    live.take(session.apply(std::slice::from_ref(&s)).unwrap());
    assert_eq!(live.0, fresh(root), "changed outputSchema");
    assert!(live.0["captures/s.jsonl:7"].contains("/humidity"));
    // the tool list moves down a line (its declarations' place changes) and echo goes:
    // t's echo call becomes undeclared
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools""#;
    edit(
        &s,
        list,
        &format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}{}{list}"#,
            "\n"
        ),
    );
    edit(&s, r#""name":"echo""#, r#""name":"echo2""#);
    live.take(session.apply(std::slice::from_ref(&s)).unwrap());
    assert_eq!(live.0, fresh(root), "tool renamed");
    assert!(live.0["captures/t.jsonl:4"].contains("UNKNOWN_CONTRACT"));
    // a request appended for the orphan result's id: the result is paired
    std::fs::write(
        &s,
        std::fs::read_to_string(&s).unwrap()
            + r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Oslo"}}}"#
            + "\n",
    )
    .unwrap();
    live.take(session.apply(std::slice::from_ref(&s)).unwrap());
    assert_eq!(live.0, fresh(root), "request appended");
    // the tools/list file deleted: every call in t is undeclared
    std::fs::remove_file(&s).unwrap();
    live.take(session.apply(std::slice::from_ref(&s)).unwrap());
    assert_eq!(live.0, fresh(root), "session deleted");
    assert!(live.0["captures/t.jsonl:4"].contains("UNKNOWN_CONTRACT"));
}

#[test]
fn feedback_finds_an_mcp_capture_by_its_id() {
    let dir = workspace(&[("s.jsonl", session())]);
    let out = crate::common::run::run(
        &["feedback", "--format", "json", "captures/s.jsonl#3"],
        dir.path(),
        std::time::Duration::from_secs(30),
    );
    let fb: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    assert_eq!(fb["id"], "captures/s.jsonl#3", "{fb:#}");
    assert!(
        fb["message"].as_str().unwrap().contains("/location"),
        "{fb:#}"
    );
}

#[test]
fn odd_tool_results_and_malformed_messages() {
    // the tools/list has id 1: the calls use other ids (a request id 1 would make it the
    // result of that call)
    let mut lines = vec![TOOLS_LIST.to_string()];
    let call = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_weather","arguments":{{"location":"x"}}}}}}"#
        )
    };
    for (id, result) in [
        (
            11,
            r#"{"content":[{"type":"text","text":"{\"temperature\":1,\"conditions\":\"a\",\"humidity\":2}"},{"type":"text","text":"nope"}]}"#,
        ),
        (
            12,
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#,
        ),
        (13, r#"{"content":[],"isError":"true"}"#),
    ] {
        lines.push(call(id));
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        ));
    }
    lines.extend(
        [
            r#"{"jsonrpc":"1.0","id":4,"method":"tools/call","params":{"name":"get_weather"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":"{}"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"result":{"content":[]},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":"x","message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":8}"#,
        ]
        .map(str::to_owned),
    );
    let dir = workspace(&[("s.jsonl", lines)]);
    let vs = verdicts(dir.path());
    let got: Vec<String> = vs.iter().map(row).collect();
    assert_eq!(
        got,
        [
            "captures/s.jsonl:2 captures/s.jsonl#11 mcp mcp ready ready-for-commit - -: ",
            "captures/s.jsonl:3 captures/s.jsonl#11/result mcp mcp ready ready-for-commit - -: ",
            "captures/s.jsonl:4 captures/s.jsonl#12 mcp mcp ready ready-for-commit - -: ",
            "captures/s.jsonl:5 captures/s.jsonl#12/result mcp mcp response regenerate NO_OUTPUT -: the tool result has no structuredContent and no text content block",
            "captures/s.jsonl:6 captures/s.jsonl#13 mcp mcp ready ready-for-commit - -: ",
            "captures/s.jsonl:7 captures/s.jsonl#13/result mcp mcp input reject INVALID_CAPTURE -: mcp record: `result.isError` must be a boolean, found a string",
            "captures/s.jsonl:8 captures/s.jsonl:8 mcp - input reject INVALID_CAPTURE -: mcp record: `jsonrpc` is \"1.0\": expected \"2.0\"",
            "captures/s.jsonl:9 captures/s.jsonl#5 mcp - input reject INVALID_CAPTURE -: mcp record: `params.arguments` must be an object, found a string",
            "captures/s.jsonl:10 captures/s.jsonl#6 mcp - input reject INVALID_CAPTURE -: mcp record: `result` and `error` are both present: a response has one of them",
            "captures/s.jsonl:11 captures/s.jsonl#7/error mcp - input reject INVALID_CAPTURE -: mcp record: `error.code` must be an integer, found a string",
            "captures/s.jsonl:12 captures/s.jsonl:12 mcp - input reject INVALID_CAPTURE -: mcp record: `method` is missing, and so are `result` and `error`: a JSON-RPC message is a request, a notification or a response",
        ]
    );
    // the tool schemas are linted as schema files are (OPEN_OBJECT: no
    // additionalProperties), and the ignored text block is said once
    let codes: Vec<&str> = vs[1].warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["OPEN_OBJECT", "TEXT_BLOCKS_IGNORED"]);
    let w = &vs[1].warnings[1..];
    assert_eq!(
        w[0].message,
        "the tool result has no structuredContent and 2 text content blocks: the first is validated, the other is ignored (return structuredContent)"
    );
}

#[test]
fn tool_schemas_do_not_take_the_place_of_the_only_schema_file() {
    let dir = workspace(&[("s.jsonl", session())]);
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    std::fs::write(
        dir.path().join("schemas/only.schema.json"),
        r#"{"type":"object","required":["a"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("captures/c.json"),
        r#"{"id":"c","output":"{}"}"#,
    )
    .unwrap();
    let vs = verdicts(dir.path());
    let c = vs.iter().find(|v| v.id == "c").unwrap();
    assert_eq!(
        row(c),
        "captures/c.json c capture output schema regenerate SCHEMA_MISMATCH : \"a\" is a required property"
    );
    assert_eq!(c.contract.as_deref(), Some("only"));
    // and the MCP captures keep their tool contracts
    let call = vs.iter().find(|v| v.id == "captures/s.jsonl#2").unwrap();
    assert_eq!(call.contract.as_deref(), Some("mcp/get_weather.input"));
    assert_eq!(call.stage.as_str(), "ready");
}

/// A compressed session log (`.jsonl.gz`, `.jsonl.zst`) is read inflated for its MCP facts
/// too (the tools/list contracts and the request index): its verdicts are those of the
/// plain log, named by the compressed file.
#[test]
fn a_compressed_session_log_gives_the_plain_logs_verdicts() {
    use std::io::Write as _;
    let plain = workspace(&[("s.jsonl", session())]);
    let text = session().join("\n") + "\n";
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap()
    };
    for (name, bytes) in [
        ("s.jsonl.gz", gz),
        ("s.jsonl.zst", zstd::encode_all(text.as_bytes(), 3).unwrap()),
    ] {
        let dir = workspace(&[]);
        std::fs::create_dir_all(dir.path().join("captures")).unwrap();
        std::fs::write(dir.path().join("captures").join(name), bytes).unwrap();
        let got: Vec<String> = verdicts(dir.path()).iter().map(row).collect();
        let want: Vec<String> = verdicts(plain.path())
            .iter()
            .map(|v| row(v).replace(S, &format!("captures/{name}")))
            .collect();
        assert_eq!(want.len(), 22);
        assert_eq!(got, want, "{name}");
    }
}
