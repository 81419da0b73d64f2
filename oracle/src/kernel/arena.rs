//! The lean product's tables (issue 24 item 2): states deduplicated with
//! an open-addressing index of 32-bit ids ([`super::words`]: collapsed
//! into pairs of half ids when a state has three words or more), and
//! transitions in compressed rows of variable-length bytes
//! ([`super::rows`]).
//!
//! A state is stored once, at its id. The transitions of state `n` are
//! row `n`: exploration is breadth first and expands states in id order,
//! so each state's transitions are appended in one run. An edge word is
//! the target id, the actor or invocation (4 bits: at most 16
//! invocations) and whether it is a Terminate. The verdict rules need
//! nothing more of a move; witnesses, which need the instruction, are
//! found on the full product ([`super::product`]).
//!
//! Every table grows by doubling and is charged to a [`Meter`] by
//! capacity before it grows, as the full product is.

use super::product::Move;
use super::rows::{Out, Rows};
use super::words::{hash, Words, LARGE};
use progress_litmus::axb::space::{Exceeded, Meter, OutOfMemory, TooLarge};
use progress_litmus::kernel::machine::Packed;
use std::marker::PhantomData;

use super::words::ID_MASK;
pub use super::words::{ID_BITS, MAX_IDS};

/// The fewest words of a state [`StateTable::new`] collapses. A state of
/// two words takes 16 bytes flat; collapsed, its 8-byte pair and its
/// share of the halves, which two-word states share little (the 5
/// workgroup discovery barrier: 24.8 bytes a state in the table
/// collapsed, 21.3 flat), for three look-ups where one does: flat, the
/// seqlock and the two-word large launches run 10-12% faster
/// (docs/KERNEL.md §8.6).
pub const COLLAPSE_FROM: usize = 3;

/// Packed states with an index from state to id: the states themselves
/// ([`Words`] of the state's width), or, for states of three words or more,
/// collapsed ([`super::words`]): each state as the pair of ids of its
/// halves, the halves in tables of their own.
pub struct StateTable<S> {
    /// The states, or their pairs of half ids (one word each, the left
    /// id above the right one); a state's id is its id here.
    roots: Words,
    /// The tables of the left (`..split`) and right halves, if collapsed.
    halves: Option<(Words, Words)>,
    split: usize,
    /// Index slots from which look-ups are requested ahead
    /// ([`LARGE`]; the tests lower it).
    ahead_from: usize,
    _s: PhantomData<S>,
}

impl<S: Packed> StateTable<S> {
    /// A table charging `extra` bytes a state of capacity for the
    /// caller's tables; collapsed when a state has [`COLLAPSE_FROM`]
    /// words or more.
    pub fn new(extra: usize) -> StateTable<S> {
        StateTable::with_collapse(extra, S::default().as_ref().len() >= COLLAPSE_FROM)
    }

