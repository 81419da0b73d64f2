//! `oracle`: termination verdicts for progress litmus tests.

use axb::buckets::Table4;
use axb::error::{excerpt, printable};
use axb::load::{self, NamedTest};
use axb::{FileError, Model, Verdicts};
use clap::{Args, Parser, Subcommand, ValueEnum};
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
    /// test is one error line; the others are still decided). A state takes
    /// about 100 bytes in classify, table and label, about 200 in explain
    /// and lts: the default keeps a space under 2 GB or 4 GB.
    #[arg(long, global = true, value_name = "N", default_value_t = oracle::DEFAULT_MAX_STATES, value_parser = parse_max_states)]
    max_states: usize,
}

#[derive(Subcommand)]
enum Command {
    /// Verdicts under all 11 models for each test (files, suites, directories), in input order.
    #[command(after_help = COMMAND_AFTER_HELP)]
    Classify {
        /// `.ron` tests or suites, artifact `.txt` tests, or directories of them.
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
        /// The model: HSA, OBE, LOBE, WEAK_FAIR, HSA_STRONG, ..., UNFAIR (or `strong-lobe`, `hsa+obe`, ...).
        #[arg(long, value_parser = parse_model)]
        model: Model,
        /// The test's name, when PATH is a suite.
        #[arg(long)]
        test: Option<String>,
        /// `text` for people; `json`: verdict, model and the witness schedule step by step.
        #[arg(long, value_enum, default_value_t = TextFormat::Text)]
        format: TextFormat,
        #[command(flatten)]
        out: Out,
    },
    /// The state space, as Graphviz DOT or JSON.
    #[command(after_help = COMMAND_AFTER_HELP)]
    Lts {
        /// A test file, or a suite with --test.
        path: PathBuf,
        /// Show the product with this model's fair set; without it, the test's own space.
        #[arg(long, value_parser = parse_model)]
        model: Option<Model>,
        /// The test's name, when PATH is a suite.
        #[arg(long)]
        test: Option<String>,
        /// `dot` (Graphviz) or `json` (states and transitions).
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
    /// Write the tests as a RON suite with their verdicts under all 11 models.
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
    let limit = oracle::shared_space::MAX_STATES_LIMIT;
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

fn parse_model(s: &str) -> Result<Model, String> {
    Model::parse(s).ok_or_else(|| {
        let names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
        format!(
            "unknown model `{}`; expected one of {}",
            excerpt(s),
            names.join(", ")
        )
    })
}

fn parse_suite_name(s: &str) -> Result<String, String> {
    axb::test::check_name(s)
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
        eprintln!("error: {e}");
    }
    !errors.is_empty()
}

/// Loads tests and their verdicts, in input order: files in the order
/// given, each directory's files sorted, each suite's tests in suite order.
/// Also returns the tests over the bound (reported on stderr) and whether
/// any file or test failed.
fn classify(
    paths: &[PathBuf],
    max_states: usize,
) -> (Vec<(NamedTest, Verdicts)>, Vec<NamedTest>, bool) {
    let (tests, errors) = load::load_all(paths);
    let mut bad = report(&errors);
    let refs: Vec<&axb::Test> = tests.iter().map(|t| &t.entry.test).collect();
    let verdicts = oracle::try_verdicts_all(&refs, max_states);
    let mut rows = Vec::with_capacity(tests.len());
    let mut refused = Vec::new();
    for (t, v) in tests.into_iter().zip(verdicts) {
        match v {
            Ok(v) => rows.push((t, v)),
            Err(e) => {
                eprintln!("error: {}", too_large(&t, e, oracle::BYTES_PER_STATE));
                bad = true;
                refused.push(t);
            }
        }
    }
    (rows, refused, bad)
}

fn print_table(rows: &[(NamedTest, Verdicts)]) -> String {
    use axb::{Base::*, Fairness::*};
    use std::fmt::Write;
    let width = rows
        .iter()
        .map(|(t, _)| t.name.len())
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
    for (t, v) in rows {
        let cell = |b, f| v.get(Model::new(b, f)).as_char();
        let w: Vec<char> = order.iter().map(|&b| cell(b, Weak)).collect();
        let s: Vec<char> = order.iter().map(|&b| cell(b, Strong)).collect();
        let _ = writeln!(
            out,
            "{:<width$}          {}    {}    {}        {}     {}             {}    {}    {}        {}     {}     {}",
            t.name, w[0], w[1], w[2], w[3], w[4], s[0], s[1], s[2], s[3], s[4], cell(Unfair, Weak)
        );
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

fn classify_output(rows: &[(NamedTest, Verdicts)], format: Format) -> Result<Vec<u8>, Failure> {
    Ok(match format {
        Format::Table => print_table(rows).into_bytes(),
        Format::Csv => {
            let header = std::iter::once("test".to_string())
                .chain(Model::ALL.iter().map(|m| m.name().to_string()));
            let records = rows.iter().map(|(t, v)| {
                std::iter::once(t.name.clone())
                    .chain(v.0.iter().map(|x| x.as_char().to_string()))
                    .collect()
            });
            csv_bytes(std::iter::once(header.collect()).chain(records))?
        }
        Format::Json => {
            let list: Vec<serde_json::Value> = rows
                .iter()
                .map(|(t, v)| {
                    let verdicts: serde_json::Map<String, serde_json::Value> = Model::ALL
                        .iter()
                        .map(|m| (m.name().to_string(), v.get(*m).as_char().to_string().into()))
                        .collect();
                    serde_json::json!({
                        "test": t.name,
                        "source": t.source.display().to_string(),
                        "config": t.entry.test.config(),
                        "verdicts": verdicts,
                    })
                })
                .collect();
            json_bytes(&serde_json::Value::Array(list))
        }
    })
}

/// The rows of Table 4 as they are labelled in the paper.
const TABLE4_ROWS: [&str; 4] = ["HSA", "OBE", "LOBE", "full"];

fn table_output(table: &Table4, tests: usize, format: Format) -> Result<Vec<u8>, Failure> {
    Ok(match format {
        Format::Table => {
            let mut s = table.to_string();
            if table.unbucketed > 0 {
                s.push_str(&format!(
                    "({} tests fail even under strong fairness and are in no bucket)\n",
                    table.unbucketed
                ));
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
            json_bytes(&serde_json::json!({
                "tests": tests,
                "rows": rows,
                "unbucketed": table.unbucketed,
            }))
        }
    })
}

/// The one test named by a path (and --test for suites).
fn one_test(path: &Path, name: Option<&str>) -> Result<NamedTest, Failure> {
    let tests = load::load_file(path).map_err(|e| Failure::Input(e.to_string()))?;
    match name {
        Some(n) => tests.into_iter().find(|t| t.name == n).ok_or_else(|| {
            Failure::Input(format!("{}: no test named `{}`", shown(path), excerpt(n)))
        }),
        None if tests.len() == 1 => Ok(tests.into_iter().next().expect("one test")),
        None => Err(Failure::Input(format!(
            "{}: a suite of {} tests; name one with --test NAME",
            shown(path),
            tests.len()
        ))),
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
        load::write_atomically(&out.out, bytes)
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
            emit(&out, &classify_output(&rows, format)?)?;
            Ok(!bad)
        }
        Command::Explain {
            path,
            model,
            test,
            format,
            out,
        } => {
            let t = one_test(&path, test.as_deref())?;
            let a = oracle::try_analyse(&t.entry.test, model, max_states)
                .map_err(|e| Failure::Input(too_large(&t, e, oracle::PRODUCT_BYTES_PER_STATE)))?;
            let bytes = match format {
                TextFormat::Text => {
                    oracle::explain::explain(&t.entry.test, &t.name, &a).into_bytes()
                }
                TextFormat::Json => {
                    json_bytes(&oracle::explain::explain_json(&t.entry.test, &t.name, &a))
                }
            };
            emit(&out, &bytes)?;
            Ok(true)
        }
        Command::Lts {
            path,
            model,
            test,
            format,
            out,
            dot: _,
        } => {
            let t = one_test(&path, test.as_deref())?;
            let test = &t.entry.test;
            let bytes = match (model, format) {
                (Some(m), format) => {
                    let p = oracle::product::Product::build_bounded(test, m.base, max_states)
                        .map_err(|e| {
                            Failure::Input(too_large(&t, e, oracle::PRODUCT_BYTES_PER_STATE))
                        })?;
                    match format {
                        LtsFormat::Dot => oracle::dot::to_dot(test, &t.name, &p).into_bytes(),
                        LtsFormat::Json => {
                            json_bytes(&oracle::lts::product_json(test, &t.name, m, &p))
                        }
                    }
                }
                (None, format) => {
                    let lts = axb::space::program_space_bounded(test, max_states).map_err(|e| {
                        Failure::Input(too_large(&t, e, oracle::PRODUCT_BYTES_PER_STATE))
                    })?;
                    match format {
                        LtsFormat::Dot => {
                            oracle::lts::program_dot(test, &t.name, &lts).into_bytes()
                        }
                        LtsFormat::Json => {
                            json_bytes(&oracle::lts::program_json(test, &t.name, &lts))
                        }
                    }
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
            let table = Table4::from_verdicts(rows.iter().map(|(_, v)| v));
            emit(&out, &table_output(&table, rows.len(), format)?)?;
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
                let names: Vec<&str> = refused.iter().map(|t| t.name.as_str()).collect();
                note = format!(
                    "Left out, state space over --max-states {max_states}: {}.",
                    names.join(", ")
                );
            }
            let suite = axb::Suite {
                name,
                note,
                tests: rows
                    .into_iter()
                    .map(|(t, v)| {
                        let mut e = t.entry;
                        e.verdicts = Some(v);
                        e
                    })
                    .collect(),
            };
            emit(&out, load::suite_to_ron(&suite).as_bytes())?;
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
    let cli = Cli::parse(); // usage errors exit here with status 2
                            // A panic is a bug; it is reported by the panic hook and exits with 1,
                            // not Rust's 101, so that scripts see the documented statuses.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)));
    match result {
        Ok(Ok(true)) | Ok(Err(Failure::Pipe)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => ExitCode::from(2),
        Ok(Err(Failure::Input(e))) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Ok(Err(Failure::Other(e))) => {
            eprintln!("error: {e}");
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
