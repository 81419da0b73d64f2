//! The program half of the search space, shared by both engines.
//!
//! A program of a configuration is a split of the `M` instructions over the
//! `N` threads (a composition of `M` into `N` positive parts) and, at each
//! position, an instruction. Instructions are only those allowed by the
//! *meaningful comparisons* clause (SPEC §4.2): a store-like instruction
//! (`jump == pc + 1`) has `check = 0` and an `exch`, so each program text
//! denotes exactly one choice here. Locations are chosen in first-use order
//! (the form of [`progress_litmus::Test::canonical_locs`]), which breaks the
//! location-renaming symmetry (§4.7) and makes every location `0..L'` used.
//!
//! The space is cut into [`Unit`]s, a split plus the first instruction of
//! thread 0: the grain of parallelism, of journalling and of SAT instances,
//! so that the same unit gives the same tests in either engine. A shard
//! finer than a unit cuts units further by fixing the next positions
//! ([`refine`]; see [`crate::enumerate::shard`]).

use crate::enumerate::config::Config;
use progress_litmus::axb::test::{Instr, Target, Test};

/// The instructions other than their location that may stand at `pc` in a
/// thread of `len`, in a fixed order: store-like first, then branching by
/// jump, check and exchange (`None` first).
pub fn shapes(len: usize, pc: usize, values: usize) -> Vec<Instr> {
    let mut out = Vec::new();
    for x in 0..values as u8 {
        out.push(Instr::store(0, x, pc, len));
    }
    for j in (0..=len).filter(|&j| j != pc + 1) {
        for check in 0..values as u8 {
            for exch in std::iter::once(None).chain((0..values as u8).map(Some)) {
                out.push(Instr {
                    loc: 0,
                    check,
                    jump: Target::from_pc(j, len),
                    exch,
                });
            }
        }
    }
    out
}

