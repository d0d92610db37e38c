use super::*;
use crate::core::verdict::{Decision, LineCol};

/// The finding of a text that must fail, after the checks every parse finding must meet.
fn fail(text: &str) -> Finding {
    let f = match parse_strict(text) {
        Ok(v) => panic!("{text:?} parsed as {v}"),
        Err(f) => f,
    };
    assert_eq!(f.stage, Stage::Parse, "{text:?}");
    assert_eq!(f.decision, Decision::Regenerate, "{text:?}");
    let span = f.span.expect("span");
    assert!(
        span.start <= span.end && span.end <= text.len(),
        "{text:?}: {span:?}"
    );
    assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
    // a truncation is pointed at where the text ends; everything else at its token
    let at = if f.reason == Reason::TRUNCATED_JSON {
        text.trim_end().len()
    } else {
        span.start
    };
    assert_eq!(f.at, Some(line_col(text, at)), "{text:?}");
    assert!(
        !f.message.chars().any(char::is_control),
        "raw control character in {:?}",
        f.message
    );
    assert!(
        !f.message.is_empty() && !f.message.starts_with(char::is_uppercase),
        "{}",
        f.message
    );
    assert_eq!(
        f.pointer.is_some(),
        f.reason == Reason::DUPLICATE_KEY,
        "{text:?}"
    );
    f
}

/// Asserts reason, `at` (line, column in characters) and byte span; returns the message.
#[track_caller]
fn check(text: &str, reason: Reason, at: (u32, u32), span: (usize, usize)) -> String {
    let f = fail(text);
    assert_eq!(f.reason, reason, "{text:?}: {}", f.message);
    assert_eq!(
        f.at,
        Some(LineCol {
            line: at.0,
            column: at.1
        }),
        "{text:?}: {}",
        f.message
    );
    assert_eq!(
        f.span,
        Some(Span {
            start: span.0,
            end: span.1
        }),
        "{text:?}: {}",
        f.message
    );
    f.message
}

fn sp(start: usize, end: usize) -> Option<Span> {
    Some(Span { start, end })
}

// ---------------------------------------------------------------- valid documents

#[test]
fn bare_scalars_and_whitespace_are_valid() {
    for text in [
        "3",
        "null",
        "\"x\"",
        "true",
        "false",
        "-0",
        "5e-324",
        "[]",
        "{}",
        " \t\r\n 3 \n",
        "\n  {\"a\": [1, 2.5, -0.0, 1E+5, \"\\ud83d\\ude00\"]}  \r\n",
        "\"\\u00e9\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
        "{\"é\": \"名前\", \"\": {}}",
    ] {
        let ours = parse_strict(text).unwrap_or_else(|f| panic!("{text:?}: {f:?}"));
        assert_eq!(
            ours,
            serde_json::from_str::<Value>(text).unwrap(),
            "{text:?}"
        );
        assert!(diagnose(text).is_none(), "{text:?}");
    }
    assert_eq!(parse_strict("3").unwrap(), serde_json::json!(3));
    assert_eq!(parse_strict("\"x\"").unwrap(), serde_json::json!("x"));
}

#[test]
fn fast_path_is_serde_json_without_duplicates() {
    let v = from_str_no_duplicates(r#"{"z":1,"a":[1.5,-2,18446744073709551615]}"#).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"a": [1.5, -2, 18446744073709551615u64], "z": 1})
    );
    // plain numbers, never arbitrary_precision maps (that feature would break cel)
    assert!(v["a"][0].is_f64() && v["a"][1].is_i64() && v["a"][2].is_u64());
    let e = from_str_no_duplicates("{\"a\":1,\n \"b\":{\"x\":1,\"x\":2}}").unwrap_err();
    assert_eq!(e.classify(), serde_json::error::Category::Data);
    assert!(
        e.to_string().starts_with("duplicate key \"x\" at line 2"),
        "{e}"
    );
    assert!(from_str_no_duplicates("{} x").is_err());
}

// ---------------------------------------------------------------- one test per reason

#[test]
fn truncated_json() {
    check("{\"a\":", Reason::TRUNCATED_JSON, (1, 6), (0, 5));
    check("[1,", Reason::TRUNCATED_JSON, (1, 4), (0, 3));
    check("tru", Reason::TRUNCATED_JSON, (1, 4), (0, 3));
    check("[1", Reason::TRUNCATED_JSON, (1, 3), (0, 2));
    check("{\"a\"", Reason::TRUNCATED_JSON, (1, 5), (0, 4));
    // the innermost unclosed value: the string
    let m = check("{\"a\": \"abc", Reason::TRUNCATED_JSON, (1, 11), (6, 10));
    assert_eq!(
        m,
        "the text ends inside a string opened at 1:7: expected a closing '\"', found the end of the text"
    );
    // an unfinished key
    check("{\"a\":1,\"b", Reason::TRUNCATED_JSON, (1, 10), (7, 9));
    // inside an escape
    check("[\"a\\u12", Reason::TRUNCATED_JSON, (1, 8), (1, 7));
    check("[\"\\ud83d", Reason::TRUNCATED_JSON, (1, 9), (1, 8));
    // a number cut off inside a container
    check("[1.", Reason::TRUNCATED_JSON, (1, 4), (1, 3));
    // multi-line, non-ASCII before: columns count characters
    let text = "{\n  \"名前\": \"太郎\",\n  \"lines\": [\n    {\"sku\": \"é\", \"qty\": ";
    let start = text.rfind('{').unwrap();
    let m = check(text, Reason::TRUNCATED_JSON, (4, 24), (start, text.len()));
    assert_eq!(
        m,
        "the text ends inside an object opened at 4:5: expected a value, found the end of the text"
    );
    let text = "[\n  {\"é\": [tr";
    check(
        text,
        Reason::TRUNCATED_JSON,
        (2, 12),
        (text.len() - 2, text.len()),
    );
}