    /// [`StateTable::new`], collapsed or not (the tests compare them).
    pub fn with_collapse(extra: usize, collapse: bool) -> StateTable<S> {
        let w = S::default().as_ref().len();
        let split = w / 2;
        let collapsed = collapse && w >= 2;
        StateTable {
            roots: Words::new(if collapsed { 1 } else { w }, extra),
            halves: collapsed.then(|| (Words::new(split, 0), Words::new(w - split, 0))),
            split,
            ahead_from: LARGE,
            _s: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.roots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The state of id `id`.
    #[inline]
    pub fn state(&self, id: usize) -> S {
        let mut s = S::default();
        let t = s.as_mut();
        // The lengths copied are the state type's (`split` is half its
        // words), known at compile time: the copies are a few moves, not
        // calls to memcpy (3.5% of the 4 x 3 look-back's time).
        let half = t.len() / 2;
        debug_assert_eq!(half, self.split);
        match &self.halves {
            None => t.copy_from_slice(self.roots.get(id as u32)),
            Some((l, r)) => {
                let x = self.roots.get(id as u32)[0];
                let (a, b) = t.split_at_mut(half);
                a.copy_from_slice(l.get((x >> 32) as u32));
                b.copy_from_slice(r.get(x as u32));
            }
        }
        s
    }

    /// Forgets every state, keeping the tables' capacity.
    pub fn clear(&mut self) {
        self.roots.clear();
        if let Some((l, r)) = &mut self.halves {
            l.clear();
            r.clear();
        }
    }

    /// Gives back what the tables reserved beyond what they hold.
    pub fn shrink(&mut self) {
        self.roots.shrink();
        if let Some((l, r)) = &mut self.halves {
            l.shrink();
            r.shrink();
        }
    }

    /// Bytes of the tables (states or pairs, halves and indexes), by
    /// capacity.
    pub fn bytes(&self) -> usize {
        self.roots.bytes()
            + self
                .halves
                .as_ref()
                .map_or(0, |(l, r)| l.bytes() + r.bytes())
    }

    /// The key of `s` in `roots`, its halves stored if new (within the
    /// meter): the state itself, or the pair of ids in its first word.
    #[inline]
    fn key(&mut self, s: &S, meter: &mut Meter) -> Result<S, Exceeded> {
        self.key_near(s, None, meter)
    }

    /// [`StateTable::key`], given a stored state `near` of id `id` (the
    /// state a successor comes from): a half equal to `near`'s has its
    /// id, without a look-up (a step changes one half of a state or
    /// the other, mostly).
    #[inline]
    fn key_near(
        &mut self,
        s: &S,
        near: Option<(&S, usize)>,
        meter: &mut Meter,
    ) -> Result<S, Exceeded> {
        let Some((l, r)) = &mut self.halves else {
            return Ok(*s);
        };
        let (a, b) = s.as_ref().split_at(self.split);
        let (mut x, mut y) = (None, None);
        if let Some((n, id)) = near {
            let (na, nb) = n.as_ref().split_at(self.split);
            let pair = self.roots.get(id as u32)[0];
            let eq = |u: &[u64], v: &[u64]| u.iter().zip(v).fold(true, |e, (p, q)| e & (p == q));
            x = eq(a, na).then_some((pair >> 32) as u32);
            y = eq(b, nb).then_some(pair as u32);
        }
        let x = match x {
            Some(x) => x,
            None => l.insert(a, hash(a), meter, MAX_IDS)?.0,
        };
        let y = match y {
            Some(y) => y,
            None => r.insert(b, hash(b), meter, MAX_IDS)?.0,
        };
        let mut k = S::default();
        k.as_mut()[0] = (x as u64) << 32 | y as u64;
        Ok(k)
    }

    /// The id of successor `t` of state `n` of id `id`, stored if new,
    /// with the halves' hashes of `plan` ([`StateTable::prefetch_batch`]),
    /// within `max_states` and the meter. (It returns the id, not the
    /// key: a key returned in a `Result` went through the stack in
    /// pieces that stalled the loads after them, 3% of a product.)
    #[inline]
    fn insert_planned(
        &mut self,
        t: &S,
        (n, id): (&S, usize),
        plan: &Plan,
        meter: &mut Meter,
        max_states: usize,
    ) -> Result<u32, Exceeded> {
        let Some((l, r)) = &mut self.halves else {
            debug_assert_eq!(plan.left, hash(t.as_ref()));
            return Ok(self
                .roots
                .insert(t.as_ref(), plan.left, meter, max_states)?
                .0);
        };
        debug_assert!(plan_is_for(plan, t, n, self.split));
        let (a, b) = t.as_ref().split_at(self.split);
        let pair = self.roots.get(id as u32)[0];
        // A half found while planning keeps its id (ids never change);
        // one not found then may have been stored since, by an earlier
        // successor: it is looked up again.
        let x = match (plan.same_left, plan.left_id) {
            (true, _) => (pair >> 32) as u32,
            (false, Some(x)) => x,
            (false, None) => l.insert(a, plan.left, meter, MAX_IDS)?.0,
        };
        let y = match (plan.same_right, plan.right_id) {
            (true, _) => pair as u32,
            (false, Some(y)) => y,
            (false, None) => r.insert(b, plan.right, meter, MAX_IDS)?.0,
        };
        let w = [(x as u64) << 32 | y as u64];
        Ok(self.roots.insert(&w, hash(&w), meter, max_states)?.0)
    }

    /// Whether the state index is large enough to request look-ups
    /// ahead ([`LARGE`]).
    #[inline]
    fn is_large(&self) -> bool {
        self.roots.index_len() >= self.ahead_from
    }

    /// Asks for the tuples of state `id`'s halves (a hint).
    fn prefetch_state(&self, id: usize) {
        if !self.is_large() {
            return;
        }
        if let Some((l, r)) = &self.halves {
            let x = self.roots.get(id as u32)[0];
            l.prefetch_id((x >> 32) as u32);
            r.prefetch_id(x as u32);
        }
    }

    /// Plans the look-ups of the successors of batch `b` (its first
    /// state of id `first`) and asks for
    /// what they will read, stage by stage (each stage's reads wait on
    /// the previous stage's requests, all of them in flight at once):
    /// the index slots of the halves that differ from their parent's,
    /// their tuples, then, where both halves are stored already, the
    /// index slot and tuple of the pair, and where one is not, the index
    /// slot of the pair under the id it will most likely get (the next
    /// of its table; a new state's look-up waits on its slot too); only
    /// once the index outgrows
    /// the processor's caches ([`LARGE`]): before, the
    /// requests cost more than the waits. The tables are not changed:
    /// the ids of the halves found are noted in their plans, so that
    /// storing does not look them up again.
    fn prefetch_batch(&self, b: &mut Batch<S>, first: usize) {
        b.plans.clear();
        let mut from = 0;
        for (s, &end) in b.states.iter().zip(&b.ends) {
            let out = &b.out[from..end];
            for (k, (_, t)) in out.iter().enumerate() {
                let p = match same_before(out, k) {
                    Some(e) => Plan {
                        same_as: Some(e as u32),
                        ..Plan::default()
                    },
                    None => self.plan(t, s),
                };
                b.plans.push(p);
            }
            from = end;
        }
        if !self.is_large() {
            return;
        }
        let Some((l, r)) = &self.halves else {
            // Flat: each successor's hash is its plan's `left`.
            for p in b.plans.iter().filter(|p| p.same_as.is_none()) {
                self.roots.prefetch_tuple(p.left);
            }
            return;
        };
        for p in b.plans.iter().filter(|p| p.same_as.is_none()) {
            if !p.same_left {
                l.prefetch_tuple(p.left);
            }
            if !p.same_right {
                r.prefetch_tuple(p.right);
            }
        }
        let mut keys: Vec<u64> = Vec::with_capacity(b.plans.len());
        let (mut new_l, mut new_r) = (Vec::new(), Vec::new());
        let mut from = 0;
        for (j, &end) in b.ends.iter().enumerate() {
            let pair = self.roots.get((first + j) as u32)[0];
            for ((_, t), p) in b.out[from..end].iter().zip(&mut b.plans[from..end]) {
                if p.same_as.is_some() {
                    continue;
                }
                let (a, c) = t.as_ref().split_at(self.split);
                let x = if p.same_left {
                    Some((pair >> 32) as u32)
                } else {
                    p.left_id = l.find(a, p.left);
                    p.left_id
                };
                let y = if p.same_right {
                    Some(pair as u32)
                } else {
                    p.right_id = r.find(c, p.right);
                    p.right_id
                };
                if let (Some(x), Some(y)) = (x, y) {
                    let h = hash(&[(x as u64) << 32 | y as u64]);
                    self.roots.prefetch(h);
                    keys.push(h);
                } else {
                    // A half not stored yet will most likely get the next
                    // id of its table (unless an earlier successor of the
                    // batch brings the same half): the state's index slot
                    // is asked for under the ids it will then have. A
                    // wrong guess costs one useless request.
                    let x = x.unwrap_or_else(|| guess(&mut new_l, p.left, l.len()));
                    let y = y.unwrap_or_else(|| guess(&mut new_r, p.right, r.len()));
                    self.roots.prefetch(hash(&[(x as u64) << 32 | y as u64]));
                }
            }
            from = end;
        }
        for &h in &keys {
            self.roots.prefetch_tuple(h);
        }
    }

    /// The look-ups of successor `t` of `s`: which halves are `s`'s, the
    /// hashes of the others, whose index slots are asked for.
    fn plan(&self, t: &S, s: &S) -> Plan {
        let Some((l, r)) = &self.halves else {
            // Flat: the state's hash, and its slot asked for.
            let h = hash(t.as_ref());
            if self.is_large() {
                self.roots.prefetch(h);
            }
            return Plan {
                left: h,
                ..Plan::default()
            };
        };
        let (a, c) = t.as_ref().split_at(self.split);
        let (na, nc) = s.as_ref().split_at(self.split);
        let eq = |u: &[u64], v: &[u64]| u.iter().zip(v).fold(true, |e, (p, q)| e & (p == q));
        let mut p = Plan {
            same_left: eq(a, na),
            same_right: eq(c, nc),
            ..Plan::default()
        };
        let ask = self.is_large();
        if !p.same_left {
            p.left = hash(a);
            if ask {
                l.prefetch(p.left);
            }
        }
        if !p.same_right {
            p.right = hash(c);
            if ask {
                r.prefetch(p.right);
            }
        }
        p
    }

    /// The words of a key that `roots` holds.
    #[inline]
    fn root<'a>(&self, k: &'a S) -> &'a [u64] {
        &k.as_ref()[..self.roots.width()]
    }

