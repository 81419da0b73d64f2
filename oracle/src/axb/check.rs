//! The three verdict rules of SPEC §3 on a product space, with witnesses.
//!
//! - weak fairness: fails iff some strongly connected component has an
//!   internal transition, a non-empty F (constant inside a component: F only
//!   grows on steps and Terminates are irreversible) and an internal Step of
//!   every thread of F;
//! - strong fairness: passes iff every reachable state can force, by Steps
//!   of threads in F and Terminates, either the "all done" transition or a
//!   Step taken while F is empty (a backward fixpoint);
//! - unfair: passes iff the space has no cycle.

use crate::axb::fair_set::ThreadSet;
use crate::axb::product::{Event, Product};
use bit_set::BitSet;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use progress_litmus::graph::{attractor, Kept, NodeSet};

/// Strongly connected components as a component id per node, and for each
/// component whether it has an internal transition and which threads step
/// inside it.
struct Components {
    id: Vec<usize>,
    internal: Vec<bool>,
    steppers: Vec<ThreadSet>,
}

fn components(p: &Product) -> Components {
    let g = &p.lts.graph;
    let (ids, count) = progress_litmus::axb::space::scc_ids(g);
    let id: Vec<usize> = ids.into_iter().map(|c| c as usize).collect();
    let mut internal = vec![false; count];
    let mut steppers = vec![0; count];
    for e in g.edge_references() {
        let c = id[e.source().index()];
        if c == id[e.target().index()] {
            internal[c] = true;
            if e.weight().is_step() {
                steppers[c] |= 1 << e.weight().thread();
            }
        }
    }
    Components {
        id,
        internal,
        steppers,
    }
}

/// The nodes of the first component (in node order of their first node)
/// that witnesses non-termination under weak fairness, if any.
pub fn weak_witness_component(p: &Product) -> Option<Vec<NodeIndex>> {
    let comps = components(p);
    let g = &p.lts.graph;
    let bad = g.node_indices().find(|&n| {
        let c = comps.id[n.index()];
        let f = g[n].f;
        comps.internal[c] && f != 0 && f & !comps.steppers[c] == 0
    })?;
    let c = comps.id[bad.index()];
    Some(
        g.node_indices()
            .filter(|n| comps.id[n.index()] == c)
            .collect(),
    )
}

/// Whether the test is guaranteed to terminate under the weak variant.
pub fn weak_passes(p: &Product) -> bool {
    weak_witness_component(p).is_none()
}

/// The first component with an internal transition (a cycle), if any.
pub fn cyclic_component(p: &Product) -> Option<Vec<NodeIndex>> {
    let comps = components(p);
    let g = &p.lts.graph;
    let n = g
        .node_indices()
        .find(|n| comps.internal[comps.id[n.index()]])?;
    let c = comps.id[n.index()];
    Some(
        g.node_indices()
            .filter(|m| comps.id[m.index()] == c)
            .collect(),
    )
}

/// Whether a transition may be used by the fair threads to force
/// termination under strong fairness: a Step of a thread in F, or a
/// Terminate.
fn fair_move(e: &Event) -> bool {
    match *e {
        Event::Step { thread, f, .. } => f & (1 << thread) != 0,
        Event::Terminate { .. } => true,
    }
}

/// The states from which the fair threads can force termination under
/// strong fairness: the toolkit's [`attractor`] of the good transitions
/// (a Step taken with F empty, or the all-finished states), by fair moves,
/// found by its work list over the fair moves' incoming edges.
pub fn strong_good(p: &Product) -> NodeSet {
    let g = &p.lts.graph;
    let mut good = NodeSet::new(g.node_count());
    for n in g.node_indices() {
        let done = p.all_done(n)
            || g.edges(n)
                .any(|e| matches!(e.weight(), Event::Step { f: 0, .. }));
        if done {
            good.insert(n.index());
        }
    }
    let joins = |good: &NodeSet, n: usize| {
        g.edges(NodeIndex::new(n))
            .any(|e| fair_move(e.weight()) && good.contains(e.target().index()))
    };
    let fair = || Kept {
        graph: g,
        keep: fair_move,
    };
    attractor(&mut good, joins, 0, fair);
    good
}

/// Whether the test is guaranteed to terminate under the strong variant.
pub fn strong_passes(p: &Product) -> bool {
    strong_good(p).is_full()
}

