//! `verdict watch --json`: the first pass, then one line per changed verdict, for an atomic
//! save, a new folder and a deletion. Each batch is awaited with a generous deadline
//! ([`EVENTUALLY`]): how fast a change is reported is the benchmark's question (bench/), not
//! these tests'.

use crate::common;
use common::refund_copy;
use common::watch::WatchJson;

use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const DEBOUNCE_MS: u64 = 150;

/// How long a test waits for a batch before it fails: far beyond the debounce, for a loaded
/// machine running the other tests at the same time.
const EVENTUALLY: Duration = Duration::from_secs(20);

struct Watch(WatchJson);

impl Watch {
    fn start(ws: &Path) -> Watch {
        Watch(WatchJson::start(
            ws,
            &["--debounce-ms", &DEBOUNCE_MS.to_string()],
        ))
    }

    /// Lines up to and including the next summary, or a panic after [`EVENTUALLY`].
    fn batch(&self, what: &str) -> Vec<Value> {
        self.0.batch(what, EVENTUALLY)
    }
}

#[test]
fn edits_new_folders_and_deletions_produce_their_lines() {
    let (_tmp, ws) = refund_copy();
    let w = Watch::start(&ws);
    // the first summary is the readiness sign: watch sets its watches before the first pass
    let first = w.batch("the first pass");
    assert_eq!(first.len(), 26, "25 verdicts and a summary");
    assert!(
        first[..25]
            .iter()
            .all(|l| l["type"] == "verdict" && l["cause"].is_null() && l["flipped_from"].is_null())
    );
    assert_eq!(first[25]["data"]["captures"], 25);

    // atomic save (temp file + rename) that flips the valid proposal to INTENT_MISMATCH
    let file = ws.join("captures/valid-proposal.json");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace(r#"\"amount_minor\":5000"#, r#"\"amount_minor\":8000"#);
    let tmp_file = ws.join("captures/.valid-proposal.json.tmp");
    std::fs::write(&tmp_file, text).unwrap();
    std::fs::rename(&tmp_file, &file).unwrap();
    let batch = w.batch("the atomic save");
    assert_eq!(batch.len(), 2, "{batch:?}");
    let v = &batch[0];
    assert_eq!(v["type"], "verdict");
    assert_eq!(v["cause"], "captures/valid-proposal.json");
    assert_eq!(v["data"]["id"], "valid-proposal");
    assert_eq!(v["data"]["reason"], "INTENT_MISMATCH");
    assert_eq!(
        v["flipped_from"],
        serde_json::json!({"stage": "ready", "decision": "ready-for-commit", "reason": null})
    );
    assert_eq!(batch[1]["data"]["funnel"]["ready"], 0);

    // a new folder with a capture created right after it is rescanned
    std::fs::create_dir_all(ws.join("captures/new/deeper")).unwrap();
    std::fs::write(
        ws.join("captures/new/deeper/x.json"),
        r#"{"id": "fresh", "output": "{}"}"#,
    )
    .unwrap();
    let batch = w.batch("the new folder");
    let fresh: Vec<&Value> = batch
        .iter()
        .filter(|l| l["data"]["id"] == "fresh")
        .collect();
    assert_eq!(fresh.len(), 1, "{batch:?}");
    assert_eq!(fresh[0]["data"]["reason"], "SCHEMA_MISMATCH");
    assert!(fresh[0]["flipped_from"].is_null());

    // a deleted capture disappears; a busy machine may deliver the new file's own event
    // after the folder's rescan, as one more batch about it, before the deletion's
    std::fs::remove_file(ws.join("captures/responses/refusal.json")).unwrap();
    let batch = loop {
        let batch = w.batch("the deletion");
        if batch.iter().any(|l| l["type"] == "removed") {
            break batch;
        }
        assert!(
            batch
                .iter()
                .all(|l| l["type"] == "summary" || l["data"]["id"] == "fresh"),
            "{batch:?}"
        );
    };
    let removed: Vec<&Value> = batch.iter().filter(|l| l["type"] == "removed").collect();
    assert_eq!(removed.len(), 1, "{batch:?}");
    assert_eq!(removed[0]["data"]["id"], "refusal");
    assert!(
        batch.iter().all(
            |l| ["removed", "summary"].contains(&l["type"].as_str().unwrap())
                || l["data"]["id"] == "fresh"
        ),
        "{batch:?}"
    );
    assert_eq!(batch.last().unwrap()["data"]["captures"], 25);
}

/// A `refund_copy` with `watch --json` running and its first pass read (the readiness
/// sign: watch sets its watches before the first pass).
fn started() -> (tempfile::TempDir, std::path::PathBuf, Watch) {
    let (tmp, ws) = refund_copy();
    let w = Watch::start(&ws);
    w.batch("the first pass");
    (tmp, ws, w)
}

/// Edits one contract file (`from` -> `to`) and checks that the valid proposal flips to
/// `reason`, every flip naming that file as its cause.
fn contract_edit_flips_the_valid_proposal(file: &str, from: &str, to: &str, reason: &str) {
    let (_tmp, ws, w) = started();
    let path = ws.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen(from, to, 1);
    assert_ne!(text, edited);
    std::fs::write(&path, edited).unwrap();
    let batch = w.batch(&format!("the edit of {file}"));
    let flipped: Vec<&Value> = batch
        .iter()
        .filter(|l| !l["flipped_from"].is_null())
        .collect();
    assert!(
        flipped
            .iter()
            .any(|l| l["data"]["id"] == "valid-proposal" && l["data"]["reason"] == reason),
        "{batch:?}"
    );
    assert!(flipped.iter().all(|l| l["cause"] == file), "{flipped:?}");
}

#[test]
fn a_schema_edit_revalidates_that_contracts_captures() {
    // tighten the amount: minimum 6000 makes the valid 5000 proposal fail the schema
    contract_edit_flips_the_valid_proposal(
        "schemas/refund-v1.schema.json",
        "\"minimum\": 1",
        "\"minimum\": 6000",
        "SCHEMA_MISMATCH",
    );
}

#[test]
fn a_rules_edit_alone_revalidates_that_contracts_captures() {
    // the old fingerprint must be the rules as loaded, not the file re-read after the edit
    contract_edit_flips_the_valid_proposal(
        "schemas/refund-v1.rules.toml",
        "proposal.amount_minor != null",
        "proposal.amount_minor != null && proposal.amount_minor < 5000",
        "MISSING_AMOUNT",
    );
}

#[test]
fn deleting_a_jsonl_line_removes_that_capture_and_flips_nothing() {
    let (_tmp, ws, w) = started();
    let log = ws.join("captures/cases.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[2].contains("\"amount-nan\""), "{}", lines[2]);
    let rest: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, l)| *l)
        .collect();
    let tmp = ws.join("captures/.cases.jsonl.tmp");
    std::fs::write(&tmp, rest.join("\n") + "\n").unwrap();
    std::fs::rename(&tmp, &log).unwrap();
    let batch = w.batch("the rewritten log");
    let removed: Vec<&Value> = batch.iter().filter(|l| l["type"] == "removed").collect();
    assert_eq!(removed.len(), 1, "{batch:?}");
    assert_eq!(removed[0]["data"]["id"], "amount-nan");
    assert_eq!(
        removed[0]["data"]["source"],
        format!("captures/cases.jsonl:{}", lines.len())
    );
    let flipped: Vec<&Value> = batch
        .iter()
        .filter(|l| l["type"] == "verdict" && !l["flipped_from"].is_null())
        .collect();
    assert!(flipped.is_empty(), "{flipped:?}");
    // every capture after the deleted line is re-reported at its new line, unchanged
    let moved: Vec<&Value> = batch.iter().filter(|l| l["type"] == "verdict").collect();
    assert_eq!(moved.len(), lines.len() - 3, "{moved:?}");
    assert_eq!(batch.last().unwrap()["data"]["captures"], 24);
}

