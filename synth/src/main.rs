//! `synth`: the command line over the `synth` library.
//!
//! `synth --threads N --instrs M --out PATH` (or `synth gen ...`) enumerates
//! every test of a configuration; `synth merge` joins shard outputs; `synth
//! plan` prints the shard/merge split for GNU parallel or Slurm. Errors are
//! one line on stderr, `error: ...` as in `oracle` and `backends`, with exit
//! status 2 for bad input or usage (options, input files, the output path,
//! a journal that is locked or does not check) and 1 for anything else.
//! Status and progress go to stderr; stdout is for data (`-o -`).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use synth::enumerate::checkpoint;
use synth::enumerate::output::{self, Format};
use synth::{Config, Engine, Shard};

#[derive(Parser)]
#[command(
    name = "synth",
    version,
    about = "Enumerate every progress litmus test of a configuration (SPEC §4)",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    gen: GenArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Enumerate every test of a configuration (also the default command).
    Gen(GenArgs),
    /// Merge the RON suites of shards 1/N..N/N into the unsharded run's output.
    Merge(MergeArgs),
    /// Regenerate the committed suites directory from scratch (labels, lists, README).
    Suites(synth::suites::SuitesArgs),
    /// Write a suite as one self-contained HTML test explorer.
    Explorer(synth::explorer::ExplorerArgs),
    /// Print the shard/merge split of a run as a GNU parallel job list, a
    /// merge command and a Slurm array script.
    Plan(synth::plan::PlanArgs),
    /// Find tests with a required verdict vector (targeted SAT search).
    Find(synth::find::FindArgs),
}

#[derive(Args)]
struct GenArgs {
    /// Exactly this many threads.
    #[arg(long, short = 't', required = true)]
    threads: Option<usize>,
    /// Exactly this many instructions in total, at least one per thread.
    #[arg(long, short = 'i', required = true)]
    instrs: Option<usize>,
    /// At most this many memory locations.
    #[arg(long, default_value_t = 2)]
    locs: usize,
    /// Values 0..V-1.
    #[arg(long, default_value_t = 2)]
    values: usize,
    /// `sat` or `explicit` (default: the faster one for the configuration).
    #[arg(long)]
    engine: Option<Engine>,
    /// Alloy bound: at most this many reachable states.
    #[arg(long)]
    max_states: Option<usize>,
    /// Alloy bound: at most this many transitions in the state space.
    #[arg(long)]
    max_actions: Option<usize>,
    /// Every exchange must change the stored value in some execution.
    #[arg(long)]
    store_must_change: bool,
    /// Only shard K of N (1-based) of the search space; join with `synth merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Output: a RON suite file, `-` for standard output, a `.axb.gz`
    /// packed suite, or a directory (`DIR/`) of `.txt` files.
    #[arg(long, short = 'o', required = true)]
    out: Option<PathBuf>,
    /// The output format (default: from `--out`: `.axb.gz` packed, a
    /// trailing `/` txt, else RON).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Continue an interrupted run from its journal.
    #[arg(long)]
    resume: bool,
    /// The journal of finished units (default `<out>.journal`; none for
    /// `--out -` unless given).
    #[arg(long, value_name = "PATH")]
    journal: Option<PathBuf>,
}

#[derive(Args)]
struct MergeArgs {
    /// The shard suites made by `synth --shard K/N` (RON or packed
    /// `.axb.gz`; packed ones are merged streaming, in constant memory).
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// The merged suite (`-`: standard output).
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// The output format (default: from `--out`, as for `synth gen`).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// One RON suite file.
    Ron,
    /// A directory of artifact-format `.txt` files.
    Txt,
    /// One packed suite (`.axb.gz`): gzip'd, one short line per test.
    Packed,
}

fn format_of(arg: Option<FormatArg>, out: &std::path::Path) -> Format {
    match arg {
        Some(FormatArg::Ron) => Format::Ron,
        Some(FormatArg::Txt) => Format::Txt,
        Some(FormatArg::Packed) => Format::Packed,
        None => Format::infer(out),
    }
}

/// A failure and its exit status.
struct Fail(u8, String);

fn bad_input(msg: impl Into<String>) -> Fail {
    Fail(2, msg.into())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Gen(g)) => gen(g),
        Some(Command::Merge(m)) => merge(m),
        Some(Command::Suites(a)) => synth::suites::cli(a).map_err(|(code, e)| Fail(code, e)),
        Some(Command::Explorer(a)) => synth::explorer::cli(a).map_err(|(code, e)| Fail(code, e)),
        Some(Command::Plan(a)) => synth::plan::cli(a).map_err(|(code, e)| Fail(code, e)),
        Some(Command::Find(a)) => {
            synth::find::cli::cli(a).map_err(|synth::find::cli::Fail(c, m)| Fail(c, m))
        }
        None => gen(cli.gen),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail(code, msg)) => {
            // Escaped: a message may quote a path or an input.
            eprintln!("error: {}", progress_litmus::error::printable(&msg));
            ExitCode::from(code)
        }
    }
}

/// Search spaces above this many programs get a size warning up front.
const LARGE: f64 = 1e8;

