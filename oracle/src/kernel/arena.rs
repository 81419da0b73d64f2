//! The lean product's tables (issue 24 item 2): states packed in one
//! vector with an open-addressing index of 32-bit ids, and transitions in
//! one compressed-row array of 32-bit words.
//!
//! A state is stored once, as its packed words, at its id; the index is a
//! power-of-two table of `u32` slots (0: empty; else the id + 1 in the low
//! [`ID_BITS`] bits and 5 bits of the state's hash above them, so that
//! most probes that miss never touch the state). The transitions of state
//! `n` are `edges[first[n]..first[n + 1]]`: exploration is breadth first
//! and expands states in id order, so each state's transitions are
//! appended in one run. An edge is one word: the target id, the actor or
//! invocation (4 bits: at most 16 invocations) and whether it is a
//! Terminate. The verdict rules need nothing more of a move; witnesses,
//! which need the instruction, are found on the full product
//! ([`super::product`]).
//!
//! Every table grows by doubling and is charged to a [`Meter`] by
//! capacity before it grows, as the full product is.

use super::product::Move;
use progress_litmus::axb::space::{Exceeded, Meter, OutOfMemory, TooLarge};
use progress_litmus::kernel::machine::Packed;

/// Bits of a state id in an index slot or an edge.
pub const ID_BITS: u32 = 27;
const ID_MASK: u32 = (1 << ID_BITS) - 1;
/// The most states a table holds (ids `0..MAX_IDS`).
pub const MAX_IDS: usize = ID_MASK as usize - 1;

/// Makes room for one more element, doubling the capacity, charged to the
/// meter with `extra` bytes an element of capacity for the caller's
/// per-element tables.
pub fn reserve_one<T>(v: &mut Vec<T>, meter: &mut Meter, extra: usize) -> Result<(), OutOfMemory> {
    let cap = v.capacity();
    if v.len() < cap {
        return Ok(());
    }
    let new = cap.saturating_mul(2).max(64);
    let size = std::mem::size_of::<T>();
    meter.take(
        (new - cap).saturating_mul(size + extra),
        new.saturating_mul(size),
    )?;
    v.reserve_exact(new - v.len());
    Ok(())
}