#[test]
fn an_edit_that_only_changes_whether_expect_is_met_is_a_flip() {
    // the verdict stays ready; only the capture's `expect` changes, so it now misses it:
    // the TUI and `review` call that a flip (newly failing), and so must `watch --json`
    let (_tmp, ws, w) = started();
    let file = ws.join("captures/valid-proposal.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace(
        r#""expect": {"stage": "ready", "decision": "ready-for-commit", "reason": null}"#,
        r#""expect": {"stage": "schema"}"#,
    );
    assert_ne!(text, edited);
    std::fs::write(&file, edited).unwrap();
    let batch = w.batch("the expect-only edit");
    let v = batch
        .iter()
        .find(|l| l["data"]["id"] == "valid-proposal")
        .unwrap_or_else(|| panic!("{batch:?}"));
    assert_eq!(v["data"]["stage"], "ready");
    assert_eq!(v["data"]["expect"]["met"], false);
    assert_eq!(
        v["flipped_from"],
        serde_json::json!({"stage": "ready", "decision": "ready-for-commit", "reason": null})
    );
    assert_eq!(batch.last().unwrap()["data"]["passed"], 24, "{batch:?}");
}

#[test]
fn a_deleted_folder_removes_every_capture_below_it() {
    // the watcher may report only the folder: its captures must go, as `check` sees them
    let (_tmp, ws, w) = started();
    let folder = ws.join("captures/responses");
    let inside = std::fs::read_dir(&folder).unwrap().count();
    assert!(inside > 1, "the sample has several captures in {folder:?}");
    std::fs::remove_dir_all(&folder).unwrap();
    let mut removed = Vec::new();
    let last = loop {
        let batch = w.batch("the folder's deletion");
        removed.extend(
            batch
                .iter()
                .filter(|l| l["type"] == "removed")
                .map(|l| l["data"]["source"].as_str().unwrap().to_string()),
        );
        if removed.len() >= inside {
            break batch;
        }
    };
    assert_eq!(removed.len(), inside, "{removed:?}");
    assert!(
        removed.iter().all(|s| s.starts_with("captures/responses/")),
        "{removed:?}"
    );
    assert_eq!(last.last().unwrap()["data"]["captures"], 25 - inside);
}

