//! Generalised blocking: from a refuted candidate to the family of programs
//! refuted by the same argument.
//!
//! A candidate is refuted either because it fails a model it must pass or
//! because it passes a model it must fail.
//!
//! - *Fails model A.* The oracle's witness for A ([`oracle::analyse`]) is a
//!   lasso (weak fairness: a reachable cycle on which every thread of F
//!   steps) or a trap (strong fairness: a reachable state whose closure
//!   under fair moves holds no good transition). Both are made of Steps,
//!   and a Step of thread `t` at pc `i` depends only on instruction `(t,
//!   i)` (its location, check and exchange, and its jump only if the
//!   comparison held); F, termination and the pcs along the way depend only
//!   on the Steps. So every program of the same thread lengths that agrees
//!   with the candidate on those instructions (those fields) has the same
//!   witness and fails A too: none is an answer.
//! - *Passes model B.* A pass is a statement about the whole reachable
//!   space, so the family is the programs that agree on every instruction
//!   reached (the jump only where a comparison held in some reached state):
//!   their reachable spaces, hence all eleven verdicts, are identical.
//!
//! The family kept is the smallest one over the violated models. The soundness
//! of this argument is tested against complete enumeration
//! (`tests/find.rs`): no answer of the enumerated set is in any family a
//! search blocked.

use crate::find::query::Query;
use oracle::axb::check::Witness;
use oracle::axb::product::{Event, Product};
use petgraph::graph::EdgeIndex;
use progress_litmus::axb::test::Test;
use progress_litmus::{Base, Fairness, Model, Verdicts};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One instruction fixed by a family: its position and fields; `jump` is
/// the target pc, `None` when any jump target is in the family.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Fixed {
    pub thread: usize,
    pub pc: usize,
    pub loc: u8,
    pub check: u8,
    pub exch: Option<u8>,
    pub jump: Option<usize>,
}

/// All programs with thread lengths `lens` whose instructions agree with
/// `fixed` (the other instructions free).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Family {
    pub lens: Vec<usize>,
    pub fixed: Vec<Fixed>,
}

impl Family {
    /// Whether `test` (in any location naming: families are stated in the
    /// first-use naming the search uses, so `test` is compared in it) is in
    /// the family.
    pub fn contains(&self, test: &Test) -> bool {
        let t = crate::enumerate::canon::canonical(test);
        let lens: Vec<usize> = t.threads.iter().map(Vec::len).collect();
        lens == self.lens
            && self.fixed.iter().all(|f| {
                let i = &t.threads[f.thread][f.pc];
                i.loc == f.loc
                    && i.check == f.check
                    && i.exch == f.exch
                    && f.jump.is_none_or(|j| i.jump.pc(lens[f.thread]) == j)
            })
    }

    /// How many fields the family fixes (smaller: a larger family).
    pub fn weight(&self) -> usize {
        self.fixed
            .iter()
            .map(|f| 3 + usize::from(f.jump.is_some()))
            .sum()
    }
}

/// Steps used by an argument: position -> whether a comparison held there.
type Used = BTreeMap<(usize, usize), bool>;

fn use_step(used: &mut Used, e: &Event) {
    if let Event::Step {
        thread, pc, taken, ..
    } = *e
    {
        *used.entry((thread as usize, pc as usize)).or_default() |= taken;
    }
}

fn family_of(test: &Test, used: &Used) -> Family {
    let lens: Vec<usize> = test.threads.iter().map(Vec::len).collect();
    let fixed = used
        .iter()
        .map(|(&(t, pc), &taken)| {
            let i = &test.threads[t][pc];
            Fixed {
                thread: t,
                pc,
                loc: i.loc,
                check: i.check,
                exch: i.exch,
                jump: taken.then(|| i.jump.pc(lens[t])),
            }
        })
        .collect();
    Family { lens, fixed }
}

fn edges_used(p: &Product, used: &mut Used, edges: &[EdgeIndex]) {
    for &e in edges {
        use_step(used, &p.lts.graph[e]);
    }
}

/// The instructions the witness of `test` failing `model` depends on.
fn failure_family(test: &Test, model: Model) -> Family {
    let a = oracle::analyse(test, model);
    let p = &a.product;
    let mut used = Used::new();
    match a.witness.expect("a failing verdict has a witness") {
        Witness::Lasso(l) => {
            edges_used(p, &mut used, &l.prefix);
            edges_used(p, &mut used, &l.cycle);
        }
        Witness::Trap { reach, closure, .. } => {
            edges_used(p, &mut used, &reach);
            // Every fair move out of the closure: these decide that no
            // good transition is reachable from the trap.
            let g = &p.lts.graph;
            for n in closure {
                for e in g.edges(n) {
                    if let Event::Step { thread, f, .. } = *e.weight() {
                        if f & (1 << thread) != 0 {
                            use_step(&mut used, e.weight());
                        }
                    }
                }
            }
        }
    }
    family_of(test, &used)
}

/// Every instruction reached, with whether its comparison ever held: the
/// whole reachable space.
fn space_family(test: &Test) -> Family {
    let p = Product::build(test, Base::Unfair);
    let mut used = Used::new();
    for e in p.lts.graph.edge_references() {
        use_step(&mut used, e.weight());
    }
    family_of(test, &used)
}

/// The largest family of programs refuted by the argument that refutes
/// `test` (whose verdicts `v` do not answer `query`), or `None` if `v`
/// answers it.
pub fn refutation(test: &Test, v: &Verdicts, query: &Query) -> Option<Family> {
    let mut best: Option<Family> = None;
    let mut keep = |f: Family| {
        if best.as_ref().is_none_or(|b| f.weight() < b.weight()) {
            best = Some(f);
        }
    };
    // Weak witnesses are lassos, usually smaller than strong traps; try
    // every failing required pass.
    let mut failing: Vec<Model> = query
        .passes
        .iter()
        .copied()
        .filter(|&m| !v.passes(m))
        .collect();
    failing.sort_by_key(|m| m.fairness != Fairness::Weak);
    for m in failing {
        keep(failure_family(test, m));
    }
    if query.fails.iter().any(|&m| v.passes(m)) {
        keep(space_family(test));
    }
    best
}
