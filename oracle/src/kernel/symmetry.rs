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
//! Under HSA, HSA+OBE and LOBE at the device scope, workgroups are
//! interchangeable only by renamings that keep the order of the live
//! ones (`Live`): each run of consecutive workgroups running one code
//! that does not read `wg_id` is canonical with its live workgroups
//! first, in order, and its terminated ones after them, sorted.
//!
//! The strong rule, deadlocks and acyclicity are decided exactly on the
//! reduced space: they are statements about single states and their
//! successors, and the guarantees of a state are permuted with it. The weak
//! rule is about which entity steps along a cycle, which the reduced space
//! loses; [`super::lifted`] decides it by lifting cyclic components back.

use super::scopes::Scopes;
use progress_litmus::kernel::machine::{Machine, MAX_WORDS};
use progress_litmus::kernel::program::{CollectiveOp, IdKind, Instr, MAX_INVOCATIONS};
use progress_litmus::kernel::Sched;

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
/// unsigned numbers.
///
/// A block's key holds its pieces in order, each whole in one word, the
/// first highest: keys compare as words in order as the records do. The
/// `j`th pieces of the blocks form a column; a column whose pieces lie
/// at one stride and span at most 64 bits is read and written at once.
#[derive(Clone, Debug)]
struct Group {
    /// The blocks (at most [`MAX_INVOCATIONS`]).
    n: usize,
    columns: Vec<Column>,
    /// Per column, its pieces' offsets in the state (`n` each).
    offs: Vec<u32>,
    /// The words of a key.
    words: usize,
    /// Per block, its first invocation; a block's invocations are
    /// `size` consecutive ones ([`Symmetry::twins`]).
    firsts: Vec<u8>,
    size: u8,
    /// The bits of the state the blocks take, per word
    /// ([`Symmetry::canonicalize_after`]).
    bits: [u64; MAX_WORDS],
    /// For workgroups in live order ([`Live`]), what tells a block
    /// terminated; `None` for blocks freely interchangeable.
    live: Option<Live>,
}

/// Workgroups under a device scheduler whose F holds live workgroups
/// only and reads their ids only through their order (HSA, HSA+OBE,
/// LOBE) are interchangeable only by renamings that keep the order of
/// the live ones (docs/KERNEL.md §8.1): the canonical state has the live
/// ones of a run first, in order, and the terminated ones after them,
/// sorted.
#[derive(Clone, Debug)]
struct Live {
    /// The blocks' invocations' Terminate flags, as (block, word, bits)
    /// triples: a block has terminated when all of its are set.
    terms: Vec<(usize, usize, u64)>,
    /// Every block's Terminate flags, per word.
    all_terms: [u64; MAX_WORDS],
    /// The bits of the state each block takes, as (block, word, bits).
    bits: Vec<(usize, usize, u64)>,
}

/// Bit offsets as (word, bits) pairs, one a word they touch, in order.
fn by_word(offsets: impl Iterator<Item = u32>) -> Vec<(usize, u64)> {
    let mut words = [0u64; MAX_WORDS];
    for o in offsets {
        words[(o / 64) as usize] |= 1 << (o % 64);
    }
    (words.iter().enumerate())
        .filter(|&(_, &b)| b != 0)
        .map(|(w, &b)| (w, b))
        .collect()
}

/// The `j`th pieces of the blocks.
#[derive(Clone, Copy, Debug)]
struct Column {
    /// A piece's width and mask.
    width: u32,
    mask: u64,
    /// A piece's word of the key and its shift there.
    word: usize,
    shift: u32,
    /// The bits between one block's piece and the next's, when the pieces
    /// are so evenly spaced and the column spans `span` bits, at most 64;
    /// 0 otherwise.
    stride: u32,
    span: u32,
    /// The column's pieces' bits from the first piece's offset.
    bits: u64,
}

/// Reads the bits of `mask` (of `w` bits) at `off`.
#[inline]
fn load(s: &[u64], off: u32, w: u32, mask: u64) -> u64 {
    let (i, b) = ((off / 64) as usize, off % 64);
    let mut v = s[i] >> b;
    if b + w > 64 {
        v |= s[i + 1] << (64 - b);
    }
    v & mask
}

