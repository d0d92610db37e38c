//! `verdict feedback ID [WORKSPACE]`: the self-correction message for one capture.

use crate::cli::args::{FeedbackArgs, FeedbackFormat};
use crate::core::feedback::feedback;
use crate::core::workspace::{Workspace, find_root};
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `id` read as a path from the current folder to a capture file inside `root`, with an
/// optional `:LINE`: its workspace-relative source (`captures/log.jsonl:9`); `None` when it
/// names no file inside the workspace.
fn as_source(id: &str, root: &Path) -> Option<String> {
    let named = crate::core::record_ref::RecordRef::parse(id);
    let file = Path::new(&**named.file()).canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let rel = file.strip_prefix(&root).ok()?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    Some(crate::core::record_ref::RecordRef::new(rel, named.line()).to_string())
}

/// Runs `feedback`. Returns `Ok(false)` when no capture has that id (after printing why).
///
/// # Errors
/// The workspace cannot be opened; I/O errors writing the message.
pub fn run(args: &FeedbackArgs, out: &mut dyn Write) -> anyhow::Result<bool> {
    // without a WORKSPACE, a capture named by its path finds its workspace from there
    let named_file = PathBuf::from(&**crate::core::record_ref::RecordRef::parse(&args.id).file());
    let path = args.workspace.clone().unwrap_or_else(|| {
        if named_file.is_file() {
            named_file
        } else {
            PathBuf::from(".")
        }
    });
    if !path.exists() {
        anyhow::bail!("{}: no such file or folder", path.display());
    }
    let ws = Workspace::open(&find_root(&path))?;
    // a capture named by its path from here (`ws/captures/x.json`, `ws/captures/log.jsonl:9`)
    // is the same as its workspace-relative source
    let source = as_source(&args.id, &ws.root).unwrap_or_else(|| args.id.clone());
    let records: Vec<_> = ws
        .capture_files()
        .par_iter()
        .flat_map(|f| ws.read_file(f))
        .collect();
    let mut found: Vec<_> = records
        .par_iter()
        .filter(|r| {
            // an MCP capture's id starts with its file (`captures/s.jsonl#5/result`) and is
            // not in its text
            let mcp = args
                .id
                .strip_prefix(&**r.source.file())
                .is_some_and(|rest| rest.starts_with('#'));
            mcp || r.source == source || r.text.as_ref().is_ok_and(|t| t.contains(args.id.as_str()))
        })
        .filter_map(|r| ws.evaluate(r))
        .filter(|ev| ev.verdict.id == args.id || ev.verdict.source == source)
        .collect();
    if found.len() > 1 {
        let sources: Vec<&str> = found.iter().map(|ev| ev.verdict.source.as_str()).collect();
        anyhow::bail!(
            "{} captures have the id {:?} ({}); name one by its source instead",
            found.len(),
            args.id,
            sources.join(", ")
        );
    }
    let Some(ev) = found.pop() else {
        let ids: Vec<String> = records
            .par_iter()
            .filter_map(|r| ws.check(r).map(|v| v.id))
            .collect();
        let hint = crate::core::hint::hint_for(&args.id, ids.iter().map(String::as_str))
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        anyhow::bail!(
            "no capture with id or source {:?} in {}{hint}",
            args.id,
            ws.root.display()
        );
    };
    let fb = feedback(&ws, &ev);
    match args.format {
        // the message quotes model text: on a terminal, never let it drive the terminal
        // (each line escaped, the line breaks kept); piped into a model loop, it is as is
        FeedbackFormat::Text if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            for line in fb.message.split('\n') {
                writeln!(out, "{}", crate::core::escape::for_terminal(line))?;
            }
        }
        FeedbackFormat::Text => writeln!(out, "{}", fb.message)?,
        FeedbackFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &fb)?;
            writeln!(out)?;
        }
    }
    Ok(true)
}
