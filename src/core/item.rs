//! A checked record as a report shows it ([`Item`]: its verdict and where to point), and how
//! a report format renders one on the validation threads ([`Renderer`]). Plain data, shared
//! by the batch pipeline ([`crate::engine::batch`]) and the report formats ([`crate::report`],
//! which re-exports both).

use crate::core::verdict::Verdict;

/// One checked capture with where a report should point at it.
#[derive(Debug, Clone)]
pub struct Item {
    /// The verdict.
    pub verdict: Verdict,
    /// The capture file as the user can open it (the workspace path joined with the file);
    /// shared by the items of one file.
    pub path: std::sync::Arc<str>,
    /// 1-based line of the record in the file (its JSONL line, or where its output starts).
    pub line: usize,
    /// 1-based column (characters).
    pub column: usize,
    /// The item as its sink prints it, when the sink has a [`Renderer`] and the item was
    /// rendered on a validation thread (`None`: the sink renders it itself). A rendered
    /// item's verdict has lost its `errors` unless it is in a chain (`chain`): the
    /// rendered bytes hold them, and they are freed on the thread that rendered them.
    pub rendered: Option<Vec<u8>>,
}

/// Renders one item on the validation threads, appending to the buffer the exact bytes its
/// sink prints for it (its trailing newline included): formats whose items are printed
/// independently of each other (`human`, `json`, `jsonl`) render in parallel instead of on
/// the one thread that writes the report.
pub type Renderer = std::sync::Arc<dyn Fn(&Item, &mut Vec<u8>) + Send + Sync>;
