//! One state space per test, shared by all eleven models.
//!
//! SPEC §3 defines each verdict on the product of the program with one
//! model's fair set F. Building six products per test (one per base model)
//! was most of the oracle's time, yet every F is a function of something
//! smaller than the path that led to a state. Write T for the threads that
//! have signalled Terminate and S for the threads that have taken at least
//! one Step (S contains T: a thread terminates only after reaching END, and
//! every thread has an instruction). Then, by induction on the SPEC §2
//! table (the `fair_set` module is that table):
//!
//! | model   | F                                        |
//! |---------|------------------------------------------|
//! | unfair  | {}                                       |
//! | fair    | all \ T                                  |
//! | HSA     | {min(all \ T)} (or {})                   |
//! | OBE     | S \ T                                    |
//! | HSA+OBE | (S \ T) ∪ {min(all \ T)}                 |
//! | LOBE    | {u ∉ T : u <= max S} ({} while S is {})  |
//!
//! So the states (memory, pcs, T, S \ T) — exactly the weak OBE product —
//! determine F for every model: each model's product space is the image of
//! this one under `state -> (memory, pcs, T, F_model(state))`. That map keeps
//! every transition and its label (thread, Step or Terminate, F before), and
//! every transition of the image lifts to any preimage of its source, so:
//!
//! - a cycle of the image lifts to a cycle here (follow it from a preimage
//!   until a preimage repeats) with the same F and the same stepping
//!   threads, and a closed walk through all edges of an image component
//!   lifts to one component here: the weak and unfair rules give the same
//!   answer on the strongly connected components of this space;
//! - a state here can reach a good transition by fair moves iff its image
//!   can: the strong rule's backward fixpoint gives the same answer here.
//!
//! [`crate::axb::decide`] decides all eleven models in one pass over the space
//! built here; the property tests compare it with the per-model products.
//!
//! The representation is built for throughput: states are packed integers
//! (a `u64` when the test's fields fit, which is every synthesized and
//! published test, else a `u128`), the visited set is an open-addressing
//! table of state ids, and transitions are stored as compressed sparse rows
//! in breadth-first order, since a state's transitions are all generated
//! when it is expanded. Every buffer lives in a [`crate::axb::scratch::Scratch`] that a worker
//! reuses from test to test, so labelling a suite allocates almost nothing
//! per test.

use progress_litmus::axb::space::TooLarge;
use progress_litmus::Test;

/// Spaces with more states than this are large: their buffers are released
/// as soon as a phase is done with them, and batches explore them one at a
/// time (see [`crate::try_verdicts_all`]).
pub const LARGE: usize = 1 << 20;

/// Hard ceiling on `--max-states`: state ids and transition offsets are
/// `u32`, and a state has at most eight transitions.
pub const MAX_STATES_LIMIT: usize = 1 << 28;

/// A packed state: memory fields, then one field per thread (pc code and a
/// "started" bit). Implemented for `u64` and `u128`.
pub trait Word: Copy + Eq + Send + Sync + 'static {
    const ZERO: Self;
    const BITS: u32;
    /// `(self >> shift) & mask`.
    fn field(self, shift: u32, mask: u32) -> u32;
    /// `self` with the field at `shift` (of `mask`'s width) set to `v`.
    fn with_field(self, shift: u32, mask: u32, v: u32) -> Self;
    /// A well-mixed 64-bit hash (the table uses its high bits).
    fn hash(self) -> u64;
}

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

impl Word for u64 {
    const ZERO: u64 = 0;
    const BITS: u32 = 64;
    #[inline(always)]
    fn field(self, shift: u32, mask: u32) -> u32 {
        (self >> shift) as u32 & mask
    }
    #[inline(always)]
    fn with_field(self, shift: u32, mask: u32, v: u32) -> u64 {
        (self & !((mask as u64) << shift)) | ((v as u64) << shift)
    }
    #[inline(always)]
    fn hash(self) -> u64 {
        // Fold the high half in so that keys differing only there spread.
        (self ^ (self >> 29)).wrapping_mul(MUL)
    }
}

impl Word for u128 {
    const ZERO: u128 = 0;
    const BITS: u32 = 128;
    #[inline(always)]
    fn field(self, shift: u32, mask: u32) -> u32 {
        (self >> shift) as u32 & mask
    }
    #[inline(always)]
    fn with_field(self, shift: u32, mask: u32, v: u32) -> u128 {
        (self & !((mask as u128) << shift)) | ((v as u128) << shift)
    }
    #[inline(always)]
    fn hash(self) -> u64 {
        let lo = self as u64;
        let hi = (self >> 64) as u64;
        (lo ^ hi.wrapping_mul(MUL).rotate_left(31)).hash()
    }
}

