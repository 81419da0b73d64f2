//! `synth find`: the command line of targeted synthesis (the search
//! itself: [`crate::find`]).

use super::Failure;
use crate::enumerate::config::Config;
use crate::find::journal::{Journal, Run};
use crate::find::search::{pieces, schedule};
use crate::find::{find, Options, Query};
use clap::{Args, ValueEnum};
use progress_litmus::axb::suite::{Entry, Suite};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct FindArgs {
    /// Exactly this many threads (with --minimal: at most).
    #[arg(long, short = 't')]
    threads: usize,
    /// Exactly this many instructions in total (with --minimal: at most).
    #[arg(long, short = 'i')]
    instrs: usize,
    /// At most this many memory locations.
    #[arg(long, default_value_t = 2)]
    locs: usize,
    /// Values 0..V-1.
    #[arg(long, default_value_t = 2)]
    values: usize,
    /// Models that must pass, comma separated (CSV names such as OBE_STRONG, or hsa-strong, weak-lobe, ...).
    #[arg(long, default_value = "")]
    passes: String,
    /// Models that must fail, comma separated.
    #[arg(long, default_value = "")]
    fails: String,
    /// At most K tests, or `all`.
    #[arg(long, default_value = "1", value_name = "K|all")]
    limit: String,
    /// The smallest tests: fewest instructions, then threads, then locations.
    #[arg(long)]
    minimal: bool,
    /// Stop after this many seconds; what is found is written, the exit status is 1 and `--resume` continues.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Suite name; tests are named `<name>_<k>`.
    #[arg(long, default_value = "found")]
    name: String,
    /// Output: a file (`-`: standard output) or, for `--format txt`, a directory.
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// The output format: `ron` (a RON suite with verdicts) or `txt` (a
    /// directory of artifact-format `.txt` files).
    #[arg(long, value_enum, default_value_t = FindFormat::Ron)]
    format: FindFormat,
    /// Continue an interrupted run from its journal (`<out>.journal`).
    #[arg(long)]
    resume: bool,
    /// A line per searched split on stderr.
    #[arg(long, short = 'v')]
    verbose: bool,
}

/// `--format` of `synth find`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum FindFormat {
    /// A RON suite with verdicts.
    Ron,
    /// A directory of artifact-format `.txt` files.
    Txt,
    /// A JSON list of {name, config, test (artifact text), verdicts}.
    Json,
}

/// The longest `--timeout`: the deadline is `now + timeout`, which must be
/// a time the clock can hold (1e19 s overflowed it and panicked).
const MAX_TIMEOUT_SECS: f64 = 1e9;

/// `--timeout S` as a duration: positive and at most [`MAX_TIMEOUT_SECS`].
fn timeout(s: f64) -> Result<Duration, String> {
    if s.is_finite() && s > 0.0 && s <= MAX_TIMEOUT_SECS {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(format!(
            "--timeout {s}: expected a positive number of seconds, at most {MAX_TIMEOUT_SECS:.0} (about 31 years)"
        ))
    }
}

fn usage(msg: impl Into<String>) -> Failure {
    Failure::input(msg.into())
}

/// The suite of `tests`, labelled, named `<name>_<k>`.
fn to_suite(name: &str, note: String, tests: Vec<progress_litmus::axb::test::Test>) -> Suite {
    let labels = oracle::verdicts_all(&tests.iter().collect::<Vec<_>>());
    let tests = tests
        .into_iter()
        .zip(labels)
        .enumerate()
        .map(|(k, (t, v))| {
            let mut e = Entry::new(format!("{name}_{k}"), t);
            e.verdicts = Some(v);
            e
        })
        .collect();
    Suite {
        name: name.into(),
        note,
        tests,
    }
}

/// The suite as the JSON list of `--format json`, one object per test.
fn to_json(suite: &Suite) -> String {
    let list: Vec<serde_json::Value> = suite
        .tests
        .iter()
        .map(|e| {
            let t = &e.test;
            let verdicts: serde_json::Map<String, serde_json::Value> = progress_litmus::Model::ALL
                .iter()
                .map(|&m| {
                    let v = e.verdicts.expect("labelled").get(m).as_char().to_string();
                    (m.name().to_string(), v.into())
                })
                .collect();
            serde_json::json!({
                "name": e.name,
                "config": format!("{}t{}i", t.num_threads(), t.num_instrs()),
                "locs": t.num_locs(),
                "test": progress_litmus::axb::text::print(t),
                "verdicts": verdicts,
            })
        })
        .collect();
    oracle::json::to_string_pretty(&list).expect("json") + "\n"
}

/// Writes `suite` to `--out` in `--format`.
fn write(suite: &Suite, args: &FindArgs) -> Result<(), String> {
    let out = &args.out;
    let text = match args.format {
        FindFormat::Txt => {
            return crate::enumerate::output::write(
                suite,
                out,
                crate::enumerate::output::Format::Txt,
            )
            .map_err(|e| format!("cannot write {}: {e}", out.display()))
        }
        FindFormat::Ron => progress_litmus::axb::load::suite_to_ron(suite),
        FindFormat::Json => to_json(suite),
    };
    progress_litmus::io::write_output(out, text.as_bytes())
        .map(drop)
        .map_err(|e| match progress_litmus::io::is_stdout(out) {
            true => format!("cannot write to standard output: {e}"),
            false => format!("cannot write {}: {e}", out.display()),
        })
}

