//! The pre-pass (`docs/commands.md#the-pre-pass`): loading a workspace reads no capture
//! file; one read of each file gives the MCP facts, the batch requests and what a hook
//! collects (the duplicate-id candidates), each record seen once, as the pipeline reads it;
//! the engine reports its progress before its first run. Fixtures: `samples/logs` (a
//! workspace reading its own folder: an MCP session with `tools/list`, an OpenAI batch input
//! file, a `.jsonl.gz` log), copied, with a duplicate id and a FIFO added.

use crate::common;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use verdict::core::capture;
use verdict::core::prescan::{self, Hook, Progress, Target};
use verdict::core::workspace::Workspace;

/// A hook that keeps (file, line, readable) of every record it is given.
struct Lines;

impl Hook for Lines {
    type Found = Vec<(u32, u32, bool)>;

    fn record(&self, file: u32, line: u32, bytes: Option<&[u8]>, found: &mut Self::Found) {
        found.push((file, line, bytes.is_some()));
    }

    fn append(into: &mut Self::Found, other: Self::Found) {
        into.extend(other);
    }
}

/// A copy of `samples/logs` with `extra.jsonl` (a blank line, and the id of the first
/// OpenAI batch result again) and, on unix, a FIFO named `pipe.jsonl`.
fn logs_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/logs"),
        dir.path(),
    );
    std::fs::write(
        dir.path().join("extra.jsonl"),
        "\n{\"id\":\"dup\",\"output\":\"{}\"}\n\n{\"id\":\"dup\",\"output\":\"{}\"}\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        let fifo =
            std::ffi::CString::new(dir.path().join("pipe.jsonl").to_string_lossy().into_owned())
                .unwrap();
        // SAFETY: a valid NUL-terminated path
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    }
    dir
}

/// The line of every record of `path` as the pipeline reads it (0: a one-record file, or a
/// log that cannot be opened).
fn pipeline_lines(ws: &Workspace, path: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    capture::for_each_record_as(
        path,
        &ws.relative(path),
        ws.config.max_capture_bytes,
        ws.is_log_file(path),
        |r| out.push(r.source.line().map_or(0, |l| l as u32)),
    );
    out
}

#[test]
fn loading_a_workspace_reads_no_capture_file_and_the_facts_come_after() {
    let dir = logs_copy();
    let loaded = Workspace::load(dir.path()).unwrap();
    // nothing of the capture files: no tool contract, no MCP fact, no request
    let names = |ws: &Workspace| ws.contracts.by_name.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&loaded), ["ticket"]);
    assert!(loaded.mcp.declarations().is_empty());
    assert!(loaded.requests.is_empty());
    // the pre-pass's facts compile the tools' contracts and index the requests
    let (mcp, requests) = prescan::facts(&loaded, &loaded.capture_files());
    let ws = loaded.with_facts(mcp, requests);
    assert_eq!(
        names(&ws),
        ["mcp/get_weather.input", "mcp/get_weather.output", "ticket"]
    );
    let ids: Vec<&str> = {
        let mut v: Vec<&str> = ws.requests.ids().collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        ids,
        [
            "ticket-001",
            "ticket-002",
            "ticket-003",
            "ticket-004",
            "ticket-005"
        ]
    );
    // what `Workspace::open` gives (the convenience that does both)
    let opened = Workspace::open(dir.path()).unwrap();
    assert_eq!(names(&opened), names(&ws));
    assert_eq!(
        opened.mcp.declarations(),
        ws.mcp.declarations(),
        "the same tools/list declarations"
    );
}

