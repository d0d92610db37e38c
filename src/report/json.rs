//! `--format json` (one document `{"verdicts": [...], "summary": {...}}`, verdicts streamed
//! one per line) and `--format jsonl` (one verdict per line), the shapes of DESIGN 5.

use crate::core::summary::Summary;
use crate::report::{Item, Sink};
use std::io::{self, Write};

/// `--format json`.
pub struct Json<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> Json<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        Json { out, first: true }
    }
}

impl<W: Write> Sink for Json<W> {
    fn item(&mut self, item: &Item) -> io::Result<()> {
        self.out.write_all(if self.first {
            b"{\"verdicts\": [\n  "
        } else {
            b",\n  "
        })?;
        self.first = false;
        serde_json::to_writer(&mut self.out, &item.verdict)?;
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        self.out.write_all(if self.first {
            b"{\"verdicts\": [],\n\"summary\": "
        } else {
            b"\n],\n\"summary\": "
        })?;
        serde_json::to_writer_pretty(&mut self.out, summary)?;
        writeln!(self.out, "\n}}")
    }
}

/// `--format jsonl`.
pub struct JsonLines<W: Write> {
    out: W,
}

impl<W: Write> JsonLines<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        JsonLines { out }
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn item(&mut self, item: &Item) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, &item.verdict)?;
        writeln!(self.out)
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
}
