//! `--format json` (one document `{"verdicts": [...], "summary": {...}}`, verdicts streamed
//! one per line) and `--format jsonl` (`{"type":"verdict","data":VERDICT}` per line, then
//! `{"type":"summary","data":SUMMARY}`: the line types of `watch --json`, without its
//! `cause`, `flipped_from` and `ts_ms`), the shapes of `docs/verdicts.md`. When captures
//! form chains, `json` adds `"chains": {"rows", "summary"}` after the summary and `jsonl`
//! one `{"type":"chain","data":ROW}` line per chain before its summary line
//! (`docs/chains.md#the-report`). In `check --schema` mode
//! the summary is an [`InstanceSummary`](crate::core::summary::InstanceSummary).

use crate::core::summary::Summary;
use crate::core::verdict::Verdict;
use crate::report::{Item, Renderer, Sink};
use std::io::{self, Write};

/// `--format json`.
pub struct Json<W: Write> {
    out: W,
    first: bool,
    instances: bool,
}

impl<W: Write> Json<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        Json {
            out,
            first: true,
            instances: false,
        }
    }

    /// `check --schema`: the summary counts instances ([`Summary::instances`]).
    pub fn instances(mut self, on: bool) -> Self {
        self.instances = on;
        self
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
        let mut out = buffered(&mut self.out);
        out.write_all(if self.first {
            b"{\"verdicts\": [],\n\"summary\": "
        } else {
            b"\n],\n\"summary\": "
        })?;
        if self.instances {
            serde_json::to_writer_pretty(&mut out, &summary.instances())?;
        } else {
            serde_json::to_writer_pretty(&mut out, summary)?;
        }
        if let Some(chains) = &summary.chains {
            out.write_all(b",\n\"chains\": ")?;
            serde_json::to_writer_pretty(&mut out, chains)?;
        }
        writeln!(out, "\n}}")?;
        unbuffer(out)
    }
}

/// `--format jsonl`.
pub struct JsonLines<W: Write> {
    out: W,
    instances: bool,
}

impl<W: Write> JsonLines<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        JsonLines {
            out,
            instances: false,
        }
    }

    /// `check --schema`: the summary line counts instances ([`Summary::instances`]).
    pub fn instances(mut self, on: bool) -> Self {
        self.instances = on;
        self
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn item(&mut self, item: &Item) -> io::Result<()> {
        match &item.rendered {
            Some(line) => self.out.write_all(line),
            None => {
                let mut line = Vec::with_capacity(512);
                typed_verdict_line(item, &mut line);
                self.out.write_all(&line)
            }
        }
    }

    fn renderer(&self) -> Option<Renderer> {
        Some(std::sync::Arc::new(typed_verdict_line))
    }

    fn passes(&mut self, _model: &Item, bytes: &[u8], _n: usize) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let mut out = buffered(&mut self.out);
        // one `chain` line per chain, after every capture (`docs/chains.md#the-report`)
        // (made one at a time: `ChainReport::each_row`)
        if let Some(chains) = &summary.chains {
            let mut line = Vec::with_capacity(1024);
            chains.each_row(|row| {
                line.clear();
                line.extend_from_slice(b"{\"type\":\"chain\",\"data\":");
                crate::report::verdict_bytes::chain_row(&mut line, row);
                line.extend_from_slice(b"}\n");
                out.write_all(&line)
            })?;
        }
        out.write_all(b"{\"type\":\"summary\",\"data\":")?;
        if self.instances {
            serde_json::to_writer(&mut out, &summary.instances())?;
        } else {
            serde_json::to_writer(&mut out, summary)?;
        }
        out.write_all(b"}\n")?;
        unbuffer(out)
    }
}

/// `out` behind a 64 KiB buffer, for what is written as `serde_json` serializes it: a
/// write per JSON token, each of which the writer under a JSON report escapes on its own
/// ([`JsonSafe`](crate::core::escape::JsonSafe)). The bytes are the same; the chain rows
/// and the summary cost a write per 64 KiB instead (a third of `check --format jsonl`'s
/// extra work with chains, BENCHMARKS.md session 14).
pub fn buffered<W: Write>(out: W) -> io::BufWriter<W> {
    io::BufWriter::with_capacity(1 << 16, out)
}

/// Writes out what [`buffered`] holds (without flushing the writer under it).
///
/// # Errors
/// The writer's.
pub fn unbuffer<W: Write>(out: io::BufWriter<W>) -> io::Result<()> {
    out.into_inner()
        .map(drop)
        .map_err(io::IntoInnerError::into_error)
}

/// An item's verdict as compact JSON, rendered into a buffer so the writer gets one call
/// instead of one per JSON token.
pub fn verdict_json(item: &Item) -> Vec<u8> {
    let mut buf = Vec::with_capacity(512);
    write_verdict(&item.verdict, &mut buf);
    buf
}

/// One verdict as compact JSON (no newline), appended to `out`: the text every JSON report
/// prints for it before [`JsonSafe`](crate::core::escape::JsonSafe) escapes the output.
pub fn write_verdict(v: &Verdict, out: &mut Vec<u8>) {
    crate::report::verdict_bytes::verdict(v, out);
}

/// One verdict's text exactly as `check --format json` prints it on its line (and
/// `--format jsonl` inside `{"type":"verdict","data":...}`): compact JSON with DEL, the C1
/// controls and the invisible characters escaped (`docs/commands.md#untrusted-text`). What
/// the Python package's `Workspace.check_json` returns (`docs/python.md`).
pub fn verdict_text(v: &Verdict) -> String {
    let mut raw = Vec::with_capacity(512);
    write_verdict(v, &mut raw);
    let mut safe = crate::core::escape::JsonSafe::new(Vec::with_capacity(raw.len() + 16));
    std::io::Write::write_all(&mut safe, &raw).expect("writing to memory cannot fail");
    let bytes = safe.into_inner();
    String::from_utf8(bytes).expect("escaped JSON is UTF-8")
}

/// The [`Renderer`] of `--format jsonl`: `{"type":"verdict","data":VERDICT}` (compact) and a
/// newline, the `verdict` line of `watch --json` without `cause`, `flipped_from` and `ts_ms`.
fn typed_verdict_line(item: &Item, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":\"verdict\",\"data\":");
    write_verdict(&item.verdict, out);
    out.extend_from_slice(b"}\n");
}

/// The [`Renderer`] of `--format json`: the verdict as compact JSON and a newline (printed
/// without the newline, after its separator).
fn verdict_line(item: &Item, out: &mut Vec<u8>) {
    write_verdict(&item.verdict, out);
    out.push(b'\n');
}
