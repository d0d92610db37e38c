//! The bundled sample workspaces meet every `expect`, through the library and the binary;
//! editing a capture on disk changes exactly its verdict.

use crate::common;
use crate::common::verdicts as all_verdicts;
use common::refund_copy;

use std::path::{Path, PathBuf};
use std::process::Command;
use verdict::core::verdict::{Decision, Stage};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

/// Every verdict carries an `expect`, and meets it.
fn assert_every_expect_met(verdicts: &[verdict::core::verdict::Verdict]) {
    for v in verdicts {
        let e = v
            .expect
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no expect", v.id));
        assert!(
            e.met,
            "{}: expected {:?}, got {} {:?} {}",
            v.id, e.expect, v.stage, v.reason, v.decision
        );
    }
}

#[test]
fn refund_sample_meets_every_expect() {
    let verdicts = all_verdicts(&sample("refund"));
    assert_eq!(verdicts.len(), 25);
    assert_every_expect_met(&verdicts);
    // every stage and every decision is represented
    for s in [
        Stage::Response,
        Stage::Parse,
        Stage::Schema,
        Stage::Business,
        Stage::Ready,
    ] {
        assert!(verdicts.iter().any(|v| v.stage == s), "no {s} case");
    }
    for d in Decision::ALL {
        assert!(verdicts.iter().any(|v| v.decision == d), "no {d} case");
    }
}

#[test]
fn providers_sample_meets_every_expect() {
    let verdicts = all_verdicts(&sample("providers"));
    assert_eq!(verdicts.len(), 107);
    assert_every_expect_met(&verdicts);
}

/// The distinct `format`s of `verdicts`, sorted.
fn formats_of(verdicts: &[verdict::core::verdict::Verdict]) -> Vec<&str> {
    let mut formats: Vec<&str> = verdicts
        .iter()
        .filter_map(|v| v.format.as_deref())
        .collect();
    formats.sort_unstable();
    formats.dedup();
    formats
}

/// `samples/logs`: provider logs read where they lie, each record's `expect` from the join
/// file; every format of its README's table is there, and `check` exits 0 on it.
#[test]
fn logs_sample_meets_every_expect_in_every_format() {
    let verdicts = all_verdicts(&sample("logs"));
    assert_eq!(verdicts.len(), 36);
    assert_every_expect_met(&verdicts);
    let formats = formats_of(&verdicts);
    assert_eq!(
        formats,
        [
            "anthropic-batch",
            "bedrock-batch",
            "bedrock-converse",
            "cohere",
            "gemini-batch",
            "mcp",
            "ollama",
            "openai-batch",
            "response"
        ]
    );
    let gz: Vec<&str> = verdicts
        .iter()
        .filter(|v| v.source.file().ends_with(".jsonl.gz"))
        .map(|v| v.id.as_str())
        .collect();
    assert_eq!(gz, ["ticket-701", "ticket-702", "ticket-703", "ticket-704"]);
    assert_check_quietly_passes("logs");
}

/// `verdict check -q samples/NAME` exits 0 (every `expect` met, nothing failing unexpectedly).
fn assert_check_quietly_passes(name: &str) {
    let out = crate::common::verdict(&["check", "-q", sample(name).to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `samples/requests`: the schema the model was given beside the server contract; every
/// `expect` met, `check` exits 0, and the generation warnings are where its README says.
#[test]
fn requests_sample_meets_every_expect() {
    let verdicts = all_verdicts(&sample("requests"));
    assert_eq!(verdicts.len(), 10);
    assert_every_expect_met(&verdicts);
    let mut warned: Vec<(&str, &str)> = verdicts
        .iter()
        .flat_map(|v| {
            v.warnings
                .iter()
                .filter(|w| w.file.is_none())
                .map(move |w| (v.id.as_str(), w.code.as_str()))
        })
        .collect();
    warned.sort_unstable();
    assert_eq!(
        warned,
        [
            ("claude-tool-amount-0", "GENERATION_GAP"),
            ("refund-102", "GENERATION_GAP"),
            ("refund-103", "GENERATION_GAP"),
            ("refund-202", "GENERATION_GAP"),
            ("ticket-nullable", "GENERATION_GAP"),
            ("ticket-strict-broken", "STRICT_VIOLATION"),
        ]
    );
    assert_check_quietly_passes("requests");
}

/// `samples/traces`: OTLP/JSON GenAI spans, OpenInference spans, LiteLLM payloads, Langfuse
/// observations, LangSmith runs, a promptfoo results file (9 results) and retried calls
/// linked into chains by their trace (`retries/`), each
/// record's `expect` from the join file; every trace format is there, the record of only
/// agent and HTTP spans is no capture, and `check` exits 0 on it.
#[test]
fn traces_sample_meets_every_expect_in_every_format() {
    let verdicts = all_verdicts(&sample("traces"));
    assert_eq!(verdicts.len(), 43);
    assert_every_expect_met(&verdicts);
    let formats = formats_of(&verdicts);
    assert_eq!(
        formats,
        [
            "langfuse",
            "langsmith",
            "litellm",
            "openinference",
            "otlp",
            "promptfoo"
        ]
    );
    let sources: Vec<&str> = verdicts
        .iter()
        .filter(|v| v.source.file().as_ref() == "otel/collector.jsonl")
        .filter_map(|v| v.source.line())
        .map(|l| ["", "1", "2", "3", "4", "5", "6", "7", "8", "9"][l])
        .collect();
    // line 8 holds only an agent and an HTTP span (and the last lines of the Langfuse and
    // LangSmith files, a SPAN observation and a chain run, are no captures either)
    assert_eq!(sources, ["1", "2", "3", "4", "5", "6", "7", "9"]);
    assert_check_quietly_passes("traces");
}

/// Every sample workspace (`samples/*`) meets every `expect` of every capture.
#[test]
fn every_sample_workspace_meets_every_expect() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| root.join(n).is_dir())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "chains",
            "logs",
            "providers",
            "refund",
            "requests",
            "traces"
        ]
    );
    for name in &names {
        let verdicts = all_verdicts(&sample(name));
        assert!(!verdicts.is_empty(), "{name}");
        assert_every_expect_met(&verdicts);
    }
}

