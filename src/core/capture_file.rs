//! Capture files by name, and the bytes of one (`docs/capture-record.md#capture-files`):
//! which files are read and how ([`FileKind::of`]), the byte stream of one file ([`open`]),
//! decompressed through the decoder as it is read when the name ends in `.gz` or `.zst`
//! (never inflated whole into memory), and a `.sse` file as a capture ([`sse_capture`]).
//!
//! A compressed file is read as the file its name has without `.gz` / `.zst` would be:
//! `log.jsonl.gz` is a log, `one.json.zst` one record, `stream.sse.gz` a captured stream.
//! A corrupt or cut-short archive ends the file's stream with one error ([`StreamError`])
//! naming the file and where it broke; everything read before it still counts.

use crate::core::capture::{Capture, open_sized};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

/// How a capture file holds its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One capture record (`.json`).
    Record,
    /// One capture record per line (`.jsonl`, `.ndjson`, `.jsonl.out`).
    Log,
    /// One captured stream of SSE text, a capture of its own (`.sse`).
    Sse,
}

/// How a capture file is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// As is.
    None,
    /// gzip (`.gz`, RFC 1952; a file of several members is read as their concatenation, as
    /// `gzip -d` does).
    Gzip,
    /// Zstandard (`.zst`, RFC 8878; several frames are read one after the other).
    Zstd,
}

impl Compression {
    /// The format's name in messages: `gzip`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "plain",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// A capture file's layout and compression, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKind {
    /// How it holds its records.
    pub layout: Layout,
    /// How it is stored.
    pub compression: Compression,
}

/// The name endings of capture files, after any `.gz` / `.zst`, and their layouts.
const SUFFIXES: [(&str, Layout); 5] = [
    (".json", Layout::Record),
    (".jsonl", Layout::Log),
    (".ndjson", Layout::Log),
    // Bedrock batch inference output files (`input.jsonl.out`)
    (".jsonl.out", Layout::Log),
    (".sse", Layout::Sse),
];

impl FileKind {
    /// The kind of a capture file by its name: `.json`, `.jsonl`, `.ndjson`, `.jsonl.out` or
    /// `.sse`, each optionally followed by `.gz` or `.zst` (`log.jsonl.gz`). `None` for any
    /// other name, and for a name that is only the ending (`.json`, a hidden file with no
    /// name before it, as [`Path::extension`] sees it). Case-sensitive.
    pub fn of(path: &Path) -> Option<FileKind> {
        let name = path.file_name()?.as_encoded_bytes();
        let (name, compression) = if let Some(n) = name.strip_suffix(b".gz") {
            (n, Compression::Gzip)
        } else if let Some(n) = name.strip_suffix(b".zst") {
            (n, Compression::Zstd)
        } else {
            (name, Compression::None)
        };
        SUFFIXES.iter().find_map(|(suffix, layout)| {
            (name.len() > suffix.len() && name.ends_with(suffix.as_bytes())).then_some(FileKind {
                layout: *layout,
                compression,
            })
        })
    }

    /// [`FileKind::of`], else a plain file of one record (what a file named on the command
    /// line is read as whatever its name).
    pub fn or_record(path: &Path) -> FileKind {
        FileKind::of(path).unwrap_or(FileKind {
            layout: Layout::Record,
            compression: Compression::None,
        })
    }
}

/// Why a capture file's stream stopped before its end: a corrupt or cut-short archive, or
/// a record that inflates past `max_capture_bytes`. Carried inside the [`std::io::Error`]
/// the stream returns (see [`StreamError::of`]); its message names the file and the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StreamError {
    /// What happened, naming the file and the byte offsets.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl StreamError {
    /// The stream error an I/O error of [`open`]'s reader carries, if it is one.
    pub fn of(e: &std::io::Error) -> Option<&StreamError> {
        e.get_ref()?.downcast_ref::<StreamError>()
    }
}

/// A buffered reader that counts the bytes its reader consumed: where a decoder is in the
/// compressed file.
struct Counting<R> {
    inner: R,
    consumed: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.consumed += n as u64;
        self.inner.consume(n);
    }
}

type Compressed = Counting<BufReader<std::io::Take<std::fs::File>>>;

enum Decoder {
    Gzip(Box<flate2::bufread::MultiGzDecoder<Compressed>>),
    Zstd(zstd::stream::read::Decoder<'static, Compressed>),
}

impl Decoder {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Decoder::Gzip(d) => d.read(buf),
            Decoder::Zstd(d) => d.read(buf),
        }
    }

    /// Compressed bytes the decoder has consumed.
    fn consumed(&self) -> u64 {
        match self {
            Decoder::Gzip(d) => d.get_ref().consumed,
            Decoder::Zstd(d) => d.get_ref().consumed,
        }
    }
}

