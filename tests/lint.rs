//! `verdict lint` (docs/commands.md#lint): one test per finding code on a small schema, with its pointer
//! and line:column; one passing and one failing schema per provider profile; warnings on
//! verdicts and `strict_schemas`; the CLI's formats and exit codes.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use verdict::core::config::Dialect;
use verdict::core::lint::{LintOptions, Profile, Severity, codes, lint_schema};

const BIN: &str = env!("CARGO_BIN_EXE_verdict");

/// (code, severity, pointer, "line:col") of every finding.
fn lint_with(
    text: &str,
    format_assertion: bool,
    profile: Option<&str>,
) -> Vec<(String, Severity, String, String)> {
    let p = profile.map(|p| Profile::load(p).unwrap());
    let opts = LintOptions {
        dialect: Dialect::Draft202012,
        format_assertion,
        profile: p.as_ref(),
        max_schema_nodes: verdict::core::schema_budget::DEFAULT_MAX_SCHEMA_NODES,
    };
    let v: Value = serde_json::from_str(text).unwrap();
    lint_schema("s.json", text, &v, &opts)
        .into_iter()
        .map(|f| {
            let at =
                f.at.map(|a| format!("{}:{}", a.line, a.column))
                    .unwrap_or_default();
            (f.code, f.severity, f.pointer, at)
        })
        .collect()
}

fn lint(text: &str) -> Vec<(String, Severity, String, String)> {
    lint_with(text, false, None)
}

/// Exactly one finding has `code`, with this severity, pointer and line:column.
#[track_caller]
fn assert_only(
    found: &[(String, Severity, String, String)],
    code: &str,
    want: (Severity, &str, &str),
) {
    let v: Vec<_> = found.iter().filter(|f| f.0 == code).collect();
    assert_eq!(v.len(), 1, "{code} in {found:?}");
    assert_eq!((v[0].1, v[0].2.as_str(), v[0].3.as_str()), want, "{code}");
}

const CLOSED: &str = r#"{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}"#;

#[test]
fn a_closed_schema_has_no_findings() {
    assert!(lint(CLOSED).is_empty());
}

#[test]
fn foreign_keyword_in_draft_07() {
    let s = "{\"$schema\": \"http://json-schema.org/draft-07/schema#\",\n \"type\": \"array\",\n \"prefixItems\": [{\"type\": \"string\"}],\n \"unevaluatedProperties\": false,\n \"dependentRequired\": {\"a\": [\"b\"]}}";
    let found = lint(s);
    let ptrs: Vec<(&str, &str)> = found
        .iter()
        .filter(|f| f.0 == codes::FOREIGN_KEYWORD)
        .map(|f| (f.2.as_str(), f.3.as_str()))
        .collect();
    assert_eq!(
        ptrs,
        [
            ("/prefixItems", "3:17"),
            ("/unevaluatedProperties", "4:27"),
            ("/dependentRequired", "5:23")
        ]
    );
    assert!(found.iter().all(|f| f.1 == Severity::Warning));
}

#[test]
fn foreign_defs_in_draft_07_is_info_and_says_refs_still_resolve() {
    let s = "{\"$schema\": \"http://json-schema.org/draft-07/schema#\",\n \"$ref\": \"#/$defs/a\",\n \"$defs\": {\"a\": {\"type\": \"string\"}}}";
    assert_only(
        &lint(s),
        codes::FOREIGN_KEYWORD,
        (Severity::Info, "/$defs", "3:11"),
    );
}

#[test]
fn foreign_keywords_in_2020_12() {
    let s = "{\"type\": \"array\",\n \"items\": [{\"type\": \"string\"}],\n \"definitions\": {},\n \"dependencies\": {\"a\": [\"b\"]}}";
    let found = lint(s);
    let f: Vec<(Severity, &str, &str)> = found
        .iter()
        .filter(|f| f.0 == codes::FOREIGN_KEYWORD)
        .map(|f| (f.1, f.2.as_str(), f.3.as_str()))
        .collect();
    assert_eq!(
        f,
        [
            (Severity::Error, "/items", "2:11"),
            (Severity::Info, "/definitions", "3:17"),
            (Severity::Warning, "/dependencies", "4:18")
        ]
    );
}