/// One instruction, compiled to field operations.
#[derive(Clone, Copy, Debug, Default)]
struct Op {
    mem_shift: u32,
    check: u32,
    /// The value stored, if the instruction exchanges.
    exch: Option<u32>,
    /// The pc when the comparison holds.
    jump: u32,
}

/// How a test's states are packed.
///
/// Memory: location `l` in bits `l * vbits ..`, `vbits` wide (enough for the
/// largest value the test stores; memory starts at 0). Thread `t`: a field
/// of `pbits + 1` bits after the memory; its low `pbits` hold the pc code
/// (`0..len` an instruction, `len` END, `len + 1` terminated) and its top
/// bit says whether `t` has started and not terminated (`t ∈ S \ T`).
#[derive(Clone, Debug)]
pub struct Layout {
    n: usize,
    len: [u32; 8],
    thread_shift: [u32; 8],
    pc_mask: u32,
    field_mask: u32,
    started: u32,
    val_mask: u32,
    /// `ops[t * 16 + pc]`.
    ops: Vec<Op>,
    bits: u32,
}

impl Layout {
    /// The layout of a valid test (see [`Test::validate`]).
    pub fn new(test: &Test) -> Layout {
        let mut l = Layout {
            n: 0,
            len: [0; 8],
            thread_shift: [0; 8],
            pc_mask: 0,
            field_mask: 0,
            started: 0,
            val_mask: 0,
            ops: Vec::new(),
            bits: 0,
        };
        l.set(test);
        l
    }

    /// Makes `self` the layout of `test`, reusing its memory.
    pub fn set(&mut self, test: &Test) {
        let n = test.threads.len();
        assert!((1..=8).contains(&n), "a valid test has 1 to 8 threads");
        let (mut locs, mut max_val, mut max_len) = (1u32, 0u32, 0u32);
        for th in &test.threads {
            max_len = max_len.max(th.len() as u32);
            for i in th {
                locs = locs.max(i.loc as u32 + 1);
                max_val = max_val.max(i.exch.unwrap_or(0) as u32);
            }
        }
        let vbits = (u32::BITS - max_val.leading_zeros()).max(1);
        // Codes 0..=max_len + 1.
        let pbits = u32::BITS - (max_len + 1).leading_zeros();
        self.ops.clear();
        self.ops.resize(n * 16, Op::default());
        for (t, th) in test.threads.iter().enumerate() {
            self.len[t] = th.len() as u32;
            self.thread_shift[t] = locs * vbits + t as u32 * (pbits + 1);
            for (pc, i) in th.iter().enumerate() {
                self.ops[t * 16 + pc] = Op {
                    mem_shift: i.loc as u32 * vbits,
                    check: i.check as u32,
                    exch: i.exch.map(u32::from),
                    jump: i.jump.pc(th.len()) as u32,
                };
            }
        }
        self.n = n;
        self.pc_mask = (1 << pbits) - 1;
        self.field_mask = (1 << (pbits + 1)) - 1;
        self.started = 1 << pbits;
        self.val_mask = (1 << vbits) - 1;
        self.bits = locs * vbits + n as u32 * (pbits + 1);
    }

    /// Whether states fit in a `u64`.
    pub fn fits_u64(&self) -> bool {
        self.bits <= 64
    }

    pub fn num_threads(&self) -> usize {
        self.n
    }

    /// The transitions out of `k`, whose T and S \ T are in `info` (see
    /// [`Info`]): `emit(label, next, next_info)` in thread order.
    #[inline(always)]
    fn successors<W: Word>(&self, k: W, info: Info, mut emit: impl FnMut(u8, W, Info)) {
        for t in 0..self.n {
            let bit = 1u8 << t;
            if info.term() & bit != 0 {
                continue;
            }
            let shift = self.thread_shift[t];
            let pc = k.field(shift, self.pc_mask);
            if pc == self.len[t] {
                // At END: Terminate. The field becomes "terminated, not
                // started" (S \ T loses t).
                let next = k.with_field(shift, self.field_mask, self.len[t] + 1);
                emit(
                    label(t, false),
                    next,
                    Info::new(info.term() | bit, info.started() & !bit),
                );
            } else {
                let op = self.ops[t * 16 + pc as usize];
                let old = k.field(op.mem_shift, self.val_mask);
                let mut next = k;
                if let Some(x) = op.exch {
                    next = next.with_field(op.mem_shift, self.val_mask, x);
                }
                let new_pc = if old == op.check { op.jump } else { pc + 1 };
                next = next.with_field(shift, self.field_mask, new_pc | self.started);
                emit(
                    label(t, true),
                    next,
                    Info::new(info.term(), info.started() | bit),
                );
            }
        }
    }
}

