//! Symmetry reduction (docs/KERNEL.md §8.1).
//!
//! Workgroups that run the same code without reading `wg_id` are
//! interchangeable when the device scheduler ignores ids (unfair, OBE,
//! fair) and no occupancy bound admits them in id order; so are the lanes
//! of a subgroup that do not read `local_id` or `lane_id` nor broadcast the
//! first lane's value, when the subgroup scheduler ignores ids and lanes
//! interleave. Permuting such workgroups or lanes (with their registers,
//! shared memory and fair-set bits) maps the product onto itself, so the
//! product is explored up to permutation: every state is replaced by a
//! canonical one (lanes sorted inside each subgroup, then workgroups sorted
//! inside each class).
//!
//! The strong rule, deadlocks and acyclicity are decided exactly on the
//! reduced space: they are statements about single states and their
//! successors, and the guarantees of a state are permuted with it. The weak
//! rule is about which entity steps along a cycle, which the reduced space
//! loses; so each cyclic component of the reduced space is lifted: the
//! original states it stands for are explored from its canonical states,
//! and the rule is checked on their components exactly.

use super::check;
use super::product::{Kernel, Move, Product};
use super::scopes::Scopes;
use super::KernelError;
use axb::kernel::machine::{get_bits, set_bits, Machine, Packed};
use axb::kernel::program::{CollectiveOp, IdKind, Instr};
use axb::space::scc_ids;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use rustc_hash::FxHashMap;

/// The interchangeable workgroups and lanes of a program under a model.
#[derive(Clone, Debug)]
pub struct Symmetry {
    /// Classes of interchangeable workgroups (ascending, at least two each).
    wg_classes: Vec<Vec<usize>>,
    /// Workgroups whose lanes are interchangeable inside each subgroup.
    lane_wgs: Vec<usize>,
}

fn read(s: &[u64], (off, w): (u32, u32), out: &mut Vec<u64>) {
    let end = off + w;
    let mut o = off;
    while o < end {
        let c = (end - o).min(32);
        out.push(get_bits(s, o, c));
        o += c;
    }
}

fn write(s: &mut [u64], (off, w): (u32, u32), vals: &[u64]) -> usize {
    let end = off + w;
    let mut o = off;
    let mut k = 0;
    while o < end {
        let c = (end - o).min(32);
        set_bits(s, o, c, vals[k]);
        k += 1;
        o += c;
    }
    k
}

impl Symmetry {
    /// The symmetry of a program under the model of `sc`, if it has any.
    pub fn new(m: &Machine, sc: &Scopes) -> Option<Symmetry> {
        let p = &m.program;
        let model = sc.model;
        let mut wg_classes = Vec::new();
        let occupancy_blind = match model.occupancy {
            None => true,
            Some(k) => k as usize >= sc.w,
        };
        if model.device.id_blind() && occupancy_blind && sc.w > 1 {
            for c in 0..p.codes.len() {
                if p.reads_id(c, IdKind::WgId) {
                    continue;
                }
                let class: Vec<usize> = (0..sc.w).filter(|&w| p.wg_code[w] as usize == c).collect();
                if class.len() > 1 {
                    wg_classes.push(class);
                }
            }
        }
        let mut lane_wgs = Vec::new();
        if !m.lockstep() && sc.s > 1 && model.subgroup.id_blind() {
            for w in 0..sc.w {
                let c = p.wg_code[w] as usize;
                let broadcasts = p.codes[c].instrs.iter().any(|i| {
                    matches!(
                        i,
                        Instr::Collective {
                            op: CollectiveOp::BroadcastFirst,
                            ..
                        }
                    )
                });
                if !broadcasts && !p.reads_id(c, IdKind::LocalId) && !p.reads_id(c, IdKind::LaneId)
                {
                    lane_wgs.push(w);
                }
            }
        }
        (!wg_classes.is_empty() || !lane_wgs.is_empty()).then_some(Symmetry {
            wg_classes,
            lane_wgs,
        })
    }

    /// Replaces a state by the canonical member of its orbit.
    pub fn canonicalize(&self, k: &Kernel, s: &mut [u64]) {
        let m = &k.machine;
        let sc = &k.scopes;
        for &w in &self.lane_wgs {
            for g in w * sc.per..(w + 1) * sc.per {
                self.sort_lanes(m, sc, s, g);
            }
        }
        for class in &self.wg_classes {
            self.sort_workgroups(m, sc, s, class);
        }
    }