    /// The id of `s`, if stored.
    pub fn get(&self, s: &S) -> Option<u32> {
        let k = match &self.halves {
            None => *s,
            Some((l, r)) => {
                let (a, b) = s.as_ref().split_at(self.split);
                let x = l.find(a, hash(a))?;
                let y = r.find(b, hash(b))?;
                let mut k = S::default();
                k.as_mut()[0] = (x as u64) << 32 | y as u64;
                k
            }
        };
        let w = self.root(&k);
        self.roots.find(w, hash(w))
    }

    /// The id of `s`, stored if new (then `true`), within `max_states`
    /// and the meter.
    pub fn insert(
        &mut self,
        s: S,
        meter: &mut Meter,
        max_states: usize,
    ) -> Result<(u32, bool), Exceeded> {
        let k = self.key(&s, meter)?;
        let w = self.root(&k);
        self.roots.insert(w, hash(w), meter, max_states)
    }
}

/// The id a half of hash `h` not stored in its table (of `len` halves)
/// will most likely get: that of an earlier successor of the batch whose
/// half has the same hash, else the next after theirs (`new`: their
/// hashes, in order).
fn guess(new: &mut Vec<u64>, h: u64, len: usize) -> u32 {
    let at = new.iter().position(|&x| x == h).unwrap_or_else(|| {
        new.push(h);
        new.len() - 1
    });
    (len + at) as u32
}

