//! `--format json` (one document `{"verdicts": [...], "summary": {...}}`, verdicts streamed
//! one per line) and `--format jsonl` (one verdict per line), the shapes of `docs/verdicts.md`.

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

impl<W: Write> Json<W> {
    /// Writes one verdict's compact JSON (without its newline) after the right separator.
    fn entry(&mut self, json: &[u8]) -> io::Result<()> {
        self.out.write_all(if self.first {
            b"{\"verdicts\": [\n  "
        } else {
            b",\n  "
        })?;
        self.first = false;
        self.out.write_all(json)
    }
}

impl<W: Write> Sink for Json<W> {
    fn item(&mut self, item: &Item) -> io::Result<()> {
        match &item.rendered {
            Some(line) => self.entry(line.strip_suffix(b"\n").unwrap_or(line)),
            None => self.entry(&verdict_json(item)),
        }
    }

    fn renderer(&self) -> Option<Renderer> {
        Some(std::sync::Arc::new(verdict_line))
    }

    fn passes(&mut self, _model: &Item, bytes: &[u8], _n: usize) -> io::Result<()> {
        // one verdict per line: compact JSON escapes every newline inside a string
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            self.entry(line.strip_suffix(b"\n").unwrap_or(line))?;
        }
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
        match &item.rendered {
            Some(line) => self.out.write_all(line),
            None => {
                let mut line = verdict_json(item);
                line.push(b'\n');
                self.out.write_all(&line)
            }
        }
    }

    fn renderer(&self) -> Option<Renderer> {
        Some(std::sync::Arc::new(verdict_line))
    }

    fn passes(&mut self, _model: &Item, bytes: &[u8], _n: usize) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    fn finish(&mut self, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
}

/// An item's verdict as compact JSON, rendered into a buffer so the writer gets one call
/// instead of one per JSON token.
pub fn verdict_json(item: &Item) -> Vec<u8> {
    let mut buf = Vec::with_capacity(512);
    serde_json::to_writer(&mut buf, &item.verdict).expect("a verdict serializes");
    buf
}

/// The [`Renderer`] of both JSON formats: the verdict as compact JSON and a newline (the
/// `jsonl` line; `json` prints it without the newline, after its separator).
fn verdict_line(item: &Item, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, &item.verdict).expect("a verdict serializes");
    out.push(b'\n');
}