#[test]
fn one_read_gives_each_record_once_to_every_concern() {
    let dir = logs_copy();
    let ws = Workspace::load(dir.path()).unwrap();
    let files = ws.capture_files();
    // every other file hooked, numbered from 0
    let targets: Vec<Target> = files
        .iter()
        .enumerate()
        .map(|(i, p)| Target {
            path: p.clone(),
            hook: (i % 2 == 0).then_some((i / 2) as u32),
        })
        .collect();
    let progress = Progress::default();
    let pre = prescan::read(&ws, &targets, true, &Lines, &progress);
    assert!(pre.complete);
    assert_eq!(pre.files.len(), files.len());
    let mut total = 0;
    for (i, (read, path)) in pre.files.iter().zip(&files).enumerate() {
        assert_eq!(&read.path, path);
        assert_eq!(&*read.name, ws.relative(path));
        let want = pipeline_lines(&ws, path);
        assert_eq!(read.records, want.len(), "{}", read.name);
        total += want.len();
        let seen: Vec<u32> = pre
            .found
            .iter()
            .filter(|f| Some(f.0) == read.hook)
            .map(|f| f.1)
            .collect();
        if i % 2 == 0 {
            assert_eq!(read.hook, Some((i / 2) as u32));
            assert_eq!(
                read.lines.iter().collect::<Vec<u32>>(),
                want,
                "{}",
                read.name
            );
            assert_eq!(seen, want, "{}: each record once, in order", read.name);
        } else {
            assert_eq!(read.hook, None);
            assert!(read.lines.is_empty() && seen.is_empty(), "{}", read.name);
        }
    }
    // the blank lines of extra.jsonl are no records; the FIFO is one unreadable record
    let extra = pre
        .files
        .iter()
        .find(|f| &*f.name == "extra.jsonl")
        .unwrap();
    assert_eq!(extra.records, 2);
    #[cfg(unix)]
    {
        let pipe = pre.files.iter().find(|f| &*f.name == "pipe.jsonl").unwrap();
        assert_eq!(pipe.records, 1);
        if let Some(h) = pipe.hook {
            assert_eq!(
                pre.found.iter().filter(|f| f.0 == h).collect::<Vec<_>>(),
                [&(h, 0, false)]
            );
        }
    }
    assert_eq!(progress.records(), total as u64);
    assert_eq!(progress.files_done(), files.len());
    assert_eq!(progress.files(), files.len());
    // the facts of every file, hooked or not
    let tools: Vec<&str> = pre
        .mcp
        .declarations()
        .iter()
        .map(|d| d.tool.as_str())
        .collect();
    assert_eq!(tools, ["get_weather"]);
    assert_eq!(
        pre.mcp.declarations()[0].at.to_string(),
        "mcp/session.jsonl:5"
    );
    assert!(pre.requests.has_id("ticket-003"));
    // without the facts: the hook only
    let bare = prescan::read(&ws, &targets, false, &Lines, &Progress::default());
    assert!(bare.mcp.declarations().is_empty() && bare.requests.is_empty());
    assert_eq!(bare.found, pre.found);
}

#[test]
fn a_stopped_pre_pass_reads_nothing_more_and_says_so() {
    let dir = logs_copy();
    let ws = Workspace::load(dir.path()).unwrap();
    let progress = Progress::default();
    progress.stop();
    let pre = prescan::read(
        &ws,
        &prescan::targets(&ws.capture_files()),
        true,
        &Lines,
        &progress,
    );
    assert!(!pre.complete);
    assert_eq!(progress.records(), 0);
    assert!(pre.mcp.declarations().is_empty());
}

#[test]
fn the_engine_reports_the_pre_pass_before_its_first_run() {
    use verdict::engine::{Engine, EngineEvent, Job};
    let dir = logs_copy();
    // no FIFO here: its record is unreadable, which is not what this is about
    let _ = std::fs::remove_file(dir.path().join("pipe.jsonl"));
    let ws = Arc::new(Workspace::load(dir.path()).unwrap());
    let files: Vec<PathBuf> = ws.capture_files();
    let records: usize = files.iter().map(|f| pipeline_lines(&ws, f).len()).sum();
    let (tx, rx) = std::sync::mpsc::channel();
    let engine = Engine::spawn(dir.path().to_path_buf(), ws.clone(), move |e| {
        tx.send(e).is_ok()
    });
    engine.submit(Job::ValidateAll {
        generation: 1,
        reload: false,
    });
    let mut readings = Vec::new();
    let mut listed = 0;
    let started = loop {
        match rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap() {
            // the records read, listed for the workbench's pending rows
            EngineEvent::Listed {
                generation,
                records,
            } => {
                assert_eq!(generation, 1);
                listed += records
                    .iter()
                    .map(|r| (r.last - r.first + 1) as usize)
                    .sum::<usize>();
            }
            EngineEvent::Reading {
                generation,
                files_done,
                files: n,
                ..
            } => {
                assert_eq!(generation, 1);
                assert_eq!(n, files.len());
                readings.push(files_done);
            }
            EngineEvent::Started {
                workspace, total, ..
            } => break (workspace, total),
            other => panic!("before Started: {other:?}"),
        }
    };
    assert!(!readings.is_empty(), "a Reading before the run");
    assert!(readings.is_sorted());
    assert_eq!(
        started.1, records,
        "the run's total is the pre-pass's count"
    );
    assert_eq!(listed, records, "every record listed before the run");
    // the run's workspace has the tools' contracts, the loaded one has not
    assert!(started.0.contracts.get("mcp/get_weather.input").is_some());
    assert!(ws.contracts.get("mcp/get_weather.input").is_none());
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap() {
            EngineEvent::Finished { .. } => break,
            EngineEvent::Reading { .. } => panic!("a Reading after Started"),
            _ => {}
        }
    }
}

