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

use crate::axb::machine::{Machine, PState};
use crate::axb::test::Test;
use crate::graph::{attractor, Kept, NodeSet};
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

/// A byte budget for the tables of one exploration (issue 20 item 3).
///
/// Counting states alone misjudges memory: a kernel program's state costs
/// from under 100 to over 240 bytes with its transitions and hash entry,
/// and a growing table briefly doubles. A meter counts the *capacity* of
/// every table it is told about, refuses a growth that would pass its
/// limit, and before each growth checks that the system can give the new
/// block now (`try_reserve`), so that a refusal is an error for that input
/// rather than an abort of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meter {
    limit: usize,
    used: usize,
}

/// A table could not grow: past its meter's limit, or refused by the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    /// The meter's limit, in bytes.
    pub limit: usize,
    /// The bytes the tables would have held after the growth.
    pub wanted: usize,
    /// The system refused the block (else the budget did).
    pub refused_by_system: bool,
}

impl Meter {
    pub fn new(limit: usize) -> Meter {
        Meter { limit, used: 0 }
    }

    /// Bytes taken so far.
    pub fn used(&self) -> usize {
        self.used
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// A meter for further tables, with what this one has left.
    pub fn rest(&self) -> Meter {
        Meter::new(self.limit.saturating_sub(self.used))
    }

    /// Takes `bytes` more from the budget for a table whose new block is
    /// `block` bytes, checking first that the system can give that block.
    pub fn take(&mut self, bytes: usize, block: usize) -> Result<(), OutOfMemory> {
        let wanted = self.used.saturating_add(bytes);
        let refused = |by_system| OutOfMemory {
            limit: self.limit,
            wanted,
            refused_by_system: by_system,
        };
        if wanted > self.limit {
            return Err(refused(false));
        }
        if Vec::<u8>::new().try_reserve_exact(block).is_err() {
            return Err(refused(true));
        }
        self.used = wanted;
        Ok(())
    }
}

/// Why a metered exploration stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exceeded {
    States(TooLarge),
    Memory(OutOfMemory),
}

/// The new capacity of a full table of `cap` elements.
fn grown(cap: usize) -> usize {
    cap.saturating_mul(2).max(64)
}

/// Makes room for one more node, charging `extra` bytes a node of
/// capacity for the tables the caller keeps per state.
pub fn reserve_node<S, L>(
    g: &mut DiGraph<S, L>,
    meter: &mut Meter,
    extra: usize,
) -> Result<(), OutOfMemory> {
    let cap = g.capacity().0;
    if g.node_count() < cap {
        return Ok(());
    }
    let new = grown(cap);
    let size = std::mem::size_of::<petgraph::graph::Node<S>>();
    meter.take(
        (new - cap).saturating_mul(size + extra),
        new.saturating_mul(size),
    )?;
    g.reserve_exact_nodes(new - g.node_count());
    Ok(())
}

/// Makes room for one more edge.
pub fn reserve_edge<S, L>(g: &mut DiGraph<S, L>, meter: &mut Meter) -> Result<(), OutOfMemory> {
    let cap = g.capacity().1;
    if g.edge_count() < cap {
        return Ok(());
    }
    let new = grown(cap);
    let size = std::mem::size_of::<petgraph::graph::Edge<L>>();
    meter.take((new - cap).saturating_mul(size), new.saturating_mul(size))?;
    g.reserve_exact_edges(new - g.edge_count());
    Ok(())
}

