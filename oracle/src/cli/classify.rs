//! `oracle classify`: the verdicts under all eleven models of each test,
//! in input order. Also the loading and deciding that `table` and `label`
//! share with it (`decide_all`), so that the three commands agree on
//! every verdict, error line and warning.

use super::{
    batch_options, csv_bytes, emit, json_bytes, report, shown, too_large, Failure, Format, Out,
};
use crate::kernel::{Checked, KernelError};
use progress_litmus::error::printable;
use progress_litmus::kernel::load::{self, Item, NamedProgram};
use progress_litmus::{Model, Verdicts};
use rayon::prelude::*;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// `.ron` tests or suites, artifact `.txt` tests, `.litmus` kernel programs, or directories of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// `table` for people; `csv` in the published column order (RFC 4180); `json`, a list of objects.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    #[command(flatten)]
    out: Out,
    /// Also report what each kernel program cost: states and transitions stored, time, states/s, bytes a stored state.
    #[arg(long)]
    stats: bool,
}

/// `oracle classify`; `Ok(false)` when some input could not be read or
/// decided (the others are still written).
pub(super) fn run(args: &Args, max_states: usize) -> Result<bool, Failure> {
    let (rows, _, bad) = decide_all(&args.paths, max_states);
    if rows.is_empty() && bad {
        // Nothing to show: the error lines already say why, and an
        // empty table or CSV would read as a successful, empty run.
        return Ok(false);
    }
    emit(
        &args.out,
        &classify_output(&rows, args.format, max_states, args.stats)?,
    )?;
    Ok(!bad)
}

/// A decided input: its verdicts under the eleven models and, for a kernel
/// program, whether some schedule deadlocks.
pub(super) struct Row {
    pub(super) item: Item,
    pub(super) verdicts: Verdicts,
    pub(super) deadlock: bool,
    /// What a kernel program cost (`--stats`).
    pub(super) cost: Option<super::stats::Cost>,
    /// A kernel program's outcome assertions under the eleven models.
    pub(super) asserts: Vec<super::outcomes::Answers>,
}

/// The error line of a kernel program that got no verdict.
fn kernel_failed(p: &NamedProgram, e: &KernelError) -> String {
    super::failed_line(&p.source, &p.name, e)
}

/// The verdicts of the kernel programs among `items` (None for AXB tests).
///
/// The budget of `--max-states` holds for the process, not for each core
/// (issue 20 item 3): the programs are first decided in parallel, each
/// under its share of the bound, then those that outgrew their share one
/// at a time under the whole bound (and those the system refused memory
/// while others held some). So a program gets the same answer in any
/// batch on any number of cores, and the tables held at once stay within
/// one budget (plus one small minimum a core).
type KernelDecided = Result<(Verdicts, bool, super::stats::Cost), KernelError>;

fn kernel_verdicts(items: &[Item], max_states: usize) -> Vec<Option<KernelDecided>> {
    let threads = rayon::current_num_threads().max(1);
    let share = batch_options((max_states / threads).max(1));
    let mut kernel: Vec<_> = items
        .par_iter()
        .map(|i| match i {
            Item::Kernel(p) => Some(super::stats::decide(&p.program, share)),
            Item::Axb(_) => None,
        })
        .collect();
    if share.max_states < max_states {
        let whole = batch_options(max_states);
        for (i, k) in items.iter().zip(&mut kernel) {
            if let (Item::Kernel(p), Some(Err(e))) = (i, &k) {
                if e.is_bound() {
                    *k = Some(super::stats::decide(&p.program, whole));
                }
            }
        }
    }
    kernel
}

