//! The file watcher: notify + notify-debouncer-full on the workspace folder, recursive.
//! It only says *which paths changed*; the [`crate::engine::session::Session`] decides what
//! to re-validate. Access events are dropped; a burst of saves arrives as one batch.

use notify_debouncer_full::notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// Default debounce: saves within this window arrive as one batch.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(200);

/// One debounced batch of changed paths (absolute), or a watcher error message.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent {
    /// Files or folders that were created, modified, renamed or removed.
    Changed(Vec<PathBuf>),
    /// The watcher reported an error (for example, the inotify watch limit).
    Error(String),
}

/// A running watcher; dropping it stops watching.
pub struct Watcher {
    _debouncer: Debouncer<notify_debouncer_full::notify::RecommendedWatcher, RecommendedCache>,
}

/// Whether a path can matter to a workspace: a capture, schema, rules or config file, or a
/// folder, whatever its name (`captures/v1.2/`: a new folder is rescanned). Editor swap and
/// temp files are ignored; a path without an extension is passed on (a file may have
/// replaced a capture folder). A symlinked capture's target is relevant by its own name (a
/// capture file name), wherever it is: the session maps it to the link.
pub fn relevant(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.starts_with(".#")
        || name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".tmp")
    {
        return false;
    }
    // every capture file name (compressed, `.sse` and `.jsonl.out` included), schemas too
    if crate::core::capture_file::FileKind::of(path).is_some() {
        return true;
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => true,
        // a folder may have dots in its name (`captures/2026.11.28/`, `captures/v1.2/`)
        Some(_) => path.is_dir(),
        // a folder, or a file that may have replaced one (its captures go)
        None => true,
    }
}

/// Starts watching `root` recursively; batches go to `tx`.
///
/// # Errors
/// The platform watcher cannot be created or cannot watch `root`.
pub fn watch(
    root: &Path,
    debounce: Duration,
    tx: Sender<WatchEvent>,
) -> notify_debouncer_full::notify::Result<Watcher> {
    let mut debouncer = new_debouncer(debounce, None, move |res: DebounceEventResult| {
        let event = match res {
            Ok(events) => {
                let mut paths: Vec<PathBuf> = events
                    .into_iter()
                    .filter(|e| !matches!(e.event.kind, EventKind::Access(_)))
                    .flat_map(|e| e.event.paths)
                    .filter(|p| relevant(p) || !p.exists())
                    .collect();
                paths.sort();
                paths.dedup();
                if paths.is_empty() {
                    return;
                }
                WatchEvent::Changed(paths)
            }
            Err(errors) => WatchEvent::Error(
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        };
        let _ = tx.send(event);
    })?;
    debouncer.watch(root, RecursiveMode::Recursive)?;
    Ok(Watcher {
        _debouncer: debouncer,
    })
}

#[cfg(test)]
mod tests {
    use super::relevant;
    use std::path::Path;

    #[test]
    fn capture_schema_and_config_files_are_relevant() {
        for name in [
            "a.json",
            "log.jsonl",
            "log.ndjson",
            "log.jsonl.gz",
            "log.ndjson.zst",
            "one.json.gz",
            "batch.jsonl.out",
            "s.sse",
            "s.sse.gz",
            "r.rules.toml",
            "verdict.toml",
        ] {
            assert!(relevant(Path::new(name)), "{name}");
        }
        for name in [
            "notes.txt",
            "a.gz",
            "log.jsonl.tmp",
            ".#a.json",
            "a.json~",
            "a.out",
        ] {
            assert!(!relevant(Path::new(name)), "{name}");
        }
    }
}
