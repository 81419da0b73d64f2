//! The command line of `synth`: one thin file per subcommand over the
//! library, so that the library holds no command-line handling and each
//! command reads on one page.
//!
//! `synth --threads N --instrs M --out PATH` (or `synth gen ...`) enumerates
//! every test of a configuration; `synth merge` joins shard outputs; `synth
//! plan` writes the shard/merge split for GNU parallel or Slurm (`-o`,
//! standard output by default); bare `synth` prints the commands. Errors are
//! one line on stderr, `error: ...` as in `oracle` and `backends`, with exit
//! status 2 for bad input or usage (options, input files, the output path,
//! a journal that is locked or does not check) and 1 for anything else, as
//! every `--help` says ([`exit_status`]). Status and progress go to stderr;
//! stdout is for data (`-o -`).
//!
//! This file holds what the commands share: the clap types, [`Failure`] (a
//! message and its exit status) and the writing of outputs.

pub mod explorer;
pub mod find;
pub mod gen;
pub mod merge;
pub mod plan;
pub mod suites;
pub mod table;

use crate::enumerate::output::Format;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::path::Path;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "synth",
    version,
    about = "Enumerate every progress litmus test of a configuration (SPEC §4)",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    // Bare `synth` prints its commands, as `oracle` and `backends` do.
    arg_required_else_help = true,
    after_help = exit_status()
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    gen: gen::GenArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Enumerate every test of a configuration (also the default command).
    #[command(after_help = exit_status())]
    Gen(gen::GenArgs),
    /// Merge the RON suites of shards 1/N..N/N into the unsharded run's output.
    #[command(after_help = exit_status())]
    Merge(merge::MergeArgs),
    /// Regenerate the committed suites directory from scratch (labels, each
    /// model's conformance list, Table 4's buckets, README).
    #[command(after_help = exit_status())]
    Suites(suites::SuitesArgs),
    /// Write a suite as one self-contained HTML test explorer.
    #[command(after_help = exit_status())]
    Explorer(explorer::ExplorerArgs),
    /// Print the shard/merge split of a run as a GNU parallel job list, a
    /// merge command and a Slurm array script.
    #[command(after_help = exit_status())]
    Plan(plan::PlanArgs),
    /// Find tests with a required verdict vector (targeted SAT search).
    #[command(after_help = exit_status())]
    Find(find::FindArgs),
    /// Table 4's buckets and each row's distinguishing tests (bucket D) of a
    /// packed suite of any size, streaming: `table4.json`, `table4.txt`,
    /// `distinguishing/*.axb.gz`.
    #[command(after_help = exit_status())]
    Table(table::TableArgs),
}

/// The exit statuses, as every `--help` shows them (in the form of every
/// tool's, [`progress_litmus::error::exit_status_help`]).
pub fn exit_status() -> String {
    format!(
        "{} Errors are one `error:` line on stderr; status and progress go to stderr, data (`-o -`) to stdout.",
        progress_litmus::error::exit_status_help(
            "options, input files, the output path, a journal that is locked or does not check",
            "an output that cannot be written, an internal error",
        )
    )
}

/// The whole command line as clap sees it (for tests that walk every
/// command and argument).
pub fn command() -> clap::Command {
    Cli::command()
}

/// The `--format` of `synth gen` and `synth merge`.
#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// One RON suite file.
    Ron,
    /// A directory of artifact-format `.txt` files.
    Txt,
    /// One packed suite (`.axb.gz`): gzip'd, one short line per test.
    Packed,
}

/// The output format: `--format` if given, else inferred from `out`.
pub fn format_of(arg: Option<FormatArg>, out: &Path) -> Format {
    match arg {
        Some(FormatArg::Ron) => Format::Ron,
        Some(FormatArg::Txt) => Format::Txt,
        Some(FormatArg::Packed) => Format::Packed,
        None => Format::infer(out),
    }
}

pub use progress_litmus::exit::Failure;

/// A failure of bad input or usage (exit status 2).
pub fn bad_input(msg: impl Into<String>) -> Failure {
    Failure::input(msg)
}

/// The error of an output that could not be written (exit status 1),
/// naming standard output as such rather than `-`.
pub fn cannot_write(out: &Path, e: std::io::Error) -> Failure {
    Failure::cannot_write(out, e)
}

/// Writes `bytes` to `out`: standard output for `-` (a closed pipe is not
/// an error), else a file replaced atomically, so that an interrupted
/// command never leaves half a file.
pub fn write_text(out: &Path, bytes: &[u8]) -> Result<(), Failure> {
    progress_litmus::io::write_output(out, bytes)
        .map(drop)
        .map_err(|e| cannot_write(out, e))
}

/// Runs the command line: parses it, runs the command, and prints a
/// failure as one escaped line on stderr with its exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Gen(a)) => gen::run(a),
        Some(Command::Merge(a)) => merge::run(a),
        Some(Command::Suites(a)) => suites::run(a),
        Some(Command::Explorer(a)) => explorer::run(a),
        Some(Command::Plan(a)) => plan::run(a),
        Some(Command::Table(a)) => table::run(a),
        Some(Command::Find(a)) => find::run(a),
        None => gen::run(cli.gen),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Escaped: a message may quote a path or an input.
        Err(f) => f.exit(),
    }
}
