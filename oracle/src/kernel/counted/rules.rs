//! The verdict rules of docs/KERNEL.md §4.3 on the counted product, with
//! the classes of a workgroup as its entities (§8.10).

use super::space::{Space, St};
use super::{explore, Graph, FINITE, TERMINATE};
use crate::kernel::KernelError;
use progress_litmus::graph::{attractor, scc, NodeSet, Reversed, Successors};
use std::collections::HashSet;

/// Some reachable state has no move and is not final.
pub fn deadlock(sp: &Space, g: &Graph) -> bool {
    (0..g.states.len()).any(|x| g.out(x).is_empty() && !Space::all_done(&sp.decode(&g.states[x])))
}

/// Every state is in the attractor of termination: the least set holding
/// the final states and every state from which a Terminate leads into
/// it, or where a guaranteed entity (the device, a workgroup, a class of
/// guaranteed invocations) has an explored move and all its explored
/// moves lead into it. `choose finitely` jumps are read as absent.
pub fn strong_passes(sp: &Space, g: &Graph, inv: bool) -> bool {
    let mut good = NodeSet::new(g.states.len());
    for x in 0..g.states.len() {
        if g.out(x).is_empty() && Space::all_done(&sp.decode(&g.states[x])) {
            good.insert(x);
        }
    }
    let rule = |good: &NodeSet, x: usize| joins(sp, g, good, x, inv);
    attractor(&mut good, rule, 8, || Reversed::of(&Infinite(g)));
    good.is_full()
}

fn joins(sp: &Space, g: &Graph, good: &NodeSet, x: usize, inv: bool) -> bool {
    let edges: Vec<_> = g.out(x).iter().filter(|e| e.kind & FINITE == 0).collect();
    if edges.is_empty() {
        return false;
    }
    if edges
        .iter()
        .any(|e| e.kind & TERMINATE != 0 && good.contains(e.to as usize))
    {
        return true;
    }
    // The device: every move.
    if edges.iter().all(|e| good.contains(e.to as usize)) {
        return true;
    }
    let f = sp.f_of(&g.states[x]);
    let (mut has_w, mut bad_w) = (0u64, 0u64);
    let mut has_c: Vec<u32> = Vec::new();
    let mut bad_c: HashSet<u32> = HashSet::new();
    for e in &edges {
        let w = g.classes[e.class as usize].0;
        has_w |= 1 << w;
        has_c.push(e.class);
        if !good.contains(e.to as usize) {
            bad_w |= 1 << w;
            bad_c.insert(e.class);
        }
    }
    let open_w = has_w & !bad_w;
    if (0..sp.w).any(|w| open_w >> w & 1 == 1 && sp.wg_guaranteed(f, w)) {
        return true;
    }
    inv && has_c
        .iter()
        .any(|c| !bad_c.contains(c) && sp.wg_guaranteed(f, g.classes[*c as usize].0))
}

