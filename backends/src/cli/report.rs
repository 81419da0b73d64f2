//! `backends report`: results in, conformance report out.

use crate::cli::error;
use crate::report::analysis::Report;
use crate::report::format::{print, Format};
use clap::Args;
use progress_litmus::exit::Failure;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result CSV files or directories of them (the artifact layout
    /// `<N>_thread_<M>_instruction/<framework>/<device>.csv`, or what
    /// `backends run` wrote). A device is a file stem; its files are merged.
    #[arg(required_unless_present_any = ["db", "simt"])]
    pub results: Vec<PathBuf>,
    /// Also every device of this results database (`backends db import`),
    /// judged like CSV folders (a run against the suite it recorded).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// The tests the results refer to: a directory of artifact `.txt`
    /// tests or a RON suite (verdicts stored in the suite are used, else
    /// computed); repeatable, e.g. one complete suite per configuration.
    /// Default: the 483 published tests, compiled in. Results that `run`
    /// or `import` wrote record their suite in `<name>.device.json` (the
    /// fingerprint of their tests and the suite files): those files are
    /// found without this flag, and results are judged only against tests
    /// with that fingerprint; same-named tests of another suite are
    /// refused.
    #[arg(long, value_name = "TESTS")]
    pub tests: Vec<PathBuf>,
    /// `json`: a list of {device, model, consistent, violations} objects.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Where to write the report (`-`: stdout, the default).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the chart of non-terminating tests per device and
    /// mapping (like the paper's Fig. 12) as SVG to FILE (`-`: stdout,
    /// when the report goes to a file).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Text format: list at most N violations per device and model (the
    /// counts stay complete).
    #[arg(long, value_name = "N")]
    pub max_listed: Option<usize>,
    /// SIMT-Step results instead: `<device>.simt.csv` files (`backends
    /// import --simt`) or folders of them; the report says which of the
    /// direct models CM, SM, SCF, SSO each device is consistent with.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["results", "db", "tests", "svg"])]
    pub simt: Vec<PathBuf>,
    /// With --simt: the kernel programs the results name (e.g. suites/simt).
    #[arg(long, value_name = "PATH", requires = "simt")]
    pub programs: Vec<PathBuf>,
}

/// The SIMT-Step report of `--simt` against `--programs`.
fn simt_report(args: &ReportArgs) -> Result<String, String> {
    use crate::report::simt;
    if args.programs.is_empty() {
        return Err(
            "--simt needs --programs: the kernel programs the results name (e.g. suites/simt)"
                .into(),
        );
    }
    let programs = simt::load_programs(&args.programs)?;
    let devices = simt::load(&args.simt, &programs)?;
    let r = simt::analyse(&devices, &programs, oracle::kernel::DEFAULT_MAX_STATES)?;
    Ok(match args.format {
        Format::Text => r.text(),
        Format::Json => r.json(),
    })
}

/// Loads, analyses and prints; the error is the message for the user.
pub fn build(args: &ReportArgs) -> Result<Report, String> {
    crate::report::build::report(&args.results, args.db.as_deref(), &args.tests)
}

/// Whether `path` means stdout.
fn is_stdout(path: &Option<PathBuf>) -> bool {
    path.as_ref()
        .is_none_or(|p| progress_litmus::io::is_stdout(p))
}

/// `backends report`: exit 0 with the report, 2 with a message for bad
/// input (unreadable or malformed results, unknown tests, both outputs on
/// stdout), 1 when an output cannot be written.
pub fn run(args: &ReportArgs) -> ExitCode {
    if args.svg.is_some() && is_stdout(&args.svg) && is_stdout(&args.out) {
        return Failure::input("--svg - and the report would both go to stdout: give the report a file with -o FILE, or the chart one with --svg FILE").exit();
    }
    if !args.simt.is_empty() {
        return match simt_report(args) {
            Ok(text) => write_out(&args.out, &text),
            Err(e) => {
                error(&e);
                ExitCode::from(2)
            }
        };
    }
    let report = match build(args) {
        Ok(r) => r,
        Err(e) => {
            error(&e);
            return ExitCode::from(2);
        }
    };
    let text = match args.format {
        Format::Text => report.text(args.max_listed),
        Format::Json => report.json(),
    };
    let mut outputs = vec![(&args.out, text)];
    if args.svg.is_some() {
        outputs.push((&args.svg, crate::report::chart::svg(&report)));
    }
    for (path, text) in outputs {
        let written = match path {
            Some(p) if p.as_os_str() != "-" => {
                progress_litmus::io::write_atomically(p, text.as_bytes())
                    .map_err(|e| format!("{}: cannot write: {e}", p.display()))
            }
            _ => print(&text),
        };
        if let Err(e) = written {
            error(&e);
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// Writes a report to `-o FILE` or stdout: exit 1 when it cannot be.
fn write_out(path: &Option<PathBuf>, text: &str) -> ExitCode {
    let written = match path {
        Some(p) if p.as_os_str() != "-" => {
            progress_litmus::io::write_atomically(p, text.as_bytes())
                .map_err(|e| format!("{}: cannot write: {e}", p.display()))
        }
        _ => print(text),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error(&e);
            ExitCode::from(1)
        }
    }
}