#[test]
fn unknown_keyword_with_did_you_mean() {
    let s = "{\"type\": \"object\",\n \"properties\": {\"n\": {\"type\": \"integer\", \"minimun\": 1}},\n \"required\": [\"n\"], \"additionalProperties\": false}";
    let v: Value = serde_json::from_str(s).unwrap();
    let f = lint_schema("s.json", s, &v, &LintOptions::default());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].code, codes::UNKNOWN_KEYWORD);
    assert_eq!(f[0].pointer, "/properties/n/minimun");
    assert_eq!(f[0].place(), "s.json:2:53");
    assert_eq!(f[0].hint.as_deref(), Some("did you mean `minimum`?"));
    // a near miss of a real keyword disables a check: an error; an unrelated name is not
    assert_eq!(f[0].severity, Severity::Error);
    let s = r#"{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false, "zzqx": 1}"#;
    let v: Value = serde_json::from_str(s).unwrap();
    let f = lint_schema("s.json", s, &v, &LintOptions::default());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].code, codes::UNKNOWN_KEYWORD);
    assert_eq!(f[0].severity, Severity::Warning);
}

#[test]
fn format_not_asserted_unless_assertion_is_on() {
    let s = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"e\"],\n \"properties\": {\"e\": {\"type\": \"string\", \"format\": \"email\"}}}";
    assert_only(
        &lint(s),
        codes::FORMAT_NOT_ASSERTED,
        (Severity::Warning, "/properties/e/format", "2:51"),
    );
    assert!(lint_with(s, true, None).is_empty());
}

#[test]
fn open_object() {
    let s = "{\"type\": \"object\",\n \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"]}";
    assert_only(&lint(s), codes::OPEN_OBJECT, (Severity::Warning, "", "1:1"));
}

#[test]
fn optional_property() {
    let s = "{\"type\": \"object\", \"additionalProperties\": false,\n \"properties\": {\"a\": {\"type\": \"string\"},\n  \"b\": {\"type\": \"string\"}}, \"required\": [\"a\"]}";
    assert_only(
        &lint(s),
        codes::OPTIONAL_PROPERTY,
        (Severity::Info, "/properties/b", "3:8"),
    );
}

/// A hint rides in parentheses after its message in a verdict's warnings, SARIF and GitHub
/// (`MESSAGE (HINT)`): no hint holds parentheses of its own, so none nests.
#[test]
fn hints_hold_no_parentheses_so_a_warning_nests_none() {
    let s = r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
 "properties": {"age": {"type": "integer"}, "meta": {"type": "object"},
  "note": {"type": "string", "nullable": true}, "id": {"$anchor": "x", "minContains": 1}},
 "required": ["meta"], "$defs": {}, "unevaluatedProperties": false, "prefixItems": [],
 "dependentRequired": {}}"#;
    let v: Value = serde_json::from_str(s).unwrap();
    let profile = Profile::load("openai-strict").unwrap();
    let mut findings = lint_schema("s.json", s, &v, &LintOptions::default());
    let opts = LintOptions {
        profile: Some(&profile),
        ..LintOptions::default()
    };
    findings.extend(lint_schema("s.json", s, &v, &opts));
    let mut seen: Vec<&str> = findings.iter().map(|f| f.code.as_str()).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen,
        [
            "EMPTY_OBJECT",
            "FOREIGN_KEYWORD",
            "OPEN_OBJECT",
            "OPTIONAL_PROPERTY",
            "PROFILE_KEYWORD",
            "PROFILE_OPEN_OBJECT",
            "PROFILE_OPTIONAL",
            "UNKNOWN_KEYWORD",
        ]
    );
    for f in &findings {
        let hint = f.hint.as_deref().unwrap_or_default();
        assert!(!hint.contains(['(', ')']), "{}: {hint}", f.code);
    }
    let age = findings
        .iter()
        .find(|f| f.code == codes::OPTIONAL_PROPERTY && f.pointer == "/properties/age")
        .unwrap();
    assert_eq!(
        age.to_warning().message,
        "`age` is declared but not required: an output without it passes (add \"age\" to `required`; use a null type for \"unknown\")"
    );
}

#[test]
fn empty_object() {
    let s = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"meta\"],\n \"properties\": {\"meta\": {\"type\": \"object\", \"additionalProperties\": false}}}";
    assert_only(
        &lint(s),
        codes::EMPTY_OBJECT,
        (Severity::Warning, "/properties/meta", "2:25"),
    );
}

