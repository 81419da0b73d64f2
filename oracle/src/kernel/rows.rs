//! The lean product's transitions in compressed rows of variable-length
//! bytes (issue 24 item 2).
//!
//! The edges of state `n` are the bytes from where row `n` starts to
//! where row `n + 1` does, one edge word ([`super::arena::edge`]: a
//! target id and a 5-bit move kind) after another, in ascending order of
//! target. An edge is stored as the
//! difference of its target from the previous target of its row (from
//! `n`, zigzag-coded, for the first), shifted above the kind, in LEB128
//! (7 bits a byte). Exploration is breadth first, so the new targets of
//! a row are consecutive ids: after the first edge of a row most take
//! one or two bytes.
//!
//! Where a row starts is kept in 16 bits: its offset from where its
//! block of [`BLOCK`] rows starts (32 bits a block), about 2 bytes a
//! row rather than 4. A block of rows longer than 16 bits can count
//! (more than a thousand bytes a row: hundreds of edges) keeps the
//! starts that do not fit aside, in full.
//!
//! The bytes grow by doubling and are charged to a [`Meter`] by capacity
//! before they grow, with the caller's bytes an edge for its own tables.

use super::words::{ID_BITS, ID_MASK};
use progress_litmus::axb::space::{Meter, OutOfMemory};

/// The most bytes one edge takes (a 27-bit difference with its sign and
/// 5 bits of kind in LEB128).
pub const MAX_EDGE_BYTES: usize = 5;

/// Rows a block of starts has (`Starts`).
pub const BLOCK: usize = 64;

/// Where rows start, as offsets into the bytes: the start of row `n`
/// is `base[n / BLOCK] + low[n]`, or, where `low[n]` is [`FAR`], the
/// full offset kept aside for `n`.
#[derive(Default)]
struct Starts {
    base: Vec<u32>,
    low: Vec<u16>,
    /// `(n, start)` of the starts 16 bits do not hold, by `n`.
    far: Vec<(u32, u32)>,
}

/// A start kept aside.
const FAR: u16 = u16::MAX;

impl Starts {
    fn len(&self) -> usize {
        self.low.len()
    }

    fn is_empty(&self) -> bool {
        self.low.is_empty()
    }

    fn bytes(&self) -> usize {
        self.base.capacity() * 4 + self.low.capacity() * 2 + self.far.capacity() * 8
    }

    fn clear(&mut self) {
        self.base.clear();
        self.low.clear();
        self.far.clear();
    }

    fn shrink(&mut self) {
        self.base.shrink_to_fit();
        self.low.shrink_to_fit();
        self.far.shrink_to_fit();
    }

    /// Appends the start of the next row.
    fn push(&mut self, at: u32, meter: &mut Meter) -> Result<(), OutOfMemory> {
        let n = self.low.len();
        if n.is_multiple_of(BLOCK) {
            grow(&mut self.base, 1, meter)?;
            self.base.push(at);
        }
        let d = at - self.base[n / BLOCK];
        grow(&mut self.low, 1, meter)?;
        if d < FAR as u32 {
            self.low.push(d as u16);
        } else {
            grow(&mut self.far, 1, meter)?;
            self.far.push((n as u32, at));
            self.low.push(FAR);
        }
        Ok(())
    }

    /// Where row `n` starts.
    #[inline]
    fn at(&self, n: usize) -> usize {
        match self.low[n] {
            FAR => self.far_at(n),
            d => self.base[n / BLOCK] as usize + d as usize,
        }
    }

    #[inline(never)]
    fn far_at(&self, n: usize) -> usize {
        let k = self.far.partition_point(|&(m, _)| (m as usize) < n);
        self.far[k].1 as usize
    }
}

/// Edge rows of variable-length bytes.
#[derive(Default)]
pub struct Rows {
    /// Where each row starts, and where the last one ends.
    first: Starts,
    bytes: Vec<u8>,
    /// Edges stored, and edges charged the caller's bytes for.
    count: usize,
    charged: usize,
    /// Bytes charged an edge for the caller's tables.
    extra: usize,
    /// While a row is appended: its state or last target, and whether
    /// it has an edge yet.
    prev: u32,
    started: bool,
}