/// The checked configuration, query and limit of `args`: every usage
/// error (exit status 2) is found before the search starts.
fn query_of(args: &FindArgs) -> Result<(Config, Query, Option<usize>), Failure> {
    let cfg = Config {
        threads: args.threads,
        instrs: args.instrs,
        locs: args.locs,
        values: args.values,
        max_states: None,
        max_actions: None,
        store_must_change: false,
    };
    cfg.validate().map_err(|e| usage(e.to_string()))?;
    crate::enumerate::sat::check_encoding_size(&cfg).map_err(usage)?;
    let query = Query::parse(&args.passes, &args.fails).map_err(usage)?;
    let limit = match args.limit.as_str() {
        "all" => None,
        k => match k.parse::<usize>() {
            Ok(k) if k > 0 => Some(k),
            _ => {
                return Err(usage(format!(
                    "--limit {k}: expected a positive number or `all`"
                )))
            }
        },
    };
    progress_litmus::axb::test::check_name(&args.name)
        .map_err(|e| usage(format!("--name {}: {e}", args.name)))?;
    Ok((cfg, query, limit))
}

/// Whether the run has no journal: its output is standard output, a
/// device or a FIFO, nothing to resume beside. Refuses what needs one.
fn without_journal(args: &FindArgs) -> Result<bool, Failure> {
    let stdout = progress_litmus::io::is_stdout(&args.out);
    if stdout && matches!(args.format, FindFormat::Txt) {
        return Err(usage("--format txt writes a directory: give -o DIR"));
    }
    // No journal beside a device or a FIFO, as for standard output.
    let no_journal = stdout || crate::enumerate::output::writes_through(&args.out);
    if no_journal && args.resume {
        return Err(usage(
            "--resume needs a journal beside an output file: give -o FILE",
        ));
    }
    Ok(no_journal)
}

/// Opens (or, with `--resume`, checks and reopens) the journal of a run of
/// `query`: its header names everything that decides the answers, so a
/// journal of another run is refused.
fn open_journal(
    args: &FindArgs,
    cfg: &Config,
    query: &Query,
    limit: Option<usize>,
) -> Result<Journal, Failure> {
    let header = serde_json::json!({
        "journal": "synth find",
        "query": query.describe(),
        "threads": cfg.threads, "instrs": cfg.instrs, "locs": cfg.locs, "values": cfg.values,
        "limit": limit, "minimal": args.minimal,
    })
    .to_string();
    let path = crate::enumerate::checkpoint::journal_path(&args.out);
    let run = Run {
        header,
        pieces: schedule(cfg, args.minimal)
            .into_iter()
            .flat_map(|(c, exact)| pieces(&c, exact))
            .collect(),
        query,
        limit,
    };
    let j = Journal::open(&path, &run, args.resume).map_err(usage)?;
    if j.pieces_done() > 0 {
        eprintln!(
            "synth find: resuming: {} parts of the search already done ({})",
            j.pieces_done(),
            path.display()
        );
    }
    Ok(j)
}

/// The suite's note: what was searched for, where, and how many.
fn note_of(args: &FindArgs, cfg: &Config, query: &Query, limit: Option<usize>) -> String {
    format!(
        "synth find: tests that {} in {}{} (at most {} locations, values 0..{}), limit {}",
        query.describe(),
        if args.minimal { "at most " } else { "" },
        cfg.name(),
        cfg.locs,
        cfg.values - 1,
        limit.map_or("all".into(), |k| k.to_string()),
    ) + if args.minimal {
        ", smallest first found"
    } else {
        ""
    }
}

/// Runs `synth find`: checks everything, searches (journalled), writes
/// what was found, then one status line; a search stopped by `--timeout`
/// is written too but fails (exit status 1) so that scripts notice.
pub fn run(args: FindArgs) -> Result<(), Failure> {
    let (cfg, query, limit) = query_of(&args)?;
    let timeout = args.timeout.map(timeout).transpose().map_err(usage)?;
    // A bad output path is bad usage, found before the search (as `gen`).
    let format = match args.format {
        FindFormat::Txt => crate::enumerate::output::Format::Txt,
        _ => crate::enumerate::output::Format::Ron,
    };
    crate::enumerate::output::prepare(&args.out, format).map_err(Failure::input)?;
    let journal = if without_journal(&args)? {
        None
    } else {
        Some(open_journal(&args, &cfg, &query, limit)?)
    };
    let opts = Options {
        limit,
        minimal: args.minimal,
        timeout,
        keep_families: false,
        verbose: args.verbose,
    };
    let start = Instant::now();
    let found = find(&cfg, &query, &opts, journal.as_ref()).map_err(Failure::other)?;
    let secs = start.elapsed().as_secs_f64();
    let note = note_of(&args, &cfg, &query, limit);
    let count = found.tests.len();
    let suite = to_suite(&args.name, note, found.tests);
    write(&suite, &args).map_err(Failure::other)?;
    // "1 test", "1 candidate", and the search's pieces in words (issue 23 item 5).
    let what = format!(
        "synth find: {}: {count} {}, {} {} checked in {} {} of the search, {secs:.2} s -> {}",
        query.describe(),
        if count == 1 { "test" } else { "tests" },
        found.candidates,
        if found.candidates == 1 {
            "candidate"
        } else {
            "candidates"
        },
        found.pieces,
        if found.pieces == 1 { "part" } else { "parts" },
        args.out.display()
    );
    if !found.complete {
        return Err(Failure::other(format!("{what}; stopped by --timeout before the search was complete: run again with --resume to continue"),
        ));
    }
    if let Some(j) = journal {
        j.finish().map_err(Failure::other)?;
    }
    eprintln!("{}", progress_litmus::error::printable(&what));
    if count == 0 {
        eprintln!("synth find: no such test exists in the configurations searched");
    }
    Ok(())
}
