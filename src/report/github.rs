//! `--format github`: GitHub Actions workflow commands, one `::error` annotation per failing
//! capture (`::error file=F,line=L,col=C,title=REASON::message`), then a `::notice` summary.
//! Escaping follows the Actions toolkit: `%`, CR and LF in data; also `:` and `,` in properties.

use crate::core::summary::Summary;
use crate::core::text::escape_control;
use crate::report::{Item, Sink, expect_mismatch, headline, rule_id};
use std::io::{self, Write};

/// Escapes workflow-command data (the Actions toolkit's `escapeData`).
pub(crate) fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property (the Actions toolkit's `escapeProperty`).
pub(crate) fn property(s: &str) -> String {
    data(&escape_control(s))
        .replace(':', "%3A")
        .replace(',', "%2C")
}

/// `--format github`.
pub struct Github<W: Write> {
    out: W,
}

impl<W: Write> Github<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        Github { out }
    }
}

impl<W: Write> Sink for Github<W> {
    fn item(&mut self, it: &Item) -> io::Result<()> {
        let v = &it.verdict;
        if v.passes() {
            return Ok(());
        }
        let mut msg = format!("{} [{} {}]: {}", v.id, v.stage, v.decision, headline(v));
        if let Some(m) = expect_mismatch(v) {
            msg = format!("{msg} ({m})");
        }
        writeln!(
            self.out,
            "::error file={},line={},col={},title={}::{}",
            property(&escape_control(&it.path)),
            it.line,
            it.column,
            property(&rule_id(v)),
            data(&escape_control(&msg))
        )
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        writeln!(
            self.out,
            "::notice title=verdict::{}%0A{} passed, {} failed",
            data(&summary.funnel_line()),
            summary.passed,
            summary.failed
        )
    }
}
