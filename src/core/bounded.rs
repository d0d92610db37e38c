//! Reading a whole file, bounded (`docs/verdicts.md#limits`): every file the program reads
//! whole that is not a capture (`verdict.toml`, schema files, rules files, the files `lint`
//! is given, the schema files of `review --old-schemas`, the TUI config, lint profiles) goes
//! through [`read_to_string`]. Captures and `[[join]]` files are streamed with the same
//! opening rules ([`crate::core::capture::open_regular`]) and `max_capture_bytes`.
//!
//! * Only a regular file is read (after symbolic links): a FIFO would block the open or the
//!   read for ever, a device such as `/dev/zero` or `/dev/urandom` never ends. It is opened
//!   non-blocking and checked with `fstat` before one byte is read.
//! * At most [`MAX_FILE_BYTES`] bytes are read, and no more than the size the file had
//!   when it was opened: a file that a writer keeps appending to is read up to that size.

use std::io::Read;
use std::path::Path;

/// The largest file [`read_to_string`] reads: 16 MiB. A larger config, schema or rules file
/// is an error naming the file and its size.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// There is no such file (the caller decides whether that is an error).
    #[error("no such file")]
    NotFound,
    /// A FIFO, socket, device or folder (after symbolic links).
    #[error("{0}")]
    NotRegular(String),
    /// Larger than the limit.
    #[error(
        "the file is {size} bytes, over the limit of {max} bytes for a config, schema or rules file"
    )]
    TooLarge {
        /// The file's size in bytes.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Not UTF-8 text.
    #[error("the file is not UTF-8 (invalid byte at offset {0})")]
    NotUtf8(usize),
    /// Any other I/O error, as the OS words it.
    #[error("{0}")]
    Io(String),
}

/// The bytes of the regular file at `path`, at most `max` bytes (see the module docs).
///
/// # Errors
/// [`ReadError`]: missing, not a regular file, larger than `max`, or an I/O error.
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = match crate::core::capture::open_regular(path) {
        Ok(f) => f,
        Err(_) if !path.exists() && std::fs::symlink_metadata(path).is_err() => {
            return Err(ReadError::NotFound);
        }
        Err(m) if m.starts_with("not a regular file") => return Err(ReadError::NotRegular(m)),
        Err(m) if m.contains("No such file") => return Err(ReadError::NotFound),
        Err(m) => return Err(ReadError::Io(m)),
    };
    let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
    if size > max {
        return Err(ReadError::TooLarge { size, max });
    }
    // a file opened non-blocking reads as any file does; at most the size it had when opened
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(size.min(max))
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::Io(e.to_string()))?;
    Ok(bytes)
}

/// [`read`] as UTF-8 text, at most [`MAX_FILE_BYTES`].
///
/// # Errors
/// [`ReadError`], or not UTF-8.
pub fn read_to_string(path: &Path) -> Result<String, ReadError> {
    String::from_utf8(read(path, MAX_FILE_BYTES)?)
        .map_err(|e| ReadError::NotUtf8(e.utf8_error().valid_up_to()))
}