/// Whether `plan` is [`StateTable::plan`]'s for successor `t` of `n`
/// (halves split at `split`).
fn plan_is_for<S: Packed>(plan: &Plan, t: &S, n: &S, split: usize) -> bool {
    let (a, c) = t.as_ref().split_at(split);
    let (na, nc) = n.as_ref().split_at(split);
    (plan.same_left == (a == na))
        && (plan.same_right == (c == nc))
        && (plan.same_left || plan.left == hash(a))
        && (plan.same_right || plan.right == hash(c))
}

/// An edge word: target id, mover (4 bits), Terminate (1 bit).
pub fn edge(target: u32, mv: Move) -> u32 {
    target | (mv.kind() as u32) << ID_BITS
}

/// The target id of an edge word.
pub fn target(e: u32) -> usize {
    (e & ID_MASK) as usize
}

/// The move kind of an edge word ([`Move::kind`]): the index into
/// [`super::product::Kernel::kind_masks`].
pub fn kind(e: u32) -> usize {
    (e >> ID_BITS) as usize
}

/// Whether an edge word is a step (not a Terminate).
pub fn is_step(e: u32) -> bool {
    e >> 31 == 0
}

/// A graph of packed states with compressed rows of edge words
/// ([`Rows`]: one row a state, in id order).
pub struct Graph<S> {
    pub table: StateTable<S>,
    pub rows: Rows,
    /// The `choose finitely` jumps explored but not stored (§2.11).
    finite_moves: usize,
}

impl<S: Packed> Graph<S> {
    pub fn new(extra: usize, edge_extra: usize) -> Graph<S> {
        Graph {
            table: StateTable::new(extra),
            rows: Rows::new(edge_extra),
            finite_moves: 0,
        }
    }

    pub fn num_states(&self) -> usize {
        self.table.len()
    }

    /// The stored edges ([`Graph::out`]).
    pub fn num_edges(&self) -> usize {
        self.rows.num_edges()
    }

    /// The transitions explored: the stored edges and the `choose
    /// finitely` jumps left out of the rows.
    pub fn num_transitions(&self) -> usize {
        self.rows.num_edges() + self.finite_moves
    }