/// No component of the product (without `choose finitely` jumps) with an
/// internal edge admits a weakly fair run: in each, some guaranteed
/// workgroup or class of guaranteed invocations can move at every state
/// (read off the state, not the explored edges) and never moves inside.
///
/// Where workgroups are interchangeable, a component of sorted states
/// stands for the components of the states it sorts to, which tell the
/// workgroups apart along a cycle: each component with an internal edge
/// is *lifted*, its states explored again unsorted, keeping the steps
/// whose sorted successor is in the component, and the rule is checked
/// on the lifted components (as §8.1 does).
pub fn weak_passes(
    sp: &Space,
    g: &Graph,
    inv: bool,
    max_states: usize,
) -> Result<bool, KernelError> {
    let comp = components(g);
    for states in &members(&comp) {
        let pass = if sp.sym && internal(g, &comp, states) {
            lifted_passes(sp, g, &comp, states, inv, max_states)?
        } else {
            fair_cycle_blocked(sp, g, &comp, states, inv)
        };
        if !pass {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The states of each component.
fn members(comp: &[u32]) -> Vec<Vec<usize>> {
    let ncomp = comp.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); ncomp];
    for (x, &c) in comp.iter().enumerate() {
        members[c as usize].push(x);
    }
    members
}

/// Whether component `states` has an edge inside it.
fn internal(g: &Graph, comp: &[u32], states: &[usize]) -> bool {
    let c = comp[states[0]];
    states.iter().any(|&x| {
        g.out(x)
            .iter()
            .any(|e| e.kind & FINITE == 0 && comp[e.to as usize] == c)
    })
}

/// The weak rule on the lift of component `states` of the sorted product.
fn lifted_passes(
    sp: &Space,
    g: &Graph,
    comp: &[u32],
    states: &[usize],
    inv: bool,
    max_states: usize,
) -> Result<bool, KernelError> {
    let c = comp[states[0]];
    let roots = states.iter().map(|&x| sp.decode(&g.states[x])).collect();
    let mut buf = Vec::new();
    let lift = explore(sp, roots, max_states, false, |label, t| {
        let mut k = t.clone();
        sp.canonicalize(&mut k);
        sp.encode(&k, &mut buf);
        !label.finite
            && g.index
                .get(&buf[..])
                .is_some_and(|&y| comp[y as usize] == c)
    })?;
    let lc = components(&lift);
    Ok(members(&lc)
        .iter()
        .all(|s| fair_cycle_blocked(sp, &lift, &lc, s, inv)))
}

/// Whether component `states` has no internal edge, or is blocked by a
/// guaranteed entity that can always move there and never does.
fn fair_cycle_blocked(sp: &Space, g: &Graph, comp: &[u32], states: &[usize], inv: bool) -> bool {
    let c = comp[states[0]];
    let (mut moved_w, mut moved_c, mut internal) = (0u64, HashSet::new(), false);
    for &x in states {
        for e in g.out(x) {
            if e.kind & FINITE == 0 && comp[e.to as usize] == c {
                internal = true;
                let (w, ref r) = g.classes[e.class as usize];
                moved_w |= 1 << w;
                moved_c.insert((w, r.clone()));
            }
        }
    }
    if !internal {
        return true;
    }
    let f = sp.f_of(&g.states[states[0]]);
    let mut always_w = u64::MAX;
    let mut always_c: Option<HashSet<(usize, Vec<u8>)>> = None;
    for &x in states {
        let st: St = sp.decode(&g.states[x]);
        let movers = sp.movers(&st);
        always_w &= movers.iter().fold(0, |a, &(w, _)| a | 1 << w);
        let here: HashSet<(usize, Vec<u8>)> = movers
            .iter()
            .map(|&(w, ci)| (w, st.wgs[w][ci].0.clone()))
            .collect();
        always_c = Some(match always_c {
            None => here,
            Some(a) => a.intersection(&here).cloned().collect(),
        });
    }
    let blocked_w = (0..sp.w)
        .any(|w| always_w >> w & 1 == 1 && moved_w >> w & 1 == 0 && sp.wg_guaranteed(f, w));
    let blocked_c = inv
        && always_c
            .unwrap_or_default()
            .iter()
            .any(|k| !moved_c.contains(k) && sp.wg_guaranteed(f, k.0));
    blocked_w || blocked_c
}

/// The product without `choose finitely` jumps, for the toolkit.
struct Infinite<'a>(&'a Graph);

impl Successors for Infinite<'_> {
    fn node_count(&self) -> usize {
        self.0.states.len()
    }
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.0
            .out(v)
            .iter()
            .filter(|e| e.kind & FINITE == 0)
            .map(|e| e.to as usize)
    }
}

/// Strongly connected components over the edges that are not `choose
/// finitely` jumps: a component number per state.
fn components(g: &Graph) -> Vec<u32> {
    scc(&Infinite(g)).0
}
