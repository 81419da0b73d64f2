//! The verdict rules on a product (docs/KERNEL.md §4).
//!
//! Every entity in P (guaranteed: the device, workgroups, subgroups,
//! invocations) carries an obligation; P is constant inside a strongly
//! connected component (F sets only grow on steps and Terminates are
//! irreversible).
//!
//! - A *deadlock* is a reachable state with no transition that is not the
//!   all-terminated state: no schedule finishes from there, under any model.
//! - *Weak fairness* fails iff there is a deadlock or a component with an
//!   internal transition in which every guaranteed entity either steps
//!   (some invocation inside it steps on an internal transition) or is
//!   disabled at some state (has no move there).
//! - *Strong fairness* passes iff every reachable state is in the attractor
//!   of termination: the least set containing the all-terminated states and
//!   every state from which a Terminate leads into the set, or in which some
//!   guaranteed entity has a move and all its moves lead into the set.
//!
//! With one invocation per workgroup these are the rules of docs/SPEC.md §3
//! (the oracle's tests prove it on every published test): the device rule
//! makes "unfair" the acyclicity check, and a guaranteed workgroup is its
//! one invocation.

use super::product::{Kernel, Move, Product};
use petgraph::graph::DiGraph;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use progress_litmus::graph::{attractor, Kept, NodeSet, Successors};
use progress_litmus::kernel::machine::Packed;

/// The first reachable deadlock (in node order), if any.
pub fn deadlock<S: Packed>(k: &Kernel, p: &Product<S>) -> Option<NodeIndex> {
    let g = &p.lts.graph;
    g.node_indices()
        .find(|&n| g.edges(n).next().is_none() && !k.all_done(g[n].as_ref()))
}

/// A product graph as the weak rule reads it, written once for the three
/// tables it runs on (the full product here, the lean tables in
/// [`super::lean`], the lifted components in [`super::lifted`]): its
/// states `0..node_count()` and the edges a run may repeat (not a
/// `choose finitely` jump, §2.11) as [`Successors`], and those edges
/// with what moves on them.
pub trait Moves: Successors {
    /// The edges out of `v` a run may repeat: target, the entities that
    /// move ([`Kernel::move_mask`]) and whether the edge is a step.
    fn moves(&self, v: usize) -> impl Iterator<Item = (usize, u64, bool)> + '_;
}

/// The full product's edges, as the rules read them.
pub struct Runs<'a, S> {
    pub k: &'a Kernel,
    pub g: &'a DiGraph<S, Move>,
}

impl<S> Successors for Runs<'_, S> {
    fn node_count(&self) -> usize {
        self.g.node_count()
    }
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.moves(v).map(|(t, _, _)| t)
    }
}

impl<S> Moves for Runs<'_, S> {
    fn moves(&self, v: usize) -> impl Iterator<Item = (usize, u64, bool)> + '_ {
        (self.g.edges(NodeIndex::new(v)))
            .filter(|e| !e.weight().is_finite())
            .map(|e| {
                let m = *e.weight();
                (e.target().index(), self.k.move_mask(m), m.is_step())
            })
    }
}

/// Strongly connected components with what the weak rule needs.
pub struct Components {
    pub id: Vec<u32>,
    /// Whether the component has an internal transition.
    pub internal: Vec<bool>,
    /// Entities with an internal step.
    pub steppers: Vec<u64>,
    /// Entities with a move in every state of the component (of the
    /// components with an internal transition; the others keep all bits).
    pub always: Vec<u64>,
}

impl Components {
    /// The components of `g` and their facts; `enabled(v)`: the entities
    /// with a move in state `v`, asked of the states of cyclic components
    /// only (most components are one state without a loop).
    pub fn of<G: Moves>(g: &G, enabled: impl Fn(usize) -> u64) -> Components {
        let (id, count) = progress_litmus::graph::scc(g);
        let mut internal = vec![false; count];
        let mut steppers = vec![0u64; count];
        for v in 0..g.node_count() {
            let c = id[v] as usize;
            for (t, mask, step) in g.moves(v) {
                if id[t] as usize == c {
                    internal[c] = true;
                    if step {
                        steppers[c] |= mask;
                    }
                }
            }
        }
        let mut always = vec![u64::MAX; count];
        for (v, &c) in id.iter().enumerate() {
            if internal[c as usize] {
                always[c as usize] &= enabled(v);
            }
        }
        Components {
            id,
            internal,
            steppers,
            always,
        }
    }

    /// The first state (in id order) of a component that witnesses
    /// non-termination under weak fairness: it has an internal
    /// transition, and no entity guaranteed in it (`guarantees_any(v,
    /// open)`: whether some entity of `open` is guaranteed in state `v`;
    /// the set is the same in every state of a component) has a move in
    /// every state of it and no internal step.
    pub fn witness(&self, guarantees_any: impl Fn(usize, u64) -> bool) -> Option<usize> {
        (0..self.id.len()).find(|&v| {
            let c = self.id[v] as usize;
            self.internal[c] && !guarantees_any(v, self.always[c] & !self.steppers[c])
        })
    }
}

pub fn components<S: Packed>(k: &Kernel, p: &Product<S>) -> Components {
    let g = &p.lts.graph;
    Components::of(&Runs { k, g }, |v| k.enabled(g[NodeIndex::new(v)].as_ref()))
}

/// The nodes of the first component (by its first node) that witnesses
/// non-termination under weak fairness, and the entities that must step
/// in it.
pub fn weak_witness_component<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
) -> Option<(Vec<NodeIndex>, u64)> {
    let c = components(k, p);
    let g = &p.lts.graph;
    let bad: NodeIndex = NodeIndex::new(c.witness(|v, open| p.guaranteed[v] & open != 0)?);
    let id = c.id[bad.index()];
    let nodes = g.node_indices().filter(|n| c.id[n.index()] == id).collect();
    Some((nodes, p.guaranteed[bad.index()] & c.always[id as usize]))
}

/// Whether the program is guaranteed to terminate under weak fairness.
pub fn weak_passes<S: Packed>(k: &Kernel, p: &Product<S>) -> bool {
    deadlock(k, p).is_none() && weak_witness_component(k, p).is_none()
}

/// The attractor of termination under strong fairness (the toolkit's
/// [`attractor`], by its work list over the product's incoming edges).
pub fn strong_good<S: Packed>(k: &Kernel, p: &Product<S>) -> NodeSet {
    let g = &p.lts.graph;
    let mut good = NodeSet::new(g.node_count());
    for n in g.node_indices() {
        if k.all_done(g[n].as_ref()) {
            good.insert(n.index());
        }
    }
    let joins = |good: &NodeSet, n: usize| -> bool {
        let (mut has, mut bad) = (0u64, 0u64);
        for e in g
            .edges(NodeIndex::new(n))
            .filter(|e| !e.weight().is_finite())
        {
            let mask = k.move_mask(*e.weight());
            has |= mask;
            if good.contains(e.target().index()) {
                if !e.weight().is_step() {
                    return true;
                }
            } else {
                bad |= mask;
            }
        }
        p.guaranteed[n] & has & !bad != 0
    };
    let infinite = || Kept {
        graph: g,
        keep: |m: &Move| !m.is_finite(),
    };
    attractor(&mut good, joins, 0, infinite);
    good
}

/// Whether the program is guaranteed to terminate under strong fairness.
pub fn strong_passes<S: Packed>(k: &Kernel, p: &Product<S>) -> bool {
    strong_good(k, p).is_full()
}