/// An MCP session log under `watch --json` (`docs/record-shapes.md#mcp`): messages that are
/// no capture have no line and are not counted; a fixed `tools/list` schema in one file
/// re-reports that tool's calls; an appended notification reports nothing.
#[test]
fn mcp_tools_list_changes_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("captures")).unwrap();
    let s = crate::mcp::session().join("\n") + "\n";
    let t = crate::mcp::broken_session().join("\n") + "\n";
    std::fs::write(ws.join("captures/s.jsonl"), &s).unwrap();
    std::fs::write(ws.join("captures/t.jsonl"), &t).unwrap();
    let w = Watch::start(ws);
    let first = w.batch("the first pass");
    assert_eq!(first.len(), 22 + 2 + 1, "{first:#?}");
    assert_eq!(first.last().unwrap()["data"]["captures"], 24);
    let file = ws.join("captures/t.jsonl");
    let tmp_file = ws.join("captures/.t.jsonl.tmp");
    std::fs::write(
        &tmp_file,
        t.replace(r#"{"type":"objekt"}"#, r#"{"type":"object"}"#),
    )
    .unwrap();
    std::fs::rename(&tmp_file, &file).unwrap();
    let batch = w.batch("the fixed inputSchema");
    let verdicts: Vec<&Value> = batch.iter().filter(|l| l["type"] == "verdict").collect();
    assert_eq!(verdicts.len(), 1, "{batch:#?}");
    assert_eq!(verdicts[0]["data"]["id"], "captures/t.jsonl#2");
    assert_eq!(verdicts[0]["data"]["stage"], "ready");
    assert_eq!(verdicts[0]["cause"], "captures/t.jsonl");
    assert_eq!(verdicts[0]["flipped_from"]["reason"], "CONTRACT_ERROR");
    assert_eq!(batch.last().unwrap()["data"]["captures"], 24);
    // a notification appended: no capture, nothing to report
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(ws.join("captures/s.jsonl"))
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n",
    )
    .unwrap();
    drop(f);
    let batch = w.batch("the appended notification");
    assert!(batch.iter().all(|l| l["type"] == "summary"), "{batch:#?}");
    assert_eq!(batch.last().unwrap()["data"]["captures"], 24);
}