/// Loads tests and programs and decides them, in input order: files in the
/// order given, each directory's files sorted, each suite's tests in suite
/// order. AXB tests go to the AXB engine (one batch), kernel programs to
/// the kernel checker. Also returns the inputs over the bound (reported on
/// stderr with every other failure) and whether any file or test failed.
/// A kernel program's `expect` lines that the oracle contradicts are
/// warnings.
pub(super) fn decide_all(paths: &[PathBuf], max_states: usize) -> (Vec<Row>, Vec<Item>, bool) {
    let mut warnings = Vec::new();
    let (items, errors) = load::load_all_with(paths, super::shader::launch(), &mut warnings);
    super::shader::warn(&warnings);
    let mut bad = report(&errors);
    let axb: Vec<&progress_litmus::Test> = items
        .iter()
        .filter_map(|i| match i {
            Item::Axb(t) => Some(&t.entry.test),
            Item::Kernel(_) => None,
        })
        .collect();
    let mut axb_verdicts = crate::try_verdicts_all(&axb, max_states).into_iter();
    let kernel = kernel_verdicts(&items, max_states);
    let mut rows = Vec::with_capacity(items.len());
    let mut refused = Vec::new();
    for (item, k) in items.into_iter().zip(kernel) {
        let decided = match (&item, k) {
            (Item::Axb(t), _) => match axb_verdicts.next().expect("one verdict a test") {
                Ok(v) => Ok((v, false, None)),
                Err(e) => Err(too_large(t, e, crate::BYTES_PER_STATE)),
            },
            (Item::Kernel(p), Some(r)) => r
                .map(|(v, d, c)| (v, d, Some(c)))
                .map_err(|e| kernel_failed(p, &e)),
            (Item::Kernel(_), None) => unreachable!("every kernel program is decided"),
        };
        match decided {
            Ok((verdicts, deadlock, cost)) => rows.push(Row {
                asserts: super::outcomes::classify_answers(&item, max_states),
                item,
                verdicts,
                deadlock,
                cost,
            }),
            Err(line) => {
                eprintln!("error: {}", printable(&line));
                bad = true;
                refused.push(item);
            }
        }
    }
    warn_expectations(&rows, max_states);
    (rows, refused, bad)
}

/// Warns of each `expect` line of a decided kernel program that the
/// oracle contradicts or cannot decide: the program's author stated a
/// verdict, and a difference is worth a look, but the oracle's verdict is
/// the one written.
fn warn_expectations(rows: &[Row], max_states: usize) {
    let opts = batch_options(max_states);
    for r in rows {
        if let Item::Kernel(p) = &r.item {
            let checked = crate::kernel::check_each_expectation(p, opts);
            for (e, c) in p.program.expect.iter().zip(checked) {
                let (m, want) = (e.model, e.outcome.word());
                let why = match c {
                    Checked::Agrees => continue,
                    Checked::Disagrees(got) => {
                        format!("expect {m}: {want} but the oracle says {}", got.word())
                    }
                    Checked::Undecided(err) => {
                        format!(
                            "expect {m}: {want} is undecided: the oracle gives no verdict ({err})"
                        )
                    }
                };
                eprintln!(
                    "warning: {}: test `{}`: {}",
                    shown(&p.source),
                    printable(&p.name),
                    printable(&why)
                );
            }
        }
    }
}

/// Whether any row is a kernel program (its output then says how memory
/// behaves: AXB outputs stay as they were).
pub(super) fn any_kernel(rows: &[Row]) -> bool {
    rows.iter().any(|r| matches!(r.item, Item::Kernel(_)))
}

/// The line that table outputs end with when kernel programs are in them.
pub(super) const KERNEL_NOTE: &str = "(memory is sequentially consistent; kernel programs: models at the device scope, fair inside workgroups)\n";

/// The verdicts as a table for people: weak models, strong models, unfair.
fn print_table(rows: &[Row]) -> String {
    use progress_litmus::{Base::*, Fairness::*};
    use std::fmt::Write;
    let width = rows
        .iter()
        .map(|r| r.item.name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    let order = [Hsa, Obe, HsaObe, Lobe, Fair];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$}  weak:   HSA  OBE  HSA+OBE  LOBE  fair  strong: HSA  OBE  HSA+OBE  LOBE  fair  unfair",
        "test"
    );
    for r in rows {
        let v = &r.verdicts;
        let cell = |b, f| v.get(Model::new(b, f)).as_char();
        let w: Vec<char> = order.iter().map(|&b| cell(b, Weak)).collect();
        let s: Vec<char> = order.iter().map(|&b| cell(b, Strong)).collect();
        let _ = writeln!(
            out,
            "{:<width$}          {}    {}    {}        {}     {}             {}    {}    {}        {}     {}     {}",
            r.item.name(), w[0], w[1], w[2], w[3], w[4], s[0], s[1], s[2], s[3], s[4], cell(Unfair, Weak)
        );
        super::outcomes::table_lines(&mut out, &r.asserts, width);
    }
    if any_kernel(rows) {
        out.push_str(KERNEL_NOTE);
    }
    launch_lines(&mut out, rows);
    if rows.iter().any(|r| !r.asserts.is_empty()) {
        out.push_str(super::outcomes::TABLE_NOTE);
    }
    out
}

