//! Campaigns: a suite run on a device, every run journaled the moment it
//! is known and resumable, or imported from a program run elsewhere, and
//! written as artifact-format result CSVs.
//!
//! - [`run`]: `backends run`, a campaign on this machine, in three stages:
//!   [`build`] (the suite's program, compiled once into the private
//!   build [`cache`], and the device it reports), [`execute`] (the pending runs, journaled as they arrive,
//!   with progress) and [`output`] (the result CSVs and device file,
//!   written from the journal).
//! - [`options`]: what defines a campaign (target, options), and
//!   [`suite`]: the tests it runs.
//! - [`journal`]: the append-only record of a campaign.
//! - [`import`]: `backends import`, the result lines of a program that ran
//!   on another machine, turned into the same journal and results.
//! - [`timing`]: whether the deadline told slow runs from hangs (per
//!   mapping, the slowest terminating run against the quickest stopped
//!   one), warned of by `run` and `import`.
//! - [`db_journal`]: a journal as runs for the results database
//!   (`backends db import`, one row per iteration).
//! - [`Failure`]: how a command fails, with its exit status.
//!
//! Dependencies run one way: a campaign builds its program with
//! [`crate::target`] and writes its results in the format of
//! [`crate::report::results`]; neither part knows of campaigns. Inside,
//! the commands ([`run`], [`import`]) use the stages, the stages use
//! [`options`], [`suite`], [`journal`], [`timing`] and this module, never the reverse.

pub mod build;
pub mod cache;
pub mod db_journal;
pub mod execute;
pub mod import;
pub mod journal;
pub mod options;
pub mod output;
pub mod run;
pub mod simt;
pub mod suite;
pub mod timing;

use crate::excerpt::printable;
use crate::report::format::Format;
use crate::toolchain::ToolError;
use std::process::ExitCode;

/// A failure, with the exit status it deserves: 2 for bad input (arguments,
/// suite, journal), 1 for the environment (compiler, program, disk); the
/// one failure type of the three tools.
pub use progress_litmus::exit::Failure;

/// A failure of bad input (exit status 2).
pub(crate) fn input(msg: impl Into<String>) -> Failure {
    Failure::input(msg)
}

/// A failure of the environment (exit status 1).
pub(crate) fn env(msg: impl Into<String>) -> Failure {
    Failure::other(msg)
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Failure {
        match e {
            ToolError::Failed { command, output } => {
                env(format!("`{command}` failed:")).with_detail(output)
            }
            e => env(e.to_string()),
        }
    }
}

/// A command's end: with `--format text` the summary line `text` on
/// stderr, with `--format json` the summary object `json` on stdout; or the
/// failure on stderr; and the exit status.
pub(crate) fn finish<T>(
    result: Result<T, Failure>,
    format: Format,
    text: impl FnOnce(&T) -> String,
    json: impl FnOnce(&T) -> serde_json::Value,
) -> ExitCode {
    match result {
        Ok(s) => match format {
            Format::Text => {
                eprintln!("{}", printable(&text(&s)));
                ExitCode::SUCCESS
            }
            Format::Json => {
                let mut out = oracle::json::to_string_pretty(&json(&s)).expect("serializable");
                out.push('\n');
                match crate::report::format::print(&out) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => env(e).exit(),
                }
            }
        },
        Err(f) => f.exit(),
    }
}
