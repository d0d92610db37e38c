//! Which input request a batch result joins (`docs/requests.md#batch-input-files`): input
//! and output files paired by name when batches reuse their ids, `[[source]] requests`
//! naming the input file of a log, `REQUEST_CONFLICT` when the echoed request and the
//! joined one sent different schemas, `\u`-escaped keys, and a 1 MB schema string.

use crate::common::{jsonl_verdicts, verdict_in};
use crate::requests::{TICKET, chat_input, chat_output, check, rows_of, write};
use serde_json::{Value, json};

/// The ticket schema of a later version: `urgent` is a priority too.
const TICKET_V2: &str = r#"{"type": "object", "properties": {"title": {"type": "string"}, "priority": {"enum": ["low", "high", "urgent"]}}, "required": ["title", "priority"], "additionalProperties": false}"#;

const URGENT: &str = r#"{"title": "a", "priority": "urgent"}"#;

/// Two batches in one folder, each reusing the ids `t1` and `t2`, sent with two schema
/// versions: `{prefix}a_input.jsonl` (v1) with its `{prefix}a_output.jsonl`, and
/// `{prefix}b_...` (v2). Every result says `urgent`, which only v2 allows.
fn two_batches(prefix: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for (batch, schema) in [("a", TICKET), ("b", TICKET_V2)] {
        files.push((
            format!("{prefix}{batch}_input.jsonl"),
            [chat_input("t1", schema), chat_input("t2", schema)].join("\n"),
        ));
        files.push((
            format!("{prefix}{batch}_output.jsonl"),
            [chat_output("t1", URGENT), chat_output("t2", URGENT)].join("\n"),
        ));
    }
    files
}

fn write_owned(root: &std::path::Path, files: &[(String, String)]) {
    let borrowed: Vec<(&str, String)> =
        files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    write(root, &borrowed);
}

