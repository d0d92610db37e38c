//! `verdict review` (docs/commands.md#review) in a temporary git repository: tighten a bound, drop an enum
//! value, add a required property, loosen a type; each gives exactly the expected flips
//! and summary lines. Also `--old-schemas`, the formats, and exit 2.

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_verdict");

fn base_schema() -> Value {
    json!({"type": "object",
           "properties": {"amount": {"type": "integer", "minimum": 1},
                          "currency": {"enum": ["KRW", "USD"]},
                          "note": {"type": "string"}},
           "required": ["amount", "currency"],
           "additionalProperties": false})
}

const CAPTURES: [(&str, &str); 5] = [
    ("small", r#"{"amount":50,"currency":"KRW"}"#),
    ("big", r#"{"amount":500,"currency":"KRW"}"#),
    ("usd", r#"{"amount":500,"currency":"USD"}"#),
    ("noted", r#"{"amount":500,"currency":"KRW","note":"x"}"#),
    ("null-amount", r#"{"amount":null,"currency":"KRW"}"#),
];

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn write_schema(dir: &Path, schema: &Value) {
    std::fs::write(
        dir.join("schemas/pay.schema.json"),
        serde_json::to_string_pretty(schema).unwrap(),
    )
    .unwrap();
}

/// A git repository with the base schema and the captures committed.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("schemas")).unwrap();
    std::fs::create_dir_all(p.join("captures")).unwrap();
    write_schema(p, &base_schema());
    let lines: Vec<String> = CAPTURES
        .iter()
        .map(|(id, out)| json!({"id": id, "output": out}).to_string())
        .collect();
    std::fs::write(p.join("captures/log.jsonl"), lines.join("\n") + "\n").unwrap();
    git(p, &["init", "-q"]);
    git(p, &["add", "."]);
    git(p, &["commit", "-qm", "base"]);
    dir
}

fn review(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("review")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// (exit code, flips as (id, kind, old label, new label), changes as (kind, pointer, message)).
type Seen = (
    i32,
    Vec<(String, String, String, String)>,
    Vec<(String, String, String)>,
);

fn outcome(dir: &Path, args: &[&str]) -> Seen {
    let mut all = vec!["-f", "json"];
    all.extend_from_slice(args);
    let o = review(dir, &all);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let label = |o: &Value| match o["reason"].as_str() {
        Some(r) => format!("{}/{r}", s(&o["stage"])),
        None => s(&o["stage"]),
    };
    let flips = doc["flips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                s(&f["id"]),
                s(&f["kind"]),
                label(&f["old"]),
                label(&f["new"]),
            )
        })
        .collect();
    let changes = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (s(&c["kind"]), s(&c["pointer"]), s(&c["message"])))
        .collect();
    (o.status.code().unwrap(), flips, changes)
}

fn flip(id: &str, kind: &str, old: &str, new: &str) -> (String, String, String, String) {
    (id.into(), kind.into(), old.into(), new.into())
}

fn change(kind: &str, pointer: &str, message: &str) -> (String, String, String) {
    (kind.into(), pointer.into(), message.into())
}

#[test]
fn no_change_no_flips() {
    let r = repo();
    assert_eq!(outcome(r.path(), &[]), (0, vec![], vec![]));
}

#[test]
fn tighten_a_bound() {
    let r = repo();
    let mut s = base_schema();
    s["properties"]["amount"]["minimum"] = json!(100);
    write_schema(r.path(), &s);
    let (code, flips, changes) = outcome(r.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        flips,
        [flip(
            "small",
            "now-failing",
            "ready",
            "schema/SCHEMA_MISMATCH"
        )]
    );
    assert_eq!(
        changes,
        [change(
            "bound_tightened",
            "/properties/amount/minimum",
            "minimum 1 -> 100"
        )]
    );
}

#[test]
fn drop_an_enum_value() {
    let r = repo();
    let mut s = base_schema();
    s["properties"]["currency"]["enum"] = json!(["KRW"]);
    write_schema(r.path(), &s);
    let (code, flips, changes) = outcome(r.path(), &["--base", "HEAD"]);
    assert_eq!(code, 1);
    assert_eq!(
        flips,
        [flip(
            "usd",
            "now-failing",
            "ready",
            "schema/SCHEMA_MISMATCH"
        )]
    );
    assert_eq!(
        changes,
        [change(
            "enum_removed",
            "/properties/currency/enum",
            "enum value \"USD\" removed"
        )]
    );
}

#[test]
fn add_a_required_property() {
    let r = repo();
    let mut s = base_schema();
    s["required"] = json!(["amount", "currency", "note"]);
    write_schema(r.path(), &s);
    let (code, flips, changes) = outcome(r.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        flips,
        [
            flip("small", "now-failing", "ready", "schema/SCHEMA_MISMATCH"),
            flip("big", "now-failing", "ready", "schema/SCHEMA_MISMATCH"),
            flip("usd", "now-failing", "ready", "schema/SCHEMA_MISMATCH"),
        ]
    );
    assert_eq!(
        changes,
        [change(
            "required_added",
            "/required/2",
            "`note` is now required"
        )]
    );
    // the cause names the missing property
    let o = review(r.path(), &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("now failing (3):"), "{out}");
    assert!(out.contains("\"note\" is a required property"), "{out}");
}

#[test]
fn loosen_a_type() {
    let r = repo();
    let mut s = base_schema();
    s["properties"]["amount"]["type"] = json!(["integer", "null"]);
    write_schema(r.path(), &s);
    let (code, flips, changes) = outcome(r.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(
        flips,
        [flip(
            "null-amount",
            "now-passing",
            "schema/SCHEMA_MISMATCH",
            "ready"
        )]
    );
    assert_eq!(
        changes,
        [change(
            "type_widened",
            "/properties/amount/type",
            "type \"integer\" -> [\"integer\",\"null\"]"
        )]
    );
}

#[test]
fn old_schemas_folder_markdown_and_github() {
    let r = repo();
    let old = tempfile::tempdir().unwrap();
    std::fs::write(
        old.path().join("pay.schema.json"),
        base_schema().to_string(),
    )
    .unwrap();
    let mut s = base_schema();
    s["properties"]["amount"]["minimum"] = json!(100);
    write_schema(r.path(), &s);
    let dir = old.path().to_str().unwrap();
    let (code, flips, _) = outcome(r.path(), &["--old-schemas", dir]);
    assert_eq!((code, flips.len()), (1, 1));
    let md = String::from_utf8_lossy(&review(r.path(), &["-f", "markdown"]).stdout).to_string();
    assert!(md.contains("| small | ready | schema/SCHEMA_MISMATCH | /amount: 50 is less than the minimum of 100 |"), "{md}");
    let gh = String::from_utf8_lossy(&review(r.path(), &["-f", "github"]).stdout).to_string();
    assert!(
        gh.starts_with(
            "::error file=captures/log.jsonl,line=1,title=now failing::small now failing"
        ),
        "{gh}"
    );
    // run from the folder above, naming the workspace: the file is named from there, as
    // `check --format github` names it, so the annotation lands in a repository checkout
    let parent = r.path().parent().unwrap();
    let name = r.path().file_name().unwrap().to_str().unwrap();
    let o = Command::new(BIN)
        .args(["review", "-f", "github", "--old-schemas", dir, name])
        .current_dir(parent)
        .output()
        .unwrap();
    let gh = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        gh.starts_with(&format!(
            "::error file={name}/captures/log.jsonl,line=1,title=now failing::small now failing"
        )),
        "{gh}"
    );
}

#[test]
fn cannot_run_is_exit_2() {
    let r = repo();
    assert_eq!(
        review(r.path(), &["--base", "no-such-rev"]).status.code(),
        Some(2)
    );
    let plain = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(plain.path().join("schemas")).unwrap();
    let o = review(plain.path(), &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        review(r.path(), &["--old-schemas", "missing"])
            .status
            .code(),
        Some(2)
    );
}

/// Appends capture lines with an `expect` to the repository's log and commits them.
fn add_expecting_captures(dir: &Path) {
    let log = dir.join("captures/log.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    for (id, out, expect) in [
        (
            "wants-schema",
            r#"{"amount":50,"currency":"KRW"}"#,
            json!({"stage": "schema"}),
        ),
        (
            "wants-ready",
            r#"{"amount":500,"currency":"KRW"}"#,
            json!({"stage": "ready"}),
        ),
    ] {
        text.push_str(&json!({"id": id, "output": out, "expect": expect}).to_string());
        text.push('\n');
    }
    std::fs::write(&log, text).unwrap();
    git(dir, &["commit", "-qam", "expecting captures"]);
}

#[test]
fn groups_are_named_by_what_a_user_sees() {
    let r = repo();
    add_expecting_captures(r.path());
    let mut s = base_schema();
    s["properties"]["amount"]["minimum"] = json!(600);
    write_schema(r.path(), &s);
    let (code, flips, _) = outcome(r.path(), &[]);
    assert_eq!(code, 1);
    let m = "schema/SCHEMA_MISMATCH";
    assert_eq!(
        flips,
        [
            flip("small", "now-failing", "ready", m),
            flip("big", "now-failing", "ready", m),
            flip("usd", "now-failing", "ready", m),
            flip("noted", "now-failing", "ready", m),
            // it went from ready to failing, and it now meets its expect: not "now passing"
            flip("wants-ready", "no-longer-meets-expect", "ready", m),
            flip("wants-schema", "now-meets-expect", "ready", m),
        ]
    );
    let human = String::from_utf8_lossy(&review(r.path(), &[]).stdout).to_string();
    assert!(human.contains("now failing (4):"), "{human}");
    assert!(human.contains("no longer meets expect (1):"), "{human}");
    assert!(human.contains("now meets expect (1):"), "{human}");
    assert!(
        human.ends_with(
            "4 now failing, 1 no longer meets expect, 0 now passing, 1 now meets expect, 0 changed of 7 captures (base HEAD)\n"
        ),
        "{human}"
    );
}

#[test]
fn a_meets_expect_flip_alone_exits_0() {
    // only a capture that expects to fail starts failing: nothing a `check` run counts
    // as failing got worse
    let r = repo();
    add_expecting_captures(r.path());
    let mut s = base_schema();
    s["properties"]["amount"]["minimum"] = json!(60);
    write_schema(r.path(), &s);
    let (code, flips, _) = outcome(r.path(), &[]);
    assert_eq!(
        flips,
        [
            flip("small", "now-failing", "ready", "schema/SCHEMA_MISMATCH"),
            flip(
                "wants-schema",
                "now-meets-expect",
                "ready",
                "schema/SCHEMA_MISMATCH"
            ),
        ]
    );
    assert_eq!(code, 1, "small is now failing");
    // the same edit with `small` gone: only the expected failure remains
    let log = r.path().join("captures/log.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("\"small\"")).collect();
    std::fs::write(&log, kept.join("\n") + "\n").unwrap();
    let (code, flips, _) = outcome(r.path(), &[]);
    assert_eq!(
        (code, flips),
        (
            0,
            vec![flip(
                "wants-schema",
                "now-meets-expect",
                "ready",
                "schema/SCHEMA_MISMATCH"
            )]
        )
    );
}

#[test]
fn another_error_within_the_same_reason_is_changed() {
    // `null` fails `type` both times, with another message: the outcome is the same,
    // the error a reviewer reads is not
    let r = repo();
    let mut s = base_schema();
    s["properties"]["amount"]["type"] = json!("number");
    write_schema(r.path(), &s);
    let (code, flips, _) = outcome(r.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(
        flips,
        [flip(
            "null-amount",
            "changed",
            "schema/SCHEMA_MISMATCH",
            "schema/SCHEMA_MISMATCH"
        )]
    );
    // the report shows both errors: the one now and the one it replaced
    let o = review(r.path(), &["-f", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &doc["flips"][0];
    assert_ne!(f["cause"]["message"], f["was"]["message"], "{f}");
    assert_eq!(f["was"]["pointer"], "/amount", "{f}");
    let human = String::from_utf8_lossy(&review(r.path(), &[]).stdout).to_string();
    let now = format!(
        "      now: /amount: {}",
        f["cause"]["message"].as_str().unwrap()
    );
    let was = format!(
        "      was: /amount: {}",
        f["was"]["message"].as_str().unwrap()
    );
    assert!(human.contains(&format!("{now}\n{was}\n")), "{human}");
    // a flip of outcome has no `was`
    let mut s = base_schema();
    s["required"] = json!(["amount", "note"]);
    write_schema(r.path(), &s);
    let o = review(r.path(), &["-f", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let flips = doc["flips"].as_array().unwrap();
    assert!(flips.len() >= 3, "{doc}");
    assert!(
        flips
            .iter()
            .all(|f| f["kind"] == "now-failing" && f.get("was").is_none()),
        "{doc}"
    );
}

#[test]
fn outside_git_the_error_suggests_old_schemas() {
    let plain = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(plain.path().join("schemas")).unwrap();
    let o = review(plain.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not in a git repository"), "{err}");
    assert!(err.contains("--old-schemas DIR"), "{err}");
}

/// `review` with `env` set (`TMPDIR`), as `outcome` reads it.
fn outcome_with(dir: &Path, env: &[(&str, &Path)]) -> (Output, Option<Seen>) {
    let mut cmd = Command::new(BIN);
    cmd.args(["review", "-f", "json"]).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let seen = serde_json::from_slice::<Value>(&o.stdout).ok().map(|doc| {
        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let flips = doc["flips"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    s(&f["id"]),
                    s(&f["kind"]),
                    s(&f["old"]["stage"]),
                    s(&f["new"]["stage"]),
                )
            })
            .collect();
        (o.status.code().unwrap(), flips, Vec::new())
    });
    (o, seen)
}

/// Every file below `dir` with its bytes, `.git` left out.
fn files_below(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_name() == ".git" {
            continue;
        }
        if p.is_dir() {
            out.extend(files_below(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn an_absolute_schemas_path_is_the_same_folder_as_a_relative_one() {
    let r = repo();
    let abs = r.path().canonicalize().unwrap().join("schemas");
    let mut s = base_schema();
    s["properties"]["amount"]["minimum"] = json!(100);
    write_schema(r.path(), &s);
    for schemas in [
        abs.to_string_lossy().into_owned(),
        "schemas".into(),
        "./schemas/".into(),
    ] {
        std::fs::write(
            r.path().join("verdict.toml"),
            format!("schemas = {}\n", toml_string(&schemas)),
        )
        .unwrap();
        let (code, flips, _) = outcome(r.path(), &[]);
        assert_eq!(
            (code, flips),
            (
                1,
                vec![flip(
                    "small",
                    "now-failing",
                    "ready",
                    "schema/SCHEMA_MISMATCH"
                )]
            ),
            "schemas = {schemas}"
        );
    }
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn schema_file_names_git_would_quote_are_read() {
    for name in ["zahlung-ä", "pay\"q", "pay\nline", "pay\tt"] {
        let r = repo();
        let p = r.path();
        std::fs::rename(
            p.join("schemas/pay.schema.json"),
            p.join(format!("schemas/{name}.schema.json")),
        )
        .unwrap();
        git(p, &["add", "-A"]);
        git(p, &["commit", "-qm", "rename"]);
        let mut s = base_schema();
        s["properties"]["amount"]["minimum"] = json!(100);
        std::fs::write(
            p.join(format!("schemas/{name}.schema.json")),
            serde_json::to_string_pretty(&s).unwrap(),
        )
        .unwrap();
        let o = review(p, &["-f", "json"]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{name:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["summary"]["now_failing"], 1, "{name:?}: {doc}");
        assert_eq!(doc["flips"][0]["id"], "small", "{name:?}");
        assert_eq!(doc["flips"][0]["contract"], name, "{name:?}");
    }
}

/// A workspace in `repo/ws` whose schemas are `../common-schemas` (a folder beside it).
fn shared_schemas_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("common-schemas")).unwrap();
    std::fs::create_dir_all(p.join("ws/captures")).unwrap();
    std::fs::write(
        p.join("common-schemas/pay.schema.json"),
        serde_json::to_string_pretty(&base_schema()).unwrap(),
    )
    .unwrap();
    std::fs::write(
        p.join("ws/verdict.toml"),
        "schemas = \"../common-schemas\"\n",
    )
    .unwrap();
    let lines: Vec<String> = CAPTURES
        .iter()
        .map(|(id, out)| json!({"id": id, "output": out}).to_string())
        .collect();
    std::fs::write(p.join("ws/captures/log.jsonl"), lines.join("\n") + "\n").unwrap();
    git(p, &["init", "-q"]);
    git(p, &["add", "."]);
    git(p, &["commit", "-qm", "base"]);
    dir
}

/// Base files are written only below review's private temporary folder: a schemas folder
/// beside the workspace (`../common-schemas`), whose git paths would climb out of it, is refused
/// before anything is written (a walk never leaves the workspace, docs/verdicts.md#limits),
/// and the uncommitted edit is left as it was.
#[test]
fn base_files_never_leave_the_temporary_folder() {
    let r = shared_schemas_repo();
    let mut s = base_schema();
    s["properties"]["amount"]["minimum"] = json!(100);
    let edited = serde_json::to_string_pretty(&s).unwrap();
    std::fs::write(r.path().join("common-schemas/pay.schema.json"), &edited).unwrap();
    // a temporary folder whose `../common-schemas` is the working tree's schemas
    let (o, seen) = outcome_with(&r.path().join("ws"), &[("TMPDIR", r.path())]);
    assert_eq!(
        std::fs::read_to_string(r.path().join("common-schemas/pay.schema.json")).unwrap(),
        edited,
        "the uncommitted edit was overwritten"
    );
    assert!(seen.is_none());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("schemas = \"../common-schemas\": resolves to ")
            && err.contains("outside the workspace"),
        "{err}"
    );
    // and nothing is left behind in the temporary folder
    let left: Vec<_> = std::fs::read_dir(r.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("verdict-review"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

#[test]
fn a_temporary_folder_inside_the_workspace_is_refused() {
    let r = repo();
    let mut s = base_schema();
    s["properties"]["amount"]["minimum"] = json!(100);
    write_schema(r.path(), &s);
    let before = files_below(r.path());
    let schemas = r.path().join("schemas");
    let (o, _) = outcome_with(r.path(), &[("TMPDIR", &schemas)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let canon = r.path().canonicalize().unwrap();
    assert_eq!(
        err,
        format!(
            "verdict: the temporary folder {} is inside the workspace folder {}: review \
             writes the old schemas to a private temporary folder, never among the \
             workspace's files; point TMPDIR elsewhere\n",
            canon.join("schemas").display(),
            canon.display()
        )
    );
    assert_eq!(
        files_below(r.path()),
        before,
        "review wrote into the workspace"
    );
}
