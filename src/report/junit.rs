//! `--format junit`: JUnit XML, one `<testsuite>` per capture file and one `<testcase>` per
//! capture (`name` = id, `classname` = contract). A capture fails when it does not pass
//! (`expect` not met, or no `expect` and not ready).

use crate::core::summary::Summary;
use crate::report::{Item, expect_mismatch, headline};
use std::io::{self, Write};

/// XML text with `& < > " '` escaped and characters XML 1.0 forbids replaced by `\u{..}`.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' || c.is_control() => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Writes the JUnit document.
pub fn write(out: &mut dyn Write, items: &[Item], summary: &Summary) -> io::Result<()> {
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="verdict" tests="{}" failures="{}" errors="0">"#,
        summary.captures, summary.failed
    )?;
    let mut start = 0;
    while start < items.len() {
        let file = &items[start].path;
        let end = start
            + items[start..]
                .iter()
                .take_while(|i| &i.path == file)
                .count();
        let group = &items[start..end];
        let failures = group.iter().filter(|i| !i.verdict.passes()).count();
        writeln!(
            out,
            r#"  <testsuite name="{}" tests="{}" failures="{failures}" errors="0">"#,
            xml_escape(file),
            group.len()
        )?;
        for it in group {
            let v = &it.verdict;
            let class = v.contract.as_deref().unwrap_or("no-contract");
            write!(
                out,
                r#"    <testcase name="{}" classname="{}" file="{}" line="{}""#,
                xml_escape(&v.id),
                xml_escape(class),
                xml_escape(&it.path),
                it.line
            )?;
            if v.passes() {
                writeln!(out, "/>")?;
                continue;
            }
            writeln!(out, ">")?;
            let reason = v
                .reason
                .as_ref()
                .map_or("READY".to_string(), |r| r.to_string());
            let message = expect_mismatch(v).unwrap_or_else(|| {
                format!("{} {} {}: {}", v.stage, reason, v.decision, headline(v))
            });
            let mut body = String::new();
            for f in &v.errors {
                body.push_str(&format!(
                    "{} {} at {}{}: {}\n",
                    f.stage,
                    f.reason,
                    f.pointer
                        .as_deref()
                        .map_or("-", |p| if p.is_empty() { "(root)" } else { p }),
                    f.at.map(|a| format!(" ({a})")).unwrap_or_default(),
                    f.message
                ));
            }
            writeln!(
                out,
                r#"      <failure type="{}" message="{}">{}</failure>"#,
                xml_escape(&reason),
                xml_escape(&message),
                xml_escape(&body)
            )?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>")?;
        start = end;
    }
    writeln!(out, "</testsuites>")
}