/// `id request stage reason` of each verdict.
fn joined(vs: &[Value]) -> Vec<String> {
    vs.iter()
        .map(|v| {
            format!(
                "{} {} {} {}",
                v["id"].as_str().unwrap(),
                v["generation"]["request"].as_str().unwrap_or("-"),
                v["stage"].as_str().unwrap(),
                v["reason"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

#[test]
fn each_output_file_joins_the_input_file_of_its_own_batch_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    write_owned(tmp.path(), &two_batches("batch-"));
    let (vs, summary, code) = check(tmp.path());
    assert_eq!(
        joined(&vs),
        [
            "t1 batch-a_input.jsonl:1 schema SCHEMA_MISMATCH",
            "t2 batch-a_input.jsonl:2 schema SCHEMA_MISMATCH",
            "t1 batch-b_input.jsonl:1 ready -",
            "t2 batch-b_input.jsonl:2 ready -",
        ]
    );
    assert_eq!(code, Some(1));
    // ids repeating across two paired batches are no duplicates
    assert_eq!(summary["warnings"], json!(null));
    assert_eq!(summary["captures"], 4);
}

#[test]
fn openai_downloaded_names_pair_the_output_and_the_error_file_with_the_input() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = two_batches("batch_abc123_");
    // rename the second batch to another batch id
    for (n, _) in &mut files {
        *n = n.replace("batch_abc123_b_", "batch_def456_");
        *n = n.replace("batch_abc123_a_", "batch_abc123_");
    }
    // the first batch's t2 failed: it is in the error file, not the output file
    let out = files
        .iter_mut()
        .find(|(n, _)| n == "batch_abc123_output.jsonl")
        .unwrap();
    out.1 = chat_output("t1", URGENT);
    files.push((
        "batch_abc123_error.jsonl".into(),
        json!({"id": "batch_req_e2", "custom_id": "t2", "response": null,
               "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
        .to_string(),
    ));
    write_owned(tmp.path(), &files);
    let (vs, summary, _) = check(tmp.path());
    let rows = joined(&vs);
    assert_eq!(
        rows,
        [
            "t2 batch_abc123_input.jsonl:2 response INCOMPLETE",
            "t1 batch_abc123_input.jsonl:1 schema SCHEMA_MISMATCH",
            "t1 batch_def456_input.jsonl:1 ready -",
            "t2 batch_def456_input.jsonl:2 ready -",
        ]
    );
    assert_eq!(summary["warnings"], json!(null));
}

#[test]
fn the_drift_report_counts_the_two_batches_as_two_variants() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = two_batches("batch-");
    // the server contract also bounds the title: both versions lack that
    let server = TICKET.replace(
        r#"{"type": "string"}"#,
        r#"{"type": "string", "maxLength": 80}"#,
    );
    files.push(("schemas/ticket.schema.json".into(), server));
    write_owned(tmp.path(), &files);
    let out = verdict_in(tmp.path(), &["lint", ".", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let variants: Vec<(String, u64, Vec<String>)> = report["drift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["request"].as_str().unwrap().to_owned(),
                v["captures"].as_u64().unwrap(),
                v["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        format!(
                            "{} {}",
                            f["code"].as_str().unwrap(),
                            f["pointer"].as_str().unwrap()
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        variants,
        [
            (
                "batch-a_input.jsonl:1".to_owned(),
                2,
                vec!["REQUEST_LOOSER /properties/title/maxLength".to_owned()]
            ),
            (
                "batch-b_input.jsonl:1".to_owned(),
                2,
                vec![
                    "REQUEST_LOOSER /properties/priority/enum".to_owned(),
                    "REQUEST_LOOSER /properties/title/maxLength".to_owned()
                ]
            )
        ],
        "{report:#}"
    );
}

/// A folder whose logs do not pair by name: `results/a.jsonl` and `results/b.jsonl`, the
/// inputs `sent/first.jsonl` (v1) and `sent/second.jsonl` (v2), both with `t1`.
fn unpaired(toml: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[
            ("verdict.toml", toml.to_owned()),
            ("sent/first.jsonl", chat_input("t1", TICKET)),
            ("sent/second.jsonl", chat_input("t1", TICKET_V2)),
            ("results/a.jsonl", chat_output("t1", URGENT)),
            ("results/b.jsonl", chat_output("t1", URGENT)),
        ],
    );
    tmp
}

#[test]
fn a_source_tables_requests_glob_names_the_input_file_of_its_logs() {
    let tmp = unpaired(
        "[[source]]\npath = \"results/a.jsonl\"\nrequests = \"sent/first.jsonl\"\n\n\
         [[source]]\npath = \"results/b.jsonl\"\nrequests = \"sent/sec*.jsonl\"\n",
    );
    let (vs, summary, _) = check(tmp.path());
    assert_eq!(
        joined(&vs),
        [
            "t1 sent/first.jsonl:1 schema SCHEMA_MISMATCH",
            "t1 sent/second.jsonl:1 ready -",
        ]
    );
    assert_eq!(summary["warnings"], json!(null));
    // without the key the two requests share the id: no request is used
    let tmp = unpaired("");
    let (vs, summary, _) = check(tmp.path());
    assert_eq!(
        rows_of(&vs),
        [
            "t1 - - input UNKNOWN_CONTRACT -",
            "t1 - - input UNKNOWN_CONTRACT -"
        ]
    );
    assert_eq!(summary["warnings"][0]["code"], "DUPLICATE_REQUEST");
}

/// `check .` in a workspace whose `verdict.toml` is `toml`: the exit code and stderr.
fn config_error(toml: &str) -> (Option<i32>, String) {
    let tmp = unpaired(toml);
    let out = verdict_in(tmp.path(), &["check", "."]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_requests_key_is_a_config_error_naming_the_key() {
    let (code, err) =
        config_error("[[source]]\npath = \"results/*.jsonl\"\nrequests = \"sent/[x\"\n");
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with(
            "verdict: ./verdict.toml: [[source]] 1: `requests` is not a valid glob (\"sent/[x\"): "
        ),
        "{err}"
    );
    let (code, err) = config_error("[[source]]\npath = \"results/*.jsonl\"\nrequests = 5\n");
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "verdict: ./verdict.toml: line 3, column 12: `requests`: invalid type: integer `5`, expected a string\n"
    );
    // a glob that names no batch input file: the log's requests would silently be missing
    let (code, err) =
        config_error("[[source]]\npath = \"results/*.jsonl\"\nrequests = \"results/*.jsonl\"\n");
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "verdict: ./verdict.toml: [[source]] 1: `requests` = \"results/*.jsonl\" matches no batch input file of the workspace's capture files (docs/requests.md#batch-input-files)\n"
    );
}

/// An OpenAI batch output line of a Responses call whose body echoes `schema` as the
/// `ticket` text format and says `text`.
fn responses_output(id: &str, schema: &str, text: &str) -> String {
    let body = json!({"id": format!("resp_{id}"), "object": "response", "status": "completed", "model": "gpt-4.1-mini",
        "output": [{"type": "message", "id": "msg", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "text": {"format": {"type": "json_schema", "name": "ticket", "strict": true,
                            "schema": serde_json::from_str::<Value>(schema).unwrap()}}});
    json!({"id": format!("batch_req_{id}"), "custom_id": id, "response": {"status_code": 200, "request_id": "r", "body": body}, "error": null}).to_string()
}

fn responses_input(id: &str, schema: &str) -> String {
    json!({"custom_id": id, "method": "POST", "url": "/v1/responses",
           "body": {"model": "gpt-4.1-mini", "input": "x",
                    "text": {"format": {"type": "json_schema", "name": "ticket", "strict": true,
                                        "schema": serde_json::from_str::<Value>(schema).unwrap()}}}})
    .to_string()
}

#[test]
fn an_echoed_request_that_differs_from_the_joined_input_request_is_a_request_conflict() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[
            (
                "input.jsonl",
                [responses_input("r1", TICKET), responses_input("r2", TICKET)].join("\n"),
            ),
            (
                "output.jsonl",
                [
                    responses_output("r1", TICKET_V2, URGENT),
                    responses_output("r2", TICKET, URGENT),
                ]
                .join("\n"),
            ),
        ],
    );
    let (vs, _, _) = check(tmp.path());
    // the echo wins: r1 meets the schema the provider says it ran with
    assert_eq!(
        joined(&vs),
        ["r1 echo ready -", "r2 echo schema SCHEMA_MISMATCH"]
    );
    assert_eq!(
        vs[0]["warnings"],
        json!([{"code": "REQUEST_CONFLICT", "severity": "warning",
                "pointer": "/response/body/text/format/schema",
                "message": "the request its response echoes and its batch input request (input.jsonl:1 /body/text/format/schema) sent different schemas for the text format \"ticket\": the echoed one is used, as what the provider says it ran with; check which schema the batch was created with"}])
    );
    // the same schema on both sides: no conflict (the strict echo's own warning only)
    let codes: Vec<&str> = vs[1]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["STRICT_VIOLATION"]);
}

#[test]
fn a_gemini_request_whose_keys_are_u_escaped_is_read_as_the_unescaped_keys() {
    let tmp = tempfile::tempdir().unwrap();
    // `key`, `request` and the responseSchema's `type` spelled with \u escapes
    let input = r#"{"\u006bey": "g1", "\u0072equest": {"contents": [], "generationConfig": {"responseMimeType": "application/json", "response\u0053chema": {"\u0074ype": "OBJECT", "properties": {"n": {"\u0074ype": "INTEGER"}}, "required": ["n"]}}}}"#;
    let output = |n: &str| {
        json!({"key": "g1", "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": n}]}, "finishReason": "STOP"}],
               "modelVersion": "gemini-2.5-flash"}})
        .to_string()
    };
    write(
        tmp.path(),
        &[
            ("input.jsonl", input.to_owned()),
            ("output.jsonl", output("{\"n\": \"one\"}")),
        ],
    );
    let (vs, summary, _) = check(tmp.path());
    assert_eq!(
        rows_of(&vs),
        ["g1 request:response request schema SCHEMA_MISMATCH /n"]
    );
    assert_eq!(
        vs[0]["generation"]["pointer"],
        "/request/generationConfig/responseSchema"
    );
    assert_eq!(summary["captures"], 1);
    assert_eq!(summary["warnings"], json!(null));
}

