//! `synth explorer`: suites, tests and kernel programs written as one
//! self-contained HTML page (the page itself: [`crate::explorer`]).

use super::{write_text, Fail};
use crate::explorer::{load, render_all, size_warning, Loaded, PageOptions};
use backends::target::Shape;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// The arguments of `synth explorer`.
#[derive(Args, Debug)]
pub struct ExplorerArgs {
    /// Suites (RON), test files, kernel programs (`.litmus`, `Kernel` RON)
    /// or directories of them, shown on one page (AXB tests first, then
    /// kernel programs, each in input order).
    #[arg(required = true, value_name = "SUITE")]
    pub inputs: Vec<PathBuf>,
    /// The HTML file to write (`-`: standard output).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Leave out the emitted code (a smaller page).
    #[arg(long)]
    pub no_code: bool,
    /// The code shape of the emitted code shown.
    #[arg(long, value_enum, default_value = "switch")]
    pub shape: ShapeArg,
}

/// `--shape` of `synth explorer`, as `backends emit --shape`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ShapeArg {
    Switch,
    IfChain,
}

/// `synth explorer`: the page to `--out`, one status line on stderr.
/// Errors: exit status 2 for bad input (a missing or invalid input), 1
/// when the page cannot be written.
pub fn run(args: ExplorerArgs) -> Result<(), Fail> {
    let start = std::time::Instant::now();
    let Loaded {
        name,
        note,
        entries,
        programs,
    } = load(&args.inputs).map_err(|e| Fail(2, e))?;
    let opts = PageOptions {
        code: !args.no_code,
        shape: match args.shape {
            ShapeArg::Switch => Shape::Switch,
            ShapeArg::IfChain => Shape::IfChain,
        },
    };
    let html = render_all(&name, &note, &entries, &programs, opts);
    if let Some(w) = size_warning(html.len(), args.no_code) {
        eprintln!("{w}");
    }
    write_text(&args.out, html.as_bytes())?;
    // Status on stderr: stdout is for data (`-o -` writes the page there).
    let status = format!(
        "{}: {} tests, {} kernel programs, {} bytes in {:.2} s -> {}",
        name,
        entries.len(),
        programs.len(),
        html.len(),
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    // The suite's name is the file's text: escaped, as every status line.
    eprintln!("{}", progress_litmus::error::printable(&status));
    Ok(())
}
