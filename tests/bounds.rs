//! Bounds: every input the program reads, and every contract it compiles or runs, has a
//! documented limit (`docs/verdicts.md#limits`, `docs/config.md#limits`); crossing one is a
//! clear verdict or error naming the file and the limit, never a crash, a hang or a memory
//! blow-up. Hangs are caught with a deadline ([`run`]).

use crate::common;
use common::run::run;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The verdicts of `check --format jsonl` in `root`, by capture id; the run must finish
/// within `secs` seconds and exit with `code`.
fn check_by_id(root: &Path, secs: u64, code: i32) -> BTreeMap<String, Value> {
    let r = run(
        &["check", "--format", "jsonl", "."],
        root,
        Duration::from_secs(secs),
    );
    assert_eq!(
        r.code,
        Some(code),
        "stderr: {}\nstdout: {}",
        r.stderr,
        &r.stdout[..r.stdout.len().min(4000)]
    );
    common::jsonl_verdicts(&r.stdout)
        .into_iter()
        .map(|v| (v["id"].as_str().unwrap_or("").to_string(), v))
        .collect()
}

/// The messages of a verdict's errors.
fn messages(v: &Value) -> Vec<String> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect()
}

/// A workspace with the schema files `schemas` (name, text) and capture files `captures`.
fn ws(schemas: &[(&str, String)], captures: &[(&str, String)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (dir, files) in [("schemas", schemas), ("captures", captures)] {
        std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        for (name, text) in files {
            let p = tmp.path().join(dir).join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }
    tmp
}

/// A schema whose root refers to `$defs/d0`, each `d{i}` to `d{i+1}`, `d{n}` a string.
fn ref_chain(n: usize) -> String {
    let mut defs = serde_json::Map::new();
    for i in 0..n {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert(format!("d{n}"), json!({"type": "string"}));
    json!({"$ref": "#/$defs/d0", "$defs": defs}).to_string()
}

/// `check`'s human report of `root`, which must exit 1 (a failing capture) within 300 s and
/// hold `text`.
fn human_report(root: &Path, text: &str) -> String {
    let r = run(&["check", "."], root, Duration::from_secs(300));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stdout.contains(text),
        "{}",
        &r.stdout[..r.stdout.len().min(3000)]
    );
    r.stdout
}

/// Writes `schemas/NAME.rules.toml` under `root`: the one rule `rule`, reason `R`.
fn write_rule(root: &Path, name: &str, rule: &str) {
    std::fs::write(
        root.join(format!("schemas/{name}.rules.toml")),
        format!("[[rule]]\nreason = \"R\"\nrule = {rule:?}\nmessage = \"m\"\n"),
    )
    .unwrap();
}

const OK_SCHEMA: &str = r#"{"type": "object", "required": ["a"]}"#;

fn rec(id: &str, contract: &str, output: &str) -> String {
    json!({"id": id, "contract": contract, "output": output}).to_string()
}

#[test]
fn a_ref_chain_too_deep_to_compile_is_a_contract_error_of_its_own_captures() {
    for n in [12_265usize, 20_000, 100_000] {
        let w = ws(
            &[
                ("deep.schema.json", ref_chain(n)),
                ("ok.schema.json", OK_SCHEMA.into()),
            ],
            &[
                ("rc.json", rec("rc", "deep", "1")),
                ("ok.json", rec("ok", "ok", r#"{"a": 1}"#)),
            ],
        );
        let v = check_by_id(w.path(), 120, 1);
        assert_eq!(v["rc"]["reason"], "CONTRACT_ERROR", "{n}: {}", v["rc"]);
        assert_eq!(
            messages(&v["rc"]),
            [
                "schemas/deep.schema.json: the schema nests more than 1000 levels deep (nested values plus $ref hops, the limit MAX_SCHEMA_DEPTH); not compiled (docs/verdicts.md#limits)"
            ],
            "{n}"
        );
        assert_eq!(v["ok"]["decision"], "ready-for-commit", "{n}: {}", v["ok"]);
    }
    // within the limit the chain compiles and checks
    let w = ws(
        &[("deep.schema.json", ref_chain(990))],
        &[("rc.json", rec("rc", "deep", "1"))],
    );
    let v = check_by_id(w.path(), 120, 1);
    assert_eq!(v["rc"]["reason"], "SCHEMA_MISMATCH", "{}", v["rc"]);
}

#[test]
fn a_file_that_cannot_be_indexed_fails_only_its_own_contract_named_with_line_and_column() {
    let w = ws(
        &[
            (
                "old.schema.json",
                "{\n  \"$schema\": \"http://json-schema.org/draft-03/schema#\",\n  \"type\": \"object\"\n}".into(),
            ),
            (
                "uri.schema.json",
                "{\"type\": \"object\",\n \"properties\": {\"x\": {\"$id\": \"http://[zz\"}}}".into(),
            ),
            ("uses.schema.json", r#"{"$ref": "uri.schema.json"}"#.into()),
            ("ok.schema.json", OK_SCHEMA.into()),
        ],
        &[
            ("a.json", rec("a", "ok", r#"{"a": 1}"#)),
            ("b.json", rec("b", "old", "{}")),
            ("c.json", rec("c", "uri", "{}")),
            ("d.json", rec("d", "uses", "{}")),
        ],
    );
    let v = check_by_id(w.path(), 60, 1);
    assert_eq!(v["a"]["decision"], "ready-for-commit", "{}", v["a"]);
    assert_eq!(v["b"]["reason"], "CONTRACT_ERROR");
    assert_eq!(
        messages(&v["b"]),
        [
            "schemas/old.schema.json:2:14 at /$schema cannot be indexed for $ref: Unknown meta-schema: 'http://json-schema.org/draft-03/schema#'. Custom meta-schemas must be registered in the registry before use"
        ]
    );
    assert_eq!(v["c"]["reason"], "CONTRACT_ERROR");
    assert_eq!(
        messages(&v["c"]),
        [
            "schemas/uri.schema.json:2:30 at /properties/x/$id cannot be indexed for $ref: Invalid URI reference 'http://[zz': unexpected character at index 8"
        ]
    );
    // a contract that refers to the broken file cannot resolve it: its own error
    assert_eq!(v["d"]["reason"], "CONTRACT_ERROR", "{}", v["d"]);
}

/// A contract whose `$ref`s reach a broken schema file (not JSON, an unknown dialect, an
/// invalid `$id` URI), by relative path, by `$id`, with a fragment or through another file:
/// its `CONTRACT_ERROR` names the `$ref` and the broken file with its line and column (never
/// "not available offline"), and the contracts that do not reach it work.
#[test]
fn a_ref_to_a_broken_schema_file_names_that_file_with_line_and_column() {
    let w = ws(
        &[
            (
                "bad.schema.json",
                "{\n  \"type\": \"object\",\n  \"properties\": {\"a\": }\n}".into(),
            ),
            (
                "old.schema.json",
                "{\n  \"$id\": \"https://example.com/old\",\n  \"$schema\": \"http://json-schema.org/draft-03/schema#\",\n  \"type\": \"object\"\n}".into(),
            ),
            (
                "uri.schema.json",
                "{\"type\": \"object\",\n \"properties\": {\"x\": {\"$id\": \"http://[zz\"}}}".into(),
            ),
            (
                "uses-bad.schema.json",
                r#"{"type": "object", "properties": {"x": {"$ref": "bad.schema.json"}}}"#.into(),
            ),
            ("uses-old.schema.json", r#"{"$ref": "https://example.com/old"}"#.into()),
            (
                "uses-uri.schema.json",
                r#"{"$ref": "uri.schema.json#/properties/x"}"#.into(),
            ),
            ("via.schema.json", r#"{"$ref": "uses-bad.schema.json"}"#.into()),
            ("ok.schema.json", OK_SCHEMA.into()),
        ],
        &[
            ("a.json", rec("a", "ok", r#"{"a": 1}"#)),
            ("b.json", rec("b", "uses-bad", "{}")),
            ("c.json", rec("c", "uses-old", "{}")),
            ("d.json", rec("d", "uses-uri", "{}")),
            ("e.json", rec("e", "via", "{}")),
        ],
    );
    let v = check_by_id(w.path(), 60, 1);
    assert_eq!(v["a"]["decision"], "ready-for-commit", "{}", v["a"]);
    for id in ["b", "c", "d", "e"] {
        assert_eq!(
            (&v[id]["stage"], &v[id]["decision"], &v[id]["reason"]),
            (&json!("input"), &json!("reject"), &json!("CONTRACT_ERROR")),
            "{id}: {}",
            v[id]
        );
    }
    assert_eq!(
        messages(&v["b"]),
        [
            "schemas/uses-bad.schema.json:1:49 at /properties/x/$ref refers to schemas/bad.schema.json, a schema file that cannot be used, so this contract is not compiled: schemas/bad.schema.json is not valid JSON at 3:23: expected a JSON value, found \"}\""
        ]
    );
    assert_eq!(
        messages(&v["c"]),
        [
            "schemas/uses-old.schema.json:1:10 at /$ref refers to schemas/old.schema.json, a schema file that cannot be used, so this contract is not compiled: schemas/old.schema.json:3:14 at /$schema cannot be indexed for $ref: Unknown meta-schema: 'http://json-schema.org/draft-03/schema#'. Custom meta-schemas must be registered in the registry before use"
        ]
    );
    assert_eq!(
        messages(&v["d"]),
        [
            "schemas/uses-uri.schema.json:1:10 at /$ref refers to schemas/uri.schema.json, a schema file that cannot be used, so this contract is not compiled: schemas/uri.schema.json:2:30 at /properties/x/$id cannot be indexed for $ref: Invalid URI reference 'http://[zz': unexpected character at index 8"
        ]
    );
    assert_eq!(
        messages(&v["e"]),
        [
            "schemas/via.schema.json:1:1 refers (through its $refs) to schemas/bad.schema.json, a schema file that cannot be used, so this contract is not compiled: schemas/bad.schema.json is not valid JSON at 3:23: expected a JSON value, found \"}\""
        ]
    );
}

#[test]
fn a_duplicate_id_is_a_contract_error_naming_both_files_every_time() {
    let w = ws(
        &[
            (
                "a.schema.json",
                r#"{"$id": "https://example.com/x", "type": "object"}"#.into(),
            ),
            (
                "b.schema.json",
                r#"{"$id": "https://example.com/x", "type": "string"}"#.into(),
            ),
            (
                "c.schema.json",
                r#"{"$id": "https://example.com/c", "$defs": {"n": {"$id": "y"}}}"#.into(),
            ),
            (
                "d.schema.json",
                r#"{"$id": "https://example.com/y"}"#.into(),
            ),
            ("ok.schema.json", OK_SCHEMA.into()),
        ],
        &[
            ("a.json", rec("a", "a", "{}")),
            ("b.json", rec("b", "b", "{}")),
            ("c.json", rec("c", "c", "{}")),
            ("d.json", rec("d", "d", "{}")),
            ("ok.json", rec("ok", "ok", r#"{"a": 1}"#)),
        ],
    );
    let first = check_by_id(w.path(), 60, 1);
    assert_eq!(
        messages(&first["a"]),
        [
            "schemas/a.schema.json:1:9 at /$id $id \"https://example.com/x\" is also the $id of schemas/b.schema.json:1:9 (at /$id): a $id names one schema; not compiled"
        ]
    );
    assert_eq!(
        messages(&first["b"]),
        [
            "schemas/b.schema.json:1:9 at /$id $id \"https://example.com/x\" is also the $id of schemas/a.schema.json:1:9 (at /$id): a $id names one schema; not compiled"
        ]
    );
    assert_eq!(
        messages(&first["d"]),
        [
            "schemas/d.schema.json:1:9 at /$id $id \"https://example.com/y\" is also the $id of schemas/c.schema.json:1:57 (at /$defs/n/$id): a $id names one schema; not compiled"
        ]
    );
    assert_eq!(first["c"]["reason"], "CONTRACT_ERROR");
    assert_eq!(first["ok"]["decision"], "ready-for-commit");
    for _ in 0..5 {
        assert_eq!(check_by_id(w.path(), 60, 1), first);
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_as_config_schema_rules_or_lint_argument_is_an_error_not_a_hang() {
    use std::os::unix::fs::symlink;
    // verdict.toml: the workspace cannot be used (exit 2), named
    for special in ["fifo", "/dev/zero"] {
        let w = ws(
            &[("c.schema.json", OK_SCHEMA.into())],
            &[("a.json", rec("a", "c", r#"{"a":1}"#))],
        );
        let toml = w.path().join("verdict.toml");
        if special == "fifo" {
            mkfifo(&toml);
        } else {
            symlink(special, &toml).unwrap();
        }
        let r = run(&["check", "."], w.path(), Duration::from_secs(30));
        assert_eq!(r.code, Some(2), "{special}: {}", r.stderr);
        assert!(
            r.stderr.contains(
                "verdict.toml: cannot read it: not a regular file (a FIFO, socket or device)"
            ),
            "{special}: {}",
            r.stderr
        );
    }
    // a schema, a rules file: their contract's error, the other contract works
    let w = ws(
        &[
            ("ok.schema.json", OK_SCHEMA.into()),
            ("r.schema.json", OK_SCHEMA.into()),
        ],
        &[
            ("a.json", rec("a", "ok", r#"{"a":1}"#)),
            ("b.json", rec("b", "fifo", "{}")),
            ("c.json", rec("c", "zero", "{}")),
            ("d.json", rec("d", "r", r#"{"a":1}"#)),
        ],
    );
    let schemas = w.path().join("schemas");
    mkfifo(&schemas.join("fifo.schema.json"));
    symlink("/dev/zero", schemas.join("zero.schema.json")).unwrap();
    symlink("/dev/urandom", schemas.join("r.rules.toml")).unwrap();
    let v = check_by_id(w.path(), 30, 1);
    assert_eq!(v["a"]["decision"], "ready-for-commit");
    assert_eq!(
        messages(&v["b"]),
        ["cannot read schemas/fifo.schema.json: not a regular file (a FIFO, socket or device)"]
    );
    assert_eq!(
        messages(&v["c"]),
        ["cannot read schemas/zero.schema.json: not a regular file (a FIFO, socket or device)"]
    );
    assert_eq!(
        messages(&v["d"]),
        ["cannot read schemas/r.rules.toml: not a regular file (a FIFO, socket or device)"]
    );
    // lint, given the FIFO and the device, and walking the folder
    let r = run(
        &[
            "lint",
            "--format",
            "json",
            "schemas/fifo.schema.json",
            "schemas/zero.schema.json",
        ],
        w.path(),
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(
        r.stdout
            .matches("cannot read the schema: not a regular file (a FIFO, socket or device)")
            .count(),
        2,
        "{}",
        r.stdout
    );
    let r = run(&["lint", "."], w.path(), Duration::from_secs(30));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    // review --old-schemas with a FIFO and a device among the old schemas
    let old = tempfile::tempdir().unwrap();
    mkfifo(&old.path().join("ok.schema.json"));
    symlink("/dev/zero", old.path().join("r.schema.json")).unwrap();
    let r = run(
        &["review", "--old-schemas", old.path().to_str().unwrap(), "."],
        w.path(),
        Duration::from_secs(30),
    );
    assert!(r.code.is_some(), "{}", r.stderr);
}

#[cfg(unix)]
#[test]
fn a_fifo_appearing_in_the_schemas_folder_does_not_silence_watch() {
    let w = ws(
        &[("c.schema.json", OK_SCHEMA.into())],
        &[("a.json", rec("a", "c", r#"{"a":1}"#))],
    );
    let watch = common::watch::WatchJson::start(w.path(), &[]);
    watch.batch("the first run", Duration::from_secs(30));
    mkfifo(&w.path().join("schemas/f.schema.json"));
    std::os::unix::fs::symlink("/dev/zero", w.path().join("schemas/z.schema.json")).unwrap();
    watch.batch("the run after the FIFO appeared", Duration::from_secs(30));
    // still alive: an edit is seen
    std::fs::write(w.path().join("captures/a.json"), rec("a", "c", "{}")).unwrap();
    // the FIFO and the link may arrive as two batches: a late one for the link alone
    // (cause `schemas/z.schema.json`, no verdict line) comes before the edit's
    let mut seen = Vec::new();
    for _ in 0..3 {
        let lines = watch.batch("the run after the edit", Duration::from_secs(30));
        let edited = lines
            .iter()
            .any(|l| l["data"]["reason"] == "SCHEMA_MISMATCH");
        seen.extend(lines);
        if edited {
            break;
        }
    }
    assert!(
        seen.iter()
            .any(|l| l["data"]["reason"] == "SCHEMA_MISMATCH"),
        "{seen:?}"
    );
}

#[test]
fn schemas_or_captures_outside_the_workspace_are_a_config_error_naming_the_key() {
    for (toml, key) in [
        ("schemas = \"/\"\n", "schemas = \"/\""),
        ("captures = \"/\"\n", "captures = \"/\""),
        (
            "captures = [\"captures\", \"../..\"]\n",
            "captures = \"../..\"",
        ),
        (
            "schemas = \"schemas/../../x\"\n",
            "schemas = \"schemas/../../x\"",
        ),
    ] {
        let w = ws(
            &[("c.schema.json", OK_SCHEMA.into())],
            &[("a.json", rec("a", "c", r#"{"a":1}"#))],
        );
        std::fs::write(w.path().join("verdict.toml"), toml).unwrap();
        let r = run(&["check", "."], w.path(), Duration::from_secs(30));
        assert_eq!(r.code, Some(2), "{toml}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("verdict.toml: {key}: resolves to ")),
            "{toml}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("outside the workspace"),
            "{toml}: {}",
            r.stderr
        );
    }
    // inside is fine, `..` or not
    let w = ws(
        &[("c.schema.json", OK_SCHEMA.into())],
        &[("a.json", rec("a", "c", r#"{"a":1}"#))],
    );
    std::fs::write(
        w.path().join("verdict.toml"),
        "captures = \"schemas/../captures\"\n",
    )
    .unwrap();
    assert_eq!(
        check_by_id(w.path(), 30, 0)["a"]["decision"],
        "ready-for-commit"
    );
}

#[cfg(unix)]
#[test]
fn a_captures_folder_that_is_a_symlink_loop_or_leads_outside_is_a_config_error() {
    let w = ws(&[("c.schema.json", OK_SCHEMA.into())], &[]);
    std::fs::remove_dir(w.path().join("captures")).unwrap();
    std::os::unix::fs::symlink("captures", w.path().join("captures")).unwrap();
    std::fs::write(w.path().join("verdict.toml"), "captures = \"captures\"\n").unwrap();
    let r = run(&["check", "."], w.path(), Duration::from_secs(30));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("verdict.toml: captures = \"captures\": is a loop of symbolic links; name a folder inside the workspace"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(w.path().join("captures")).unwrap();
    std::os::unix::fs::symlink("/", w.path().join("captures")).unwrap();
    let r = run(&["check", "."], w.path(), Duration::from_secs(30));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("captures = \"captures\": resolves to /, outside the workspace"),
        "{}",
        r.stderr
    );
}

/// The offset of `pid`'s open file description of `path` (from `/proc/PID/fdinfo`), if it
/// has the file open.
#[cfg(target_os = "linux")]
fn read_offset(pid: u32, path: &Path) -> Option<u64> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for fd in fds.flatten() {
        if std::fs::read_link(fd.path()).ok().as_deref() == Some(path) {
            let info = std::fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .ok()?;
            return info
                .lines()
                .find_map(|l| l.strip_prefix("pos:"))
                .and_then(|p| p.trim().parse().ok());
        }
    }
    None
}

#[cfg(target_os = "linux")]
#[test]
fn a_capture_log_that_grows_while_check_reads_it_is_read_up_to_its_size_when_opened() {
    use std::io::Write;
    let line = |i: usize| rec(&format!("x{i}"), "c", r#"{"a":1}"#) + "\n";
    // more than a read buffer (256 KiB), so the reader meets the writer
    let first: String = (0..20_000).map(line).collect();
    let w = ws(
        &[("c.schema.json", OK_SCHEMA.into())],
        &[("log.jsonl", first)],
    );
    let path = w.path().join("captures/log.jsonl").canonicalize().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["check", "-q", "--format", "jsonl", "."])
        .current_dir(w.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(out).unwrap());
    // a writer that appends whenever the reader nears the end: a reader that reads to the
    // end never gets there (at most 200 MB are appended)
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let (mut next, mut appended) = (20_000usize, 0usize);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        let size = std::fs::metadata(&path).unwrap().len();
        if appended < 200 << 20
            && read_offset(pid, &path).is_some_and(|pos| pos + (512 << 10) >= size)
        {
            let chunk: String = (next..next + 2000).map(line).collect();
            next += 2000;
            appended += chunk.len();
            f.write_all(chunk.as_bytes()).unwrap();
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let stdout = reader.join().unwrap();
    let status = status.unwrap_or_else(|| {
        panic!("check still read the growing log after 60 s ({appended} bytes appended)")
    });
    assert_eq!(status.code(), Some(0));
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let n = summary["data"]["captures"].as_u64().unwrap();
    assert!((20_000..next as u64).contains(&n), "{summary}");
}

#[test]
fn a_ten_megabyte_value_that_fails_its_type_is_quoted_by_its_head_and_size() {
    // an array of 5,000,000 zeros (10,000,001 bytes) where an object belongs
    let n = 5_000_000usize;
    let output = format!("[{}0]", "0,".repeat(n - 1));
    let w = ws(
        &[("c.schema.json", r#"{"type": "object"}"#.into())],
        &[("big.json", rec("big", "c", &output))],
    );
    drop(output);
    let message = format!(
        "[{}0... (10000001 bytes) is not of type \"object\"",
        "0,".repeat(29)
    );
    let v = check_by_id(w.path(), 300, 1);
    assert_eq!(messages(&v["big"]), [message.as_str()]);
    assert_eq!(v["big"]["errors"][0]["pointer"], "");
    let human = human_report(w.path(), &message);
    // the human report is short: the message, not the value
    assert!(human.len() < 4000, "{} bytes", human.len());
}

#[test]
fn millions_of_errors_keep_the_first_hundred_and_a_count_in_every_front_end() {
    let n = 5_000_000usize;
    let mut output = String::with_capacity(2 * n + 2);
    output.push('[');
    for i in 0..n {
        if i > 0 {
            output.push(',');
        }
        output.push('0');
    }
    output.push(']');
    let w = ws(
        &[(
            "c.schema.json",
            r#"{"type": "array", "items": {"type": "string"}}"#.into(),
        )],
        &[("big.json", rec("big", "c", &output))],
    );
    drop(output);
    let more = format!(
        "{} more errors not kept (a verdict keeps the first 100: docs/verdicts.md#limits)",
        n - 100
    );
    let r = run(
        &["check", "--format", "json", "."],
        w.path(),
        Duration::from_secs(300),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let errors = doc["verdicts"][0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 101);
    assert_eq!(errors[0]["pointer"], "/0");
    assert_eq!(errors[99]["pointer"], "/99");
    assert_eq!(errors[100]["message"], more.as_str());
    assert_eq!(errors[100]["reason"], "SCHEMA_MISMATCH");
    let v = check_by_id(w.path(), 300, 1);
    assert_eq!(v["big"]["errors"], doc["verdicts"][0]["errors"]);
    human_report(w.path(), &more);
}

#[test]
fn a_rule_past_the_step_budget_is_a_rule_error_not_a_hang() {
    let items: Vec<Value> = (0..40_000)
        .map(|i| json!({"id": i, "tags": ["a", "b"]}))
        .collect();
    let output = json!({"items": items}).to_string();
    let nested = (0..10).fold("true".to_string(), |body, d| {
        format!("proposal.items.all(x{d}, {body})")
    });
    let cases = [
        ("nested", nested.as_str()),
        (
            "quadratic",
            "proposal.items.all(a, proposal.items.all(b, a.id >= 0 || b.id >= 0))",
        ),
        (
            "unique",
            "proposal.items.all(a, proposal.items.filter(b, b.id == a.id).size() == 1)",
        ),
    ];
    let mut schemas = vec![("c.schema.json", r#"{"type": "object"}"#.to_string())];
    let mut captures = Vec::new();
    for (name, _) in &cases {
        schemas.push((
            Box::leak(format!("{name}.schema.json").into_boxed_str()),
            r#"{"type": "object"}"#.into(),
        ));
        captures.push((
            Box::leak(format!("{name}.json").into_boxed_str()) as &str,
            rec(name, name, &output),
        ));
    }
    // linear rules over the same items, and over each item's own tags, run
    captures.push(("linear.json", rec("linear", "c", &output)));
    let w = ws(&schemas, &captures);
    for (name, rule) in &cases {
        write_rule(w.path(), name, rule);
    }
    std::fs::write(
        w.path().join("schemas/c.rules.toml"),
        "[[rule]]\nreason = \"L\"\nrule = \"proposal.items.all(i, i.id >= 0 && i.tags.all(t, t != ''))\"\nmessage = \"m\"\n",
    )
    .unwrap();
    let v = check_by_id(w.path(), 120, 1);
    assert_eq!(
        v["linear"]["decision"], "ready-for-commit",
        "{}",
        v["linear"]
    );
    for (name, _) in &cases {
        assert_eq!(v[*name]["reason"], "RULE_ERROR", "{name}: {}", v[*name]);
        let m = &messages(&v[*name])[0];
        assert!(m.starts_with("rule 1 (R) could take up to "), "{m}");
        assert!(
            m.ends_with("comprehension steps on this capture (200002 values), over the rule budget of 10,000,000 steps (MAX_RULE_STEPS, docs/verdicts.md#limits); not evaluated, fails closed"),
            "{m}"
        );
    }
}

#[test]
fn a_schema_past_the_node_budget_is_a_contract_error_and_the_others_work() {
    // 40 levels, each two `$ref`s to the next: 2^40 nodes once inlined
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let diamond = json!({"$ref": "#/$defs/d0", "$defs": defs}).to_string();
    // 300,002 nodes as written (the root, `examples` and its 300,000 empty arrays), over the
    // default budget of 200,000, in 900 KB: the budget counts every object and array of the
    // document whatever its keyword, and refuses it before the meta-schema check and lint.
    // (300,000 `properties` make as many nodes in 9 MB, but once the budget is raised their
    // compile and lint, and the 87 MB report of their warnings, took 50-105 s in a debug
    // build; `examples` is an annotation, so the raised budget compiles it at once.)
    let wide = format!(
        "{{\"type\": \"object\", \"examples\": [{}]}}",
        vec!["[]"; 300_000].join(",")
    );
    let w = ws(
        &[
            ("diamond.schema.json", diamond),
            ("wide.schema.json", wide),
            ("ok.schema.json", OK_SCHEMA.into()),
        ],
        &[
            ("a.json", rec("a", "diamond", "\"x\"")),
            ("b.json", rec("b", "wide", "{}")),
            ("ok.json", rec("ok", "ok", r#"{"a": 1}"#)),
        ],
    );
    let v = check_by_id(w.path(), 120, 1);
    assert_eq!(
        messages(&v["a"]),
        [
            "schemas/diamond.schema.json: the schema has 5497558138877 nodes with every $ref inlined, over max_schema_nodes (200000); not compiled (docs/verdicts.md#limits)"
        ]
    );
    assert_eq!(
        messages(&v["b"]),
        [
            "schemas/wide.schema.json: the schema has 300002 nodes as written (more with its $refs inlined), over max_schema_nodes (200000); not compiled (docs/verdicts.md#limits)"
        ]
    );
    assert_eq!(v["ok"]["decision"], "ready-for-commit");
    // lint keeps the same bound
    let r = run(
        &["lint", "schemas/wide.schema.json"],
        w.path(),
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("the schema has 300002 nodes, over max_schema_nodes (200000); not linted"),
        "{}",
        r.stdout
    );
    // and the budget is the workspace's to raise
    std::fs::write(w.path().join("verdict.toml"), "max_schema_nodes = 400000\n").unwrap();
    let v = check_by_id(w.path(), 120, 1);
    assert_eq!(v["b"]["decision"], "ready-for-commit", "{}", v["b"]);
}

/// 20,000 properties without `required`: lint finds 20,001 things (an open object, and each
/// property optional), and every verdict used to carry all of them as warnings (5.7 MB of
/// JSON per verdict: 50 captures gave 286 MB of `--format jsonl`). A verdict keeps the 100
/// most severe and one warning counting the rest; `verdict lint` still lists every one.
#[test]
fn a_contract_with_20000_optional_properties_puts_a_bounded_number_of_warnings_on_each_verdict() {
    let props: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let wide = json!({"type": "object", "properties": props}).to_string();
    let captures: Vec<(String, String)> = (0..5)
        .map(|i| {
            (
                format!("c{i}.json"),
                rec(&format!("c{i}"), "wide", r#"{"p1": "x"}"#),
            )
        })
        .collect();
    let captures: Vec<(&str, String)> = captures
        .iter()
        .map(|(n, t)| (n.as_str(), t.clone()))
        .collect();
    let w = ws(&[("wide.schema.json", wide)], &captures);
    let r = run(
        &["check", "--format", "jsonl", "."],
        w.path(),
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // five verdicts of 101 warnings each, not of 20,001
    assert!(r.stdout.len() < 300_000, "{} bytes", r.stdout.len());
    let verdicts = common::jsonl_verdicts(&r.stdout);
    assert_eq!(verdicts.len(), 5);
    for v in &verdicts {
        assert_eq!(v["decision"], "ready-for-commit", "{}", v["id"]);
        let warnings = v["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 101, "{}", v["id"]);
        // the most severe first: the open object (a warning) is kept, then optional ones
        assert_eq!(warnings[0]["code"], "OPEN_OBJECT");
        assert_eq!(warnings[1]["code"], "OPTIONAL_PROPERTY");
        assert_eq!(
            warnings[100],
            json!({"code": "OPTIONAL_PROPERTY", "severity": "info",
                   "file": "schemas/wide.schema.json",
                   "message": "19901 more lint findings of this contract not kept (a verdict keeps 100: docs/verdicts.md#limits; verdict lint lists them all)"})
        );
    }
    // lint lists them all
    let r = run(
        &["lint", "--format", "json", "."],
        w.path(),
        Duration::from_secs(120),
    );
    let report: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stderr));
    let n = report["findings"].as_array().map_or(0, Vec::len);
    assert_eq!(n, 20_001, "{}", &r.stdout[..r.stdout.len().min(400)]);
}

/// An `anyOf` blow-up: 30 levels, each an `anyOf` of two `$ref`s to the next (2^30
/// branches once inlined, which the compiler would build and an instance of the wrong type
/// would try one by one): over `max_schema_nodes`, a `CONTRACT_ERROR` of its own captures,
/// measured without compiling; the other contract works.
#[test]
fn an_any_of_blow_up_is_a_contract_error_and_the_others_work() {
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d30".into(), json!({"type": "string"}));
    let blow = json!({"$ref": "#/$defs/d0", "$defs": defs}).to_string();
    let w = ws(
        &[
            ("blow.schema.json", blow),
            ("ok.schema.json", OK_SCHEMA.into()),
        ],
        &[
            ("a.json", rec("a", "blow", "5")),
            ("ok.json", rec("ok", "ok", r#"{"a": 1}"#)),
        ],
    );
    let v = check_by_id(w.path(), 60, 1);
    assert_eq!(v["a"]["reason"], "CONTRACT_ERROR", "{}", v["a"]);
    assert_eq!(
        messages(&v["a"]),
        [
            "schemas/blow.schema.json: the schema has 5368709117 nodes with every $ref inlined, over max_schema_nodes (200000); not compiled (docs/verdicts.md#limits)"
        ]
    );
    assert_eq!(v["ok"]["decision"], "ready-for-commit");
}

/// A workspace of `n` schema files `s00000.json`..., either each `$ref`-ing the next (the
/// last a string: `chain`) or each a small independent object schema, and one log of the
/// captures `(id, contract, output)` (as `bench/schema-files.py` writes them).
fn many_schema_files(
    n: usize,
    chain: bool,
    captures: &[(String, usize, &str)],
) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("schemas")).unwrap();
    std::fs::create_dir_all(tmp.path().join("captures")).unwrap();
    for i in 0..n {
        let s = if !chain {
            json!({"type": "object", "properties": {"id": {"type": "string"}, "v": {"type": "integer"}},
                   "required": ["v"]})
        } else if i + 1 < n {
            json!({"$ref": format!("s{:05}.json", i + 1)})
        } else {
            json!({"type": "string"})
        };
        std::fs::write(
            tmp.path().join(format!("schemas/s{i:05}.json")),
            s.to_string(),
        )
        .unwrap();
    }
    let log: String = captures
        .iter()
        .map(|(id, c, out)| rec(id, &format!("s{c:05}"), out) + "\n")
        .collect();
    std::fs::write(tmp.path().join("captures/c.jsonl"), log).unwrap();
    tmp
}

/// Item 7 of issue 15: 3,000 schema files, each `$ref`-ing the next. Each contract's
/// registry indexed, and its compile inlined, every file after it: the square of the chain
/// (195 s of CPU and 507 MB in a debug build for `check`; `lint` was killed at 300 s). A
/// contract reaching more than `MAX_SCHEMA_FILES_REACHED` (100) other files is a
/// `CONTRACT_ERROR` naming the limit, counted before any registry is built; the contracts
/// within it work, the last one over it and the first one within it shown. Real size:
/// after the fix `check` takes 1.6 s of CPU in a debug build, `lint` 4.7 s.
#[test]
fn three_thousand_chained_schema_files_are_bounded_per_contract_in_check_and_lint() {
    let captures: Vec<(String, usize, &str)> = [0usize, 1500, 2898, 2899, 2999]
        .iter()
        .map(|&i| (format!("c{i}"), i, "\"x\""))
        .collect();
    let w = many_schema_files(3_000, true, &captures);
    let v = check_by_id(w.path(), 90, 1);
    assert_eq!(v.len(), 5);
    for i in [0, 1500, 2898] {
        let c = &v[&format!("c{i}")];
        assert_eq!(c["reason"], "CONTRACT_ERROR", "{c}");
        assert_eq!(
            messages(c),
            [format!(
                "schemas/s{i:05}.json: the schema's $refs reach more than 100 other schema files (the limit MAX_SCHEMA_FILES_REACHED); not compiled (docs/verdicts.md#limits)"
            )]
        );
    }
    // s02899 reaches exactly 100 files: within the limit, it compiles and checks
    for i in [2899, 2999] {
        assert_eq!(
            v[&format!("c{i}")]["decision"],
            "ready-for-commit",
            "{}",
            v[&format!("c{i}")]
        );
    }
    let r = run(&["lint", "."], w.path(), Duration::from_secs(90));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stdout.contains("schemas/s00000.json: error[SCHEMA_INVALID] (root): schemas/s00000.json: the schema's $refs reach more than 100 other schema files (the limit MAX_SCHEMA_FILES_REACHED); not compiled (docs/verdicts.md#limits)\n"),
        "{}",
        &r.stdout[..r.stdout.len().min(2000)]
    );
    assert!(!r.stdout.contains("schemas/s02899.json: error"));
    assert!(
        r.stdout
            .ends_with("2899 errors, 0 warnings, 0 info in 3000 schemas\n"),
        "{}",
        &r.stdout[r.stdout.len().saturating_sub(400)..]
    );
}

/// Item 7 of issue 15: 10,000 independent schema files, 50 captures spread over them. The
/// work per contract is what it reaches (`BENCHMARKS.md`, "Many schema files"): `check` and
/// `lint` finish within the deadline with every verdict. Real size: 6.3 s of CPU in a debug
/// build for `check`, the contracts' own files only.
#[test]
fn ten_thousand_schema_files_check_and_lint_within_a_deadline() {
    let captures: Vec<(String, usize, &str)> = (0..10_000)
        .step_by(200)
        .map(|i| (format!("c{i}"), i, r#"{"v": 1}"#))
        .chain([("bad".to_string(), 9_999, r#"{"v": "1"}"#)])
        .collect();
    let w = many_schema_files(10_000, false, &captures);
    let v = check_by_id(w.path(), 180, 1);
    assert_eq!(v.len(), 51);
    for (id, _, _) in &captures[..50] {
        assert_eq!(v[id]["decision"], "ready-for-commit", "{}", v[id]);
    }
    assert_eq!(v["bad"]["reason"], "SCHEMA_MISMATCH", "{}", v["bad"]);
    assert_eq!(v["bad"]["errors"][0]["pointer"], "/v", "{}", v["bad"]);
    let r = run(&["lint", "."], w.path(), Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains(" in 10000 schemas\n"),
        "{}",
        &r.stdout[r.stdout.len().saturating_sub(400)..]
    );
}

/// `check`'s validator loop runs on a worker of the rayon pool when every input is a log
/// (`engine::batch::stream`): on a pool of one, two or three workers, a log alone, one-record
/// files alone and a mix of both (whose reader reads the files on the pool, so the loop
/// stays off it) each finish, with the same report, in `--schema` mode and workspace mode.
#[test]
fn every_pool_size_finishes_logs_files_and_a_mix_with_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let schema = r#"{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}"#;
    std::fs::write(dir.path().join("s.schema.json"), schema).unwrap();
    let lines: String = (0..5000)
        .map(|i| {
            if i % 7 == 0 {
                format!("{{\"n\":\"{i}\"}}\n")
            } else {
                format!("{{\"n\":{i}}}\n")
            }
        })
        .collect();
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    std::fs::write(dir.path().join("logs/a.jsonl"), &lines).unwrap();
    std::fs::create_dir_all(dir.path().join("files")).unwrap();
    std::fs::create_dir_all(dir.path().join("mix")).unwrap();
    std::fs::write(dir.path().join("mix/a.jsonl"), &lines).unwrap();
    for i in 0..40 {
        let text = if i % 3 == 0 {
            r#"{"n":1.5}"#
        } else {
            r#"{"n":2}"#
        };
        std::fs::write(dir.path().join(format!("files/{i:02}.json")), text).unwrap();
        std::fs::write(dir.path().join(format!("mix/{i:02}.json")), text).unwrap();
    }
    for input in ["logs/a.jsonl", "files", "mix"] {
        let mut reports = Vec::new();
        for threads in ["1", "2", "3"] {
            let r = common::run::run_with(
                &[
                    "check",
                    "--schema",
                    "s.schema.json",
                    input,
                    "--format",
                    "jsonl",
                ],
                dir.path(),
                Duration::from_secs(60),
                |c| {
                    c.env("RAYON_NUM_THREADS", threads);
                },
            );
            assert_eq!(r.code, Some(1), "{input} on {threads}: {}", r.stderr);
            reports.push(r.stdout);
        }
        assert!(reports[0].lines().count() > 40, "{input}");
        assert_eq!(reports[0], reports[1], "{input}");
        assert_eq!(reports[0], reports[2], "{input}");
    }
    // workspace mode: the refund sample's log alone and the whole sample
    let refund = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund");
    for input in ["captures/cases.jsonl", "."] {
        let mut reports = Vec::new();
        for threads in ["1", "2"] {
            let r = common::run::run_with(
                &["check", input, "--format", "jsonl"],
                &refund,
                Duration::from_secs(60),
                |c| {
                    c.env("RAYON_NUM_THREADS", threads);
                },
            );
            assert!(
                matches!(r.code, Some(0 | 1)),
                "{input} on {threads}: {}",
                r.stderr
            );
            reports.push((r.code, r.stdout));
        }
        assert!(reports[0].1.lines().count() >= 20, "{input}");
        assert_eq!(reports[0], reports[1], "{input}");
    }
}

/// A rule that builds a value past the memory budget (nine chained maps of eight copies of
/// a 56-byte string: 7.5 GB) is `RULE_ERROR` on each capture, named, and not run: the run
/// goes on (it used to end the process on an allocation failure, no verdict printed).
#[test]
fn a_rule_past_the_memory_budget_is_a_rule_error_not_an_abort() {
    let eight = ".map(x, x + x + x + x + x + x + x + x)";
    let rule = format!("['{}']{}.size() > 0", "a".repeat(56), eight.repeat(9));
    let w = ws(
        &[("c.schema.json", r#"{"type": "object"}"#.to_string())],
        &[
            ("a.json", rec("a", "c", "{}")),
            ("b.json", rec("b", "c", "{\"k\": 1}")),
        ],
    );
    std::fs::write(
        w.path().join("schemas/c.rules.toml"),
        format!("[[rule]]\nreason = \"BIG\"\nrule = {rule:?}\nmessage = \"m\"\n"),
    )
    .unwrap();
    let v = check_by_id(w.path(), 60, 1);
    for id in ["a", "b"] {
        assert_eq!(v[id]["reason"], "RULE_ERROR", "{id}: {}", v[id]);
        let m = &messages(&v[id])[0];
        assert!(
            m.starts_with("rule 1 (BIG) could build a value of up to "),
            "{m}"
        );
        assert!(
            m.ends_with(" bytes on this capture, over the rule budget of 256 MiB (MAX_RULE_BYTES, docs/verdicts.md#limits); not evaluated, fails closed"),
            "{m}"
        );
    }
}

/// The hostile tester's rules end to end: three nested maps over an indexed literal of 600
/// items (it ended the process, 3.6 GB) and four nested `all` over `[1 (100)] + []` (18
/// seconds a capture) are `RULE_ERROR` within a deadline; a map over 3000 items that reads
/// a short member of the proposal in its body (refused as 1.05e10 bytes) is evaluated.
#[test]
fn an_indexed_literal_or_a_built_range_is_a_rule_error_and_a_map_over_the_capture_runs() {
    let ones = |n: usize| format!("[{}]", vec!["1"; n].join(", "));
    let l = format!("[{}][0]", ones(600));
    let indexed = format!("{l}.map(a, {l}.map(b, {l}.map(c, 1))).size() > 0");
    let l = format!("({} + [])", ones(100));
    let built = format!("{l}.all(a, {l}.all(b, {l}.all(c, {l}.all(d, true))))");
    let read = "proposal.items.map(i, proposal.order_id + ':' + i.sku).size() > 0";
    let items: Vec<Value> = (0..3000)
        .map(|i| json!({"sku": format!("S{i}"), "name": format!("n{i}"), "qty": i % 7 + 1}))
        .collect();
    let order = json!({"order_id": "o-17", "currency": "EUR", "items": items}).to_string();
    let cases = [
        ("indexed", &indexed),
        ("built", &built),
        ("read", &read.to_string()),
    ];
    let mut schemas = Vec::new();
    let mut captures = Vec::new();
    for (name, _) in &cases {
        schemas.push((
            Box::leak(format!("{name}.schema.json").into_boxed_str()) as &str,
            r#"{"type": "object"}"#.to_string(),
        ));
        captures.push((
            Box::leak(format!("{name}.json").into_boxed_str()) as &str,
            rec(name, name, &order),
        ));
    }
    let w = ws(&schemas, &captures);
    for (name, rule) in &cases {
        write_rule(w.path(), name, rule);
    }
    let v = check_by_id(w.path(), 60, 1);
    assert_eq!(v["read"]["decision"], "ready-for-commit", "{}", v["read"]);
    assert_eq!(v["indexed"]["reason"], "RULE_ERROR", "{}", v["indexed"]);
    assert_eq!(
        messages(&v["indexed"]),
        [
            "rule 1 (R) could build a value of up to 8.364e10 bytes on this capture, over the rule budget of 256 MiB (MAX_RULE_BYTES, docs/verdicts.md#limits); not evaluated, fails closed"
        ]
    );
    assert_eq!(v["built"]["reason"], "RULE_ERROR", "{}", v["built"]);
    assert_eq!(
        messages(&v["built"]),
        [
            "rule 1 (R) could take up to 1.010e8 comprehension steps on this capture (12004 values), over the rule budget of 10,000,000 steps (MAX_RULE_STEPS, docs/verdicts.md#limits); not evaluated, fails closed"
        ]
    );
}
