//! The floor of the validator path: read the whole input, split it into lines (or read every
//! `.json` file of a folder), `serde_json` parse each instance, validate it with one
//! pre-compiled `jsonschema` validator, count every error (`iter_errors`, not formatted: the
//! errors' locations are built by the validator, their messages are not). Nothing else.
//! Built with `lto = "fat"`, one codegen unit and verdict's allocator (mimalloc).
//!
//!   verdict-floor --schema S.json [--threads 1|2] [--parse-only] INPUT(.jsonl | folder)
//!
//! `--parse-only` stops after `serde_json::from_slice::<Value>`: the floor of the full pipeline
//! (what the capture records cost just to parse). `--stream` reads a JSONL file in blocks of
//! 4 MiB (whole lines) handed to the threads and reused, instead of whole: no page fault per
//! page of the file (on some machines the whole read costs as much system time as the parse
//! costs user time; BENCHMARKS.md, Session 20). Prints `instances invalid errors` on stdout.
use std::io::Read;
use std::sync::{Mutex, mpsc};
use std::{fs, path::PathBuf, process::ExitCode};

use serde_json::Value;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut schema = None;
    let mut threads = 1usize;
    let mut parse_only = false;
    let mut stream = false;
    let mut input = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--schema" => schema = args.next(),
            "--threads" => threads = args.next().and_then(|t| t.parse().ok()).unwrap_or(1).max(1),
            "--parse-only" => parse_only = true,
            "--stream" => stream = true,
            _ => input = Some(PathBuf::from(a)),
        }
    }
    let Some(input) = input else {
        eprintln!("usage: verdict-floor --schema S.json [--threads N] [--parse-only] INPUT");
        return ExitCode::from(2);
    };
    let validator = if parse_only {
        None
    } else {
        let text = fs::read(schema.expect("--schema")).expect("read schema");
        let s: Value = serde_json::from_slice(&text).expect("schema json");
        Some(jsonschema::validator_for(&s).expect("compile schema"))
    };

    if stream && !input.is_dir() {
        let (n, invalid, bad_json, errors) = streamed(&input, threads, validator.as_ref());
        println!("instances={n} invalid={invalid} unparsable={bad_json} errors={errors}");
        return ExitCode::SUCCESS;
    }

    // The instances as byte slices: lines of one file, or whole files of a folder.
    let files: Vec<Vec<u8>>;
    let blob: Vec<u8>;
    let items: Vec<&[u8]> = if input.is_dir() {
        let mut paths: Vec<PathBuf> = fs::read_dir(&input)
            .expect("read dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        files = read_all(&paths, threads);
        files.iter().map(|f| f.as_slice()).collect()
    } else {
        blob = fs::read(&input).expect("read input");
        blob.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect()
    };

    let chunk = items.len().div_ceil(threads).max(1);
    let results: Vec<(usize, usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let validator = validator.as_ref();
                s.spawn(move || {
                    let mut counts = (0usize, 0usize, 0usize);
                    for raw in part {
                        check(raw, validator, &mut counts);
                    }
                    counts
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let invalid: usize = results.iter().map(|r| r.0).sum();
    let bad_json: usize = results.iter().map(|r| r.1).sum();
    let errors: usize = results.iter().map(|r| r.2).sum();
    println!("instances={} invalid={invalid} unparsable={bad_json} errors={errors}", items.len());
    ExitCode::SUCCESS
}

fn read_all(paths: &[PathBuf], threads: usize) -> Vec<Vec<u8>> {
    let chunk = paths.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let hs: Vec<_> = paths
            .chunks(chunk)
            .map(|p| s.spawn(move || p.iter().map(|p| fs::read(p).expect("read")).collect::<Vec<_>>()))
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// One instance: parsed, validated when there is a validator; `counts` is
/// `(invalid, unparsable, errors)`.
fn check(raw: &[u8], validator: Option<&jsonschema::Validator>, counts: &mut (usize, usize, usize)) {
    let v: Value = match serde_json::from_slice(raw) {
        Ok(v) => v,
        Err(_) => {
            counts.1 += 1;
            return;
        }
    };
    if let Some(val) = validator {
        if !val.is_valid(&v) {
            counts.0 += 1;
            counts.2 += val.iter_errors(&v).count();
        }
    }
    std::hint::black_box(&v);
}

/// `--stream`: the file read in blocks of whole lines by this thread, each block checked by
/// one of `threads` threads and its buffer handed back for the next read. Gives
/// `(instances, invalid, unparsable, errors)`.
fn streamed(
    input: &PathBuf,
    threads: usize,
    validator: Option<&jsonschema::Validator>,
) -> (usize, usize, usize, usize) {
    const BLOCK: usize = 4 << 20;
    let mut file = fs::File::open(input).expect("open input");
    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<u8>>(threads * 2);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    let full_rx = Mutex::new(full_rx);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (full_rx, empty_tx) = (&full_rx, empty_tx.clone());
                s.spawn(move || {
                    let mut counts = (0usize, 0usize, 0usize);
                    let mut n = 0usize;
                    loop {
                        let got = full_rx.lock().unwrap().recv();
                        let Ok(block) = got else { break };
                        for line in block.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                            n += 1;
                            check(line, validator, &mut counts);
                        }
                        let _ = empty_tx.send(block);
                    }
                    (n, counts)
                })
            })
            .collect();
        drop(empty_tx);
        // the bytes after the last newline of a read: the start of the next block
        let mut carry: Vec<u8> = Vec::new();
        loop {
            let mut buf = empty_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(BLOCK + BLOCK / 4));
            buf.clear();
            buf.extend_from_slice(&carry);
            carry.clear();
            let start = buf.len();
            buf.resize(start + BLOCK, 0);
            let mut filled = start;
            while filled < buf.len() {
                match file.read(&mut buf[filled..]).expect("read input") {
                    0 => break,
                    k => filled += k,
                }
            }
            buf.truncate(filled);
            let eof = filled < start + BLOCK;
            if !eof {
                match buf.iter().rposition(|&b| b == b'\n') {
                    Some(cut) => {
                        carry.extend_from_slice(&buf[cut + 1..]);
                        buf.truncate(cut + 1);
                    }
                    None => {
                        // a line longer than a block: keep reading it
                        carry = std::mem::take(&mut buf);
                        continue;
                    }
                }
            }
            if !buf.is_empty() {
                full_tx.send(buf).expect("a worker");
            }
            if eof {
                break;
            }
        }
        drop(full_tx);
        workers.into_iter().map(|h| h.join().unwrap()).fold((0, 0, 0, 0), |a, (n, c)| {
            (a.0 + n, a.1 + c.0, a.2 + c.1, a.3 + c.2)
        })
    })
}
