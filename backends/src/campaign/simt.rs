//! `backends import --simt`: the runs of SIMT form programs (issue 22,
//! docs/KERNEL.md §2.10), one JSON line a run, tallied into
//! `<OUT>/<name>.simt.csv` ([`crate::report::simt`]), after checking that
//! every line names a program of the suite and its observed terms.

use crate::campaign::import::{ImportArgs, Summary};
use crate::campaign::output::check_name;
use crate::campaign::{input, Failure};
use crate::report::simt::{analyse, load_programs, tally_lines, Device, NO_OUTCOME, SUFFIX};
use std::process::ExitCode;

/// Tallies `--lines` into the device's `.simt.csv`.
pub fn import(args: &ImportArgs) -> Result<Summary, Failure> {
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| args.target.name().to_string());
    check_name(&name)?;
    if progress_litmus::io::is_stdout(&args.out) {
        return Err(input(
            "--out -: import writes a directory; give a directory",
        ));
    }
    let programs = load_programs(&args.suite).map_err(input)?;
    if programs.is_empty() {
        return Err(input(format!(
            "{}: no kernel programs with outcome assertions: --simt takes the programs the SIMT form was emitted from (e.g. suites/simt)",
            args.suite[0].display()
        )));
    }
    let tally = tally_lines(&args.lines, &programs).map_err(input)?;
    let device = Device {
        name: name.clone(),
        source: args
            .lines
            .first()
            .map(|f| crate::excerpt::printable(&f.display().to_string()))
            .unwrap_or_default(),
        tally,
    };
    // The report's analysis (the rows were checked as they were read).
    analyse(
        std::slice::from_ref(&device),
        &programs,
        oracle::kernel::DEFAULT_MAX_STATES,
    )
    .map_err(input)?;
    let file = args.out.join(format!("{name}{SUFFIX}"));
    if file.exists() {
        return Err(input(format!(
            "{}: results named `{name}` are already here: choose another --name or --out",
            file.display()
        )));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| Failure {
        code: 1,
        msg: format!("{}: cannot create: {e}", args.out.display()),
        detail: None,
    })?;
    progress_litmus::io::write_atomically(&file, device.tally.csv().as_bytes()).map_err(|e| {
        Failure {
            code: 1,
            msg: format!("{}: cannot write: {e}", file.display()),
            detail: None,
        }
    })?;
    let runs: u64 = device.tally.seen.keys().map(|t| device.tally.runs(t)).sum();
    let none: u64 = device
        .tally
        .seen
        .values()
        .filter_map(|m| m.get(NO_OUTCOME))
        .sum();
    Ok(Summary {
        name,
        runs: runs as usize,
        non_terminating: none as usize,
        files: vec![file],
        // SIMT runs have no deadline: each is one launch waited for.
        warnings: Vec::new(),
    })
}

/// `backends import --simt`: the import and its summary line (stderr, or
/// one JSON object on stdout with `--format json`).
pub fn main(args: &ImportArgs) -> ExitCode {
    crate::campaign::import::summarise(import(args), args)
}
