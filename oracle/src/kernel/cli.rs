//! The oracle's commands for kernel programs (`.litmus` files, `Kernel`
//! and `KernelSuite` RON files), mixed freely with AXB tests.
//!
//! `oracle`'s `main` hands its arguments here first ([`intercept`]); when
//! some input path is, or contains, a kernel program, the whole command
//! runs here: the same commands, flags and output formats as for AXB
//! tests, with verdicts under the eleven models at the device scope (fair
//! inside workgroups) for `classify`, `table` and `label`, and any scoped
//! model for `explain` and `lts`. AXB tests in the same run are decided by
//! the AXB engine, which agrees with the kernel checker on every one of
//! them (the tests prove it).

use super::{dot, explain, flat_verdicts, Decision, KernelError, Options, DEFAULT_MAX_STATES};
use crate::kernel::product::Reductions;
use axb::buckets::Table4;
use axb::kernel::load::{self, Item, NamedProgram};
use axb::kernel::program::Outcome;
use axb::kernel::ron::{self, KernelEntry, KernelSuite};
use axb::kernel::ScopedModel;
use axb::{model, FileError, Model, Verdict, Verdicts};
use clap::{Parser, Subcommand, ValueEnum};
use rayon::prelude::*;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "oracle")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Table,
    Csv,
    Json,
    Text,
    Dot,
}

#[derive(Subcommand)]
enum Command {
    Classify {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        #[arg(short, long)]
        out: Option<PathBuf>,
        #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
        max_states: usize,
    },
    Explain {
        path: PathBuf,
        #[arg(long)]
        model: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        #[arg(long)]
        test: Option<String>,
        #[arg(long)]
        occupancy: Option<u8>,
        #[arg(short, long)]
        out: Option<PathBuf>,
        #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
        max_states: usize,
    },
    Lts {
        path: PathBuf,
        #[arg(long)]
        model: Option<String>,
        #[arg(long)]
        test: Option<String>,
        #[arg(long)]
        occupancy: Option<u8>,
        #[arg(long)]
        dot: bool,
        #[arg(long, value_enum)]
        format: Option<Format>,
        #[arg(short, long)]
        out: Option<PathBuf>,
        #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
        max_states: usize,
    },
    Table {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(short, long)]
        out: Option<PathBuf>,
        #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
        max_states: usize,
    },
    Label {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long, default_value = "labelled")]
        name: String,
        #[arg(short, long)]
        out: PathBuf,
        #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
        max_states: usize,
    },
}

impl Command {
    fn paths(&self) -> Vec<PathBuf> {
        match self {
            Command::Classify { paths, .. }
            | Command::Table { paths, .. }
            | Command::Label { paths, .. } => paths.clone(),
            Command::Explain { path, .. } | Command::Lts { path, .. } => vec![path.clone()],
        }
    }
}

/// Runs the command if it concerns kernel programs; `None` leaves it to
/// the AXB command line (which also reports usage errors).
pub fn intercept(args: &[OsString]) -> Option<ExitCode> {
    let cli = Cli::try_parse_from(args).ok()?;
    if !load::mentions_kernel(&cli.command.paths()) {
        return None;
    }
    Some(match run(cli.command) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(Failure::Pipe) => ExitCode::SUCCESS,
        Err(Failure::Msg(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
    })
}

enum Failure {
    Pipe,
    Msg(String),
}

fn io(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::Pipe
    } else {
        Failure::Msg(e.to_string())
    }
}

/// Writes command output to `-o FILE` (atomically), or to stdout for none
/// or `-o -`.
fn emit(out: &Option<PathBuf>, text: &str) -> Result<(), Failure> {
    match out {
        Some(p) if p.as_os_str() != "-" => axb::load::write_atomically(p, text.as_bytes())
            .map_err(|e| Failure::Msg(format!("{}: {e}", p.display()))),
        _ => {
            let stdout = std::io::stdout();
            let mut w = stdout.lock();
            w.write_all(text.as_bytes()).map_err(io)?;
            w.flush().map_err(io)
        }
    }
}