/// An OpenAI batch input line of the id `id` whose text format is `{"type": "object"}`.
fn input_line(id: &str) -> String {
    format!(
        r#"{{"custom_id": "{id}", "method": "POST", "url": "/v1/chat/completions", "body": {{"model": "m", "messages": [], "response_format": {{"type": "json_schema", "json_schema": {{"name": "t", "schema": {{"type": "object"}}}}}}}}}}"#
    )
}

#[test]
fn the_files_of_requests_only_are_known_after_the_pre_pass_and_check_skips_them() {
    let create = r#"{"requests": [{"custom_id": "c1", "params": {"model": "m", "max_tokens": 5, "messages": []}}, {"custom_id": "c2", "params": {"model": "m", "max_tokens": 5, "messages": []}}]}"#;
    let result = |id: &str| {
        format!(
            r#"{{"id": "batch_req_{id}", "custom_id": "{id}", "response": {{"status_code": 200, "request_id": "r", "body": {{"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{{"index": 0, "message": {{"role": "assistant", "content": "{{}}"}}, "finish_reason": "stop"}}]}}}}, "error": null}}"#
        )
    };
    let dir = common::workspace_with(
        r#"{"type": "object"}"#,
        &[
            // requests only (a blank line is no record)
            (
                "b_input.jsonl",
                &format!("{}\n\n{}\n", input_line("r1"), input_line("r2")),
            ),
            // one record, two requests
            ("create.json", create),
            // a request and a capture
            (
                "mixed.jsonl",
                &format!("{}\n{}\n", input_line("m1"), result("m1")),
            ),
            // a request and a line that is no JSON (a record, unreadable as a request)
            ("broken.jsonl", &format!("{}\nnot json\n", input_line("x1"))),
            (
                "b_output.jsonl",
                &format!("{}\n{}\n", result("r1"), result("r2")),
            ),
        ],
    );
    let ws = Workspace::load(dir.path()).unwrap();
    let files = ws.capture_files();
    let pre = verdict::engine::prescan::run(&ws, &files, &files, &Progress::default());
    let mut only: Vec<&str> = pre.requests_only.iter().map(|n| &**n).collect();
    only.sort();
    assert_eq!(only, ["captures/b_input.jsonl", "captures/create.json"]);
    let facts = |name: &str| pre.requests.facts(name).unwrap();
    assert_eq!(
        (
            facts("captures/b_input.jsonl").records(),
            facts("captures/create.json").records(),
            facts("captures/create.json").len(),
            facts("captures/mixed.jsonl").records(),
            facts("captures/broken.jsonl").records(),
        ),
        (2, 1, 2, 1, 1)
    );
    // `check` gives the verdicts of the captures only, and the results join their
    // requests in the files it did not read again
    let out = common::verdict_in(dir.path(), &["check", "--format", "jsonl"]);
    let verdicts: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "verdict")
        .map(|v| v["data"].clone())
        .collect();
    let seen: Vec<(String, String)> = verdicts
        .iter()
        .map(|v| {
            (
                v["source"].as_str().unwrap_or_default().to_owned(),
                v["generation"]["request"]
                    .as_str()
                    .unwrap_or("-")
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "captures/b_output.jsonl:1".into(),
                "captures/b_input.jsonl:1".into()
            ),
            (
                "captures/b_output.jsonl:2".into(),
                "captures/b_input.jsonl:3".into()
            ),
            ("captures/broken.jsonl:2".into(), "-".into()),
            (
                "captures/mixed.jsonl:2".into(),
                "captures/mixed.jsonl:1".into()
            ),
        ]
    );
}
