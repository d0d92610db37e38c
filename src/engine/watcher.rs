//! The file watcher: notify + notify-debouncer-full on the workspace folder, recursive,
//! on the folder of each symlinked capture's target outside it, and on each folder above
//! the workspace, alone, for the ignore files the walk reads there.
//! It only says *which paths changed*; the [`crate::engine::session::Session`] decides what
//! to re-validate. Access events are dropped; a burst of saves arrives as one batch.

use notify_debouncer_full::notify::{ErrorKind, EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
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
    _debouncer: Arc<Mutex<Debounced>>,
}

type Debounced = Debouncer<notify_debouncer_full::notify::RecommendedWatcher, RecommendedCache>;

/// The folders watched when the workspace holds a folder that cannot be watched (mode 000:
/// the OS refuses to watch a folder it will not list), so one such folder never stops the
/// watch (`docs/commands.md#unreadable-files-and-folders`).
#[derive(Default)]
struct Tree {
    /// Watched with everything below them (new subfolders too).
    deep: BTreeSet<PathBuf>,
    /// Watched alone: a folder below them could not be watched.
    shallow: BTreeSet<PathBuf>,
    /// Not watched: the OS refused (read again when a change names them).
    unwatched: BTreeSet<PathBuf>,
}

fn refused(e: &notify_debouncer_full::notify::Error) -> bool {
    matches!(&e.kind, ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied)
}

/// Watches `dir` and everything below it: recursively if the OS lets it, else `dir` alone
/// and each subfolder the same way, a folder it refuses recorded as unwatched.
///
/// # Errors
/// Another watch error than a refusal (the inotify watch limit, `dir` gone).
fn watch_tree(
    d: &mut Debounced,
    dir: &Path,
    tree: &mut Tree,
) -> notify_debouncer_full::notify::Result<()> {
    tree.unwatched.remove(dir);
    match d.watch(dir, RecursiveMode::Recursive) {
        Ok(()) => {
            tree.deep.insert(dir.to_path_buf());
            return Ok(());
        }
        Err(e) if refused(&e) => {}
        Err(e) => return Err(e),
    }
    // notify keeps the watches it added before the refusal
    let _ = d.unwatch(dir);
    match d.watch(dir, RecursiveMode::NonRecursive) {
        Ok(()) => {}
        Err(e) if refused(&e) => {
            tree.unwatched.insert(dir.to_path_buf());
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    tree.shallow.insert(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        // a symlinked folder is not followed (as the recursive watch does not follow it)
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            watch_tree(d, &e.path(), tree)?;
        }
    }
    Ok(())
}

/// After a batch: a folder the OS refused that a change names (made readable, say) and a
/// new folder in a folder watched alone are watched now. A folder a change names that
/// cannot be listed now (one moved or made in mode 000 below a folder watched
/// recursively: the platform watcher skips it without a word) is recorded as refused, so
/// the change that makes it readable (`chmod 755`, which names it) watches it.
fn extend(d: &Mutex<Debounced>, tree: &mut Tree, paths: &[PathBuf]) {
    for p in paths {
        if !tree.unwatched.contains(p)
            && p.is_dir()
            && std::fs::read_dir(p).is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
        {
            tree.unwatched.insert(p.clone());
            continue;
        }
        if tree.shallow.is_empty() && tree.unwatched.is_empty() {
            continue;
        }
        let new = p.parent().is_some_and(|up| tree.shallow.contains(up))
            && !tree.shallow.contains(p)
            && !tree.deep.contains(p);
        if (new || tree.unwatched.contains(p)) && p.is_dir() {
            let mut d = d.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let _ = watch_tree(&mut d, p, tree);
        }
    }
}

/// The folders outside the workspace that hold a symlinked capture's target: each watched
/// alone, so an edit of the target (in place, or saved by a rename in its folder) is a
/// change the session maps back to the link (`docs/commands.md#watch`: a capture that is a
/// symbolic link is read again when its target changes). A target inside the workspace is
/// watched with it.
struct Outside {
    /// The workspace folder, resolved.
    root: PathBuf,
    /// The folders watched.
    watched: BTreeSet<PathBuf>,
}

impl Outside {
    /// Watches the folder of `link`'s target when `link` is a symbolic link to a file
    /// outside the workspace.
    fn follow(&mut self, d: &mut Debounced, link: &Path) {
        if !std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
            return;
        }
        let Ok(target) = link.canonicalize() else {
            return;
        };
        if target.starts_with(&self.root) || !target.is_file() {
            return;
        }
        if let Some(folder) = target.parent()
            && !self.watched.contains(folder)
            && d.watch(folder, RecursiveMode::NonRecursive).is_ok()
        {
            self.watched.insert(folder.to_path_buf());
        }
    }

    /// [`Outside::follow`] of every symbolic link below `dir` (symlinked folders are not
    /// entered, as the watch does not enter them).
    fn follow_all(&mut self, d: &mut Debounced, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_symlink() => self.follow(d, &e.path()),
                Ok(t) if t.is_dir() => self.follow_all(d, &e.path()),
                _ => {}
            }
        }
    }
}

