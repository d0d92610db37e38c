//! `verdict completions SHELL` and `verdict man [COMMAND]`: shell completion scripts and
//! roff man pages generated from the clap definitions in [`crate::cli::args`], so they
//! always name the commands and flags the binary has.

use crate::cli::args::Cli;
use clap::CommandFactory;
use std::io::{self, Write};

/// Why `verdict man COMMAND` could not run (exit code 2): the name given (escaped for the
/// terminal), a "did you mean" when one is close (`; did you mean `check`?`), and the
/// commands.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a command{1} (commands: {2})")]
pub struct UnknownCommand(pub String, pub String, pub String);

/// Writes the completion script for `shell` (bash, zsh, fish, elvish, powershell) to `out`.
///
/// # Errors
/// I/O errors writing.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "verdict", &mut buf);
    out.write_all(&buf)?;
    out.flush()
}

/// Writes the man page of `verdict` (section 1, with a SUBCOMMANDS section), or with
/// `command` the page of `verdict-COMMAND`, as roff to `out`.
///
/// # Errors
/// [`UnknownCommand`] when `command` names no command; I/O errors writing.
pub fn man(command: Option<&str>, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut cli = Cli::command();
    cli.build();
    let page = match command {
        None => cli,
        Some(name) => {
            let Some(sub) = cli.find_subcommand(name) else {
                let names: Vec<&str> = cli
                    .get_subcommands()
                    .filter(|s| !s.is_hide_set() && s.get_name() != "help")
                    .map(|s| s.get_name())
                    .collect();
                let guess = crate::core::hint::did_you_mean(name, names.iter().copied())
                    .map(|g| format!("; did you mean `verdict man {g}`?"))
                    .unwrap_or_default();
                return Err(UnknownCommand(
                    crate::core::escape::for_terminal(name).into_owned(),
                    guess,
                    names.join(", "),
                )
                .into());
            };
            // built, a subcommand's display name is `verdict-check`: the page's title
            sub.clone()
        }
    };
    clap_mangen::Man::new(page)
        .source(format!("verdict {}", env!("CARGO_PKG_VERSION")))
        .render(out)?;
    out.flush()?;
    Ok(())
}
