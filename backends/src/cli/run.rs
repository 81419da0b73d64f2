//! `backends run`: a suite run on a device, journaled and resumable
//! ([`crate::campaign::run`]).

use crate::campaign::options::RunArgs;
use crate::campaign::{self, finish};
use std::process::ExitCode;

/// `backends run`: the campaign, then its summary as a line on stderr or
/// (`--format json`) an object on stdout.
pub fn run(args: &RunArgs) -> ExitCode {
    let result = campaign::run::run(args);
    if let Ok(s) = &result {
        campaign::timing::print(&s.warnings);
    }
    finish(
        result,
        args.format,
        |s| {
            format!(
                "{}: {} runs ({} now), {} did not terminate; wrote {} files under {}",
                s.name,
                s.runs,
                s.ran_now,
                s.non_terminating,
                s.files.len(),
                args.out.display()
            )
        },
        |s| {
            serde_json::json!({
                "name": s.name,
                "runs": s.runs,
                "ran_now": s.ran_now,
                "non_terminating": s.non_terminating,
                "warnings": s.warnings,
                "out": args.out.display().to_string(),
                "files": s.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            })
        },
    )
}
