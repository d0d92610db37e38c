//! `--format json` (one document `{"verdicts": [...], "summary": {...}}`, verdicts streamed
//! one per line) and `--format jsonl` (one verdict per line), the shapes of DESIGN 5.

use crate::core::summary::Summary;
use crate::report::{Item, Renderer, Sink};
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
        write_verdict(&mut self.out, item)
    }

    fn renderer(&self) -> Option<Renderer> {
        Some(verdict_json)
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
        write_verdict(&mut self.out, item)?;
        self.out.write_all(b"\n")
    }

    fn renderer(&self) -> Option<Renderer> {
        Some(verdict_json)
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
}

/// An item's verdict as compact JSON (the [`Renderer`] of both JSON formats).
pub fn verdict_json(item: &Item) -> Vec<u8> {
    let mut buf = Vec::with_capacity(512);
    serde_json::to_writer(&mut buf, &item.verdict).expect("a verdict serializes");
    buf
}

/// Writes the pre-rendered verdict, or renders it here: into a buffer first, so the writer
/// gets one call instead of one per JSON token.
fn write_verdict(out: &mut impl Write, item: &Item) -> io::Result<()> {
    match &item.rendered {
        Some(bytes) => out.write_all(bytes),
        None => out.write_all(&verdict_json(item)),
    }
}
