//! The graph toolkit of both engines: strongly connected components,
//! attractors (least fixpoints of a monotone rule, found backwards) and
//! shortest paths, written once over [`Successors`] and [`Predecessors`]
//! (a graph as its nodes' successor or predecessor lists) or petgraph's
//! `DiGraph`, and used by the AXB space builder ([`crate::axb::space`]),
//! the AXB verdict rules (`oracle/src/axb/check.rs`), and the kernel
//! engines (`oracle`'s `kernel::arena`, `kernel::check`, `kernel::lean`,
//! `kernel::witness`).
//!
//! `oracle/src/axb/decide.rs` keeps a Tarjan and a fixpoint of its own on
//! purpose: it is the deliberately independent second implementation the
//! verdicts are cross-checked against, and sharing this code would make
//! the check agree with itself.

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use std::collections::VecDeque;

/// A directed graph as the algorithms walk it: nodes `0..node_count()`,
/// and each node's successors, in the order the walk takes them (which
/// fixes component ids and paths, so outputs are deterministic).
pub trait Successors {
    fn node_count(&self) -> usize;
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_;
}

/// A directed graph walked backwards: each node's predecessors (with a
/// repeat per edge, as [`Successors`] lists them).
pub trait Predecessors {
    fn predecessors(&self, v: usize) -> impl Iterator<Item = usize> + '_;
}

/// A petgraph graph with only the edges `keep` accepts, walked either way
/// (petgraph keeps both adjacency lists).
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

impl<N, E, F: Fn(&E) -> bool> Predecessors for Kept<'_, N, E, F> {
    fn predecessors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.graph
            .edges_directed(NodeIndex::new(v), Direction::Incoming)
            .filter(|e| (self.keep)(e.weight()))
            .map(|e| e.source().index())
    }
}

/// The reverse of a [`Successors`] graph in compressed rows: the sources
/// of the edges into node `v` are `sources[first[v]..first[v + 1]]`, in
/// the order of their sources (4 bytes an edge and 4 a node).
pub struct Reversed {
    first: Vec<u32>,
    sources: Vec<u32>,
}

impl Reversed {
    pub fn of<G: Successors>(g: &G) -> Reversed {
        let n = g.node_count();
        let mut first = vec![0u32; n + 1];
        for v in 0..n {
            for t in g.successors(v) {
                first[t + 1] += 1;
            }
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        // Fill with first[t] as t's cursor; afterwards first[t] is where
        // t + 1 starts, so shift back by one.
        let mut sources = vec![0u32; first[n] as usize];
        for v in 0..n {
            for t in g.successors(v) {
                sources[first[t] as usize] = v as u32;
                first[t] += 1;
            }
        }
        for i in (1..=n).rev() {
            first[i] = first[i - 1];
        }
        first[0] = 0;
        Reversed { first, sources }
    }
}

impl Predecessors for Reversed {
    fn predecessors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        let range = self.first[v] as usize..self.first[v + 1] as usize;
        self.sources[range].iter().map(|&s| s as usize)
    }
}

/// A set of the nodes `0..n`, one bit a node (the attractor's random
/// reads stay in cache). Its methods are `#[inline]`: the rules of the
/// other crates test membership in their innermost loops, and the
/// workspace builds without link-time optimisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSet {
    words: Vec<u64>,
    nodes: usize,
    len: usize,
}

impl NodeSet {
    /// The empty set of nodes `0..nodes`.
    pub fn new(nodes: usize) -> NodeSet {
        NodeSet {
            words: vec![0; nodes.div_ceil(64)],
            nodes,
            len: 0,
        }
    }
    #[inline]
    pub fn contains(&self, v: usize) -> bool {
        self.words[v / 64] >> (v % 64) & 1 != 0
    }
    /// Adds `v`; whether it was new.
    #[inline]
    pub fn insert(&mut self, v: usize) -> bool {
        let (word, bit) = (&mut self.words[v / 64], 1u64 << (v % 64));
        let new = *word & bit == 0;
        *word |= bit;
        self.len += usize::from(new);
        new
    }
    /// The number of members.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Whether every node is a member.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.nodes
    }
}

/// The rule an [`attractor`] grows by: whether node `v` joins `set`.
/// Closures are rules; a rule in a hot loop may be a type whose `joins`
/// is `#[inline(always)]`, which a closure cannot be marked (the lean
/// checker's strong rule: a closure called from the search's two loops
/// stayed a call, 2% of the seqlock's instructions).
pub trait Rule {
    fn joins(&self, set: &NodeSet, v: usize) -> bool;
}

impl<F: Fn(&NodeSet, usize) -> bool> Rule for F {
    #[inline(always)]
    fn joins(&self, set: &NodeSet, v: usize) -> bool {
        self(set, v)
    }
}

/// Grows `set` to the least set that contains it and every node `v` with
/// `joins(set, v)`, for a rule `joins` that is monotone (a node that
/// joins a set joins every larger one) and reads only `v`'s successors:
/// the attractor of the strong-fairness rules, backward reachability.
/// The least fixpoint does not depend on the order nodes join in, so the
/// search is free to choose it: first at most `sweeps` sweeps over every
/// node from the last to the first (breadth-first ids mostly grow along
/// edges, so a sweep carries the set back along most paths and reads the
/// graph in order; a sweep that adds nothing has reached the fixpoint),
/// then a work list over the predecessors `preds` gives, built only then.
/// Returns the sweep that reached the fixpoint, or `None` where the work
/// list completed it (with `sweeps` 0, the work list alone).
pub fn attractor<P: Predecessors>(
    set: &mut NodeSet,
    joins: impl Rule,
    sweeps: usize,
    preds: impl FnOnce() -> P,
) -> Option<usize> {
    for sweep in 1..=sweeps {
        let before = set.len();
        for v in (0..set.nodes).rev() {
            if !set.contains(v) && joins.joins(set, v) {
                set.insert(v);
            }
        }
        if set.len() == before || set.is_full() {
            return Some(sweep);
        }
    }
    let preds = preds();
    let mut work: Vec<u32> = (0..set.nodes as u32)
        .filter(|&v| set.contains(v as usize))
        .collect();
    while let Some(v) = work.pop() {
        for src in preds.predecessors(v as usize) {
            if !set.contains(src) && joins.joins(set, src) {
                set.insert(src);
                work.push(src as u32);
            }
        }
    }
    None
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
    let (parents, found) = breadth_first(g, from, ok, to);
    Some(tree_path(g, &parents, found?))
}

