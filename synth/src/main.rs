//! `synth`: the command line over the `synth` library.
//!
//! `synth --threads N --instrs M --out PATH` (or `synth gen ...`) enumerates
//! every test of a configuration; `synth merge` joins shard outputs. Errors
//! in the input are one line on stderr and exit status 2.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use synth::checkpoint;
use synth::output::{self, Format};
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
    /// Output: a RON suite file, or a directory for `--format txt`.
    #[arg(long, short = 'o', required = true)]
    out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = FormatArg::Ron)]
    format: FormatArg,
    /// Continue an interrupted run from its journal (`<out>.journal`).
    #[arg(long)]
    resume: bool,
}

#[derive(Args)]
struct MergeArgs {
    /// The shard suites (RON) made by `synth --shard K/N --format ron`.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    #[arg(long, short = 'o')]
    out: PathBuf,
    #[arg(long, value_enum, default_value_t = FormatArg::Ron)]
    format: FormatArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// One RON suite file.
    Ron,
    /// A directory of artifact-format `.txt` files.
    Txt,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Ron => Format::Ron,
            FormatArg::Txt => Format::Txt,
        }
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
        Some(Command::Suites(a)) => synth::suites::cli(a).map_err(|e| Fail(1, e)),
        Some(Command::Explorer(a)) => synth::explorer::cli(a).map_err(|e| Fail(1, e)),
        Some(Command::Find(a)) => {
            synth::find::cli::cli(a).map_err(|synth::find::cli::Fail(c, m)| Fail(c, m))
        }
        None => gen(cli.gen),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail(code, msg)) => {
            eprintln!("synth: error: {msg}");
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
    let size = synth::program::search_size(&synth::Config {
        max_states: None,
        ..cfg.clone()
    });
    if size > LARGE {
        eprintln!(
            "synth: {label}: large search space: {size:.3e} programs in {} units ({engine} engine); progress every 10 s",
            synth::shard_units(&cfg, g.shard).len()
        );
    }
    // Every finished unit goes to a journal, so an interrupted run resumes.
    let journal_path = checkpoint::journal_path(&out);
    let journal = if g.resume {
        checkpoint::Journal::resume(&journal_path, &cfg, engine, g.shard)
    } else {
        checkpoint::Journal::create(&journal_path, &cfg, engine, g.shard)
    }
    .map_err(bad_input)?;
    if journal.units_done() > 0 {
        eprintln!(
            "synth: {label}: resuming: {} of {} units already done ({})",
            journal.units_done(),
            synth::shard_units(&cfg, g.shard).len(),
            journal_path.display()
        );
    }
    let progress = Arc::new(synth::new_progress(&cfg, engine, g.shard));
    let reporter = progress.report(format!("{label} ({engine})"), Duration::from_secs(10));
    let tests = synth::enumerate_resumable(&cfg, engine, g.shard, &progress, &journal)
        .map_err(|e| Fail(1, e))?;
    drop(reporter);
    let secs = progress.elapsed().as_secs_f64();
    let count = tests.len();
    let suite = output::to_suite(&cfg, tests, g.shard);
    output::write(&suite, &out, g.format.into())
        .map_err(|e| Fail(1, format!("cannot write {}: {e}", out.display())))?;
    journal.finish().map_err(|e| Fail(1, e))?;
    eprintln!(
        "synth: {label}: {count} tests in {secs:.2} s ({engine} engine) -> {}",
        out.display()
    );
    Ok(())
}

fn merge(m: MergeArgs) -> Result<(), Fail> {
    let mut parts = Vec::new();
    for p in &m.parts {
        let src = std::fs::read_to_string(p)
            .map_err(|e| bad_input(format!("cannot read {}: {e}", p.display())))?;
        let suite =
            axb::load::parse_suite(&src).map_err(|e| bad_input(format!("{}:{e}", p.display())))?;
        parts.push(suite);
    }
    let suite = synth::shard::merge(&parts).map_err(bad_input)?;
    output::write(&suite, &m.out, m.format.into())
        .map_err(|e| Fail(1, format!("cannot write {}: {e}", m.out.display())))?;
    eprintln!(
        "synth: merged {} shards: {} tests -> {}",
        parts.len(),
        suite.tests.len(),
        m.out.display()
    );
    Ok(())
}
