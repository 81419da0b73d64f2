//! `synth suites`: the committed `suites/` directory regenerated from
//! scratch (enumeration, labels, lists, README), with a summary.

use super::{write_text, Failure};
use crate::suites::import_published;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// How `synth suites` prints its summary.
#[derive(Clone, Copy, Debug, Default, ValueEnum)]
pub enum SummaryFormat {
    /// One line per suite (tests, conformance list sizes, bucket D
    /// sizes), then one line on the files.
    #[default]
    Text,
    /// One JSON object (suites, counts, timings).
    Json,
}

/// The arguments of `synth suites`.
#[derive(Args, Debug)]
pub struct SuitesArgs {
    /// The suites directory to regenerate.
    #[arg(long, short = 'o', default_value = "suites")]
    pub out: PathBuf,
    /// A directory of published tests (artifact `.txt` files) to use
    /// instead of the 483 compiled in from `data/oopsla21/tests`.
    #[arg(long, value_name = "DIR")]
    pub published: Option<PathBuf>,
    /// The summary's format.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub format: SummaryFormat,
    /// Where the summary goes (`-`: standard output, the default). The
    /// suites themselves go to `-o/--out`, a directory, as before.
    #[arg(long, value_name = "FILE", default_value = "-")]
    pub summary: PathBuf,
}

/// `synth suites`: regenerates `--out` and prints the summary on stdout
/// (or to `--summary FILE`).
/// Errors: exit status 2 for bad input (the `--published` folder missing
/// or holding bad tests; an output folder holding a symbolic link, an
/// output path that is not a regular file (a FIFO, a device), or a
/// stale list the tool did not write: `suites/output.rs`), 1 otherwise.
pub fn run(args: SuitesArgs) -> Result<(), Failure> {
    if let Some(dir) = &args.published {
        import_published(Some(dir)).map_err(Failure::input)?;
    }
    let summary =
        crate::suites::run(&args.out, args.published.as_deref()).map_err(|e| match e {
            crate::suites::SuitesError::Refused(m) => Failure::input(m),
            crate::suites::SuitesError::Failed(m) => Failure::other(m),
        })?;
    let body = match args.format {
        SummaryFormat::Text => summary.text,
        SummaryFormat::Json => {
            oracle::json::to_string_pretty(&summary.json).expect("JSON serializes") + "\n"
        }
    };
    write_text(&args.summary, body.as_bytes())
}