impl Rows {
    pub fn new(extra: usize) -> Rows {
        Rows {
            extra,
            ..Rows::default()
        }
    }

    /// Rows completed.
    pub fn num_rows(&self) -> usize {
        self.first.len().saturating_sub(1)
    }

    pub fn num_edges(&self) -> usize {
        self.count
    }

    /// Bytes of the rows and their offsets, by capacity.
    pub fn bytes(&self) -> usize {
        self.first.bytes() + self.bytes.capacity()
    }

    pub fn clear(&mut self) {
        self.first.clear();
        self.bytes.clear();
        self.count = 0;
    }

    pub fn shrink(&mut self) {
        self.first.shrink();
        self.bytes.shrink_to_fit();
    }

    /// Begins the row of state `n` (rows are appended in order).
    pub fn begin(&mut self, n: usize, meter: &mut Meter) -> Result<(), OutOfMemory> {
        debug_assert!(self.num_rows() == n || (self.first.is_empty() && n == 0));
        if self.first.is_empty() {
            self.first.push(0, meter)?;
        }
        self.prev = n as u32;
        self.started = false;
        Ok(())
    }

    /// Whether another edge may be stored (its offsets fit 32 bits).
    pub fn has_room(&self) -> bool {
        self.bytes.len() + MAX_EDGE_BYTES <= u32::MAX as usize
    }

    /// Appends an edge word to the current row: after the first, targets
    /// come in ascending order.
    pub fn push(&mut self, word: u32, meter: &mut Meter) -> Result<(), OutOfMemory> {
        if self.count == self.charged {
            let new = self.charged.saturating_mul(2).max(64);
            let more = (new - self.charged).saturating_mul(self.extra);
            meter.take(more, more)?;
            self.charged = new;
        }
        grow(&mut self.bytes, MAX_EDGE_BYTES, meter)?;
        let target = word & ID_MASK;
        let d = target as i64 - self.prev as i64;
        debug_assert!(!self.started || d >= 0, "a row's targets ascend");
        let zig = if self.started {
            d as u64
        } else {
            ((d << 1) ^ (d >> 63)) as u64
        };
        self.started = true;
        let mut v = zig << (32 - ID_BITS) | (word >> ID_BITS) as u64;
        while v >= 0x80 {
            self.bytes.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.bytes.push(v as u8);
        self.prev = target;
        self.count += 1;
        Ok(())
    }

    /// Ends the current row.
    pub fn end(&mut self, meter: &mut Meter) -> Result<(), OutOfMemory> {
        self.first.push(self.bytes.len() as u32, meter)
    }

    /// The edge words of row `n`.
    #[inline]
    pub fn out(&self, n: usize) -> Out<'_> {
        Out {
            bytes: &self.bytes[self.first.at(n)..self.first.at(n + 1)],
            prev: n as u32,
            started: false,
        }
    }

    /// Whether row `n` has no edge.
    pub fn is_empty(&self, n: usize) -> bool {
        self.first.at(n) == self.first.at(n + 1)
    }
}

/// Makes room for `n` more elements, doubling the capacity, charged to
/// the meter.
fn grow<T>(v: &mut Vec<T>, n: usize, meter: &mut Meter) -> Result<(), OutOfMemory> {
    let cap = v.capacity();
    if v.len() + n <= cap {
        return Ok(());
    }
    let new = cap.saturating_mul(2).max(64).max(v.len() + n);
    let size = std::mem::size_of::<T>();
    meter.take((new - cap).saturating_mul(size), new.saturating_mul(size))?;
    v.reserve_exact(new - v.len());
    Ok(())
}

/// The edge words of one row, decoded in order.
#[derive(Clone)]
pub struct Out<'a> {
    bytes: &'a [u8],
    prev: u32,
    started: bool,
}

