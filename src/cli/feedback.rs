//! `verdict feedback ID [WORKSPACE]`: the self-correction message for one capture.

use crate::cli::args::{FeedbackArgs, FeedbackFormat};
use crate::core::escape;
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
        anyhow::bail!("{}: no such file or folder", escape::path(&path));
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
    // a quick text match first; an id JSON would write escaped (a control character, a
    // quote, a backslash, non-ASCII) may not be in the text as typed: those skip it
    let plain_id = args.id.is_ascii()
        && !args
            .id
            .chars()
            .any(|c| c.is_ascii_control() || c == '"' || c == '\\');
    let record = crate::core::record_ref::RecordRef::parse(&source).with_part(None);
    let mut found: Vec<_> = records
        .par_iter()
        .filter(|r| {
            // an MCP capture's id starts with its file (`captures/s.jsonl#5/result`) and is
            // not in its text
            let mcp = args
                .id
                .strip_prefix(&**r.source.file())
                .is_some_and(|rest| rest.starts_with('#'));
            // a part of a record of several captures (`log.jsonl:9#2`) is in its record
            mcp || r.source == source
                || r.source == record
                || !plain_id
                || r.text.as_ref().is_ok_and(|t| t.contains(args.id.as_str()))
        })
        .flat_map_iter(|r| ws.evaluate_all(r))
        .filter(|ev| ev.verdict.id == args.id || ev.verdict.source == source)
        .collect();
    if found.len() > 1 {
        let sources: Vec<String> = found
            .iter()
            .map(|ev| escape::for_terminal(ev.verdict.source.as_str()).into_owned())
            .collect();
        anyhow::bail!(
            "{} captures have the id {} ({}); name one by its source instead",
            found.len(),
            escape::quoted(&args.id),
            sources.join(", ")
        );
    }
    let Some(ev) = found.pop() else {
        if records.is_empty() {
            anyhow::bail!(
                "no capture with id or source {} in {}: it holds no captures (searched {}); name the workspace: `verdict feedback ID WORKSPACE`",
                escape::quoted(&args.id),
                escape::path(&ws.root),
                crate::cli::check::searched_captures(std::slice::from_ref(&path))
            );
        }
        let ids: Vec<String> = records
            .par_iter()
            .flat_map_iter(|r| ws.check_all(r).into_iter().map(|v| v.id))
            .collect();
        // the guess is a capture's id: model or log text, escaped like any other
        let hint = crate::core::hint::hint_for(&args.id, ids.iter().map(String::as_str))
            .map(|h| format!(" ({})", escape::for_terminal(&h)))
            .unwrap_or_default();
        anyhow::bail!(
            "no capture with id or source {} in {}{hint}",
            escape::quoted(&args.id),
            escape::path(&ws.root)
        );
    };
    let fb = feedback(&ws, &ev);
    // the note on a repair is for the loop's author, never re-injected: on stderr beside the
    // text message (`docs/repairs.md#feedback`); in the JSON, its own key
    if let (FeedbackFormat::Text, Some(advice)) = (&args.format, &fb.repair_advice) {
        eprintln!("{}", escape::for_terminal(advice));
    }
    match args.format {
        // the message quotes model text: on a terminal, never let it drive the terminal
        // (each line escaped, the line breaks kept); piped into a model loop, it is as is
        FeedbackFormat::Text if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            for line in fb.message.split('\n') {
                writeln!(out, "{}", escape::for_terminal(line))?;
            }
        }
        FeedbackFormat::Text => writeln!(out, "{}", fb.message)?,
        FeedbackFormat::Json => {
            // DEL and the C1 controls escaped too (`docs/commands.md#untrusted-text`)
            let mut json = escape::JsonSafe::new(&mut *out);
            serde_json::to_writer_pretty(&mut json, &fb)?;
            writeln!(json)?;
        }
    }
    Ok(true)
}
