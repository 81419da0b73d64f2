//! `oracle`: termination verdicts for progress litmus tests (AXB tests
//! and kernel programs). The command line lives in the library,
//! `oracle/src/cli/` (one file a subcommand), so that it is tested and
//! read beside the engines it calls.

use std::process::ExitCode;

fn main() -> ExitCode {
    oracle::cli::main()
}