/// Makes room for one more entry in a state index (a swiss table: one
/// control byte an entry, 8 buckets for every 7 entries).
pub fn reserve_index<S: Eq + Hash>(
    index: &mut FxHashMap<S, NodeIndex>,
    meter: &mut Meter,
) -> Result<(), OutOfMemory> {
    let cap = index.capacity();
    if index.len() < cap {
        return Ok(());
    }
    let bytes = |c: usize| c.saturating_mul(8) / 7 * (std::mem::size_of::<(S, NodeIndex)>() + 1);
    let new = grown(cap);
    meter.take(bytes(new) - bytes(cap), bytes(new))?;
    index
        .try_reserve(new - index.len())
        .map_err(|_| OutOfMemory {
            limit: meter.limit,
            wanted: meter.used,
            refused_by_system: true,
        })?;
    // The table rounds its buckets up to a power of two, so it may hold
    // more than asked: the meter counts what it holds (issue 24: the
    // exploration's queue, no longer charged, had hidden the difference).
    let got = index.capacity();
    if got > new {
        meter.take(bytes(got) - bytes(new), 0)?;
    }
    Ok(())
}

/// [`explore_bounded`] within a byte budget: the graph and index are
/// charged to `meter` by capacity, and every node `extra` bytes more for
/// the caller's per-state tables.
///
/// Breadth first without a queue: nodes are numbered in the order they
/// are found, which is the order a FIFO queue would hand them out, so the
/// next node to expand is just the next number (the same graph, node for
/// node and edge for edge, as with a queue, without its 8 bytes a state;
/// issue 24 item 2). A new state is hashed twice, looked up then inserted:
/// the standard map's entry API would grow the index behind the meter.
pub fn explore_metered<S, L, F>(
    init: S,
    max_states: usize,
    meter: &mut Meter,
    extra: usize,
    mut succ: F,
) -> Result<Lts<S, L>, Exceeded>
where
    S: Copy + Eq + Hash,
    F: FnMut(S, &mut dyn FnMut(L, S)),
{
    let mut graph = DiGraph::new();
    let mut index = FxHashMap::default();
    let mem = Exceeded::Memory;
    reserve_node(&mut graph, meter, extra).map_err(mem)?;
    reserve_index(&mut index, meter).map_err(mem)?;
    let n0 = graph.add_node(init);
    index.insert(init, n0);
    let mut out: Vec<(L, S)> = Vec::new();
    let mut next = 0;
    while next < graph.node_count() {
        let n = NodeIndex::new(next);
        next += 1;
        let s = graph[n];
        succ(s, &mut |l, t| out.push((l, t)));
        for (l, t) in out.drain(..) {
            let m = match index.get(&t) {
                Some(&m) => m,
                None => {
                    if graph.node_count() >= max_states {
                        return Err(Exceeded::States(TooLarge { bound: max_states }));
                    }
                    reserve_node(&mut graph, meter, extra).map_err(mem)?;
                    reserve_index(&mut index, meter).map_err(mem)?;
                    let m = graph.add_node(t);
                    index.insert(t, m);
                    if m.index() % 4096 == 4095 {
                        crate::progress::stored(4096);
                    }
                    m
                }
            };
            reserve_edge(&mut graph, meter).map_err(mem)?;
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
/// number of components ([`crate::graph::scc`]: ids in the order components
/// complete, a reverse topological order).
pub fn scc_ids<N, E>(g: &DiGraph<N, E>) -> (Vec<u32>, usize) {
    scc_ids_of(g, |_| true)
}

/// [`scc_ids`] of the graph with only the edges whose weight `keep`
/// accepts (the others are not there).
pub fn scc_ids_of<N, E>(g: &DiGraph<N, E>, keep: impl Fn(&E) -> bool) -> (Vec<u32>, usize) {
    crate::graph::scc(&crate::graph::Kept { graph: g, keep })
}

/// The nodes from which some node satisfying `target` is reachable: the
/// toolkit's [`crate::graph::attractor`] of "some successor is in the
/// set", by its work list over the incoming edges.
pub fn can_reach<N, E>(g: &DiGraph<N, E>, target: impl Fn(NodeIndex) -> bool) -> NodeSet {
    let mut seen = NodeSet::new(g.node_count());
    for n in g.node_indices().filter(|&n| target(n)) {
        seen.insert(n.index());
    }
    let all = || Kept {
        graph: g,
        keep: |_: &E| true,
    };
    let joins = |seen: &NodeSet, n: usize| {
        g.neighbors(NodeIndex::new(n))
            .any(|t| seen.contains(t.index()))
    };
    attractor(&mut seen, joins, 0, all);
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
    use crate::axb::text;

    /// Issue 20 item 3: a metered exploration builds the same space as
    /// the bounded one, charges at least what its tables reserve, and
    /// stops with an error (not an abort) when they would outgrow it.
    #[test]
    fn metered_exploration_counts_capacity_and_stops_at_its_budget() {
        // A counter modulo 5000 with two ways forward: 5000 states.
        let succ = |s: u32, emit: &mut dyn FnMut(u8, u32)| {
            emit(0, (s + 1) % 5000);
            emit(1, (s + 2) % 5000);
        };
        let plain = explore_bounded(0u32, usize::MAX, succ).unwrap();
        let mut meter = Meter::new(usize::MAX);
        let lts = explore_metered(0u32, usize::MAX, &mut meter, 10, succ).unwrap();
        assert_eq!(
            lts.graph.node_weights().collect::<Vec<_>>(),
            plain.graph.node_weights().collect::<Vec<_>>()
        );
        assert_eq!(lts.num_transitions(), 10_000);
        let (nodes, edges) = lts.graph.capacity();
        let held = nodes * (std::mem::size_of::<petgraph::graph::Node<u32>>() + 10)
            + edges * std::mem::size_of::<petgraph::graph::Edge<u8>>()
            + lts.index.capacity() * (std::mem::size_of::<(u32, NodeIndex)>() + 1);
        assert!(meter.used() >= held, "{} < {held}", meter.used());
        assert!(meter.used() < 2 * held + 4096, "{} vs {held}", meter.used());

        let mut small = Meter::new(meter.used() / 2);
        match explore_metered(0u32, usize::MAX, &mut small, 10, succ) {
            Err(Exceeded::Memory(e)) => {
                assert!(!e.refused_by_system);
                assert!(e.wanted > e.limit && small.used() <= e.limit, "{e:?}");
            }
            other => panic!("{:?}", other.map(|l| l.num_states())),
        }
        let mut meter = Meter::new(usize::MAX);
        assert_eq!(
            explore_metered(0u32, 100, &mut meter, 0, succ).unwrap_err(),
            Exceeded::States(TooLarge { bound: 100 })
        );
    }

    /// Issue 24 item 2: the metered exploration, which numbers its way
    /// through the nodes instead of keeping a queue, builds the graph of the queue-based one node for
    /// node and edge for edge (on a space of scattered, repeated successors
    /// and at every growth of its tables).
    #[test]
    fn metered_exploration_is_breadth_first_node_for_node() {
        let succ = |s: u32, emit: &mut dyn FnMut(u8, u32)| {
            emit(0, s.wrapping_mul(7919).wrapping_add(13) % 20011);
            emit(1, s / 3);
            emit(2, (s ^ 0x155) % 20011);
            emit(3, s / 3);
        };
        let plain = explore_bounded(1u32, usize::MAX, succ).unwrap();
        let mut meter = Meter::new(usize::MAX);
        let lts = explore_metered(1u32, usize::MAX, &mut meter, 0, succ).unwrap();
        assert!(plain.num_states() > 10_000, "{}", plain.num_states());
        assert_eq!(
            lts.graph.node_weights().collect::<Vec<_>>(),
            plain.graph.node_weights().collect::<Vec<_>>()
        );
        let edges = |l: &Lts<u32, u8>| -> Vec<(usize, usize, u8)> {
            l.graph
                .edge_references()
                .map(|e| (e.source().index(), e.target().index(), *e.weight()))
                .collect()
        };
        assert_eq!(edges(&lts), edges(&plain));
        for (s, &n) in &plain.index {
            assert_eq!(lts.index[s], n);
        }
    }

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
        assert!(reach.is_full());
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
