//! `oracle`: termination verdicts for progress litmus tests.

use axb::buckets::Table4;
use axb::load::{self, NamedTest};
use axb::{model, FileError, Model, Verdicts};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "oracle",
    version,
    about = "Is a progress litmus test guaranteed to terminate under a progress model?"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Verdicts under all 11 models for each test (files, suites, directories).
    Classify {
        /// `.ron` tests or suites, artifact `.txt` tests, or directories of them.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Why a test passes or fails under one model, with a witness schedule.
    Explain {
        /// A test file, or a suite with --test.
        path: PathBuf,
        /// The model: HSA, OBE, LOBE, WEAK_FAIR, HSA_STRONG, ..., UNFAIR (or `strong-lobe`, `hsa+obe`, ...).
        #[arg(long, value_parser = parse_model)]
        model: Model,
        /// The test's name, when PATH is a suite.
        #[arg(long)]
        test: Option<String>,
    },
    /// The state space as Graphviz DOT.
    Lts {
        /// A test file, or a suite with --test.
        path: PathBuf,
        /// Show the product with this model's fair set; without it, the test's own space.
        #[arg(long, value_parser = parse_model)]
        model: Option<Model>,
        /// The test's name, when PATH is a suite.
        #[arg(long)]
        test: Option<String>,
        /// Print DOT (the only output format so far).
        #[arg(long, required = true)]
        dot: bool,
    },
    /// Table 4 of the paper (distinguishing and conformance tests) for the given tests.
    Table {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Write the tests as a RON suite with their verdicts under all 11 models.
    Label {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The suite's name.
        #[arg(long, default_value = "labelled")]
        name: String,
        /// Output file.
        #[arg(short, long)]
        out: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Table,
    Csv,
    Json,
}

fn parse_model(s: &str) -> Result<Model, String> {
    Model::parse(s).ok_or_else(|| {
        let names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
        format!("unknown model `{s}`; expected one of {}", names.join(", "))
    })
}

/// Prints load errors; returns whether there were any.
fn report(errors: &[FileError]) -> bool {
    for e in errors {
        eprintln!("error: {e}");
    }
    !errors.is_empty()
}

/// Loads tests and their verdicts, sorted by name.
fn classify(paths: &[PathBuf]) -> (Vec<(NamedTest, Verdicts)>, bool) {
    let (mut tests, errors) = load::load_all(paths);
    let bad = report(&errors);
    tests.sort_by(|a, b| a.name.cmp(&b.name).then(a.source.cmp(&b.source)));
    let refs: Vec<&axb::Test> = tests.iter().map(|t| &t.entry.test).collect();
    let verdicts = oracle::verdicts_all(&refs);
    (tests.into_iter().zip(verdicts).collect(), bad)
}

fn print_table(out: &mut impl Write, rows: &[(NamedTest, Verdicts)]) -> std::io::Result<()> {
    use axb::{Base::*, Fairness::*};
    let width = rows
        .iter()
        .map(|(t, _)| t.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let order = [Hsa, Obe, HsaObe, Lobe, Fair];
    writeln!(
        out,
        "{:<width$}  weak:   HSA  OBE  HSA+OBE  LOBE  fair  strong: HSA  OBE  HSA+OBE  LOBE  fair  unfair",
        "test"
    )?;
    for (t, v) in rows {
        let cell = |b, f| v.get(Model::new(b, f)).as_char();
        let w: Vec<char> = order.iter().map(|&b| cell(b, Weak)).collect();
        let s: Vec<char> = order.iter().map(|&b| cell(b, Strong)).collect();
        writeln!(
            out,
            "{:<width$}          {}    {}    {}        {}     {}             {}    {}    {}        {}     {}     {}",
            t.name, w[0], w[1], w[2], w[3], w[4], s[0], s[1], s[2], s[3], s[4], cell(Unfair, Weak)
        )?;
    }
    Ok(())
}

/// The one test named by a path (and --test for suites).
fn one_test(path: &std::path::Path, name: Option<&str>) -> Result<NamedTest, String> {
    let tests = load::load_file(path).map_err(|e| e.to_string())?;
    match name {
        Some(n) => tests
            .into_iter()
            .find(|t| t.name == n)
            .ok_or_else(|| format!("{}: no test named `{n}`", path.display())),
        None if tests.len() == 1 => Ok(tests.into_iter().next().unwrap()),
        None => Err(format!(
            "{}: a suite of {} tests; name one with --test NAME",
            path.display(),
            tests.len()
        )),
    }
}

/// Why a command stopped early.
enum Failure {
    /// Standard output went away (`oracle ... | head`): stop quietly.
    Pipe,
    Msg(String),
}

impl From<String> for Failure {
    fn from(s: String) -> Failure {
        Failure::Msg(s)
    }
}

fn io(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::Pipe
    } else {
        Failure::Msg(e.to_string())
    }
}

fn run(cli: Cli) -> Result<bool, Failure> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match cli.command {
        Command::Classify { paths, format } => {
            let (rows, bad) = classify(&paths);
            if rows.is_empty() && bad {
                // Nothing to show: the error lines already say why, and an
                // empty table or CSV would read as a successful, empty run.
                return Ok(false);
            }
            match format {
                Format::Table => print_table(&mut out, &rows).map_err(io)?,
                Format::Csv => {
                    writeln!(out, "{}", model::csv_header()).map_err(io)?;
                    for (t, v) in &rows {
                        writeln!(out, "{},{}", t.name, v.csv()).map_err(io)?;
                    }
                }
                Format::Json => {
                    let list: Vec<serde_json::Value> = rows
                        .iter()
                        .map(|(t, v)| {
                            let verdicts: serde_json::Map<String, serde_json::Value> = Model::ALL
                                .iter()
                                .map(|m| {
                                    (m.name().to_string(), v.get(*m).as_char().to_string().into())
                                })
                                .collect();
                            serde_json::json!({
                                "test": t.name,
                                "source": t.source.display().to_string(),
                                "config": t.entry.test.config(),
                                "verdicts": verdicts,
                            })
                        })
                        .collect();
                    serde_json::to_writer_pretty(&mut out, &list).map_err(|e| io(e.into()))?;
                    writeln!(out).map_err(io)?;
                }
            }
            out.flush().map_err(io)?;
            Ok(!bad)
        }
        Command::Explain { path, model, test } => {
            let t = one_test(&path, test.as_deref())?;
            let a = oracle::analyse(&t.entry.test, model);
            write!(
                out,
                "{}",
                oracle::explain::explain(&t.entry.test, &t.name, &a)
            )
            .map_err(io)?;
            Ok(true)
        }
        Command::Lts {
            path, model, test, ..
        } => {
            let t = one_test(&path, test.as_deref())?;
            let dot = match model {
                Some(m) => {
                    let p = oracle::product::Product::build(&t.entry.test, m.base);
                    oracle::dot::to_dot(&t.entry.test, &t.name, &p)
                }
                None => {
                    let test = &t.entry.test;
                    let lts = axb::space::program_space(test);
                    let m = axb::machine::Machine::new(test);
                    let locs = test.num_locs().max(1);
                    axb::space::to_dot(
                        &lts.graph,
                        &t.name,
                        |_, s| m.describe(*s, locs),
                        |st| {
                            format!(
                                "T{} {}",
                                st.thread,
                                axb::pseudo::at(test, st.thread as usize, st.pc as usize)
                            )
                        },
                    )
                }
            };
            write!(out, "{dot}").map_err(io)?;
            Ok(true)
        }
        Command::Table { paths } => {
            let (rows, bad) = classify(&paths);
            let table = Table4::from_verdicts(rows.iter().map(|(_, v)| v));
            write!(out, "{table}").map_err(io)?;
            if table.unbucketed > 0 {
                writeln!(
                    out,
                    "({} tests fail even under strong fairness and are in no bucket)",
                    table.unbucketed
                )
                .map_err(io)?;
            }
            Ok(!bad)
        }
        Command::Label {
            paths,
            name,
            out: file,
        } => {
            let (rows, bad) = classify(&paths);
            let suite = axb::Suite {
                name,
                note: String::new(),
                tests: rows
                    .into_iter()
                    .map(|(t, v)| {
                        let mut e = t.entry;
                        e.verdicts = Some(v);
                        e
                    })
                    .collect(),
            };
            axb::load::write_atomically(&file, load::suite_to_ron(&suite).as_bytes())
                .map_err(|e| Failure::Msg(format!("{}: {e}", file.display())))?;
            Ok(!bad)
        }
    }
}

fn main() -> ExitCode {
    // Hook: kernel programs (`.litmus`, `Kernel` RON) have their own command line.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = oracle::kernel::cli::intercept(&args) {
        return code;
    }
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(Failure::Pipe) => ExitCode::SUCCESS,
        Err(Failure::Msg(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