impl Iterator for Out<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let (&b, rest) = self.bytes.split_first()?;
        let mut v = (b & 0x7f) as u64;
        self.bytes = rest;
        let mut shift = 7;
        let mut last = b;
        while last & 0x80 != 0 {
            let (&b, rest) = self.bytes.split_first()?;
            v |= ((b & 0x7f) as u64) << shift;
            self.bytes = rest;
            shift += 7;
            last = b;
        }
        let kind = (v & ((1 << (32 - ID_BITS)) - 1)) as u32;
        let zig = v >> (32 - ID_BITS);
        let d = if self.started {
            zig as i64
        } else {
            (zig >> 1) as i64 ^ -((zig & 1) as i64)
        };
        self.started = true;
        let target = (self.prev as i64 + d) as u32;
        self.prev = target;
        Some(target | kind << ID_BITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_back_every_edge_word_in_order() {
        let mut meter = Meter::new(usize::MAX);
        let mut r = Rows::new(4);
        let kinds = [0u32, 5, 15, 16, 31];
        let max = ID_MASK - 1;
        let rows: Vec<Vec<u32>> = vec![
            vec![1, 2, 3],
            vec![],
            vec![0, 7, max, max],
            vec![max],
            vec![1, 2, 2],
            (0..300).map(|k| k * 1000).collect(),
        ];
        let mut want = Vec::new();
        for (n, targets) in rows.iter().enumerate() {
            r.begin(n, &mut meter).unwrap();
            let words: Vec<u32> = targets
                .iter()
                .enumerate()
                .map(|(j, &t)| t | kinds[j % kinds.len()] << ID_BITS)
                .collect();
            for &w in &words {
                r.push(w, &mut meter).unwrap();
            }
            r.end(&mut meter).unwrap();
            want.push(words);
        }
        assert_eq!(r.num_rows(), rows.len());
        assert_eq!(r.num_edges(), want.iter().map(Vec::len).sum::<usize>());
        for (n, words) in want.iter().enumerate() {
            assert_eq!(r.out(n).collect::<Vec<_>>(), *words, "row {n}");
            assert_eq!(r.is_empty(n), words.is_empty());
        }
        // Consecutive targets take a byte each.
        assert_eq!(r.first.at(1) - r.first.at(0), 3);
        // The rows and the caller's 4 bytes an edge are charged.
        assert!(r.bytes() + 4 * r.num_edges() <= meter.used());
        // Two bytes a row's start, and four a block's.
        assert_eq!(r.first.bytes(), 64 * 2 + 64 * 4);
        let mut small = Meter::new(1000);
        let mut s = Rows::new(0);
        s.begin(0, &mut small).unwrap();
        let full = (0..1000).try_for_each(|t| s.push(t, &mut small));
        assert!(full.is_err());
    }

    #[test]
    fn rows_past_what_16_bits_count_in_a_block_keep_their_starts_aside() {
        let mut meter = Meter::new(usize::MAX);
        let mut r = Rows::new(0);
        // 150 rows of 500 edges, each edge's target far from the one
        // before (4 bytes): a block of 64 rows holds about 110,000
        // bytes, past 65,535; and rows of none among them.
        let row = |n: usize| -> Vec<u32> {
            if n % 7 == 3 {
                return Vec::new();
            }
            (0..500u32).map(|k| k * 250_000 + n as u32).collect()
        };
        let mut want = Vec::new();
        for n in 0..150 {
            let mut t = row(n);
            t.sort();
            r.begin(n, &mut meter).unwrap();
            for &x in &t {
                r.push(x | (n as u32 % 32) << ID_BITS, &mut meter).unwrap();
            }
            r.end(&mut meter).unwrap();
            want.push(t);
        }
        assert!(!r.first.far.is_empty(), "some starts are kept aside");
        for (n, t) in want.iter().enumerate() {
            let got: Vec<u32> = r.out(n).map(|w| w & ID_MASK).collect();
            assert_eq!(&got, t, "row {n}");
            assert!(r.out(n).all(|w| w >> ID_BITS == n as u32 % 32));
            assert_eq!(r.is_empty(n), t.is_empty());
        }
        assert!(r.bytes() <= meter.used());
    }
}
