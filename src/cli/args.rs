//! Command-line arguments (clap derive).

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// verdict: validate captured LLM structured outputs and tool calls, stage by stage
/// (response > parse > schema > business), against JSON Schema and CEL contracts.
#[derive(Debug, Parser)]
#[command(name = "verdict", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// The command; none opens the TUI on the workspace when stdout is a terminal, and
    /// runs `check` on it otherwise.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Workspace folder (default `.`), when no command is given.
    pub workspace: Option<PathBuf>,
    /// The TUI's config file (keys and colours); default
    /// `$XDG_CONFIG_HOME/verdict/config.toml`, else `~/.config/verdict/config.toml`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate once and report every capture's verdict.
    ///
    /// Exit 0 when every capture is ready or, for captures with `expect`, meets it;
    /// 1 otherwise; 2 when the run cannot proceed.
    Check(CheckArgs),
    /// Print the self-correction message an agent loop would re-inject for one capture.
    ///
    /// For a `regenerate` verdict: what failed and the contract, written for the model. For
    /// the other decisions: why regenerating would not help and what to do instead.
    Feedback(FeedbackArgs),
    /// Watch the workspace and print one JSON line per verdict that is new or changed,
    /// then a summary line after each batch (for scripts and tests).
    Watch(WatchArgs),
    /// Lint schemas: keywords the dialect ignores, typos, loose or unsatisfiable objects,
    /// `format` not asserted, provider strict-mode compatibility (`--profile`).
    ///
    /// Exit 0 when no finding is an error, 1 otherwise, 2 when it cannot run.
    Lint(LintArgs),
    /// Review a schema change: the captures whose verdict flips between the old contracts
    /// (`--base REV`, default `HEAD`, or `--old-schemas DIR`) and the working tree's.
    ///
    /// Exit 1 when any capture becomes newly failing, 0 otherwise, 2 when it cannot run.
    Review(ReviewArgs),
    /// Print the chain report: self-correction loops' outcomes (first-pass, recovered,
    /// unrecovered), recovery rates per first failure, wasted attempts, budget advice.
    ///
    /// Exit 0, or 2 when the workspace cannot be checked.
    Chains(ChainsArgs),
    /// Print a shell completion script to stdout.
    ///
    /// For example `verdict completions bash > ~/.local/share/bash-completion/completions/verdict`
    /// (see `docs/commands.md` for each shell).
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout: `verdict man > verdict.1`, or
    /// `verdict man check > verdict-check.1` for one command's page.
    Man(ManArgs),
}

/// `verdict chains`.
#[derive(Debug, clap::Args)]
pub struct ChainsArgs {
    /// Workspace folder (default `.`).
    pub workspace: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = ChainsFormat::Human)]
    pub format: ChainsFormat,
}

/// Report formats of `chains`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChainsFormat {
    /// The summary table, then the unrecovered or flagged chains.
    Human,
    /// `{"rows": [...], "summary": {...}}`, as `check --format json`'s `chains`.
    Json,
}

/// `verdict completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `verdict man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// A command whose own page to print (`check` gives `verdict-check(1)`); none gives
    /// `verdict(1)`.
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// `verdict review`.
#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// Workspace folder (default `.`).
    pub workspace: Option<PathBuf>,
    /// The git revision whose schemas folder is the old side (default `HEAD`).
    #[arg(long, value_name = "REV", conflicts_with = "old_schemas")]
    pub base: Option<String>,
    /// A folder of old schemas (and rules) instead of a git revision.
    #[arg(long, value_name = "DIR")]
    pub old_schemas: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = ReviewFormat::Human)]
    pub format: ReviewFormat,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Report formats of `review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviewFormat {
    /// Schema changes, flips grouped by kind with their cause, a summary line.
    Human,
    /// One document `{"summary", "changes", "flips"}`.
    Json,
    /// Markdown tables for a pull request.
    Markdown,
    /// GitHub Actions annotations.
    Github,
}

/// `verdict lint`.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Workspace folders (their schemas folder is linted; default `.`) or schema files.
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = LintFormat::Human)]
    pub format: LintFormat,
    /// Also check a provider's structured-output mode: `openai-strict`, `anthropic`,
    /// `gemini` (bundled from `profiles/`), or a path to a profile `.toml`.
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Report formats of `lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    /// `file:line:col: severity[CODE] /pointer: message`, a hint, then a summary line.
    Human,
    /// One document `{"summary": {...}, "findings": [...]}`.
    Json,
    /// SARIF 2.1.0, one result per finding.
    Sarif,
    /// GitHub Actions annotations.
    Github,
}

/// `verdict watch`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Workspace folder (default `.`).
    pub workspace: Option<PathBuf>,
    /// Print JSON lines: required, the only output format of `watch` (for a live view in
    /// the terminal, run the workbench: `verdict WORKSPACE`).
    #[arg(long)]
    pub json: bool,
    /// Debounce window in milliseconds: saves within it are one batch.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub debounce_ms: u64,
}

/// `verdict feedback`.
#[derive(Debug, clap::Args)]
pub struct FeedbackArgs {
    /// The capture's id (or its source, `captures/log.jsonl:9`).
    pub id: String,
    /// Workspace folder (default `.`).
    pub workspace: Option<PathBuf>,
    /// `text` (the message) or `json` (the same as data).
    #[arg(long, short = 'f', value_enum, default_value_t = FeedbackFormat::Text)]
    pub format: FeedbackFormat,
}

/// Output of `verdict feedback`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FeedbackFormat {
    /// The message as text.
    Text,
    /// `{"id", "decision", "regenerate", "message", "errors", "contract"}`.
    Json,
}

/// `verdict check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Workspace folders (default `.`), or capture files or folders inside one.
    /// With `--schema`: instance files (`.json`, `.jsonl`, `.ndjson`) or folders of them.
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Plain validator mode: validate each `.json` file or JSONL line, as raw JSON text,
    /// against this schema (parse + schema stages only).
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// With `--schema`: assert `format` (default off, as 2019-09 and later say).
    #[arg(long)]
    pub format_assertion: bool,
    /// Only print failing captures (every format; the summary still counts all).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Report formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Grouped by stage, for people; ends with the funnel and `N passed, N failed`.
    Human,
    /// One document `{"verdicts": [...], "summary": {...}}`.
    Json,
    /// One verdict per line.
    Jsonl,
    /// JUnit XML, one testcase per capture.
    Junit,
    /// SARIF 2.1.0, results located at file, line and column.
    Sarif,
    /// GitHub Actions workflow annotations (`::error file=...,line=...::`).
    Github,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When stdout is a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether to colour: `auto` colours when stdout is a terminal and `NO_COLOR` is unset
    /// or empty (<https://no-color.org>).
    pub fn enabled(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}