/// A Bedrock batch line whose schema string is `schema` and whose output is `text`.
fn bedrock_line(id: &str, schema: &str, text: &str) -> String {
    json!({"recordId": id,
           "modelInput": {"messages": [], "outputConfig": {"textFormat": {"type": "json_schema",
               "structure": {"jsonSchema": {"name": "ticket", "schema": schema}}}}},
           "modelOutput": {"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": "end_turn"}})
    .to_string()
}

#[test]
fn a_one_megabyte_schema_string_is_read_and_a_broken_one_gets_a_short_message() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "d".repeat(1 << 20);
    let big = format!(
        r#"{{"type": "object", "description": "{long}", "properties": {{"title": {{"type": "string"}}}}, "required": ["title"]}}"#
    );
    // the same string cut short: not JSON
    let broken = &big[..big.len() - 40];
    write(
        tmp.path(),
        &[(
            "captures/bedrock.jsonl.out",
            [
                bedrock_line("b1", &big, r#"{"title": "a"}"#),
                bedrock_line("b2", &big, r#"{"title": 5}"#),
                bedrock_line("b3", broken, r#"{"title": "a"}"#),
            ]
            .join("\n"),
        )],
    );
    let out = verdict_in(tmp.path(), &["check", ".", "--format", "jsonl"]);
    let vs = jsonl_verdicts(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        rows_of(&vs),
        [
            "b1 request:ticket request ready - -",
            "b2 request:ticket request schema SCHEMA_MISMATCH /title",
            "b3 request:ticket request input CONTRACT_ERROR -",
        ]
    );
    let m = vs[2]["errors"][0]["message"].as_str().unwrap();
    assert!(
        m.starts_with(
            "echo /modelInput/outputConfig/textFormat/structure/jsonSchema/schema: the request's text format \"ticket\" is a schema string that is not valid JSON at 1:"
        ),
        "{}",
        &m[..m.len().min(300)]
    );
    assert!(
        m.len() < 400,
        "the message quotes no megabyte: {} bytes",
        m.len()
    );
}

#[test]
fn the_request_pre_scan_reads_escaped_keys_only_where_a_letter_is_escaped() {
    use verdict::core::request::may_be_request;
    // the plain keys, and the same keys escaped
    assert!(may_be_request(br#"{"key": "k", "request": {}}"#));
    assert!(may_be_request(br#"{"\u006bey": "k", "\u0072equest": {}}"#));
    assert!(may_be_request(
        br#"{"custom_\u0069d": "t", "\u006Dethod": "POST", "url": "/v1/chat/completions", "body": {}}"#
    ));
    // an output line whose text escapes other characters is no request
    assert!(!may_be_request(
        br#"{"custom_id": "t", "response": {"body": {"text": "caf\u00e9 \u003cb\u003e"}}}"#
    ));
    // an escaped letter in a value, not a key: read, and still no request
    assert!(!may_be_request(
        br#"{"custom_id": "t", "response": {"body": {"text": "\u0041"}}}"#
    ));
    // the escaped keys of a nested object are not the line's keys
    assert!(!may_be_request(
        br#"{"id": "x", "meta": {"\u006bey": "k", "\u0072equest": {}}}"#
    ));
}

#[test]
fn the_request_pre_scan_finds_each_plain_key_pair() {
    use verdict::core::request::may_be_request;
    assert!(may_be_request(br#"{"custom_id": "t", "method": "POST"}"#));
    assert!(may_be_request(br#"{"custom_id": "t", "params": {}}"#));
    assert!(may_be_request(br#"{"requests": []}"#));
    assert!(may_be_request(br#"{"key": "k", "requests": []}"#));
    assert!(may_be_request(br#"{"request": {}, "key": "k"}"#));
    // one key of a pair alone, or a longer name that begins as one does
    assert!(!may_be_request(br#"{"custom_id": "t", "body": {}}"#));
    assert!(!may_be_request(br#"{"key": "k", "request_id": 7}"#));
    assert!(!may_be_request(br#"{"request": {}}"#));
    assert!(!may_be_request(
        br#"{"resourceSpans": [{"attributes": [{"key": "gen_ai.request.model"}]}]}"#
    ));
}