/// A schedule: a path from the start state, then a cycle repeated forever.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lasso {
    pub prefix: Vec<EdgeIndex>,
    pub cycle: Vec<EdgeIndex>,
}

/// Why a test is not guaranteed to terminate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Witness {
    /// Weak fairness or unfair: the schedule `prefix; cycle; cycle; ...`
    /// in which, for weak fairness, every thread of F steps in the cycle.
    Lasso(Lasso),
    /// Strong fairness: `reach` leads from the start to `trap`, a state from
    /// which the moves of the fair threads and Terminates only ever reach
    /// the `closure` states, none of which can finish; `stay` is a schedule
    /// of such moves that stays there forever.
    Trap {
        reach: Vec<EdgeIndex>,
        trap: NodeIndex,
        closure: Vec<NodeIndex>,
        stay: Lasso,
    },
}

/// Shortest path of edges from `from` to a node in `to`, using only edges
/// accepted by `ok` ([`progress_litmus::graph::shortest_path`]).
fn shortest_path(
    p: &Product,
    from: NodeIndex,
    to: impl Fn(NodeIndex) -> bool,
    ok: impl Fn(&Event) -> bool,
) -> Option<Vec<EdgeIndex>> {
    progress_litmus::graph::shortest_path(&p.lts.graph, from, to, |_, e| ok(e))
}

/// A cycle from `start` back to itself inside `members`, taking at least one
/// Step of every thread of `must_step`.
fn covering_cycle(
    p: &Product,
    start: NodeIndex,
    members: &BitSet,
    must_step: ThreadSet,
    ok: impl Fn(&Event) -> bool + Copy,
) -> Vec<EdgeIndex> {
    let g = &p.lts.graph;
    let inside = ok;
    let mut cycle = Vec::new();
    let mut at = start;
    for t in crate::axb::fair_set::members(must_step) {
        if cycle
            .iter()
            .any(|&e: &EdgeIndex| g[e].is_step() && g[e].thread() == t)
        {
            continue;
        }
        // Walk to a state inside the component where t can step inside it.
        let mut sources = BitSet::with_capacity(g.node_count());
        for e in g.edge_references() {
            if e.weight().is_step()
                && e.weight().thread() == t
                && members.contains(e.source().index())
                && members.contains(e.target().index())
                && ok(e.weight())
            {
                sources.insert(e.source().index());
            }
        }
        let path = shortest_path(p, at, |n| sources.contains(n.index()), |e| inside(e))
            .expect("strongly connected");
        for &e in &path {
            at = g.edge_endpoints(e).unwrap().1;
        }
        cycle.extend(path);
        let step = g
            .edges(at)
            .find(|e| {
                e.weight().is_step()
                    && e.weight().thread() == t
                    && members.contains(e.target().index())
                    && ok(e.weight())
            })
            .expect("a step of t");
        cycle.push(step.id());
        at = step.target();
    }
    if cycle.is_empty() || at != start {
        let back = if cycle.is_empty() {
            // Any internal edge out of start, then back.
            let e = g
                .edges(start)
                .find(|e| members.contains(e.target().index()) && ok(e.weight()))
                .expect("an internal edge");
            cycle.push(e.id());
            at = e.target();
            if at == start {
                return cycle;
            }
            shortest_path(p, at, |n| n == start, |e| inside(e))
        } else {
            shortest_path(p, at, |n| n == start, |e| inside(e))
        };
        cycle.extend(back.expect("strongly connected"));
    }
    cycle
}

fn lasso_into(p: &Product, component: &[NodeIndex], must_step: ThreadSet) -> Lasso {
    let mut members = BitSet::new();
    for n in component {
        members.insert(n.index());
    }
    let g = &p.lts.graph;
    let prefix = shortest_path(
        p,
        p.lts.initial(),
        |n| members.contains(n.index()),
        |_| true,
    )
    .expect("reachable");
    let entry = prefix
        .last()
        .map_or(p.lts.initial(), |&e| g.edge_endpoints(e).unwrap().1);
    let cycle = covering_cycle(p, entry, &members, must_step, |_| true);
    Lasso { prefix, cycle }
}

/// The weak-fairness witness: a lasso whose cycle has a step of every
/// thread of F.
pub fn weak_witness(p: &Product) -> Option<Witness> {
    let comp = weak_witness_component(p)?;
    let f = p.state(comp[0]).f;
    Some(Witness::Lasso(lasso_into(p, &comp, f)))
}