    fn sort_lanes(&self, m: &Machine, sc: &Scopes, s: &mut [u64], g: usize) {
        let lanes = sc.s;
        let fsg = sc.sg.get(g).map(|&o| (o, get_bits(s, o, lanes as u32)));
        let mut recs: Vec<(Vec<u64>, usize)> = (0..lanes)
            .map(|l| {
                let mut r = Vec::new();
                read(s, m.invocation_range(g * lanes + l), &mut r);
                if let Some((_, f)) = fsg {
                    r.push((f >> l) & 1);
                }
                (r, l)
            })
            .collect();
        if recs.windows(2).all(|p| p[0].0 <= p[1].0) {
            return;
        }
        recs.sort();
        let mut f = 0u64;
        for (slot, (rec, _)) in recs.iter().enumerate() {
            let used = write(s, m.invocation_range(g * lanes + slot), rec);
            if fsg.is_some() {
                f |= rec[used] << slot;
            }
        }
        if let Some((o, _)) = fsg {
            set_bits(s, o, lanes as u32, f);
        }
    }

    fn wg_record(&self, m: &Machine, sc: &Scopes, s: &[u64], w: usize) -> Vec<u64> {
        let mut r = Vec::new();
        for i in w * sc.n..(w + 1) * sc.n {
            read(s, m.invocation_range(i), &mut r);
        }
        for g in w * sc.per..(w + 1) * sc.per {
            if let Some(range) = m.subgroup_range(g) {
                read(s, range, &mut r);
            }
        }
        for range in m.shared_ranges(w) {
            read(s, range, &mut r);
        }
        if let Some(&o) = sc.wg.get(w) {
            r.push(get_bits(s, o, sc.per as u32));
        }
        for g in w * sc.per..(w + 1) * sc.per {
            if let Some(&o) = sc.sg.get(g) {
                r.push(get_bits(s, o, sc.s as u32));
            }
        }
        if let Some(o) = sc.dev {
            r.push(get_bits(s, o + w as u32, 1));
        }
        r
    }

    fn write_wg(&self, m: &Machine, sc: &Scopes, s: &mut [u64], w: usize, rec: &[u64]) {
        let mut k = 0;
        for i in w * sc.n..(w + 1) * sc.n {
            k += write(s, m.invocation_range(i), &rec[k..]);
        }
        for g in w * sc.per..(w + 1) * sc.per {
            if let Some(range) = m.subgroup_range(g) {
                k += write(s, range, &rec[k..]);
            }
        }
        for range in m.shared_ranges(w) {
            k += write(s, range, &rec[k..]);
        }
        if let Some(&o) = sc.wg.get(w) {
            set_bits(s, o, sc.per as u32, rec[k]);
            k += 1;
        }
        for g in w * sc.per..(w + 1) * sc.per {
            if let Some(&o) = sc.sg.get(g) {
                set_bits(s, o, sc.s as u32, rec[k]);
                k += 1;
            }
        }
        if let Some(o) = sc.dev {
            set_bits(s, o + w as u32, 1, rec[k]);
        }
    }

    fn sort_workgroups(&self, m: &Machine, sc: &Scopes, s: &mut [u64], class: &[usize]) {
        let mut recs: Vec<Vec<u64>> = class.iter().map(|&w| self.wg_record(m, sc, s, w)).collect();
        if recs.windows(2).all(|p| p[0] <= p[1]) {
            return;
        }
        recs.sort();
        for (&w, rec) in class.iter().zip(&recs) {
            self.write_wg(m, sc, s, w, rec);
        }
    }
}

/// The weak rule on a product built with or without symmetry (exact in
/// both cases; see the module documentation). Deadlocks are not checked
/// here.
pub fn weak_passes<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
    max_states: usize,
) -> Result<bool, KernelError> {
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
        if lifted_witness(k, p, &comps.id, c, &nodes, max_states)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Explores the original states a reduced component stands for and checks
/// the weak rule on their components.
fn lifted_witness<S: Packed>(
    k: &Kernel,
    p: &Product<S>,
    comp: &[u32],
    c: u32,
    nodes: &[NodeIndex],
    max_states: usize,
) -> Result<bool, KernelError> {
    let g = &p.lts.graph;
    let in_component = |t: &S| -> bool {
        let mut canon = *t;
        k.symmetry
            .as_ref()
            .expect("symmetry")
            .canonicalize(k, canon.as_mut());
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
        let mut en = 0;
        for &(mv, t) in &out {
            en |= k.move_mask(mv);
            if !in_component(&t) {
                continue;
            }
            let y = match index.get(&t) {
                Some(&y) => y,
                None => {
                    if lifted.node_count() >= max_states {
                        return Err(KernelError::TooLarge(max_states));
                    }
                    let y = lifted.add_node(t);
                    index.insert(t, y);
                    enabled.push(0);
                    work.push(y);
                    y
                }
            };
            lifted.add_edge(x, y, mv);
        }
        enabled[x.index()] = en;
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
