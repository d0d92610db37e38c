//! The schema the model was given against the server contract (`docs/requests.md`): both
//! contracts on one capture (`generation.valid`, `GENERATION_GAP`, `STRICT_VIOLATION`), the
//! drift report (`REQUEST_LOOSER`, `REQUEST_STRICTER`, `REQUEST_NULLABLE_FOR_OPTIONAL`) of
//! `verdict lint`, and the front ends agreeing on `samples/requests`.

use crate::common::{copy_dir, jsonl_verdicts, verdict_in};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use verdict::core::drift::{DriftFinding, compare};
use verdict::core::lint::Profile;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/requests")
}

/// (code, keyword, pointer, unsupported) of each finding.
fn rows(f: &[DriftFinding]) -> Vec<(&str, &str, &str, Option<bool>)> {
    f.iter()
        .map(|f| {
            (
                f.code,
                f.keyword.as_str(),
                f.pointer.as_str(),
                f.unsupported,
            )
        })
        .collect()
}

#[test]
fn the_three_drift_findings_with_their_keywords_and_pointers() {
    let server = json!({"type": "object",
        "properties": {"amount": {"type": "integer", "minimum": 1},
                       "note": {"type": "string"},
                       "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["amount"], "additionalProperties": false});
    // lost `minimum` and `additionalProperties`, made `note` required and nullable (OpenAI
    // strict), and added `maxItems`
    let sent = json!({"type": "object",
        "properties": {"amount": {"type": "integer"},
                       "note": {"type": ["string", "null"]},
                       "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
        "required": ["amount", "note"]});
    let anthropic = Profile::load("anthropic").unwrap();
    let openai = Profile::load("openai-strict").unwrap();
    let d = verdict::core::config::Dialect::Draft202012;
    let by_anthropic = compare(&server, &sent, d, Some(&anthropic));
    assert_eq!(
        rows(&by_anthropic),
        [
            (
                "REQUEST_NULLABLE_FOR_OPTIONAL",
                "required",
                "/properties/note",
                None
            ),
            (
                "REQUEST_LOOSER",
                "additionalProperties",
                "/additionalProperties",
                Some(false)
            ),
            (
                "REQUEST_LOOSER",
                "minimum",
                "/properties/amount/minimum",
                Some(true)
            ),
            (
                "REQUEST_STRICTER",
                "maxItems",
                "/properties/tags/maxItems",
                None
            ),
        ]
    );
    assert_eq!(
        by_anthropic[2].message,
        "the request lacks the server's constraint: minimum 1 -> none; anthropic does not support `minimum` in strict mode, so the request cannot carry it: only the server checks it"
    );
    assert_eq!(
        by_anthropic[0].message,
        "`note` is optional in the server contract but required and nullable in the request: the model must send `null` where the server expects the key to be absent (a missing key and null are different states)"
    );
    assert_eq!(
        by_anthropic[3].message,
        "the request adds a constraint: maxItems none -> 3"
    );
    // OpenAI strict mode supports `minimum`; without a profile nothing is unsupported
    let by_openai = compare(&server, &sent, d, Some(&openai));
    assert_eq!(by_openai[2].unsupported, Some(false));
    assert_eq!(
        by_openai[2].message,
        "the request lacks the server's constraint: minimum 1 -> none"
    );
    assert_eq!(compare(&server, &sent, d, None)[2].unsupported, Some(false));
    // the same schema: no drift
    assert!(compare(&server, &server, d, Some(&openai)).is_empty());
}

/// `check --format jsonl` of `root`: the verdicts by id.
fn check(root: &Path) -> Vec<Value> {
    let out = verdict_in(root, &["check", ".", "--format", "jsonl"]);
    jsonl_verdicts(&String::from_utf8(out.stdout).unwrap())
}

/// The codes of a verdict's own warnings (not its contract's lint findings).
fn own_codes(v: &Value) -> Vec<&str> {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.get("file").is_none())
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

fn by_id<'a>(vs: &'a [Value], id: &str) -> &'a Value {
    vs.iter()
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("no verdict {id}"))
}

#[test]
fn a_gap_between_the_sent_schema_and_the_server_contract_is_a_generation_gap() {
    let vs = check(&sample());
    let v = by_id(&vs, "refund-102");
    assert_eq!(
        (
            &v["contract"],
            &v["contract_from"],
            &v["stage"],
            &v["reason"]
        ),
        (
            &json!("refund"),
            &json!("route 1"),
            &json!("schema"),
            &json!("SCHEMA_MISMATCH")
        )
    );
    assert_eq!(v["errors"][0]["pointer"], "/amount_minor");
    assert_eq!(v["errors"][0]["keyword"], "minimum");
    assert_eq!(
        v["generation"],
        json!({"schema": "refund", "source": "text", "strict": false,
               "request": "captures/batches/v1/2026-01-10_input.jsonl:2",
               "pointer": "/body/response_format/json_schema/schema", "valid": true})
    );
    assert_eq!(
        v["warnings"],
        json!([{"code": "GENERATION_GAP", "severity": "warning",
                "pointer": "/body/response_format/json_schema/schema",
                "message": "the proposal meets the text format \"refund\" its request sent (captures/batches/v1/2026-01-10_input.jsonl:2) but not the server contract \"refund\" at /amount_minor (`minimum`): the request schema, not the model, needs the fix (`verdict lint` lists what it lacks)"}])
    );
    // the extra key: the server closes the object, the request did not
    let v = by_id(&vs, "refund-103");
    assert_eq!(v["errors"][0]["keyword"], "additionalProperties");
    assert_eq!(own_codes(v), ["GENERATION_GAP"]);
    // a ready capture: valid against both, no warning
    let v = by_id(&vs, "refund-101");
    assert_eq!(v["stage"], "ready");
    assert_eq!(v["generation"]["valid"], true);
    assert_eq!(v["warnings"], json!([]));
}

#[test]
fn a_strict_request_whose_proposal_breaks_the_sent_schema_is_a_strict_violation() {
    let vs = check(&sample());
    let v = by_id(&vs, "ticket-strict-broken");
    assert_eq!(
        (
            &v["contract_from"],
            &v["reason"],
            &v["errors"][0]["pointer"]
        ),
        (
            &json!("record"),
            &json!("SCHEMA_MISMATCH"),
            &json!("/priority")
        )
    );
    let g = &v["generation"];
    assert_eq!(
        (&g["schema"], &g["strict"], &g["valid"], &g["request"]),
        (
            &json!("ticket"),
            &json!(true),
            &json!(false),
            &json!("record")
        )
    );
    assert_eq!(g["errors"].as_array().unwrap().len(), 1);
    assert_eq!(g["errors"][0]["pointer"], "/priority");
    assert_eq!(g["errors"][0]["schema_path"], "/properties/priority/enum");
    assert_eq!(g["errors"][0]["keyword"], "enum");
    let own: Vec<&Value> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.get("file").is_none())
        .collect();
    assert_eq!(
        json!(own),
        json!([{"code": "STRICT_VIOLATION", "severity": "warning",
                "pointer": "/request/response_format/json_schema/schema",
                "message": "the request was strict (record), so constrained decoding promised conformance, yet the proposal breaks the text format \"ticket\" it sent at /priority: \"urgent\" is not one of \"low\" or \"high\""}])
    );
    // optional-as-nullable: `null` meets the sent schema, the server wants the key absent
    let v = by_id(&vs, "ticket-nullable");
    assert_eq!(v["errors"][0]["pointer"], "/note");
    assert_eq!(v["generation"]["valid"], true);
    assert_eq!(own_codes(v), ["GENERATION_GAP"]);
    // the Claude tool's input_schema lost `minimum`
    let v = by_id(&vs, "claude-tool-amount-0");
    assert_eq!(
        (
            &v["contract_from"],
            &v["generation"]["source"],
            &v["generation"]["pointer"]
        ),
        (
            &json!("tool"),
            &json!("tool"),
            &json!("/request/tools/0/input_schema")
        )
    );
    assert_eq!(own_codes(v), ["GENERATION_GAP"]);
}

