//! The floor of the validator path: read the whole input, split it into lines (or read every
//! `.json` file of a folder), `serde_json` parse each instance, validate it with one
//! pre-compiled `jsonschema` validator, count every error (`iter_errors`, not formatted: the
//! errors' locations are built by the validator, their messages are not). Nothing else.
//! Built with `lto = "fat"`, one codegen unit and verdict's allocator (mimalloc).
//!
//!   verdict-floor --schema S.json [--threads 1|2] [--parse-only] INPUT(.jsonl | folder)
//!
//! `--parse-only` stops after `serde_json::from_slice::<Value>`: the floor of the full pipeline
//! (what the capture records cost just to parse). Prints `instances invalid errors` on stdout.
use std::{fs, path::PathBuf, process::ExitCode};

use serde_json::Value;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut schema = None;
    let mut threads = 1usize;
    let mut parse_only = false;
    let mut input = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--schema" => schema = args.next(),
            "--threads" => threads = args.next().and_then(|t| t.parse().ok()).unwrap_or(1).max(1),
            "--parse-only" => parse_only = true,
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
                    let (mut invalid, mut bad_json) = (0usize, 0usize);
                    let mut errors = 0usize;
                    for raw in part {
                        let v: Value = match serde_json::from_slice(raw) {
                            Ok(v) => v,
                            Err(_) => {
                                bad_json += 1;
                                continue;
                            }
                        };
                        if let Some(val) = validator {
                            if !val.is_valid(&v) {
                                invalid += 1;
                                errors += val.iter_errors(&v).count();
                            }
                        }
                        std::hint::black_box(&v);
                    }
                    (invalid, bad_json, errors)
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
