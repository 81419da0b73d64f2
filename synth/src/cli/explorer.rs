//! `synth explorer`: suites, tests and kernel programs written as one
//! self-contained HTML page (the page itself: [`crate::explorer`]).

use super::{write_text, Failure};
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
pub fn run(args: ExplorerArgs) -> Result<(), Failure> {
    let start = std::time::Instant::now();
    let Loaded {
        name,
        note,
        entries,
        programs,
    } = load(&args.inputs).map_err(Failure::input)?;
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
        "{}: {}, {} bytes in {:.2} s -> {}",
        name,
        what_is_shown(entries.len(), programs.len()),
        html.len(),
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    // The suite's name is the file's text: escaped, as every status line.
    eprintln!("{}", progress_litmus::error::printable(&status));
    Ok(())
}

/// The page's contents in words: "483 tests", "23 kernel programs", "2
/// tests and 1 kernel program" (a kind the page does not hold is not
/// named: "0 tests, 23 kernel programs" read as if tests were missing).
fn what_is_shown(tests: usize, programs: usize) -> String {
    let tests_text = format!("{tests} test{}", if tests == 1 { "" } else { "s" });
    let programs_text = format!(
        "{programs} kernel program{}",
        if programs == 1 { "" } else { "s" }
    );
    match (tests, programs) {
        (_, 0) => tests_text,
        (0, _) => programs_text,
        _ => format!("{tests_text} and {programs_text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::what_is_shown;

    #[test]
    fn the_status_names_only_what_the_page_holds() {
        assert_eq!(what_is_shown(483, 0), "483 tests");
        assert_eq!(what_is_shown(0, 23), "23 kernel programs");
        assert_eq!(what_is_shown(1, 1), "1 test and 1 kernel program");
        assert_eq!(what_is_shown(0, 0), "0 tests");
    }
}
