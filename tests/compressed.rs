//! Capture files as logs are kept: compressed (`.gz`, `.zst`), Bedrock's `.jsonl.out`, and
//! `.sse` stream files (`docs/capture-record.md#capture-files`), through `check`, `watch
//! --json`, `feedback` and `review`: the same verdicts as the plain files, one clear verdict
//! for a cut archive or a decompression bomb, and nothing in the workspace written. The
//! archives are made here with the crates verdict reads them with; the `.sse` texts are the
//! `response` strings of `samples/providers`.

use crate::common;
use common::{jsonl_verdicts, refund_copy, verdict_in};

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Packs a file's bytes (gzip, zstd, or as they are).
type Pack = fn(&[u8]) -> Vec<u8>;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

/// Every file below `dir` with its bytes: to show a run wrote nothing.
fn files_of(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// `check --format jsonl .` in `dir`: the exit code and the verdicts; asserts that the run
/// wrote nothing in `dir`.
fn check(dir: &Path) -> (Option<i32>, Vec<Value>) {
    let before = files_of(dir);
    let out = verdict_in(dir, &["check", "--format", "jsonl", "."]);
    assert_eq!(files_of(dir), before, "check wrote in the workspace");
    let stdout = String::from_utf8(out.stdout).unwrap();
    (out.status.code(), jsonl_verdicts(&stdout))
}

/// Replaces the capture file `name` of workspace `ws` by `to` holding `pack(its bytes)`.
fn repack(ws: &Path, name: &str, to: &str, pack: Pack) {
    let from = ws.join("captures").join(name);
    let bytes = std::fs::read(&from).unwrap();
    std::fs::remove_file(&from).unwrap();
    std::fs::write(ws.join("captures").join(to), pack(&bytes)).unwrap();
}

/// The verdicts with the file names `renames` (new -> old) put back.
fn renamed(verdicts: &[Value], renames: &[(&str, &str)]) -> Vec<Value> {
    let mut text = serde_json::to_string(verdicts).unwrap();
    for (new, old) in renames {
        text = text.replace(new, old);
    }
    serde_json::from_str(&text).unwrap()
}

#[test]
fn compressed_and_jsonl_out_logs_give_the_plain_logs_verdicts() {
    let (_plain_tmp, plain) = refund_copy();
    let (code, want) = check(&plain);
    assert_eq!((code, want.len()), (Some(0), 25));
    let variants: [(&str, &str, Pack); 3] = [
        ("cases.jsonl.gz", "valid-proposal.json.gz", gzip),
        ("cases.jsonl.zst", "valid-proposal.json.zst", zstd),
        ("cases.jsonl.out", "valid-proposal.json", |b| b.to_vec()),
    ];
    for (log, one, pack) in variants {
        let (_tmp, ws) = refund_copy();
        repack(&ws, "cases.jsonl", log, pack);
        repack(&ws, "valid-proposal.json", one, pack);
        let (got_code, got) = check(&ws);
        assert_eq!(got_code, code, "{log}");
        // the records keep their own names: line sources name the file as it is
        let first = got
            .iter()
            .find(|v| v["source"] == format!("captures/{log}:1"));
        assert!(first.is_some(), "{log}: {got:?}");
        let one_record = got
            .iter()
            .find(|v| v["source"] == format!("captures/{one}"));
        assert_eq!(one_record.unwrap()["id"], "valid-proposal", "{one}");
        let back = renamed(&got, &[(log, "cases.jsonl"), (one, "valid-proposal.json")]);
        assert_eq!(back, want, "{log}");
    }
}

/// A record of the refund sample's log without its `id`: its id is its source.
#[test]
fn a_compressed_log_names_records_by_path_and_line() {
    let (_tmp, ws) = refund_copy();
    std::fs::write(
        ws.join("captures/anon.ndjson.gz"),
        gzip(b"\n{\"output\": \"{}\"}\n"),
    )
    .unwrap();
    let (_, verdicts) = check(&ws);
    let anon: Vec<&Value> = verdicts
        .iter()
        .filter(|v| v["source"].as_str().unwrap().starts_with("captures/anon"))
        .collect();
    assert_eq!(anon.len(), 1, "{verdicts:?}");
    assert_eq!(anon[0]["id"], "captures/anon.ndjson.gz:2");
    assert_eq!(anon[0]["source"], "captures/anon.ndjson.gz:2");
    assert_eq!(
        (&anon[0]["stage"], &anon[0]["reason"]),
        (&json!("schema"), &json!("SCHEMA_MISMATCH"))
    );
}

#[test]
fn a_cut_archive_checks_the_records_before_the_cut_then_stops_with_one_verdict() {
    let (_plain_tmp, plain) = refund_copy();
    let (_, want) = check(&plain);
    let text = std::fs::read(plain.join("captures/cases.jsonl")).unwrap();
    // the first 10 lines whole, then the rest cut: gzip in the next member's header, zstd
    // halfway through its frame (one block: nothing of it can be inflated)
    let split = text
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(9)
        .unwrap()
        .0
        + 1;
    let (head, tail) = text.split_at(split);
    let cases: [(&str, Vec<u8>, &str); 2] = [
        (
            "cases.jsonl.gz",
            [gzip(head), gzip(tail)[..5].to_vec()].concat(),
            "gzip",
        ),
        (
            "cases.jsonl.zst",
            {
                let z = zstd(tail);
                [zstd(head), z[..z.len() / 2].to_vec()].concat()
            },
            "zstd",
        ),
    ];
    for (name, bytes, format) in cases {
        let (_tmp, ws) = refund_copy();
        std::fs::remove_file(ws.join("captures/cases.jsonl")).unwrap();
        std::fs::write(ws.join("captures").join(name), &bytes).unwrap();
        let (code, got) = check(&ws);
        assert_eq!(code, Some(1));
        // 10 records, the break, and the other 4 files of the workspace
        assert_eq!(got.len(), 15, "{name}: {got:?}");
        assert_eq!(renamed(&got[..10], &[(name, "cases.jsonl")]), want[..10]);
        assert_eq!(got[11..], want[21..], "{name}: the rest of the workspace");
        let cut = &got[10];
        let source = format!("captures/{name}:11");
        assert_eq!(cut["id"], source);
        assert_eq!(cut["source"], source);
        assert_eq!(
            (&cut["stage"], &cut["decision"], &cut["reason"]),
            (&json!("input"), &json!("reject"), &json!("INVALID_CAPTURE"))
        );
        let error = if format == "gzip" {
            "unexpected end of file"
        } else {
            "incomplete frame"
        };
        assert_eq!(cut["errors"].as_array().unwrap().len(), 1);
        assert_eq!(
            cut["errors"][0]["message"],
            format!(
                "captures/{name}: the {format} data is cut short: the file ends at compressed \
                 byte {} inside the stream (decompressed byte {split}): {error}; the records \
                 before it were read",
                bytes.len()
            )
        );
        let tool = if format == "gzip" {
            "gzip -t"
        } else {
            "zstd -t"
        };
        assert_eq!(
            cut["errors"][0]["hint"],
            format!("`{tool} FILE` tells whether an archive is whole; re-create or re-download it")
        );
    }
}

/// `n` copies of `frame`, back to back: gzip members and zstd frames both read as one
/// stream, so a small file inflates to `n` times the frame's content.
fn repeated(frame: &[u8], n: usize) -> Vec<u8> {
    frame.repeat(n)
}

/// Runs `check --format jsonl .` in `dir` with its address space limited to `limit` bytes
/// (`RLIMIT_AS`: an allocation past it fails and the run aborts) and a deadline of two
/// minutes; returns the exit code and the verdicts.
#[cfg(target_os = "linux")]
fn check_within(dir: &Path, limit: u64) -> (Option<i32>, Vec<Value>) {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_verdict"));
    cmd.args(["check", "--format", "jsonl", "."])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec only `setrlimit` runs (async-signal-safe), on a
    // stack value.
    unsafe {
        cmd.pre_exec(move || {
            let l = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &l) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).unwrap();
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().ok();
            child.wait().ok();
            panic!("check did not stop at the cap (it would inflate gigabytes)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(err, "", "stderr");
    (status.code(), jsonl_verdicts(&reader.join().unwrap()))
}

#[cfg(target_os = "linux")]
#[test]
fn decompression_bombs_stop_at_max_capture_bytes_in_bounded_memory() {
    const MAX: usize = 1 << 20;
    let tmp = limited(MAX, &[]);
    let ws = tmp.path();
    let ok = b"{\"id\": \"ok\", \"output\": \"{}\"}\n";
    let x = vec![b'x'; 16 << 20];
    let open = [b"{\"output\": \"".as_slice(), &x].concat();
    // gzip: 16 MiB members x 128 = 2 GiB (about 2 MB on disk); zstd: x 512 = 8 GiB
    let (gz, zs) = (gzip(&x), zstd(&x));
    let bombs: [(&str, Vec<u8>); 4] = [
        ("bomb.json.gz", [gzip(&open), repeated(&gz, 127)].concat()),
        ("bomb.json.zst", [zstd(&open), repeated(&zs, 511)].concat()),
        ("bomb.jsonl.gz", [gzip(ok), repeated(&gz, 128)].concat()),
        ("bomb.jsonl.zst", [zstd(ok), repeated(&zs, 512)].concat()),
    ];
    for (name, bytes) in &bombs {
        assert!(bytes.len() < 4 << 20, "{name} is {} bytes", bytes.len());
        std::fs::write(ws.join("captures").join(name), bytes).unwrap();
    }
    let before = files_of(ws);
    // the bombs inflate to 2 and 8 GiB; the run has 512 MiB of address space
    let (code, verdicts) = check_within(ws, 512 << 20);
    assert_eq!(code, Some(1));
    assert_eq!(files_of(ws), before, "check wrote in the workspace");
    let hint = "raise max_capture_bytes in verdict.toml if this size is expected";
    let log_hint = "raise max_capture_bytes in verdict.toml if records this large are expected";
    let inflated = |name: &str, format: &str| {
        json!([
            format!(
                "captures/{name}: the capture record inflates past max_capture_bytes ({MAX} bytes) \
             after {format} decompression; not parsed"
            ),
            hint
        ])
    };
    let bomb = |name: &str, format: &str| {
        json!([
            format!(
                "captures/{name}: a record inflates past max_capture_bytes ({MAX} bytes) at \
             decompressed byte {}; the rest of the {format} file is not read",
                ok.len() + MAX + 1
            ),
            log_hint
        ])
    };
    let got: Vec<(String, String, String, Value)> = verdicts
        .iter()
        .map(|v| {
            (
                v["id"].as_str().unwrap().to_string(),
                v["source"].as_str().unwrap().to_string(),
                v["reason"].as_str().unwrap_or("ready").to_string(),
                v["errors"]
                    .get(0)
                    .map_or(Value::Null, |e| json!([e["message"], e["hint"]])),
            )
        })
        .collect();
    let row = |id: &str, source: &str, reason: &str, error: Value| {
        (
            id.to_string(),
            source.to_string(),
            reason.to_string(),
            error,
        )
    };
    assert_eq!(
        got,
        [
            row(
                "captures/bomb.json.gz",
                "captures/bomb.json.gz",
                "INVALID_CAPTURE",
                inflated("bomb.json.gz", "gzip")
            ),
            row(
                "captures/bomb.json.zst",
                "captures/bomb.json.zst",
                "INVALID_CAPTURE",
                inflated("bomb.json.zst", "zstd")
            ),
            row("ok", "captures/bomb.jsonl.gz:1", "ready", Value::Null),
            row(
                "captures/bomb.jsonl.gz:2",
                "captures/bomb.jsonl.gz:2",
                "INVALID_CAPTURE",
                bomb("bomb.jsonl.gz", "gzip")
            ),
            row("ok", "captures/bomb.jsonl.zst:1", "ready", Value::Null),
            row(
                "captures/bomb.jsonl.zst:2",
                "captures/bomb.jsonl.zst:2",
                "INVALID_CAPTURE",
                bomb("bomb.jsonl.zst", "zstd")
            ),
        ]
    );
}

/// A workspace of one schema (any object) with `max_capture_bytes = max` and the capture
/// files `files` (names below `captures/`, bytes).
fn limited(max: usize, files: &[(String, Vec<u8>)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    std::fs::create_dir_all(ws.join("schemas")).unwrap();
    std::fs::create_dir_all(ws.join("captures")).unwrap();
    std::fs::write(ws.join("schemas/c.schema.json"), r#"{"type": "object"}"#).unwrap();
    std::fs::write(
        ws.join("verdict.toml"),
        format!("max_capture_bytes = {max}\n"),
    )
    .unwrap();
    for (name, bytes) in files {
        std::fs::write(ws.join("captures").join(name), bytes).unwrap();
    }
    tmp
}

/// A capture record of exactly `len` bytes whose output passes: padded in `meta`.
fn record_of(id: &str, len: usize) -> String {
    let head = format!(r#"{{"id": "{id}", "output": "{{}}", "meta": {{"pad": ""#);
    let text = format!("{head}{}\"}}}}", "x".repeat(len - head.len() - 3));
    assert_eq!(text.len(), len, "{text}");
    text
}

/// Each verdict's source, reason (`ready` for none) and, for `INVALID_CAPTURE`, message.
fn sources_and_reasons(verdicts: &[Value]) -> Vec<(String, String, String)> {
    verdicts
        .iter()
        .map(|v| {
            let reason = v["reason"].as_str().unwrap_or("ready");
            let message = if reason == "INVALID_CAPTURE" {
                v["errors"][0]["message"].as_str().unwrap()
            } else {
                ""
            };
            (
                v["source"].as_str().unwrap().to_string(),
                reason.to_string(),
                message.to_string(),
            )
        })
        .collect()
}

/// A log line over `max_capture_bytes` is counted by its record's bytes, without its line
/// ending: a record of `MAX + 1` bytes is `MAX + 1` bytes whether its line ends in `\n` or
/// `\r\n`, and so is a longer one; a record of `MAX` bytes passes with either ending, in a
/// plain log and in a compressed one. (A `\r\n` line used to count its `\r`, and a line too
/// long to be read whole its `\n` too.) A compressed log ends at the record of `MAX + 1`
/// bytes, at its byte `MAX + 1` whatever its line ending
/// (`an_over_long_line_ends_a_compressed_log_and_is_skipped_in_a_plain_one`).
#[test]
fn an_over_long_line_counts_its_record_not_its_line_ending() {
    const MAX: usize = 100;
    let plain = [
        record_of("max", MAX),
        record_of("one-over", MAX + 1),
        record_of("between", 60),
        record_of("far-over", MAX + 30),
        record_of("last", 60),
    ];
    let mut files = Vec::new();
    for (tag, ending) in [("lf", "\n"), ("crlf", "\r\n")] {
        let log =
            |lines: &[String]| -> String { lines.iter().map(|l| format!("{l}{ending}")).collect() };
        files.push((format!("{tag}.jsonl"), log(&plain).into_bytes()));
        files.push((format!("{tag}.jsonl.gz"), gzip(log(&plain).as_bytes())));
    }
    let tmp = limited(MAX, &files);
    let (code, verdicts) = check(tmp.path());
    assert_eq!(code, Some(1));
    let over = |n: usize| {
        format!("capture record is {n} bytes, over max_capture_bytes ({MAX}); not parsed")
    };
    let row = |source: String, reason: &str, message: String| (source, reason.to_string(), message);
    // the first line (`MAX` bytes and its ending), then the second's `MAX + 1`
    let ended = |name: &str, at: usize| {
        format!(
            "captures/{name}: a record inflates past max_capture_bytes ({MAX} bytes) at \
             decompressed byte {at}; the rest of the gzip file is not read"
        )
    };
    let mut want = Vec::new();
    for (name, ending) in [
        ("crlf.jsonl", 2),
        ("crlf.jsonl.gz", 2),
        ("lf.jsonl", 1),
        ("lf.jsonl.gz", 1),
    ] {
        let at = |line: usize| format!("captures/{name}:{line}");
        want.push(row(at(1), "ready", String::new()));
        if name.ends_with(".gz") {
            let message = ended(name, MAX + ending + MAX + 1);
            want.push(row(at(2), "INVALID_CAPTURE", message));
            continue;
        }
        want.extend([
            row(at(2), "INVALID_CAPTURE", over(MAX + 1)),
            row(at(3), "ready", String::new()),
            row(at(4), "INVALID_CAPTURE", over(MAX + 30)),
            row(at(5), "ready", String::new()),
        ]);
    }
    assert_eq!(sources_and_reasons(&verdicts), want);
}

/// A log line over `max_capture_bytes` ends a compressed log, as
/// `docs/capture-record.md#capture-files` says, however short the line: its records before
/// it are checked, the line is one `INVALID_CAPTURE` naming the decompressed byte where its
/// record passed the limit, and no line after it is read (skipping the line would mean
/// inflating all of it, and an archive can inflate without end). In a plain log the line is
/// skipped and the lines after it are read. The rest of the workspace is checked either way.
/// (A compressed log used to go on after a line that lay whole in one read of the decoder's
/// output, and stop at one across two reads.)
#[test]
fn an_over_long_line_ends_a_compressed_log_and_is_skipped_in_a_plain_one() {
    const MAX: usize = 100;
    let text: String = [
        record_of("first", 60),
        record_of("over", MAX + 1),
        record_of("third", 60),
        record_of("fourth", 60),
    ]
    .iter()
    .map(|l| format!("{l}\r\n"))
    .collect();
    let files = [
        ("log.jsonl".to_string(), text.clone().into_bytes()),
        ("log.jsonl.gz".to_string(), gzip(text.as_bytes())),
        ("log.jsonl.zst".to_string(), zstd(text.as_bytes())),
        (
            "z.jsonl".to_string(),
            format!("{}\n", record_of("z", 60)).into_bytes(),
        ),
    ];
    let tmp = limited(MAX, &files);
    let (code, verdicts) = check(tmp.path());
    assert_eq!(code, Some(1));
    let row = |source: &str, reason: &str, message: String| {
        (source.to_string(), reason.to_string(), message)
    };
    // read up to the record's byte 101: the first line's 62 bytes and 101 of the second's
    let ended = |name: &str, format: &str| {
        format!(
            "captures/{name}: a record inflates past max_capture_bytes ({MAX} bytes) at \
             decompressed byte 163; the rest of the {format} file is not read"
        )
    };
    assert_eq!(
        sources_and_reasons(&verdicts),
        [
            row("captures/log.jsonl:1", "ready", String::new()),
            row(
                "captures/log.jsonl:2",
                "INVALID_CAPTURE",
                format!("capture record is 101 bytes, over max_capture_bytes ({MAX}); not parsed")
            ),
            row("captures/log.jsonl:3", "ready", String::new()),
            row("captures/log.jsonl:4", "ready", String::new()),
            row("captures/log.jsonl.gz:1", "ready", String::new()),
            row(
                "captures/log.jsonl.gz:2",
                "INVALID_CAPTURE",
                ended("log.jsonl.gz", "gzip")
            ),
            row("captures/log.jsonl.zst:1", "ready", String::new()),
            row(
                "captures/log.jsonl.zst:2",
                "INVALID_CAPTURE",
                ended("log.jsonl.zst", "zstd")
            ),
            row("captures/z.jsonl:1", "ready", String::new()),
        ]
    );
    let hints: Vec<&Value> = verdicts[1..]
        .iter()
        .filter(|v| v["reason"] == "INVALID_CAPTURE")
        .map(|v| &v["errors"][0]["hint"])
        .collect();
    assert_eq!(
        hints,
        [
            "raise max_capture_bytes in verdict.toml if this size is expected",
            "raise max_capture_bytes in verdict.toml if records this large are expected",
            "raise max_capture_bytes in verdict.toml if records this large are expected",
        ]
    );
}

/// The `response` string of a `samples/providers` capture.
fn sample_sse(path: &str) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples/providers/captures")
        .join(path);
    let record: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    record["response"].as_str().unwrap().to_string()
}

#[test]
fn sse_files_are_captured_streams_named_by_their_first_event() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let providers = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/providers");
    common::copy_dir(&providers.join("schemas"), &ws.join("schemas"));
    std::fs::copy(providers.join("verdict.toml"), ws.join("verdict.toml")).unwrap();
    let captures = ws.join("captures");
    std::fs::create_dir_all(&captures).unwrap();
    let anthropic = sample_sse("anthropic/stream-sse-tool-use.json");
    let files: [(&str, Vec<u8>); 6] = [
        ("anthropic.sse", anthropic.clone().into_bytes()),
        (
            "chat.sse",
            sample_sse("openai-chat/stream-sse.json").into_bytes(),
        ),
        (
            "responses.sse.zst",
            zstd(sample_sse("openai-responses/stream-sse-text.json").as_bytes()),
        ),
        (
            "gemini.sse.gz",
            gzip(sample_sse("gemini/stream-sse.json").as_bytes()),
        ),
        // the message id left out: the file's path names it
        (
            "no-id.sse",
            anthropic
                .replace("\"id\":\"msg_014p7gG3wDgGV9EUtLvnow3U\",", "")
                .into_bytes(),
        ),
        // a stream cut before its terminal event
        (
            "cut.sse",
            anthropic[..anthropic.find("event: message_delta").unwrap()]
                .to_string()
                .into_bytes(),
        ),
    ];
    for (name, bytes) in &files {
        std::fs::write(captures.join(name), bytes).unwrap();
    }
    let (code, verdicts) = check(ws);
    assert_eq!(code, Some(1));
    let got: Vec<[String; 5]> = verdicts
        .iter()
        .map(|v| {
            [
                v["source"].as_str().unwrap().into(),
                v["id"].as_str().unwrap().into(),
                v["stage"].as_str().unwrap().into(),
                v["reason"].as_str().unwrap_or("-").into(),
                v["response"]["provider"].as_str().unwrap().into(),
            ]
        })
        .collect();
    let row = |source: &str, id: &str, stage: &str, reason: &str, provider: &str| {
        [source, id, stage, reason, provider].map(String::from)
    };
    assert_eq!(
        got,
        [
            row(
                "captures/anthropic.sse",
                "msg_014p7gG3wDgGV9EUtLvnow3U",
                "ready",
                "-",
                "anthropic"
            ),
            row(
                "captures/chat.sse",
                "chatcmpl-123",
                "ready",
                "-",
                "openai-chat"
            ),
            row(
                "captures/cut.sse",
                "msg_014p7gG3wDgGV9EUtLvnow3U",
                "response",
                "INCOMPLETE",
                "anthropic"
            ),
            row(
                "captures/gemini.sse.gz",
                "tTCwacuEBMvnitYP06qsgQY",
                "ready",
                "-",
                "gemini"
            ),
            row(
                "captures/no-id.sse",
                "captures/no-id.sse",
                "ready",
                "-",
                "anthropic"
            ),
            row(
                "captures/responses.sse.zst",
                "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
                "ready",
                "-",
                "openai-responses"
            ),
        ]
    );
    assert!(verdicts.iter().all(|v| v["response"]["stream"] == true));
    // `check --schema` takes JSON instances: a folder's .sse files are not among them
    let out = verdict_in(
        ws,
        &[
            "check",
            "--format",
            "jsonl",
            "--schema",
            "schemas/ticket.schema.json",
            "captures",
        ],
    );
    assert!(jsonl_verdicts(&String::from_utf8(out.stdout).unwrap()).is_empty());
}

#[test]
fn watch_reads_compressed_logs_and_re_reads_an_edited_one() {
    let (_tmp, ws) = refund_copy();
    repack(&ws, "cases.jsonl", "cases.jsonl.gz", gzip);
    let (_, want) = check(&ws);
    let w = common::watch::WatchJson::start(&ws, &["--debounce-ms", "100"]);
    let first = w.batch("the first pass", Duration::from_secs(30));
    let data: Vec<Value> = first[..first.len() - 1]
        .iter()
        .map(|l| l["data"].clone())
        .collect();
    assert_eq!(data, want, "watch's first pass is check's");
    // the 8000 refund now asks for 5000: its intent mismatch goes (an atomic save)
    let path = ws.join("captures/cases.jsonl.gz");
    let mut text = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap()),
        &mut text,
    )
    .unwrap();
    let edited = String::from_utf8(text)
        .unwrap()
        .replace(r#"\"amount_minor\":8000"#, r#"\"amount_minor\":5000"#);
    let tmp_file = ws.join("captures/.cases.tmp");
    std::fs::write(&tmp_file, gzip(edited.as_bytes())).unwrap();
    std::fs::rename(&tmp_file, &path).unwrap();
    let batch = w.batch("the edit of the .gz log", Duration::from_secs(30));
    let changed: Vec<&Value> = batch.iter().filter(|l| l["type"] == "verdict").collect();
    assert!(!changed.is_empty(), "{batch:?}");
    let v = changed
        .iter()
        .find(|l| l["data"]["id"] == "amount-8000-intent-5000")
        .unwrap_or_else(|| panic!("{batch:?}"));
    assert_eq!(v["cause"], "captures/cases.jsonl.gz");
    assert!(
        v["data"]["source"]
            .as_str()
            .unwrap()
            .starts_with("captures/cases.jsonl.gz:")
    );
    assert_eq!(
        v["flipped_from"],
        json!({"stage": "business", "decision": "recheck", "reason": "INTENT_MISMATCH"})
    );
    assert!(
        changed
            .iter()
            .all(|l| l["cause"] == "captures/cases.jsonl.gz")
    );
}

#[test]
fn feedback_and_review_read_records_of_compressed_files() {
    let (_plain_tmp, plain) = refund_copy();
    let (_tmp, ws) = refund_copy();
    repack(&ws, "cases.jsonl", "cases.jsonl.zst", zstd);
    repack(&ws, "valid-proposal.json", "valid-proposal.json.gz", gzip);
    let renames = [
        ("cases.jsonl.zst", "cases.jsonl"),
        ("valid-proposal.json.gz", "valid-proposal.json"),
    ];
    let json_of = |dir: &Path, args: &[&str]| -> Value {
        let out = verdict_in(dir, args);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{e}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    };
    // a record named by its source and line, and one by its id
    let want = json_of(
        &plain,
        &["feedback", "captures/cases.jsonl:1", "-f", "json"],
    );
    let got = json_of(
        &ws,
        &["feedback", "captures/cases.jsonl.zst:1", "-f", "json"],
    );
    assert_eq!(renamed(&[got], &renames), [want]);
    let want = json_of(&plain, &["feedback", "valid-proposal", "-f", "json"]);
    let got = json_of(&ws, &["feedback", "valid-proposal", "-f", "json"]);
    assert_eq!(got["decision"], "ready-for-commit");
    assert_eq!(renamed(&[got], &renames), [want]);
    // review against old schemas that allowed less: the same flips
    let old = tempfile::tempdir().unwrap();
    common::copy_dir(&plain.join("schemas"), old.path());
    let schema = old.path().join("refund-v1.schema.json");
    let text = std::fs::read_to_string(&schema).unwrap();
    std::fs::write(
        &schema,
        text.replacen("\"minimum\": 1", "\"minimum\": 6000", 1),
    )
    .unwrap();
    let old_dir = old.path().to_str().unwrap();
    let args = ["review", "-f", "json", "--old-schemas", old_dir];
    let want = json_of(&plain, &args);
    let before = files_of(&ws);
    let got = json_of(&ws, &args);
    assert_eq!(files_of(&ws), before, "review wrote in the workspace");
    let flips = got["flips"].as_array().unwrap();
    assert!(
        flips
            .iter()
            .any(|f| f["source"] == "captures/valid-proposal.json.gz"),
        "{got}"
    );
    assert_eq!(renamed(&[got], &renames), [want]);
}