/// Every split of `instrs` instructions over `threads` non-empty threads, in
/// lexicographic order of the thread lengths.
pub fn splits(threads: usize, instrs: usize) -> Vec<Vec<usize>> {
    fn go(left: usize, parts: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if parts == 0 {
            if left == 0 {
                out.push(cur.clone());
            }
            return;
        }
        for k in 1..=left.saturating_sub(parts - 1) {
            cur.push(k);
            go(left - k, parts - 1, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    if threads > 0 {
        go(instrs, threads, &mut Vec::new(), &mut out);
    }
    out
}

/// A piece of the search space: the thread lengths and the instructions at
/// the first positions (in [`positions`] order: thread 0 first), whose
/// locations are in first-use order. A unit of [`units`] fixes one
/// instruction, the first of thread 0 (its location is 0); [`refine`] fixes
/// one more position, for shards finer than units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    pub lens: Vec<usize>,
    /// The instructions at positions `0..prefix.len()`; never empty.
    pub prefix: Vec<Instr>,
}

impl Unit {
    /// The first instruction of thread 0.
    pub fn first(&self) -> Instr {
        self.prefix[0]
    }

    /// How many locations the prefix uses (`0..used`, first-use order).
    pub fn used_locs(&self) -> usize {
        self.prefix
            .iter()
            .map(|i| i.loc as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Whether `test` (in first-use location order, as the engines make
    /// them) lies in this piece: same thread lengths, same prefix.
    pub fn contains(&self, test: &Test) -> bool {
        test.threads.len() == self.lens.len()
            && test
                .threads
                .iter()
                .zip(&self.lens)
                .all(|(t, &l)| t.len() == l)
            && positions(&self.lens)
                .iter()
                .zip(&self.prefix)
                .all(|(&(t, pc), i)| test.threads[t][pc] == *i)
    }
}

/// All units of a configuration, in a fixed order: each split, then each
/// first instruction of thread 0.
pub fn units(cfg: &Config) -> Vec<Unit> {
    let mut out = Vec::new();
    for lens in splits(cfg.threads, cfg.instrs) {
        for first in shapes(lens[0], 0, cfg.values) {
            out.push(Unit {
                lens: lens.clone(),
                prefix: vec![first],
            });
        }
    }
    out
}

/// Every piece of `units` with one more position fixed, in order (the
/// explicit engine's order: location, then shape); a piece whose program
/// is already complete stays as it is. The pieces of a unit partition it.
pub fn refine(units: &[Unit], cfg: &Config) -> Vec<Unit> {
    let mut out = Vec::new();
    for u in units {
        let pos = positions(&u.lens);
        let p = u.prefix.len();
        if p == pos.len() {
            out.push(u.clone());
            continue;
        }
        let (t, pc) = pos[p];
        let max_loc = u.used_locs().min(cfg.locs - 1);
        for loc in 0..=max_loc {
            for s in shapes(u.lens[t], pc, cfg.values) {
                let mut prefix = u.prefix.clone();
                prefix.push(Instr {
                    loc: loc as u8,
                    ..s
                });
                out.push(Unit {
                    lens: u.lens.clone(),
                    prefix,
                });
            }
        }
    }
    out
}

/// Global instruction positions `(thread, pc)` in order: thread 0 first.
pub fn positions(lens: &[usize]) -> Vec<(usize, usize)> {
    lens.iter()
        .enumerate()
        .flat_map(|(t, &len)| (0..len).map(move |pc| (t, pc)))
        .collect()
}

/// The number of programs in a unit (after the meaningful-comparisons rule
/// and location symmetry breaking, before any other constraint). Counted by
/// dynamic programming over positions on the number of locations used so far.
pub fn unit_size(unit: &Unit, cfg: &Config) -> f64 {
    let pos = positions(&unit.lens);
    // ways[k]: partial programs using exactly k locations.
    let mut ways = vec![0f64; cfg.locs + 1];
    ways[unit.used_locs()] = 1.0; // the fixed prefix
    for &(t, pc) in &pos[unit.prefix.len()..] {
        let c = shapes(unit.lens[t], pc, cfg.values).len() as f64;
        let mut next = vec![0f64; cfg.locs + 1];
        for k in 1..=cfg.locs {
            next[k] += ways[k] * k as f64 * c;
            if k < cfg.locs {
                next[k + 1] += ways[k] * c;
            }
        }
        ways = next;
    }
    ways.iter().sum()
}

/// The number of programs of the whole configuration (see [`unit_size`]).
pub fn search_size(cfg: &Config) -> f64 {
    units(cfg).iter().map(|u| unit_size(u, cfg)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_compositions() {
        assert_eq!(splits(2, 4), vec![vec![1, 3], vec![2, 2], vec![3, 1]]);
        assert_eq!(splits(3, 3), vec![vec![1, 1, 1]]);
        assert!(splits(3, 2).is_empty());
        // C(M-1, N-1) compositions.
        assert_eq!(splits(4, 9).len(), 56);
    }

    #[test]
    fn shapes_obey_meaningful_comparisons() {
        // len 2, pc 0: 2 stores + jumps {0, END} x 2 checks x 3 exchanges.
        let s = shapes(2, 0, 2);
        assert_eq!(s.len(), 2 + 2 * 2 * 3);
        for i in &s {
            if i.is_store_like(0, 2) {
                assert!(i.check == 0 && i.exch.is_some());
            }
        }
        let mut d = s.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), s.len());
    }

    #[test]
    fn unit_sizes_count_canonical_programs() {
        // 2t2i, split (1,1): first instruction fixed (loc 0), second: 8
        // shapes at loc 0 or 1.
        let cfg = Config::new(2, 2);
        let us = units(&cfg);
        assert_eq!(us.len(), 8);
        assert!(us.iter().all(|u| unit_size(u, &cfg) == 16.0));
        assert_eq!(search_size(&cfg), 128.0);
    }

    #[test]
    fn refined_pieces_partition_their_units() {
        for cfg in [Config::new(2, 3), Config::new(3, 4), Config::new(2, 2)] {
            let us = units(&cfg);
            let mut pieces = us.clone();
            for _ in 0..3 {
                pieces = refine(&pieces, &cfg);
                let total: f64 = pieces.iter().map(|p| unit_size(p, &cfg)).sum();
                assert_eq!(total, search_size(&cfg), "{}", cfg.name());
            }
            // 2t2i: after one refinement every piece is one program.
            if cfg.instrs == 2 {
                assert!(pieces.iter().all(|p| unit_size(p, &cfg) == 1.0));
            }
        }
    }
}
