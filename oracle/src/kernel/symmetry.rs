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
use progress_litmus::kernel::machine::{get_bits, set_bits, Machine, MAX_WORDS};
use progress_litmus::kernel::program::{CollectiveOp, IdKind, Instr, MAX_INVOCATIONS};

/// The interchangeable workgroups and lanes of a program under a model:
/// the groups of interchangeable blocks, in the order they are sorted.
#[derive(Clone, Debug)]
pub struct Symmetry {
    /// The lanes of each subgroup whose lanes are interchangeable (a lane
    /// carries its fields and its bit of the subgroup's F), then the
    /// subgroups of each workgroup whose subgroups are (a subgroup carries
    /// its lanes in lane order, its lockstep stack, its F set and its bit
    /// of the workgroup's F), then the workgroups of each class (a
    /// workgroup carries its invocations, lockstep stacks, shared cells,
    /// the F sets of its scopes and its bit of the device's F).
    groups: Vec<Group>,
    /// Whether some group is of lanes or subgroups.
    permutes_lanes: bool,
}

/// Interchangeable blocks (lanes of a subgroup, subgroups of a workgroup,
/// workgroups of a class), each a list of bit fields of the same widths,
/// cut into pieces of at most 32 bits (a wider field from its low end).
/// A block's record is its pieces in order, compared lexicographically as
/// unsigned numbers; its key is the pieces' bits concatenated, the first
/// piece highest, in words compared in order: the same order.
#[derive(Clone, Debug)]
struct Group {
    /// The blocks (at most [`MAX_INVOCATIONS`]).
    n: usize,
    /// The pieces' widths, the same for every block.
    widths: Vec<u32>,
    /// Per block, its pieces' offsets (`n * widths.len()`).
    offs: Vec<u32>,
    /// The words of a key: the record's bits, 64 a word (at most
    /// [`MAX_WORDS`], as a record is part of a state).
    words: usize,
}

impl Group {
    fn new<F: AsRef<[(u32, u32)]>>(blocks: &[F]) -> Group {
        assert!(blocks.len() <= MAX_INVOCATIONS, "at most 16 blocks");
        let (mut widths, mut offs) = (Vec::new(), Vec::new());
        for (k, b) in blocks.iter().enumerate() {
            for &(off, w) in b.as_ref() {
                let end = off + w;
                let mut o = off;
                while o < end {
                    let c = (end - o).min(32);
                    if k == 0 {
                        widths.push(c);
                    }
                    offs.push(o);
                    o += c;
                }
            }
        }
        assert_eq!(
            offs.len(),
            widths.len() * blocks.len(),
            "blocks of one shape"
        );
        let bits: u32 = widths.iter().sum();
        Group {
            n: blocks.len(),
            words: (bits as usize).div_ceil(64).max(1),
            widths,
            offs,
        }
    }

    /// The key of block `b`: its pieces concatenated, the first highest,
    /// in `K` words (the last holds the rest of the bits, at its low end).
    #[inline]
    fn key<const K: usize>(&self, s: &[u64], b: usize) -> [u64; K] {
        let p = self.widths.len();
        let offs = &self.offs[b * p..(b + 1) * p];
        let mut key = [0u64; K];
        if K == 1 {
            for (&o, &c) in offs.iter().zip(&self.widths) {
                key[0] = key[0] << c | get_bits(s, o, c);
            }
            return key;
        }
        let (mut i, mut used) = (0, 0u32);
        for (&o, &c) in offs.iter().zip(&self.widths) {
            let v = get_bits(s, o, c);
            let room = 64 - used;
            if c < room {
                key[i] = key[i] << c | v;
                used += c;
            } else {
                // The piece fills word i (room <= c <= 32) and starts the next.
                let lo = c - room;
                key[i] = key[i] << room | v >> lo;
                i += 1;
                used = lo;
                if lo > 0 {
                    key[i] = v & ((1 << lo) - 1);
                }
            }
        }
        key
    }

    /// Sorts the blocks by their records (keys of `K` words).
    fn sort<const K: usize>(&self, s: &mut [u64]) {
        let n = self.n;
        let mut keys = [[0u64; K]; MAX_INVOCATIONS];
        let mut sorted = true;
        for b in 0..n {
            keys[b] = self.key(s, b);
            sorted &= b == 0 || keys[b - 1] <= keys[b];
        }
        if sorted {
            return;
        }
        // Insertion sort of the blocks' indices by key.
        let mut order = [0usize; MAX_INVOCATIONS];
        for b in 0..n {
            let mut j = b;
            while j > 0 && keys[order[j - 1]] > keys[b] {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = b;
        }
        let mut orig = [0u64; MAX_WORDS];
        orig[..s.len()].copy_from_slice(s);
        let p = self.widths.len();
        for (slot, &k) in order[..n].iter().enumerate() {
            if k == slot {
                continue;
            }
            let (to, from) = (&self.offs[slot * p..], &self.offs[k * p..]);
            for (j, &c) in self.widths.iter().enumerate() {
                set_bits(s, to[j], c, get_bits(&orig, from[j], c));
            }
        }
    }

    fn canonicalize(&self, s: &mut [u64]) {
        match self.words {
            1 => self.sort::<1>(s),
            2 => self.sort::<2>(s),
            _ => self.sort::<MAX_WORDS>(s),
        }
    }
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
        let mut groups: Vec<Group> = lane_sgs.iter().map(lane_blocks).collect();
        groups.extend(sg_classes.iter().map(|sgs| Group::new(sgs)));
        groups.extend(wg_classes.iter().map(|class| {
            Group::new(&class.iter().map(|&w| &wg_fields[w][..]).collect::<Vec<_>>())
        }));
        Some(Symmetry {
            groups,
            permutes_lanes: !lane_sgs.is_empty() || !sg_classes.is_empty(),
        })
    }

