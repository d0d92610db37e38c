//! `--format junit`: JUnit XML, one `<testsuite>` per capture file and one `<testcase>` per
//! capture (`name` = id, `classname` = contract). A capture fails when it does not pass
//! (`expect` not met, or no `expect` and not ready). Each suite's testcases are spilled to
//! a temporary file until its counts are known, so memory does not grow with the file. A
//! failure's text ends with a `repair:` line when the verdict has a `repair`
//! (`docs/repairs.md`).

use crate::core::summary::Summary;
use crate::report::{Item, Sink, expect_mismatch, headline, rule_id};
use std::io::{self, Seek, Write};

/// XML text with `& < > " '` escaped, tab and newlines as character references, and the
/// characters XML 1.0 forbids, the other control characters and the
/// [`invisible`](crate::core::escape::invisible) ones written as `\u{..}`, as the human output
/// shows them (`go\u{200b}od`, `a\u{202e}b`: `docs/commands.md#untrusted-text`).
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
            c if (c as u32) < 0x20
                || c == '\u{FFFE}'
                || c == '\u{FFFF}'
                || c.is_control()
                || crate::core::escape::invisible(c) =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// `--format junit`.
pub struct Junit<W: Write> {
    out: W,
    suite: Option<Suite>,
    /// Every closed suite, until the totals for `<testsuites>` are known.
    suites: Option<std::fs::File>,
}

struct Suite {
    file: String,
    tests: usize,
    failures: usize,
    body: std::fs::File,
}

impl<W: Write> Junit<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        Junit {
            out,
            suite: None,
            suites: None,
        }
    }

    fn close_suite(&mut self) -> io::Result<()> {
        if let Some(mut s) = self.suite.take() {
            let out = match &mut self.suites {
                Some(f) => f,
                None => self.suites.insert(tempfile::tempfile()?),
            };
            writeln!(
                out,
                r#"  <testsuite name="{}" tests="{}" failures="{}" errors="0">"#,
                xml_escape(&s.file),
                s.tests,
                s.failures
            )?;
            s.body.flush()?;
            s.body.rewind()?;
            io::copy(&mut s.body, out)?;
            writeln!(out, "  </testsuite>")?;
        }
        Ok(())
    }
}

impl<W: Write> Sink for Junit<W> {
    fn item(&mut self, it: &Item) -> io::Result<()> {
        if self.suite.as_ref().is_none_or(|s| *s.file != *it.path) {
            self.close_suite()?;
            self.suite = Some(Suite {
                file: it.path.to_string(),
                tests: 0,
                failures: 0,
                body: tempfile::tempfile()?,
            });
        }
        let Some(s) = self.suite.as_mut() else {
            return Ok(());
        };
        let v = &it.verdict;
        s.tests += 1;
        let class = v.contract.as_deref().unwrap_or("no-contract");
        let mut w = io::BufWriter::new(&mut s.body);
        write!(
            w,
            r#"    <testcase name="{}" classname="{}" file="{}" line="{}""#,
            xml_escape(&v.id),
            xml_escape(class),
            xml_escape(&it.path),
            it.line
        )?;
        if v.passes() {
            return writeln!(w, "/>");
        }
        s.failures += 1;
        writeln!(w, ">")?;
        let reason = rule_id(v);
        let message = expect_mismatch(v)
            .unwrap_or_else(|| format!("{} {} {}: {}", v.stage, reason, v.decision, headline(v)));
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
        if let Some(note) = crate::report::repair_note(v) {
            body.push_str(&format!("repair: {note}\n"));
        }
        writeln!(
            w,
            r#"      <failure type="{}" message="{}">{}</failure>"#,
            xml_escape(&reason),
            xml_escape(&message),
            xml_escape(&body)
        )?;
        writeln!(w, "    </testcase>")
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        self.close_suite()?;
        writeln!(self.out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            self.out,
            r#"<testsuites name="verdict" tests="{}" failures="{}" errors="0">"#,
            summary.captures, summary.failed
        )?;
        if let Some(mut f) = self.suites.take() {
            f.rewind()?;
            io::copy(&mut f, &mut self.out)?;
        }
        writeln!(self.out, "</testsuites>")
    }
}