    /// The edge words out of state `n`.
    #[inline]
    pub fn out(&self, n: usize) -> Out<'_> {
        self.rows.out(n)
    }

    pub fn state(&self, n: usize) -> S {
        self.table.state(n)
    }

    /// Bytes of the tables (states, index and edge rows), by capacity.
    pub fn bytes(&self) -> usize {
        self.table.bytes() + self.rows.bytes()
    }

    /// Gives back what the tables reserved beyond what they hold, and fits
    /// the indexes to their states: the rules' tables come after.
    pub fn shrink(&mut self) {
        self.table.shrink();
        self.rows.shrink();
    }

    pub fn clear(&mut self) {
        self.table.clear();
        self.rows.clear();
        self.finite_moves = 0;
    }

    /// Explores breadth first from `roots`: `succ(s, emit)` emits each
    /// transition out of `s`. States get ids in the order found.
    ///
    /// States are expanded [`BATCH`] at a time, and the index slots and
    /// tuples their successors will look up are asked for (prefetched)
    /// for the whole batch before any is looked up: a look-up waits on
    /// memory, and one state has too few successors to overlap the waits.
    /// The tables are then changed state by state, successor by
    /// successor, exactly as one state at a time would: the same ids,
    /// and the same bound, budget or fault stops it at the same place.
    pub fn explore<E>(
        &mut self,
        roots: &[S],
        meter: &mut Meter,
        max_states: usize,
        mut succ: impl FnMut(&S, &mut Vec<(Move, S)>) -> Result<(), E>,
    ) -> Result<(), ExploreError<E>> {
        for &r in roots {
            self.table.insert(r, meter, max_states)?;
        }
        let mut b = Batch::default();
        let mut row: Vec<u32> = Vec::new();
        let mut next = 0;
        let mut told = 0;
        while next < self.table.len() {
            // Stored states for the progress line, a batch at a time.
            progress_litmus::progress::stored((self.table.len() - told) as u64);
            told = self.table.len();
            let end = (next + BATCH).min(self.table.len());
            let fault = self.expand(next..end, &mut b, &mut succ);
            self.table.prefetch_batch(&mut b, next);
            for j in 0..b.states.len() {
                self.store(next + j, &b, j, meter, max_states, &mut row)?;
            }
            if let Some(e) = fault {
                self.rows.begin(next + b.states.len(), meter)?;
                return Err(ExploreError::Succ(e));
            }
            next = end;
        }
        Ok(())
    }

    /// Expands the states of `ids` into `b` (their states, successors
    /// and where each one's successors end), up to the first whose
    /// successors fail: that failure.
    fn expand<E>(
        &self,
        ids: std::ops::Range<usize>,
        b: &mut Batch<S>,
        succ: &mut impl FnMut(&S, &mut Vec<(Move, S)>) -> Result<(), E>,
    ) -> Option<E> {
        b.states.clear();
        b.out.clear();
        b.ends.clear();
        for id in ids.clone() {
            self.table.prefetch_state(id);
        }
        let mut out = std::mem::take(&mut b.one);
        let mut fault = None;
        for id in ids {
            let s = self.table.state(id);
            out.clear();
            if let Err(e) = succ(&s, &mut out) {
                fault = Some(e);
                break;
            }
            b.states.push(s);
            b.out.extend_from_slice(&out);
            b.ends.push(b.out.len());
        }
        b.one = out;
        fault
    }

    /// Stores the successors of the `j`th state of batch `b`, of id `id`,
    /// and its row.
    fn store(
        &mut self,
        id: usize,
        b: &Batch<S>,
        j: usize,
        meter: &mut Meter,
        max_states: usize,
        row: &mut Vec<u32>,
    ) -> Result<(), Exceeded> {
        self.rows.begin(id, meter).map_err(Exceeded::Memory)?;
        let s = &b.states[j];
        let from = if j == 0 { 0 } else { b.ends[j - 1] };
        row.clear();
        for (&(mv, t), plan) in b.out[from..b.ends[j]].iter().zip(&b.plans[from..]) {
            // A successor equal to an earlier one of the same state (under
            // symmetry, interchangeable actors' steps mostly are: 70% of
            // the 2 x 8 mutex's) has its id; a look-up would find the same
            // and change nothing.
            if let Some(e) = plan.same_as {
                row.push(edge(target(row[e as usize]) as u32, mv));
                continue;
            }
            let id = (self.table).insert_planned(&t, (s, id), plan, meter, max_states)?;
            row.push(edge(id, mv));
        }
        // A `choose finitely` jump is explored but not stored: the rules
        // read only rows, and such a step is on no cycle of a run
        // (docs/KERNEL.md §2.11); the fall-through beside it always is.
        let before = row.len();
        let mut k = 0;
        row.retain(|_| {
            k += 1;
            !b.out[from + k - 1].0.is_finite()
        });
        self.finite_moves += before - row.len();
        // Rows ascend by target ([`Rows`]); the rules ignore the order.
        row.sort_unstable_by_key(|&e| target(e));
        for &e in row.iter() {
            if !self.rows.has_room() {
                return Err(Exceeded::States(TooLarge { bound: max_states }));
            }
            self.rows.push(e, meter).map_err(Exceeded::Memory)?;
        }
        self.rows.end(meter).map_err(Exceeded::Memory)
    }
}

