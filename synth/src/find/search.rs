//! The CEGAR loop: SAT proposes, the oracle disposes.
//!
//! One varisat instance per *split* (thread lengths) of a configuration,
//! over the encoding of `sat.rs` (programs, exact reachable state spaces
//! and the SPEC §4 constraints), so every candidate is a test of the
//! complete enumerated set. For each candidate the oracle computes the
//! eleven verdicts; an answer is blocked exactly (by its program literals,
//! as the enumerator does), a refuted candidate by the clause excluding its
//! whole refutation [`Family`] ([`super::family`]). Locations are in
//! first-use order, so each test is proposed once up to location renaming
//! (the enumerator's notion of the same test, SPEC §4.7); thread
//! permutations are different tests (they change HSA verdicts), as in the
//! enumerator.

use super::family::{refutation, Family};
use super::query::Query;
use crate::enumerate::config::Config;
use crate::enumerate::constraints;
use crate::enumerate::program::splits;
use crate::enumerate::sat::Encoding;
use progress_litmus::axb::test::Test;
use std::time::Instant;
use varisat::{ExtendFormula, Lit};

/// One piece of a search: a configuration (threads, instructions, at most
/// `cfg.locs` locations), and a split of it; with `exact_locs` only tests
/// using all `cfg.locs` locations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub cfg: Config,
    pub exact_locs: bool,
    pub split: usize,
    pub lens: Vec<usize>,
}

impl Piece {
    /// A stable name for journals: `3t6i.l2.s4`.
    pub fn key(&self) -> String {
        format!(
            "{}.l{}{}.s{}",
            self.cfg.name(),
            self.cfg.locs,
            if self.exact_locs { "x" } else { "" },
            self.split
        )
    }
}

/// The pieces of a configuration, in split order.
pub fn pieces(cfg: &Config, exact_locs: bool) -> Vec<Piece> {
    splits(cfg.threads, cfg.instrs)
        .into_iter()
        .enumerate()
        .map(|(split, lens)| Piece {
            cfg: cfg.clone(),
            exact_locs,
            split,
            lens,
        })
        .collect()
}

/// What searching a piece gave.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Answers, canonical, in the order found.
    pub answers: Vec<Test>,
    /// Candidates the oracle checked (answers included).
    pub candidates: u64,
    /// The families blocked, when asked for (soundness tests).
    pub families: Vec<Family>,
    /// False if stopped by the deadline before the piece was exhausted or
    /// `want` answers found.
    pub complete: bool,
}

/// Searches `piece` for up to `want` answers to `query` (`None`: all),
/// stopping at `deadline` or when `cancelled()` (both leave the outcome
/// incomplete). `keep_families` records every blocked family.
pub fn search_piece(
    piece: &Piece,
    query: &Query,
    want: Option<usize>,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    keep_families: bool,
) -> Outcome {
    let cfg = &piece.cfg;
    let mut enc = Encoding::build(&piece.lens, &[], cfg);
    if piece.exact_locs {
        enc.require_loc(cfg.locs - 1);
    }
    let mut out = Outcome::default();
    loop {
        if want.is_some_and(|w| out.answers.len() >= w) {
            out.complete = true;
            return out;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) || cancelled() {
            return out;
        }
        let Some((test, chosen)) = enc.next_model() else {
            out.complete = true;
            return out;
        };
        if let Err(v) = constraints::check(&test, cfg) {
            panic!(
                "SAT encoding bug: model violates {v}:\n{}",
                progress_litmus::axb::text::print(&test)
            );
        }
        out.candidates += 1;
        let v = oracle::verdicts(&test);
        let block: Vec<Lit> = match refutation(&test, &v, query) {
            None => {
                out.answers.push(crate::enumerate::canon::canonical(&test));
                chosen.iter().map(|&l| !l).collect()
            }
            Some(fam) => {
                debug_assert!(
                    fam.contains(&test),
                    "a refutation family holds its candidate"
                );
                let mut c = Vec::new();
                for f in &fam.fixed {
                    let lits = enc.field_lits(f.thread, f.pc, f.loc, f.check, f.exch, f.jump);
                    c.extend(lits.into_iter().map(|l| !l));
                }
                if keep_families {
                    out.families.push(fam);
                }
                c
            }
        };
        enc.solver.add_clause(&block);
    }
}

/// The configurations a search visits, in order: just `cfg`, or with
/// `minimal` every configuration up to it by (instructions, threads,
/// locations), each location count exactly (so a test is found at its
/// smallest size only).
pub fn schedule(cfg: &Config, minimal: bool) -> Vec<(Config, bool)> {
    if !minimal {
        return vec![(cfg.clone(), false)];
    }
    let mut out = Vec::new();
    for instrs in 1..=cfg.instrs {
        for threads in 1..=cfg.threads.min(instrs) {
            for locs in 1..=cfg.locs {
                let c = Config {
                    threads,
                    instrs,
                    locs,
                    ..cfg.clone()
                };
                if c.validate().is_ok() {
                    out.push((c, true));
                }
            }
        }
    }
    out
}
