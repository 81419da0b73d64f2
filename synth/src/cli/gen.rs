//! `synth gen` (also the default command): every test of a configuration,
//! enumerated with progress on stderr and a journal of finished units, so
//! that an interrupted run resumes.

use super::{bad_input, cannot_write, format_of, Failure, FormatArg};
use crate::enumerate::checkpoint::{self, Journal};
use crate::enumerate::output;
use crate::{Config, Engine, Shard};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct GenArgs {
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

/// Where the journal of `gen` goes: `--journal`, else `<out>.journal`, but
/// none beside standard output, a device or a FIFO (not files to resume).
fn journal_of(
    out: &Path,
    journal: &Option<PathBuf>,
    resume: bool,
) -> Result<Option<PathBuf>, Failure> {
    let not_a_file = output::is_stdout(out) || output::writes_through(out);
    match (journal, not_a_file) {
        (Some(j), _) => Ok(Some(j.clone())),
        (None, false) => Ok(Some(checkpoint::journal_path(out))),
        (None, true) if resume => Err(bad_input(format!(
            "--resume with --out {}: give the journal with --journal PATH",
            out.display()
        ))),
        (None, true) => Ok(None),
    }
}

/// Search spaces above this many programs get a size warning up front.
const LARGE: f64 = 1e8;

/// The validated configuration and engine of `g`, and its output path:
/// every usage error is found before any work starts.
fn config_of(g: &GenArgs) -> Result<(Config, Engine, PathBuf), Failure> {
    let (Some(threads), Some(instrs), Some(out)) = (g.threads, g.instrs, g.out.clone()) else {
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
    let engine = g.engine.unwrap_or_else(|| crate::default_engine(&cfg));
    if engine == Engine::Sat {
        crate::enumerate::sat::check_encoding_size(&cfg).map_err(bad_input)?;
    }
    Ok((cfg, engine, out))
}

/// Warns on stderr of a search space so large that the run takes long, so
/// that the user knows to expect progress lines rather than an answer.
fn warn_if_large(cfg: &Config, engine: Engine, shard: Option<Shard>, label: &str) {
    let size = crate::enumerate::program::search_size(&Config {
        max_states: None,
        ..cfg.clone()
    });
    if size > LARGE {
        eprintln!(
            "synth: {label}: large search space: {size:.3e} programs in {} units ({engine} engine); progress every 10 s",
            crate::shard_units(cfg, shard).len()
        );
    }
}

/// Opens (or, with `--resume`, checks and reopens) the journal of the run,
/// if it has one, and says on stderr how much a resumed run already did.
fn open_journal(
    g: &GenArgs,
    cfg: &Config,
    engine: Engine,
    out: &Path,
    label: &str,
) -> Result<Option<Journal>, Failure> {
    let journal_path = journal_of(out, &g.journal, g.resume)?;
    let journal = match &journal_path {
        Some(p) if g.resume => Some(Journal::resume(p, cfg, engine, g.shard)),
        Some(p) => Some(Journal::create(p, cfg, engine, g.shard)),
        None => None,
    }
    .transpose()
    .map_err(bad_input)?;
    if let (Some(j), Some(p)) = (&journal, &journal_path) {
        if j.units_done() > 0 {
            eprintln!(
                "synth: {label}: resuming: {} of {} units already done ({})",
                j.units_done(),
                crate::shard_units(cfg, g.shard).len(),
                p.display()
            );
        }
    }
    Ok(journal)
}

/// Runs `synth gen`: checks the configuration and the output before any
/// work, enumerates (journalled), writes the suite, then one status line.
pub fn run(g: GenArgs) -> Result<(), Failure> {
    let (cfg, engine, out) = config_of(&g)?;
    let label = match g.shard {
        Some(s) => format!("{} shard {s}", cfg.name()),
        None => cfg.name(),
    };
    warn_if_large(&cfg, engine, g.shard, &label);
    // The output is checked before any work: a bad path fails at once.
    let format = format_of(g.format, &out);
    output::prepare(&out, format).map_err(bad_input)?;
    // Every finished unit goes to a journal, so an interrupted run resumes.
    let journal = open_journal(&g, &cfg, engine, &out, &label)?;
    let progress = Arc::new(crate::new_progress(&cfg, engine, g.shard));
    let reporter = progress.report(format!("{label} ({engine})"), Duration::from_secs(10));
    let tests = match &journal {
        Some(j) => crate::enumerate_resumable(&cfg, engine, g.shard, &progress, j)
            .map_err(Failure::other)?,
        None => crate::enumerate_with(&cfg, engine, g.shard, &progress)
            .map_err(|e| bad_input(e.to_string()))?,
    };
    drop(reporter);
    let secs = progress.elapsed().as_secs_f64();
    let count = tests.len();
    let suite = output::to_suite(&cfg, tests, g.shard);
    output::write(&suite, &out, format).map_err(|e| cannot_write(&out, e))?;
    if let Some(j) = journal {
        j.finish().map_err(Failure::other)?;
    }
    eprintln!(
        "synth: {label}: {count} tests in {secs:.2} s ({engine} engine) -> {}",
        progress_litmus::error::printable(&out.display().to_string())
    );
    Ok(())
}