/// The first successor before the `k`th of `out` with the same state,
/// among the [`SAME_WINDOW`] before it.
fn same_before<S: PartialEq>(out: &[(Move, S)], k: usize) -> Option<usize> {
    let t = &out[k].1;
    let lo = k.saturating_sub(SAME_WINDOW);
    (lo..k).find(|&e| out[e].1 == *t)
}

/// How many earlier successors of its state a successor is compared
/// with ([`same_before`]): the comparisons grow as the square of a
/// state's successors.
const SAME_WINDOW: usize = 32;

/// States expanded at once by [`Graph::explore`]: enough successors to
/// overlap their look-ups' waits on memory.
pub const BATCH: usize = 32;

/// A batch of expanded states ([`Graph::explore`]).
struct Batch<S> {
    states: Vec<S>,
    /// The successors of every state, one state's after another's.
    out: Vec<(Move, S)>,
    /// Where each state's successors end in `out`.
    ends: Vec<usize>,
    /// Per successor, its look-ups' hashes ([`StateTable::prefetch_batch`]).
    plans: Vec<Plan>,
    /// One state's successors.
    one: Vec<(Move, S)>,
}

impl<S> Default for Batch<S> {
    fn default() -> Self {
        Batch {
            states: Vec::new(),
            out: Vec::new(),
            ends: Vec::new(),
            plans: Vec::new(),
            one: Vec::new(),
        }
    }
}

/// The look-ups of a successor: the hashes of its halves, and whether
/// each is its parent's (then it has the parent's half id); in flat
/// tables, its hash in `left`.
#[derive(Clone, Copy, Default)]
struct Plan {
    left: u64,
    right: u64,
    same_left: bool,
    same_right: bool,
    /// The ids of the halves found stored while planning (large tables
    /// only: [`StateTable::prefetch_batch`]).
    left_id: Option<u32>,
    right_id: Option<u32>,
    /// The earlier successor of the same state with the same state, if
    /// any ([`same_before`], by its place among the state's successors):
    /// then nothing is planned, and storing takes that one's id.
    same_as: Option<u32>,
}

/// Why an exploration stopped: the bound or budget, or the successor
/// function's error.
#[derive(Debug)]
pub enum ExploreError<E> {
    Exceeded(Exceeded),
    Succ(E),
}

impl<E> From<Exceeded> for ExploreError<E> {
    fn from(e: Exceeded) -> Self {
        ExploreError::Exceeded(e)
    }
}

impl<E> From<OutOfMemory> for ExploreError<E> {
    fn from(e: OutOfMemory) -> Self {
        ExploreError::Exceeded(Exceeded::Memory(e))
    }
}

