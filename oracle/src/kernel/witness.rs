//! Witnesses of non-termination on a product (docs/KERNEL.md §4.4): a
//! schedule into a deadlock, a lasso whose cycle every guaranteed entity
//! steps in (weak fairness), or a reachable state outside the attractor of
//! termination with a schedule that stays outside it (strong fairness).

use super::check;
use super::product::{Kernel, Product};
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use progress_litmus::axb::space::scc_ids;
use progress_litmus::kernel::machine::Packed;
use progress_litmus::Fairness;

/// A schedule: a path from the start, then a cycle repeated forever.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lasso {
    pub prefix: Vec<EdgeIndex>,
    pub cycle: Vec<EdgeIndex>,
}

/// Why a program is not guaranteed to terminate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Witness {
    /// `path` leads from the start to `state`, where nothing can move.
    Deadlock {
        path: Vec<EdgeIndex>,
        state: NodeIndex,
    },
    /// A weakly fair schedule: every guaranteed entity that can move
    /// everywhere on the cycle (`must_step`, entity bits) steps in it.
    Lasso { lasso: Lasso, must_step: u64 },
    /// Strong fairness: `reach` leads to `trap`, from which the guaranteed
    /// entities cannot force termination; `region` states can be kept to
    /// forever, `stay` is a schedule that does.
    Trap {
        reach: Vec<EdgeIndex>,
        trap: NodeIndex,
        region: usize,
        stay: Lasso,
    },
}

/// Shortest path of edges from `from` to a node satisfying `to`, using
/// only edges accepted by `ok` ([`progress_litmus::graph::shortest_path`]).
pub fn shortest_path<N, E>(
    g: &DiGraph<N, E>,
    from: NodeIndex,
    to: impl Fn(NodeIndex) -> bool,
    ok: impl Fn(EdgeIndex) -> bool,
) -> Option<Vec<EdgeIndex>> {
    progress_litmus::graph::shortest_path(g, from, to, |e, _| ok(e))
}

/// A cycle from `start` back to itself inside `members`, with a step of
/// every entity of `cover` (each must have a step edge inside), that
/// passes, for every entity of `visit`, a state where it has no move
/// (each must have one inside): so that it is weakly fair to the
/// guaranteed entities that need not step because they are disabled
/// somewhere in the component.
fn covering_cycle<S: Packed>(
    k: &Kernel,
    g: &DiGraph<S, super::product::Move>,
    start: NodeIndex,
    members: &[bool],
    cover: u64,
    visit: u64,
) -> Vec<EdgeIndex> {
    // A cycle of a run takes no `choose finitely` jump (§2.11).
    let inside = |e: EdgeIndex| {
        let (a, b) = g.edge_endpoints(e).unwrap();
        members[a.index()] && members[b.index()] && !g[e].is_finite()
    };
    let mut cycle: Vec<EdgeIndex> = Vec::new();
    let mut at = start;
    let mut todo = cover;
    while todo != 0 {
        let bit = todo & todo.wrapping_neg();
        todo &= !bit;
        if cycle
            .iter()
            .any(|&e| g[e].is_step() && k.move_mask(g[e]) & bit != 0)
        {
            continue;
        }
        let is_source = |n: NodeIndex| {
            g.edges(n).any(|e| {
                e.weight().is_step() && k.move_mask(*e.weight()) & bit != 0 && inside(e.id())
            })
        };
        let Some(path) = shortest_path(g, at, is_source, inside) else {
            continue;
        };
        for &e in &path {
            at = g.edge_endpoints(e).unwrap().1;
        }
        cycle.extend(path);
        let step = g
            .edges(at)
            .find(|e| e.weight().is_step() && k.move_mask(*e.weight()) & bit != 0 && inside(e.id()))
            .expect("a step of the entity");
        cycle.push(step.id());
        at = step.target();
    }
    let mut todo = visit;
    while todo != 0 {
        let bit = todo & todo.wrapping_neg();
        todo &= !bit;
        let disabled = |n: NodeIndex| k.enabled(g[n].as_ref()) & bit == 0;
        let on_cycle = disabled(start)
            || cycle
                .iter()
                .any(|&e| disabled(g.edge_endpoints(e).unwrap().1));
        if on_cycle {
            continue;
        }
        let Some(path) = shortest_path(g, at, |n| members[n.index()] && disabled(n), inside) else {
            continue;
        };
        for &e in &path {
            at = g.edge_endpoints(e).unwrap().1;
        }
        cycle.extend(path);
    }
    if cycle.is_empty() {
        let e = g
            .edges(start)
            .find(|e| inside(e.id()))
            .expect("an internal edge");
        cycle.push(e.id());
        at = e.target();
    }
    if at != start {
        cycle.extend(shortest_path(g, at, |n| n == start, inside).expect("strongly connected"));
    }
    cycle
}

