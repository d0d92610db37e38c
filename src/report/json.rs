//! `--format json` (one document `{"summary": ..., "verdicts": [...]}`) and
//! `--format jsonl` (one verdict per line), the shapes of DESIGN 5.

use crate::core::summary::Summary;
use crate::report::Item;
use std::io::{self, Write};

/// Writes `{"summary": {...}, "verdicts": [...]}` and a newline.
pub fn write(out: &mut dyn Write, items: &[Item], summary: &Summary) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        summary: &'a Summary,
        verdicts: Vec<&'a crate::core::verdict::Verdict>,
    }
    let doc = Doc {
        summary,
        verdicts: items.iter().map(|i| &i.verdict).collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// Writes one compact verdict per line.
pub fn write_lines(out: &mut dyn Write, items: &[Item]) -> io::Result<()> {
    for i in items {
        serde_json::to_writer(&mut *out, &i.verdict)?;
        writeln!(out)?;
    }
    Ok(())
}
