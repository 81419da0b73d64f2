//! `oracle`: termination verdicts for progress litmus tests: AXB tests
//! and kernel programs (`.litmus`, docs/KERNEL.md) through one command
//! line and one loader ([`progress_litmus::kernel::load`]). AXB tests are decided by
//! the AXB engine, kernel programs by [`oracle::kernel`]; both give the
//! eleven models' verdicts, and the kernel checker agrees with the AXB
//! engine on every AXB test (oracle/tests/kernel_axb.rs).

mod outcomes;

use clap::{Args, Parser, Subcommand, ValueEnum};
use oracle::kernel::{Checked, KernelError};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::buckets::Table4;
use progress_litmus::error::{excerpt, printable};
use progress_litmus::kernel::load::{self, Item, NamedProgram};
use progress_litmus::kernel::ron::{KernelEntry, KernelSuite};
use progress_litmus::kernel::ScopedModel;
use progress_litmus::{FileError, Model, Verdicts};
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The end of `oracle --help`: exit statuses, where output goes, limits.
const AFTER_HELP: &str = "\
Exit status:
  0  every input was read and every result written
  2  bad input or usage: a test file that cannot be read or parsed (reported
     as FILE:LINE:COL: message on standard error), an unknown model or test
     name, a bad flag; the tests that could be read are still reported
  1  anything else: an output that cannot be written, an internal error

Output goes to standard output, or with -o FILE to FILE, which is replaced
only once the output is complete; -o - is standard output. Errors and status
go to standard error.

Inputs: AXB tests (`.ron` tests and suites, artifact `.txt` tests) and kernel
programs (`.litmus` files, `Kernel` and `KernelSuite` RON files; see
docs/KERNEL.md), alone or mixed, or directories of them. Kernel programs are
decided with sequentially consistent memory; classify, table and label give
their verdicts under the 11 models at the device scope (fair inside
workgroups); explain and lts take any scoped model, e.g.
--model \"OBE, subgroup=unfair\", and --occupancy K.

