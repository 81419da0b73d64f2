//! `oracle table`: Table 4 of the paper (its buckets: bucket D, how many
//! tests distinguish each model from the next weaker, and bucket C, the
//! paper's "C. Tests"; neither is a conformance list) over the given
//! tests, decided as `classify` decides them.

use super::classify::{any_kernel, decide_all, KERNEL_NOTE};
use super::{csv_bytes, emit, json_bytes, Failure, Format, Out};
use progress_litmus::buckets::Table4;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// `.ron` tests or suites, artifact `.txt` tests, `.litmus` kernel programs, or directories of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// `table` in the paper's layout; `csv` (RFC 4180); `json`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    #[command(flatten)]
    out: Out,
}

/// `oracle table`; `Ok(false)` when some input could not be read or
/// decided (the table counts the others).
pub(super) fn run(args: &Args, max_states: usize) -> Result<bool, Failure> {
    let (rows, _, bad) = decide_all(&args.paths, max_states);
    if rows.is_empty() && bad {
        return Ok(false);
    }
    let table = Table4::from_verdicts(rows.iter().map(|r| &r.verdicts));
    emit(
        &args.out,
        &table_output(&table, rows.len(), args.format, any_kernel(&rows))?,
    )?;
    Ok(!bad)
}

/// The rows of Table 4 as they are labelled in the paper.
const TABLE4_ROWS: [&str; 4] = ["HSA", "OBE", "LOBE", "fair"];

/// Table 4 over the rows; `kernel`: some rows are kernel programs (the
/// output then says how memory behaves).
fn table_output(
    table: &Table4,
    tests: usize,
    format: Format,
    kernel: bool,
) -> Result<Vec<u8>, Failure> {
    Ok(match format {
        Format::Table => table_text(table, kernel).into_bytes(),
        Format::Csv => table_csv(table)?,
        Format::Json => table_json(table, tests, kernel),
    })
}

/// The paper's layout, then a line for the tests in no bucket and, with
/// kernel programs, the memory note.
fn table_text(table: &Table4, kernel: bool) -> String {
    let mut s = table.to_string();
    if table.unbucketed > 0 {
        s.push_str(&format!(
            "({} tests fail even under strong fairness and are in no bucket)\n",
            table.unbucketed
        ));
    }
    if kernel {
        s.push_str(KERNEL_NOTE);
    }
    s
}

/// One record a row; the tests in no bucket are said on standard error,
/// so that the CSV stays a plain table.
fn table_csv(table: &Table4) -> Result<Vec<u8>, Failure> {
    let header = [
        "model",
        "weak_distinguishing",
        "weak_bucket_c",
        "strong_distinguishing",
        "strong_bucket_c",
    ]
    .map(String::from)
    .to_vec();
    let rows = TABLE4_ROWS.iter().enumerate().map(|(r, name)| {
        vec![
            name.to_string(),
            table.d[0][r].to_string(),
            table.c[0][r].to_string(),
            table.d[1][r].to_string(),
            table.c[1][r].to_string(),
        ]
    });
    if table.unbucketed > 0 {
        eprintln!(
            "oracle: {} tests fail even under strong fairness and are in no bucket",
            table.unbucketed
        );
    }
    csv_bytes(std::iter::once(header).chain(rows))
}

/// The rows with the count of tests and of those in no bucket.
fn table_json(table: &Table4, tests: usize, kernel: bool) -> Vec<u8> {
    let rows: Vec<serde_json::Value> = TABLE4_ROWS
        .iter()
        .enumerate()
        .map(|(r, name)| {
            serde_json::json!({
                "model": name,
                "weak": {"distinguishing": table.d[0][r], "bucket_c": table.c[0][r]},
                "strong": {"distinguishing": table.d[1][r], "bucket_c": table.c[1][r]},
            })
        })
        .collect();
    let mut v = serde_json::json!({
        "tests": tests,
        "rows": rows,
        "unbucketed": table.unbucketed,
    });
    if kernel {
        v["memory"] = "sequentially consistent".into();
    }
    json_bytes(&v)
}