/// A breadth-first search from `from` over the edges `ok` accepts, taken
/// in graph order, until `stop` holds for a node taken from the queue
/// (`stop` sees every node reached, in the order of its distance, until
/// then): each node's edge in the search tree (`None` for `from` and the
/// nodes not reached), and the node it stopped at. The tree's paths
/// ([`tree_path`]) are shortest paths.
pub fn breadth_first<N, E>(
    g: &DiGraph<N, E>,
    from: NodeIndex,
    ok: impl Fn(EdgeIndex, &E) -> bool,
    mut stop: impl FnMut(NodeIndex) -> bool,
) -> (Vec<Option<EdgeIndex>>, Option<NodeIndex>) {
    let mut parent: Vec<Option<EdgeIndex>> = vec![None; g.node_count()];
    let mut seen = vec![false; g.node_count()];
    seen[from.index()] = true;
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        if stop(n) {
            return (parent, Some(n));
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
    (parent, None)
}

/// The edges of the search tree `parent` ([`breadth_first`]) from its root
/// to `n`.
pub fn tree_path<N, E>(
    g: &DiGraph<N, E>,
    parent: &[Option<EdgeIndex>],
    n: NodeIndex,
) -> Vec<EdgeIndex> {
    let mut path = Vec::new();
    let mut cur = n;
    while let Some(e) = parent[cur.index()] {
        path.push(e);
        cur = g.edge_endpoints(e).expect("an edge").0;
    }
    path.reverse();
    path
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

    /// A random graph of `n` nodes, 0 to 3 successors each (repeats and
    /// loops included).
    fn random_graph(rand: &mut impl FnMut(u64) -> u64, n: usize) -> Lists {
        Lists(
            (0..n)
                .map(|_| (0..rand(4)).map(|_| rand(n as u64) as usize).collect())
                .collect(),
        )
    }

    /// The least fixpoint of `joins` above `seeds`, by rounds over every
    /// node until nothing joins: the definition, for the tests.
    fn naive(n: usize, seeds: &[usize], joins: impl Fn(&NodeSet, usize) -> bool) -> NodeSet {
        let mut set = NodeSet::new(n);
        seeds.iter().for_each(|&v| {
            set.insert(v);
        });
        loop {
            let joining: Vec<usize> = (0..n)
                .filter(|&v| !set.contains(v) && joins(&set, v))
                .collect();
            if joining.is_empty() {
                return set;
            }
            joining.into_iter().for_each(|v| {
                set.insert(v);
            });
        }
    }

    /// The attractor with every cap on its sweeps (the work list alone,
    /// too few sweeps, enough) is the least fixpoint of the rule, under
    /// both kinds of rule the engines use ("some successor is in the set",
    /// "every successor is, and there is one"), on random graphs; all
    /// three ends are met: fixpoints reached by sweeping, completed by the
    /// work list, and full and partial sets.
    #[test]
    fn attractors_are_least_fixpoints_whatever_the_sweeps() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m.max(1)
        };
        let (mut swept, mut listed, mut full, mut partial) = (0, 0, 0, 0);
        for round in 0..400 {
            let n = 1 + rand(40) as usize;
            let g = random_graph(&mut rand, n);
            let seeds: Vec<usize> = (0..rand(3) + 1).map(|_| rand(n as u64) as usize).collect();
            let some = |set: &NodeSet, v: usize| g.successors(v).any(|t| set.contains(t));
            let every = |set: &NodeSet, v: usize| {
                g.0[v].iter().all(|&t| set.contains(t)) && !g.0[v].is_empty()
            };
            let rule: &dyn Fn(&NodeSet, usize) -> bool =
                if round % 2 == 0 { &some } else { &every };
            let want = naive(n, &seeds, rule);
            for sweeps in [0, 1, 2, 100] {
                let mut set = NodeSet::new(n);
                seeds.iter().for_each(|&v| {
                    set.insert(v);
                });
                let at = attractor(&mut set, rule, sweeps, || Reversed::of(&g));
                assert_eq!(set, want, "round {round}, {sweeps} sweeps");
                (swept, listed) = match at {
                    Some(s) if s > 1 => (swept + 1, listed),
                    None if sweeps > 0 => (swept, listed + 1),
                    _ => (swept, listed),
                };
            }
            (full, partial) = if want.is_full() {
                (full + 1, partial)
            } else {
                (full, partial + 1)
            };
        }
        assert!(swept > 0 && listed > 0 && full > 0 && partial > 0);
    }

    #[test]
    fn reversed_rows_list_every_edge_backwards() {
        let g = Lists(vec![vec![1, 1, 2], vec![0], vec![], vec![2, 0]]);
        let r = Reversed::of(&g);
        let preds = |v| r.predecessors(v).collect::<Vec<_>>();
        assert_eq!(preds(0), [1, 3]);
        assert_eq!(preds(1), [0, 0]);
        assert_eq!(preds(2), [0, 3]);
        assert!(preds(3).is_empty());
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