    /// Whether some invocations of a workgroup are interchangeable (lanes
    /// of a subgroup, or subgroups of a workgroup): then a reduction that
    /// picks actors by their index inside the workgroup would not commute
    /// with the permutations.
    pub fn permutes_lanes(&self) -> bool {
        self.permutes_lanes
    }

    /// Replaces a state by the canonical member of its orbit: lanes sorted
    /// inside subgroups, then subgroups inside workgroups, then workgroups
    /// inside their classes (each level compares records already
    /// canonical inside).
    pub fn canonicalize(&self, s: &mut [u64]) {
        for g in &self.groups {
            g.canonicalize(s);
        }
    }
}

/// The lanes' fields of a subgroup and the offset of its F set.
type LaneGroup = (Vec<(u32, u32)>, Option<u32>);

/// The group of a subgroup's lanes: each lane's fields and its bit of the
/// subgroup's F.
fn lane_blocks((lanes, fsg): &LaneGroup) -> Group {
    let blocks: Vec<Vec<(u32, u32)>> = (lanes.iter().enumerate())
        .map(|(l, &r)| {
            std::iter::once(r)
                .chain(fsg.map(|o| (o + l as u32, 1)))
                .collect()
        })
        .collect();
    Group::new(&blocks)
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

#[cfg(test)]
mod tests {
    //! The canonical form against the first implementation's (kept here
    //! as the reference): the same representative for every state.

    use super::*;
    use crate::kernel::product::{Kernel, Reductions};
    use progress_litmus::kernel::ScopedModel;

    /// The first implementation: records read 32 bits at a time into
    /// scratch vectors, compared whole.
    struct Reference {
        wg_classes: Vec<Vec<usize>>,
        wg_fields: Vec<Vec<(u32, u32)>>,
        lane_sgs: Vec<LaneGroup>,
        sg_classes: Vec<Vec<Vec<(u32, u32)>>>,
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
        let (mut o, mut k) = (off, 0);
        while o < end {
            let c = (end - o).min(32);
            set_bits(s, o, c, vals[k]);
            k += 1;
            o += c;
        }
        k
    }

    fn sort_blocks<F: AsRef<[(u32, u32)]>>(s: &mut [u64], blocks: &[F]) {
        let recs: Vec<Vec<u64>> = blocks
            .iter()
            .map(|b| {
                let mut rec = Vec::new();
                for &r in b.as_ref() {
                    read(s, r, &mut rec);
                }
                rec
            })
            .collect();
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_by(|&a, &b| recs[a].cmp(&recs[b]));
        for (slot, &k) in order.iter().enumerate() {
            let mut at = 0;
            for &r in blocks[slot].as_ref() {
                at += write(s, r, &recs[k][at..]);
            }
        }
    }

    fn sort_lanes(s: &mut [u64], lanes: &[(u32, u32)], fsg: Option<u32>) {
        let n = lanes.len();
        let f = fsg.map(|o| get_bits(s, o, n as u32));
        let mut recs: Vec<Vec<u64>> = Vec::new();
        for (l, &r) in lanes.iter().enumerate() {
            let mut rec = Vec::new();
            read(s, r, &mut rec);
            if let Some(f) = f {
                rec.push((f >> l) & 1);
            }
            recs.push(rec);
        }
        recs.sort();
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

    impl Reference {
        fn new(m: &Machine, sc: &Scopes) -> Reference {
            Reference {
                wg_classes: workgroup_classes(m, sc),
                wg_fields: workgroup_fields(m, sc),
                lane_sgs: lane_groups(m, sc),
                sg_classes: subgroup_classes(m, sc),
            }
        }

        fn canonicalize(&self, s: &mut [u64]) {
            for (lanes, fsg) in &self.lane_sgs {
                sort_lanes(s, lanes, *fsg);
            }
            for sgs in &self.sg_classes {
                sort_blocks(s, sgs);
            }
            for class in &self.wg_classes {
                let blocks: Vec<&[(u32, u32)]> =
                    class.iter().map(|&w| &self.wg_fields[w][..]).collect();
                sort_blocks(s, &blocks);
            }
        }
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// The idioms (suites/idioms, their expectations dropped) and larger
    /// launches of them: more workgroups, invocations and subgroups.
    fn programs() -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
            .collect();
        names.sort();
        let launches = [
            "",
            "workgroup_size 2;\n",
            "workgroup_size 4;\nsubgroup_size 2;\n",
            "workgroup_size 6;\nsubgroup_size 3;\n",
            "workgroup_size 8;\n",
        ];
        // Many registers: records of more than 128 bits.
        let wide = "values 16;\nworkgroups 2;\nworkgroup_size 4;\nsubgroup_size 2;\n\
            global x;\nshared y[2];\nkernel {\n  a = fetch_add(x, 1);\n  b = a + 1;\n\
            c = b + a;\n  y[0] = c;\n  d = y[1];\n  e = d + c;\n  f = e + b;\n  g = x;\n\
            h = g + f;\n  y[1] = h;\n}\n";
        let mut out = vec![("wide".to_string(), wide.to_string())];
        for path in names {
            let src: String = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with("expect"))
                .map(|l| format!("{l}\n"))
                .collect();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            for (k, extra) in launches.iter().enumerate() {
                let wider = src.replace("values 4;", "values 8;");
                let more = wider.replace("workgroups 2;", "workgroups 4;");
                let more = more.replace("workgroups 3;", "workgroups 5;");
                for (v, text) in [&src, &more].into_iter().enumerate() {
                    let text = text.replacen("kernel", &format!("{extra}kernel"), 1);
                    out.push((format!("{name} launch {k}.{v}"), text));
                }
            }
        }
        out
    }

    /// Compares the two canonical forms on the successors (as they are,
    /// and with random bits flipped) along random walks of the unreduced
    /// product; the number of states compared and of those reordered.
    fn compare(k: &Kernel, name: &str, rng: &mut Rng) -> (usize, usize) {
        let sym = k.symmetry.as_ref().unwrap();
        let reference = Reference::new(&k.machine, &k.scopes);
        let bits = k.scopes.end as usize;
        let (mut compared, mut moved) = (0, 0);
        let mut out = Vec::new();
        for _ in 0..8 {
            let mut s: [u64; MAX_WORDS] = k.initial();
            for _ in 0..60 {
                out.clear();
                if k.successors_with(&s, &mut out, false).is_err() || out.is_empty() {
                    break;
                }
                for &(_, t) in &out {
                    let mut flipped = t;
                    for (i, w) in flipped.iter_mut().enumerate().take(bits.div_ceil(64)) {
                        let keep = (bits - 64 * i).min(64);
                        let mask = if keep == 64 { !0 } else { (1 << keep) - 1 };
                        if rng.below(4) == 0 {
                            *w ^= rng.next() & rng.next() & mask;
                        }
                    }
                    for u in [t, flipped] {
                        let (mut a, mut b) = (u, u);
                        sym.canonicalize(&mut a);
                        reference.canonicalize(&mut b);
                        assert_eq!(a, b, "{name}: from {u:x?}");
                        compared += 1;
                        moved += usize::from(a != u);
                    }
                }
                s = out[rng.below(out.len())].1;
            }
        }
        (compared, moved)
    }

    #[test]
    fn canonical_forms_are_the_first_implementations() {
        let models = [
            "OBE",
            "WEAK_FAIR",
            "UNFAIR_STRONG",
            "OBE, workgroup=obe, subgroup=obe",
            "WEAK_FAIR, workgroup=unfair, subgroup=fair",
            "OBE, subgroup=lockstep",
            "WEAK_FAIR, subgroup=scf",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut kernels, mut compared, mut moved) = (0, 0, 0);
        let (mut lanes, mut subgroups) = (0, 0);
        // Groups by the words of their keys: 1, 2, more.
        let mut words = [0usize; 3];
        for (name, src) in programs() {
            let Ok(p) = progress_litmus::kernel::litmus::parse(&src) else {
                continue;
            };
            for m in models {
                let model = ScopedModel::parse(m).unwrap();
                let Ok(k) = Kernel::new(&p, &model, Reductions::ALL) else {
                    continue;
                };
                let Some(sym) = &k.symmetry else { continue };
                let r = Reference::new(&k.machine, &k.scopes);
                for g in &sym.groups {
                    words[g.words.min(3) - 1] += 1;
                }
                lanes += usize::from(!r.lane_sgs.is_empty());
                subgroups += usize::from(!r.sg_classes.is_empty());
                assert_eq!(
                    sym.permutes_lanes(),
                    !r.lane_sgs.is_empty() || !r.sg_classes.is_empty()
                );
                let (c, mv) = compare(&k, &format!("{name} under {m}"), &mut rng);
                kernels += 1;
                compared += c;
                moved += mv;
            }
        }
        assert!(kernels > 300, "{kernels} kernels");
        assert!(
            lanes > 50 && subgroups > 50,
            "{lanes} lanes, {subgroups} subgroups"
        );
        assert!(
            words.iter().all(|&k| k > 0),
            "groups by key words: {words:?}"
        );
        assert!(
            moved * 4 > compared,
            "{moved} of {compared} states reordered"
        );
    }
}
