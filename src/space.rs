//! The explicit state-space builder.
//!
//! [`explore`] builds, breadth first from an initial state, the graph of
//! every reachable state of any transition system whose states are small
//! `Copy` values. [`program_space`] instantiates it for an AXB test alone
//! (states: memory and pcs; transitions: steps), which is what the
//! synthesizer's constraints and the idiom recogniser talk about; the oracle
//! instantiates it for the product of a test with a progress model.
//!
//! Node 0 is always the initial state, and node and edge order depend only on
//! the successor function, so every output built from a space is
//! deterministic.

use crate::machine::{Machine, PState};
use crate::test::Test;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::hash::Hash;

/// A labelled transition system over reachable states.
#[derive(Clone, Debug)]
pub struct Lts<S, L> {
    pub graph: DiGraph<S, L>,
    pub index: FxHashMap<S, NodeIndex>,
}

impl<S: Copy + Eq + Hash, L> Lts<S, L> {
    pub fn initial(&self) -> NodeIndex {
        NodeIndex::new(0)
    }

    pub fn num_states(&self) -> usize {
        self.graph.node_count()
    }

    pub fn num_transitions(&self) -> usize {
        self.graph.edge_count()
    }
}

/// The state space grew past the bound it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub bound: usize,
}

/// Builds every state reachable from `init`. `succ(s, emit)` calls
/// `emit(label, next)` once per transition out of `s`.
pub fn explore<S, L, F>(init: S, succ: F) -> Lts<S, L>
where
    S: Copy + Eq + Hash,
    F: FnMut(S, &mut dyn FnMut(L, S)),
{
    explore_bounded(init, usize::MAX, succ).expect("unbounded exploration")
}

/// Like [`explore`], but gives up once more than `max_states` states exist.
pub fn explore_bounded<S, L, F>(
    init: S,
    max_states: usize,
    mut succ: F,
) -> Result<Lts<S, L>, TooLarge>
where
    S: Copy + Eq + Hash,
    F: FnMut(S, &mut dyn FnMut(L, S)),
{
    let mut graph = DiGraph::new();
    let mut index = FxHashMap::default();
    let n0 = graph.add_node(init);
    index.insert(init, n0);
    let mut queue = VecDeque::from([n0]);
    let mut out: Vec<(L, S)> = Vec::new();
    while let Some(n) = queue.pop_front() {
        let s = graph[n];
        succ(s, &mut |l, t| out.push((l, t)));
        for (l, t) in out.drain(..) {
            let m = match index.get(&t) {
                Some(&m) => m,
                None => {
                    if graph.node_count() >= max_states {
                        return Err(TooLarge { bound: max_states });
                    }
                    let m = graph.add_node(t);
                    index.insert(t, m);
                    queue.push_back(m);
                    m
                }
            };
            graph.add_edge(n, m, l);
        }
    }
    Ok(Lts { graph, index })
}

/// A step of one thread in the program's own state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    pub thread: u8,
    /// The pc of the instruction executed.
    pub pc: u8,
    /// Whether its comparison held.
    pub taken: bool,
}

/// The state space of a test on its own: memory and pcs, one transition per
/// step of an unfinished thread.
pub fn program_space(test: &Test) -> Lts<PState, Step> {
    let m = Machine::new(test);
    explore(m.initial(), |s, emit| program_successors(&m, s, emit))
}

/// [`program_space`] with a bound on the number of states.
pub fn program_space_bounded(
    test: &Test,
    max_states: usize,
) -> Result<Lts<PState, Step>, TooLarge> {
    let m = Machine::new(test);
    explore_bounded(m.initial(), max_states, |s, emit| {
        program_successors(&m, s, emit)
    })
}

fn program_successors(m: &Machine, s: PState, emit: &mut dyn FnMut(Step, PState)) {
    for t in 0..m.num_threads() {
        if let Some((next, info)) = m.step(s, t) {
            emit(
                Step {
                    thread: t as u8,
                    pc: info.pc as u8,
                    taken: info.taken,
                },
                next,
            );
        }
    }
}

/// Whether the graph has a cycle (self-loops included).
pub fn has_cycle<N, E>(g: &DiGraph<N, E>) -> bool {
    petgraph::algo::is_cyclic_directed(g)
}

/// The nodes from which some node satisfying `target` is reachable
/// (backward breadth-first search), as a membership vector.
pub fn can_reach<N, E>(g: &DiGraph<N, E>, target: impl Fn(NodeIndex) -> bool) -> Vec<bool> {
    let mut seen = vec![false; g.node_count()];
    let mut stack: Vec<NodeIndex> = g.node_indices().filter(|&n| target(n)).collect();
    for &n in &stack {
        seen[n.index()] = true;
    }
    while let Some(n) = stack.pop() {
        for e in g.edges_directed(n, petgraph::Direction::Incoming) {
            let p = e.source();
            if !seen[p.index()] {
                seen[p.index()] = true;
                stack.push(p);
            }
        }
    }
    seen
}

/// Graphviz DOT for a graph, with labels given by closures. Output order is
/// node and edge index order, so it is deterministic.
pub fn to_dot<N, E>(
    g: &DiGraph<N, E>,
    name: &str,
    node_label: impl Fn(NodeIndex, &N) -> String,
    edge_label: impl Fn(&E) -> String,
) -> String {
    let esc = |s: String| s.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out = format!(
        "digraph \"{}\" {{\n  node [shape=box, fontname=\"monospace\"];\n",
        esc(name.to_string())
    );
    for n in g.node_indices() {
        out.push_str(&format!(
            "  s{} [label=\"{}\"{}];\n",
            n.index(),
            esc(node_label(n, &g[n])),
            if n.index() == 0 { ", penwidth=2" } else { "" }
        ));
    }
    for e in g.edge_references() {
        out.push_str(&format!(
            "  s{} -> s{} [label=\"{}\"];\n",
            e.source().index(),
            e.target().index(),
            esc(edge_label(e.weight()))
        ));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text;

    #[test]
    fn producer_consumer_space() {
        // T0 waits for T1's flag: one-way producer-consumer.
        let t =
            text::parse("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)\n").unwrap();
        let lts = program_space(&t);
        // (pc0, pc1, mem): (0,0,0) (0,1,1) (1,1,1) and T0 spinning on (0,0,0)
        assert_eq!(lts.num_states(), 3);
        assert!(has_cycle(&lts.graph));
        let m = Machine::new(&t);
        let reach = can_reach(&lts.graph, |n| m.all_finished(lts.graph[n]));
        assert!(reach.iter().all(|&r| r));
    }

    #[test]
    fn bounded_exploration_stops() {
        let t =
            text::parse("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)\n").unwrap();
        assert_eq!(
            program_space_bounded(&t, 2).unwrap_err(),
            TooLarge { bound: 2 }
        );
        assert!(program_space_bounded(&t, 3).is_ok());
    }
}
