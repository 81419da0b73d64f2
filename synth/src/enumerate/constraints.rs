//! The synthesis constraints of SPEC §4, checked on one program and its
//! explicit state space.
//!
//! This is the single definition of "a test of the configuration": the
//! explicit engine runs it on every candidate program, and every test the
//! SAT engine finds is re-checked with it, so the two engines can only agree
//! if the SAT encoding means what this code says.

use crate::enumerate::config::Config;
use petgraph::visit::EdgeRef;
use progress_litmus::axb::machine::{Machine, PState};
use progress_litmus::axb::space::{can_reach, has_cycle, program_space_bounded, Lts, Step};
use progress_litmus::axb::test::Test;
use std::fmt;

/// The first clause a program breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Violation {
    /// Not N threads of M instructions in total, or a location or value out
    /// of the configuration's range (§4.1).
    Shape,
    /// Some location below the highest one used is unused (§4.1).
    LocationGap,
    /// A store-like instruction with a check other than 0 or no exchange
    /// (§4.2).
    Comparison,
    /// An exchange whose location no branching instruction of another thread
    /// reads, or a branch on a location no other thread touches (§4.3).
    Influence,
    /// More reachable states than `--max-states`.
    TooManyStates,
    /// More transitions than `--max-actions`.
    TooManyActions,
    /// A branching instruction whose comparison is never true, or never
    /// false, in any reachable state (§4.4).
    BranchImpossible,
    /// A reachable state from which the all-finished state is unreachable
    /// (§4.5).
    CannotTerminate,
    /// No cycle in the reachable state space (§4.6).
    NoCycle,
    /// With `--store-must-change`: an exchange that never changes the value
    /// it overwrites.
    StoreNeverChanges,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The clauses that need no state space: shape, ranges, locations used,
/// meaningful comparisons, inter-thread influence. Also rejects programs
/// without a backward jump (`jump <= pc`), which cannot have a cycle: every
/// step then increases one pc, so this is §4.6 decided early.
pub fn check_program(test: &Test, cfg: &Config) -> Result<(), Violation> {
    if test.threads.len() != cfg.threads
        || test.num_instrs() != cfg.instrs
        || test.threads.iter().any(Vec::is_empty)
    {
        return Err(Violation::Shape);
    }
    let mut used = 0u32;
    let mut backward = false;
    for (t, pc, i) in test.instrs() {
        let len = test.threads[t].len();
        let values_ok = std::iter::once(i.check)
            .chain(i.exch)
            .all(|v| (v as usize) < cfg.values);
        if i.loc as usize >= cfg.locs || !values_ok || i.jump.pc(len) > len {
            return Err(Violation::Shape);
        }
        used |= 1 << i.loc;
        if i.is_store_like(pc, len) && (i.check != 0 || i.exch.is_none()) {
            return Err(Violation::Comparison);
        }
        backward |= i.jump.pc(len) <= pc;
    }
    if used & (used + 1) != 0 {
        return Err(Violation::LocationGap);
    }
    for (t, pc, i) in test.instrs() {
        let len = test.threads[t].len();
        let others = || {
            test.instrs()
                .filter(move |&(u, _, j)| u != t && j.loc == i.loc)
        };
        if i.exch.is_some()
            && !others().any(|(u, upc, j)| j.is_branching(upc, test.threads[u].len()))
        {
            return Err(Violation::Influence);
        }
        if i.is_branching(pc, len) && others().next().is_none() {
            return Err(Violation::Influence);
        }
    }
    if !backward {
        return Err(Violation::NoCycle);
    }
    Ok(())
}