#[test]
fn a_generation_gap_captures_feedback_says_the_request_schema_needs_the_fix() {
    let out = verdict_in(
        &sample(),
        &["feedback", "refund-102", ".", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let fb: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(fb["decision"], "regenerate");
    assert_eq!(fb["regenerate"], false);
    assert_eq!(
        fb["message"],
        "Regenerating would not fix the cause: the proposal meets the text format \"refund\" its request sent (captures/batches/v1/2026-01-10_input.jsonl:2 /body/response_format/json_schema/schema), and the server contract `refund` rejects it, so constrained decoding could never have caught it. The request schema, not the model, needs the fix: send the server contract's constraints with the request (`verdict lint` lists what the request schema lacks).\n- at /amount_minor: 0 is less than the minimum of 1 (keyword `minimum` at /properties/amount_minor/minimum); you wrote 0\nInstead: fix the request schema (captures/batches/v1/2026-01-10_input.jsonl:2 /body/response_format/json_schema/schema), then send the request again."
    );
    assert_eq!(fb["contract"]["properties"]["amount_minor"]["minimum"], 1);
}

#[test]
fn every_front_end_locates_generation_warnings_at_the_request() {
    let root = sample();
    // SARIF: a warning result at the input file's line, pass or fail
    let out = verdict_in(&root, &["check", ".", "--format", "sarif"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let located: Vec<(String, String, u64)> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "GENERATION_GAP" || r["ruleId"] == "STRICT_VIOLATION")
        .map(|r| {
            let l = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_owned(),
                l["artifactLocation"]["uri"].as_str().unwrap().to_owned(),
                l["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = |code: &str, file: &str, line: u64| (code.to_owned(), file.to_owned(), line);
    let mut gen_sorted = located.clone();
    gen_sorted.sort();
    let mut expected = vec![
        want(
            "GENERATION_GAP",
            "captures/batches/v1/2026-01-10_input.jsonl",
            2,
        ),
        want(
            "GENERATION_GAP",
            "captures/batches/v1/2026-01-10_input.jsonl",
            3,
        ),
        want(
            "GENERATION_GAP",
            "captures/batches/v2/2026-02-01_input.jsonl",
            2,
        ),
        want("GENERATION_GAP", "captures/records/claude-tool.json", 1),
        want("GENERATION_GAP", "captures/records/openai-strict.jsonl", 1),
        want(
            "STRICT_VIOLATION",
            "captures/records/openai-strict.jsonl",
            2,
        ),
    ];
    expected.sort();
    assert_eq!(gen_sorted, expected);
    // GitHub: the same, as ::warning annotations
    let out = verdict_in(&root, &["check", ".", "--format", "github"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("title=STRICT_VIOLATION"))
        .unwrap();
    assert_eq!(
        line,
        "::warning file=captures/records/openai-strict.jsonl,line=2,col=1,title=STRICT_VIOLATION::ticket-strict-broken: the request was strict (record), so constrained decoding promised conformance, yet the proposal breaks the text format \"ticket\" it sent at /priority: \"urgent\" is not one of \"low\" or \"high\""
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("::warning") && l.contains("title=GENERATION_GAP"))
            .count(),
        5
    );
    // human: the warning is printed with its capture
    let out = verdict_in(&root, &["check", "."]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("      warning[STRICT_VIOLATION] /request/response_format/json_schema/schema  the request was strict (record)"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn watch_json_gives_the_generation_and_its_warnings_as_check_does() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&sample(), tmp.path());
    let checked = check(tmp.path());
    let w = crate::common::watch::WatchJson::start(tmp.path(), &[]);
    let lines = w.batch("the first run", std::time::Duration::from_secs(60));
    let watched: Vec<&Value> = lines.iter().filter(|l| l["type"] == "verdict").collect();
    assert_eq!(watched.len(), checked.len());
    for c in &checked {
        let v = watched
            .iter()
            .find(|w| w["data"]["id"] == c["id"])
            .unwrap_or_else(|| panic!("watch has no {}", c["id"]));
        assert_eq!(v["data"]["generation"], c["generation"], "{}", c["id"]);
        assert_eq!(v["data"]["warnings"], c["warnings"], "{}", c["id"]);
    }
}

#[test]
fn docs_verdicts_lists_every_reason_and_capture_warning() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/verdicts.md"))
            .unwrap();
    let section = |head: &str| -> String {
        let start = doc.find(head).unwrap_or_else(|| panic!("no {head}"));
        let rest = &doc[start + head.len()..];
        let end = rest.find("\n#").unwrap_or(rest.len());
        rest[..end].to_owned()
    };
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once('`'))
            .map(|(code, _)| code.to_owned())
            .collect()
    };
    // every built-in reason once (the table keeps its own order), and nothing else but the
    // row of a rule's own code
    let mut reasons: Vec<String> = verdict::core::verdict::Reason::BUILT_IN
        .iter()
        .map(|r| r.as_str().to_owned())
        .collect();
    reasons.sort();
    let mut listed = rows(&section("## Reasons"));
    listed.sort();
    assert_eq!(listed, reasons);
    let warnings: Vec<String> = verdict::core::verdict::Warning::CAPTURE_CODES
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
    assert_eq!(rows(&section("### Capture warnings")), warnings);
}

/// `variant 0123456789abcdef` as `variant HASH`: a content hash is the same within one
/// build, not promised across toolchains.
pub(crate) fn no_hashes(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("variant ") {
        let (head, tail) = rest.split_at(i + "variant ".len());
        out.push_str(head);
        let hex = tail.len() >= 16 && tail[..16].bytes().all(|b| b.is_ascii_hexdigit());
        if hex {
            out.push_str("HASH");
            rest = &tail[16..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn lint_prints_the_drift_report_of_a_workspace() {
    let out = verdict_in(&sample(), &["lint", "."]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        no_hashes(&String::from_utf8(out.stdout).unwrap()),
        "schemas/ticket.schema.json:13:13: info[OPTIONAL_PROPERTY] /properties/note: `note` is declared but not required: an output without it passes\n    hint: add \"note\" to `required`; use a null type for \"unknown\"\ncaptures/batches/v1/2026-01-10_input.jsonl:1: drift[refund] the text format \"refund\" (variant 1 of 2) sent to 3 captures vs contract refund (schemas/refund.schema.json)\n    variant HASH; request captures/batches/v1/2026-01-10_input.jsonl:1 /body/response_format/json_schema/schema; profile openai-strict; captures: refund-101, refund-102, refund-103\n    warning[REQUEST_LOOSER] /additionalProperties: the request lacks the server's constraint: additional properties are now allowed\n    warning[REQUEST_LOOSER] /properties/amount_minor/minimum: the request lacks the server's constraint: minimum 1 -> none\ncaptures/batches/v2/2026-02-01_input.jsonl:1: drift[refund] the text format \"refund\" (variant 2 of 2) sent to 2 captures vs contract refund (schemas/refund.schema.json)\n    variant HASH; request captures/batches/v2/2026-02-01_input.jsonl:1 /body/response_format/json_schema/schema; profile openai-strict; captures: refund-201, refund-202\n    warning[REQUEST_LOOSER] /additionalProperties: the request lacks the server's constraint: additional properties are now allowed\ncaptures/records/claude-tool.json: drift[propose_refund] the tool \"propose_refund\" sent to 1 capture vs contract propose_refund (schemas/propose_refund.schema.json)\n    variant HASH (strict); request record /request/tools/0/input_schema; profile anthropic; captures: claude-tool-amount-0\n    warning[REQUEST_LOOSER] /properties/amount_minor/minimum: the request lacks the server's constraint: minimum 1 -> none; anthropic does not support `minimum` in strict mode, so the request cannot carry it: only the server checks it\ncaptures/records/gemini.json: drift[ticket] the text format \"response\" sent to 1 capture vs contract ticket (schemas/ticket.schema.json)\n    variant HASH; request record /request/generationConfig/responseSchema; profile gemini; captures: gemini-ticket\n    warning[REQUEST_LOOSER] /properties/note: the request lacks the server's constraint: property `note` no longer declared\n    warning[REQUEST_LOOSER] /additionalProperties: the request lacks the server's constraint: additional properties are now allowed\n    info[REQUEST_STRICTER] /properties/priority/type: the request adds a constraint: type any -> \"string\"\ncaptures/records/openai-strict.jsonl:1: drift[ticket] the text format \"ticket\" sent to 3 captures vs contract ticket (schemas/ticket.schema.json)\n    variant HASH (strict); request record /request/response_format/json_schema/schema; profile openai-strict; captures: ticket-nullable, ticket-strict-broken, resp_drift_1\n    info[REQUEST_NULLABLE_FOR_OPTIONAL] /properties/note: `note` is optional in the server contract but required and nullable in the request: the model must send `null` where the server expects the key to be absent (a missing key and null are different states)\n0 errors, 0 warnings, 1 info in 3 schemas; 8 drift findings in 5 request schema variants\n"
    );
    let out = verdict_in(&sample(), &["lint", ".", "-f", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["summary"],
        json!({"schemas": 3, "errors": 0, "warnings": 0, "info": 1, "variants": 5, "drift": 8})
    );
    let v = &doc["drift"][0];
    assert_eq!(
        (
            &v["contract"],
            &v["schema"],
            &v["captures"],
            &v["ids"],
            &v["file"],
            &v["line"]
        ),
        (
            &json!("refund"),
            &json!("refund"),
            &json!(3),
            &json!(["refund-101", "refund-102", "refund-103"]),
            &json!("captures/batches/v1/2026-01-10_input.jsonl"),
            &json!(1)
        )
    );
    assert_eq!(
        v["findings"],
        json!([{"code": "REQUEST_LOOSER", "keyword": "additionalProperties", "pointer": "/additionalProperties", "unsupported": false,
                "message": "the request lacks the server's constraint: additional properties are now allowed"},
               {"code": "REQUEST_LOOSER", "keyword": "minimum", "pointer": "/properties/amount_minor/minimum", "unsupported": false,
                "message": "the request lacks the server's constraint: minimum 1 -> none"}])
    );
    // the second version of the batch: another variant of the same contract
    assert_eq!(doc["drift"][1]["captures"], 2);
    assert_ne!(doc["drift"][1]["hash"], v["hash"]);
    // SARIF: one result per drift finding, at the request's file and line
    let out = verdict_in(&sample(), &["lint", ".", "-f", "sarif"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "REQUEST_NULLABLE_FOR_OPTIONAL")
        .unwrap();
    let l = &r["locations"][0]["physicalLocation"];
    assert_eq!(
        l["artifactLocation"]["uri"],
        "captures/records/openai-strict.jsonl"
    );
    assert_eq!(l["region"]["startLine"], 1);
    assert_eq!(
        r["properties"]["pointer"],
        "/request/response_format/json_schema/schema/properties/note"
    );
}

#[test]
fn the_openai_strict_profile_matches_the_published_supported_keywords() {
    // https://platform.openai.com/docs/guides/structured-outputs#supported-properties
    let openai = Profile::load("openai-strict").unwrap();
    let supported = [
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
        "anyOf",
        "enum",
        "required",
        "additionalProperties",
        "properties",
        "items",
    ];
    let dropped: Vec<&str> = supported.into_iter().filter(|k| openai.drops(k)).collect();
    assert_eq!(dropped, Vec::<&str>::new());
    // "Some type-specific keywords are not yet supported", and the string length bounds,
    // which the supported string properties do not include
    let unsupported = [
        "allOf",
        "not",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "then",
        "else",
        "minLength",
        "maxLength",
    ];
    let kept: Vec<&str> = unsupported
        .into_iter()
        .filter(|k| !openai.drops(k))
        .collect();
    assert_eq!(kept, Vec::<&str>::new());
    // the drift report's flag follows the profile: a lost `minimum` is one strict mode
    // could have carried, a lost `maxLength` one it could not
    let server = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1},
        "s": {"type": "string", "maxLength": 5}}, "required": ["n", "s"], "additionalProperties": false});
    let sent = json!({"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
        "required": ["n", "s"], "additionalProperties": false});
    let d = verdict::core::config::Dialect::Draft202012;
    assert_eq!(
        rows(&compare(&server, &sent, d, Some(&openai))),
        [
            (
                "REQUEST_LOOSER",
                "minimum",
                "/properties/n/minimum",
                Some(false)
            ),
            (
                "REQUEST_LOOSER",
                "maxLength",
                "/properties/s/maxLength",
                Some(true)
            ),
        ]
    );
}
