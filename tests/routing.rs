//! Logs as users have them, routed and joined (`docs/config.md`): `[[source]]`, `[[route]]`
//! and `contract_from`, `[[join]]`, `[decisions]`, the provider's metadata in `meta`, and
//! which folder is a workspace. Every case asserts stage, decision, reason, contract and
//! `contract_from` (and the message where one decides) exactly.

use crate::common::verdict_in;
use crate::common::verdicts;
use serde_json::{Value, json};
use std::path::Path;
use verdict::core::verdict::Verdict;
use verdict::core::workspace::{Workspace, WorkspaceError};

/// A refund proposal's schema: `amount_minor`, an integer.
const REFUND: &str = r#"{"type":"object","properties":{"amount_minor":{"type":"integer"}},"required":["amount_minor"]}"#;

/// A rule reading trusted context: the amount is at most what was paid.
const REFUND_RULES: &str = r#"[[rule]]
reason = "OVER_REFUND"
rule = "proposal.amount_minor <= context.paid_minor"
message = "refund above the amount paid"
decision = "reject"
field = "/amount_minor"
"#;

/// A ticket's schema: `title`, a string.
const TICKET: &str =
    r#"{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}"#;

/// Writes `files` (path, text) below a fresh temporary folder.
fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, text) in files {
        let p = dir.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// `id format stage decision reason contract contract_from`.
fn row(v: &Verdict) -> String {
    format!(
        "{} {} {} {} {} {} {}",
        v.id,
        v.format.as_deref().unwrap_or("-"),
        v.stage.as_str(),
        v.decision.as_str(),
        v.reason.as_ref().map_or("-", |r| r.as_str()),
        v.contract.as_deref().unwrap_or("-"),
        v.contract_from.as_deref().unwrap_or("-"),
    )
}

fn rows(root: &Path) -> Vec<String> {
    verdicts(root).iter().map(row).collect()
}

/// An OpenAI Batch output line whose Chat body's content is `content`.
fn batch_line(custom_id: &str, model: &str, content: &str) -> String {
    json!({
        "id": format!("batch_req_{custom_id}"),
        "custom_id": custom_id,
        "response": {"status_code": 200, "request_id": "req_x", "body": {
            "id": format!("chatcmpl-{custom_id}"), "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        }},
        "error": null
    })
    .to_string()
}

/// A bare Chat Completion (id `id`) whose content is `content`, with usage.
fn bare_chat(id: &str, content: &str) -> String {
    json!({
        "id": id, "object": "chat.completion", "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
    .to_string()
}

/// A bare Chat Completion calling tool `name` with `args` (a JSON text).
fn tool_call(id: &str, name: &str, args: &str) -> String {
    json!({
        "id": id, "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}]}}]
    })
    .to_string()
}

#[test]
fn a_join_gives_batch_lines_context_intent_and_expect() {
    let lines = [
        batch_line("r-ok", "gpt-4o-mini", r#"{"amount_minor": 500}"#),
        batch_line("r-over", "gpt-4o-mini", r#"{"amount_minor": 9000}"#),
        batch_line("r-intent", "gpt-4o-mini", r#"{"amount_minor": 700}"#),
        batch_line("r-unjoined", "gpt-4o-mini", r#"{"amount_minor": 1}"#),
    ];
    let joins = [
        r#"{"id": "r-ok", "context": {"paid_minor": 1000}, "expect": {"stage": "ready"}}"#,
        r#"{"id": "r-over", "context": {"paid_minor": 1000}, "expect": {"reason": "OVER_REFUND"}}"#,
        r#"{"id": "r-intent", "context": {"paid_minor": 1000}, "intent": {"amount_minor": 500}}"#,
        r#"{"id": "r-nowhere", "context": {"paid_minor": 1}}"#,
    ];
    let dir = dir_with(&[
        ("verdict.toml", "[[join]]\npath = \"joins/*.jsonl\"\n"),
        ("schemas/refund.schema.json", REFUND),
        ("schemas/refund.rules.toml", REFUND_RULES),
        ("captures/batch_output.jsonl", &lines.join("\n")),
        ("joins/refunds.jsonl", &joins.join("\n")),
    ]);
    let vs = verdicts(dir.path());
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>(),
        [
            "r-ok openai-batch ready ready-for-commit - refund default",
            "r-over openai-batch business reject OVER_REFUND refund default",
            "r-intent openai-batch business recheck INTENT_MISMATCH refund default",
            // no join line: the rule reads context, which is absent: fails closed
            "r-unjoined openai-batch business reject RULE_ERROR refund default",
        ]
    );
    assert_eq!(vs[0].expect.as_ref().map(|e| e.met), Some(true));
    assert_eq!(vs[1].expect.as_ref().map(|e| e.met), Some(true));
    assert_eq!(vs[1].errors[0].pointer.as_deref(), Some("/amount_minor"));
    assert_eq!(vs[1].errors[0].message, "refund above the amount paid");
    assert_eq!(
        vs[2].errors[0].message,
        "proposal 700, confirmed intent 500"
    );
    assert!(
        vs[3].errors[0]
            .message
            .starts_with("rule 1 (OVER_REFUND) could not be evaluated"),
        "{}",
        vs[3].errors[0].message
    );
    assert!(vs[3].expect.is_none());

    // check, on bare responses this time (any format is joined by its id): the join file
    // is no capture, and the unmatched id is one workspace warning (in the
    // report and the summary), which does not fail the run
    let bare = [
        bare_chat("chatcmpl-ok", r#"{"amount_minor": 500}"#),
        bare_chat("chatcmpl-over", r#"{"amount_minor": 9000}"#),
        bare_chat("chatcmpl-intent", r#"{"amount_minor": 700}"#),
        bare_chat("chatcmpl-unjoined", r#"{"amount_minor": 1}"#),
    ];
    let joins = joins.map(|j| j.replace("\"r-", "\"chatcmpl-"));
    let dir = dir_with(&[
        ("verdict.toml", "[[join]]\npath = \"joins/*.jsonl\"\n"),
        ("schemas/refund.schema.json", REFUND),
        ("schemas/refund.rules.toml", REFUND_RULES),
        ("captures/responses.jsonl", &bare.join("\n")),
        ("joins/refunds.jsonl", &joins.join("\n")),
    ]);
    assert_eq!(
        rows(dir.path()),
        [
            "chatcmpl-ok response ready ready-for-commit - refund default",
            "chatcmpl-over response business reject OVER_REFUND refund default",
            "chatcmpl-intent response business recheck INTENT_MISMATCH refund default",
            "chatcmpl-unjoined response business reject RULE_ERROR refund default",
        ]
    );
    let out = verdict_in(dir.path(), &["check", ".", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = &report["summary"];
    assert_eq!(summary["captures"], 4);
    assert_eq!(
        summary["warnings"],
        json!([{"code": "UNMATCHED_JOIN", "severity": "warning", "file": "joins/refunds.jsonl:4",
                "pointer": "/id", "message": "join line for id \"chatcmpl-nowhere\" matches no capture of the workspace"}])
    );
    assert_eq!(summary["funnel"]["ready"], 1);
    // r-intent and r-unjoined fail (no expect, not ready)
    assert_eq!(out.status.code(), Some(1));
    let human = verdict_in(dir.path(), &["check", ".", "--color", "never"]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(
        text.contains("workspace (1 warning)\n  joins/refunds.jsonl:4 warning[UNMATCHED_JOIN] join line for id \"chatcmpl-nowhere\" matches no capture of the workspace\n"),
        "{text}"
    );
}

#[test]
fn a_capture_records_own_keys_win_over_its_join_line() {
    let record = json!({"id": "c1", "output": "{\"amount_minor\": 800}",
        "context": {"paid_minor": 1000}, "expect": {"stage": "ready"}});
    let dir = dir_with(&[
        ("verdict.toml", "[[join]]\npath = \"joins/j.jsonl\"\n"),
        ("schemas/refund.schema.json", REFUND),
        ("schemas/refund.rules.toml", REFUND_RULES),
        ("captures/c1.json", &record.to_string()),
        // the join's context would fail the rule; its intent fills what the record lacks
        (
            "joins/j.jsonl",
            r#"{"id": "c1", "context": {"paid_minor": 1}, "intent": {"amount_minor": 800}, "expect": {"stage": "business"}}"#,
        ),
    ]);
    let vs = verdicts(dir.path());
    assert_eq!(
        rows(dir.path()),
        ["c1 capture ready ready-for-commit - refund default"]
    );
    assert_eq!(vs[0].expect.as_ref().map(|e| e.met), Some(true));
    // the join's intent was applied: a different intent now fails
    std::fs::write(
        dir.path().join("joins/j.jsonl"),
        r#"{"id": "c1", "intent": {"amount_minor": 5}}"#,
    )
    .unwrap();
    assert_eq!(
        rows(dir.path()),
        ["c1 capture business recheck INTENT_MISMATCH refund default"]
    );
}

#[test]
fn a_broken_join_line_is_a_config_error_naming_file_and_line() {
    let dir = dir_with(&[
        ("verdict.toml", "[[join]]\npath = \"joins/*.jsonl\"\n"),
        ("schemas/refund.schema.json", REFUND),
        ("captures/a.json", r#"{"output": "{\"amount_minor\": 1}"}"#),
        (
            "joins/j.jsonl",
            "{\"id\": \"a\"}\n\n{\"id\": \"b\", \"contxt\": {}}\n",
        ),
    ]);
    let err = Workspace::open(dir.path()).unwrap_err();
    assert!(matches!(err, WorkspaceError::Join(_)));
    assert_eq!(
        err.to_string(),
        "joins/j.jsonl:3: unknown key \"contxt\" in join line (did you mean `context`?); keys: id, context, intent, expect, tool, contract"
    );
    let out = verdict_in(dir.path(), &["check", "."]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    // said once (the error is not also printed again as its own cause)
    assert_eq!(
        stderr,
        "verdict: joins/j.jsonl:3: unknown key \"contxt\" in join line (did you mean `context`?); keys: id, context, intent, expect, tool, contract\n"
    );
    for (text, want) in [
        (
            "{\"id\": \"a\"}\n{\"id\": \"a\"}\n",
            "joins/j.jsonl:2: id \"a\" is joined twice (first at joins/j.jsonl:1)",
        ),
        (
            "{\"context\": {}}\n",
            "joins/j.jsonl:1: a join line needs `id` (the capture id it joins)",
        ),
        (
            "[1]\n",
            "joins/j.jsonl:1: a join line must be a JSON object, found an array",
        ),
        (
            "{\"id\": \"a\", \"intent\": 3}\n",
            "joins/j.jsonl:1: `intent` must be an object, found a number",
        ),
    ] {
        std::fs::write(dir.path().join("joins/j.jsonl"), text).unwrap();
        assert_eq!(Workspace::open(dir.path()).unwrap_err().to_string(), want);
    }
}

#[test]
fn routes_by_tool_id_model_and_path_and_every_contract_from() {
    let toml = r#"
default_contract = "refund"

[[route]]
contract = "ticket"
tool = "open_*"

[[route]]
contract = "ticket"
id = "legacy-*"

[[route]]
contract = "refund"
model = "claude-*"
path = "captures/anthropic/**"

[[source]]
path = "captures/sourced.jsonl"
contract = "ticket"
"#;
    let anthropic = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": "{\"amount_minor\": 3}"}], "stop_reason": "end_turn"});
    let dir = dir_with(&[
        ("verdict.toml", toml),
        ("schemas/refund.schema.json", REFUND),
        ("schemas/ticket.schema.json", TICKET),
        ("schemas/notify.schema.json", r#"{"type":"object"}"#),
        // route 1: the called tool's name
        (
            "captures/a_tool.json",
            &tool_call("chat-1", "open_ticket", r#"{"title": "x"}"#),
        ),
        // no route, but a contract named after the tool
        (
            "captures/b_named_tool.json",
            &tool_call("chat-2", "notify", r#"{"to": "x"}"#),
        ),
        // route 2: the id
        (
            "captures/c_id.json",
            r#"{"id": "legacy-7", "output": "{\"title\": \"t\"}"}"#,
        ),
        // route 3: model and path
        ("captures/anthropic/d.json", &anthropic.to_string()),
        // the record names its contract: before every route
        (
            "captures/e_record.json",
            r#"{"id": "legacy-8", "contract": "refund", "output": "{\"amount_minor\": 1}"}"#,
        ),
        // a [[source]]'s contract
        (
            "captures/sourced.jsonl",
            r#"{"id": "s1", "output": "{\"title\": \"t\"}"}"#,
        ),
        // nothing matches: the default
        (
            "captures/f_default.json",
            r#"{"id": "plain", "output": "{\"amount_minor\": 2}"}"#,
        ),
    ]);
    assert_eq!(
        rows(dir.path()),
        [
            "chat-1 response ready ready-for-commit - ticket route 1",
            "msg_1 response ready ready-for-commit - refund route 3",
            "chat-2 response ready ready-for-commit - notify tool",
            "legacy-7 capture ready ready-for-commit - ticket route 2",
            "legacy-8 capture ready ready-for-commit - refund record",
            "plain capture ready ready-for-commit - refund default",
            "s1 capture ready ready-for-commit - ticket source 1",
        ]
    );
    // the model alone does not match route 3 outside its path
    std::fs::rename(
        dir.path().join("captures/anthropic/d.json"),
        dir.path().join("captures/d.json"),
    )
    .unwrap();
    assert!(
        rows(dir.path())
            .contains(&"msg_1 response ready ready-for-commit - refund default".to_string())
    );
}

#[test]
fn unknown_contract_lists_what_was_tried() {
    let toml = "[[route]]\ncontract = \"ticket\"\ntool = \"open_*\"\n\n[[route]]\ncontract = \"ticket\"\nid = \"t-*\"\n";
    let dir = dir_with(&[
        ("verdict.toml", toml),
        ("schemas/refund.schema.json", REFUND),
        ("schemas/ticket.schema.json", TICKET),
        (
            "captures/a.json",
            &tool_call("chat-1", "close_ticket", "{}"),
        ),
        ("captures/b.json", r#"{"id": "b", "output": "{}"}"#),
    ]);
    let vs = verdicts(dir.path());
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>(),
        [
            "chat-1 response input reject UNKNOWN_CONTRACT - -",
            "b capture input reject UNKNOWN_CONTRACT - -",
        ]
    );
    assert_eq!(
        vs[0].errors[0].message,
        "no contract for the capture: no route matched (2 routes); no contract named after tool \"close_ticket\"; no default_contract and 2 schemas"
    );
    assert_eq!(
        vs[1].errors[0].message,
        "no contract for the capture: no route matched (2 routes); no tool call to name a contract; no default_contract and 2 schemas"
    );
    // a route naming a contract that does not exist: UNKNOWN_CONTRACT with a hint
    std::fs::write(
        dir.path().join("verdict.toml"),
        "[[route]]\ncontract = \"tickt\"\n",
    )
    .unwrap();
    let vs = verdicts(dir.path());
    assert_eq!(
        vs[0].errors[0].message,
        "unknown contract \"tickt\"; contracts: refund, ticket"
    );
    assert_eq!(
        vs[0].errors[0].hint.as_deref(),
        Some("did you mean `ticket`?")
    );
    assert_eq!(vs[0].contract.as_deref(), None);
}

#[test]
fn a_source_forces_a_format_a_tool_and_reads_other_extensions() {
    let toml = r#"
[[source]]
path = "captures/**/*.jsonl.out"
format = "openai-batch"

[[source]]
path = "captures/ollama.log"
format = "ollama"
"#;
    let ollama = json!({"model": "llama3.2", "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": "{\"amount_minor\": 4}"}, "done": true, "done_reason": "stop",
        "prompt_eval_count": 26, "eval_count": 12});
    let dir = dir_with(&[
        ("verdict.toml", toml),
        ("schemas/refund.schema.json", REFUND),
        (
            "captures/out/batch.jsonl.out",
            &format!(
                "{}\n{}\n",
                batch_line("x1", "gpt-4o", "{\"amount_minor\": 1}"),
                r#"{"id": "not-a-batch-line", "output": "{}"}"#
            ),
        ),
        ("captures/ollama.log", &ollama.to_string()),
        // not matched by any source, not a capture extension: not read
        ("captures/notes.log", "not json"),
    ]);
    let vs = verdicts(dir.path());
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>(),
        [
            "captures/ollama.log:1 ollama ready ready-for-commit - refund default",
            "x1 openai-batch ready ready-for-commit - refund default",
            "captures/out/batch.jsonl.out:2 openai-batch input reject INVALID_CAPTURE - -",
        ]
    );
    assert_eq!(vs[0].provider.as_deref(), Some("ollama"));
    assert_eq!(
        vs[2].errors[0].message,
        "openai-batch record: `custom_id` is missing"
    );
}

#[test]
fn source_and_decision_config_errors_name_the_key() {
    let unknown_format = format!(
        "[[source]] 1: unknown `format` \"openai-bach\" (did you mean `openai-batch`?); formats: {}",
        verdict::core::config::source_formats().join(", ")
    );
    let cases = [
        (
            "[[source]]\npath = \"a/*\"\nformat = \"openai-bach\"\n",
            unknown_format.as_str(),
        ),
        (
            "[[source]]\npath = \"a/*\"\ncontrakt = \"x\"\n",
            "line 3, column 1: unknown key `contrakt` (did you mean `contract`?)",
        ),
        (
            "[[route]]\ncontract = \"x\"\nmodle = \"y\"\n",
            "line 3, column 1: unknown key `modle` (did you mean `model`?)",
        ),
        (
            "[decisions]\nREFUSL = \"retry\"\n",
            "[decisions]: unknown reason `REFUSL` (did you mean `REFUSAL`?); a built-in reason's code (docs/verdicts.md#reasons)",
        ),
        (
            "[decisions]\nREFUSAL = \"regenrate\"\n",
            "[decisions]: `REFUSAL` = \"regenrate\" is not a decision (did you mean `regenerate`?); decisions: reject, recheck, regenerate, retry, ready-for-commit",
        ),
        (
            "[[join]]\npath = \"joins/[*.jsonl\"\n",
            "[[join]] 1: `path` is not a valid glob (\"joins/[*.jsonl\"): unclosed character class; missing ']'",
        ),
    ];
    assert!(verdict::core::config::source_formats().ends_with(&[
        "bedrock-converse",
        "ollama",
        "cohere"
    ]));
    for (toml, want) in cases {
        let dir = dir_with(&[("verdict.toml", toml)]);
        let err = Workspace::open(dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: {want}", dir.path().join("verdict.toml").display()),
            "{toml}"
        );
        let out = verdict_in(dir.path(), &["check", "."]);
        assert_eq!(out.status.code(), Some(2), "{toml}");
    }
}

#[test]
fn decisions_override_a_reasons_default_everywhere() {
    let refusal = json!({"id": "chat-r", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}]});
    let dir = dir_with(&[
        (
            "verdict.toml",
            "[decisions]\nREFUSAL = \"regenerate\"\nSCHEMA_MISMATCH = \"recheck\"\n",
        ),
        ("schemas/refund.schema.json", REFUND),
        ("captures/a.json", &refusal.to_string()),
        (
            "captures/b.json",
            r#"{"id": "b", "output": "{\"amount_minor\": \"x\"}", "expect": {"decision": "recheck"}}"#,
        ),
        (
            "captures/c.json",
            r#"{"id": "c", "output": "{\"amount_minor\": 1}", "status": "request_error", "status_detail": "503"}"#,
        ),
    ]);
    let vs = verdicts(dir.path());
    assert_eq!(
        vs.iter().map(row).collect::<Vec<_>>(),
        [
            "chat-r response response regenerate REFUSAL refund default",
            "b capture schema recheck SCHEMA_MISMATCH refund default",
            // a transient REQUEST_ERROR keeps the adapter's `retry`
            "c capture response retry REQUEST_ERROR refund default",
        ]
    );
    assert_eq!(vs[0].errors[0].decision.as_str(), "regenerate");
    assert_eq!(vs[1].expect.as_ref().map(|e| e.met), Some(true));
    assert_eq!(
        vs[0].next_action,
        verdict::core::feedback::next_action(
            verdict::core::verdict::Decision::Regenerate,
            Some(&verdict::core::verdict::Reason::REFUSAL)
        )
    );
    // check agrees
    let out = verdict_in(dir.path(), &["check", ".", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let decisions: Vec<&str> = report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["regenerate", "recheck", "retry"]);
}

#[test]
fn provider_metadata_goes_into_meta() {
    let dir = dir_with(&[
        ("schemas/refund.schema.json", REFUND),
        (
            "captures/batch.jsonl",
            &[
                bare_chat("chatcmpl-m1", "{\"amount_minor\": 1}"),
                // a capture record's own meta.model is kept
                json!({"id": "m2", "meta": {"model": "mine", "run": 3}, "response": serde_json::from_str::<Value>(&tool_call("chat-9", "x", "{\"amount_minor\": 2}")).unwrap()}).to_string(),
            ]
            .join("\n"),
        ),
    ]);
    let report = json_report(dir.path(), &["check", ".", "--format", "json"], 0);
    let vs = report["verdicts"].as_array().unwrap();
    assert_eq!(
        vs[0]["meta"],
        json!({"model": "gpt-4o-mini", "usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18}})
    );
    assert_eq!(vs[0]["contract_from"], "default");
    assert_eq!(vs[1]["meta"], json!({"model": "mine", "run": 3}));
    // rules never see meta: a rule reading it fails closed
    std::fs::write(
        dir.path().join("schemas/refund.rules.toml"),
        "[[rule]]\nreason = \"M\"\nrule = \"meta.model == 'x'\"\nmessage = \"m\"\n",
    )
    .unwrap();
    let vs = verdicts(dir.path());
    assert_eq!(
        vs[0].reason.as_ref().map(|r| r.as_str()),
        Some("RULE_ERROR")
    );
}

#[test]
fn a_folder_of_batch_files_with_a_verdict_toml_is_a_workspace() {
    let dir = dir_with(&[
        (
            "downloads/verdict.toml",
            "default_contract = \"refund\"\n[[join]]\npath = \"joins/*.jsonl\"\n",
        ),
        ("downloads/schemas/refund.schema.json", REFUND),
        (
            "downloads/batch_1_output.jsonl",
            &batch_line("d1", "gpt-4o", "{\"amount_minor\": 1}"),
        ),
        (
            "downloads/more/batch_2_output.jsonl",
            &batch_line("d2", "gpt-4o", "{\"amount_minor\": \"1\"}"),
        ),
        (
            "downloads/joins/expect.jsonl",
            r#"{"id": "d2", "expect": {"reason": "SCHEMA_MISMATCH"}}"#,
        ),
        ("downloads/ignored/x.jsonl", "garbage"),
        ("downloads/.gitignore", "ignored/\n"),
    ]);
    let root = dir.path().join("downloads");
    assert_eq!(
        rows(&root),
        [
            "d1 openai-batch ready ready-for-commit - refund default",
            "d2 openai-batch schema regenerate SCHEMA_MISMATCH refund default",
        ]
    );
    // check on the folder, its files now bare responses
    std::fs::write(
        root.join("batch_1_output.jsonl"),
        bare_chat("d1", "{\"amount_minor\": 1}"),
    )
    .unwrap();
    std::fs::write(
        root.join("more/batch_2_output.jsonl"),
        bare_chat("d2", "{\"amount_minor\": \"1\"}"),
    )
    .unwrap();
    let report = json_report(dir.path(), &["check", "downloads", "--format", "json"], 0);
    assert_eq!(report["summary"]["captures"], 2);
    assert_eq!(report["summary"]["expect_met"], 1);
    let sources: Vec<&str> = report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        ["batch_1_output.jsonl:1", "more/batch_2_output.jsonl:1"]
    );
    // a folder with none of verdict.toml, schemas/, captures/ is never walked whole
    let plain = dir_with(&[("a.json", r#"{"id": "a", "output": "{}"}"#)]);
    assert!(
        Workspace::open(plain.path())
            .unwrap()
            .capture_files()
            .is_empty()
    );
    // a folder with only `captures/` is its own workspace too, nothing above it is looked at
    let inner = dir_with(&[
        ("schemas/refund.schema.json", TICKET),
        ("ws/captures/a.json", r#"{"id": "a", "output": "{}"}"#),
    ]);
    assert_eq!(
        verdict::core::workspace::find_root(&inner.path().join("ws")),
        inner.path().join("ws")
    );
    assert_eq!(
        verdict::core::workspace::find_root(&inner.path().join("ws/captures/a.json")),
        inner.path().join("ws")
    );
}

/// `verdict ARGS` run in `dir` (a `--format json` check): asserts its exit code and returns
/// the report.
fn json_report(dir: &std::path::Path, args: &[&str], code: i32) -> Value {
    let out = verdict_in(dir, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A schema file named `back\slash.schema.json` (a backslash is an ordinary character in a
/// Unix file name) is the contract `back\slash`, not `back/slash`: beside
/// `back/slash.schema.json` (folder `back`) both contracts exist, each capture is checked
/// against its own, the rules file `back\slash.rules.toml` attaches to it, and messages and
/// `lint` name the file as it is (`docs/capture-record.md#choosing-the-contract`).
#[cfg(unix)]
#[test]
fn a_backslash_in_a_schema_file_name_stays_in_the_contract_name() {
    let string = r#"{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}"#;
    let number = r#"{"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"], "additionalProperties": false}"#;
    let rules = "[[rule]]\nreason = \"NOT_X\"\nrule = \"proposal.a == 'x'\"\nmessage = \"a is not x\"\nfield = \"/a\"\n";
    let dir = dir_with(&[
        ("schemas/back\\slash.schema.json", string),
        ("schemas/back\\slash.rules.toml", rules),
        ("schemas/back/slash.schema.json", number),
        (
            "captures/a.jsonl",
            &[
                json!({"id": "bs-ok", "contract": "back\\slash", "output": r#"{"a": "x"}"#}),
                json!({"id": "bs-rule", "contract": "back\\slash", "output": r#"{"a": "y"}"#}),
                json!({"id": "bs-type", "contract": "back\\slash", "output": r#"{"a": 1}"#}),
                json!({"id": "sl-ok", "contract": "back/slash", "output": r#"{"a": 1}"#}),
                json!({"id": "sl-type", "contract": "back/slash", "output": r#"{"a": "x"}"#}),
            ]
            .map(|v| v.to_string())
            .join("\n"),
        ),
    ]);
    assert_eq!(
        rows(dir.path()),
        [
            "bs-ok capture ready ready-for-commit - back\\slash record",
            "bs-rule capture business reject NOT_X back\\slash record",
            "bs-type capture schema regenerate SCHEMA_MISMATCH back\\slash record",
            "sl-ok capture ready ready-for-commit - back/slash record",
            "sl-type capture schema regenerate SCHEMA_MISMATCH back/slash record",
        ]
    );
    let ws = Workspace::open(dir.path()).unwrap();
    let names: Vec<&String> = ws.contracts.by_name.keys().collect();
    assert_eq!(names, ["back/slash", "back\\slash"]);
    assert_eq!(
        ws.contracts.get("back\\slash").unwrap().file,
        Path::new("schemas/back\\slash.schema.json")
    );
    // a broken one is named as it is
    std::fs::write(
        dir.path().join("schemas/back\\slash.schema.json"),
        "{\"type\": 5}",
    )
    .unwrap();
    let v = verdicts(dir.path());
    assert_eq!(
        v[0].reason.as_ref().map(|r| r.as_str()),
        Some("CONTRACT_ERROR")
    );
    assert_eq!(
        v[0].errors[0].message,
        "schemas/back\\slash.schema.json:1:10 at /type does not meet its meta-schema: 5 is not valid under any of the schemas listed in the 'anyOf' keyword"
    );
    let o = verdict_in(dir.path(), &["lint", ".", "-f", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: std::collections::BTreeSet<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "SCHEMA_INVALID")
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        ["schemas/back\\slash.schema.json"]
    );
}