/// Writes the bits of `mask` (of `w` bits) at `off` from `v`.
#[inline]
fn store(s: &mut [u64], off: u32, w: u32, mask: u64, v: u64) {
    let (i, b) = ((off / 64) as usize, off % 64);
    s[i] = (s[i] & !(mask << b)) | ((v & mask) << b);
    if b + w > 64 {
        let hi = mask >> (64 - b);
        s[i + 1] = (s[i + 1] & !hi) | ((v & mask) >> (64 - b));
    }
}

/// The pieces of a block: offsets and widths.
fn pieces(fields: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for &(off, w) in fields {
        let end = off + w;
        let mut o = off;
        while o < end {
            let c = (end - o).min(32);
            out.push((o, c));
            o += c;
        }
    }
    out
}

/// The low `w` bits.
fn low(w: u32) -> u64 {
    if w == 64 {
        !0
    } else {
        (1 << w) - 1
    }
}

impl Group {
    fn new<F: AsRef<[(u32, u32)]>>(blocks: &[F]) -> Group {
        let n = blocks.len();
        assert!(n <= MAX_INVOCATIONS, "at most 16 blocks");
        let pcs: Vec<Vec<(u32, u32)>> = blocks.iter().map(|b| pieces(b.as_ref())).collect();
        let (mut columns, mut offs) = (Vec::new(), Vec::new());
        let (mut word, mut used) = (0, 0);
        for (j, &(first, c)) in pcs[0].iter().enumerate() {
            assert!(pcs.iter().all(|p| p[j].1 == c), "blocks of one shape");
            // Each piece whole in a word: a new one where the last is full.
            if used + c > 64 {
                word += 1;
                used = 0;
            }
            used += c;
            let next = pcs.get(1).map_or(first + c, |p| p[j].0);
            let stride = (next.checked_sub(first).filter(|&d| d >= c))
                .filter(|&d| (0..n).all(|b| pcs[b][j].0 == first + b as u32 * d))
                .filter(|&d| (n as u32 - 1) * d + c <= 64);
            columns.push(Column {
                width: c,
                mask: low(c),
                word,
                shift: 64 - used,
                stride: stride.unwrap_or(0),
                span: stride.map_or(0, |d| (n as u32 - 1) * d + c),
                bits: stride.map_or(0, |d| (0..n as u32).fold(0, |m, b| m | low(c) << (b * d))),
            });
            offs.extend(pcs.iter().map(|p| p[j].0));
        }
        let mut bits = [0u64; MAX_WORDS];
        for (col, offs) in columns.iter().zip(offs.chunks_exact(n)) {
            for &o in offs {
                for b in o..o + col.width {
                    bits[(b / 64) as usize] |= 1 << (b % 64);
                }
            }
        }
        Group {
            n,
            columns,
            offs,
            words: word + 1,
            firsts: Vec::new(),
            size: 0,
            bits,
            live: None,
        }
    }

    /// The group in live order ([`Live`]): block `b`'s invocations'
    /// Terminate flags are at `terms[b]`.
    fn in_live_order(mut self, terms: Vec<Vec<u32>>) -> Group {
        let n = self.n;
        let tag =
            |b: usize, pairs: Vec<(usize, u64)>| pairs.into_iter().map(move |(w, m)| (b, w, m));
        let bits = (0..n)
            .flat_map(|b| {
                tag(
                    b,
                    by_word(
                        (self.columns.iter().zip(self.offs.chunks_exact(n)))
                            .flat_map(|(col, offs)| offs[b]..offs[b] + col.width),
                    ),
                )
            })
            .collect();
        let mut all_terms = [0u64; MAX_WORDS];
        for &(w, m) in &by_word(terms.iter().flatten().copied()) {
            all_terms[w] = m;
        }
        let terms = (terms.into_iter().enumerate())
            .flat_map(|(b, t)| tag(b, by_word(t.into_iter())))
            .collect();
        self.live = Some(Live {
            terms,
            all_terms,
            bits,
        });
        self
    }

    /// The blocks of a group in live order that have terminated.
    #[inline]
    fn dead(&self, live: &Live, s: &[u64]) -> u32 {
        let mut d = (1u32 << self.n) - 1;
        for &(b, w, m) in &live.terms {
            if s[w] & m != m {
                d &= !(1 << b);
            }
        }
        d
    }