/// The unfair witness: any reachable cycle.
pub fn unfair_witness(p: &Product) -> Option<Witness> {
    let comp = cyclic_component(p)?;
    Some(Witness::Lasso(lasso_into(p, &comp, 0)))
}

/// The strong-fairness witness: the reachable bad state closest to the
/// start, what the fair threads can reach from it, and a fair schedule that
/// stays there.
pub fn strong_witness(p: &Product) -> Option<Witness> {
    let good = strong_good(p);
    let g = &p.lts.graph;
    let trap = g.node_indices().find(|n| !good.contains(n.index()))?;
    let reach = shortest_path(p, p.lts.initial(), |n| n == trap, |_| true).expect("reachable");
    // Everything reachable from the trap by fair moves; none of it is good.
    let mut closure = BitSet::new();
    closure.insert(trap.index());
    let mut work = vec![trap];
    while let Some(n) = work.pop() {
        for e in g.edges(n) {
            if fair_move(e.weight()) && closure.insert(e.target().index()) {
                work.push(e.target());
            }
        }
    }
    // A bottom component of the fair-move subgraph restricted to the
    // closure: the schedule walks there and cycles, taking every fair
    // thread's steps that are available so no guaranteed thread is ignored.
    let in_cycle = fair_cyclic_nodes(p, &closure);
    let to_cycle = shortest_path(
        p,
        trap,
        |n| {
            g.edges(n).any(|e| fair_move(e.weight()) && e.target() == n)
                || in_cycle.contains(n.index())
        },
        fair_move,
    )
    .expect("the closure is finite and every bad state has a fair move");
    let entry = to_cycle
        .last()
        .map_or(trap, |&e| g.edge_endpoints(e).unwrap().1);
    let comp = fair_component(p, entry, &closure);
    let f = p.state(entry).f;
    let steppers = comp_steppers(p, &comp);
    let cycle = covering_cycle(p, entry, &comp, f & steppers, fair_move);
    Some(Witness::Trap {
        reach,
        trap,
        closure: closure.iter().map(NodeIndex::new).collect(),
        stay: Lasso {
            prefix: to_cycle,
            cycle,
        },
    })
}

/// The nodes that can both reach and be reached from `n` by fair moves
/// inside `within` (`n` among them): its strongly connected component of
/// those moves ([`progress_litmus::graph::scc`]).
fn fair_component(p: &Product, n: NodeIndex, within: &BitSet) -> BitSet {
    let fair = FairInside {
        g: &p.lts.graph,
        within,
    };
    let (ids, _) = progress_litmus::graph::scc(&fair);
    let mut comp: BitSet = within
        .iter()
        .filter(|&v| ids[v] == ids[n.index()])
        .collect();
    comp.insert(n.index());
    comp
}

/// The nodes of `within` whose [`fair_component`] has more than one node:
/// the strongly connected components of the fair moves inside `within`
/// ([`progress_litmus::graph::scc`]; a node outside `within` has no
/// successor, so it is a component of its own).
fn fair_cyclic_nodes(p: &Product, within: &BitSet) -> BitSet {
    let g = &p.lts.graph;
    let fair = FairInside { g, within };
    let (ids, count) = progress_litmus::graph::scc(&fair);
    let mut size = vec![0u32; count];
    for v in within.iter() {
        size[ids[v] as usize] += 1;
    }
    within
        .iter()
        .filter(|&v| size[ids[v] as usize] > 1)
        .collect()
}

/// The fair moves between nodes of `within`, as the graph toolkit walks them.
struct FairInside<'a, N> {
    g: &'a petgraph::graph::DiGraph<N, Event>,
    within: &'a BitSet,
}

impl<N> progress_litmus::graph::Successors for FairInside<'_, N> {
    fn node_count(&self) -> usize {
        self.g.node_count()
    }
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        let inside = self.within.contains(v);
        self.g
            .edges(NodeIndex::new(v))
            .filter(move |e| {
                inside && fair_move(e.weight()) && self.within.contains(e.target().index())
            })
            .map(|e| e.target().index())
    }
}

fn comp_steppers(p: &Product, comp: &BitSet) -> ThreadSet {
    let g = &p.lts.graph;
    let mut s = 0;
    for e in g.edge_references() {
        if e.weight().is_step()
            && fair_move(e.weight())
            && comp.contains(e.source().index())
            && comp.contains(e.target().index())
        {
            s |= 1 << e.weight().thread();
        }
    }
    s
}
