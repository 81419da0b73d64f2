//! The graph toolkit of both engines: strongly connected components and
//! shortest paths, written once over [`Successors`] (a graph as its nodes'
//! successor lists) or petgraph's `DiGraph`, and used by the AXB space
//! builder ([`crate::axb::space`]), the AXB verdict rules
//! (`oracle/src/axb/check.rs`), and the kernel engines (`oracle`'s
//! `kernel::arena`, `kernel::check`, `kernel::witness`).
//!
//! `oracle/src/axb/decide.rs` keeps a Tarjan of its own on purpose: it is
//! the deliberately independent second implementation the verdicts are
//! cross-checked against, and sharing this code would make the check
//! agree with itself.

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::VecDeque;

/// A directed graph as the algorithms walk it: nodes `0..node_count()`,
/// and each node's successors, in the order the walk takes them (which
/// fixes component ids and paths, so outputs are deterministic).
pub trait Successors {
    fn node_count(&self) -> usize;
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_;
}

/// A petgraph graph with only the edges `keep` accepts.
pub struct Kept<'g, N, E, F> {
    pub graph: &'g DiGraph<N, E>,
    pub keep: F,
}

impl<N, E, F: Fn(&E) -> bool> Successors for Kept<'_, N, E, F> {
    fn node_count(&self) -> usize {
        self.graph.node_count()
    }
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.graph
            .edges(NodeIndex::new(v))
            .filter(|e| (self.keep)(e.weight()))
            .map(|e| e.target().index())
    }
}

/// Strongly connected components: the component id of every node, and the
/// number of components. Tarjan's algorithm with an explicit stack, so its
/// depth is bounded by memory, not by the thread's stack (petgraph 0.6's
/// `tarjan_scc` recursed once per DFS level: a valid 4-thread test of 44
/// instructions overflowed the main thread's 8 MiB stack). Roots are taken
/// in node order; ids are given in the order components complete, which
/// is a reverse topological order.
pub fn scc<G: Successors>(g: &G) -> (Vec<u32>, usize) {
    const NONE: u32 = u32::MAX;
    let n = g.node_count();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    // A node visited and not yet in a component is on Tarjan's stack.
    let mut comp = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut frames = Vec::new();
    let (mut next, mut count) = (0u32, 0u32);
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root as u32);
        frames.push((root, g.successors(root)));
        while let Some((v, out)) = frames.last_mut() {
            let v = *v;
            if let Some(w) = out.next() {
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w as u32);
                    frames.push((w, g.successors(w)));
                } else if comp[w] == NONE {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if low[v] == index[v] {
                while let Some(x) = stack.pop() {
                    comp[x as usize] = count;
                    if x as usize == v {
                        break;
                    }
                }
                count += 1;
            }
            if let Some(&(u, _)) = frames.last() {
                low[u] = low[u].min(low[v]);
            }
        }
    }
    (comp, count as usize)
}

/// The shortest path of edges (breadth first, edges in graph order) from
/// `from` to a node satisfying `to`, using only the edges `ok` accepts.
pub fn shortest_path<N, E>(
    g: &DiGraph<N, E>,
    from: NodeIndex,
    to: impl Fn(NodeIndex) -> bool,
    ok: impl Fn(EdgeIndex, &E) -> bool,
) -> Option<Vec<EdgeIndex>> {
    let mut parent: Vec<Option<EdgeIndex>> = vec![None; g.node_count()];
    let mut seen = vec![false; g.node_count()];
    seen[from.index()] = true;
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        if to(n) {
            let mut path = Vec::new();
            let mut cur = n;
            while let Some(e) = parent[cur.index()] {
                path.push(e);
                cur = g.edge_endpoints(e).expect("an edge").0;
            }
            path.reverse();
            return Some(path);
        }
        for e in g.edges(n) {
            let t = e.target().index();
            if !seen[t] && ok(e.id(), e.weight()) {
                seen[t] = true;
                parent[t] = Some(e.id());
                queue.push_back(e.target());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Successor lists, for the tests.
    struct Lists(Vec<Vec<usize>>);

    impl Successors for Lists {
        fn node_count(&self) -> usize {
            self.0.len()
        }
        fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
            self.0[v].iter().copied()
        }
    }

    // `scc` against petgraph's recursive Tarjan on random graphs:
    // `iterative_scc_and_cycle_check_agree_with_petgraph` (axb/space.rs).

    #[test]
    fn a_deep_chain_does_not_overflow_the_stack() {
        let n = 1_000_000;
        let g = Lists((0..n).map(|v| vec![(v + 1) % n]).collect());
        assert_eq!(scc(&g).1, 1);
    }

    #[test]
    fn shortest_paths_take_only_accepted_edges() {
        let mut g = DiGraph::<(), bool>::new();
        let v: Vec<_> = (0..4).map(|_| g.add_node(())).collect();
        let short = g.add_edge(v[0], v[3], false);
        let a = g.add_edge(v[0], v[1], true);
        let b = g.add_edge(v[1], v[3], true);
        let to = |n: NodeIndex| n == v[3];
        assert_eq!(shortest_path(&g, v[0], to, |_, _| true), Some(vec![short]));
        assert_eq!(shortest_path(&g, v[0], to, |_, &w| w), Some(vec![a, b]));
        assert_eq!(shortest_path(&g, v[2], to, |_, _| true), None);
    }
}
