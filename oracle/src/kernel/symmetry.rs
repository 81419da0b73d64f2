//! Symmetry reduction (docs/KERNEL.md §8.1).
//!
//! Workgroups that run the same code without reading `wg_id` are
//! interchangeable when the device scheduler ignores ids (unfair, OBE,
//! fair) and no occupancy bound admits them in id order; so are the lanes
//! of a subgroup that do not read `local_id` or `lane_id` nor broadcast the
//! first lane's value, when the subgroup scheduler ignores ids and lanes
//! interleave; so are the subgroups of a workgroup that does not read
//! `local_id` or `subgroup_id`, when the workgroup scheduler ignores ids.
//! Permuting such workgroups, subgroups or lanes (with their registers,
//! shared memory and fair-set bits) maps the product onto itself, so the
//! product is explored up to permutation: every state is replaced by a
//! canonical one (lanes sorted inside each subgroup, then subgroups inside
//! each workgroup, then workgroups inside each class).
//!
//! The strong rule, deadlocks and acyclicity are decided exactly on the
//! reduced space: they are statements about single states and their
//! successors, and the guarantees of a state are permuted with it. The weak
//! rule is about which entity steps along a cycle, which the reduced space
//! loses; [`super::lifted`] decides it by lifting cyclic components back.

use super::scopes::Scopes;
use progress_litmus::kernel::machine::{get_bits, set_bits, Machine};
use progress_litmus::kernel::program::{CollectiveOp, IdKind, Instr};

/// The interchangeable workgroups and lanes of a program under a model,
/// with the bit fields that move with each.
#[derive(Clone, Debug)]
pub struct Symmetry {
    /// Classes of interchangeable workgroups (ascending, at least two each).
    wg_classes: Vec<Vec<usize>>,
    /// Per workgroup: its fields (invocations, lockstep stacks, shared
    /// cells, the F sets of its scopes, its bit of the device's F).
    wg_fields: Vec<Vec<(u32, u32)>>,
    /// Subgroups whose lanes are interchangeable: each lane's field and the
    /// offset of the subgroup's F.
    lane_sgs: Vec<LaneGroup>,
    /// Workgroups whose subgroups are interchangeable: per subgroup, the
    /// fields that move with it (its lanes, lockstep stack, F set and its
    /// bit of the workgroup's F).
    sg_classes: Vec<Vec<Vec<(u32, u32)>>>,
}

/// The lanes' fields of a subgroup and the offset of its F set.
type LaneGroup = (Vec<(u32, u32)>, Option<u32>);

fn chunks((_, w): (u32, u32)) -> usize {
    w.div_ceil(32) as usize
}

fn read(s: &[u64], (off, w): (u32, u32), out: &mut [u64]) -> usize {
    let end = off + w;
    let mut o = off;
    let mut k = 0;
    while o < end {
        let c = (end - o).min(32);
        out[k] = get_bits(s, o, c);
        k += 1;
        o += c;
    }
    k
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

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Symmetry {
    /// The symmetry of a program under the model of `sc`, if it has any.
    pub fn new(m: &Machine, sc: &Scopes) -> Option<Symmetry> {
        let wg_classes = workgroup_classes(m, sc);
        let lane_sgs = lane_groups(m, sc);
        let sg_classes = subgroup_classes(m, sc);
        if wg_classes.is_empty() && lane_sgs.is_empty() && sg_classes.is_empty() {
            return None;
        }
        let wg_fields = workgroup_fields(m, sc);
        Some(Symmetry {
            wg_classes,
            wg_fields,
            lane_sgs,
            sg_classes,
        })
    }

    /// Whether some invocations of a workgroup are interchangeable (lanes
    /// of a subgroup, or subgroups of a workgroup): then a reduction that
    /// picks actors by their index inside the workgroup would not commute
    /// with the permutations.
    pub fn permutes_lanes(&self) -> bool {
        !self.lane_sgs.is_empty() || !self.sg_classes.is_empty()
    }

    /// Replaces a state by the canonical member of its orbit: lanes sorted
    /// inside subgroups, then subgroups inside workgroups, then workgroups
    /// inside their classes (each level compares records already
    /// canonical inside).
    pub fn canonicalize(&self, s: &mut [u64]) {
        for (lanes, fsg) in &self.lane_sgs {
            sort_lanes(s, lanes, *fsg);
        }
        for sgs in &self.sg_classes {
            sort_blocks(s, sgs);
        }
        for class in &self.wg_classes {
            sort_blocks(
                s,
                &class
                    .iter()
                    .map(|&w| &self.wg_fields[w][..])
                    .collect::<Vec<_>>(),
            );
        }
    }
}

/// Sorts interchangeable blocks (workgroups of a class, subgroups of a
/// workgroup) by their records: the concatenation of each block's fields
/// (the same widths for every block).
fn sort_blocks<F: AsRef<[(u32, u32)]>>(s: &mut [u64], blocks: &[F]) {
    let len: usize = blocks[0].as_ref().iter().map(|&r| chunks(r)).sum();
    SCRATCH.with(|scratch| {
        let mut buf = scratch.borrow_mut();
        buf.clear();
        buf.resize(len * blocks.len(), 0);
        for (k, b) in blocks.iter().enumerate() {
            let rec = &mut buf[k * len..(k + 1) * len];
            let mut at = 0;
            for &r in b.as_ref() {
                at += read(s, r, &mut rec[at..]);
            }
        }
        let rec = |k: usize| &buf[k * len..(k + 1) * len];
        if (1..blocks.len()).all(|k| rec(k - 1) <= rec(k)) {
            return;
        }
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_by(|&a, &b| rec(a).cmp(rec(b)));
        for (slot, &k) in order.iter().enumerate() {
            let mut at = 0;
            for &r in blocks[slot].as_ref() {
                at += write(s, r, &buf[k * len + at..(k + 1) * len]);
            }
        }
    });
}

/// The classes of interchangeable workgroups: those running the same code
/// that does not read `wg_id`, when the device scheduler ignores ids and
/// no occupancy bound admits workgroups in id order (then renaming
/// workgroups maps the product onto itself).
fn workgroup_classes(m: &Machine, sc: &Scopes) -> Vec<Vec<usize>> {
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
    wg_classes
}

/// The subgroups whose lanes are interchangeable: with interleaved lanes
/// and an id-blind subgroup scheduler, those of a workgroup whose code
/// reads neither `local_id` nor `lane_id` and broadcasts no first lane's
/// value (all of which tell lanes apart).
fn lane_groups(m: &Machine, sc: &Scopes) -> Vec<LaneGroup> {
    let p = &m.program;
    let mut lane_sgs = Vec::new();
    if !m.lockstep() && sc.s > 1 && sc.model.subgroup.id_blind() {
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
            if broadcasts || p.reads_id(c, IdKind::LocalId) || p.reads_id(c, IdKind::LaneId) {
                continue;
            }
            for g in w * sc.per..(w + 1) * sc.per {
                let lanes = (0..sc.s)
                    .map(|l| m.invocation_range(g * sc.s + l))
                    .collect();
                lane_sgs.push((lanes, sc.sg.get(g).copied()));
            }
        }
    }
    lane_sgs
}