/// The folders above the workspace, each watched alone for the ignore files the walk reads
/// there (`docs/commands.md#check`, the folder walk: a `.gitignore` or `.ignore` in a folder above
/// the walked one counts, as in ripgrep): the walk reads those of every folder above the
/// workspace's (resolved), up to the file system's root. A change there to anything but an
/// ignore file is dropped (a busy `/tmp` next to the workspace is no batch).
struct Above {
    /// The folders watched.
    watched: BTreeSet<PathBuf>,
}

impl Above {
    /// Watches every folder above `root` (resolved) that the OS lets this process watch.
    fn watch(d: &mut Debounced, root: &Path) -> Above {
        let mut watched = BTreeSet::new();
        let resolved = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        for up in resolved.ancestors().skip(1) {
            if d.watch(up, RecursiveMode::NonRecursive).is_ok() {
                watched.insert(up.to_path_buf());
            }
        }
        Above { watched }
    }

    /// Whether a changed path is one this watch of the folders above reports for nothing:
    /// in one of them (not the workspace, `root`, or below it), not an ignore file, and not in a
    /// folder [`Outside`] watches for a symlinked capture's target.
    fn drops(&self, root: &[PathBuf], outside: &Outside, p: &Path) -> bool {
        let Some(folder) = p.parent() else {
            return false;
        };
        if !self.watched.contains(folder)
            || outside.watched.contains(folder)
            || root.iter().any(|r| p.starts_with(r))
        {
            return false;
        }
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        !crate::core::workspace::IGNORE_FILES.contains(&name)
    }
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

/// Starts watching `root` recursively; batches go to `tx`. A folder below `root` that the
/// OS refuses to watch (mode 000) is left out, and its neighbours watched, rather than
/// failing the watch; it is watched once a change names it and it can be (`check` and the
/// session give it its row). Each folder above `root` is watched alone, and only a change
/// to its `.gitignore` or `.ignore` reported (the walk reads them: the session walks the
/// workspace again).
///
/// # Errors
/// The platform watcher cannot be created or cannot watch `root` (the inotify watch limit,
/// `root` gone or refused).
pub fn watch(
    root: &Path,
    debounce: Duration,
    tx: Sender<WatchEvent>,
) -> notify_debouncer_full::notify::Result<Watcher> {
    let (btx, brx) = std::sync::mpsc::channel::<WatchEvent>();
    let debouncer = new_debouncer(debounce, None, move |res: DebounceEventResult| {
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
        let _ = btx.send(event);
    })?;
    let debouncer = Arc::new(Mutex::new(debouncer));
    // absolute as notify makes it (joined to the working folder, not resolved), so the
    // folders below compare equal to the paths its events name
    let root = &if root.is_absolute() {
        root.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(notify_debouncer_full::notify::Error::io)?
            .join(root)
    };
    let mut tree = Tree::default();
    let above: Above;
    let mut outside = Outside {
        root: root.canonicalize().unwrap_or_else(|_| root.clone()),
        watched: BTreeSet::new(),
    };
    {
        let mut d = debouncer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        watch_tree(&mut d, root, &mut tree)?;
        outside.follow_all(&mut d, root);
        above = Above::watch(&mut d, root);
        if tree.unwatched.contains(root) {
            return Err(
                notify_debouncer_full::notify::Error::io(std::io::Error::from(
                    std::io::ErrorKind::PermissionDenied,
                ))
                .add_path(root.to_path_buf()),
            );
        }
    }
    // batches pass through here, which watches new folders below folders watched alone (the
    // debouncer's thread must not wait on the watcher) and drops what the folders above
    // report besides their ignore files
    let weak = Arc::downgrade(&debouncer);
    let roots = [root.clone(), outside.root.clone()];
    std::thread::Builder::new()
        .name("verdict-watch-tree".into())
        .spawn(move || {
            for mut event in brx {
                if let WatchEvent::Changed(paths) = &mut event {
                    paths.retain(|p| !above.drops(&roots, &outside, p));
                    if paths.is_empty() {
                        continue;
                    }
                }
                if let (WatchEvent::Changed(paths), Some(d)) = (&event, weak.upgrade()) {
                    extend(&d, &mut tree, paths);
                    // a link made or pointed elsewhere: its target's folder is watched too
                    let mut d = d.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    for p in paths {
                        outside.follow(&mut d, p);
                    }
                }
                if tx.send(event).is_err() {
                    break;
                }
            }
        })
        .map_err(notify_debouncer_full::notify::Error::io)?;
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