/// A compressed file's decompressed stream, with the offsets an error names, and (for a
/// log) the guard that stops a line inflating past `max_capture_bytes`.
struct Inflate {
    decoder: Decoder,
    compression: Compression,
    rel: Arc<str>,
    /// The compressed file's size, when known.
    size: Option<u64>,
    /// Decompressed bytes handed out.
    out: u64,
    /// A log's `max_capture_bytes`, and the bytes handed out since the last newline (at most
    /// `max_capture_bytes + 1`: [`over_limit`]).
    line_max: Option<u64>,
    since_newline: u64,
    /// Once the stream failed, every later read returns this.
    failed: Option<StreamError>,
}

impl Inflate {
    fn fail(&mut self, e: StreamError) -> std::io::Error {
        self.failed = Some(e.clone());
        std::io::Error::other(e)
    }

    /// The error of a decoder that failed: cut short when it had consumed the whole file,
    /// else corrupt where it was.
    fn broken(&self, e: &std::io::Error) -> StreamError {
        let (rel, name, at, out) = (
            &self.rel,
            self.compression.name(),
            self.decoder.consumed(),
            self.out,
        );
        let place = match self.size {
            Some(size) if at >= size => format!(
                "is cut short: the file ends at compressed byte {size} inside the stream \
                 (decompressed byte {out})"
            ),
            Some(size) => {
                format!("is corrupt at compressed byte {at} of {size} (decompressed byte {out})")
            }
            None => format!("is corrupt at compressed byte {at} (decompressed byte {out})"),
        };
        let before = if self.line_max.is_some() {
            "; the records before it were read"
        } else {
            ""
        };
        let tool = match self.compression {
            Compression::Zstd => "zstd -t",
            _ => "gzip -t",
        };
        StreamError {
            message: format!("{rel}: the {name} data {place}: {e}{before}"),
            hint: Some(format!(
                "`{tool} FILE` tells whether an archive is whole; re-create or re-download it"
            )),
        }
    }
}

impl Read for Inflate {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(e) = &self.failed {
            return Err(std::io::Error::other(e.clone()));
        }
        let n = loop {
            match self.decoder.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let broken = self.broken(&e);
                    return Err(self.fail(broken));
                }
                Ok(n) => break n,
            }
        };
        let mut n = n;
        if let Some(max) = self.line_max {
            // a line whose record is over the limit stops the file here, whatever its length:
            // skipping it would mean inflating all of it, and a small archive can inflate
            // without end
            match over_limit(&buf[..n], self.since_newline, max) {
                Ok(since) => self.since_newline = since,
                Err(cut) => {
                    // hand out the line up to the byte that takes it past the limit (its
                    // record is then seen unfinished), then fail
                    n = cut;
                    let bomb = StreamError {
                        message: format!(
                            "{}: a record inflates past max_capture_bytes ({max} bytes) at \
                             decompressed byte {}; the rest of the {} file is not read",
                            self.rel,
                            self.out + n as u64,
                            self.compression.name(),
                        ),
                        hint: Some(
                            "raise max_capture_bytes in verdict.toml if records this large are \
                             expected"
                                .into(),
                        ),
                    };
                    self.failed = Some(bomb);
                }
            }
        }
        self.out += n as u64;
        Ok(n)
    }
}

/// Where a line of a log's decompressed `chunk` first holds a record over `max` bytes (the
/// line without its `\n` or `\r\n`, as the line readers of `crate::core::capture` test
/// it), `since` bytes of its first line having come before: `Err` with the length of the
/// chunk up to and including the byte that shows it (the line's byte `max + 1`, or
/// `max + 2` when byte `max + 1` is a `\r`, which a `\n` may still make its line ending),
/// else `Ok` with the bytes of its last line so far (at most `max + 1`). Every line of the
/// chunk is tested, so which lines stop the file does not depend on where its reads end.
fn over_limit(chunk: &[u8], since: u64, max: u64) -> Result<u64, usize> {
    let (mut since, mut start) = (since, 0);
    loop {
        let end = memchr::memchr(b'\n', &chunk[start..]).map(|i| start + i);
        let line = &chunk[start..end.unwrap_or(chunk.len())];
        if since.saturating_add(line.len() as u64) > max {
            if since > max {
                // its byte `max + 1` was a `\r` of an earlier chunk: a byte that is not its
                // `\n` follows it
                if !line.is_empty() {
                    return Err(start + 1);
                }
            } else {
                let i = (max - since) as usize;
                if line[i] != b'\r' {
                    return Err(start + i + 1);
                }
                if line.len() > i + 1 {
                    return Err(start + i + 2);
                }
            }
        }
        match end {
            Some(e) => (since, start) = (0, e + 1),
            None => return Ok(since + line.len() as u64),
        }
    }
}

