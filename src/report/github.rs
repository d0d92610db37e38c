//! `--format github`: GitHub Actions workflow commands, one `::error` annotation per failing
//! capture (`::error file=F,line=L,col=C,title=REASON::message`), then a `::notice` summary.
//! Escaping follows the Actions toolkit: `%`, CR and LF in data; also `:` and `,` in properties.

use crate::core::summary::Summary;
use crate::core::text::escape_control;
use crate::report::{Item, expect_mismatch, headline};
use std::io::{self, Write};

fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn property(s: &str) -> String {
    data(&escape_control(s))
        .replace(':', "%3A")
        .replace(',', "%2C")
}

/// Writes one annotation per capture that does not pass, and a summary notice.
pub fn write(out: &mut dyn Write, items: &[Item], summary: &Summary) -> io::Result<()> {
    for it in items.iter().filter(|i| !i.verdict.passes()) {
        let v = &it.verdict;
        let reason = v
            .reason
            .as_ref()
            .map_or("READY".to_string(), |r| r.to_string());
        let mut msg = format!("{} [{} {}]: {}", v.id, v.stage, v.decision, headline(v));
        if let Some(m) = expect_mismatch(v) {
            msg = format!("{msg} ({m})");
        }
        writeln!(
            out,
            "::error file={},line={},col={},title={}::{}",
            property(&it.path),
            it.line,
            it.column,
            property(&reason),
            data(&escape_control(&msg))
        )?;
    }
    writeln!(
        out,
        "::notice title=verdict::{}%0A{} passed, {} failed",
        data(&summary.funnel_line()),
        summary.passed,
        summary.failed
    )
}