Test names are 1 to 64 characters from A-Z a-z 0-9 _ . + - and start with a
letter, a digit or _ (a RON test's name: field, else its file name).

Environment:
  AXB_MAX_INPUT_BYTES  the largest input file read (default 1G; K, M and G
                       suffixes)";

/// The end of each command's `--help`.
const COMMAND_AFTER_HELP: &str =
    "Exit status: 0 success, 2 bad input or usage, 1 anything else (see `oracle --help`).";

#[derive(Parser)]
#[command(
    name = "oracle",
    version,
    about = "Is a progress litmus test guaranteed to terminate under a progress model?",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Refuse a test whose state space has more than N states (each refused
    /// test is one error line; the others are still decided). An AXB
    /// test's state takes about 100 bytes in classify, table and label,
    /// about 200 in explain and lts. A kernel program's tables (states,
    /// transitions, index, counted by what they reserve) are also held
    /// within N x 100 bytes, one budget shared by the programs decided at
    /// once (each gets at least 16 MiB): one of 2 workgroups of 8
    /// invocations takes about 250 bytes a state. The default keeps a
    /// process under about 2 GB (4 GB for an AXB test in explain and lts).
    #[arg(long, global = true, value_name = "N", default_value_t = oracle::DEFAULT_MAX_STATES, value_parser = parse_max_states)]
    max_states: usize,
}

#[derive(Subcommand)]
enum Command {
    /// Verdicts under all 11 models for each test (files, suites, directories), in input order.
    #[command(after_help = COMMAND_AFTER_HELP)]
    Classify {
        /// `.ron` tests or suites, artifact `.txt` tests, `.litmus` kernel programs, or directories of them.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// `table` for people; `csv` in the published column order (RFC 4180); `json`, a list of objects.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        #[command(flatten)]
        out: Out,
    },
    /// Why a test passes or fails under one model, with a witness schedule.
    #[command(after_help = COMMAND_AFTER_HELP)]
    Explain {
        /// A test file, or a suite with --test.
        path: PathBuf,
        /// The model: HSA, OBE, LOBE, WEAK_FAIR, HSA_STRONG, ..., UNFAIR (or `strong-lobe`, `hsa+obe`, ...),
        /// or a scoped model such as "OBE, subgroup=unfair" (docs/KERNEL.md). A kernel
        /// program's own `model` line is the default.
        #[arg(long, value_parser = parse_model)]
        model: Option<ScopedModel>,
        /// The test's name, when PATH is a suite.
        #[arg(long)]
        test: Option<String>,
        /// At most K workgroups resident at once (the occupancy-bound model).
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..))]
        occupancy: Option<u8>,
        /// `text` for people; `json`: verdict, model and the witness schedule step by step.
        #[arg(long, value_enum, default_value_t = TextFormat::Text)]
        format: TextFormat,
        #[command(flatten)]
        out: Out,
    },
    /// Every reachable final state under one model, with a witness schedule each, and the program's assertions answered.
    #[command(after_help = COMMAND_AFTER_HELP)]
    Outcomes(outcomes::Args),
    /// The state space, as Graphviz DOT or JSON.
    #[command(after_help = COMMAND_AFTER_HELP)]
    Lts {
        /// A test file, or a suite with --test.
        path: PathBuf,
        /// Show the product with this model's fair set; without it, the test's own space.
        #[arg(long, value_parser = parse_model)]
        model: Option<ScopedModel>,
        /// The test's name, when PATH is a suite.
        #[arg(long)]
        test: Option<String>,
        /// At most K workgroups resident at once (with --model).
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..), requires = "model")]
        occupancy: Option<u8>,
        /// `dot` (Graphviz) or `json` (states and transitions; AXB tests only).
        #[arg(long, value_enum, default_value_t = LtsFormat::Dot)]
        format: LtsFormat,
        /// The same as --format dot (the old spelling; DOT is the default).
        #[arg(long, conflicts_with = "format")]
        dot: bool,
        #[command(flatten)]
        out: Out,
    },
    /// Table 4 of the paper (distinguishing and conformance tests) for the given tests.
    #[command(after_help = COMMAND_AFTER_HELP)]
    Table {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// `table` in the paper's layout; `csv` (RFC 4180); `json`.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        #[command(flatten)]
        out: Out,
    },
    /// Write the tests as a RON suite with their verdicts under all 11 models
    /// (a `KernelSuite` when some input is a kernel program).
    #[command(after_help = COMMAND_AFTER_HELP)]
    Label {
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
    },
}

