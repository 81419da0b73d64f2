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
use progress_litmus::axb::space::{reserve_edge, reserve_index, reserve_node, Meter};
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

/// A reduced component's original states as they are explored, with the
/// budget they are charged to: the tables [`lifted_witness`] checks the
/// weak rule on.
struct Lift<S> {
    graph: DiGraph<S, Move>,
    index: FxHashMap<S, NodeIndex>,
    /// Per state: the entities enabled in it (set once it is explored).
    enabled: Vec<u64>,
    /// States whose successors are still to be explored.
    work: Vec<NodeIndex>,
    meter: Meter,
    /// The state bound, named by an out-of-memory error.
    max_states: usize,
}

impl<S: Packed> Lift<S> {
    /// Adds state `s`, to be explored, charging its tables to the meter.
    fn add(&mut self, s: S) -> Result<NodeIndex, KernelError> {
        let bound = self.max_states;
        let oom = |err| KernelError::OutOfMemory { bound, err };
        reserve_node(&mut self.graph, &mut self.meter, LIFT_BYTES_PER_STATE).map_err(oom)?;
        reserve_index(&mut self.index, &mut self.meter).map_err(oom)?;
        let id = self.graph.add_node(s);
        self.index.insert(s, id);
        self.enabled.push(0);
        self.work.push(id);
        Ok(id)
    }
}

/// Explores the original states a reduced component stands for and checks
/// the weak rule on their components.
fn lifted_witness<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
    comp: &[u32],
    c: u32,
    nodes: &[NodeIndex],
) -> Result<bool, KernelError> {
    let lift = lift_component(k, p, comp, c, nodes)?;
    Ok(weak_witness(k, &lift.graph, &lift.enabled))
}

/// The original states of reduced component `c` (whose states are
/// `nodes`; `comp` gives every reduced state's component): explored from
/// the canonical states, keeping the successors whose canonical form is in
/// the component. It is held beside the product, so it gets what the
/// product left of the budget, and the state bound holds for it too.
fn lift_component<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
    comp: &[u32],
    c: u32,
    nodes: &[NodeIndex],
) -> Result<Lift<S>, KernelError> {
    let max_states = p.max_states;
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
    let mut lift = Lift {
        graph: DiGraph::new(),
        index: FxHashMap::default(),
        enabled: Vec::new(),
        work: Vec::new(),
        meter: p.meter.rest(),
        max_states,
    };
    for &n in nodes {
        lift.add(g[n])?;
    }
    let mut out: Vec<(Move, S)> = Vec::new();
    while let Some(x) = lift.work.pop() {
        let s = lift.graph[x];
        out.clear();
        k.successors_with(&s, &mut out, false)
            .map_err(KernelError::Fault)?;
        for &(mv, t) in &out {
            // The component's cycles take no `choose finitely` jump (§2.11).
            if mv.is_finite() || !in_component(&t) {
                continue;
            }
            let y = match lift.index.get(&t) {
                Some(&y) => y,
                None => {
                    if lift.graph.node_count() >= max_states {
                        return Err(KernelError::TooLarge(max_states));
                    }
                    lift.add(t)?
                }
            };
            reserve_edge(&mut lift.graph, &mut lift.meter).map_err(|err| {
                KernelError::OutOfMemory {
                    bound: max_states,
                    err,
                }
            })?;
            lift.graph.add_edge(x, y, mv);
        }
        lift.enabled[x.index()] = k.enabled(s.as_ref());
    }
    Ok(lift)
}

/// The weak rule on the lifted states, exactly: is there a cyclic
/// component in which some guaranteed entity is enabled in every state yet
/// never steps along the cycle (the rule's witness of non-termination)?
/// ([`check::Components`]: the rule written once.)
fn weak_witness<S: Packed>(k: &Kernel, lifted: &DiGraph<S, Move>, enabled: &[u64]) -> bool {
    let c = check::Components::of(&check::Runs { k, g: lifted }, |v| enabled[v]);
    c.witness(|v, open| k.guarantees_any(lifted[NodeIndex::new(v)].as_ref(), open))
        .is_some()
}
