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

/// Whether the graph has a cycle (self-loops included). Kahn's algorithm:
/// iterative, so no state space is too deep for it (petgraph's
/// `is_cyclic_directed` recurses once per DFS level and overflows the stack
/// on long chains of states).
pub fn has_cycle<N, E>(g: &DiGraph<N, E>) -> bool {
    let mut indegree = vec![0u32; g.node_count()];
    for e in g.edge_references() {
        indegree[e.target().index()] += 1;
    }
    let mut ready: Vec<NodeIndex> = g
        .node_indices()
        .filter(|n| indegree[n.index()] == 0)
        .collect();
    let mut removed = 0;
    while let Some(n) = ready.pop() {
        removed += 1;
        for e in g.edges(n) {
            let d = &mut indegree[e.target().index()];
            *d -= 1;
            if *d == 0 {
                ready.push(e.target());
            }
        }
    }
    removed < g.node_count()
}

/// Strongly connected components: the component id of every node, and the
/// number of components. Tarjan's algorithm with an explicit stack, so its
/// depth is bounded by memory, not by the thread's stack (petgraph 0.6's
/// `tarjan_scc` recurses once per DFS level: a valid 4-thread test of 44
/// instructions overflowed the main thread's 8 MiB stack). Ids are given in
/// the order components complete, which is a reverse topological order.
pub fn scc_ids<N, E>(g: &DiGraph<N, E>) -> (Vec<u32>, usize) {
    const NONE: u32 = u32::MAX;
    let n = g.node_count();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut comp = vec![NONE; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // DFS frames: the node and the edges still to look at.
    let mut frames: Vec<(u32, petgraph::graph::Edges<'_, E, petgraph::Directed>)> = Vec::new();
    let mut next_index = 0u32;
    let mut count = 0u32;
    for root in g.node_indices() {
        if index[root.index()] != NONE {
            continue;
        }
        let r = root.index() as u32;
        index[r as usize] = next_index;
        low[r as usize] = next_index;
        next_index += 1;
        stack.push(r);
        on_stack[r as usize] = true;
        frames.push((r, g.edges(root)));
        while let Some((v, edges)) = frames.last_mut() {
            let v = *v as usize;
            if let Some(e) = edges.next() {
                let w = e.target().index();
                if index[w] == NONE {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    frames.push((w as u32, g.edges(e.target())));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _)) = frames.last() {
                let p = *parent as usize;
                low[p] = low[p].min(low[v]);
            }
            if low[v] == index[v] {
                loop {
                    let w = stack.pop().expect("v is on the stack") as usize;
                    on_stack[w] = false;
                    comp[w] = count;
                    if w == v {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    (comp, count as usize)
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

    /// Random graphs: the iterative algorithms agree with petgraph's
    /// recursive ones.
    #[test]
    fn iterative_scc_and_cycle_check_agree_with_petgraph() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..300 {
            let n = 1 + rand(30) as usize;
            let mut g: DiGraph<(), ()> = DiGraph::new();
            for _ in 0..n {
                g.add_node(());
            }
            for _ in 0..rand(3 * n as u64) {
                let (a, b) = (rand(n as u64) as usize, rand(n as u64) as usize);
                g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
            }
            assert_eq!(has_cycle(&g), petgraph::algo::is_cyclic_directed(&g));
            let (ids, count) = scc_ids(&g);
            let sccs = petgraph::algo::tarjan_scc(&g);
            assert_eq!(count, sccs.len());
            for c in &sccs {
                assert!(c.iter().all(|m| ids[m.index()] == ids[c[0].index()]));
            }
        }
    }

    /// A chain of a million states: deep enough to overflow any recursion.
    #[test]
    fn a_million_state_chain_needs_no_stack() {
        let mut g: DiGraph<(), ()> = DiGraph::new();
        let n = 1_000_000;
        for _ in 0..n {
            g.add_node(());
        }
        for i in 1..n {
            g.add_edge(NodeIndex::new(i - 1), NodeIndex::new(i), ());
        }
        assert!(!has_cycle(&g));
        assert_eq!(scc_ids(&g).1, n);
        g.add_edge(NodeIndex::new(n - 1), NodeIndex::new(0), ());
        assert!(has_cycle(&g));
        assert_eq!(scc_ids(&g).1, 1);
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