#[test]
fn unsatisfiable_required() {
    let s = "{\"type\": \"object\", \"additionalProperties\": false,\n \"properties\": {\"amount\": {\"type\": \"integer\"}},\n \"required\": [\"amount\", \"amont\"]}";
    let found = lint(s);
    assert_only(
        &found,
        codes::UNSATISFIABLE_REQUIRED,
        (Severity::Error, "/required/1", "3:25"),
    );
}

// ---- provider profiles: one passing and one failing schema each ----

const STRICT_OK: &str = r#"{"type": "object", "additionalProperties": false, "required": ["a", "b"],
 "properties": {"a": {"type": "string"}, "b": {"type": ["integer", "null"]}}}"#;

#[test]
fn profile_openai_strict() {
    assert!(lint_with(STRICT_OK, false, Some("openai-strict")).is_empty());
    let bad = "{\"anyOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\", \"minLength\": 1}},\n \"required\": []}]}";
    let found: Vec<(String, Severity, String, String)> =
        lint_with(bad, false, Some("openai-strict"))
            .into_iter()
            .filter(|f| f.0.starts_with("PROFILE_"))
            .collect();
    let got: Vec<(&str, &str, &str)> = found
        .iter()
        .map(|f| (f.0.as_str(), f.2.as_str(), f.3.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("PROFILE_ROOT", "", "1:1"),
            ("PROFILE_OPEN_OBJECT", "/anyOf/0", "1:12"),
            ("PROFILE_OPTIONAL", "/anyOf/0/properties/a", "1:51"),
            ("PROFILE_KEYWORD", "/anyOf/0/properties/a/minLength", "1:83"),
        ]
    );
    assert!(found.iter().all(|f| f.1 == Severity::Error));
}

#[test]
fn profile_anthropic() {
    assert!(lint_with(STRICT_OK, false, Some("anthropic")).is_empty());
    let bad = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"n\"],\n \"properties\": {\"n\": {\"type\": \"integer\", \"maximum\": 10}}}";
    let found = lint_with(bad, false, Some("anthropic"));
    assert_only(
        &found,
        codes::PROFILE_KEYWORD,
        (Severity::Error, "/properties/n/maximum", "2:53"),
    );
}

#[test]
fn profile_gemini() {
    assert!(lint_with(STRICT_OK, false, Some("gemini")).is_empty());
    let bad = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"k\"],\n \"properties\": {\"k\": {\"oneOf\": [{\"type\": \"string\"}, {\"type\": \"integer\"}]}}}";
    let found = lint_with(bad, false, Some("gemini"));
    assert_only(
        &found,
        codes::PROFILE_KEYWORD,
        (Severity::Warning, "/properties/k/oneOf", "2:32"),
    );
}

// ---- workspace wiring and the CLI ----

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

const TYPO: &str = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"n\"],\n \"properties\": {\"n\": {\"type\": \"integer\", \"minimun\": 1}}}";
const CAPTURE: &str = r#"{"id": "c1", "output": "{\"n\": 0}"}"#;