#[test]
fn editing_the_valid_amount_to_8000_flips_exactly_that_case_to_intent_mismatch() {
    let (_tmp, ws) = refund_copy();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["check", "--format", "jsonl"])
            .arg(&ws)
            .output()
            .unwrap()
    };
    let before = run();
    assert_eq!(
        before.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&before.stderr)
    );

    let file = ws.join("captures/valid-proposal.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace(r#"\"amount_minor\":5000"#, r#"\"amount_minor\":8000"#);
    assert_ne!(text, edited, "the sample's amount was not found");
    std::fs::write(&file, edited).unwrap();

    let after = run();
    assert_eq!(after.status.code(), Some(1));
    let lines = |o: &std::process::Output| -> Vec<serde_json::Value> {
        common::jsonl_verdicts(&String::from_utf8_lossy(&o.stdout))
    };
    let (b, a) = (lines(&before), lines(&after));
    assert_eq!(b.len(), a.len());
    let changed: Vec<(&serde_json::Value, &serde_json::Value)> =
        b.iter().zip(&a).filter(|(x, y)| x != y).collect();
    assert_eq!(changed.len(), 1, "exactly one verdict changes");
    let v = changed[0].1;
    assert_eq!(v["id"], "valid-proposal");
    assert_eq!(v["stage"], "business");
    assert_eq!(v["decision"], "recheck");
    assert_eq!(v["reason"], "INTENT_MISMATCH");
    assert_eq!(v["errors"][0]["pointer"], "/amount_minor");
    assert_eq!(
        v["errors"][0]["message"],
        "proposal 8000, confirmed intent 5000"
    );
    assert_eq!(v["expect"]["met"], false);
}

/// `check` reads a log's lines a run at a time, then evaluates them
/// (`Workspace::check_all_many`): every record of every sample workspace, and records that
/// could not be read, are not JSON, hold several captures or none, get exactly the verdicts
/// `Workspace::check_all` gives each alone, in order.
#[test]
fn records_checked_a_run_at_a_time_get_the_verdicts_each_gets_alone() {
    use verdict::core::capture::RawRecord;
    use verdict::core::record_ref::RecordRef;
    use verdict::core::verdict::Finding;
    use verdict::core::workspace::Workspace;
    let mut runs = 0;
    let mut verdicts = 0;
    for name in [
        "refund",
        "providers",
        "logs",
        "chains",
        "requests",
        "traces",
    ] {
        let ws = Workspace::open(&sample(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut raws: Vec<RawRecord> = ws
            .capture_files()
            .iter()
            .flat_map(|f| ws.read_file(f))
            .collect();
        let at = |line| RecordRef::new("captures/odd.jsonl", Some(line));
        raws.push(RawRecord::json(
            at(1),
            Err(Finding::new(
                Stage::Input,
                verdict::core::verdict::Reason::INVALID_CAPTURE,
                "unreadable",
            )),
        ));
        raws.push(RawRecord::json(at(2), Ok("{\"id\":".into())));
        raws.push(RawRecord::json(at(3), Ok("[1,2]".into())));
        raws.push(RawRecord::json(
            at(4),
            Ok(r#"{"id":"x","output":"{}"}"#.into()),
        ));
        let alone: Vec<_> = raws.iter().map(|r| ws.check_all(r)).collect();
        for run in [1, 2, 7, raws.len()] {
            let many: Vec<_> = raws
                .chunks(run)
                .flat_map(|c| ws.check_all_many(c))
                .collect();
            assert_eq!(many, alone, "samples/{name}, runs of {run}");
            runs += 1;
        }
        verdicts += alone.iter().map(Vec::len).sum::<usize>();
    }
    // the OTLP records of samples/traces hold several captures each
    assert_eq!(runs, 24);
    assert!(verdicts > 240, "{verdicts} verdicts");
}