/// Opens a capture file's byte stream: the file itself, or for a `.gz` / `.zst` file its
/// decompressed content, inflated as it is read. `rel` names the file in errors. For a
/// compressed log give `line_max` (`max_capture_bytes`): a line whose record is over it,
/// however little, ends the stream with a [`StreamError`] at the byte that takes it past
/// (`over_limit`) instead of being inflated to its end. A corrupt or
/// cut-short archive ends the stream with a [`StreamError`] naming the compressed byte the
/// decoder had reached (of the file's size) and the decompressed byte (exact: everything
/// before it was handed out). Only regular files are opened, and read no further than their size when opened
/// ([`open_sized`]). Also
/// returns the file's metadata, when it can be read.
///
/// # Errors
/// The file cannot be opened or is not a regular file, or the decoder cannot start (the
/// message says why).
pub fn open(
    path: &Path,
    rel: &str,
    compression: Compression,
    line_max: Option<u64>,
) -> Result<(Box<dyn Read + Send>, Option<std::fs::Metadata>), String> {
    let (file, meta) = open_sized(path)?;
    let size = meta.as_ref().map(std::fs::Metadata::len);
    let input = Counting {
        inner: BufReader::with_capacity(64 * 1024, file),
        consumed: 0,
    };
    let decoder = match compression {
        Compression::None => return Ok((Box::new(input.inner.into_inner()), meta)),
        Compression::Gzip => Decoder::Gzip(Box::new(flate2::bufread::MultiGzDecoder::new(input))),
        Compression::Zstd => Decoder::Zstd(
            zstd::stream::read::Decoder::with_buffer(input)
                .map_err(|e| format!("cannot start the zstd decoder: {e}"))?,
        ),
    };
    let inflate = Inflate {
        decoder,
        compression,
        rel: rel.into(),
        size,
        out: 0,
        line_max,
        since_newline: 0,
        failed: None,
    };
    Ok((Box::new(inflate), meta))
}

/// A `.sse` file as a capture: its text is the `response` (SSE lines, read by the stream
/// adapter, which names the provider from the first event: `docs/record-shapes.md#streams`),
/// with nothing else set. Its id is the response id its first event carries
/// ([`sse_response_id`]), else `default_id` (the file's path).
pub fn sse_capture(text: &str, default_id: &str) -> Capture {
    crate::core::shape::bare(
        Value::String(text.to_string()),
        sse_response_id(text).unwrap_or_else(|| default_id.to_string()),
    )
}