/// Where a command's output goes.
#[derive(Args)]
struct Out {
    /// Write the output to FILE, replaced only once complete; `-` is standard output.
    #[arg(short, long = "out", value_name = "FILE", default_value = "-")]
    out: PathBuf,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Table,
    Csv,
    Json,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TextFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum LtsFormat {
    Dot,
    Json,
}

fn parse_max_states(s: &str) -> Result<usize, String> {
    let limit = oracle::axb::shared_space::MAX_STATES_LIMIT;
    match s.parse::<usize>() {
        Ok(n) if (1..=limit).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of states from 1 to {limit}")),
    }
}

/// The error line of a test whose space is over the bound; a state takes
/// `bytes` bytes in the space the command builds.
fn too_large(t: &NamedTest, e: oracle::TooLarge, bytes: usize) -> String {
    format!(
        "{}: test `{}`: state space exceeds --max-states {} (more than {} states; a larger bound needs about {bytes} bytes a state)",
        shown(&t.source),
        t.name,
        e.bound,
        e.bound,
    )
}

/// One of the eleven models (by any of its spellings), or a scoped model.
fn parse_model(s: &str) -> Result<ScopedModel, String> {
    if let Some(m) = Model::parse(s) {
        return Ok(ScopedModel::flat(m));
    }
    if s.contains(',') {
        return ScopedModel::parse(s).map_err(|e| printable(&e));
    }
    ScopedModel::parse(s).map_err(|_| {
        let names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
        format!(
            "unknown model `{}`; expected one of {}, PRIORITY, PRIORITY_STRONG, or a scoped model such as \"OBE, subgroup=unfair\"",
            excerpt(s),
            names.join(", ")
        )
    })
}

fn parse_suite_name(s: &str) -> Result<String, String> {
    progress_litmus::axb::test::check_name(s)
        .map(|()| s.to_string())
        .map_err(|e| e.to_string())
}

/// A path as messages show it: on one line, unprintable characters escaped.
fn shown(p: &Path) -> String {
    printable(&p.to_string_lossy())
}

/// Prints load errors; returns whether there were any.
fn report(errors: &[FileError]) -> bool {
    for e in errors {
        eprintln!("error: {}", printable(&e.to_string()));
    }
    !errors.is_empty()
}

/// A decided input: its verdicts under the eleven models and, for a kernel
/// program, whether some schedule deadlocks.
struct Row {
    item: Item,
    verdicts: Verdicts,
    deadlock: bool,
    /// A kernel program's outcome assertions under the eleven models.
    asserts: Vec<outcomes::Answers>,
}

/// The error line of a kernel program that got no verdict.
fn kernel_failed(p: &NamedProgram, e: &KernelError) -> String {
    format!("{}: test `{}`: {e}", shown(&p.source), p.name)
}

/// The checker's options for the commands that decide many programs
/// (reduced spaces: the verdicts are exact, the tests prove it).
fn batch_options(max_states: usize) -> oracle::kernel::Options {
    oracle::kernel::Options {
        max_states,
        reductions: oracle::kernel::product::Reductions::ALL,
    }
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
fn kernel_verdicts(
    items: &[Item],
    max_states: usize,
) -> Vec<Option<Result<(Verdicts, bool), KernelError>>> {
    let threads = rayon::current_num_threads().max(1);
    let share = batch_options((max_states / threads).max(1));
    let mut kernel: Vec<_> = items
        .par_iter()
        .map(|i| match i {
            Item::Kernel(p) => Some(oracle::kernel::flat_verdicts(&p.program, share)),
            Item::Axb(_) => None,
        })
        .collect();
    if share.max_states < max_states {
        let whole = batch_options(max_states);
        for (i, k) in items.iter().zip(&mut kernel) {
            if let (Item::Kernel(p), Some(Err(e))) = (i, &k) {
                if e.is_bound() {
                    *k = Some(oracle::kernel::flat_verdicts(&p.program, whole));
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
fn classify(paths: &[PathBuf], max_states: usize) -> (Vec<Row>, Vec<Item>, bool) {
    let (items, errors) = load::load_all(paths);
    let mut bad = report(&errors);
    let axb: Vec<&progress_litmus::Test> = items
        .iter()
        .filter_map(|i| match i {
            Item::Axb(t) => Some(&t.entry.test),
            Item::Kernel(_) => None,
        })
        .collect();
    let mut axb_verdicts = oracle::try_verdicts_all(&axb, max_states).into_iter();
    let opts = batch_options(max_states);
    let kernel = kernel_verdicts(&items, max_states);
    let mut rows = Vec::with_capacity(items.len());
    let mut refused = Vec::new();
    for (item, k) in items.into_iter().zip(kernel) {
        let decided = match (&item, k) {
            (Item::Axb(t), _) => match axb_verdicts.next().expect("one verdict a test") {
                Ok(v) => Ok((v, false)),
                Err(e) => Err(too_large(t, e, oracle::BYTES_PER_STATE)),
            },
            (Item::Kernel(p), Some(r)) => r.map_err(|e| kernel_failed(p, &e)),
            (Item::Kernel(_), None) => unreachable!("every kernel program is decided"),
        };
        match decided {
            Ok((verdicts, deadlock)) => rows.push(Row {
                asserts: outcomes::classify_answers(&item, max_states),
                item,
                verdicts,
                deadlock,
            }),
            Err(line) => {
                eprintln!("error: {}", printable(&line));
                bad = true;
                refused.push(item);
            }
        }
    }
    for r in &rows {
        if let Item::Kernel(p) = &r.item {
            let checked = oracle::kernel::check_each_expectation(p, opts);
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
    (rows, refused, bad)
}

/// Whether any row is a kernel program (its output then says how memory
/// behaves: AXB outputs stay as they were).
fn any_kernel(rows: &[Row]) -> bool {
    rows.iter().any(|r| matches!(r.item, Item::Kernel(_)))
}

/// The line that table outputs end with when kernel programs are in them.
const KERNEL_NOTE: &str = "(memory is sequentially consistent; kernel programs: models at the device scope, fair inside workgroups)\n";

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
        outcomes::table_lines(&mut out, &r.asserts, width);
    }
    if any_kernel(rows) {
        out.push_str(KERNEL_NOTE);
    }
    if rows.iter().any(|r| !r.asserts.is_empty()) {
        out.push_str(outcomes::TABLE_NOTE);
    }
    out
}

/// CSV records, RFC 4180-quoted (a field with a comma, quote or line break
/// is quoted, quotes doubled), `\n` line ends.
fn csv_bytes(records: impl IntoIterator<Item = Vec<String>>) -> Result<Vec<u8>, Failure> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in records {
        w.write_record(&r)
            .map_err(|e| Failure::Other(e.to_string()))?;
    }
    w.into_inner().map_err(|e| Failure::Other(e.to_string()))
}

fn json_bytes(v: &serde_json::Value) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).expect("JSON values serialize");
    s.push('\n');
    s.into_bytes()
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
            let checked = oracle::kernel::check_each_expectation(p, batch_options(max_states));
            let expect: Vec<serde_json::Value> = p
                .program
                .expect
                .iter()
                .zip(checked)
                .map(|(e, c)| {
                    // `agrees` is null when the oracle could not decide.
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
                .collect();
            let mut v = serde_json::json!({
                "test": p.name,
                "source": p.source.display().to_string(),
                "config": format!("{}wg{}inv", p.program.workgroups, p.program.workgroup_size),
                "memory": "sequentially consistent",
                "verdicts": verdicts,
                "deadlock": r.deadlock,
                "expect": expect,
            });
            if !r.asserts.is_empty() {
                v["assertions"] = outcomes::json_answers(&r.asserts);
            }
            v
        }
    }
}

fn classify_output(rows: &[Row], format: Format, max_states: usize) -> Result<Vec<u8>, Failure> {
    Ok(match format {
        Format::Table => print_table(rows).into_bytes(),
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
            let list: Vec<serde_json::Value> =
                rows.iter().map(|r| row_json(r, max_states)).collect();
            json_bytes(&serde_json::Value::Array(list))
        }
    })
}

/// The rows of Table 4 as they are labelled in the paper.
const TABLE4_ROWS: [&str; 4] = ["HSA", "OBE", "LOBE", "full"];

/// Table 4 over the rows; `kernel`: some rows are kernel programs (the
/// output then says how memory behaves).
fn table_output(
    table: &Table4,
    tests: usize,
    format: Format,
    kernel: bool,
) -> Result<Vec<u8>, Failure> {
    Ok(match format {
        Format::Table => {
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
            s.into_bytes()
        }
        Format::Csv => {
            let header = [
                "model",
                "weak_distinguishing",
                "weak_conformance",
                "strong_distinguishing",
                "strong_conformance",
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
            csv_bytes(std::iter::once(header).chain(rows))?
        }
        Format::Json => {
            let rows: Vec<serde_json::Value> = TABLE4_ROWS
                .iter()
                .enumerate()
                .map(|(r, name)| {
                    serde_json::json!({
                        "model": name,
                        "weak": {"distinguishing": table.d[0][r], "conformance": table.c[0][r]},
                        "strong": {"distinguishing": table.d[1][r], "conformance": table.c[1][r]},
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
    })
}

/// The one test or program named by a path (and --test for suites).
fn one_item(path: &Path, name: Option<&str>) -> Result<Item, Failure> {
    let items = load::load_file(path).map_err(|e| Failure::Input(e.to_string()))?;
    match name {
        Some(n) => items.into_iter().find(|t| t.name() == n).ok_or_else(|| {
            Failure::Input(format!("{}: no test named `{}`", shown(path), excerpt(n)))
        }),
        None if items.len() == 1 => Ok(items.into_iter().next().expect("one test")),
        None => Err(Failure::Input(format!(
            "{}: a suite of {} tests; name one with --test NAME",
            shown(path),
            items.len()
        ))),
    }
}

/// The model a kernel-checker command uses: `--model`, else the program's
/// own `model` line; `--occupancy` bounds it.
fn scoped_model(
    item: &Item,
    model: Option<ScopedModel>,
    occupancy: Option<u8>,
) -> Result<ScopedModel, Failure> {
    let mut m = match (model, item) {
        (Some(m), _) => m,
        (None, Item::Kernel(p)) => p.program.model.ok_or_else(|| {
            Failure::Input(format!(
                "{}: the program has no `model` line: name one with --model (e.g. OBE, or \"OBE, subgroup=unfair\")",
                shown(&p.source)
            ))
        })?,
        (None, Item::Axb(t)) => {
            return Err(Failure::Input(format!(
                "{}: name a model with --model (HSA, OBE, LOBE, WEAK_FAIR, ...)",
                shown(&t.source)
            )))
        }
    };
    if occupancy.is_some() {
        m.occupancy = occupancy;
    }
    Ok(m)
}

/// An AXB test with a model of the eleven goes to the AXB engine, whose
/// outputs are those of the paper's tool; anything else to the kernel
/// checker (an AXB test as the kernel program it embeds into).
fn axb_case(item: &Item, m: &ScopedModel) -> Option<(NamedTest, Model)> {
    match item {
        Item::Axb(t) => m.as_flat().map(|model| (t.clone(), model)),
        Item::Kernel(_) => None,
    }
}

/// The checker's options for one witness or drawing: no reductions, so
/// that every state shown is one of the program.
fn witness_options(max_states: usize) -> oracle::kernel::Options {
    oracle::kernel::Options {
        max_states,
        reductions: oracle::kernel::product::Reductions::NONE,
    }
}

/// Why a command stopped early.
enum Failure {
    /// Standard output went away (`oracle ... | head`): stop quietly.
    Pipe,
    /// Bad input or usage: exit status 2.
    Input(String),
    /// Anything else (an output that cannot be written): exit status 1.
    Other(String),
}

/// Writes a command's complete output to standard output, or to a file
/// replaced atomically (a failed run never leaves half a file).
fn emit(out: &Out, bytes: &[u8]) -> Result<(), Failure> {
    if out.out == Path::new("-") {
        let mut o = std::io::stdout().lock();
        o.write_all(bytes).and_then(|()| o.flush()).map_err(|e| {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                Failure::Pipe
            } else {
                Failure::Other(format!("cannot write to standard output: {e}"))
            }
        })
    } else {
        progress_litmus::axb::load::write_atomically(&out.out, bytes)
            .map_err(|e| Failure::Other(format!("cannot write {}: {e}", shown(&out.out))))
    }
}

/// Runs a command; `Ok(false)` when some inputs could not be read (their
/// errors are printed; the rest was reported).
fn run(cli: Cli) -> Result<bool, Failure> {
    let max_states = cli.max_states;
    match cli.command {
        Command::Classify { paths, format, out } => {
            let (rows, _, bad) = classify(&paths, max_states);
            if rows.is_empty() && bad {
                // Nothing to show: the error lines already say why, and an
                // empty table or CSV would read as a successful, empty run.
                return Ok(false);
            }
            emit(&out, &classify_output(&rows, format, max_states)?)?;
            Ok(!bad)
        }
        Command::Outcomes(a) => outcomes::run(a, max_states),
        Command::Explain {
            path,
            model,
            test,
            occupancy,
            format,
            out,
        } => {
            let item = one_item(&path, test.as_deref())?;
            let m = scoped_model(&item, model, occupancy)?;
            let bytes = match axb_case(&item, &m) {
                Some((t, model)) => {
                    let a = oracle::try_analyse(&t.entry.test, model, max_states).map_err(|e| {
                        Failure::Input(too_large(&t, e, oracle::PRODUCT_BYTES_PER_STATE))
                    })?;
                    match format {
                        TextFormat::Text => {
                            oracle::axb::explain::explain(&t.entry.test, &t.name, &a).into_bytes()
                        }
                        TextFormat::Json => json_bytes(&oracle::axb::explain::explain_json(
                            &t.entry.test,
                            &t.name,
                            &a,
                        )),
                    }
                }
                None => explain_kernel(&item, &m, format, max_states)?,
            };
            emit(&out, &bytes)?;
            Ok(true)
        }
        Command::Lts {
            path,
            model,
            test,
            occupancy,
            format,
            out,
            dot: _,
        } => {
            let item = one_item(&path, test.as_deref())?;
            let model = match model {
                Some(m) => Some(scoped_model(&item, Some(m), occupancy)?),
                None => None,
            };
            let bytes = match (&item, model) {
                (Item::Axb(t), None) => {
                    let test = &t.entry.test;
                    let lts = progress_litmus::axb::space::program_space_bounded(test, max_states)
                        .map_err(|e| {
                            Failure::Input(too_large(t, e, oracle::PRODUCT_BYTES_PER_STATE))
                        })?;
                    match format {
                        LtsFormat::Dot => {
                            oracle::axb::lts::program_dot(test, &t.name, &lts).into_bytes()
                        }
                        LtsFormat::Json => {
                            json_bytes(&oracle::axb::lts::program_json(test, &t.name, &lts))
                        }
                    }
                }
                (_, Some(m)) if axb_case(&item, &m).is_some() => {
                    let (t, model) = axb_case(&item, &m).expect("an AXB case");
                    let test = &t.entry.test;
                    let p =
                        oracle::axb::product::Product::build_bounded(test, model.base, max_states)
                            .map_err(|e| {
                                Failure::Input(too_large(&t, e, oracle::PRODUCT_BYTES_PER_STATE))
                            })?;
                    match format {
                        LtsFormat::Dot => oracle::axb::dot::to_dot(test, &t.name, &p).into_bytes(),
                        LtsFormat::Json => {
                            json_bytes(&oracle::axb::lts::product_json(test, &t.name, model, &p))
                        }
                    }
                }
                (_, m) => {
                    if format == LtsFormat::Json {
                        return Err(Failure::Input(format!(
                            "{}: lts --format json is for AXB tests under the eleven models; kernel programs and scoped models are drawn as DOT",
                            shown(item.source())
                        )));
                    }
                    let program = item.program();
                    oracle::kernel::dot::to_dot(
                        &program,
                        item.name(),
                        m.as_ref(),
                        witness_options(max_states),
                    )
                    .map_err(|e| Failure::Input(item_failed(&item, &e)))?
                    .into_bytes()
                }
            };
            emit(&out, &bytes)?;
            Ok(true)
        }
        Command::Table { paths, format, out } => {
            let (rows, _, bad) = classify(&paths, max_states);
            if rows.is_empty() && bad {
                return Ok(false);
            }
            let table = Table4::from_verdicts(rows.iter().map(|r| &r.verdicts));
            emit(
                &out,
                &table_output(&table, rows.len(), format, any_kernel(&rows))?,
            )?;
            Ok(!bad)
        }
        Command::Label {
            paths,
            name,
            out,
            partial,
        } => {
            let (rows, refused, bad) = classify(&paths, max_states);
            if rows.is_empty() && bad {
                return Ok(false);
            }
            let kernel = any_kernel(&rows) || refused.iter().any(|i| matches!(i, Item::Kernel(_)));
            let mut note = String::new();
            if !refused.is_empty() {
                if !partial {
                    return Err(Failure::Input(format!(
                        "{}: not written: {} test{} could not be labelled (see above); raise --max-states, or write the others with --partial",
                        shown(&out.out),
                        refused.len(),
                        if refused.len() == 1 { "" } else { "s" }
                    )));
                }
                let names: Vec<&str> = refused.iter().map(|t| t.name()).collect();
                note = if kernel {
                    format!(
                        "Left out, no verdict (state space over --max-states {max_states}, or a schedule goes wrong): {}.",
                        names.join(", ")
                    )
                } else {
                    format!(
                        "Left out, state space over --max-states {max_states}: {}.",
                        names.join(", ")
                    )
                };
            }
            let bytes = if kernel {
                // Kernel programs make a kernel suite; AXB tests in it are
                // the kernel programs they embed into.
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
            } else {
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
            };
            emit(&out, bytes.as_bytes())?;
            Ok(!bad)
        }
    }
}

/// The error line of an input the kernel checker could not decide.
fn item_failed(item: &Item, e: &KernelError) -> String {
    format!("{}: test `{}`: {e}", shown(item.source()), item.name())
}

/// `explain` by the kernel checker: the text, or JSON with the verdict,
/// the state count and the text.
fn explain_kernel(
    item: &Item,
    m: &ScopedModel,
    format: TextFormat,
    max_states: usize,
) -> Result<Vec<u8>, Failure> {
    let program = item.program();
    let opts = witness_options(max_states);
    let fail = |e: KernelError| Failure::Input(item_failed(item, &e));
    let text = oracle::kernel::explain::explain(
        &program,
        item.name(),
        m,
        opts,
        oracle::kernel::explain::Show::Program,
    )
    .map_err(fail)?;
    Ok(match format {
        TextFormat::Text => text.into_bytes(),
        TextFormat::Json => {
            let d = oracle::kernel::decide(&program, m, opts).map_err(fail)?;
            json_bytes(&serde_json::json!({
                "test": item.name(),
                "source": item.source().display().to_string(),
                "model": m.to_string(),
                "memory": "sequentially consistent",
                "verdict": d.verdict.as_char().to_string(),
                "deadlock": d.deadlock,
                "states": d.states,
                "transitions": d.transitions,
                "explanation": text,
            }))
        }
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse(); // usage errors exit here with status 2
                            // A panic is a bug; it is reported by the panic hook and exits with 1,
                            // not Rust's 101, so that scripts see the documented statuses.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)));
    match result {
        Ok(Ok(true)) | Ok(Err(Failure::Pipe)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => ExitCode::from(2),
        // Every message is escaped on its way out: it may quote a path or
        // an input (one rule for the three tools, `progress_litmus::error::printable`).
        Ok(Err(Failure::Input(e))) => {
            eprintln!("error: {}", printable(&e.to_string()));
            ExitCode::from(2)
        }
        Ok(Err(Failure::Other(e))) => {
            eprintln!("error: {}", printable(&e.to_string()));
            ExitCode::from(1)
        }
        Err(_) => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_is_rfc_4180_quoted() {
        // The name rule keeps such names out of loaded tests; the writer
        // must be right regardless.
        let rows = vec![
            vec!["a\"b".to_string(), "x,y".to_string(), "p\nq".to_string()],
            vec!["plain".to_string(), String::new(), "r\r".to_string()],
        ];
        let bytes = csv_bytes(rows).ok().unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "\"a\"\"b\",\"x,y\",\"p\nq\"\nplain,,\"r\r\"\n"
        );
    }
}
