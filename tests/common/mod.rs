//! Helpers shared by the integration tests.

use std::path::Path;

/// Copies a folder recursively (a sample workspace into a temporary folder, to edit it).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (p, t) = (e.path(), to.join(e.file_name()));
        if p.is_dir() {
            copy_dir(&p, &t)
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}