/// A transition label: the thread in bits 0..3, bit 3 set for a Step.
#[inline(always)]
pub fn label(thread: usize, step: bool) -> u8 {
    thread as u8 | (step as u8) << 3
}

/// What the verdict rules need to know of a state: T (the threads that have
/// signalled Terminate) and S \ T (those that have started and not
/// terminated), one byte each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Info(u16);

impl Info {
    #[inline(always)]
    pub fn new(term: u8, started: u8) -> Info {
        Info(term as u16 | (started as u16) << 8)
    }
    #[inline(always)]
    pub fn term(self) -> u8 {
        self.0 as u8
    }
    /// S \ T.
    #[inline(always)]
    pub fn started(self) -> u8 {
        (self.0 >> 8) as u8
    }
}

/// The visited set: open addressing with linear probing over state ids
/// (`id + 1`, 0 for an empty slot), at most half full. Keys live in the
/// state vector, so a slot is four bytes.
#[derive(Default)]
struct Table {
    slots: Vec<u32>,
    bits: u32,
    len: usize,
}

impl Table {
    fn reset(&mut self, bits: u32) {
        self.bits = bits;
        self.len = 0;
        self.slots.clear();
        self.slots.resize(1 << bits, 0);
    }

    #[inline(always)]
    fn slot_of(&self, h: u64) -> usize {
        (h >> (64 - self.bits)) as usize
    }

