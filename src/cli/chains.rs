//! `verdict chains [WORKSPACE]`: the chain report of a workspace (`docs/chains.md`): every
//! capture checked as `check` checks it, only the chains printed. `--format json` prints
//! the same `{"rows", "summary"}` object as `check --format json`'s `chains`.

use crate::cli::args::{ChainsArgs, ChainsFormat};
use crate::engine::batch::{self, BatchError, BatchOptions, Deliver};
use crate::report::Item;
use std::io::Write;

/// Counts every capture and keeps nothing of it.
struct Discard;

impl Deliver for Discard {
    fn item(&mut self, _: &Item) -> std::io::Result<()> {
        Ok(())
    }
    fn passes(&mut self, _: &Item, _: &[u8], _: usize) -> std::io::Result<()> {
        Ok(())
    }
}

/// What `verdict chains` says about a workspace none of whose captures is in a chain.
pub const NO_CHAINS: &str = "no chains: no capture has `chain`, no `[chains]` in verdict.toml links any, and no batch id repeats across batch files (docs/chains.md#linking)";

/// Runs `chains` and writes the report to `out`; the workspace's warnings about chains
/// (`CHAIN_ATTEMPTS`, `CHAIN_ORDER`) follow the table in the human format.
///
/// # Errors
/// The workspace cannot be checked (as `check`: exit 2); writing failed.
pub fn run(args: &ChainsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let paths: Vec<std::path::PathBuf> = args.workspace.iter().cloned().collect();
    // the table lists the unrecovered or flagged chains only; JSON every row
    let opts = BatchOptions {
        chain_rows: match args.format {
            ChainsFormat::Json => crate::core::chain::Keep::All,
            ChainsFormat::Human => crate::core::chain::Keep::Notable,
        },
        ..BatchOptions::default()
    };
    let summary = match batch::check_workspaces(&paths, &opts, &mut Discard) {
        Ok(s) => s,
        Err(BatchError::Check(e)) => return Err(e.into()),
        Err(BatchError::Deliver(e)) => return Err(e.into()),
    };
    // no captures at all is the error `check` gives (a wrong path must not look like a
    // workspace without chains)
    if summary.captures == 0 {
        return Err(batch::CheckError::NoCaptures {
            searched: crate::cli::check::searched_captures(&paths),
        }
        .into());
    }
    let chain_warnings = summary.warnings.iter().filter(|w| {
        w.code == crate::core::chain::CHAIN_ATTEMPTS || w.code == crate::core::chain::CHAIN_ORDER
    });
    match args.format {
        ChainsFormat::Json => {
            // buffered before it is escaped: `serde_json` writes a token at a time
            let mut safe =
                crate::report::json::buffered(crate::core::escape::JsonSafe::new(&mut *out));
            let empty = crate::core::chain::ChainReport::default();
            serde_json::to_writer_pretty(&mut safe, summary.chains.as_ref().unwrap_or(&empty))?;
            writeln!(safe)?;
            crate::report::json::unbuffer(safe)?;
        }
        ChainsFormat::Human => {
            match &summary.chains {
                Some(c) => crate::report::chains::write_table(out, c)?,
                None => writeln!(out, "{NO_CHAINS}")?,
            }
            let mut first = true;
            for w in chain_warnings {
                if first {
                    writeln!(out)?;
                    first = false;
                }
                writeln!(
                    out,
                    "warning[{}] {}",
                    w.code,
                    crate::core::escape::for_terminal(&w.message)
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