/// The response id of a stream's first event (its first `data:` field that is a JSON
/// object), from each provider's streaming reference: Anthropic `message_start`'s
/// `message.id`, OpenAI Responses `response.created`'s `response.id`, an OpenAI Chat
/// chunk's `id`, a Gemini chunk's `responseId`. `None` when the first event has none (or
/// is not strict JSON, read as the parse stage reads it: then the stream adapter makes the
/// capture `INVALID_CAPTURE`, named by its source). Only the first event is read: SSE text per the WHATWG "event stream
/// interpretation" (lines end in LF, CRLF or CR; `data:` lines of one event join with LF; a
/// blank line ends the event).
pub fn sse_response_id(text: &str) -> Option<String> {
    let lines = text
        .split('\n')
        .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'));
    let mut data: Option<String> = None;
    for line in lines {
        if line.is_empty() {
            if data.is_some() {
                break;
            }
            continue;
        }
        if let Some(v) = line.strip_prefix("data:") {
            let v = v.strip_prefix(' ').unwrap_or(v);
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(v);
                }
                None => data = Some(v.to_string()),
            }
        }
    }
    let first: Value = crate::core::stage::parse::from_str_no_duplicates(&data?).ok()?;
    crate::core::shape::event_response_id(&first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn zstd(bytes: &[u8]) -> Vec<u8> {
        zstd::encode_all(bytes, 3).unwrap()
    }

    /// Everything the stream of `bytes` (stored as `name`) gives, and how it ends.
    fn drain(name: &str, bytes: &[u8], line_max: Option<u64>) -> (Vec<u8>, Option<String>) {
        drain_by(name, bytes, line_max, 1000)
    }

    /// [`drain`], reading at most `read` bytes at a time.
    fn drain_by(
        name: &str,
        bytes: &[u8],
        line_max: Option<u64>,
        read: usize,
    ) -> (Vec<u8>, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let kind = FileKind::of(&path).unwrap();
        let (mut r, _) = open(&path, name, kind.compression, line_max).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0u8; read];
        loop {
            match r.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => {
                    let s = StreamError::of(&e).expect("a stream error").clone();
                    // it stays failed
                    let again = r.read(&mut buf).unwrap_err();
                    assert_eq!(StreamError::of(&again), Some(&s));
                    return (out, Some(s.message));
                }
            }
        }
    }

    #[test]
    fn kinds_by_name() {
        use Compression::{Gzip, None as Plain, Zstd};
        use Layout::{Log, Record, Sse};
        let cases = [
            ("a.json", Some((Record, Plain))),
            ("a.json.gz", Some((Record, Gzip))),
            ("a.jsonl", Some((Log, Plain))),
            ("a.ndjson.zst", Some((Log, Zstd))),
            ("batch.jsonl.out", Some((Log, Plain))),
            ("batch.jsonl.out.gz", Some((Log, Gzip))),
            ("s.sse", Some((Sse, Plain))),
            ("s.sse.zst", Some((Sse, Zstd))),
            (".json", None),
            (".json.gz", None),
            ("a.gz", None),
            ("a.out", None),
            ("a.json.gz.bak", None),
            ("a.json.gz.gz", None),
            ("a.JSON", None),
            ("a.txt", None),
        ];
        for (name, want) in cases {
            let got = FileKind::of(Path::new(name)).map(|k| (k.layout, k.compression));
            assert_eq!(got, want, "{name}");
        }
        assert_eq!(
            FileKind::or_record(Path::new("notes.txt")),
            FileKind {
                layout: Record,
                compression: Plain
            }
        );
    }

    #[test]
    fn several_members_and_frames_read_as_one_stream() {
        let mut gz = gzip(b"{\"a\":1}\n");
        gz.extend(gzip(b"{\"a\":2}\n"));
        assert_eq!(
            drain("a.jsonl.gz", &gz, Some(64)),
            (b"{\"a\":1}\n{\"a\":2}\n".to_vec(), None)
        );
        let mut zs = zstd(b"x\n");
        zs.extend(zstd(b"y\n"));
        assert_eq!(
            drain("a.jsonl.zst", &zs, Some(64)),
            (b"x\ny\n".to_vec(), None)
        );
        assert_eq!(drain("a.json", b"as is", None), (b"as is".to_vec(), None));
    }

    #[test]
    fn a_broken_archive_names_where_it_broke() {
        let text: Vec<u8> = (0..2000)
            .flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes())
            .collect();
        let gz = gzip(&text);
        let cut = &gz[..gz.len() - 4];
        let (out, err) = drain("a.jsonl.gz", cut, Some(1024));
        // the deflate data is whole, only the trailer's size field is missing
        assert_eq!(out, text);
        assert_eq!(
            err.unwrap(),
            format!(
                "a.jsonl.gz: the gzip data is cut short: the file ends at compressed byte {} \
                 inside the stream (decompressed byte {}): unexpected end of file; the records \
                 before it were read",
                cut.len(),
                text.len()
            )
        );
        let mut bad = gz.clone();
        bad[40] ^= 0xff;
        let (out, err) = drain("a.json.gz", &bad, None);
        assert!(out.is_empty());
        assert_eq!(
            err.unwrap(),
            format!(
                "a.json.gz: the gzip data is corrupt at compressed byte 45 of {} (decompressed \
                 byte 0): corrupt deflate stream",
                gz.len()
            )
        );
        let (_, err) = drain("a.jsonl.zst", b"not zstd", Some(1024));
        assert_eq!(
            err.unwrap(),
            "a.jsonl.zst: the zstd data is corrupt at compressed byte 0 of 8 (decompressed byte \
             0): Unknown frame descriptor; the records before it were read"
        );
        let zs = zstd(&text);
        let (_, err) = drain("a.jsonl.zst", &zs[..zs.len() / 2], Some(1024));
        assert_eq!(
            err.unwrap(),
            format!(
                "a.jsonl.zst: the zstd data is cut short: the file ends at compressed byte {} \
                 inside the stream (decompressed byte 0): incomplete frame; the records before \
                 it were read",
                zs.len() / 2
            )
        );
    }

    #[test]
    fn a_line_that_inflates_past_the_limit_stops_the_stream() {
        // 16 MiB of one line after a short one: kilobytes on disk
        let mut big = b"{\"a\":1}\n".to_vec();
        big.resize(16 << 20, b'x');
        for (name, packed) in [("b.jsonl.gz", gzip(&big)), ("b.jsonl.zst", zstd(&big))] {
            assert!(packed.len() < 64 << 10, "{name}: {}", packed.len());
            let (out, err) = drain(name, &packed, Some(1000));
            // handed out: the first line, then the long one up to its byte 1001
            assert_eq!(out.len(), 8 + 1001, "{name}");
            let format = if name.ends_with("gz") { "gzip" } else { "zstd" };
            assert_eq!(
                err.unwrap(),
                format!(
                    "{name}: a record inflates past max_capture_bytes (1000 bytes) at \
                     decompressed byte 1009; the rest of the {format} file is not read"
                )
            );
        }
        // lines up to the limit pass
        let lines: Vec<u8> = std::iter::repeat_n(b"0123456789\n".as_slice(), 5000)
            .flatten()
            .copied()
            .collect();
        assert_eq!(drain("l.jsonl.gz", &gzip(&lines), Some(10)), (lines, None));
    }

    /// Every line whose record (the line without its `\n` or `\r\n`) is over the limit
    /// stops a compressed log's stream, however short it is and wherever the reads fall: it
    /// is handed out up to the byte that takes its record past the limit. A record of the
    /// limit passes with either ending, and so does one that a `\r` follows at the limit.
    #[test]
    fn every_line_over_the_limit_stops_the_stream_wherever_the_reads_fall() {
        let max = 10usize;
        let ok = "{\"a\":1}\r\n";
        let cases: [(String, Option<usize>); 6] = [
            (
                format!("{}\n{}\r\n", "x".repeat(max), "y".repeat(max)),
                None,
            ),
            (format!("{}\r\n", "x".repeat(max + 1)), Some(max + 1)),
            (format!("{}\n", "x".repeat(max + 1)), Some(max + 1)),
            (format!("{}\r\r\n", "x".repeat(max)), Some(max + 2)),
            (
                format!("{}\r{}\n", "x".repeat(max), "x".repeat(50)),
                Some(max + 2),
            ),
            (format!("{}\n", "x".repeat(max + 200)), Some(max + 1)),
        ];
        for (line, cut) in cases {
            let text = format!("{ok}{line}{ok}");
            let want = match cut {
                None => (text.clone().into_bytes(), None),
                Some(cut) => (
                    format!("{ok}{}", &line[..cut]).into_bytes(),
                    Some(format!(
                        "a.jsonl.gz: a record inflates past max_capture_bytes ({max} bytes) at \
                         decompressed byte {}; the rest of the gzip file is not read",
                        ok.len() + cut
                    )),
                ),
            };
            for read in [1, 2, 3, 7, 11, 12, 13, 1000] {
                let got = drain_by("a.jsonl.gz", &gzip(text.as_bytes()), Some(max as u64), read);
                assert_eq!(got, want, "{line:?}, reads of {read}");
            }
        }
    }

    #[test]
    fn an_sse_stream_is_named_by_its_first_event() {
        let cases = [
            (
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n",
                Some("msg_1"),
            ),
            (
                "event: response.created\r\ndata: {\"type\":\"response.created\",\r\ndata: \"response\":{\"id\":\"resp_2\"}}\r\n\r\n",
                Some("resp_2"),
            ),
            (
                ": keep-alive\n\ndata: {\"id\":\"chatcmpl-3\",\"object\":\"chat.completion.chunk\"}\n\ndata: {\"id\":\"other\"}\n\n",
                Some("chatcmpl-3"),
            ),
            (
                "data: {\"candidates\":[],\"responseId\":\"g4\"}\r\r",
                Some("g4"),
            ),
            // no id, not JSON, no data at all
            (
                "data: {\"type\":\"ping\"}\n\ndata: {\"id\":\"late\"}\n\n",
                None,
            ),
            ("data: {\"id\":\n\n", None),
            ("data: [DONE]\n\n", None),
            ("event: x\n\n", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(sse_response_id(text).as_deref(), want, "{text:?}");
        }
        let c = sse_capture("data: {\"id\":\"\"}\n\n", "captures/s.sse");
        assert_eq!(c.id, "captures/s.sse");
        assert_eq!(
            c.payload,
            crate::core::capture::Payload::Response(Value::String(
                "data: {\"id\":\"\"}\n\n".into()
            ))
        );
    }
}
