//! `backends import`: results of a generated program run elsewhere (or of
//! the WebGPU page), journaled and written as `run` would
//! ([`crate::campaign::import`]).

use crate::campaign::import::{self, ImportArgs};
use std::process::ExitCode;

/// `backends import`. Its summary lines are still written by
/// [`import::main`], beside the reader that the results-database work is
/// changing; they move here with the next change to that file.
pub fn run(args: &ImportArgs) -> ExitCode {
    if args.simt {
        return crate::campaign::simt::main(args);
    }
    import::main(args)
}