/// A 64-bit hash of a packed state (a multiply-rotate fold and a
/// finalizer, so that the low bits, which pick the slot, mix every bit).
fn hash(s: &[u64]) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    for &w in s {
        h = (h.rotate_left(26) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(0xd6e8_feb8_6659_fd93);
    h ^ (h >> 32)
}

/// Packed states with an index from state to id.
pub struct StateTable<S> {
    states: Vec<S>,
    slots: Vec<u32>,
    /// Bytes charged a state of capacity for the caller's tables.
    extra: usize,
}

impl<S: Packed> StateTable<S> {
    pub fn new(extra: usize) -> StateTable<S> {
        StateTable {
            states: Vec::new(),
            slots: Vec::new(),
            extra,
        }
    }

    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    pub fn state(&self, id: usize) -> &S {
        &self.states[id]
    }

    /// Forgets every state, keeping the tables' capacity.
    pub fn clear(&mut self) {
        self.states.clear();
        self.slots.iter_mut().for_each(|x| *x = 0);
    }

    /// Bytes of the tables (states and index), by capacity.
    pub fn bytes(&self) -> usize {
        self.states.capacity() * std::mem::size_of::<S>() + self.slots.capacity() * 4
    }

    /// The slot of `s` (holding it, or the empty slot where it goes) and
    /// its id if present.
    fn probe(&self, s: &S, h: u64) -> (usize, Option<u32>) {
        let mask = self.slots.len() - 1;
        let tag = ((h >> 59) as u32) << ID_BITS;
        let mut i = h as usize & mask;
        loop {
            let v = self.slots[i];
            if v == 0 {
                return (i, None);
            }
            if v & !ID_MASK == tag {
                let id = (v & ID_MASK) - 1;
                if self.states[id as usize] == *s {
                    return (i, Some(id));
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `s`, if stored.
    pub fn get(&self, s: &S) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(s, hash(s.as_ref())).1
    }

    /// The id of `s`, stored if new (then `true`), within `max_states`
    /// and the meter.
    pub fn insert(
        &mut self,
        s: S,
        meter: &mut Meter,
        max_states: usize,
    ) -> Result<(u32, bool), Exceeded> {
        self.insert_hashed(s, hash(s.as_ref()), meter, max_states)
    }

    /// Asks the processor to fetch the index slot of hash `h`, so that
    /// the look-ups of one state's successors overlap their cache misses.
    fn prefetch(&self, h: u64) {
        if let Some(slot) = self
            .slots
            .get(h as usize & self.slots.len().wrapping_sub(1))
        {
            prefetch(slot);
        }
    }

    /// Then the state the first slot of hash `h` names, if its tag is
    /// `h`'s (most look-ups find their state there).
    fn prefetch_state(&self, h: u64) {
        let Some(&v) = self
            .slots
            .get(h as usize & self.slots.len().wrapping_sub(1))
        else {
            return;
        };
        if v != 0 && v >> ID_BITS == (h >> 59) as u32 {
            if let Some(s) = self.states.get(((v & ID_MASK) - 1) as usize) {
                prefetch(s);
            }
        }
    }

    /// [`StateTable::insert`] with the state's hash already computed.
    fn insert_hashed(
        &mut self,
        s: S,
        h: u64,
        meter: &mut Meter,
        max_states: usize,
    ) -> Result<(u32, bool), Exceeded> {
        if !self.slots.is_empty() {
            if let (_, Some(id)) = self.probe(&s, h) {
                return Ok((id, false));
            }
        }
        let bound = max_states.min(MAX_IDS);
        if self.states.len() >= bound {
            return Err(Exceeded::States(TooLarge { bound: max_states }));
        }
        reserve_one(&mut self.states, meter, self.extra).map_err(Exceeded::Memory)?;
        if (self.states.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow(meter).map_err(Exceeded::Memory)?;
        }
        let id = self.states.len() as u32;
        self.states.push(s);
        let (slot, _) = self.probe(&s, h);
        self.slots[slot] = ((h >> 59) as u32) << ID_BITS | (id + 1);
        Ok((id, true))
    }

    /// Doubles the index and places every state again.
    fn grow(&mut self, meter: &mut Meter) -> Result<(), OutOfMemory> {
        let old = self.slots.len();
        let new = (old * 2).max(64);
        meter.take((new - old) * 4, new * 4)?;
        self.slots = vec![0; new];
        let mask = new - 1;
        for (id, s) in self.states.iter().enumerate() {
            let h = hash(s.as_ref());
            let mut i = h as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = ((h >> 59) as u32) << ID_BITS | (id as u32 + 1);
        }
        Ok(())
    }
}

/// Asks the processor to fetch the cache line of `x` (a hint: it reads
/// nothing).
#[inline]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program sees;
    // the address is that of a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
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

/// A graph of packed states with compressed rows of edge words.
pub struct Graph<S> {
    pub table: StateTable<S>,
    /// `first[n]..first[n + 1]`: the edges of state `n` (one more entry
    /// than states once explored).
    pub first: Vec<u32>,
    pub edges: Vec<u32>,
    /// Bytes charged an edge of capacity for the caller's tables.
    edge_extra: usize,
}

impl<S: Packed> Graph<S> {
    pub fn new(extra: usize, edge_extra: usize) -> Graph<S> {
        Graph {
            table: StateTable::new(extra),
            first: Vec::new(),
            edges: Vec::new(),
            edge_extra,
        }
    }

    pub fn num_states(&self) -> usize {
        self.table.len()
    }

    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// The edge words out of state `n`.
    pub fn out(&self, n: usize) -> &[u32] {
        &self.edges[self.first[n] as usize..self.first[n + 1] as usize]
    }

    pub fn state(&self, n: usize) -> &S {
        self.table.state(n)
    }

    /// Bytes of the tables (states, index and edge rows), by capacity.
    pub fn bytes(&self) -> usize {
        self.table.bytes() + (self.first.capacity() + self.edges.capacity()) * 4
    }

    /// Gives back what the tables reserved beyond what they hold (the
    /// index keeps its power-of-two size): the rules' tables come after.
    pub fn shrink(&mut self) {
        self.table.states.shrink_to_fit();
        self.first.shrink_to_fit();
        self.edges.shrink_to_fit();
    }

    pub fn clear(&mut self) {
        self.table.clear();
        self.first.clear();
        self.edges.clear();
    }

    /// Explores breadth first from `roots`: `succ(s, emit)` emits each
    /// transition out of `s`. States get ids in the order found.
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
        let mut out: Vec<(Move, S)> = Vec::new();
        let mut hashes: Vec<u64> = Vec::new();
        reserve_one(&mut self.first, meter, 0)?;
        self.first.push(0);
        let mut next = 0;
        while next < self.table.len() {
            let s = *self.table.state(next);
            next += 1;
            out.clear();
            succ(&s, &mut out).map_err(ExploreError::Succ)?;
            hashes.clear();
            for (_, t) in &out {
                let h = hash(t.as_ref());
                self.table.prefetch(h);
                hashes.push(h);
            }
            for &h in &hashes {
                self.table.prefetch_state(h);
            }
            for (&(mv, t), &h) in out.iter().zip(&hashes) {
                let (id, _) = self.table.insert_hashed(t, h, meter, max_states)?;
                if self.edges.len() >= u32::MAX as usize {
                    return Err(ExploreError::Exceeded(Exceeded::States(TooLarge {
                        bound: max_states,
                    })));
                }
                reserve_one(&mut self.edges, meter, self.edge_extra)?;
                self.edges.push(edge(id, mv));
            }
            reserve_one(&mut self.first, meter, 0)?;
            self.first.push(self.edges.len() as u32);
        }
        Ok(())
    }
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

/// Strongly connected components of a graph in compressed rows: the
/// component id of every node and their number. Tarjan's algorithm with
/// explicit stacks (no recursion); ids in the order components complete.
pub fn scc(first: &[u32], edges: &[u32]) -> (Vec<u32>, usize) {
    const NONE: u32 = u32::MAX;
    let n = first.len().saturating_sub(1);
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut comp = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut frames: Vec<(u32, u32)> = Vec::new();
    let mut next = 0u32;
    let mut count = 0u32;
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root as u32);
        frames.push((root as u32, first[root]));
        while let Some(&mut (v, ref mut pos)) = frames.last_mut() {
            let v = v as usize;
            if *pos < first[v + 1] {
                let w = target(edges[*pos as usize]);
                *pos += 1;
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w as u32);
                    frames.push((w as u32, first[w]));
                } else if comp[w] == NONE {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if low[v] == index[v] {
                while let Some(x) = stack.pop() {
                    comp[x as usize] = count;
                    if x as usize == v {
                        break;
                    }
                }
                count += 1;
            }
            if let Some(&(u, _)) = frames.last() {
                low[u as usize] = low[u as usize].min(low[v]);
            }
        }
    }
    (comp, count as usize)
}

/// The reverse of a graph in compressed rows: for each node, the sources
/// of its incoming edges (`rfirst[n]..rfirst[n + 1]` in `sources`).
pub fn reverse(first: &[u32], edges: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let n = first.len().saturating_sub(1);
    let mut rfirst = vec![0u32; n + 1];
    for &e in edges {
        rfirst[target(e) + 1] += 1;
    }
    for i in 0..n {
        rfirst[i + 1] += rfirst[i];
    }
    // Fill with rfirst[t] as t's cursor; afterwards rfirst[t] is where
    // t + 1 starts, so shift back by one.
    let mut sources = vec![0u32; edges.len()];
    for v in 0..n {
        for &e in &edges[first[v] as usize..first[v + 1] as usize] {
            let t = target(e);
            sources[rfirst[t] as usize] = v as u32;
            rfirst[t] += 1;
        }
    }
    for i in (1..=n).rev() {
        rfirst[i] = rfirst[i - 1];
    }
    rfirst[0] = 0;
    (rfirst, sources)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 3, 4 -> 0.
    fn rows() -> (Vec<u32>, Vec<u32>) {
        let e = |t: u32| edge(t, Move::terminate(0));
        (
            vec![0, 1, 2, 4, 5, 6],
            vec![e(1), e(2), e(0), e(3), e(3), e(0)],
        )
    }

    #[test]
    fn components_and_reversed_rows() {
        let (first, edges) = rows();
        let (comp, count) = scc(&first, &edges);
        assert_eq!(count, 3);
        assert!(comp[0] == comp[1] && comp[1] == comp[2]);
        assert!(comp[3] != comp[0] && comp[4] != comp[0] && comp[3] != comp[4]);
        // Reverse topological order: the sink component completes first.
        assert!(comp[3] < comp[0] && comp[0] < comp[4]);
        let (rfirst, sources) = reverse(&first, &edges);
        let preds = |n: usize| {
            let mut v = sources[rfirst[n] as usize..rfirst[n + 1] as usize].to_vec();
            v.sort();
            v
        };
        assert_eq!(preds(0), vec![2, 4]);
        assert_eq!(preds(3), vec![2, 3]);
        assert_eq!(preds(4), Vec::<u32>::new());
        assert!(!is_step(edges[0]) && kind(edges[0]) == 16 && target(edges[0]) == 1);
    }
}