/// The workgroups whose subgroups are interchangeable, with each
/// subgroup's fields: those of several subgroups whose code reads neither
/// `subgroup_id` nor `local_id` (which tell subgroups apart; `lane_id`
/// does not), when the workgroup scheduler ignores ids and no SIMT-Step
/// model keeps state of its own per subgroup. A subgroup carries its lanes
/// (in lane order), its lockstep stack, its F set and its bit of the
/// workgroup's F.
fn subgroup_classes(m: &Machine, sc: &Scopes) -> Vec<Vec<Vec<(u32, u32)>>> {
    let p = &m.program;
    if sc.per < 2 || !sc.model.workgroup.id_blind() || m.direct().is_some() {
        return Vec::new();
    }
    let mut classes = Vec::new();
    for w in 0..sc.w {
        let c = p.wg_code[w] as usize;
        if p.reads_id(c, IdKind::SubgroupId) || p.reads_id(c, IdKind::LocalId) {
            continue;
        }
        let sgs = (w * sc.per..(w + 1) * sc.per)
            .map(|g| {
                let mut f: Vec<(u32, u32)> = (g * sc.s..(g + 1) * sc.s)
                    .map(|i| m.invocation_range(i))
                    .collect();
                f.extend(m.subgroup_range(g));
                if let Some(&o) = sc.sg.get(g) {
                    f.push((o, sc.s as u32));
                }
                if let Some(&o) = sc.wg.get(w) {
                    f.push((o + (g - w * sc.per) as u32, 1));
                }
                f
            })
            .collect();
        classes.push(sgs);
    }
    classes
}

/// Per workgroup, the bit fields that move with it when workgroups are
/// permuted: its invocations, lockstep stacks, shared cells, the F sets
/// of its scopes and its bit of the device's F.
fn workgroup_fields(m: &Machine, sc: &Scopes) -> Vec<Vec<(u32, u32)>> {
    (0..sc.w)
        .map(|w| {
            let mut f = Vec::new();
            for i in w * sc.n..(w + 1) * sc.n {
                f.push(m.invocation_range(i));
            }
            for g in w * sc.per..(w + 1) * sc.per {
                f.extend(m.subgroup_range(g));
            }
            f.extend(m.shared_ranges(w));
            if let Some(&o) = sc.wg.get(w) {
                f.push((o, sc.per as u32));
            }
            for g in w * sc.per..(w + 1) * sc.per {
                if let Some(&o) = sc.sg.get(g) {
                    f.push((o, sc.s as u32));
                }
            }
            if let Some(o) = sc.dev {
                f.push((o + w as u32, 1));
            }
            f
        })
        .collect()
}

/// Sorts the lanes of one subgroup by their fields (and F bit).
fn sort_lanes(s: &mut [u64], lanes: &[(u32, u32)], fsg: Option<u32>) {
    let n = lanes.len();
    let f = fsg.map(|o| get_bits(s, o, n as u32));
    let mut recs = [[0u64; 4]; 8];
    for (l, &r) in lanes.iter().enumerate() {
        let used = read(s, r, &mut recs[l]);
        if let Some(f) = f {
            recs[l][used] = (f >> l) & 1;
        }
    }
    if (1..n).all(|l| recs[l - 1] <= recs[l]) {
        return;
    }
    recs[..n].sort();
    let mut nf = 0u64;
    for (slot, &r) in lanes.iter().enumerate() {
        let used = write(s, r, &recs[slot]);
        if fsg.is_some() {
            nf |= recs[slot][used] << slot;
        }
    }
    if let Some(o) = fsg {
        set_bits(s, o, n as u32, nf);
    }
}
