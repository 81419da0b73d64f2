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
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use progress_litmus::axb::space::scc_ids_of;
use progress_litmus::graph::{attractor, Kept, NodeSet};
use progress_litmus::kernel::machine::Packed;

/// The entities that have a move in each state (in the unreduced
/// product: a reduced one may explore only some of them).
pub fn enabled<S: Packed>(k: &Kernel, p: &Product<S>) -> Vec<u64> {
    p.lts
        .graph
        .node_weights()
        .map(|s| k.enabled(s.as_ref()))
        .collect()
}

/// The first reachable deadlock (in node order), if any.
pub fn deadlock<S: Packed>(k: &Kernel, p: &Product<S>) -> Option<NodeIndex> {
    let g = &p.lts.graph;
    g.node_indices()
        .find(|&n| g.edges(n).next().is_none() && !k.all_done(g[n].as_ref()))
}

/// Strongly connected components with what the weak rule needs.
pub struct Components {
    pub id: Vec<u32>,
    /// Whether the component has an internal transition.
    pub internal: Vec<bool>,
    /// Entities with an internal step.
    pub steppers: Vec<u64>,
    /// Entities with a move in every state of the component.
    pub always: Vec<u64>,
}

pub fn components<S: Packed>(k: &Kernel, p: &Product<S>) -> Components {
    let g = &p.lts.graph;
    // A `choose finitely` jump is on no cycle of a run (§2.11).
    let (ids, count) = scc_ids_of(g, |m| !m.is_finite());
    let mut internal = vec![false; count];
    let mut steppers = vec![0u64; count];
    let mut always = vec![u64::MAX; count];
    for (n, en) in g.node_indices().zip(enabled(k, p)) {
        let c = ids[n.index()] as usize;
        always[c] &= en;
    }
    for e in g.edge_references().filter(|e| !e.weight().is_finite()) {
        let c = ids[e.source().index()] as usize;
        if c == ids[e.target().index()] as usize {
            internal[c] = true;
            if e.weight().is_step() {
                steppers[c] |= k.move_mask(*e.weight());
            }
        }
    }
    Components {
        id: ids,
        internal,
        steppers,
        always,
    }
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
    let bad = g.node_indices().find(|&n| {
        let id = c.id[n.index()] as usize;
        c.internal[id] && p.guaranteed[n.index()] & c.always[id] & !c.steppers[id] == 0
    })?;
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