    /// The id of `k`, or the slot where it goes.
    #[inline(always)]
    fn find<W: Word>(&self, k: W, states: &[W]) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(k.hash());
        loop {
            let s = self.slots[i];
            if s == 0 {
                return Err(i);
            }
            if states[s as usize - 1] == k {
                return Ok(s - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// Records `id` in `slot` (from [`Table::find`]), growing the table
    /// when it gets half full.
    #[inline(always)]
    fn insert<W: Word>(&mut self, slot: usize, id: u32, states: &[W]) {
        self.slots[slot] = id + 1;
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow(states);
        }
    }

    #[cold]
    fn grow<W: Word>(&mut self, states: &[W]) {
        let bits = self.bits + 1;
        self.reset(bits);
        let mask = self.slots.len() - 1;
        for (id, &k) in states.iter().enumerate() {
            let mut i = self.slot_of(k.hash());
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = id as u32 + 1;
        }
        self.len = states.len();
    }
}

/// The reachable shared space of one test, as compressed sparse rows.
///
/// State 0 is the start; states are numbered in breadth-first order and the
/// transitions of state `s` are `succ[start[s]..start[s + 1]]` with labels
/// `labels[..]` (see [`label`]), in thread order.
#[derive(Default, Debug)]
pub struct Space {
    pub n: usize,
    pub info: Vec<Info>,
    pub start: Vec<u32>,
    pub succ: Vec<u32>,
    pub labels: Vec<u8>,
}

impl Space {
    pub fn num_states(&self) -> usize {
        self.info.len()
    }

    pub fn num_transitions(&self) -> usize {
        self.succ.len()
    }

    /// The transitions of `s`: `(target, label)`.
    #[inline(always)]
    pub fn edges(&self, s: usize) -> std::ops::Range<usize> {
        self.start[s] as usize..self.start[s + 1] as usize
    }

    fn clear(&mut self) {
        self.info.clear();
        self.start.clear();
        self.succ.clear();
        self.labels.clear();
    }
}

/// The explorer's buffers (layout, visited table, packed keys), reused from
/// test to test by one worker; the space itself and the verdict rules'
/// buffers live beside them in a [`crate::axb::scratch::Scratch`].
#[derive(Default)]
pub struct Builder {
    layout: Option<Layout>,
    table: Table,
    keys64: Vec<u64>,
    keys128: Vec<u128>,
}

impl Builder {
    /// Builds the shared space of `test` into `space`, giving up once it
    /// has more than `max_states` states.
    pub fn build(
        &mut self,
        test: &Test,
        max_states: usize,
        space: &mut Space,
    ) -> Result<(), TooLarge> {
        let layout = match &mut self.layout {
            Some(l) => {
                l.set(test);
                l
            }
            None => self.layout.insert(Layout::new(test)),
        };
        let layout = &*layout;
        let max_states = max_states.min(MAX_STATES_LIMIT);
        let r = if layout.fits_u64() {
            let mut keys = std::mem::take(&mut self.keys64);
            let r = explore(layout, max_states, &mut keys, &mut self.table, space);
            self.keys64 = keys;
            r
        } else {
            let mut keys = std::mem::take(&mut self.keys128);
            let r = explore(layout, max_states, &mut keys, &mut self.table, space);
            self.keys128 = keys;
            r
        };
        if space.num_states() > LARGE {
            // The verdict rules need only the rows and the state info: give
            // the keys and the visited table back before they run.
            self.keys64 = Vec::new();
            self.keys128 = Vec::new();
            self.table = Table::default();
        }
        r
    }
}

/// Breadth first from the start state: states are expanded in id order, so
/// the rows of the transition table are written in order.
fn explore<W: Word>(
    layout: &Layout,
    max_states: usize,
    keys: &mut Vec<W>,
    table: &mut Table,
    space: &mut Space,
) -> Result<(), TooLarge> {
    keys.clear();
    space.clear();
    space.n = layout.n;
    table.reset(8);
    let slot = table.find(W::ZERO, keys).unwrap_err();
    keys.push(W::ZERO);
    space.info.push(Info::default());
    table.insert(slot, 0, keys);
    let mut too_large = false;
    let mut s = 0;
    while s < keys.len() {
        space.start.push(space.succ.len() as u32);
        let (k, info) = (keys[s], space.info[s]);
        layout.successors(k, info, |l, next, next_info| {
            let id = match table.find(next, keys) {
                Ok(id) => id,
                Err(slot) => {
                    if keys.len() >= max_states {
                        too_large = true;
                        return;
                    }
                    let id = keys.len() as u32;
                    keys.push(next);
                    space.info.push(next_info);
                    table.insert(slot, id, keys);
                    id
                }
            };
            space.succ.push(id);
            space.labels.push(l);
        });
        if too_large {
            return Err(TooLarge { bound: max_states });
        }
        s += 1;
    }
    space.start.push(space.succ.len() as u32);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use progress_litmus::axb::text;

    #[test]
    fn producer_consumer_shared_space() {
        // T0 spins until T1 stores 1. States: start; T0 spun once (started,
        // same memory and pc); T1 stored; both orders after; Terminates.
        let t =
            text::parse("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)\n").unwrap();
        let (mut b, mut sp) = (Builder::default(), Space::default());
        b.build(&t, 1000, &mut sp).unwrap();
        let sp = &sp;
        // Every state has one transition per thread that has not terminated.
        for v in 0..sp.num_states() {
            let live = (!sp.info[v].term() & 0b11).count_ones() as usize;
            assert_eq!(sp.edges(v).len(), live);
        }
        // The spin is a self-loop once T0 has started.
        let spin = (0..sp.num_states())
            .find(|&v| sp.edges(v).any(|e| sp.succ[e] as usize == v))
            .unwrap();
        assert_eq!(sp.info[spin].started(), 0b01);
        assert_eq!(
            b.build(&t, 2, &mut Space::default()).err(),
            Some(TooLarge { bound: 2 })
        );
    }

    /// The u128 packing builds the same space as the u64 one, state for
    /// state and transition for transition, on random programs.
    #[test]
    fn both_packings_build_the_same_space() {
        use progress_litmus::{Instr, Target};
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let (mut table, mut k64, mut k128) = (Table::default(), Vec::new(), Vec::new());
        for _ in 0..500 {
            let threads = (0..1 + rand(4))
                .map(|_| {
                    let len = 1 + rand(5) as usize;
                    (0..len)
                        .map(|_| Instr {
                            loc: rand(4) as u8,
                            check: rand(5) as u8,
                            jump: Target::from_pc(rand(len as u64 + 1) as usize, len),
                            exch: (rand(3) > 0).then(|| rand(5) as u8),
                        })
                        .collect()
                })
                .collect();
            let test = Test::new(threads).unwrap();
            let layout = Layout::new(&test);
            assert!(layout.fits_u64());
            let (mut a, mut b) = (Space::default(), Space::default());
            explore::<u64>(&layout, usize::MAX, &mut k64, &mut table, &mut a).unwrap();
            explore::<u128>(&layout, usize::MAX, &mut k128, &mut table, &mut b).unwrap();
            assert_eq!(a.info, b.info, "{test:?}");
            assert_eq!(a.start, b.start);
            assert_eq!(a.succ, b.succ);
            assert_eq!(a.labels, b.labels);
            assert!(k64.iter().zip(&k128).all(|(&x, &y)| x as u128 == y));
        }
    }

    #[test]
    fn wide_tests_use_u128_keys() {
        // 8 threads of 14 instructions, 8 locations, values up to 15: 72 bits.
        let mut src = String::new();
        for t in 0..8 {
            src.push_str(&format!("THREAD{t}\n"));
            for i in 0..14 {
                src.push_str(&format!(
                    "atomic_store({},{})\n",
                    (t + i) % 8,
                    15 - (i % 16)
                ));
            }
        }
        let t = text::parse(&src).unwrap();
        let layout = Layout::new(&t);
        assert!(!layout.fits_u64());
        let (mut b, mut space) = (Builder::default(), Space::default());
        assert_eq!(
            b.build(&t, 5000, &mut space).err(),
            Some(TooLarge { bound: 5000 })
        );
    }
}
