//! Deduplicated tuples of words (issue 24 item 2): the store under the
//! lean product's state table ([`super::arena::StateTable`]).
//!
//! A [`Words`] holds distinct tuples of `width` words, one after another
//! in one vector (tuple `id` at `data[id * width..]`), with an
//! open-addressing index of `u32` slots: 0 is empty, else the id + 1 in
//! the low [`ID_BITS`] bits and 5 bits of the tuple's hash above them, so
//! that most probes that miss never touch the tuple. While tuples come
//! the index is at most half full, doubling as they come: a look-up that
//! misses (most of a breadth-first search's, whose successors are mostly
//! new) walks the run of full slots after its home, about 8 slots at
//! three quarters and 2.5 at half, and each slot whose tag matches
//! reads a tuple. Once a product is explored the index is rebuilt at the
//! smallest size at most three quarters full (the rules' tables come
//! after it, and look up little).
//!
//! Collapse compression (as SPIN's and LTSmin's): a state of three words
//! or more ([`super::arena::COLLAPSE_FROM`]) is stored as the ids of its
//! two halves, each half in a [`Words`] of its own, and the pair of ids
//! as one word in a third. Product states
//! share their halves (one half holds mostly memory and the first
//! invocations, the other the rest and the fair sets; docs/KERNEL.md
//! §8.6), so a state costs its 8-byte pair and its index slot, and the
//! halves a few bytes more shared out.
//!
//! Every table grows by doubling and is charged to a [`Meter`] by
//! capacity before it grows.

use progress_litmus::axb::space::{Exceeded, Meter, OutOfMemory, TooLarge};

/// Bits of an id in an index slot (and in an edge word, `super::arena`).
pub const ID_BITS: u32 = 27;
pub const ID_MASK: u32 = (1 << ID_BITS) - 1;
/// The most tuples a table holds (ids `0..MAX_IDS`).
pub const MAX_IDS: usize = ID_MASK as usize - 1;

/// How many tuples ahead [`Words::place`] requests their first slots.
const AHEAD: usize = 16;

/// Index slots from which look-ups are asked for ahead
/// (`super::arena`): 4 MB of index, its tuples several more, past what a
/// core's caches hold; then look-ups mostly wait on memory.
pub const LARGE: usize = 1 << 20;