#[test]
fn verdicts_carry_the_contract_warnings_and_strict_schemas_fails_them() {
    let ws = tree(&[
        ("schemas/s.schema.json", TYPO),
        ("captures/c1.json", CAPTURE),
    ]);
    let o = run(ws.path(), &["check", ".", "-f", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &doc["verdicts"][0]["warnings"][0];
    assert_eq!(w["code"], "UNKNOWN_KEYWORD");
    assert_eq!(w["pointer"], "/properties/n/minimun");
    assert_eq!(w["at"]["line"], 2);
    assert_eq!(doc["verdicts"][0]["stage"], "ready");

    std::fs::write(ws.path().join("verdict.toml"), "strict_schemas = true\n").unwrap();
    let o = run(ws.path(), &["check", ".", "-f", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = &doc["verdicts"][0];
    assert_eq!(v["reason"], "CONTRACT_ERROR");
    let msg = v["errors"][0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("schemas/s.schema.json:2:53 at /properties/n/minimun"),
        "{msg}"
    );
}

#[test]
fn cli_exit_codes_and_formats() {
    let ws = tree(&[
        ("schemas/ok.schema.json", CLOSED),
        (
            "bad.json",
            "{\"type\": \"object\", \"additionalProperties\": false,\n \"required\": [\"x\"]}",
        ),
    ]);
    let o = run(ws.path(), &["lint"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "0 errors, 0 warnings, 0 info in 1 schema\n"
    );
    let o = run(ws.path(), &["lint", "bad.json"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\nbad.json:2:15: error[UNSATISFIABLE_REQUIRED] /required/0: "),
        "{out}"
    );
    let o = run(ws.path(), &["lint", "bad.json", "-f", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            doc["summary"]["errors"].as_u64(),
            doc["summary"]["warnings"].as_u64()
        ),
        (Some(1), Some(1))
    ); // EMPTY_OBJECT is a warning
    let o = run(ws.path(), &["lint", "bad.json", "-f", "sarif"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &doc["runs"][0]["results"][0];
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
    let o = run(ws.path(), &["lint", "bad.json", "-f", "github"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "::error file=bad.json,line=2,col=15,title=UNSATISFIABLE_REQUIRED::/required/0: "
        ),
        "{out}"
    );
    // usage errors: exit 2
    assert_eq!(
        run(ws.path(), &["lint", "missing.json"]).status.code(),
        Some(2)
    );
    let o = run(ws.path(), &["lint", "--profile", "openai-strit"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean `openai-strict`?"));
    // a file that is not JSON
    std::fs::write(ws.path().join("broken.json"), "{\"type\": ").unwrap();
    let o = run(ws.path(), &["lint", "broken.json", "-f", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["findings"][0]["code"], codes::SCHEMA_UNREADABLE);
}

#[test]
fn the_refund_sample_is_clean() {
    let o = run(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["lint", "samples/refund"],
    );
    assert_eq!(o.status.code(), Some(0));
    // the two Responses bodies that echo their request sent the contract's own schema
    // (as the tool's parameters and as the text format): variants without drift
    assert_eq!(
        crate::drift::no_hashes(&String::from_utf8_lossy(&o.stdout)),
        "samples/refund/captures/responses/refusal.json: drift[refund-v1] the text format \"refund_v1\" sent to 1 capture vs contract refund-v1 (schemas/refund-v1.schema.json)\n    variant HASH (strict); request echo /response/text/format/schema; profile openai-strict; captures: refusal\n    no drift: the sent schema has the server contract's constraints\nsamples/refund/captures/valid-proposal.json: drift[refund-v1] the tool \"propose_refund\" sent to 1 capture vs contract refund-v1 (schemas/refund-v1.schema.json)\n    variant HASH (strict); request echo /response/tools/0/parameters; profile openai-strict; captures: valid-proposal\n    no drift: the sent schema has the server contract's constraints\n0 errors, 0 warnings, 0 info in 1 schema; 0 drift findings in 2 request schema variants\n"
    );
}

#[test]
fn schema_mode_verdicts_carry_the_warnings_too() {
    let ws = tree(&[("s.json", TYPO), ("in/a.json", "{\"n\": 0}")]);
    let o = run(
        ws.path(),
        &["check", "--schema", "s.json", "in", "-f", "json"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["verdicts"][0]["warnings"][0]["code"], "UNKNOWN_KEYWORD");
}

/// `verdict lint --format json` on a workspace holding `schemas/c.schema.json` and
/// `schemas/c.rules.toml`: the exit code (checked against `code`) and the JSON report.
fn lint_contract(schema: &str, rules: &str, code: i32) -> serde_json::Value {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("schemas")).unwrap();
    std::fs::write(d.path().join("schemas/c.schema.json"), schema).unwrap();
    std::fs::write(d.path().join("schemas/c.rules.toml"), rules).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["lint", "--format", "json"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_broken_rules_file_is_a_rules_invalid_error() {
    let doc = lint_contract(
        r#"{"type": "object", "properties": {}, "additionalProperties": false}"#,
        "[[rule]]\nreason = \"R\"\nrule = \"true\"\nmesage = \"m\"\n",
        1,
    );
    let text = doc.to_string();
    assert!(text.contains("RULES_INVALID"), "{text}");
    assert!(
        text.contains("unknown key `mesage` (did you mean `message`?)"),
        "{text}"
    );
}

#[test]
fn a_rule_reading_a_misspelt_proposal_member_is_a_rules_unknown_field_warning() {
    // a warning: lint still exits 0
    let doc = lint_contract(
        r#"{"type": "object", "properties": {"amount_minor": {"type": "integer"}}, "required": ["amount_minor"], "additionalProperties": false}"#,
        "[[rule]]\nreason = \"R\"\nrule = \"proposal.amount_minr > 0\"\nmessage = \"m\"\n",
        0,
    );
    let findings: Vec<&serde_json::Value> = doc["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .filter(|f| f["code"] == "RULES_UNKNOWN_FIELD")
        .collect();
    assert_eq!(findings.len(), 1, "{doc}");
    let f = findings[0];
    assert_eq!(f["file"], "schemas/c.rules.toml");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["at"], serde_json::json!({"line": 3, "column": 1}));
    assert_eq!(f["hint"], "did you mean `amount_minor`?");
}

#[test]
fn a_rules_unknown_field_warning_rides_on_the_verdicts_too() {
    // lint findings ride on every verdict of the contract: the rules file's too
    let ws = tree(&[
        (
            "schemas/c.schema.json",
            r#"{"type": "object", "properties": {"amount_minor": {"type": "integer"}}, "required": ["amount_minor"], "additionalProperties": false}"#,
        ),
        (
            "schemas/c.rules.toml",
            "[[rule]]\nreason = \"R\"\nrule = \"!has(proposal.amount_minr)\"\nmessage = \"m\"\n",
        ),
        (
            "captures/c1.json",
            r#"{"id": "c1", "output": "{\"amount_minor\": 5}"}"#,
        ),
    ]);
    let o = run(ws.path(), &["check", ".", "-f", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    let v = &doc["verdicts"][0];
    assert_eq!(v["stage"], "ready", "{v}");
    let w: Vec<&Value> = v["warnings"].as_array().unwrap().iter().collect();
    assert_eq!(w.len(), 1, "{v}");
    assert_eq!(w[0]["code"], "RULES_UNKNOWN_FIELD");
    assert_eq!(w[0]["file"], "schemas/c.rules.toml");
    assert_eq!(w[0]["severity"], "warning");
    assert_eq!(w[0]["at"], serde_json::json!({"line": 3, "column": 1}));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn a_rules_invalid_line_names_its_place_once_and_no_pointer() {
    let ws = tree(&[
        (
            "schemas/c.schema.json",
            r#"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false}"#,
        ),
        (
            "schemas/c.rules.toml",
            "[[rule]]\nreason = \"R\"\nrule = \"true\"\nexpr = \"m\"\n",
        ),
    ]);
    let o = run(ws.path(), &["lint", "."]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("RULES_INVALID"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.starts_with("schemas/c.rules.toml:4:1: error[RULES_INVALID] unknown key `expr`"),
        "{line}"
    );
    assert_eq!(line.matches("c.rules.toml").count(), 1, "{line}");
    assert!(!line.contains("(root)"), "{line}");
    let o = run(ws.path(), &["lint", ".", "-f", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &doc["findings"][0];
    assert_eq!(f["code"], "RULES_INVALID");
    assert_eq!(f["at"], serde_json::json!({"line": 4, "column": 1}));
}

#[test]
fn nullable_gets_the_json_schema_way_to_say_or_null() {
    let s = r#"{"type": "object", "properties": {"a": {"type": "string", "nullable": true}}, "required": ["a"], "additionalProperties": false}"#;
    let v: Value = serde_json::from_str(s).unwrap();
    let f = lint_schema("s.json", s, &v, &LintOptions::default());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].code, codes::UNKNOWN_KEYWORD);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].pointer, "/properties/a/nullable");
    assert_eq!(
        f[0].message,
        "`nullable` is an OpenAPI 3.0 keyword, not JSON Schema; validators ignore it, so `null` is not allowed by it"
    );
    assert_eq!(
        f[0].hint.as_deref(),
        Some(
            r#"say it the JSON Schema way: `"type": ["string", "null"]`, or `anyOf` with `{"type": "null"}`"#
        )
    );
}

#[test]
fn a_rules_file_named_on_the_command_line_is_linted_as_rules() {
    let ws = tree(&[
        (
            "schemas/c.schema.json",
            r#"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false}"#,
        ),
        (
            "schemas/c.rules.toml",
            "[[rule]]\nreason = \"R\"\nrule = \"proposal.aa > 0\"\nmessage = \"m\"\n",
        ),
    ]);
    let o = run(ws.path(), &["lint", "schemas/c.rules.toml", "-f", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["RULES_UNKNOWN_FIELD"], "{doc}");
    assert_eq!(o.status.code(), Some(0));
    // the refund sample's rules are clean, not an unreadable schema
    let o = run(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["lint", "samples/refund/schemas/refund-v1.rules.toml"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// `lint` never passes a schema `check` refuses: each file that does not compile (meta-schema,
/// unknown dialect, invalid or duplicate `$id`, `$ref` to a missing file) is one
/// `SCHEMA_INVALID` error at the place `check`'s `CONTRACT_ERROR` names, in a workspace and
/// for a file named alone; a file that is not JSON stays one `SCHEMA_UNREADABLE`.
#[test]
fn a_schema_check_cannot_compile_is_a_schema_invalid_error() {
    let ws = tree(&[
        ("schemas/bad.schema.json", "{\"type\": 5}"),
        (
            "schemas/d3.schema.json",
            "{\"$schema\": \"http://json-schema.org/draft-03/schema#\",\n \"type\": \"string\"}",
        ),
        (
            "schemas/badid.schema.json",
            "{\"type\": \"string\", \"$defs\": {\"n\": {\"$id\": \"http://[zz\"}}}",
        ),
        (
            "schemas/a.schema.json",
            "{\"$id\": \"urn:same\", \"type\": \"string\"}",
        ),
        (
            "schemas/b.schema.json",
            "{\"$id\": \"urn:same\", \"type\": \"string\"}",
        ),
        (
            "schemas/ref.schema.json",
            "{\"$ref\": \"missing.schema.json\"}",
        ),
        ("schemas/notjson.schema.json", "{"),
        ("schemas/ok.schema.json", "{\"type\": \"string\"}"),
    ]);
    let o = run(ws.path(), &["lint", ".", "-f", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut got: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            let at = &f["at"];
            format!(
                "{} {} {} {}:{}",
                f["code"].as_str().unwrap(),
                f["file"].as_str().unwrap(),
                f["pointer"].as_str().unwrap(),
                at["line"],
                at["column"]
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "SCHEMA_INVALID schemas/a.schema.json /$id 1:9",
            "SCHEMA_INVALID schemas/b.schema.json /$id 1:9",
            "SCHEMA_INVALID schemas/bad.schema.json /type 1:10",
            "SCHEMA_INVALID schemas/badid.schema.json /$defs/n/$id 1:43",
            "SCHEMA_INVALID schemas/d3.schema.json /$schema 1:13",
            "SCHEMA_INVALID schemas/ref.schema.json  1:1",
            "SCHEMA_UNREADABLE schemas/notjson.schema.json  1:2",
        ]
    );
    // one file named alone: the same finding, its message without the place it already shows
    let o = run(ws.path(), &["lint", "schemas/bad.schema.json"]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with(
            "schemas/bad.schema.json:1:10: error[SCHEMA_INVALID] /type: does not meet its meta-schema: 5 is not valid"
        ),
        "{text}"
    );
    let o = run(ws.path(), &["lint", "schemas/ok.schema.json"]);
    assert_eq!(o.status.code(), Some(0));
}

/// `verdict lint` with no path: in a folder of no workspace it lints nothing (exit 2, saying
/// so) instead of every JSON file below as a schema; in a workspace's captures folder it
/// lints that workspace's schemas, not the capture files.
#[test]
fn lint_without_a_path_lints_the_workspace_it_runs_in_or_says_there_is_none() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("data")).unwrap();
    std::fs::write(tmp.path().join("data/a.json"), r#"{"not": "a schema"}"#).unwrap();
    let o = crate::common::verdict_in(tmp.path(), &["lint"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "verdict: no schemas folder in . or above it (searched ./schemas); pass a workspace folder or schema files, e.g. `verdict lint samples/refund`\n"
    );
    // named, the folder is linted as a folder of schemas
    let o = crate::common::verdict_in(tmp.path(), &["lint", "data"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("in 1 schema"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let (_ws, refund) = crate::common::refund_copy();
    let o = crate::common::verdict_in(&refund.join("captures"), &["lint"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("0 errors, 0 warnings, 0 info in 1 schema;"),
        "{out}"
    );
}
