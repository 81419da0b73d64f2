//! The `backends report` command: results in, conformance report out.

use crate::report::analysis::{self, Report};
use crate::report::observations;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result CSV files or directories of them (the artifact layout
    /// `<N>_thread_<M>_instruction/<framework>/<device>.csv`, or what
    /// `backends run` wrote). A device is a file stem; its files are merged.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The tests the results refer to: a directory of artifact `.txt`
    /// tests or a RON suite (verdicts stored in the suite are used, else
    /// computed); repeatable, e.g. one complete suite per configuration.
    /// Default: the 483 published tests, compiled in.
    #[arg(long)]
    pub tests: Vec<PathBuf>,
    /// `json`: a list of {device, model, consistent, violations} objects.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the chart of non-terminating tests per device and
    /// mapping (like the paper's Fig. 12) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Text format: list at most N violations per device and model (the
    /// counts stay complete).
    #[arg(long, value_name = "N")]
    pub max_listed: Option<usize>,
}

/// Loads, analyses and prints; the error is the message for the user.
pub fn build(args: &ReportArgs) -> Result<Report, String> {
    let devices = observations::load(&args.results)?;
    let tests = analysis::load_tests(&args.tests)?;
    analysis::analyse(&devices, &tests)
}

/// `backends report`: exit 0 with the report, 2 with a message for bad
/// input (unreadable or malformed results, unknown tests), 1 when the SVG
/// cannot be written.
pub fn main(args: &ReportArgs) -> ExitCode {
    let report = match build(args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(svg) = &args.svg {
        if let Err(e) =
            axb::load::write_atomically(svg, crate::report::chart::svg(&report).as_bytes())
        {
            eprintln!("error: {}: cannot write: {e}", svg.display());
            return ExitCode::from(1);
        }
    }
    let out = match args.format {
        Format::Text => report.text(args.max_listed),
        Format::Json => report.json(),
    };
    // A closed pipe (`| head`) is not an error worth a panic or a message.
    use std::io::Write;
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: writing the report: {e}");
            ExitCode::from(1)
        }
        _ => ExitCode::SUCCESS,
    }
}