    /// Whether `t`, a successor of the canonical `s`, is canonical for
    /// this group in live order: the same blocks terminated (no
    /// Terminate flag changed), with the same bits (a live block's
    /// contents do not move it).
    #[inline]
    fn live_unchanged(&self, live: &Live, s: &[u64], t: &[u64]) -> bool {
        if self.unchanged(s, t) {
            return true;
        }
        if (s.iter().zip(t).zip(&live.all_terms)).any(|((x, y), m)| (x ^ y) & m != 0) {
            return false;
        }
        let dead = self.dead(live, s);
        dead == 0
            || (live.bits.iter()).all(|&(b, w, m)| dead >> b & 1 == 0 || (s[w] ^ t[w]) & m == 0)
    }

    /// The live blocks first, in order, then the terminated ones sorted
    /// by their records ([`Live`]).
    fn sort_live<const K: usize>(&self, live: &Live, s: &mut [u64]) {
        let n = self.n;
        let dead = self.dead(live, s);
        if dead == 0 {
            return;
        }
        let mut keys = [[0u64; K]; MAX_INVOCATIONS];
        self.keys(s, &mut keys, false);
        let mut order = [0usize; MAX_INVOCATIONS];
        let mut k = 0;
        for b in (0..n).filter(|&b| dead >> b & 1 == 0) {
            order[k] = b;
            k += 1;
        }
        let first_dead = k;
        for b in (0..n).filter(|&b| dead >> b & 1 != 0) {
            let mut j = k;
            while j > first_dead && keys[order[j - 1]] > keys[b] {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = b;
            k += 1;
        }
        if (0..n).all(|b| order[b] == b) {
            return;
        }
        self.place(s, &keys, &order);
    }

    /// Whether `s` and `t` agree on every bit of the blocks.
    #[inline]
    fn unchanged(&self, s: &[u64], t: &[u64]) -> bool {
        (s.iter().zip(t).zip(&self.bits)).all(|((a, b), m)| (a ^ b) & m == 0)
    }

    /// The group whose blocks' invocations are `size` from each of
    /// `firsts`.
    fn with_invocations(mut self, firsts: Vec<u8>, size: usize) -> Group {
        debug_assert_eq!(firsts.len(), self.n);
        self.firsts = firsts;
        self.size = size as u8;
        self
    }

    /// Whether blocks `x` and `y` have the same record in `s` (then
    /// swapping them leaves `s` as it is).
    #[inline]
    fn same(&self, s: &[u64], x: usize, y: usize) -> bool {
        let n = self.n;
        (self.columns.iter().zip(self.offs.chunks_exact(n))).all(|(col, offs)| {
            load(s, offs[x], col.width, col.mask) == load(s, offs[y], col.width, col.mask)
        })
    }

    /// The blocks' keys; false, with only some pieces read, where those
    /// of the first word already increase (the blocks are sorted).
    #[inline]
    fn keys<const K: usize>(
        &self,
        s: &[u64],
        keys: &mut [[u64; K]; MAX_INVOCATIONS],
        early: bool,
    ) -> bool {
        let n = self.n;
        for (j, (col, offs)) in self
            .columns
            .iter()
            .zip(self.offs.chunks_exact(n))
            .enumerate()
        {
            if early && j > 0 && col.word == 0 && (1..n).all(|b| keys[b - 1][0] < keys[b][0]) {
                return false;
            }
            let word = if K == 1 { 0 } else { col.word };
            if col.span > 0 {
                let mut v = load(s, offs[0], col.span, col.bits);
                for key in &mut keys[..n] {
                    key[word] |= (v & col.mask) << col.shift;
                    v >>= col.stride;
                }
            } else {
                for (key, &o) in keys[..n].iter_mut().zip(offs) {
                    key[word] |= load(s, o, col.width, col.mask) << col.shift;
                }
            }
        }
        true
    }

    /// Sorts the blocks by their records (keys of `K` words).
    fn sort<const K: usize>(&self, s: &mut [u64]) {
        let n = self.n;
        let mut keys = [[0u64; K]; MAX_INVOCATIONS];
        if !self.keys(s, &mut keys, true) || keys[..n].is_sorted() {
            return;
        }
        // Insertion sort of the blocks' indices.
        let mut order = [0usize; MAX_INVOCATIONS];
        for b in 0..n {
            let mut j = b;
            while j > 0 && keys[order[j - 1]] > keys[b] {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = b;
        }
        self.place(s, &keys, &order);
    }

    /// Writes the blocks of `keys` (all of them) into `s`, block
    /// `order[slot]`'s at slot `slot`.
    fn place<const K: usize>(
        &self,
        s: &mut [u64],
        keys: &[[u64; K]; MAX_INVOCATIONS],
        order: &[usize; MAX_INVOCATIONS],
    ) {
        let n = self.n;
        for (col, offs) in self.columns.iter().zip(self.offs.chunks_exact(n)) {
            let piece = |slot: usize| keys[order[slot]][col.word] >> col.shift & col.mask;
            if col.span > 0 {
                let v = (0..n).fold(0, |v, slot| v | piece(slot) << (slot as u32 * col.stride));
                store(s, offs[0], col.span, col.bits, v);
            } else {
                for (slot, &o) in offs.iter().enumerate() {
                    store(s, o, col.width, col.mask, piece(slot));
                }
            }
        }
    }

    /// The `j`th pieces of two blocks, `off` the column's offsets.
    #[inline]
    fn pair(s: &[u64], col: &Column, offs: &[u32]) -> (u64, u64) {
        if col.span > 0 {
            let v = load(s, offs[0], col.span, col.bits);
            (v & col.mask, v >> col.stride & col.mask)
        } else {
            let (a, b) = (offs[0], offs[1]);
            (
                load(s, a, col.width, col.mask),
                load(s, b, col.width, col.mask),
            )
        }
    }

    /// Sorts two blocks: compared piece by piece up to the first
    /// difference, swapped where the second comes first.
    fn sort_pair(&self, s: &mut [u64]) {
        let mut cols = self.columns.iter().zip(self.offs.chunks_exact(2));
        let first_greater = cols.find_map(|(col, offs)| {
            let (a, b) = Group::pair(s, col, offs);
            (a != b).then_some(a > b)
        });
        if first_greater != Some(true) {
            return;
        }
        for (col, offs) in self.columns.iter().zip(self.offs.chunks_exact(2)) {
            let (a, b) = Group::pair(s, col, offs);
            if col.span > 0 {
                store(s, offs[0], col.span, col.bits, b | a << col.stride);
            } else {
                store(s, offs[0], col.width, col.mask, b);
                store(s, offs[1], col.width, col.mask, a);
            }
        }
    }

    fn canonicalize(&self, s: &mut [u64]) {
        if let Some(live) = &self.live {
            return match self.words {
                1 => self.sort_live::<1>(live, s),
                2 => self.sort_live::<2>(live, s),
                3 | 4 => self.sort_live::<4>(live, s),
                _ => self.sort_live::<MAX_KEY_WORDS>(live, s),
            };
        }
        if self.n == 2 {
            return self.sort_pair(s);
        }
        match self.words {
            1 => self.sort::<1>(s),
            2 => self.sort::<2>(s),
            3 | 4 => self.sort::<4>(s),
            _ => self.sort::<MAX_KEY_WORDS>(s),
        }
    }

    /// Whether the group's blocks are as canonical in `t`, a successor
    /// of the canonical `s`, as in `s` ([`Symmetry::canonicalize_after`]).
    #[inline]
    fn kept(&self, s: &[u64], t: &[u64]) -> bool {
        match &self.live {
            Some(live) => self.live_unchanged(live, s, t),
            None => self.unchanged(s, t),
        }
    }
}

/// The most words of a key: pieces of at most 32 bits, whole in a word,
/// fill more than half of each word but the last, and a record is part of
/// a state.
const MAX_KEY_WORDS: usize = 2 * MAX_WORDS;

impl Symmetry {
    /// The symmetry of a program under the model of `sc`, if it has any.
    pub fn new(m: &Machine, sc: &Scopes) -> Option<Symmetry> {
        let wg_classes = workgroup_classes(m, sc);
        let lane_sgs = lane_groups(m, sc);
        let sg_classes = subgroup_classes(m, sc);
        let live = live_runs(m, sc);
        if wg_classes.is_empty() && lane_sgs.is_empty() && sg_classes.is_empty() && live.is_empty()
        {
            return None;
        }
        let wg_fields = workgroup_fields(m, sc);
        // A block's first field is its first invocation's.
        let inv_of = |r: (u32, u32)| {
            (0..m.num_invocations())
                .find(|&i| m.invocation_range(i) == r)
                .expect("a block starts with an invocation") as u8
        };
        let mut groups: Vec<Group> = (lane_sgs.iter())
            .map(|lg| {
                lane_blocks(lg).with_invocations(lg.0.iter().map(|&r| inv_of(r)).collect(), 1)
            })
            .collect();
        groups.extend(sg_classes.iter().map(|sgs| {
            Group::new(sgs).with_invocations(sgs.iter().map(|f| inv_of(f[0])).collect(), sc.s)
        }));
        groups.extend(wg_classes.iter().map(|class| {
            Group::new(&class.iter().map(|&w| &wg_fields[w][..]).collect::<Vec<_>>())
                .with_invocations(
                    class.iter().map(|&w| inv_of(wg_fields[w][0])).collect(),
                    sc.n,
                )
        }));
        groups.extend(live.iter().map(|run| {
            let terms = run.iter().map(|&w| terminate_bits(m, sc, w)).collect();
            Group::new(&run.iter().map(|&w| &wg_fields[w][..]).collect::<Vec<_>>())
                .with_invocations(run.iter().map(|&w| inv_of(wg_fields[w][0])).collect(), sc.n)
                .in_live_order(terms)
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

    /// Whether every renaming it allows keeps the order of the live
    /// workgroups (`Live`): then a reduction that picks the lowest
    /// actor commutes with them.
    pub fn keeps_order(&self) -> bool {
        self.groups.iter().all(|g| g.live.is_some())
    }

    /// Per invocation, an invocation it is *interchangeable with in
    /// `s`*: one of the block before its own in some group, at the same
    /// place in it, where the two blocks' records are equal, or itself.
    /// Swapping two such blocks maps `s` onto itself, so the steps of the
    /// two invocations (or of the actors they start) lead to states of
    /// one orbit: the same canonical state (docs/KERNEL.md §8.1). The
    /// earlier block's invocations come first.
    pub fn twins(&self, s: &[u64]) -> [u8; MAX_INVOCATIONS] {
        let mut t: [u8; MAX_INVOCATIONS] = std::array::from_fn(|i| i as u8);
        // Blocks in live order are not interchangeable in a state: a
        // swap of two live ones changes which is guaranteed later.
        for g in self.groups.iter().filter(|g| g.live.is_none()) {
            for b in 1..g.n {
                if !g.same(s, b - 1, b) {
                    continue;
                }
                for k in 0..g.size {
                    let i = (g.firsts[b] + k) as usize;
                    if t[i] as usize == i {
                        t[i] = g.firsts[b - 1] + k;
                    }
                }
            }
        }
        t
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

    /// [`Symmetry::canonicalize`] of a successor `t` of a canonical
    /// state `s`: a group whose blocks' bits are as in `s` when its turn
    /// comes is sorted already (in a canonical state every group is: a
    /// later group moves an earlier group's blocks, sorted, onto those of
    /// another group of the same shape), so only the groups a step
    /// changed are sorted. Most steps change one invocation: one lane's
    /// group of a workgroup's and the workgroups'.
    pub fn canonicalize_after(&self, s: &[u64], t: &mut [u64]) {
        for g in &self.groups {
            if !g.kept(s, t) {
                g.canonicalize(t);
            }
        }
    }

    /// [`Symmetry::canonicalize_after`] of a step (not a Terminate)
    /// from the canonical `s`: a step changes no Terminate flag and no
    /// terminated workgroup (only its actor's fields, memory, and F bits
    /// of live children), so workgroups in live order stay canonical
    /// and are not looked at.
    pub fn canonicalize_after_step(&self, s: &[u64], t: &mut [u64]) {
        for g in self.groups.iter().filter(|g| g.live.is_none()) {
            if !g.unchanged(s, t) {
                g.canonicalize(t);
            }
        }
    }
}

/// The runs of workgroups interchangeable in live order ([`Live`]): under
/// a device scheduler whose F holds only live workgroups and is kept by
/// a renaming that keeps their order (HSA and HSA+OBE guarantee the
/// lowest live one, HSA+OBE and LOBE add those that step, LOBE the live
/// ones below them too), when no occupancy bound admits them in id
/// order, each longest run of consecutive workgroups running the same
/// code that does not read `wg_id`, of two or more. A renaming inside a
/// run that keeps the order of its live workgroups keeps the order of
/// all live ones, so it maps the product onto itself, now and after any
/// of them terminates (docs/KERNEL.md §8.1).
fn live_runs(m: &Machine, sc: &Scopes) -> Vec<Vec<usize>> {
    let p = &m.program;
    let model = sc.model;
    let occupancy_blind = model.occupancy.is_none_or(|k| k as usize >= sc.w);
    if !matches!(model.device, Sched::Hsa | Sched::HsaObe | Sched::Lobe) || !occupancy_blind {
        return Vec::new();
    }
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for w in 0..sc.w {
        match runs.last_mut() {
            Some(run) if p.wg_code[run[0]] == p.wg_code[w] => run.push(w),
            _ => runs.push(vec![w]),
        }
    }
    runs.retain(|run| run.len() > 1 && !p.reads_id(p.wg_code[run[0]] as usize, IdKind::WgId));
    runs
}

/// The offsets of the Terminate flags of workgroup `w`'s invocations.
fn terminate_bits(m: &Machine, sc: &Scopes, w: usize) -> Vec<u32> {
    (w * sc.n..(w + 1) * sc.n)
        .map(|i| m.terminated_bit(i))
        .collect()
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
    use progress_litmus::kernel::machine::{get_bits, set_bits};
    use progress_litmus::kernel::program::Program;
    use progress_litmus::kernel::ScopedModel;

    /// The first implementation: records read 32 bits at a time into
    /// scratch vectors, compared whole.
    struct Reference {
        wg_classes: Vec<Vec<usize>>,
        wg_fields: Vec<Vec<(u32, u32)>>,
        lane_sgs: Vec<LaneGroup>,
        sg_classes: Vec<Vec<Vec<(u32, u32)>>>,
        /// The runs of workgroups in live order.
        live: Vec<Vec<usize>>,
        /// Every workgroup's invocations' Terminate flags.
        terms: Vec<Vec<u32>>,
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

    /// The live blocks (those not all of whose `terms` bits are set)
    /// first in their order, then the others sorted.
    fn sort_live(s: &mut [u64], blocks: &[Vec<(u32, u32)>], terms: &[Vec<u32>]) {
        let recs: Vec<Vec<u64>> = blocks
            .iter()
            .map(|b| {
                let mut rec = Vec::new();
                for &r in b {
                    read(s, r, &mut rec);
                }
                rec
            })
            .collect();
        let dead = |b: usize| terms[b].iter().all(|&o| get_bits(s, o, 1) == 1);
        let mut order: Vec<usize> = (0..blocks.len()).filter(|&b| !dead(b)).collect();
        let mut gone: Vec<usize> = (0..blocks.len()).filter(|&b| dead(b)).collect();
        gone.sort_by(|&a, &b| recs[a].cmp(&recs[b]));
        order.extend(gone);
        for (slot, &k) in order.iter().enumerate() {
            let mut at = 0;
            for &r in &blocks[slot] {
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
                live: live_runs(m, sc),
                terms: (0..sc.w).map(|w| terminate_bits(m, sc, w)).collect(),
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
            for run in &self.live {
                let blocks: Vec<Vec<(u32, u32)>> =
                    run.iter().map(|&w| self.wg_fields[w].clone()).collect();
                let terms: Vec<Vec<u32>> = run.iter().map(|&w| self.terms[w].clone()).collect();
                sort_live(s, &blocks, &terms);
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

    /// Calls `f` with every program of `programs` that parses under
    /// every model of `models` that builds, with the name of both, the
    /// program, the model and its kernel (with every reduction).
    fn each_kernel(
        programs: Vec<(String, String)>,
        models: &[&str],
        mut f: impl FnMut(&str, &Program, &ScopedModel, &Kernel),
    ) {
        for (name, src) in programs {
            let Ok(p) = progress_litmus::kernel::litmus::parse(&src) else {
                continue;
            };
            for m in models {
                let model = ScopedModel::parse(m).unwrap();
                if let Ok(k) = Kernel::new(&p, &model, Reductions::ALL) {
                    f(&format!("{name} under {m}"), &p, &model, &k);
                }
            }
        }
    }

    /// Compares the two canonical forms, and the form made after the
    /// canonical state a successor comes from, on the successors (as they
    /// are, and with random bits flipped) along random walks of the
    /// product up to symmetry; the number of states compared and of those
    /// reordered.
    fn compare(k: &Kernel, name: &str, rng: &mut Rng) -> (usize, usize) {
        let sym = k.symmetry.as_ref().unwrap();
        let reference = Reference::new(&k.machine, &k.scopes);
        let bits = k.scopes.end as usize;
        let (mut compared, mut moved) = (0, 0);
        let mut out = Vec::new();
        for _ in 0..8 {
            let mut s: [u64; MAX_WORDS] = k.initial();
            sym.canonicalize(&mut s);
            for _ in 0..60 {
                out.clear();
                if k.successors_with(&s, &mut out, false).is_err() || out.is_empty() {
                    break;
                }
                for &(mv, t) in &out {
                    let mut flipped = t;
                    for (i, w) in flipped.iter_mut().enumerate().take(bits.div_ceil(64)) {
                        let keep = (bits - 64 * i).min(64);
                        let mask = if keep == 64 { !0 } else { (1 << keep) - 1 };
                        if rng.below(4) == 0 {
                            *w ^= rng.next() & rng.next() & mask;
                        }
                    }
                    if mv.is_step() {
                        let (mut a, mut c) = (t, t);
                        sym.canonicalize(&mut a);
                        sym.canonicalize_after_step(&s, &mut c);
                        assert_eq!(a, c, "{name}: step {mv:?} to {t:x?} after {s:x?}");
                    }
                    for u in [t, flipped] {
                        let (mut a, mut b, mut c) = (u, u, u);
                        sym.canonicalize(&mut a);
                        reference.canonicalize(&mut b);
                        assert_eq!(a, b, "{name}: from {u:x?}");
                        sym.canonicalize_after(&s, &mut c);
                        assert_eq!(a, c, "{name}: from {u:x?} after {s:x?}");
                        compared += 1;
                        moved += usize::from(a != u);
                    }
                }
                // On from a canonical state ([`Symmetry::canonicalize_after`]).
                s = out[rng.below(out.len())].1;
                sym.canonicalize(&mut s);
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
            "HSA",
            "HSA_OBE_STRONG",
            "HSA, workgroup=obe, subgroup=fair",
            "LOBE",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut kernels, mut compared, mut moved) = (0, 0, 0);
        let (mut lanes, mut subgroups, mut live) = (0, 0, 0);
        each_kernel(programs(), &models, |name, _, _, k| {
            let Some(sym) = &k.symmetry else { return };
            let r = Reference::new(&k.machine, &k.scopes);
            lanes += usize::from(!r.lane_sgs.is_empty());
            live += usize::from(!r.live.is_empty());
            subgroups += usize::from(!r.sg_classes.is_empty());
            assert_eq!(
                sym.permutes_lanes(),
                !r.lane_sgs.is_empty() || !r.sg_classes.is_empty()
            );
            let (c, mv) = compare(k, name, &mut rng);
            kernels += 1;
            compared += c;
            moved += mv;
        });
        assert!(kernels > 300, "{kernels} kernels");
        assert!(
            lanes > 50 && subgroups > 50 && live > 50,
            "{lanes} lanes, {subgroups} subgroups, {live} in live order"
        );
        assert!(
            moved * 4 > compared,
            "{moved} of {compared} states reordered"
        );
    }

    /// Workgroups in live order keep every verdict: the idioms and
    /// launches of them with more workgroups, under HSA, HSA+OBE and
    /// LOBE (and a scoped one), weak and strong, with every reduction
    /// and with all but symmetry, give the same verdicts and deadlocks,
    /// and the products with a run in live order mostly fewer states.
    #[test]
    fn workgroups_in_live_order_keep_the_verdicts() {
        use crate::kernel::{decide_both, Options};
        let models = ["HSA", "HSA_OBE", "LOBE", "LOBE, workgroup=hsa"];
        let all = Options {
            max_states: 1 << 20,
            reductions: Reductions::ALL,
        };
        let no_symmetry = Options {
            reductions: Reductions {
                symmetry: false,
                ..Reductions::ALL
            },
            ..all
        };
        let (mut runs, mut fewer, mut failing) = (0, 0, 0);
        let launches: Vec<_> = programs()
            .into_iter()
            .filter(|(n, _)| n.contains("launch 0."))
            .collect();
        each_kernel(launches, &models, |name, p, model, k| {
            if live_runs(&k.machine, &k.scopes).is_empty() {
                return;
            }
            let (Ok(a), Ok(b)) = (
                decide_both(p, model, all),
                decide_both(p, model, no_symmetry),
            ) else {
                return;
            };
            for (x, y) in [(&a.0, &b.0), (&a.1, &b.1)] {
                assert_eq!((x.verdict, x.deadlock), (y.verdict, y.deadlock), "{name}");
                failing += usize::from(!x.verdict.passes());
            }
            runs += 1;
            fewer += usize::from(a.0.states < b.0.states);
        });
        assert!(
            runs > 20 && fewer * 2 > runs && failing > 10,
            "{runs} runs, {fewer} fewer, {failing} failing"
        );
    }

    /// `n` blocks of fields of widths `widths` from `at`, `gap` bits
    /// apart, each field `skip` bits after the last.
    fn layout(n: u32, at: u32, widths: &[u32], skip: u32, gap: u32) -> Vec<Vec<(u32, u32)>> {
        let mut o = at;
        (0..n)
            .map(|_| {
                let b = widths
                    .iter()
                    .map(|&w| {
                        let f = (o, w);
                        o += w + skip;
                        f
                    })
                    .collect();
                o += gap;
                b
            })
            .collect()
    }

    /// Groups whose columns are read at once (across words or not) or
    /// piece by piece, with wide fields cut and keys of several words,
    /// against the first implementation on random states with equal
    /// prefixes.
    #[test]
    fn groups_sort_as_the_first_implementation() {
        let mut uneven = layout(3, 5, &[3, 7, 2], 0, 9);
        uneven[1] = vec![(200, 3), (210, 7), (203, 2)];
        let layouts = [
            layout(4, 0, &[32, 32], 0, 0),
            layout(4, 7, &[32, 32], 0, 3),
            layout(3, 13, &[40, 30, 1], 0, 1),
            layout(16, 3, &[1, 1, 1], 0, 0),
            layout(5, 50, &[4, 2], 1, 2),
            layout(8, 60, &[5, 3], 2, 0),
            layout(3, 1, &[64, 63, 2], 0, 5),
            layout(2, 5, &[40, 3, 1], 0, 7),
            layout(2, 58, &[4, 4, 2], 1, 0),
            uneven,
        ];
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut moved = 0;
        for blocks in &layouts {
            let g = Group::new(blocks);
            let pieces: Vec<Vec<(u32, u32)>> = blocks.iter().map(|b| pieces(b)).collect();
            for _ in 0..2000 {
                let mut s = [0u64; MAX_WORDS];
                s.iter_mut().for_each(|w| *w = rng.next());
                // Equal prefixes: some blocks copy the first pieces of another.
                for b in 0..blocks.len() {
                    if rng.below(2) == 0 {
                        let from = rng.below(blocks.len());
                        let len = rng.below(pieces[b].len() + 1);
                        for (&(to, c), &(at, _)) in pieces[b].iter().zip(&pieces[from]).take(len) {
                            let v = get_bits(&s, at, c);
                            set_bits(&mut s, to, c, v);
                        }
                    }
                }
                let (mut a, mut r) = (s, s);
                g.canonicalize(&mut a);
                sort_blocks(&mut r, blocks);
                assert_eq!(a, r, "{blocks:?} from {s:x?}");
                moved += usize::from(a != s);
            }
        }
        assert!(moved > 8000, "{moved} reordered");
    }
}