/// The launch each shader's verdicts are for (`launch of NAME: 2
/// workgroups (default) of ...`): a shader does not say how it is
/// launched, so its verdicts name it (docs/KERNEL.md §10.1).
fn launch_lines(out: &mut String, rows: &[Row]) {
    use std::fmt::Write;
    for r in rows {
        if let Item::Kernel(NamedProgram {
            name,
            launch: Some(l),
            ..
        }) = &r.item
        {
            let _ = writeln!(out, "(launch of {name}: {l})");
        }
    }
}

/// A kernel program's `expect` lines as JSON, each with whether the
/// oracle agrees (`agrees` is null, and `undecided` says why, when the
/// oracle could not decide).
fn expect_json(p: &NamedProgram, max_states: usize) -> Vec<serde_json::Value> {
    let checked = crate::kernel::check_each_expectation(p, batch_options(max_states));
    p.program
        .expect
        .iter()
        .zip(checked)
        .map(|(e, c)| {
            let mut v = serde_json::json!({
                "model": e.model.to_string(),
                "expected": e.outcome.word(),
                "agrees": match c {
                    Checked::Agrees => Some(true),
                    Checked::Disagrees(_) => Some(false),
                    Checked::Undecided(_) => None,
                },
            });
            if let Checked::Undecided(err) = c {
                v["undecided"] = err.to_string().into();
            }
            v
        })
        .collect()
}

/// A row as a JSON object: an AXB test as it always was; a kernel program
/// also with its shape, memory model, deadlock and `expect` lines (each
/// with whether the oracle agrees).
fn row_json(r: &Row, max_states: usize) -> serde_json::Value {
    let verdicts: serde_json::Map<String, serde_json::Value> = Model::ALL
        .iter()
        .map(|m| {
            (
                m.name().to_string(),
                r.verdicts.get(*m).as_char().to_string().into(),
            )
        })
        .collect();
    match &r.item {
        Item::Axb(t) => serde_json::json!({
            "test": t.name,
            "source": t.source.display().to_string(),
            "config": t.entry.test.config(),
            "verdicts": verdicts,
        }),
        Item::Kernel(p) => {
            let mut v = serde_json::json!({
                "test": p.name,
                "source": p.source.display().to_string(),
                "config": format!("{}wg{}inv", p.program.workgroups, p.program.workgroup_size),
                "memory": "sequentially consistent",
                "verdicts": verdicts,
                "deadlock": r.deadlock,
                "expect": expect_json(p, max_states),
            });
            if !r.asserts.is_empty() {
                v["assertions"] = super::outcomes::json_answers(&r.asserts);
            }
            if let Some(l) = &p.launch {
                v["launch"] = l.clone().into();
            }
            v
        }
    }
}

/// The bytes `classify` writes in `format`.
fn classify_output(
    rows: &[Row],
    format: Format,
    max_states: usize,
    with_stats: bool,
) -> Result<Vec<u8>, Failure> {
    let costs: Vec<Option<&super::stats::Cost>> = rows.iter().map(|r| r.cost.as_ref()).collect();
    Ok(match format {
        Format::Table if with_stats => {
            let names = rows.iter().map(|r| r.item.name()).zip(costs);
            (print_table(rows) + &super::stats::table(names)).into_bytes()
        }
        Format::Table => print_table(rows).into_bytes(),
        Format::Csv if with_stats => {
            super::stats::csv(classify_output(rows, format, max_states, false)?, &costs)
        }
        Format::Csv => {
            let header = std::iter::once("test".to_string())
                .chain(Model::ALL.iter().map(|m| m.name().to_string()));
            let records = rows.iter().map(|r| {
                std::iter::once(r.item.name().to_string())
                    .chain(r.verdicts.0.iter().map(|x| x.as_char().to_string()))
                    .collect()
            });
            csv_bytes(std::iter::once(header.collect()).chain(records))?
        }
        Format::Json => {
            let list: Vec<serde_json::Value> = rows
                .iter()
                .zip(costs)
                .map(|(r, c)| match with_stats {
                    true => super::stats::attach(row_json(r, max_states), c),
                    false => row_json(r, max_states),
                })
                .collect();
            json_bytes(&serde_json::Value::Array(list))
        }
    })
}