/// One classified input.
struct Row {
    item: Item,
    result: Result<(Verdicts, bool), KernelError>,
}

fn classify(paths: &[PathBuf], max_states: usize) -> (Vec<Row>, bool) {
    let (mut items, errors) = load::load_all(paths);
    let mut bad = report(&errors);
    items.sort_by(|a, b| a.name().cmp(b.name()).then(a.source().cmp(b.source())));
    let opts = Options {
        max_states,
        reductions: Reductions::ALL,
    };
    let rows: Vec<Row> = items
        .into_par_iter()
        .map(|item| {
            let result = match &item {
                Item::Axb(t) => Ok((crate::verdicts(&t.entry.test), false)),
                Item::Kernel(p) => flat_verdicts(&p.program, opts),
            };
            Row { item, result }
        })
        .collect();
    for r in &rows {
        if let Err(e) = &r.result {
            eprintln!(
                "error: {}: test `{}`: {e}",
                r.item.source().display(),
                r.item.name()
            );
            bad = true;
        }
    }
    for r in &rows {
        if let (Item::Kernel(p), Ok(_)) = (&r.item, &r.result) {
            for (m, want, got) in check_expectations(p, opts) {
                eprintln!(
                    "warning: {}: test `{}`: expect {m}: {} but the oracle says {got}",
                    p.source.display(),
                    p.name,
                    want.word()
                );
            }
        }
    }
    (rows, bad)
}

fn report(errors: &[FileError]) -> bool {
    for e in errors {
        eprintln!("error: {e}");
    }
    !errors.is_empty()
}

/// The expectations of a program the oracle disagrees with: (model,
/// expected, what the oracle says).
pub fn check_expectations(p: &NamedProgram, opts: Options) -> Vec<(ScopedModel, Outcome, String)> {
    let mut bad = Vec::new();
    for e in &p.program.expect {
        let got = match super::decide(&p.program, &e.model, opts) {
            Ok(d) => outcome(&d),
            Err(err) => {
                bad.push((e.model, e.outcome, format!("no verdict ({err})")));
                continue;
            }
        };
        let ok = match e.outcome {
            Outcome::P => got == Outcome::P,
            Outcome::F => got != Outcome::P,
            Outcome::Deadlock => got == Outcome::Deadlock,
        };
        if !ok {
            bad.push((e.model, e.outcome, got.word().to_string()));
        }
    }
    bad
}

/// A decision as the outcome words of `expect` lines.
pub fn outcome(d: &Decision) -> Outcome {
    if d.verdict == Verdict::P {
        Outcome::P
    } else if d.deadlock {
        Outcome::Deadlock
    } else {
        Outcome::F
    }
}