#[test]
fn an_edited_join_file_revalidates_the_captures_it_joins_as_check_does() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let write = |p: &str, text: &str| {
        let p = ws.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("verdict.toml", "[[join]]\npath = \"joins/*.jsonl\"\n");
    write(
        "schemas/refund.schema.json",
        r#"{"type":"object","properties":{"amount_minor":{"type":"integer"}},"required":["amount_minor"]}"#,
    );
    write(
        "captures/r.json",
        r#"{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"amount_minor\": 700}"}, "finish_reason": "stop"}]}"#,
    );
    write(
        "joins/j.jsonl",
        r#"{"id": "chatcmpl-1", "intent": {"amount_minor": 700}}"#,
    );
    write(
        "joins/other.jsonl",
        r#"{"id": "chatcmpl-gone", "context": {}}"#,
    );
    let w = Watch::start(ws);
    let first = w.batch("the first pass");
    assert_eq!(first[0]["data"]["id"], "chatcmpl-1");
    // the join line that matches no capture: a workspace warning of the summary, as in check
    let summary = &first.last().unwrap()["data"];
    assert_eq!(
        summary["warnings"][0]["code"], "UNMATCHED_JOIN",
        "{summary}"
    );
    assert_eq!(
        summary["warnings"][0]["file"], "joins/other.jsonl:1",
        "{summary}"
    );
    assert_eq!(first[0]["data"]["stage"], "ready");
    // the join's intent changes: the capture it joins flips, as a fresh check sees it
    write(
        "joins/j.jsonl",
        r#"{"id": "chatcmpl-1", "intent": {"amount_minor": 500}}"#,
    );
    let batch = w.batch("the edit of the join file");
    let line = batch
        .iter()
        .find(|l| l["data"]["id"] == "chatcmpl-1")
        .unwrap_or_else(|| panic!("{batch:?}"));
    assert_eq!(
        (
            &line["data"]["stage"],
            &line["data"]["reason"],
            &line["flipped_from"]["stage"]
        ),
        (
            &Value::from("business"),
            &Value::from("INTENT_MISMATCH"),
            &Value::from("ready")
        ),
        "{line}"
    );
    let out = common::verdict_in(ws, &["check", ".", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["summary"]["warnings"],
        batch.last().unwrap()["data"]["warnings"]
    );
    let checked = &report["verdicts"][0];
    for k in [
        "id",
        "stage",
        "decision",
        "reason",
        "contract_from",
        "errors",
    ] {
        assert_eq!(checked[k], line["data"][k], "{k}");
    }
}

/// A folder with no captures yet: `watch --json` says so on stderr, naming where it looked
/// (stdout keeps its JSON lines: a summary of 0 captures), and checks a capture that
/// appears there.
#[test]
fn a_workspace_without_captures_is_watched_and_says_so_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let w = Watch::start(tmp.path());
    let first = w.batch("the first pass");
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["data"]["captures"], 0);
    let said = w.0.errors.recv_timeout(EVENTUALLY).unwrap();
    assert_eq!(
        said,
        "verdict: no captures yet (searched ./captures (missing)); watching: files that appear there are checked as they come"
    );
    std::fs::create_dir(tmp.path().join("captures")).unwrap();
    std::fs::write(
        tmp.path().join("captures/a.json"),
        r#"{"id": "a", "output": "{}"}"#,
    )
    .unwrap();
    let batch = loop {
        let batch = w.batch("the new capture");
        if batch.len() > 1 {
            break batch;
        }
    };
    assert_eq!(batch[0]["data"]["id"], "a");
    assert_eq!(batch.last().unwrap()["data"]["captures"], 1);
}

