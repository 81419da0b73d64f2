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
//!
//! Required failures are not left to blocking: a query whose answers all
//! fail strong HSA, OBE or HSA+OBE ([`Query::required_failures`]) builds
//! the encoding with the strong traps of `sat.rs`, so SAT never proposes
//! the (many) tests that pass strong HSA, and few of those that pass the
//! others; blocking a pass costs a whole program, so the thin strong
//! queries labelled about every test before (2t4i: 5,771 candidates of
//! 6,946 tests, now 375). Blocking clauses leave out the literals the
//! formula implies (`Encoding::block` in [`crate::enumerate::sat`]), which
//! spares varisat a rebuild of every watch list per candidate.

use super::family::{refutation, Family};
use super::query::Query;
use crate::enumerate::config::Config;
use crate::enumerate::constraints;
use crate::enumerate::program::splits;
use crate::enumerate::sat::Encoding;
use progress_litmus::axb::test::Test;
use progress_litmus::{Base, Fairness, Model};
use std::time::Instant;
use varisat::Lit;

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
    let fails = query.required_failures();
    let mut enc = Encoding::build_requiring(&piece.lens, &[], cfg, fails);
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
        // The strong-HSA trap is exact: a candidate passing it is a bug.
        if fails.strong_hsa && v.passes(Model::new(Base::Hsa, Fairness::Strong)) {
            panic!(
                "SAT encoding bug: the strong-HSA trap admits a test that passes strong HSA:\n{}",
                progress_litmus::axb::text::print(&test)
            );
        }
        // The program literals of the test (an answer) or of its family.
        let block: Vec<Lit> = match refutation(&test, &v, query) {
            None => {
                out.answers.push(crate::enumerate::canon::canonical(&test));
                chosen
            }
            Some(fam) => {
                debug_assert!(
                    fam.contains(&test),
                    "a refutation family holds its candidate"
                );
                let mut c = Vec::new();
                for f in &fam.fixed {
                    let lits = enc.field_lits(f.thread, f.pc, f.loc, f.check, f.exch, f.jump);
                    c.extend(lits);
                }
                if keep_families {
                    out.families.push(fam);
                }
                c
            }
        };
        enc.block(&block);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enumerate::canon::canonical_set;
    use crate::enumerate::sat::Failures;

    /// Every test of `cfg` the encoding with `fails` admits, canonical.
    fn admitted(cfg: &Config, fails: Failures) -> Vec<Test> {
        let mut out = Vec::new();
        for lens in splits(cfg.threads, cfg.instrs) {
            let mut enc = Encoding::build_requiring(&lens, &[], cfg, fails);
            let mut models = 0;
            while let Some((test, chosen)) = enc.next_model() {
                // Blocked as a search blocks (implied literals left out).
                enc.block(&chosen);
                out.push(test);
                models += 1;
            }
            let first_loc = enc.field_lits(0, 0, 0, 0, None, None)[0];
            assert!(
                models <= 2 * crate::enumerate::sat::FIRST_PROBE as usize
                    || enc.found_implied(first_loc),
                "{lens:?}: {models} models, the first location never found implied"
            );
        }
        canonical_set(out)
    }

    /// The strong traps never lose an answer: against the enumerated set
    /// labelled by the oracle, the strong-HSA trap admits exactly the tests
    /// that fail strong HSA, and the OBE and HSA+OBE traps every test that
    /// fails strong OBE (strong HSA+OBE), while pruning some that pass.
    fn traps_against_enumeration(cfg: &Config) {
        let all = crate::enumerate(cfg).unwrap();
        let labels = oracle::verdicts_all(&all.iter().collect::<Vec<_>>());
        let failing = |b: Base| -> Vec<Test> {
            let m = Model::new(b, Fairness::Strong);
            let v = all.iter().zip(&labels).filter(|(_, v)| !v.passes(m));
            v.map(|(t, _)| t.clone()).collect()
        };
        let hsa = Failures {
            strong_hsa: true,
            ..Failures::default()
        };
        assert_eq!(admitted(cfg, hsa), failing(Base::Hsa), "{}", cfg.name());
        for (b, fails) in [
            (
                Base::Obe,
                Failures {
                    strong_obe: true,
                    ..Failures::default()
                },
            ),
            (
                Base::HsaObe,
                Failures {
                    strong_hsa_obe: true,
                    ..Failures::default()
                },
            ),
        ] {
            let got = admitted(cfg, fails);
            let want = failing(b);
            let lost: Vec<&Test> = want
                .iter()
                .filter(|t| got.binary_search(t).is_err())
                .collect();
            assert!(
                lost.is_empty(),
                "{} {b:?}: the trap loses {lost:?}",
                cfg.name()
            );
            assert!(
                got.len() < all.len(),
                "{} {b:?}: the trap prunes nothing",
                cfg.name()
            );
        }
    }

    #[test]
    fn strong_traps_never_lose_an_answer_2t3i_3t3i() {
        traps_against_enumeration(&Config::new(2, 3));
        traps_against_enumeration(&Config::new(3, 3));
    }

    #[test]
    #[cfg_attr(debug_assertions, ignore = "release only: cargo test --release")]
    fn strong_traps_never_lose_an_answer_2t4i_3t4i() {
        traps_against_enumeration(&Config::new(2, 4));
        traps_against_enumeration(&Config::new(3, 4));
    }
}