/// A graph in compressed rows as the graph toolkit walks it
/// ([`progress_litmus::graph`]: its strongly connected components).
impl progress_litmus::graph::Successors for Rows {
    fn node_count(&self) -> usize {
        self.num_rows()
    }
    fn successors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        self.out(v).map(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Halves new to their table get its next ids in the order they come,
    /// a half seen earlier in the batch the id guessed for it then.
    #[test]
    fn a_new_half_is_guessed_the_id_it_will_get() {
        let mut new = Vec::new();
        let ids: Vec<u32> = [10, 20, 10, 30, 20]
            .iter()
            .map(|&h| guess(&mut new, h, 5))
            .collect();
        assert_eq!(ids, [5, 6, 5, 7, 6]);
    }

    #[test]
    fn the_table_finds_every_state_it_stored_across_growths() {
        let mut t: StateTable<[u64; 2]> = StateTable::new(0);
        let mut meter = Meter::new(usize::MAX);
        for i in 0..5000u64 {
            let (id, new) = t.insert([i * 7, i ^ 3], &mut meter, 10_000).unwrap();
            assert_eq!((id as u64, new), (i, true));
        }
        for i in 0..5000u64 {
            assert_eq!(t.get(&[i * 7, i ^ 3]), Some(i as u32));
            assert_eq!(
                t.insert([i * 7, i ^ 3], &mut meter, 10_000).unwrap(),
                (i as u32, false)
            );
        }
        assert_eq!(t.get(&[1, 1]), None);
        assert!(matches!(
            t.insert([1, 1], &mut meter, 5000),
            Err(Exceeded::States(_))
        ));
        assert!(t.bytes() <= meter.used());
    }

    /// Explores a synthetic graph of 3-word states (a fault at state
    /// `fault`) under `max_states`, look-ups requested ahead from
    /// `ahead_from` index slots: the states by id, the rows, the error.
    fn explore_synthetic(
        ahead_from: usize,
        max_states: usize,
        fault: u64,
    ) -> (Vec<[u64; 3]>, Vec<Vec<u32>>, Option<String>) {
        explore_synthetic_in(true, ahead_from, max_states, fault)
    }

    /// [`explore_synthetic`] in collapsed or flat tables.
    fn explore_synthetic_in(
        collapse: bool,
        ahead_from: usize,
        max_states: usize,
        fault: u64,
    ) -> (Vec<[u64; 3]>, Vec<Vec<u32>>, Option<String>) {
        let mut g: Graph<[u64; 3]> = Graph::new(0, 0);
        g.table = StateTable::with_collapse(0, collapse);
        g.table.ahead_from = ahead_from;
        let mut meter = Meter::new(usize::MAX);
        let r = g.explore(&[[0, 0, 0]], &mut meter, max_states, |s, out| {
            let [a, b, c] = *s;
            if a * 1000 + b == fault {
                return Err("fault");
            }
            let mut push = |k: u32, t: [u64; 3]| out.push((Move::terminate(k as usize), t));
            push(0, [(a + 1) % 97, b, c]);
            push(1, [a, (b * 3 + 1) % 89, c ^ 1]);
            if a % 3 == 0 {
                push(2, [a, b, (c + 2) % 5]);
            }
            if b % 2 == 0 {
                // The same state as another successor's (planned and
                // stored as that one).
                push(3, [a, (b * 3 + 1) % 89, c ^ 1]);
            }
            Ok(())
        });
        let err = r.err().map(|e| match e {
            ExploreError::Succ(f) => f.to_string(),
            ExploreError::Exceeded(x) => format!("{x:?}"),
        });
        let n = g.rows.num_rows();
        let states = (0..g.num_states()).map(|i| g.state(i)).collect();
        (states, (0..n).map(|i| g.out(i).collect()).collect(), err)
    }

    /// [`explore_synthetic`]'s graph explored one state at a time with a
    /// hash map, up to the fault (no bound): the states by id and rows.
    fn reference_synthetic(fault: u64) -> (Vec<[u64; 3]>, Vec<Vec<u32>>) {
        let mut ids = std::collections::HashMap::new();
        let mut states = vec![[0u64; 3]];
        ids.insert([0u64; 3], 0u32);
        let mut rows = Vec::new();
        for n in 0.. {
            let Some(&[a, b, c]) = states.get(n) else {
                break;
            };
            if a * 1000 + b == fault {
                break;
            }
            let mut succ = vec![(0, [(a + 1) % 97, b, c]), (1, [a, (b * 3 + 1) % 89, c ^ 1])];
            if a % 3 == 0 {
                succ.push((2, [a, b, (c + 2) % 5]));
            }
            if b % 2 == 0 {
                succ.push((3, [a, (b * 3 + 1) % 89, c ^ 1]));
            }
            let mut row: Vec<u32> = succ
                .into_iter()
                .map(|(k, t)| {
                    let id = *ids.entry(t).or_insert_with(|| {
                        states.push(t);
                        states.len() as u32 - 1
                    });
                    edge(id, Move::terminate(k))
                })
                .collect();
            row.sort_unstable_by_key(|&e| target(e));
            rows.push(row);
        }
        (states, rows)
    }

    #[test]
    fn exploring_with_look_ups_ahead_changes_nothing() {
        for fault in [u64::MAX, 40_013] {
            let (states, rows, _) = explore_synthetic(0, 100_000, fault);
            assert_eq!((states, rows), reference_synthetic(fault));
        }
        for (max, fault) in [(100_000, u64::MAX), (3000, u64::MAX), (100_000, 40_013)] {
            let plain = explore_synthetic(usize::MAX, max, fault);
            let ahead = explore_synthetic(0, max, fault);
            assert!(plain.0.len() > 1000);
            assert_eq!(plain, ahead);
            // Flat tables, whose plans carry each successor's hash.
            assert_eq!(explore_synthetic_in(false, usize::MAX, max, fault), plain);
            assert_eq!(explore_synthetic_in(false, 0, max, fault), plain);
        }
        // The bound and the fault stop it.
        assert!(explore_synthetic(0, 3000, u64::MAX)
            .2
            .unwrap()
            .contains("States"));
        assert_eq!(
            explore_synthetic(0, 100_000, 40_013).2.as_deref(),
            Some("fault")
        );
    }

    #[test]
    fn collapsed_and_flat_tables_give_the_same_ids_and_states() {
        // States of three words whose halves repeat: 40 left halves, 25
        // right ones, 200 states.
        let st = |i: u64| [i % 40, (i % 25) * 3, i % 25 + 7];
        let mut meter = Meter::new(usize::MAX);
        let mut flat: StateTable<[u64; 3]> = StateTable::with_collapse(0, false);
        let mut coll: StateTable<[u64; 3]> = StateTable::new(0);
        assert!(flat.halves.is_none() && coll.halves.is_some());
        // Two-word states are stored flat (COLLAPSE_FROM).
        assert!(StateTable::<[u64; 2]>::new(0).halves.is_none());
        for i in 0..1000u64 {
            let a = flat.insert(st(i), &mut meter, 10_000).unwrap();
            let b = coll.insert(st(i), &mut meter, 10_000).unwrap();
            assert_eq!(a, b);
            assert_eq!(coll.state(a.0 as usize), st(i));
        }
        let (l, r) = coll.halves.as_ref().unwrap();
        assert_eq!((l.len(), r.len(), coll.len()), (40, 25, 200));
        // Both halves stored, the pair not: absent.
        assert_eq!(coll.get(&[0, 3, 8]), None);
        assert_eq!(coll.get(&[99, 0, 7]), None);
        coll.shrink();
        flat.shrink();
        for i in 0..1000u64 {
            assert_eq!(coll.get(&st(i)), flat.get(&st(i)));
        }
        for id in 0..200 {
            assert_eq!(coll.state(id), flat.state(id));
        }
        // The collapsed table is the smaller: a word a state and the
        // halves once.
        assert!(coll.bytes() < flat.bytes());
        assert!(coll.bytes() <= meter.used());
    }

    /// 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 3, 4 -> 0.
    fn rows() -> Rows {
        let e = |t: u32| edge(t, Move::terminate(0));
        let mut meter = Meter::new(usize::MAX);
        let mut r = Rows::new(0);
        for (n, targets) in [vec![1], vec![2], vec![0, 3], vec![3], vec![0]]
            .into_iter()
            .enumerate()
        {
            r.begin(n, &mut meter).unwrap();
            for t in targets {
                r.push(e(t), &mut meter).unwrap();
            }
            r.end(&mut meter).unwrap();
        }
        r
    }

    #[test]
    fn components_and_reversed_rows() {
        let r = rows();
        let (comp, count) = progress_litmus::graph::scc(&r);
        assert_eq!(count, 3);
        assert!(comp[0] == comp[1] && comp[1] == comp[2]);
        assert!(comp[3] != comp[0] && comp[4] != comp[0] && comp[3] != comp[4]);
        // Reverse topological order: the sink component completes first.
        assert!(comp[3] < comp[0] && comp[0] < comp[4]);
        let reversed = progress_litmus::graph::Reversed::of(&r);
        let preds = |n: usize| {
            use progress_litmus::graph::Predecessors;
            reversed.predecessors(n).collect::<Vec<_>>()
        };
        assert_eq!(preds(0), vec![2, 4]);
        assert_eq!(preds(3), vec![2, 3]);
        assert_eq!(preds(4), Vec::<usize>::new());
        let e = r.out(0).next().unwrap();
        assert!(!is_step(e) && kind(e) == 16 && target(e) == 1);
    }
}