/// A chain whose attempt numbers skip: `check`'s summary warns `CHAIN_ATTEMPTS` among its
/// workspace warnings, and so does every summary line of watch (docs/verdicts.md); once
/// the attempt is back, neither warns.
#[test]
fn the_summary_carries_the_chain_warnings_check_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("chains");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/chains"),
        &ws,
    );
    let log = ws.join("captures/agent-loop.jsonl");
    let whole = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = whole.lines().collect();
    // the second line is the first attempt of `loop-recovered-2`: its attempts start at 2
    lines.remove(1);
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let check_warnings = |ws: &Path| {
        let out = common::verdict_in(ws, &["check", ".", "--format", "json"]);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["summary"]["warnings"].clone()
    };
    let want = check_warnings(&ws);
    assert_eq!(want[0]["code"], "CHAIN_ATTEMPTS", "{want}");
    assert_eq!(want.as_array().unwrap().len(), 1, "{want}");
    let w = Watch::start(&ws);
    let first = w.batch("the first pass");
    assert_eq!(first.last().unwrap()["data"]["warnings"], want);
    std::fs::write(&log, &whole).unwrap();
    let batch = w.batch("the attempt put back");
    assert_eq!(check_warnings(&ws), Value::Null);
    assert_eq!(batch.last().unwrap()["data"]["warnings"], Value::Null);
}

/// Several chains with warnings: a watch's summary lists them in the order `check`'s
/// does (the order `check` reads each chain's first attempt: `captures/a.jsonl` before
/// `captures/b.jsonl`), whatever order the files were saved in. The chain of `a.jsonl`,
/// saved while watching, used to come last (the order the watch first saw each chain).
#[test]
fn several_chain_warnings_come_in_checks_order() {
    let line = |id: &str, chain: &str, attempt: u64| {
        serde_json::json!({"id": id, "chain": chain, "attempt": attempt, "output": "{}"})
            .to_string()
            + "\n"
    };
    let ws = common::workspace_with(
        r#"{"type": "object"}"#,
        &[(
            "b.jsonl",
            &(line("a1", "alpha", 1) + &line("a3", "alpha", 3)),
        )],
    );
    let w = Watch::start(ws.path());
    let first = w.batch("the first pass");
    assert_eq!(
        first.last().unwrap()["data"]["warnings"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    std::fs::write(
        ws.path().join("captures/a.jsonl"),
        line("z1", "zeta", 1) + &line("z2", "zeta", 1),
    )
    .unwrap();
    let summary = loop {
        let batch = w.batch("a.jsonl saved");
        let summary = batch.last().unwrap()["data"].clone();
        if summary["captures"] == 4 {
            break summary;
        }
    };
    let out = common::verdict_in(ws.path(), &["check", ".", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = &report["summary"]["warnings"];
    let messages: Vec<&str> = want
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "chain \"zeta\": attempt 1 appears 2 times (captures/a.jsonl:1, captures/a.jsonl:2); its attempts are taken as ordered, never renumbered (docs/chains.md#order)",
            "chain \"alpha\": attempt 2 missing; its attempts are taken as ordered, never renumbered (docs/chains.md#order)",
        ]
    );
    assert_eq!(&summary["warnings"], want);
}

/// `watch --json WS | head -1` in a quiet workspace: watch ends (exit 0, as at a write
/// into a closed pipe) soon after its reader is gone, not at its next write after a
/// change that may never come (docs/commands.md: it runs until its output is closed).
#[cfg(unix)]
#[test]
fn a_quiet_watch_ends_soon_after_its_output_is_closed() {
    use std::io::BufRead;
    let (_tmp, ws) = refund_copy();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["watch", "--json", "."])
        .current_dir(&ws)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains(r#""type":"verdict""#), "{line}");
    // the reader exits, as `head -1` does: the first pass's lines may still be unread
    drop(out);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > EVENTUALLY {
            let _ = child.kill();
            let _ = child.wait();
            panic!("watch still runs {EVENTUALLY:?} after its output was closed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
}
