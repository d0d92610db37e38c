//! The `verdict` binary: parses arguments and hands over to [`verdict::cli`]. One place
//! prints errors; exit codes are 0 (all passed), 1 (some capture failed), 2 (cannot run).
//! A closed pipe (`verdict check | head`) is not an error.

use clap::Parser;
use std::process::ExitCode;
use verdict::cli::args::{CheckArgs, Cli, ColorChoice, Command, Format};

/// mimalloc instead of the system allocator: the pipeline allocates many small JSON and CEL
/// values per capture, and glibc's malloc/free were a quarter of `check`'s CPU time on a
/// large log (see BENCHMARKS.md). Built without the default `mimalloc` feature, the binary
/// uses the system allocator, for heap profilers.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The subcommands, for the typo check below.
const COMMANDS: [&str; 6] = ["check", "feedback", "watch", "lint", "review", "chains"];

/// The auxiliary subcommands (completion scripts, the man page): never a typo, and not
/// offered as a guess.
const AUXILIARY: [&str; 2] = ["completions", "man"];

/// `verdict chek samples/refund`: the first argument is neither a path nor a command but
/// looks like a misspelt command. Without this, clap reads it as the TUI's WORKSPACE and
/// reports that "the subcommand 'samples/refund' cannot be used with '[WORKSPACE]'".
fn misspelt_command() -> Option<String> {
    let first = std::env::args_os().nth(1)?;
    let first = first.to_str()?;
    if first.starts_with('-')
        || COMMANDS.contains(&first)
        || AUXILIARY.contains(&first)
        || std::path::Path::new(first).exists()
    {
        return None;
    }
    let guess = verdict::core::hint::did_you_mean(first, COMMANDS)?;
    Some(format!(
        "verdict: `{}` is not a command or a path; did you mean `verdict {guess}`? (commands: {}, {}; `verdict --help`)",
        verdict::core::escape::for_terminal(first),
        COMMANDS.join(", "),
        AUXILIARY.join(", ")
    ))
}

fn main() -> ExitCode {
    if let Some(message) = misspelt_command() {
        eprintln!("{message}");
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    // CEL evaluation recurses once per expression level (rules are capped at
    // `rules::MAX_EXPRESSION_DEPTH`); give the validation threads room for that in any build.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(16 << 20)
        .build_global();
    let result = match cli.command {
        Some(Command::Check(args)) => run_check(&args),
        Some(Command::Watch(args)) if !args.json => {
            Err(anyhow::anyhow!(verdict::cli::watch::NEEDS_JSON))
        }
        Some(Command::Watch(args)) => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            verdict::cli::watch::root_of(args.workspace.clone())
                .and_then(|root| {
                    verdict::cli::watch::run(
                        &root,
                        std::time::Duration::from_millis(args.debounce_ms),
                        &mut out,
                        &verdict::cli::watch::stdout_closed,
                    )
                })
                .map(|_| ExitCode::SUCCESS)
        }
        Some(Command::Feedback(args)) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            verdict::cli::feedback::run(&args, &mut out)
                .and_then(|_| Ok(std::io::Write::flush(&mut out)?))
                .map(|_| ExitCode::SUCCESS)
        }
        Some(Command::Lint(args)) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            verdict::cli::lint::run(&args, &mut out).map(|ok| {
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            })
        }
        Some(Command::Review(args)) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            verdict::cli::review::run(&args, &mut out).map(|ok| {
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            })
        }
        Some(Command::Chains(args)) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            verdict::cli::chains::run(&args, &mut out).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::Completions(args)) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            verdict::cli::completions::completions(args.shell, &mut out)
                .map(|_| ExitCode::SUCCESS)
                .map_err(Into::into)
        }
        Some(Command::Man(args)) => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            verdict::cli::completions::man(args.command.as_deref(), &mut out)
                .map(|_| ExitCode::SUCCESS)
        }
        None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            // the workspace of the path, as `check` and `watch` find it
            // (`docs/config.md#workspaces`)
            verdict::cli::watch::root_of(cli.workspace).and_then(|root| {
                verdict::tui::run(&root, cli.config.as_deref()).map(|_| ExitCode::SUCCESS)
            })
        }
        None => {
            let args = CheckArgs {
                paths: cli.workspace.into_iter().collect(),
                format: Format::Human,
                schema: None,
                color: ColorChoice::Auto,
                format_assertion: false,
                quiet: false,
            };
            run_check(&args)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            // the one place errors are printed: whatever a message quotes (ids, paths,
            // revisions, file names) was escaped where it was built; this guards the rest
            eprintln!(
                "verdict: {}",
                verdict::core::escape::lines_for_terminal(&format!("{e:#}"))
            );
            ExitCode::from(2)
        }
    }
}

/// A usage error (or `--help`, `--version`) from clap. clap echoes the arguments it
/// rejects as they are: when an argument holds anything [`for_terminal`] escapes (`ESC`, a
/// line break), the error is printed uncoloured and escaped, line by line; otherwise as
/// clap prints it (coloured on a terminal).
///
/// [`for_terminal`]: verdict::core::escape::for_terminal
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::CommandFactory;
    let hostile = std::env::args_os().any(|a| {
        matches!(
            verdict::core::escape::for_terminal(&a.to_string_lossy()),
            std::borrow::Cow::Owned(_)
        )
    });
    if !hostile {
        e.exit();
    }
    // the same error without clap's styling, so every escape byte in it is the argument's
    // (clap's uncoloured rendering strips every escape sequence, the argument's too, and
    // would print the argument raw when coloured)
    let Err(e) = Cli::command()
        .styles(clap::builder::Styles::plain())
        .try_get_matches()
    else {
        e.exit();
    };
    let text = e.render().ansi().to_string();
    let escaped = verdict::core::escape::lines_for_terminal(&text);
    if e.use_stderr() {
        eprint!("{escaped}");
    } else {
        print!("{escaped}");
    }
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

fn run_check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    // a large buffer: a report of many lines goes out in few writes
    let mut out = std::io::BufWriter::with_capacity(128 * 1024, stdout.lock());
    let passed = verdict::cli::check::run(args, &mut out)?;
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