fn gen(g: GenArgs) -> Result<(), Fail> {
    let (Some(threads), Some(instrs), Some(out)) = (g.threads, g.instrs, g.out) else {
        return Err(bad_input("--threads, --instrs and --out are required"));
    };
    let cfg = Config {
        threads,
        instrs,
        locs: g.locs,
        values: g.values,
        max_states: g.max_states,
        max_actions: g.max_actions,
        store_must_change: g.store_must_change,
    };
    cfg.validate().map_err(|e| bad_input(e.to_string()))?;
    let engine = g.engine.unwrap_or_else(|| synth::default_engine(&cfg));
    let label = match g.shard {
        Some(s) => format!("{} shard {s}", cfg.name()),
        None => cfg.name(),
    };
    let size = synth::enumerate::program::search_size(&synth::Config {
        max_states: None,
        ..cfg.clone()
    });
    if size > LARGE {
        eprintln!(
            "synth: {label}: large search space: {size:.3e} programs in {} units ({engine} engine); progress every 10 s",
            synth::shard_units(&cfg, g.shard).len()
        );
    }
    // The output is checked before any work: a bad path fails at once.
    let format = format_of(g.format, &out);
    output::prepare(&out, format).map_err(bad_input)?;
    // Every finished unit goes to a journal, so an interrupted run resumes.
    let journal_path = match (&g.journal, output::is_stdout(&out)) {
        (Some(j), _) => Some(j.clone()),
        (None, false) => Some(checkpoint::journal_path(&out)),
        (None, true) if g.resume => {
            return Err(bad_input(
                "--resume with --out -: give the journal with --journal PATH",
            ))
        }
        (None, true) => None,
    };
    let journal = match &journal_path {
        Some(p) if g.resume => Some(checkpoint::Journal::resume(p, &cfg, engine, g.shard)),
        Some(p) => Some(checkpoint::Journal::create(p, &cfg, engine, g.shard)),
        None => None,
    }
    .transpose()
    .map_err(bad_input)?;
    if let (Some(j), Some(p)) = (&journal, &journal_path) {
        if j.units_done() > 0 {
            eprintln!(
                "synth: {label}: resuming: {} of {} units already done ({})",
                j.units_done(),
                synth::shard_units(&cfg, g.shard).len(),
                p.display()
            );
        }
    }
    let progress = Arc::new(synth::new_progress(&cfg, engine, g.shard));
    let reporter = progress.report(format!("{label} ({engine})"), Duration::from_secs(10));
    let tests = match &journal {
        Some(j) => synth::enumerate_resumable(&cfg, engine, g.shard, &progress, j)
            .map_err(|e| Fail(1, e))?,
        None => synth::enumerate_with(&cfg, engine, g.shard, &progress)
            .map_err(|e| bad_input(e.to_string()))?,
    };
    drop(reporter);
    let secs = progress.elapsed().as_secs_f64();
    let count = tests.len();
    let suite = output::to_suite(&cfg, tests, g.shard);
    output::write(&suite, &out, format)
        .map_err(|e| Fail(1, format!("cannot write {}: {e}", out.display())))?;
    if let Some(j) = journal {
        j.finish().map_err(|e| Fail(1, e))?;
    }
    eprintln!(
        "synth: {label}: {count} tests in {secs:.2} s ({engine} engine) -> {}",
        out.display()
    );
    Ok(())
}

fn merge(m: MergeArgs) -> Result<(), Fail> {
    let format = format_of(m.format, &m.out);
    output::prepare(&m.out, format).map_err(bad_input)?;
    let parts = m
        .parts
        .iter()
        .map(|p| synth::enumerate::shard::Part::open(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad_input)?;
    let n = parts.len();
    let (name, note) = synth::enumerate::shard::merged_header(&parts).map_err(bad_input)?;
    let count = if format == Format::Packed {
        // Streaming: a packed merge holds one test per shard at a time.
        if output::is_stdout(&m.out) {
            merge_packed(parts, &name, &note, &mut std::io::stdout().lock())?
        } else {
            let mut res = None;
            let written = progress_litmus::axb::load::write_atomically_with(&m.out, |f| {
                let r = merge_packed(parts, &name, &note, f);
                let ok = r.is_ok();
                res = Some(r);
                if ok {
                    Ok(())
                } else {
                    Err(std::io::Error::other("merge failed"))
                }
            });
            match (res, written) {
                (Some(Err(e)), _) => return Err(e),
                (_, Err(e)) => {
                    return Err(Fail(1, format!("cannot write {}: {e}", m.out.display())))
                }
                (Some(Ok(r)), Ok(())) => r,
                (None, Ok(())) => unreachable!("the writer ran"),
            }
        }
    } else {
        let mut tests = Vec::new();
        let count = synth::enumerate::shard::merge_streaming(parts, |name, t| {
            tests.push(progress_litmus::axb::suite::Entry::new(name, t.clone()));
            Ok(())
        })
        .map_err(bad_input)?;
        let suite = progress_litmus::axb::suite::Suite {
            name: name.clone(),
            note,
            tests,
        };
        output::write(&suite, &m.out, format)
            .map_err(|e| Fail(1, format!("cannot write {}: {e}", m.out.display())))?;
        count
    };
    // The name is the shards' text: escaped, as every status line.
    eprintln!(
        "{}",
        progress_litmus::error::printable(&format!(
            "synth: merged {n} shards of {name}: {count} tests -> {}",
            m.out.display()
        ))
    );
    Ok(())
}

/// Merges `parts` into one packed suite `name` written to `w`; the number
/// of tests.
fn merge_packed(
    parts: Vec<synth::enumerate::shard::Part>,
    name: &str,
    note: &str,
    w: &mut dyn std::io::Write,
) -> Result<usize, Fail> {
    let io = |e: std::io::Error| Fail(1, format!("cannot write: {e}"));
    let mut packed = progress_litmus::axb::packed::Writer::new(w, name, note).map_err(io)?;
    let count = synth::enumerate::shard::merge_streaming(parts, |name, t| packed.push(name, t))
        .map_err(|e| {
            // An error reading a part is bad input; one writing is not.
            let code = if e.starts_with("cannot write") { 1 } else { 2 };
            Fail(code, e)
        })?;
    packed.finish().map_err(io)?;
    Ok(count)
}
