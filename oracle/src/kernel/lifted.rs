//! The weak rule on a product reduced by symmetry ([`super::symmetry`],
//! docs/KERNEL.md §8.1).
//!
//! The weak rule is about which entity steps along a cycle, which the
//! reduced space loses; so each cyclic component of the reduced space is
//! lifted: the original states it stands for are explored from its
//! canonical states, and the rule is checked on their components exactly.
//! This sits above both the product and the checker, so that the symmetry
//! module (which the product uses to canonicalize) needs neither.

use super::check;
use super::product::{Kernel, Move, Product};
use super::KernelError;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use progress_litmus::axb::space::{reserve_edge, reserve_index, reserve_node, scc_ids};
use progress_litmus::kernel::machine::Packed;
use rustc_hash::FxHashMap;

/// The weak rule on a product built with or without symmetry (exact in
/// both cases; see the module documentation). Deadlocks are not checked
/// here.
pub fn weak_passes<S: Packed>(k: &Kernel, p: &Product<S>) -> Result<bool, KernelError> {
    if k.symmetry.is_none() {
        return Ok(check::weak_witness_component(k, p).is_none());
    }
    let comps = check::components(k, p);
    let g = &p.lts.graph;
    let mut members: FxHashMap<u32, Vec<NodeIndex>> = FxHashMap::default();
    for n in g.node_indices() {
        let c = comps.id[n.index()];
        if comps.internal[c as usize] {
            members.entry(c).or_default().push(n);
        }
    }
    let mut cyclic: Vec<(u32, Vec<NodeIndex>)> = members.into_iter().collect();
    cyclic.sort_by_key(|(_, nodes)| nodes[0]);
    for (c, nodes) in cyclic {
        if lifted_witness(k, p, &comps.id, c, &nodes)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Bytes a lifted state of capacity is charged beyond its graph and index:
/// enabled entities and work list 12, component ids and their search 20,
/// per-component masks 25, rounded up.
const LIFT_BYTES_PER_STATE: usize = 64;

/// Explores the original states a reduced component stands for and checks
/// the weak rule on their components.
fn lifted_witness<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
    comp: &[u32],
    c: u32,
    nodes: &[NodeIndex],
) -> Result<bool, KernelError> {
    let max_states = p.max_states;
    // The lifted component is held beside the product: it gets what the
    // product left of the budget.
    let mut meter = p.meter.rest();
    let oom = |err| KernelError::OutOfMemory {
        bound: max_states,
        err,
    };
    let g = &p.lts.graph;
    let in_component = |t: &S| -> bool {
        let mut canon = *t;
        k.symmetry
            .as_ref()
            .expect("symmetry")
            .canonicalize(canon.as_mut());
        p.lts
            .index
            .get(&canon)
            .is_some_and(|n| comp[n.index()] == c)
    };
    let mut lifted: DiGraph<S, Move> = DiGraph::new();
    let mut index: FxHashMap<S, NodeIndex> = FxHashMap::default();
    let mut enabled: Vec<u64> = Vec::new();
    let mut work: Vec<NodeIndex> = Vec::new();
    for &n in nodes {
        let s = g[n];
        reserve_node(&mut lifted, &mut meter, LIFT_BYTES_PER_STATE).map_err(oom)?;
        reserve_index(&mut index, &mut meter).map_err(oom)?;
        let id = lifted.add_node(s);
        index.insert(s, id);
        enabled.push(0);
        work.push(id);
    }
    let mut out: Vec<(Move, S)> = Vec::new();
    while let Some(x) = work.pop() {
        let s = lifted[x];
        out.clear();
        k.successors_with(&s, &mut out, false)
            .map_err(KernelError::Fault)?;
        for &(mv, t) in &out {
            if !in_component(&t) {
                continue;
            }
            let y = match index.get(&t) {
                Some(&y) => y,
                None => {
                    if lifted.node_count() >= max_states {
                        return Err(KernelError::TooLarge(max_states));
                    }
                    reserve_node(&mut lifted, &mut meter, LIFT_BYTES_PER_STATE).map_err(oom)?;
                    reserve_index(&mut index, &mut meter).map_err(oom)?;
                    let y = lifted.add_node(t);
                    index.insert(t, y);
                    enabled.push(0);
                    work.push(y);
                    y
                }
            };
            reserve_edge(&mut lifted, &mut meter).map_err(oom)?;
            lifted.add_edge(x, y, mv);
        }
        enabled[x.index()] = k.enabled(s.as_ref());
    }
    let (ids, count) = scc_ids(&lifted);
    let mut internal = vec![false; count];
    let mut steppers = vec![0u64; count];
    let mut always = vec![u64::MAX; count];
    let mut guaranteed = vec![0u64; count];
    for n in lifted.node_indices() {
        let id = ids[n.index()] as usize;
        always[id] &= enabled[n.index()];
        guaranteed[id] = k.guaranteed(lifted[n].as_ref());
    }
    for e in lifted.edge_references() {
        let id = ids[e.source().index()] as usize;
        if id == ids[e.target().index()] as usize {
            internal[id] = true;
            if e.weight().is_step() {
                steppers[id] |= k.move_mask(*e.weight());
            }
        }
    }
    Ok((0..count).any(|id| internal[id] && guaranteed[id] & always[id] & !steppers[id] == 0))
}
