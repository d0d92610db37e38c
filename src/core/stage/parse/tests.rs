use super::*;

#[test]
fn smoke_print() {
    let inputs = [
        "",
        "  ",
        "{\"a\":",
        "[1,",
        "tru",
        "\"abc",
        "{\"a\":1,\"a\":2}",
        "{\"b\":{\"x\":1,\"x\":2}}",
        "NaN",
        "[NaN]",
        "-Infinity",
        "[1e400]",
        "+1",
        "01",
        ".5",
        "1.",
        "[1.]",
        "0x10",
        "[0x10]",
        "{} x",
        "[1] [2]",
        "{\"a\":1}}",
        "Here is the JSON: {\"a\":1}",
        "```json\n{\"a\": 1}\n```",
        "\u{feff}{}",
        "{'a':1}",
        "{\"a\":1,}",
        "[1,]",
        "{a:1}",
        "[1 // c\n]",
        "/* c */ {}",
        "\"a\u{1}b\"",
        "\"\\x\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "[True]",
        "nope {\"a\":1}",
        "[1 2]",
        "{\"a\" 1}",
        "{\"é\": tru",
        "[-]",
        "-",
        "[1e]",
        "1.5.3",
        "\"\\u12g4\"",
        "\u{a0}{}",
        "[1,,2]",
        "{\"a\":}",
        "3",
        "null",
        "\"x\"",
        " [1] ",
    ];
    for i in inputs {
        println!(
            "{i:?} => {:?}",
            parse_strict(i).map_err(|f| (
                f.reason.0.to_string(),
                f.at.map(|a| a.to_string()),
                f.span.map(|s| (s.start, s.end)),
                f.pointer,
                f.message
            ))
        );
    }
}