fn lasso_into<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
    component: &[NodeIndex],
    cover: u64,
    visit: u64,
) -> Lasso {
    let g = &p.lts.graph;
    let mut members = vec![false; g.node_count()];
    for n in component {
        members[n.index()] = true;
    }
    let prefix =
        shortest_path(g, p.lts.initial(), |n| members[n.index()], |_| true).expect("reachable");
    let entry = prefix
        .last()
        .map_or(p.lts.initial(), |&e| g.edge_endpoints(e).unwrap().1);
    let cycle = covering_cycle(k, g, entry, &members, cover, visit);
    Lasso { prefix, cycle }
}

fn deadlock_witness<S: Packed>(k: &Kernel, p: &Product<S>) -> Option<Witness> {
    let state = check::deadlock(k, p)?;
    let path =
        shortest_path(&p.lts.graph, p.lts.initial(), |n| n == state, |_| true).expect("reachable");
    Some(Witness::Deadlock { path, state })
}

/// The witness of a failing verdict under weak or strong fairness; `None`
/// when the program passes. (Call on a product built without symmetry.)
pub fn find<S: Packed>(k: &Kernel, p: &Product<S>, fairness: Fairness) -> Option<Witness> {
    if let Some(w) = deadlock_witness(k, p) {
        return Some(w);
    }
    match fairness {
        Fairness::Weak => {
            let (comp, must) = check::weak_witness_component(k, p)?;
            let cover = must & !super::scopes::DEVICE;
            // Guaranteed entities that need not step: each has a state
            // in the component where it cannot move, which the cycle
            // passes (guarantees are constant on a component).
            let visit = p.guaranteed[comp[0].index()] & !must & !super::scopes::DEVICE;
            Some(Witness::Lasso {
                lasso: lasso_into(k, p, &comp, cover, visit),
                must_step: cover,
            })
        }
        Fairness::Strong => strong_witness(k, p),
    }
}

fn strong_witness<S: Packed>(k: &Kernel, p: &Product<S>) -> Option<Witness> {
    let good = check::strong_good(k, p);
    let g = &p.lts.graph;
    let trap = g.node_indices().find(|n| !good.contains(n.index()))?;
    let reach = shortest_path(g, p.lts.initial(), |n| n == trap, |_| true).expect("reachable");
    // The states reachable from the trap without entering the attractor.
    let bad_edge =
        |e: EdgeIndex| !good.contains(g.edge_endpoints(e).unwrap().1.index()) && !g[e].is_finite();
    let mut region = vec![false; g.node_count()];
    region[trap.index()] = true;
    let mut work = vec![trap];
    let mut list = vec![trap];
    while let Some(n) = work.pop() {
        for e in g.edges(n) {
            if bad_edge(e.id()) && !region[e.target().index()] {
                region[e.target().index()] = true;
                work.push(e.target());
                list.push(e.target());
            }
        }
    }
    // A bottom component of the region: the schedule goes there and stays.
    let mut sub: DiGraph<NodeIndex, ()> = DiGraph::new();
    let mut map = vec![NodeIndex::end(); g.node_count()];
    for &n in &list {
        map[n.index()] = sub.add_node(n);
    }
    for &n in &list {
        for e in g.edges(n) {
            if region[e.target().index()] && !e.weight().is_finite() {
                sub.add_edge(map[n.index()], map[e.target().index()], ());
            }
        }
    }
    let (ids, count) = scc_ids(&sub);
    let mut leaves = vec![false; count];
    let mut internal = vec![false; count];
    for e in sub.edge_references() {
        let (a, b) = (ids[e.source().index()], ids[e.target().index()]);
        if a != b {
            leaves[a as usize] = true;
        } else {
            internal[a as usize] = true;
        }
    }
    let bottom = (0..count).find(|&c| !leaves[c] && internal[c])?;
    let mut members = vec![false; g.node_count()];
    for m in sub.node_indices() {
        if ids[m.index()] as usize == bottom {
            members[sub[m].index()] = true;
        }
    }
    let prefix = shortest_path(
        g,
        trap,
        |n| members[n.index()],
        |e| region[g.edge_endpoints(e).unwrap().1.index()],
    )
    .expect("the bottom component is reachable in the region");
    let entry = prefix
        .last()
        .map_or(trap, |&e| g.edge_endpoints(e).unwrap().1);
    // Cover a step of every guaranteed entity that steps inside.
    let mut cover = 0u64;
    for e in g.edge_references() {
        let inside = members[e.source().index()] && members[e.target().index()];
        if inside && e.weight().is_step() && !e.weight().is_finite() {
            cover |= k.move_mask(*e.weight()) & p.guaranteed[e.source().index()];
        }
    }
    let cycle = covering_cycle(k, g, entry, &members, cover & !super::scopes::DEVICE, 0);
    Some(Witness::Trap {
        reach,
        trap,
        region: list.len(),
        stay: Lasso { prefix, cycle },
    })
}