/// A 64-bit hash of words (a multiply-rotate fold and a finalizer, so
/// that the low bits, which pick the slot, mix every bit).
#[inline]
pub fn hash(s: &[u64]) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    for &w in s {
        h = (h.rotate_left(26) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(0xd6e8_feb8_6659_fd93);
    h ^ (h >> 32)
}

/// The tag bits of a hash in an index slot (its low bits: the slot is
/// picked by its high ones).
#[inline]
fn tag(h: u64) -> u32 {
    (h as u32 & 31) << ID_BITS
}

/// The first slot of hash `h` in an index of `len` slots (the high bits
/// of `h * len`: any size, not only powers of two).
#[inline]
fn home(h: u64, len: usize) -> usize {
    ((h as u128 * len as u128) >> 64) as usize
}

/// Distinct tuples of `width` words with an index from tuple to id.
pub struct Words {
    width: usize,
    data: Vec<u64>,
    slots: Vec<u32>,
    /// Bytes charged a tuple of capacity for the caller's tables.
    extra: usize,
}

impl Words {
    pub fn new(width: usize, extra: usize) -> Words {
        assert!(width > 0, "a tuple has a word at least");
        Words {
            width,
            data: Vec::new(),
            slots: Vec::new(),
            extra,
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn len(&self) -> usize {
        self.data.len() / self.width
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The tuple of id `id`.
    #[inline]
    pub fn get(&self, id: u32) -> &[u64] {
        let at = id as usize * self.width;
        &self.data[at..at + self.width]
    }

    /// Bytes of the tables (tuples and index), by capacity.
    pub fn bytes(&self) -> usize {
        self.data.capacity() * 8 + self.slots.capacity() * 4
    }

    /// Forgets every tuple, keeping the tables' capacity.
    pub fn clear(&mut self) {
        self.data.clear();
        self.slots.iter_mut().for_each(|x| *x = 0);
    }

    /// Gives back what the tuples reserved beyond what they hold, and
    /// rebuilds the index at the smallest size at most three quarters
    /// full.
    pub fn shrink(&mut self) {
        self.data.shrink_to_fit();
        let fit = (self.len() * 4).div_ceil(3).max(64);
        if fit < self.slots.len() {
            self.place(fit);
        }
    }

    /// The slot of `w` (holding it, or the empty slot where it goes) and
    /// its id if present; the index is not empty.
    #[inline]
    fn probe(&self, w: &[u64], h: u64) -> (usize, Option<u32>) {
        let len = self.slots.len();
        let tag = tag(h);
        let mut i = home(h, len);
        loop {
            let v = self.slots[i];
            if v == 0 {
                return (i, None);
            }
            if v & !ID_MASK == tag {
                let id = (v & ID_MASK) - 1;
                let at = id as usize * self.width;
                let same = if self.width == 1 {
                    self.data[at] == w[0]
                } else {
                    // Word by word: a slice comparison calls memcmp.
                    self.data[at..at + self.width]
                        .iter()
                        .zip(w)
                        .fold(true, |eq, (a, b)| eq & (a == b))
                };
                if same {
                    return (i, Some(id));
                }
            }
            i += 1;
            if i == len {
                i = 0;
            }
        }
    }

    /// The id of `w` (of hash `h`), if stored.
    #[inline]
    pub fn find(&self, w: &[u64], h: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(w, h).1
    }

    /// The id of `w` (of hash `h`), stored if new (then `true`), within
    /// `bound` tuples and the meter.
    #[inline]
    pub fn insert(
        &mut self,
        w: &[u64],
        h: u64,
        meter: &mut Meter,
        bound: usize,
    ) -> Result<(u32, bool), Exceeded> {
        debug_assert_eq!(w.len(), self.width);
        let mut slot = None;
        if !self.slots.is_empty() {
            match self.probe(w, h) {
                (_, Some(id)) => return Ok((id, false)),
                (i, None) => slot = Some(i),
            }
        }
        self.add(w, h, slot, meter, bound)
    }

    /// Stores `w`, not present; `slot` is the empty slot where the probe
    /// that missed it stopped (still its place unless the index grows).
    fn add(
        &mut self,
        w: &[u64],
        h: u64,
        slot: Option<usize>,
        meter: &mut Meter,
        bound: usize,
    ) -> Result<(u32, bool), Exceeded> {
        let len = self.len();
        if len >= bound.min(MAX_IDS) {
            return Err(Exceeded::States(TooLarge { bound }));
        }
        self.reserve(meter).map_err(Exceeded::Memory)?;
        let mut slot = slot;
        // At most half full while exploring (the module's doc).
        if (len + 1) * 2 > self.slots.len() {
            self.grow(meter).map_err(Exceeded::Memory)?;
            slot = None;
        }
        let id = len as u32;
        // Word by word: a slice copy of a length not known at compile
        // time calls memcpy, which costs more than these few words.
        for &x in w {
            self.data.push(x);
        }
        let slot = match slot {
            Some(i) => i,
            None => self.probe(w, h).0,
        };
        debug_assert_eq!(self.slots[slot], 0);
        self.slots[slot] = tag(h) | (id + 1);
        Ok((id, true))
    }

    /// Makes room for one more tuple, doubling the capacity, charged with
    /// the caller's `extra` bytes a tuple.
    fn reserve(&mut self, meter: &mut Meter) -> Result<(), OutOfMemory> {
        if self.data.len() + self.width <= self.data.capacity() {
            return Ok(());
        }
        let cap = self.data.capacity() / self.width;
        let new = cap.saturating_mul(2).max(64);
        let size = self.width * 8;
        meter.take(
            (new - cap).saturating_mul(size + self.extra),
            new.saturating_mul(size),
        )?;
        self.data.reserve_exact(new * self.width - self.data.len());
        Ok(())
    }

    /// Doubles the index and places every tuple again.
    fn grow(&mut self, meter: &mut Meter) -> Result<(), OutOfMemory> {
        let old = self.slots.len();
        let new = (old * 2).max(64);
        meter.take((new - old) * 4, new * 4)?;
        self.place(new);
        Ok(())
    }

    /// Places every tuple again in an index of `size` slots.
    ///
    /// Each tuple's first slot is requested [`AHEAD`] tuples before it is
    /// placed (the hashes wait in a ring): a large index misses the
    /// caches at nearly every placement, and the requests overlap.
    fn place(&mut self, size: usize) {
        self.slots = vec![0; size];
        let n = self.len();
        let mut ring = [0u64; AHEAD];
        for (id, slot) in ring.iter_mut().enumerate().take(n) {
            *slot = hash(self.get(id as u32));
            prefetch(&self.slots[home(*slot, size)]);
        }
        for id in 0..n {
            let h = ring[id % AHEAD];
            if id + AHEAD < n {
                let later = hash(self.get((id + AHEAD) as u32));
                prefetch(&self.slots[home(later, size)]);
                ring[id % AHEAD] = later;
            }
            let mut i = home(h, size);
            while self.slots[i] != 0 {
                i = if i + 1 == size { 0 } else { i + 1 };
            }
            self.slots[i] = tag(h) | (id as u32 + 1);
        }
    }

    /// Asks the processor to fetch the index slot of hash `h`.
    #[inline]
    pub fn prefetch(&self, h: u64) {
        if let Some(slot) = self.slots.get(home(h, self.slots.len())) {
            prefetch(slot);
        }
    }

    /// Slots of the index.
    #[inline]
    pub fn index_len(&self) -> usize {
        self.slots.len()
    }

    /// Asks the processor to fetch the tuple of id `id`, if stored.
    #[inline]
    pub fn prefetch_id(&self, id: u32) {
        if let Some(s) = self.data.get(id as usize * self.width) {
            prefetch(s);
        }
    }

    /// Then the tuple the first slot of hash `h` names, if its tag is
    /// `h`'s (most look-ups find their tuple there).
    #[inline]
    pub fn prefetch_tuple(&self, h: u64) {
        let Some(&v) = self.slots.get(home(h, self.slots.len())) else {
            return;
        };
        if v != 0 && v & !ID_MASK == tag(h) {
            if let Some(s) = self.data.get(((v & ID_MASK) - 1) as usize * self.width) {
                prefetch(s);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_are_found_across_growths_and_charged() {
        let mut t = Words::new(3, 5);
        let mut meter = Meter::new(usize::MAX);
        let w = |i: u64| [i, i.wrapping_mul(0x9e37), !i];
        for i in 0..3000u64 {
            let x = w(i);
            assert_eq!(
                t.insert(&x, hash(&x), &mut meter, 5000).unwrap(),
                (i as u32, true)
            );
        }
        for i in 0..3000u64 {
            let x = w(i);
            assert_eq!(t.find(&x, hash(&x)), Some(i as u32));
            assert_eq!(t.get(i as u32), &x);
            assert_eq!(
                t.insert(&x, hash(&x), &mut meter, 5000).unwrap(),
                (i as u32, false)
            );
        }
        assert_eq!(t.find(&[1, 2, 3], hash(&[1, 2, 3])), None);
        // Rebuilt at its fit, the index finds every tuple still.
        let before = t.slots.len();
        t.shrink();
        assert!(t.slots.len() < before && t.slots.len() * 3 >= t.len() * 4);
        assert!((0..3000u64).all(|i| t.find(&w(i), hash(&w(i))) == Some(i as u32)));
        assert_eq!(t.find(&[1, 2, 3], hash(&[1, 2, 3])), None);
        // Tuples, index and the caller's 5 bytes a tuple of capacity.
        assert!(t.bytes() + 5 * (t.data.capacity() / 3) <= meter.used());
        assert!(matches!(
            t.insert(&[1, 2, 3], hash(&[1, 2, 3]), &mut meter, 3000),
            Err(Exceeded::States(TooLarge { bound: 3000 }))
        ));
        let mut small = Meter::new(1000);
        let mut u = Words::new(1, 0);
        let full =
            (0..1000u64).try_for_each(|i| u.insert(&[i], hash(&[i]), &mut small, 5000).map(|_| ()));
        assert!(matches!(full, Err(Exceeded::Memory(_))));
        assert!(u.bytes() <= small.used());
    }
}