#[test]
fn duplicate_key() {
    let text = r#"{"a":1,"b":{"x":1,"x":2}}"#;
    let f = fail(text);
    assert_eq!(f.reason, Reason::DUPLICATE_KEY);
    assert_eq!(f.pointer.as_deref(), Some("/b/x"));
    assert_eq!(f.message, "duplicate key \"x\" at /b/x");
    assert_eq!(f.span, sp(18, 21));
    assert_eq!(
        f.at,
        Some(LineCol {
            line: 1,
            column: 19
        })
    );

    // escaped pointer tokens (RFC 6901), keys equal after unescaping
    let f = fail(r#"{"a/b~":{"k":1,"\u006b":2}}"#);
    assert_eq!(f.pointer.as_deref(), Some("/a~1b~0/k"));
    assert_eq!(f.message, "duplicate key \"k\" at /a~1b~0/k");
    assert_eq!(f.span, sp(15, 23));

    // inside an array, multi-line, non-ASCII
    let text = "[\n  {\"ключ\": 1},\n  {\"ключ\": 1,\n   \"ключ\": 2}\n]";
    let start = text.rfind("\"ключ\"").unwrap();
    let f = fail(text);
    assert_eq!(f.reason, Reason::DUPLICATE_KEY);
    assert_eq!(f.pointer.as_deref(), Some("/1/ключ"));
    assert_eq!(f.message, "duplicate key \"ключ\" at /1/ключ");
    assert_eq!(f.span, sp(start, start + "\"ключ\"".len()));
    assert_eq!(f.at, Some(LineCol { line: 4, column: 4 }));

    // the first problem wins: the duplicate comes before the truncation
    check("{\"a\":1,\"a\":[1,", Reason::DUPLICATE_KEY, (1, 8), (7, 10));
    // a key whose text needs escaping in the message
    let f = fail("{\"a\\nb\":1,\"a\\nb\":2}");
    assert_eq!(f.pointer.as_deref(), Some("/a\nb"));
    assert_eq!(f.message, "duplicate key \"a\\nb\" at /a\\nb");
}

#[test]
fn non_standard_number() {
    check("NaN", Reason::NON_STANDARD_NUMBER, (1, 1), (0, 3));
    check("{\"x\": NaN}", Reason::NON_STANDARD_NUMBER, (1, 7), (6, 9));
    check("[Infinity]", Reason::NON_STANDARD_NUMBER, (1, 2), (1, 9));
    let m = check(
        "[1, -Infinity]",
        Reason::NON_STANDARD_NUMBER,
        (1, 5),
        (4, 13),
    );
    assert_eq!(
        m,
        "non-standard number \"-Infinity\": JSON has no NaN or Infinity, expected a finite number"
    );
    let m = check(
        "{\"é\":\n  1e400}",
        Reason::NON_STANDARD_NUMBER,
        (2, 3),
        (9, 14),
    );
    assert_eq!(
        m,
        "number \"1e400\" is outside the range of an IEEE 754 double: expected a finite number"
    );
    check("-1.5E+309", Reason::NON_STANDARD_NUMBER, (1, 1), (0, 9));
    let big = format!("[{}]", "9".repeat(400));
    check(&big, Reason::NON_STANDARD_NUMBER, (1, 2), (1, 401));
    // underflow is an error like overflow (serde_json would read 0), and so is a number
    // with more precision than a double holds (docs/verdicts.md#numbers)
    let m = check("[0, 1e-400]", Reason::NON_STANDARD_NUMBER, (1, 5), (4, 10));
    assert_eq!(
        m,
        "number \"1e-400\" underflows an IEEE 754 double: it is not zero but would read as 0 (expected a number a double holds, or 0)"
    );
    let m = check(
        "{\"n\": 9007199254740993.0}",
        Reason::NON_STANDARD_NUMBER,
        (1, 7),
        (6, 24),
    );
    assert_eq!(
        m,
        "number \"9007199254740993.0\" has more precision than an IEEE 754 double holds: it would read as 9007199254740992 (expected an integer of 64 bits, or a number a double holds exactly)"
    );
    assert_eq!(parse_strict("0.0e-999").unwrap(), serde_json::json!(0.0));
    assert_eq!(parse_strict("5e-324").unwrap(), serde_json::json!(5e-324));
}

#[test]
fn trailing_content() {
    let m = check(
        "{\"a\":1} and more\n",
        Reason::TRAILING_CONTENT,
        (1, 9),
        (8, 16),
    );
    assert_eq!(
        m,
        "expected the end of the text after the JSON value, found \"and more\""
    );
    check("{} {}", Reason::TRAILING_CONTENT, (1, 4), (3, 5));
    check("{\"a\":1}}", Reason::TRAILING_CONTENT, (1, 8), (7, 8));
    check("3 4", Reason::TRAILING_CONTENT, (1, 3), (2, 3));
    check("true story", Reason::TRAILING_CONTENT, (1, 6), (5, 10));
    // a valid value followed by prose and a fence is trailing, not fenced
    let text = "{\"é\": 1}\n```\nthanks";
    check(text, Reason::TRAILING_CONTENT, (2, 1), (10, text.len()));
}

#[test]
fn fenced_json() {
    let text = "```json\n{\"a\": 1}\n```";
    let m = check(text, Reason::FENCED_JSON, (2, 1), (8, 16));
    assert!(
        m.contains("markdown code fence") && m.contains("\"```json\""),
        "{m}"
    );
    let text = "Here is the JSON: {\"a\": [1, 2]}.";
    let m = check(text, Reason::FENCED_JSON, (1, 19), (18, 31));
    assert_eq!(
        m,
        "the JSON value is preceded by prose, with no fence or tag around it: expected the text to start with the value, found \"Here is the JSON:\""
    );
    // a tag around the value says so
    let text = "<json>\n{\"a\": 1}\n</json>";
    let m = check(text, Reason::FENCED_JSON, (2, 1), (7, 15));
    assert_eq!(
        m,
        "the JSON value is wrapped in a tag \"<json>\": expected the text to start with the value, found \"<json>\""
    );
    // non-ASCII prose: the column counts characters
    let text = "Вот JSON:\n\n  Ответ — [1, {\"b\": null}] ok";
    let start = text.find('[').unwrap();
    check(
        text,
        Reason::FENCED_JSON,
        (3, 11),
        (start, text.rfind(']').unwrap() + 1),
    );
    // a fence without a language; an earlier broken candidate is skipped
    let text = "Sure! [see below]\n```\n[{\"k\": \"v\"}]\n```\n";
    let start = text.find("[{").unwrap();
    check(text, Reason::FENCED_JSON, (3, 1), (start, start + 12));
    // nothing complete inside: invalid at the first word
    let m = check("Here is nothing", Reason::INVALID_JSON, (1, 1), (0, 4));
    assert_eq!(m, "expected a JSON value, found \"Here\"");
    check("note: {\"a\": ", Reason::INVALID_JSON, (1, 1), (0, 4));
    // a value inside with a duplicate key is not a complete valid value
    check("ok {\"a\":1,\"a\":2}", Reason::INVALID_JSON, (1, 1), (0, 2));
}

#[test]
fn too_deep() {
    assert_eq!(MAX_DEPTH, 127);
    let ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
    assert!(parse_strict(&ok).is_ok());
    assert!(serde_json::from_str::<Value>(&ok).is_ok());
    let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert!(serde_json::from_str::<Value>(&deep).is_err());
    let m = check(&deep, Reason::TOO_DEEP, (1, 128), (127, 128));
    assert_eq!(
        m,
        "nesting is too deep: expected at most 127 nested arrays and objects, found an array at level 128"
    );
    // objects count too, on several lines
    let text = format!("{}\n{{\"a\": 1}}{}", "{\"a\":".repeat(127), "}".repeat(127));
    let start = text.find('\n').unwrap() + 1;
    check(&text, Reason::TOO_DEEP, (2, 1), (start, start + 1));
    // 10,000 levels: no stack overflow, open or closed
    let open = "[".repeat(10_000);
    check(&open, Reason::TOO_DEEP, (1, 128), (127, 128));
    let closed = format!("{open}{}", "]".repeat(10_000));
    check(&closed, Reason::TOO_DEEP, (1, 128), (127, 128));
    assert_eq!(locate(&closed, ""), None);
}

#[test]
fn invalid_json() {
    use Reason as R;
    let m = check("{\"a\":1,}", R::INVALID_JSON, (1, 7), (6, 7));
    assert_eq!(m, "trailing comma before \"}\"");
    let m = check("[1,\n 2,\n]", R::INVALID_JSON, (2, 3), (6, 7));
    assert_eq!(m, "trailing comma before \"]\"");
    let m = check("{\"a\": 1 // one\n}", R::INVALID_JSON, (1, 9), (8, 14));
    assert!(m.starts_with("comments are not allowed in JSON"), "{m}");
    let m = check("/* c */ {}", R::INVALID_JSON, (1, 1), (0, 7));
    assert!(m.starts_with("comments are not allowed in JSON"), "{m}");
    let m = check("{'a': 1}", R::INVALID_JSON, (1, 2), (1, 4));
    assert!(
        m.starts_with("single quotes are not allowed in JSON"),
        "{m}"
    );
    check("[\"a\", 'b']", R::INVALID_JSON, (1, 7), (6, 9));
    let m = check("{a: 1}", R::INVALID_JSON, (1, 2), (1, 2));
    assert_eq!(m, "expected an object key in double quotes, found \"a\"");
    let m = check("{\"a\" 1}", R::INVALID_JSON, (1, 6), (5, 6));
    assert_eq!(m, "expected \":\" after the object key, found \"1\"");
    let m = check("[1 2]", R::INVALID_JSON, (1, 4), (3, 4));
    assert_eq!(
        m,
        "expected \",\" or \"]\" after an array element, found \"2\""
    );
    check("{\"a\":1 \"b\":2}", R::INVALID_JSON, (1, 8), (7, 8));
    check("[1,,2]", R::INVALID_JSON, (1, 4), (3, 4));
    check("{\"a\":}", R::INVALID_JSON, (1, 6), (5, 6));
    // control characters in strings: escaped in the message
    let m = check("{\"a\": \"x\ny\"}", R::INVALID_JSON, (1, 9), (8, 9));
    assert!(
        m.starts_with("control character U+000A in a string must be escaped"),
        "{m}"
    );
    check("\"a\u{1}\"", R::INVALID_JSON, (1, 3), (2, 3));
    // escapes
    let m = check("[\"\\x\"]", R::INVALID_JSON, (1, 3), (2, 4));
    assert!(m.starts_with("invalid escape \"\\x\" in a string"), "{m}");
    check("\"\\u12g4\"", R::INVALID_JSON, (1, 2), (1, 6));
    let m = check("\"\\ud800\"", R::INVALID_JSON, (1, 2), (1, 7));
    assert!(m.starts_with("lone surrogate escape \"\\ud800\""), "{m}");
    check("\"\\udc00\"", R::INVALID_JSON, (1, 2), (1, 7));
    check("\"\\ud800\\u0041\"", R::INVALID_JSON, (1, 2), (1, 13));
    check("\"\\ud800x\"", R::INVALID_JSON, (1, 2), (1, 7));
    // literals
    let m = check("[True]", R::INVALID_JSON, (1, 2), (1, 5));
    assert!(
        m.starts_with("expected a JSON value, found \"True\""),
        "{m}"
    );
    let m = check("[trux]", R::INVALID_JSON, (1, 2), (1, 5));
    assert_eq!(m, "expected \"true\", found \"trux\"");
    check("[nulls]", R::INVALID_JSON, (1, 2), (1, 6));
    // a near miss of a literal is told the literal; any other word starting with n, t or f
    // is not a broken literal: prose (`no refund possible`) is told a value belongs there
    for (text, at, span, want) in [
        ("nul ", (1, 1), (0, 3), "expected \"null\", found \"nul\""),
        (
            "[nulll]",
            (1, 2),
            (1, 6),
            "expected \"null\", found \"nulll\"",
        ),
        ("[tru]", (1, 2), (1, 4), "expected \"true\", found \"tru\""),
        (
            "[ture]",
            (1, 2),
            (1, 5),
            "expected \"true\", found \"ture\"",
        ),
        (
            "{\"a\": fals}",
            (1, 7),
            (6, 10),
            "expected \"false\", found \"fals\"",
        ),
        (
            "[flase]",
            (1, 2),
            (1, 6),
            "expected \"false\", found \"flase\"",
        ),
        ("[nu]", (1, 2), (1, 3), "expected \"null\", found \"nu\""),
        (
            "not json",
            (1, 1),
            (0, 3),
            "expected a JSON value, found \"not\"",
        ),
        (
            "no refund possible",
            (1, 1),
            (0, 2),
            "expected a JSON value, found \"no\"",
        ),
        (
            "[nope]",
            (1, 2),
            (1, 5),
            "expected a JSON value, found \"nope\"",
        ),
        (
            "{\"a\": nil}",
            (1, 7),
            (6, 9),
            "expected a JSON value, found \"nil\"",
        ),
        (
            "true story",
            (1, 6),
            (5, 10),
            "expected the end of the text after the JSON value, found \"story\"",
        ),
        (
            "the refund is approved",
            (1, 1),
            (0, 3),
            "expected a JSON value, found \"the\"",
        ),
        ("[f]", (1, 2), (1, 2), "expected a JSON value, found \"f\""),
    ] {
        let reason = if text.starts_with("true ") {
            R::TRAILING_CONTENT
        } else {
            R::INVALID_JSON
        };
        assert_eq!(check(text, reason, at, span), want, "{text:?}");
    }
    // prose starting with n that holds a value is still fenced
    let text = "no problem, here it is: {\"a\": 1}";
    check(text, R::FENCED_JSON, (1, 25), (24, 32));
    // malformed numbers
    check("01", R::INVALID_JSON, (1, 1), (0, 2));
    check("1.", R::INVALID_JSON, (1, 1), (0, 2));
    check("[1.]", R::INVALID_JSON, (1, 2), (1, 3));
    check(".5", R::INVALID_JSON, (1, 1), (0, 2));
    check("+1", R::INVALID_JSON, (1, 1), (0, 2));
    check("-", R::INVALID_JSON, (1, 1), (0, 1));
    check("[1e+]", R::INVALID_JSON, (1, 2), (1, 4));
    check("[-x]", R::INVALID_JSON, (1, 2), (1, 3));
    let m = check("0x10", R::INVALID_JSON, (1, 1), (0, 4));
    assert!(m.starts_with("hexadecimal numbers are not allowed"), "{m}");
    // BOM, empty, stray characters
    let m = check("\u{feff}{\"a\":1}", R::INVALID_JSON, (1, 1), (0, 3));
    assert!(m.contains("BOM"), "{m}");
    check("", R::INVALID_JSON, (1, 1), (0, 0));
    check(" \n ", R::INVALID_JSON, (2, 2), (3, 3));
    let m = check("\u{a0}{}", R::INVALID_JSON, (1, 1), (0, 2));
    assert_eq!(m, "expected a JSON value, found \"\\u00a0\"");
    // non-ASCII before the error on a later line
    check(
        "{\"名前\": \"太郎\",\n \"x\": 01}",
        R::INVALID_JSON,
        (2, 7),
        (27, 29),
    );
}

// ---------------------------------------------------------------- locate

#[test]
fn locate_nested_values() {
    let text = "{\n  \"a\": {\"b\": [10, {\"c\": \"é\"}, true]},\n  \"n\": null\n}";
    let at = |p: &str| locate(text, p).map(|s| &text[s.start..s.end]);
    assert_eq!(at(""), Some(text));
    assert_eq!(at("/a/b/0"), Some("10"));
    assert_eq!(at("/a/b/1"), Some("{\"c\": \"é\"}"));
    assert_eq!(at("/a/b/1/c"), Some("\"é\""));
    assert_eq!(at("/a/b/2"), Some("true"));
    assert_eq!(at("/a/b"), Some("[10, {\"c\": \"é\"}, true]"));
    assert_eq!(at("/n"), Some("null"));
    let s = locate(text, "/a/b/1/c").unwrap();
    assert_eq!(
        line_col(text, s.start),
        LineCol {
            line: 2,
            column: 25
        }
    );
    // missing
    for p in [
        "/x", "/a/x", "/a/b/3", "/a/b/01", "/a/b/-", "/a/b/0/x", "/n/0", "a", "/a~2",
    ] {
        assert_eq!(locate(text, p), None, "{p}");
    }
}

#[test]
fn locate_escapes_duplicates_and_invalid_text() {
    let text = r#"{"a/b": 1, "m~n": [2], "": {"": 3}, "~1": 4}"#;
    let at = |p: &str| locate(text, p).map(|s| &text[s.start..s.end]);
    assert_eq!(at("/a~1b"), Some("1"));
    assert_eq!(at("/m~0n/0"), Some("2"));
    assert_eq!(at("/"), Some("{\"\": 3}"));
    assert_eq!(at("//"), Some("3"));
    assert_eq!(at("/~01"), Some("4"));
    assert_eq!(at("/a/b"), None);
    // duplicates: the last one wins, as in the parsed value
    let text = r#"{"a": {"b": 1}, "a": {"c": [5]}}"#;
    assert_eq!(locate(text, "/a"), sp(21, 31));
    assert_eq!(locate(text, "/a/c/0"), sp(28, 29));
    assert_eq!(locate(text, "/a/b"), None);
    // keys are compared unescaped
    assert_eq!(locate(r#"{"\u00e9": 7}"#, "/é"), sp(11, 12));
    // invalid text: none
    assert_eq!(locate("{\"a\": 1,}", "/a"), None);
    assert_eq!(locate("{\"a\": 1} x", "/a"), None);
    assert_eq!(locate("```json\n{\"a\": 1}\n```", "/a"), None);
    // scalars and whitespace around the root
    assert_eq!(locate("  \"x\" \n", ""), sp(2, 5));
}

// ---------------------------------------------------------------- property style

/// Whether a text that serde_json accepts repeats a key: every `:` outside strings is one
/// member, and the parsed maps (last duplicate wins) hold fewer members than that.
fn has_duplicates(text: &str, value: &Value) -> bool {
    fn members(v: &Value) -> usize {
        match v {
            Value::Object(m) => m.len() + m.values().map(members).sum::<usize>(),
            Value::Array(a) => a.iter().map(members).sum(),
            _ => 0,
        }
    }
    let (mut in_str, mut esc, mut colons) = (false, false, 0usize);
    for c in text.chars() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (true, false, '"') | (false, _, '"') => in_str = !in_str,
            (false, _, ':') => colons += 1,
            _ => {}
        }
    }
    colons != members(value)
}

fn pointers(v: &Value, here: String, out: &mut Vec<(String, Value)>) {
    out.push((here.clone(), v.clone()));
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let mut p = here.clone();
                crate::core::pointer::push(&mut p, k);
                pointers(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A decimal's significant digits and the exponent of the first (`None` for zero): the
/// test's own reading, independent of `number.rs`.
fn decimal(token: &str) -> Option<(String, i64)> {
    let t = token.trim_start_matches('-').to_ascii_lowercase();
    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i64 = e.parse().unwrap_or(i64::MAX / 2);
    let (i, f) = m.split_once('.').unwrap_or((m, ""));
    let all = format!("{i}{f}");
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0');
    (!digits.is_empty()).then(|| (digits.to_owned(), e + i.len() as i64 - 1 - lead as i64))
}

/// Whether a number token of `text` (valid JSON) is not the shortest decimal of the double
/// it reads as (and not a 64-bit integer): what the parse stage refuses.
fn inexact_number(text: &str) -> bool {
    let mut tokens = Vec::new();
    let (mut in_str, mut esc, mut cur) = (false, false, String::new());
    for c in text.chars() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else if c.is_ascii_digit() || c == '-' || (!cur.is_empty() && "+-.eE".contains(c)) {
            cur.push(c);
        } else {
            if !cur.is_empty() {
                tokens.push(std::mem::take(&mut cur));
            }
            in_str = c == '"';
        }
    }
    tokens.push(cur);
    tokens.iter().filter(|t| !t.is_empty()).any(|t| {
        if t.parse::<u64>().is_ok() || t.parse::<i64>().is_ok() {
            return false;
        }
        let v: f64 = t.parse().unwrap_or(f64::NAN);
        decimal(t) != decimal(&format!("{:e}", v))
    })
}

fn agree(text: &str) {
    let serde = serde_json::from_str::<Value>(text);
    let dup = serde.as_ref().is_ok_and(|v| has_duplicates(text, v));
    let ours = parse_strict(text);
    let inexact = serde.is_ok() && !dup && inexact_number(text);
    assert_eq!(
        ours.is_ok(),
        serde.is_ok() && !dup && !inexact,
        "{text:?}: {ours:?} vs {serde:?}"
    );
    // the scanner agrees by itself: no fallback to serde_json's message
    assert_eq!(diagnose(text).is_none(), ours.is_ok(), "{text:?}");
    match (&ours, &serde) {
        (Ok(v), Ok(s)) => assert_eq!(v, s, "{text:?}"),
        (Err(_), _) => {
            let f = fail(text);
            if serde.is_ok() {
                // the first problem in the text: a repeated key or an inexact number
                let dup_first = dup && f.reason == Reason::DUPLICATE_KEY;
                let number_first = inexact_number(text) && f.reason == Reason::NON_STANDARD_NUMBER;
                assert!(dup_first || number_first, "{text:?}: {:?}", f.reason);
            }
        }
        _ => {}
    }
    match &serde {
        // every value of the parsed document is located at a span that parses to it
        Ok(v) => {
            let mut all = Vec::new();
            pointers(v, String::new(), &mut all);
            for (p, want) in all {
                let s = locate(text, &p).unwrap_or_else(|| panic!("{text:?}: {p} not located"));
                let got: Value = serde_json::from_str(&text[s.start..s.end]).unwrap();
                assert_eq!(got, want, "{text:?} at {p}");
            }
        }
        Err(_) => assert_eq!(locate(text, ""), None, "{text:?}"),
    }
}

#[test]
fn mutated_documents_agree_with_serde_json() {
    let docs = [
        "{\"a\": [1, -2.5e3, true, null], \"b\": {\"c\": \"x\\u00e9\\n\"}}",
        "[{\"k\": 1}, {\"k\": 2}, \"é—\", 0, 1E+2, false]",
        "{\"a/b\": {\"~\": [[], {}]}, \"\": \"\\ud83d\\ude00\", \"n\": -0}",
        " \"plain\" ",
        "{\n  \"order\": \"o-1\",\n  \"amount_minor\": 5000,\n  \"lines\": [{\"sku\": \"b\", \"qty\": 2}]\n}",
    ];
    let inserts = [
        "\"", ",", "}", "]", "{", "[", ":", "\\", "0", "-", ".", "e", " ", "a", "\n", "'", "/",
        "\u{1}",
    ];
    let mut cases = 0usize;
    for doc in docs {
        agree(doc);
        let bounds: Vec<usize> = doc
            .char_indices()
            .map(|(i, _)| i)
            .chain([doc.len()])
            .collect();
        for (n, &i) in bounds.iter().enumerate() {
            // truncate
            agree(&doc[..i]);
            // delete one character
            if let Some(&j) = bounds.get(n + 1) {
                agree(&format!("{}{}", &doc[..i], &doc[j..]));
            }
            // insert
            for ins in inserts {
                agree(&format!("{}{ins}{}", &doc[..i], &doc[i..]));
            }
            cases += 2 + inserts.len();
        }
    }
    for dup in [
        "{\"a\":1,\"a\":1}",
        "[{\"k\": {\"x\": 1, \"y\": 2, \"x\": 3}}]",
        "{\"a\": 1, \"\\u0061\": 2}",
        "{\"a\": {\"a\": 1}, \"b\": {\"a\": 1}}",
    ] {
        agree(dup);
    }
    assert!(cases > 1000, "{cases}");
}

/// Random texts over a JSON-ish alphabet (deterministic): the same agreement, no panics.
#[test]
fn random_texts_agree_with_serde_json() {
    let alphabet = [
        "{", "}", "[", "]", ":", ",", "\"", "\"a\"", "\"a\"", "1", "0", "-", ".", "e", "+", " ",
        "\n", "true", "nul", "\\", "\\u", "d8", "00", "é", "NaN", "x", "'", "/", "\u{1}", "1e400",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..FUZZ_CASES {
        let len = (next() % 14) as usize;
        let text: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        agree(&text);
    }
}

const FUZZ_CASES: usize = 3000;

/// Random valid-looking documents (keys from a small set, so some repeat), each then
/// mutated once at a random place (deterministic): the same agreement.
#[test]
fn random_documents_agree_with_serde_json() {
    struct Gen(u64);
    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        fn ws(&mut self, out: &mut String) {
            out.push_str([" ", "", "", "\n  ", "\t"][self.next(5)]);
        }
        fn value(&mut self, depth: usize, out: &mut String) {
            let scalars = [
                "0",
                "-1.5e3",
                "1E400",
                "true",
                "null",
                "\"é\\n\"",
                "\"\\ud83d\\ude00\"",
                "12345678901234567890123",
            ];
            match if depth > 3 { 2 } else { self.next(4) } {
                0 => {
                    out.push('{');
                    for i in 0..self.next(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        self.ws(out);
                        out.push_str(
                            ["\"a\"", "\"b\"", "\"a/~\"", "\"\\u0061\"", "\"c\""][self.next(5)],
                        );
                        self.ws(out);
                        out.push(':');
                        self.value(depth + 1, out);
                    }
                    self.ws(out);
                    out.push('}');
                }
                1 => {
                    out.push('[');
                    for i in 0..self.next(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        self.value(depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    self.ws(out);
                    out.push_str(scalars[self.next(scalars.len())]);
                    self.ws(out);
                }
            }
        }
    }
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let bits = [
        "", "", "\"", ",", "}", "]", "{", ":", "\\", "-", "x", " ", "/*", "1",
    ];
    for _ in 0..FUZZ_CASES {
        let mut doc = String::new();
        g.value(0, &mut doc);
        let bounds: Vec<usize> = doc
            .char_indices()
            .map(|(i, _)| i)
            .chain([doc.len()])
            .collect();
        let i = bounds[g.next(bounds.len())];
        let text = match g.next(3) {
            0 => doc[..i].to_owned(),
            1 => format!("{}{}{}", &doc[..i], bits[g.next(bits.len())], &doc[i..]),
            _ => doc,
        };
        agree(&text);
    }
}

#[test]
fn serde_error_fallback_maps_byte_columns_to_characters() {
    let text = "[1,\n {\"éé\": tru}]";
    let err = serde_json::from_str::<Value>(text).unwrap_err();
    assert_eq!((err.line(), err.column()), (2, 14)); // bytes: the "}"
    let f = from_serde_error(text, &err);
    assert_eq!(f.reason, Reason::INVALID_JSON);
    assert_eq!(f.message, "expected ident");
    assert_eq!(f.span, sp(17, 18));
    // the column counts characters
    assert_eq!(f.at, Some(line_col(text, 17)));
    assert_eq!(f.at.map(|a| (a.line, a.column)), Some((2, 12)));
}

#[test]
fn malformed_numbers_say_what_a_json_number_needs() {
    let f = fail("[+1]");
    assert_eq!(f.reason, Reason::INVALID_JSON);
    assert_eq!(
        f.message,
        "a JSON number must not start with \"+\": expected a digit or \"-\", found \"+1\""
    );
    let f = fail("[.5]");
    assert_eq!(f.reason, Reason::INVALID_JSON);
    assert_eq!(
        f.message,
        "a JSON number needs a digit before the decimal point: expected a digit, found \".5\""
    );
}

/// Every pointer of a value: its own and its descendants', RFC 6901 escaped.
fn all_pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                let k = crate::core::pointer::escape(k);
                all_pointers(c, format!("{at}/{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                all_pointers(c, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn locating_in_strict_text_stops_early_and_finds_the_same_spans() {
    let mut seed = 11u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    fn random_value(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> serde_json::Value {
        use serde_json::json;
        let keys = ["a", "b", "a/b", "m~n", "é", "", "0", "long key"];
        match if depth > 3 { next(4) } else { next(7) } {
            0 => json!(null),
            1 => json!(next(1000) as i64 - 500),
            2 => json!(format!("s\"{}\\\n", next(9))),
            3 => json!(next(2) == 0),
            4 | 5 => {
                let n = next(5);
                serde_json::Value::Object(
                    (0..n)
                        .map(|_| {
                            let k = keys[next(keys.len() as u64) as usize].to_string();
                            (k, random_value(next, depth + 1))
                        })
                        .collect(),
                )
            }
            _ => serde_json::Value::Array(
                (0..next(5))
                    .map(|_| random_value(next, depth + 1))
                    .collect(),
            ),
        }
    }
    let mut checked = 0;
    for round in 0..400 {
        let value = random_value(&mut next, 0);
        let text = if round % 2 == 0 {
            serde_json::to_string(&value).unwrap()
        } else {
            format!("  {}\n", serde_json::to_string_pretty(&value).unwrap())
        };
        assert!(parse_strict(&text).is_ok(), "{text}");
        let mut pointers = Vec::new();
        all_pointers(&value, String::new(), &mut pointers);
        pointers.extend(["/nope".to_string(), "/0/nope".into(), "/a/9".into()]);
        // malformed pointers and non-index tokens never match
        pointers.extend(["a".to_string(), "/~2".into(), "/01".into(), "/-".into()]);
        let whole: Vec<Option<Span>> = pointers.iter().map(|p| locate(&text, p)).collect();
        for (p, whole) in pointers.iter().zip(&whole) {
            let early = locate_all_in_strict(&text, &[p.as_str()]);
            assert_eq!(early, [*whole], "{p} in {text}");
            checked += 1;
        }
        // all at once, in one scan: each pointer's own span, in the order asked, repeats too
        let mut asked: Vec<&str> = pointers.iter().map(String::as_str).collect();
        let mut want = whole.clone();
        if round % 3 == 0 {
            // a random subset, shuffled, with a repeat
            let mut picked = Vec::new();
            for _ in 0..=next(asked.len() as u64) {
                picked.push(next(asked.len() as u64) as usize);
            }
            picked.push(picked[0]);
            asked = picked.iter().map(|&i| pointers[i].as_str()).collect();
            want = picked.iter().map(|&i| whole[i]).collect();
        }
        assert_eq!(
            locate_all_in_strict(&text, &asked),
            want,
            "{asked:?} in {text}"
        );
    }
    assert!(checked > 2000, "{checked}");
}

#[test]
fn locate_all_in_strict_answers_nothing_asked_and_nested_pointers() {
    assert_eq!(locate_all_in_strict("[1]", &[]), Vec::<Option<Span>>::new());
    let text = r#"{"a": {"b": [10, {"c": "x"}]}, "0": 5}"#;
    let at = |s: Option<Span>| s.map(|s| &text[s.start..s.end]);
    let got = locate_all_in_strict(text, &["/a/b/1/c", "", "/a", "/0", "/a/b/0", "/a/b/01"]);
    let got: Vec<_> = got.into_iter().map(at).collect();
    assert_eq!(
        got,
        [
            Some("\"x\""),
            Some(text),
            Some(r#"{"b": [10, {"c": "x"}]}"#),
            Some("5"),
            Some("10"),
            None
        ]
    );
}

/// 100,000 findings on one large output all get their span and line:column (there is no
/// budget: one scan finds every span, one line index gives every position).
#[test]
fn every_one_of_100_000_findings_is_located() {
    let n = 100_000;
    // one element a line: `{"v": "é"}`, the value of element i at line i + 2, column 7
    let mut text = String::from("[\n");
    let mut spans = Vec::with_capacity(n);
    for i in 0..n {
        text.push_str(if i == 0 { "" } else { ",\n" });
        let start = text.len() + 6;
        text.push_str("{\"v\": \"é\"}");
        spans.push(Span {
            start,
            end: start + 4,
        });
    }
    text.push_str("\n]\n");
    // (a strict JSON text by construction; parsing it would take longer than locating)
    // in reverse order of the text, as no scan would meet them
    let mut findings: Vec<Finding> = (0..n)
        .rev()
        .map(|i| {
            Finding::new(Stage::Schema, Reason::SCHEMA_MISMATCH, "x")
                .with_pointer(format!("/{i}/v"))
        })
        .collect();
    locate_findings(&text, &mut findings);
    for (k, f) in findings.iter().enumerate() {
        let i = n - 1 - k;
        assert_eq!(f.span, Some(spans[i]), "finding {i}");
        let at = LineCol {
            line: i as u32 + 2,
            column: 7,
        };
        assert_eq!(f.at, Some(at), "finding {i}");
    }
    assert_eq!(&text[spans[7].start..spans[7].end], "\"é\"");
}

#[test]
fn the_root_span_is_the_scanners() {
    for text in [
        "{}",
        "1",
        "  [1, {\"a\": [2]}]\n",
        "\t\"s \\\" \u{a0}\"\r\n",
        "\u{a0}",
        " \n\r\t{\"a\":{\"b\":null}} \t\n",
        "\"\u{2028}\"\u{2028}",
    ] {
        if parse_strict(text).is_err() {
            // a text that does not parse is never located (the no-break space, U+2028 after)
            assert!(
                text.contains('\u{a0}') || text.ends_with('\u{2028}'),
                "{text:?}"
            );
            continue;
        }
        assert_eq!(
            Some(root_span(text)),
            locate_all_in_strict(text, &[""])[0],
            "{text:?}"
        );
    }
    // findings at the root only: the same spans and positions as the scan gives
    let text = "\n  {\"a\": 1}  \n";
    let mut findings = vec![
        Finding::new(Stage::Schema, Reason::SCHEMA_MISMATCH, "x").with_pointer(""),
        Finding::new(Stage::Schema, Reason::SCHEMA_MISMATCH, "y").with_pointer(""),
    ];
    locate_findings(text, &mut findings);
    for f in &findings {
        assert_eq!(f.span, Some(Span { start: 3, end: 11 }));
        assert_eq!(f.at, Some(LineCol { line: 2, column: 3 }));
    }
}

#[test]
fn member_spans_are_the_general_scans_spans() {
    let texts = [
        r#"{"a": 1, "b": "x\"}y", "c": [1, {"d": "]"}], "e": {"f": [[]]}, "g": null, "h": -1.5e3, "": true}"#,
        " \n{\"a\"\t:\r\n\"v\" , \"b\":{}}\n ",
        "{}",
        r#"{"k": "é🙂", "l": "\\", "m": [ ]}"#,
    ];
    let pointers = [
        "", "/a", "/b", "/c", "/e", "/g", "/h", "/", "/k", "/l", "/m", "/zz",
    ];
    for text in texts {
        parse_strict(text).expect("strict JSON");
        let spans = member_spans(text, &pointers).expect("the root is an object");
        assert_eq!(spans, locate_all_in_strict(text, &pointers), "{text:?}");
    }
    // what it leaves to the general scan
    assert_eq!(member_spans("[1]", &["/0"]), None);
    assert_eq!(member_spans(r#"{"a": {"b": 1}}"#, &["/a/b"]), None);
    assert_eq!(member_spans(r#"{"a~b": 1}"#, &["/a~0b"]), None);
    assert_eq!(member_spans(r#"{"\u0061": 1}"#, &["/a"]), None);
    // found where the general scan finds it
    let text = r#"{"a": {"b": 1}, "c": "d"}"#;
    assert_eq!(
        member_spans(text, &["/c", "/a"]),
        Some(vec![
            Some(Span { start: 21, end: 24 }),
            Some(Span { start: 6, end: 14 })
        ])
    );
}