/// The clauses about the program's state space `lts` (as built by
/// [`progress_litmus::axb::space::program_space`]): bounds, all branches possible, possible
/// termination, a cycle, and optionally store-must-change.
pub fn check_space(test: &Test, lts: &Lts<PState, Step>, cfg: &Config) -> Result<(), Violation> {
    if cfg.max_states.is_some_and(|b| lts.num_states() > b) {
        return Err(Violation::TooManyStates);
    }
    if cfg.max_actions.is_some_and(|b| lts.num_transitions() > b) {
        return Err(Violation::TooManyActions);
    }
    let g = &lts.graph;
    let m = Machine::new(test);
    // Bit 0: seen taken; bit 1: seen not taken; bit 2: seen changing.
    let mut seen: Vec<Vec<u8>> = test.threads.iter().map(|th| vec![0; th.len()]).collect();
    for e in g.edge_references() {
        let step = e.weight();
        let (t, pc) = (step.thread as usize, step.pc as usize);
        let bit = if step.taken { 1 } else { 2 };
        seen[t][pc] |= bit;
        if cfg.store_must_change {
            let i = &test.threads[t][pc];
            if i.exch
                .is_some_and(|x| m.mem(g[e.source()], i.loc as usize) != x)
            {
                seen[t][pc] |= 4;
            }
        }
    }
    for (t, pc, i) in test.instrs() {
        let s = seen[t][pc];
        if i.is_branching(pc, test.threads[t].len()) && s & 3 != 3 {
            return Err(Violation::BranchImpossible);
        }
        if cfg.store_must_change && i.exch.is_some() && s & 4 == 0 {
            return Err(Violation::StoreNeverChanges);
        }
    }
    if !can_reach(g, |n| m.all_finished(g[n])).is_full() {
        return Err(Violation::CannotTerminate);
    }
    if !has_cycle(g) {
        return Err(Violation::NoCycle);
    }
    Ok(())
}

/// Every clause of SPEC §4 (but §4.7, which is about sets of tests) and the
/// configuration's filters, building the state space only if the program
/// passes the cheap clauses.
pub fn check(test: &Test, cfg: &Config) -> Result<(), Violation> {
    check_program(test, cfg)?;
    let bound = cfg.max_states.unwrap_or(usize::MAX);
    let lts = program_space_bounded(test, bound).map_err(|_| Violation::TooManyStates)?;
    check_space(test, &lts, cfg)
}

/// Whether `test` is a test of the configuration (see [`check`]).
pub fn satisfies(test: &Test, cfg: &Config) -> bool {
    check(test, cfg).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use progress_litmus::axb::text::parse;

    fn t(src: &str) -> Test {
        parse(src).unwrap()
    }

    #[test]
    fn producer_consumer_is_a_2t2i_test() {
        let pc = t("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)\n");
        assert_eq!(check(&pc, &Config::new(2, 2)), Ok(()));
        assert_eq!(check(&pc, &Config::new(2, 3)), Err(Violation::Shape));
    }

    #[test]
    fn each_clause_can_fail() {
        let c = Config::new(2, 2);
        // Store-like with a check of 1.
        let bad = t("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_exch_branch(0,1,1,END)\n");
        assert_eq!(check(&bad, &c), Err(Violation::Comparison));
        // The store writes location 1, which nobody reads.
        let bad = t("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(1,1)\n");
        assert_eq!(check(&bad, &c), Err(Violation::Influence));
        // Only location 1 used: a gap below it.
        let bad = t("THREAD0\natomic_chk_branch(1,0,0)\nTHREAD1\natomic_store(1,1)\n");
        assert_eq!(check(&bad, &c), Err(Violation::LocationGap));
        // Never terminates: the store writes 0, the spin waits for non-0.
        let bad = t("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,0)\n");
        assert_eq!(check(&bad, &c), Err(Violation::BranchImpossible));
        // No backward jump: no cycle.
        let bad = t("THREAD0\natomic_chk_branch(0,1,END)\natomic_store(0,0)\n\
                     THREAD1\natomic_chk_branch(0,1,END)\natomic_store(0,1)\n");
        assert_eq!(check(&bad, &Config::new(2, 4)), Err(Violation::NoCycle));
        // Bounds: the producer-consumer space has 3 states and 3 transitions.
        let pc = t("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)\n");
        let mut b = c.clone();
        b.max_states = Some(2);
        assert_eq!(check(&pc, &b), Err(Violation::TooManyStates));
        b.max_states = Some(3);
        b.max_actions = Some(2);
        assert_eq!(check(&pc, &b), Err(Violation::TooManyActions));
        b.max_actions = Some(3);
        assert_eq!(check(&pc, &b), Ok(()));
    }

    #[test]
    fn cannot_terminate_is_detected() {
        // T1 swaps 1 in until it reads 1 back, then leaves 1 behind: T0,
        // spinning while it reads 1, is stuck once T1 is done.
        let bad = t("THREAD0\natomic_chk_branch(0,1,0)\nTHREAD1\natomic_exch_branch(0,0,1,0)\n");
        assert_eq!(
            check(&bad, &Config::new(2, 2)),
            Err(Violation::CannotTerminate)
        );
    }
}
