//! The batch-request index (`docs/requests.md#batch-input-files`): `UNMATCHED_REQUEST` per
//! batch (a result of another batch does not match a request), ids whose index keys
//! collide never joining the wrong request, the light reading of input lines finding what
//! the whole reading finds (on every sample input line and on hostile lines), and
//! `batch_expired` / `batch_cancelled` results (INCOMPLETE, retry) matching their
//! requests.

use crate::requests::{TICKET, chat_input, chat_output, check, write};
use serde_json::{Value, json};
use verdict::core::record_ref::RecordRef;
use verdict::core::request::{self, Requests, RequestsBuilder};
use verdict::core::workspace::Workspace;

/// `code file` of each summary warning.
fn warned(summary: &Value) -> Vec<String> {
    summary["warnings"]
        .as_array()
        .map(|ws| {
            ws.iter()
                .map(|w| {
                    format!(
                        "{} {}",
                        w["code"].as_str().unwrap(),
                        w["file"].as_str().unwrap_or("-")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_request_is_unmatched_when_no_result_of_its_own_batch_has_its_id() {
    let tmp = tempfile::tempdir().unwrap();
    const DONE: &str = r#"{"title": "a", "priority": "low"}"#;
    write(
        tmp.path(),
        &[
            // batch a sent r1 and r2; only r2 came back in a's output
            (
                "batch-a_input.jsonl",
                [chat_input("r1", TICKET), chat_input("r2", TICKET)].join("\n"),
            ),
            ("batch-a_output.jsonl", chat_output("r2", DONE)),
            // batch b sent r1, and r1 came back in b's output
            ("batch-b_input.jsonl", chat_input("r1", TICKET)),
            ("batch-b_output.jsonl", chat_output("r1", DONE)),
        ],
    );
    let (vs, summary, code) = check(tmp.path());
    assert_eq!(vs.len(), 2);
    assert_eq!(code, Some(0));
    assert_eq!(
        summary["warnings"],
        json!([{"code": "UNMATCHED_REQUEST", "severity": "warning", "file": "batch-a_input.jsonl:1",
                "pointer": "/custom_id",
                "message": "request for id \"r1\" has no result (no capture that may join it, of its own batch, has its id)"}])
    );
}

#[test]
fn expired_and_cancelled_results_are_incomplete_retry_and_match_their_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let error = |id: &str, code: &str, message: &str| {
        json!({"id": format!("batch_req_{id}"), "custom_id": id, "response": null,
               "error": {"code": code, "message": message}})
        .to_string()
    };
    write(
        tmp.path(),
        &[
            (
                "batch_abc_input.jsonl",
                [chat_input("e1", TICKET), chat_input("e2", TICKET)].join("\n"),
            ),
            (
                "batch_abc_error.jsonl",
                [
                    error(
                        "e1",
                        "batch_expired",
                        "This request could not be executed before the completion window expired.",
                    ),
                    error("e2", "batch_cancelled", "The batch was cancelled."),
                ]
                .join("\n"),
            ),
        ],
    );
    let (vs, summary, code) = check(tmp.path());
    let rows: Vec<String> = vs
        .iter()
        .map(|v| {
            format!(
                "{} {} {} {} {} {}",
                v["id"].as_str().unwrap(),
                v["format"].as_str().unwrap(),
                v["stage"].as_str().unwrap(),
                v["decision"].as_str().unwrap(),
                v["reason"].as_str().unwrap(),
                v["errors"][0]["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            "e1 openai-batch response retry INCOMPLETE the batch request did not run: error.code \"batch_expired\" (\"This request could not be executed before the completion window expired.\"); send it again in a new batch",
            "e2 openai-batch response retry INCOMPLETE the batch request did not run: error.code \"batch_cancelled\" (\"The batch was cancelled.\"); send it again in a new batch",
        ]
    );
    assert_eq!(code, Some(1));
    // both requests have a result (in the error file of their batch)
    assert_eq!(warned(&summary), Vec::<String>::new());
}

/// A workspace of one input file (`t1`, `t2`, `t4`) and one output file (`t1`, `t2`, `t3`)
/// whose names do not pair (every input request may be joined).
fn three_and_three() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let v2 = TICKET.replace(r#"["low", "high"]"#, r#"["low", "high", "urgent"]"#);
    write(
        tmp.path(),
        &[
            (
                "sent.jsonl",
                [
                    chat_input("t1", TICKET),
                    chat_input("t2", &v2),
                    chat_input("t4", TICKET),
                ]
                .join("\n"),
            ),
            (
                "got.jsonl",
                [
                    chat_output("t1", r#"{"title": "a", "priority": "urgent"}"#),
                    chat_output("t2", r#"{"title": "a", "priority": "urgent"}"#),
                    chat_output("t3", r#"{"title": "a", "priority": "low"}"#),
                ]
                .join("\n"),
            ),
        ],
    );
    tmp
}

/// `id request stage reason` of the library's verdicts of `ws`.
fn joined(ws: &Workspace) -> Vec<String> {
    ws.capture_files()
        .iter()
        .flat_map(|f| ws.read_file(f))
        .filter_map(|raw| ws.check(&raw))
        .map(|v| {
            format!(
                "{} {} {} {}",
                v.id,
                v.generation
                    .as_ref()
                    .map_or("-".into(), |g| g.request.clone()),
                v.stage.as_str(),
                v.reason.as_ref().map_or("-", |r| r.as_str())
            )
        })
        .collect()
}

#[test]
fn ids_whose_keys_collide_never_join_the_wrong_request() {
    let tmp = three_and_three();
    let loaded = Workspace::open(tmp.path()).unwrap();
    let (mcp, requests) = verdict::core::prescan::facts(&loaded, &loaded.capture_files());
    let ws = loaded.with_facts(mcp, requests);
    let want = [
        "t1 sent.jsonl:1 schema SCHEMA_MISMATCH",
        "t2 sent.jsonl:2 ready -",
        "t3 - input UNKNOWN_CONTRACT",
    ];
    assert_eq!(joined(&ws), want);
    // every id gets the same key: the ids themselves still decide
    let files: Vec<(String, request::FileRequests)> = ws
        .requests
        .files()
        .map(|f| (f.to_owned(), ws.requests.facts(f).unwrap().clone()))
        .collect();
    let colliding = Requests::of_file_list_masked(files, 0);
    assert!(colliding.has_id("t4") && !colliding.has_id("t3"));
    let ws = ws.with_requests(colliding);
    assert_eq!(joined(&ws), want);
    // t4 has no result; no id repeats (their keys do)
    let marks = ws.requests.marks();
    for id in ["t1", "t2", "t3"] {
        ws.requests
            .mark(request::Family::OpenAi, id, "got.jsonl", None, &marks);
    }
    let w: Vec<(String, Option<String>)> = ws
        .request_warnings(Some(&marks))
        .into_iter()
        .map(|w| (w.code, w.file))
        .collect();
    assert_eq!(
        w,
        [(
            "UNMATCHED_REQUEST".to_owned(),
            Some("sent.jsonl:3".to_owned())
        )]
    );
}

/// The requests of the lines `lines` of the file `name` of `ws`, read light where the
/// pre-pass does and whole: both must be equal.
fn both_ways(ws: &Workspace, name: &str, lines: &[String]) -> (request::FileRequests, usize) {
    let mut light = RequestsBuilder::default();
    let mut whole = RequestsBuilder::default();
    let mut found = 0;
    for (i, line) in lines.iter().enumerate() {
        let source = RecordRef::new(name, Some(i + 1));
        let read = |r: Result<&str, Value>, s: &RecordRef| ws.read_input(r, s);
        if let Some(input) = request::input_of_bytes(line.as_bytes(), &|| source.clone(), &read) {
            light.push_input(&source, input);
        }
        if let Some(r) = ws.read_input(Ok(line), &source) {
            whole.push(&source, r);
            found += 1;
        }
    }
    let (light, whole) = (light.finish(), whole.finish());
    assert_eq!(light, whole, "{name}");
    (light, found)
}

#[test]
fn a_light_read_finds_what_a_whole_read_finds() {
    // every line of every sample input file
    let mut seen = 0;
    for sample in ["samples/requests", "samples/logs"] {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(sample);
        let ws = Workspace::open(&root).unwrap();
        for f in ws.capture_files() {
            let name = ws.relative(&f);
            if !ws.is_log_file(&f) || name.ends_with(".gz") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            let (got, n) = both_ways(&ws, &name, &lines);
            assert_eq!(got.len(), n);
            seen += n;
        }
    }
    assert!(seen >= 10, "{seen} sample input lines");
    // hostile lines: each is a request both ways, or neither
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let lines: Vec<String> = [
        chat_input("plain", TICKET),
        // a repeated key in the messages, in the schema, in the body, at the top
        chat_input("dup-msg", TICKET).replace(r#""role": "user","#, r#""role": "user", "role": "user","#),
        chat_input("dup-schema", &TICKET.replace(r#""type": "object","#, r#""type": "object", "type": "object","#)),
        chat_input("dup-body", TICKET).replace(r#""model": "gpt-4.1-mini","#, r#""model": "a", "model": "b","#),
        chat_input("dup-top", TICKET).replace(r#""method": "POST","#, r#""method": "POST", "method": "POST","#),
        // escaped keys, at the top, in the body and in the schema
        chat_input("escaped", TICKET)
            .replace(r#""body""#, r#""\u0062ody""#)
            .replace(r#""response_format""#, r#""\u0072esponse_format""#)
            .replace(r#""required""#, r#""\u0072equired""#),
        // a number not held exactly in the messages, and in the schema
        chat_input("inexact-msg", TICKET).replace(r#""content": "x""#, r#""content": "x", "n": 1e400"#),
        chat_input("inexact-schema", &TICKET.replace(r#""type": "object","#, r#""type": "object", "maxProperties": 1e400,"#)),
        // nesting at the depth limit (127 levels) and past it, in the messages (the
        // content is at depth 5) and in the schema (a member of the schema: depth 6)
        chat_input("deep-msg", TICKET).replace(r#""content": "x""#, &format!(r#""content": {}"#, deep(123))),
        chat_input("too-deep-msg", TICKET).replace(r#""content": "x""#, &format!(r#""content": {}"#, deep(124))),
        chat_input("deep-schema", &TICKET.replace(r#""type": "object","#, &format!(r#""type": "object", "x": {},"#, deep(122)))),
        chat_input("too-deep-schema", &TICKET.replace(r#""type": "object","#, &format!(r#""type": "object", "x": {},"#, deep(123)))),
        // not an object body; trailing text; a second schema version; the same again
        r#"{"custom_id": "array-body", "method": "POST", "url": "/v1/chat/completions", "body": []}"#.to_owned(),
        format!("{} x", chat_input("trailing", TICKET)),
        chat_input("v2", &TICKET.replace("high", "urgent")),
        chat_input("plain-again", TICKET),
        // a Gemini and an Anthropic line, an Anthropic create body
        r#"{"key": "g1", "request": {"contents": [], "generationConfig": {"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT", "nullable": true}}}}"#.to_owned(),
        r#"{"custom_id": "a1", "params": {"model": "m", "max_tokens": 5, "messages": [], "tools": [{"name": "t", "input_schema": {"type": "object"}}]}}"#.to_owned(),
        r#"{"requests": [{"custom_id": "a2", "params": {"model": "m", "messages": []}}]}"#.to_owned(),
    ]
    .into_iter()
    .collect();
    let (got, n) = both_ways(&ws, "hostile.jsonl", &lines);
    assert_eq!(got.len(), n);
    // the plain, escaped, v2 and again lines, the Gemini and Anthropic ones, and the two
    // at the depth limit
    assert_eq!(n, 9, "{got:?}");
}
