//! The `otlp` benchmark workload (`bench/otlp.py`, BENCHMARKS.md "1M GenAI spans") compares
//! like with like: its spans and the same outputs as capture records give the same verdict
//! per id (stage, decision, reason, pointer), over every status path the spans take.

use crate::common;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `bench/otlp.py OUT --m M` (python3, with a deadline: a hang fails).
fn generate(out: &Path, m: usize) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/otlp.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(out)
        .args(["--m", &m.to_string(), "--seed", "5"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("python3 runs bench/otlp.py");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success(), "bench/otlp.py failed: {st}");
            return;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            panic!("bench/otlp.py did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `check --format jsonl` of the workspace at `root`: by id, (stage, decision, reason,
/// pointer), and every verdict's (format, source).
type Outcomes = BTreeMap<String, (String, String, String, String)>;

fn check(root: &Path) -> (Outcomes, Vec<(String, String)>) {
    let r = common::run::run(
        &["check", "--format", "jsonl", "."],
        root,
        Duration::from_secs(60),
    );
    let mut by_id = BTreeMap::new();
    let mut where_ = Vec::new();
    for d in common::jsonl_verdicts(&r.stdout) {
        let s = |k: &str| d[k].as_str().unwrap_or("-").to_string();
        let o = (s("stage"), s("decision"), s("reason"), s("pointer"));
        assert!(by_id.insert(s("id"), o).is_none(), "an id twice: {d}");
        where_.push((s("format"), s("source")));
    }
    (by_id, where_)
}

#[test]
fn the_otlp_workload_gives_the_verdicts_of_the_same_outputs_as_capture_records() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 300);
    let (spans, span_at) = check(&dir.path().join("otlp"));
    let (records, record_at) = check(&dir.path().join("otlp-as-captures"));
    assert_eq!(spans.len(), 300);
    assert_eq!(spans, records);
    // the spans are read as spans, several to a line, and the records as capture records
    assert!(span_at.iter().all(|(f, _)| f == "otlp"), "{span_at:?}");
    assert!(record_at.iter().all(|(f, _)| f == "capture"));
    assert!(
        span_at.iter().any(|(_, s)| s.ends_with(":1#2")),
        "{span_at:?}"
    );
    // every way the workload fails is among them, so the two readings agree on each
    let mut seen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for (stage, decision, reason, _) in spans.values() {
        *seen
            .entry((stage.clone(), decision.clone(), reason.clone()))
            .or_default() += 1;
    }
    let kinds: Vec<String> = seen
        .keys()
        .map(|(s, d, r)| format!("{s} {d} {r}"))
        .collect();
    assert_eq!(
        kinds,
        [
            "parse regenerate FENCED_JSON",
            "parse regenerate INVALID_JSON",
            "parse regenerate NON_STANDARD_NUMBER",
            "parse regenerate TRAILING_CONTENT",
            "parse regenerate TRUNCATED_JSON",
            "ready ready-for-commit -",
            "response reject CONTENT_FILTERED",
            "response reject REFUSAL",
            "response retry REQUEST_ERROR",
            "response retry TRUNCATED_OUTPUT",
            "schema regenerate SCHEMA_MISMATCH",
        ]
    );
}