fn table(rows: &[(&Row, Verdicts)]) -> String {
    use axb::{Base::*, Fairness::*};
    let width = rows
        .iter()
        .map(|(r, _)| r.item.name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    let order = [Hsa, Obe, HsaObe, Lobe, Fair];
    let mut out = format!(
        "{:<width$}  weak:   HSA  OBE  HSA+OBE  LOBE  fair  strong: HSA  OBE  HSA+OBE  LOBE  fair  unfair\n",
        "test"
    );
    for (r, v) in rows {
        let cell = |b, f| v.get(Model::new(b, f)).as_char();
        let w: Vec<char> = order.iter().map(|&b| cell(b, Weak)).collect();
        let s: Vec<char> = order.iter().map(|&b| cell(b, Strong)).collect();
        out.push_str(&format!(
            "{:<width$}          {}    {}    {}        {}     {}             {}    {}    {}        {}     {}     {}\n",
            r.item.name(), w[0], w[1], w[2], w[3], w[4], s[0], s[1], s[2], s[3], s[4], cell(Unfair, Weak)
        ));
    }
    out.push_str("(memory is sequentially consistent; kernel programs: models at the device scope, fair inside workgroups)\n");
    out
}

fn run(command: Command) -> Result<bool, Failure> {
    match command {
        Command::Classify {
            paths,
            format,
            out,
            max_states,
        } => {
            let (rows, bad) = classify(&paths, max_states);
            let ok: Vec<(&Row, Verdicts)> = rows
                .iter()
                .filter_map(|r| r.result.as_ref().ok().map(|(v, _)| (r, *v)))
                .collect();
            if ok.is_empty() && bad {
                return Ok(false);
            }
            let text = match format {
                Format::Dot => {
                    return Err(Failure::Msg(
                        "classify prints --format table, csv or json".into(),
                    ))
                }
                Format::Table | Format::Text => table(&ok),
                Format::Csv => {
                    let mut s = model::csv_header();
                    s.push('\n');
                    for (r, v) in &ok {
                        s.push_str(&format!("{},{}\n", r.item.name(), v.csv()));
                    }
                    s
                }
                Format::Json => {
                    let opts = Options {
                        max_states,
                        reductions: Reductions::ALL,
                    };
                    let list: Vec<serde_json::Value> = ok
                        .iter()
                        .map(|(r, v)| {
                            let verdicts: serde_json::Map<String, serde_json::Value> = Model::ALL
                                .iter()
                                .map(|m| {
                                    (m.name().to_string(), v.get(*m).as_char().to_string().into())
                                })
                                .collect();
                            let deadlock = r.result.as_ref().map(|x| x.1).unwrap_or(false);
                            let mut obj = serde_json::json!({
                                "test": r.item.name(),
                                "source": r.item.source().display().to_string(),
                                "memory": "sequentially consistent",
                                "verdicts": verdicts,
                                "deadlock": deadlock,
                            });
                            if let Item::Kernel(p) = &r.item {
                                let pr = &p.program;
                                obj["config"] =
                                    format!("{}wg{}inv", pr.workgroups, pr.workgroup_size).into();
                                let mismatches = check_expectations(p, opts);
                                let exps: Vec<serde_json::Value> = pr
                                    .expect
                                    .iter()
                                    .map(|e| {
                                        let wrong =
                                            mismatches.iter().find(|(m, _, _)| *m == e.model);
                                        serde_json::json!({
                                            "model": e.model.to_string(),
                                            "expected": e.outcome.word(),
                                            "agrees": wrong.is_none(),
                                        })
                                    })
                                    .collect();
                                obj["expect"] = exps.into();
                            } else if let Item::Axb(t) = &r.item {
                                obj["config"] = t.entry.test.config().into();
                            }
                            obj
                        })
                        .collect();
                    let mut s = serde_json::to_string_pretty(&list).expect("json");
                    s.push('\n');
                    s
                }
            };
            emit(&out, &text)?;
            Ok(!bad)
        }
        Command::Table {
            paths,
            out,
            max_states,
        } => {
            let (rows, bad) = classify(&paths, max_states);
            let vs: Vec<Verdicts> = rows
                .iter()
                .filter_map(|r| r.result.as_ref().ok().map(|x| x.0))
                .collect();
            let t = Table4::from_verdicts(vs.iter());
            let mut text = t.to_string();
            if t.unbucketed > 0 {
                text.push_str(&format!(
                    "({} tests fail even under strong fairness and are in no bucket)\n",
                    t.unbucketed
                ));
            }
            emit(&out, &text)?;
            Ok(!bad)
        }
        Command::Label {
            paths,
            name,
            out,
            max_states,
        } => {
            let (rows, bad) = classify(&paths, max_states);
            let suite = KernelSuite {
                name,
                note: String::new(),
                tests: rows
                    .iter()
                    .filter_map(|r| {
                        let (v, _) = r.result.as_ref().ok()?;
                        Some(KernelEntry {
                            name: r.item.name().to_string(),
                            program: r.item.program(),
                            verdicts: Some(*v),
                        })
                    })
                    .collect(),
            };
            axb::load::write_atomically(&out, ron::suite_to_ron(&suite).as_bytes())
                .map_err(|e| Failure::Msg(format!("{}: {e}", out.display())))?;
            Ok(!bad)
        }
        Command::Explain {
            path,
            model,
            format,
            test,
            occupancy,
            out,
            max_states,
        } => {
            let item = one(&path, test.as_deref())?;
            let m = pick_model(&item, model.as_deref(), occupancy)?;
            let opts = Options {
                max_states,
                reductions: Reductions::NONE,
            };
            let fail = |e: KernelError| {
                Failure::Msg(format!(
                    "{}: test `{}`: {e}",
                    item.source().display(),
                    item.name()
                ))
            };
            let text = explain::explain(&item.program(), item.name(), &m, opts).map_err(fail)?;
            let text = match format {
                Format::Json => {
                    let d = super::decide(&item.program(), &m, opts).map_err(fail)?;
                    let v = serde_json::json!({
                        "test": item.name(),
                        "source": item.source().display().to_string(),
                        "model": m.to_string(),
                        "memory": "sequentially consistent",
                        "verdict": d.verdict.as_char().to_string(),
                        "deadlock": d.deadlock,
                        "states": d.states,
                        "transitions": d.transitions,
                        "explanation": text,
                    });
                    let mut s = serde_json::to_string_pretty(&v).expect("json");
                    s.push('\n');
                    s
                }
                Format::Text => text,
                _ => return Err(Failure::Msg("explain prints --format text or json".into())),
            };
            emit(&out, &text)?;
            Ok(true)
        }
        Command::Lts {
            path,
            model,
            test,
            occupancy,
            out,
            max_states,
            dot,
            format,
        } => {
            if !dot && format != Some(Format::Dot) {
                return Err(Failure::Msg(
                    "lts prints Graphviz DOT: give --dot (or --format dot)".into(),
                ));
            }
            let item = one(&path, test.as_deref())?;
            let m = match model {
                Some(s) => Some(pick_model(&item, Some(&s), occupancy)?),
                None => None,
            };
            let opts = Options {
                max_states,
                reductions: Reductions::NONE,
            };
            let text =
                dot::to_dot(&item.program(), item.name(), m.as_ref(), opts).map_err(|e| {
                    Failure::Msg(format!(
                        "{}: test `{}`: {e}",
                        item.source().display(),
                        item.name()
                    ))
                })?;
            emit(&out, &text)?;
            Ok(true)
        }
    }
}

fn one(path: &Path, name: Option<&str>) -> Result<Item, Failure> {
    let items = load::load_file(path).map_err(|e| Failure::Msg(e.to_string()))?;
    match name {
        Some(n) => items
            .into_iter()
            .find(|t| t.name() == n)
            .ok_or_else(|| Failure::Msg(format!("{}: no test named `{n}`", path.display()))),
        None if items.len() == 1 => Ok(items.into_iter().next().unwrap()),
        None => Err(Failure::Msg(format!(
            "{}: a suite of {} tests; name one with --test NAME",
            path.display(),
            items.len()
        ))),
    }
}

fn pick_model(
    item: &Item,
    model: Option<&str>,
    occupancy: Option<u8>,
) -> Result<ScopedModel, Failure> {
    let mut m = match model {
        Some(s) => ScopedModel::parse(s).map_err(|e| Failure::Msg(format!("--model: {e}")))?,
        None => match item {
            Item::Kernel(p) => p.program.model.ok_or_else(|| {
                Failure::Msg(format!(
                    "{}: the program has no `model` line: name one with --model (e.g. OBE, or \"OBE, subgroup=unfair\")",
                    p.source.display()
                ))
            })?,
            Item::Axb(_) => {
                return Err(Failure::Msg("name a model with --model".into()));
            }
        },
    };
    if let Some(k) = occupancy {
        if k == 0 {
            return Err(Failure::Msg("--occupancy must be at least 1".into()));
        }
        m.occupancy = Some(k);
    }
    Ok(m)
}
