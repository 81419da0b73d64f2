//! Witnesses found on a reduced product, replayed and checked on the full
//! one (docs/KERNEL.md §8.9).
//!
//! `explain` and `check` find their witness on the product `classify`
//! decides on (partial order, local steps first, dead registers; not
//! symmetry, whose states stand for several of the program's), which is
//! often thousands of times smaller than the full product. Every
//! transition of that product is a transition of the full one between
//! states that differ at most in registers no later step reads, so the
//! witness's moves, replayed from the start on the unreduced kernel, are
//! a schedule of the program. The replay then checks, on the program's
//! own states, what makes the schedule a witness: that its last state
//! cannot move (a deadlock), or that its repeated part is fair (weak: every
//! guaranteed entity that can move all along it steps in it; strong: every
//! guaranteed entity that can move somewhere on it steps in it). A witness
//! that does not replay or check is dropped, and the caller builds the full
//! product instead; so a schedule shown is always one of the program,
//! checked, whatever the reductions do.

use super::product::{Kernel, Move, Product};
use super::witness::{Lasso, Witness};
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use progress_litmus::axb::space::{Lts, Meter};
use progress_litmus::kernel::machine::Packed;
use progress_litmus::Fairness;
use rustc_hash::FxHashMap;

/// How many times a repeated part is replayed before giving up on closing
/// it: a state's dead registers may differ from the one the cycle started
/// at after the first time round, never after the second (the registers a
/// round writes are computed from live values only).
const MAX_ROUNDS: usize = 4;

/// `w`, found on `reduced` (a product of `full`'s program and model built
/// with reductions but without symmetry), as a witness on a product of
/// `full` that holds only the states and moves of its schedule; `None`
/// if it does not replay, or is not a witness on the program's states.
pub fn replay<S: Packed>(
    red: &Kernel,
    full: &Kernel,
    reduced: &Product<S>,
    w: &Witness,
    fairness: Fairness,
) -> Option<(Product<S>, Witness)> {
    let mut r = Replay::new(red, full, reduced);
    let replayed = match w {
        Witness::Deadlock { path, .. } => {
            let path = r.path(path)?;
            let state = r.at;
            let mut out = Vec::new();
            full.successors(&r.g[state], &mut out).ok()?;
            if !out.is_empty() || full.all_done(r.g[state].as_ref()) {
                return None;
            }
            Witness::Deadlock { path, state }
        }
        Witness::Lasso { lasso, must_step } => {
            let lasso = r.lasso(lasso)?;
            r.fair(&lasso.cycle, Fairness::Weak).then_some(())?;
            Witness::Lasso {
                lasso,
                must_step: *must_step,
            }
        }
        Witness::Trap {
            reach,
            region,
            stay,
            ..
        } => {
            let reach = r.path(reach)?;
            let trap = r.at;
            let stay = r.lasso(stay)?;
            r.fair(&stay.cycle, fairness).then_some(())?;
            Witness::Trap {
                reach,
                trap,
                region: *region,
                stay,
            }
        }
    };
    Some((r.finish(), replayed))
}

/// The schedule being replayed: the program's states it has reached, as
/// a graph whose node 0 is the start.
struct Replay<'a, S> {
    red: &'a Kernel,
    full: &'a Kernel,
    reduced: &'a Product<S>,
    g: DiGraph<S, Move>,
    index: FxHashMap<S, NodeIndex>,
    /// The state the schedule has reached.
    at: NodeIndex,
    out: Vec<(Move, S)>,
}

impl<'a, S: Packed> Replay<'a, S> {
    fn new(red: &'a Kernel, full: &'a Kernel, reduced: &'a Product<S>) -> Replay<'a, S> {
        let mut r = Replay {
            red,
            full,
            reduced,
            g: DiGraph::new(),
            index: FxHashMap::default(),
            at: NodeIndex::new(0),
            out: Vec::new(),
        };
        r.at = r.node(full.initial::<S>());
        r
    }

    fn node(&mut self, s: S) -> NodeIndex {
        if let Some(&n) = self.index.get(&s) {
            return n;
        }
        let n = self.g.add_node(s);
        self.index.insert(s, n);
        n
    }

    /// The program's move `m` from the state reached to one the reduced
    /// product cannot tell from `to` (a lockstep step may have several
    /// successors with one move), taken.
    fn step(&mut self, m: Move, to: &S) -> Option<EdgeIndex> {
        let s = self.g[self.at];
        self.out.clear();
        self.full.successors(&s, &mut self.out).ok()?;
        let want = self.red.dead_cleared(to);
        let &(_, t) = self
            .out
            .iter()
            .find(|(mv, t)| *mv == m && self.red.dead_cleared(t) == want)?;
        let to = self.node(t);
        let e = self.g.add_edge(self.at, to, m);
        self.at = to;
        Some(e)
    }

    /// The moves of the reduced product's `edges`, taken in order.
    fn path(&mut self, edges: &[EdgeIndex]) -> Option<Vec<EdgeIndex>> {
        let g = &self.reduced.lts.graph;
        let moves: Vec<(Move, S)> = edges
            .iter()
            .map(|&e| (g[e], g[g.edge_endpoints(e).expect("an edge").1]))
            .collect();
        moves.into_iter().map(|(m, to)| self.step(m, &to)).collect()
    }

    /// The lasso's prefix, then its cycle round and round until the
    /// program's state at the end of a round is the one it began at.
    fn lasso(&mut self, l: &Lasso) -> Option<Lasso> {
        let mut prefix = self.path(&l.prefix)?;
        if l.cycle.is_empty() {
            return None;
        }
        for _ in 0..MAX_ROUNDS {
            let start = self.at;
            let cycle = self.path(&l.cycle)?;
            if self.at == start {
                return Some(Lasso { prefix, cycle });
            }
            prefix.extend(cycle);
        }
        None
    }

    /// Whether the cycle is fair on the program's states: every guaranteed
    /// entity (constant on a cycle: F sets only grow) that can move at
    /// every state of it (weak), or at some state of it (strong), steps in
    /// it; and it takes no `choose finitely` jump (§2.11).
    fn fair(&self, cycle: &[EdgeIndex], fairness: Fairness) -> bool {
        let Some(&first) = cycle.first() else {
            return false;
        };
        let (from, _) = self.g.edge_endpoints(first).expect("an edge");
        let guaranteed = self.full.guaranteed(self.g[from].as_ref());
        let (mut always, mut sometimes, mut stepped) = (u64::MAX, 0u64, 0u64);
        for &e in cycle {
            let m = self.g[e];
            if m.is_finite() {
                return false;
            }
            let (a, _) = self.g.edge_endpoints(e).expect("an edge");
            let en = self.full.enabled(self.g[a].as_ref());
            always &= en;
            sometimes |= en;
            if m.is_step() {
                stepped |= self.full.move_mask(m);
            }
        }
        let must = match fairness {
            Fairness::Weak => always,
            Fairness::Strong => sometimes,
        };
        guaranteed & must & !stepped == 0
    }

    /// The replayed states and moves as a product of the full kernel.
    fn finish(self) -> Product<S> {
        let guaranteed = self
            .g
            .node_weights()
            .map(|s| self.full.guaranteed(s.as_ref()))
            .collect();
        Product {
            lts: Lts {
                graph: self.g,
                index: self.index,
            },
            guaranteed,
            max_states: self.reduced.max_states,
            meter: Meter::new(0),
        }
    }
}
