//! # Targeted synthesis: tests with a required verdict vector
//!
//! `synth find` looks for tests of a configuration that pass some models and
//! fail others, without enumerating the configuration: a counterexample-
//! guided loop over the SAT encoding of `sat.rs` ([`search`]), where SAT
//! proposes tests satisfying SPEC §4, the oracle labels each, and a refuted
//! candidate is blocked together with every program its refutation also
//! refutes ([`family`]), so whole families are pruned at once. Queries no
//! test can answer are refused up front ([`query`]). Runs are journalled
//! per piece and resumable ([`journal`]); the command line is
//! [`crate::cli::find`].
//!
//! Cross-checked against complete enumeration in `tests/find.rs`: every
//! answer is in the enumerated set with the required verdicts, `--limit
//! all` returns exactly that subset, and no blocked family holds an answer.

pub mod family;
pub mod journal;
pub mod query;
pub mod search;

pub use family::Family;
pub use query::Query;

use crate::enumerate::config::Config;
use journal::{Done, Journal};
use rayon::prelude::*;
use search::{pieces, schedule, search_piece, Outcome, Piece};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How to search.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// At most this many answers (`None`: all).
    pub limit: Option<usize>,
    /// Smallest tests only: configurations up to the given one by
    /// (instructions, threads, locations), stopping at the first with an
    /// answer.
    pub minimal: bool,
    /// Stop after this long (the journal keeps what is done).
    pub timeout: Option<Duration>,
    /// Record every blocked family (for soundness tests; costs memory).
    pub keep_families: bool,
    /// Print a line per finished piece on stderr.
    pub verbose: bool,
}

/// The result of a search.
#[derive(Clone, Debug, Default)]
pub struct Found {
    /// Answers: canonical, sorted, each once.
    pub tests: Vec<progress_litmus::axb::test::Test>,
    /// Candidates the oracle labelled.
    pub candidates: u64,
    /// Pieces searched (or read back from the journal).
    pub pieces: usize,
    /// False if the deadline stopped the search.
    pub complete: bool,
    /// Every family blocked (with [`Options::keep_families`]).
    pub families: Vec<Family>,
}

/// Searches piece `p` for up to `want` answers (all: `None`), or takes
/// its answers from the journal when a finished run of it found enough;
/// records a complete search in the journal, so that a resumed run skips it.
fn run_piece(
    p: &Piece,
    query: &Query,
    want: Option<usize>,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    opts: &Options,
    journal: Option<&Journal>,
) -> Result<Outcome, String> {
    let enough = |d: &Done| match (d.want, want) {
        (None, _) => true,
        (Some(had), Some(need)) => need <= had || d.answers.len() < had,
        (Some(had), None) => d.answers.len() < had,
    };
    if let Some(d) = journal.and_then(|j| j.done(&p.key())).filter(|d| enough(d)) {
        return Ok(Outcome {
            answers: d.answers.clone(),
            candidates: d.candidates,
            families: Vec::new(),
            complete: true,
        });
    }
    let start = Instant::now();
    let o = search_piece(p, query, want, deadline, cancelled, opts.keep_families);
    if o.complete {
        if let Some(j) = journal {
            j.record(&Done {
                piece: p.key(),
                want,
                answers: o.answers.clone(),
                candidates: o.candidates,
            })?;
        }
    }
    if opts.verbose {
        eprintln!(
            "synth find: {} split {:?}: {} candidates, {} found, {:.2} s{}",
            p.cfg.name(),
            p.lens,
            o.candidates,
            o.answers.len(),
            start.elapsed().as_secs_f64(),
            if o.complete { "" } else { " (stopped)" }
        );
    }
    Ok(o)
}

/// Searches `cfg` (or, with `minimal`, the configurations up to it) for
/// tests answering `query`. `cfg` must be valid and `query` checked.
pub fn find(
    cfg: &Config,
    query: &Query,
    opts: &Options,
    journal: Option<&Journal>,
) -> Result<Found, String> {
    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let mut found = Found {
        complete: true,
        ..Found::default()
    };
    let mut answers = Vec::new();
    'configs: for (c, exact) in schedule(cfg, opts.minimal) {
        let ps = pieces(&c, exact);
        let outcomes: Vec<Outcome> = match opts.limit {
            // Every answer: the pieces are independent, run them on all cores.
            None => ps
                .par_iter()
                .map(|p| run_piece(p, query, None, deadline, &|| false, opts, journal))
                .collect::<Result<_, _>>()?,
            // The first answers in piece order, independent of timing.
            Some(limit) => {
                first_answers(&ps, query, limit, answers.len(), deadline, opts, journal)?
            }
        };
        for o in outcomes {
            found.pieces += 1;
            // Saturating: counts come from the journal too (each checked
            // against its piece's size, so this is a second guard).
            found.candidates = found.candidates.saturating_add(o.candidates);
            found.complete &= o.complete;
            found.families.extend(o.families);
            answers.extend(o.answers);
        }
        let full = opts.limit.is_some_and(|l| answers.len() >= l);
        if !found.complete || full || (opts.minimal && !answers.is_empty()) {
            break 'configs;
        }
    }
    found.tests = crate::enumerate::canon::canonical_set(answers);
    Ok(found)
}

/// The first answers of `ps` in piece order, at most `limit` less the `got`
/// already found: pieces are searched a core's worth at a time (each for
/// up to the answers still wanted) and answers taken in piece order, so
/// they (and the output bytes) do not depend on timing.
fn first_answers(
    ps: &[Piece],
    query: &Query,
    limit: usize,
    mut got: usize,
    deadline: Option<Instant>,
    opts: &Options,
    journal: Option<&Journal>,
) -> Result<Vec<Outcome>, String> {
    let mut v = Vec::new();
    let width = rayon::current_num_threads().max(1);
    'chunks: for chunk in ps.chunks(width) {
        let want = limit - got;
        // A piece that finds every answer still wanted makes
        // the pieces after it irrelevant: they stop.
        let filled = AtomicUsize::new(usize::MAX);
        let outs: Vec<Outcome> = chunk
            .par_iter()
            .enumerate()
            .map(|(k, p)| {
                let stop = || filled.load(Ordering::Relaxed) < k;
                let o = run_piece(p, query, Some(want), deadline, &stop, opts, journal)?;
                if o.complete && o.answers.len() >= want {
                    filled.fetch_min(k, Ordering::Relaxed);
                }
                Ok(o)
            })
            .collect::<Result<_, String>>()?;
        // Stopped by the deadline: the output is incomplete
        // anyway, so it keeps whatever any piece found.
        let timed_out =
            outs.iter().any(|o| !o.complete) && deadline.is_some_and(|d| Instant::now() >= d);
        for mut o in outs {
            if got >= limit {
                break;
            }
            o.answers.truncate(limit - got);
            got += o.answers.len();
            let stop = !o.complete;
            v.push(o);
            if stop && !timed_out {
                break 'chunks;
            }
        }
        if timed_out {
            break;
        }
        if got >= limit {
            break;
        }
    }
    Ok(v)
}
