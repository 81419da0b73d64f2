//! The command line of `backends`: one thin file per subcommand, each
//! parsing its arguments and calling the library ([`crate::target`],
//! [`crate::campaign`], [`crate::report`]).
//!
//! The top of the layout: this part may use every other part, and no
//! part uses it (`tests/layout.rs`), so the library stays usable without
//! clap's view of it. Exit status 2 means bad input or usage (arguments,
//! test files, tests that cannot be emitted, journals, results), 1
//! everything else (writing files, a missing or failing compiler, device
//! or program); see [`exit_status`].

pub mod db;
pub mod emit;
pub mod import;
pub mod report;
pub mod run;

use crate::excerpt::printable;
use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// The exit statuses, as every `--help` shows them
/// ([`crate::glossary::exit_status`]).
pub use crate::glossary::exit_status;

/// `--help` of the commands that print verdicts: the words, then the
/// exit statuses (`-h` shows the exit statuses only).
fn words_and_exit_status() -> String {
    format!("Words:\n{}\n\n{}", crate::glossary::text(), exit_status())
}

#[derive(Parser)]
#[command(
    name = "backends",
    version,
    about = "Turn progress litmus tests into GLSL/Amber, Vulkan, Metal, CUDA, C++ and WGSL programs and a WebGPU page, run them on devices, and report which progress models the devices are consistent with",
    after_help = exit_status()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the programs of a target for tests or suites.
    #[command(after_help = exit_status())]
    Emit(emit::EmitArgs),
    /// Run a suite on this CPU (cpp), an NVIDIA GPU (cuda), a Vulkan device (vulkan) or, with backends-wgpu, a Vulkan, Metal or D3D12 GPU (wgpu): journaled, resumable, artifact-format results.
    #[command(after_help = exit_status())]
    Run(crate::campaign::options::RunArgs),
    /// Results of a generated program run on another machine (or of the webgpu page), journaled and written as `run` would.
    #[command(after_help = exit_status())]
    Import(crate::campaign::import::ImportArgs),
    /// Which progress models each device's observations are consistent with, and the violations.
    #[command(after_help = exit_status(), after_long_help = words_and_exit_status())]
    Report(report::ReportArgs),
    /// The results database (SQLite): import result files and journals, list the campaigns, export CSVs.
    #[command(after_help = exit_status())]
    Db(db::DbArgs),
    /// A static results site from the database: the device x model matrix and a page per device.
    #[command(after_help = exit_status(), after_long_help = words_and_exit_status())]
    Site(crate::report::site::SiteArgs),
    /// The results service: serves the WebGPU page, the results site of a
    /// database, and takes the page's results ("Send my results") into the
    /// database, checked as `backends import` checks them.
    #[command(after_help = exit_status())]
    Serve(crate::serve::ServeArgs),
}

/// The whole command line as clap sees it (for tests that walk every
/// command and argument).
pub fn command() -> clap::Command {
    Cli::command()
}

/// `backends`: parses the command line (clap exits 2 on bad usage) and
/// runs the subcommand.
pub fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Emit(args) => emit::run(args),
        Command::Run(args) => run::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Db(args) => db::main(&args),
        Command::Site(args) => crate::report::site::main(&args),
        Command::Serve(args) => crate::serve::main(&args),
    }
}

/// Prints an error line, escaped: a message may quote a file name or an
/// input ([`printable`]).
pub(crate) fn error(e: &dyn std::fmt::Display) {
    eprintln!("error: {}", printable(&e.to_string()));
}
