//! `oracle label`: the tests as a RON suite with their verdicts under all
//! eleven models, decided as `classify` decides them; a `KernelSuite` when
//! some input is a kernel program.

use super::classify::{any_kernel, decide_all, Row};
use super::{emit, parse_suite_name, shown, Failure, Out};
use progress_litmus::kernel::load::Item;
use progress_litmus::kernel::ron::{KernelEntry, KernelSuite};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// `.ron` tests or suites, artifact `.txt` tests, `.litmus` kernel programs, or directories of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The suite's name (the test name rule applies).
    #[arg(long, default_value = "labelled", value_parser = parse_suite_name)]
    name: String,
    #[command(flatten)]
    out: Out,
    /// Write the suite even if some tests exceed --max-states: they are
    /// left out and named in the suite's note. Without it, nothing is
    /// written when a test cannot be labelled.
    #[arg(long)]
    partial: bool,
}

/// `oracle label`; `Ok(false)` when some input could not be read. A test
/// that cannot be labelled stops the suite unless `--partial`.
pub(super) fn run(args: Args, max_states: usize) -> Result<bool, Failure> {
    let (rows, refused, bad) = decide_all(&args.paths, max_states);
    if rows.is_empty() && bad {
        return Ok(false);
    }
    let kernel = any_kernel(&rows) || refused.iter().any(|i| matches!(i, Item::Kernel(_)));
    let note = refused_note(&args, &refused, kernel, max_states)?;
    let ron = if kernel {
        kernel_suite(args.name, note, rows)
    } else {
        axb_suite(args.name, note, rows)
    };
    emit(&args.out, ron.as_bytes())?;
    Ok(!bad)
}

/// The suite's note: empty when every test was labelled, else the names
/// of those left out (with `--partial`; without it, an error, so that a
/// suite is never silently smaller than its inputs).
fn refused_note(
    args: &Args,
    refused: &[Item],
    kernel: bool,
    max_states: usize,
) -> Result<String, Failure> {
    if refused.is_empty() {
        return Ok(String::new());
    }
    if !args.partial {
        return Err(Failure::input(format!(
            "{}: not written: {} test{} could not be labelled (see above); raise --max-states, or write the others with --partial",
            shown(&args.out.out),
            refused.len(),
            if refused.len() == 1 { "" } else { "s" }
        )));
    }
    let names: Vec<&str> = refused.iter().map(|t| t.name()).collect();
    Ok(if kernel {
        format!(
            "Left out, no verdict (state space over --max-states {max_states}, or a schedule goes wrong): {}.",
            names.join(", ")
        )
    } else {
        format!(
            "Left out, state space over --max-states {max_states}: {}.",
            names.join(", ")
        )
    })
}

/// Kernel programs make a kernel suite; AXB tests in it are the kernel
/// programs they embed into.
fn kernel_suite(name: String, note: String, rows: Vec<Row>) -> String {
    let suite = KernelSuite {
        name,
        note,
        tests: rows
            .into_iter()
            .map(|r| KernelEntry {
                name: r.item.name().to_string(),
                program: r.item.program(),
                verdicts: Some(r.verdicts),
            })
            .collect(),
    };
    progress_litmus::kernel::ron::suite_to_ron(&suite)
}

/// AXB tests alone make an AXB suite, each entry as it was read with its
/// verdicts filled in.
fn axb_suite(name: String, note: String, rows: Vec<Row>) -> String {
    let suite = progress_litmus::Suite {
        name,
        note,
        tests: rows
            .into_iter()
            .filter_map(|r| match r.item {
                Item::Axb(t) => {
                    let mut e = t.entry;
                    e.verdicts = Some(r.verdicts);
                    Some(e)
                }
                Item::Kernel(_) => None,
            })
            .collect(),
    };
    progress_litmus::axb::load::suite_to_ron(&suite)
}
