//! Which memory steps no other actor can observe or disturb any more
//! (docs/KERNEL.md §8.7): the memory cells another invocation may still
//! write, or access, on some path from its current pc (its current
//! instruction included), found by propagating its current register values
//! (constants) along its code: an index whose value is the same on every
//! path to an access names one cell, any other index every cell of its
//! location (its own workgroup's copy of a shared one).
//!
//! A load of a cell no other invocation can write any more reads the value
//! it would read at any later time and changes nothing another invocation
//! reads; a store or read-modify-write of a cell no other invocation can
//! access any more is unobservable. The cells of an invocation's future
//! depend only on its code, pc, ids and registers: they are computed once
//! per such local state and remembered, in a table indexed by pc and the
//! registers' bits where all invocations' tables fit `DENSE_ENTRIES`
//! (no hash to compute: the look-ups are much of the reduction's cost
//! where it seldom applies), else in a hash map.

use crate::kernel::cfg;
use crate::kernel::machine::{get_bits, Machine, View};
use crate::kernel::program::{AtomicOp, Instr, Operand, MAX_INVOCATIONS};
use rustc_hash::FxHashMap;
use std::cell::{Cell, RefCell};

/// A register's value on every path so far, or `None`: it differs.
type Env = [Option<u16>; 8];

/// (invocation, pc, registers packed a byte each).
type Local = (u8, u8, u64);

/// The most entries of the table of futures indexed by invocation, pc
/// and registers (16 bytes each), else a hash map holds them.
const DENSE_ENTRIES: usize = 1 << 16;

/// An entry of the table not computed yet: no future writes a cell it
/// does not access.
const UNKNOWN: (u64, u64) = (!0, 0);

/// The future cells of invocations, remembered per local state.
#[derive(Debug, Default)]
pub struct Accesses {
    /// (invocation, pc, registers) to (cells written, cells accessed),
    /// where `dense` is empty.
    memo: RefCell<FxHashMap<Local, (u64, u64)>>,
    /// (cells written, cells accessed), or [`UNKNOWN`], at
    /// `first[j] + (pc << bits) + registers` for invocation `j` whose
    /// registers take `bits`; or empty.
    dense: Box<[Cell<(u64, u64)>]>,
    first: Vec<usize>,
    /// Per invocation: where its registers start in a state, the bits
    /// they take when they fit a key word (else 0: a byte each), and
    /// how many there are.
    regs: Vec<(u32, u32, usize)>,
}

fn operand(m: &Machine, i: usize, env: &Env, o: Operand) -> Option<u16> {
    match o {
        Operand::Reg(r) => env[r as usize],
        Operand::Imm(v) => Some(v),
        Operand::Id(id) => {
            let (w, local, _, lane) = m.coords(i);
            use crate::kernel::program::IdKind::*;
            let s = m.program.subgroup_size as usize;
            Some(match id {
                WgId => w,
                LocalId => local,
                SubgroupId => local / s,
                LaneId => lane,
            } as u16)
        }
    }
}

/// The cells `i`'s access of `loc` at index value `k` may touch: one cell,
/// every cell of the location (index not known), none (out of bounds: a
/// fault, not an access).
fn cells(m: &Machine, i: usize, loc: usize, k: Option<u16>) -> u64 {
    let l = &m.program.locations[loc];
    let copy = if l.shared { m.coords(i).0 } else { 0 };
    match k {
        Some(k) if (k as usize) < l.len() => 1u64 << m.cell_of(loc, copy, k as usize),
        Some(_) => 0,
        None => (0..l.len()).fold(0, |acc, k| acc | 1u64 << m.cell_of(loc, copy, k)),
    }
}

/// The cells invocation `i` may write and access from `pc` with registers
/// `env` on: a forward propagation of known register values over its
/// code (a join of two different values is unknown), then the cells of
/// every reached access.
fn future(m: &Machine, i: usize, pc: usize, env: Env) -> (u64, u64) {
    let code = &m.program.codes[m.code_index(i)];
    let len = code.instrs.len();
    let mut at: Vec<Option<Env>> = vec![None; len + 1];
    at[pc] = Some(env);
    let mut work = vec![pc];
    let (mut wr, mut acc) = (0u64, 0u64);
    while let Some(p) = work.pop() {
        if p >= len {
            continue;
        }
        let mut e = at[p].expect("reached");
        let ins = code.instrs[p];
        let mut next = cfg::successors(code, p);
        match ins {
            Instr::Assign { dst, op, a, b } => {
                let x = operand(m, i, &e, a);
                e[dst as usize] = match op {
                    None => x,
                    Some(op) => x
                        .zip(operand(m, i, &e, b))
                        .map(|(x, y)| op.eval(x, y, m.program.values)),
                };
            }
            Instr::Branch { a, cmp, b, target } => {
                if let (Some(x), Some(y)) = (operand(m, i, &e, a), operand(m, i, &e, b)) {
                    next = vec![if cmp.eval(x, y) {
                        target.pc(len)
                    } else {
                        p + 1
                    }];
                }
            }
            Instr::Atomic { op, addr, dst, .. } => {
                let c = cells(m, i, addr.loc as usize, operand(m, i, &e, addr.index));
                acc |= c;
                if !matches!(op, AtomicOp::Load) {
                    wr |= c;
                }
                if let Some(d) = dst {
                    e[d as usize] = None;
                }
            }
            Instr::Collective { dst, .. } => e[dst as usize] = None,
            Instr::Goto { .. } | Instr::Choose { .. } | Instr::Barrier => {}
        }
        for n in next {
            let joined = match at[n] {
                None => e,
                Some(old) => std::array::from_fn(|r| if old[r] == e[r] { e[r] } else { None }),
            };
            if at[n] != Some(joined) {
                at[n] = Some(joined);
                work.push(n);
            }
        }
    }
    (wr, acc)
}

impl Accesses {
    pub fn new(m: &Machine) -> Accesses {
        let regs = (0..m.num_invocations())
            .map(|j| {
                let nregs = m.program.codes[m.code_index(j)].regs.len();
                let (off, vb) = m.reg_range(j, 0);
                let bits = nregs as u32 * vb;
                (off, if bits < 64 { bits } else { 0 }, nregs)
            })
            .collect::<Vec<_>>();
        // Registers not in one word, at most 16 bits to a table.
        let fits = regs
            .iter()
            .all(|&(_, bits, n)| n == 0 || bits > 0 && bits <= 16);
        let mut first = Vec::new();
        let mut total = 0usize;
        for (j, &(_, bits, _)) in regs.iter().enumerate() {
            first.push(total);
            total = total.saturating_add(m.code_len(j) << bits);
        }
        let dense = if fits && total <= DENSE_ENTRIES {
            vec![Cell::new(UNKNOWN); total].into_boxed_slice()
        } else {
            Box::default()
        };
        Accesses {
            memo: RefCell::default(),
            dense,
            first,
            regs,
        }
    }

    /// The cells invocation `j`, at `pc` ([`Machine::pc`]), may still
    /// write and access from `s`.
    #[inline]
    fn of(&self, m: &Machine, s: &[u64], j: usize, pc: usize) -> (u64, u64) {
        if pc >= m.code_len(j) {
            return (0, 0);
        }
        let (off, bits, nregs) = self.regs[j];
        if !self.dense.is_empty() {
            let e = &self.dense[self.first[j] + (pc << bits) + get_bits(s, off, bits) as usize];
            if e.get() == UNKNOWN {
                e.set(self.compute(m, s, j, pc));
            }
            return e.get();
        }
        // The key: the registers' bits as the state holds them (one read
        // when they fit a word), else a byte each.
        let key = if bits > 0 || nregs == 0 {
            get_bits(s, off, bits)
        } else {
            (0..nregs).fold(0, |k, r| k | (m.reg(s, j, r) as u64 & 255) << (8 * r))
        };
        let k = (j as u8, pc as u8, key);
        if let Some(&f) = self.memo.borrow().get(&k) {
            return f;
        }
        let f = self.compute(m, s, j, pc);
        self.memo.borrow_mut().insert(k, f);
        f
    }

    /// [`future`] of invocation `j` at `pc` with its registers at `s`.
    #[cold]
    fn compute(&self, m: &Machine, s: &[u64], j: usize, pc: usize) -> (u64, u64) {
        let mut env: Env = [None; 8];
        for (r, slot) in env.iter_mut().enumerate().take(self.regs[j].2) {
            *slot = Some(m.reg(s, j, r));
        }
        future(m, j, pc, env)
    }

    /// The future cells (written, accessed) of every invocation at `s`,
    /// in invocation order (the rest of the array empty).
    pub fn futures(&self, m: &Machine, s: &[u64]) -> Futures {
        let mut f = [(0, 0); MAX_INVOCATIONS];
        for (j, slot) in f.iter_mut().enumerate().take(m.num_invocations()) {
            *slot = self.of(m, s, j, m.pc(s, j));
        }
        f
    }
}

/// The future cells (written, accessed) of every invocation at one state.
pub type Futures = [(u64, u64); MAX_INVOCATIONS];

/// [`Accesses::futures`] of one state, computed when first needed (most
/// states have no memory step to judge); only with the tables of the
/// partial-order reduction (`None`: it is off, and nothing asks).
pub struct Lazy<'a> {
    acc: Option<&'a Accesses>,
    m: &'a Machine,
    s: &'a [u64],
    /// The pcs of the invocations at `s` ([`View::pc`]).
    pc: &'a [u8; MAX_INVOCATIONS],
    /// The futures known so far (a buffer of the caller's: no copy of
    /// the array per state).
    f: &'a mut Futures,
    /// The invocations whose futures `f` holds.
    known: u32,
}

impl<'a> Lazy<'a> {
    /// Futures at `s` (whose view is `v`), kept in `buf` (its entries
    /// past the invocations must be empty: [`conflicts`] reads them).
    pub fn new(
        acc: Option<&'a Accesses>,
        m: &'a Machine,
        s: &'a [u64],
        v: &'a View,
        buf: &'a mut Futures,
    ) -> Lazy<'a> {
        Lazy {
            acc,
            m,
            s,
            pc: &v.pc,
            f: buf,
            known: 0,
        }
    }

    /// The future cells of invocation `j`.
    #[inline]
    fn of(&mut self, j: usize) -> (u64, u64) {
        if self.known & (1 << j) == 0 {
            let acc = self
                .acc
                .expect("future cells asked for with the reduction on");
            self.f[j] = acc.of(self.m, self.s, j, self.pc[j] as usize);
            self.known |= 1 << j;
        }
        self.f[j]
    }

    pub fn get(&mut self) -> &Futures {
        for j in 0..self.m.num_invocations() {
            self.of(j);
        }
        self.f
    }

    /// Whether the future of some invocation other than `i` conflicts
    /// with an access of `cell` ([`conflicts`] not empty), reading the
    /// futures only up to the first that does. (Unions of every future,
    /// made once a state is asked a second time, cost more: 1-2% more
    /// instructions on the bench's goals.)
    fn any_conflict(&mut self, i: usize, cell: u64, load: bool) -> bool {
        (0..self.m.num_invocations()).any(|j| {
            j != i && {
                let (w, a) = self.of(j);
                (if load { w } else { a }) & cell != 0
            }
        })
    }
}

impl Lazy<'_> {
    /// The invocations of `among` (other than `i`) whose futures
    /// conflict with `i`'s memory instruction `ins` ([`conflicts`]
    /// restricted to them), reading only their futures; `None` where
    /// `ins` is no memory access or its index is out of bounds.
    pub fn conflicts_among(&mut self, i: usize, ins: &Instr, among: u32) -> Option<u32> {
        let (cell, load) = access(self.m, self.s, i, ins)?;
        let mut rest = among & !(1 << i);
        let mut out = 0;
        while rest != 0 {
            let j = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let (w, a) = self.of(j);
            if (if load { w } else { a }) & cell != 0 {
                out |= 1 << j;
            }
        }
        Some(out)
    }
}

/// Whether invocation `i`'s memory instruction `ins` at `s` is one no
/// other invocation can disturb or observe any more, or `blind` holds
/// of it (asked only when needed): [`conflicts`] is empty or `blind`;
/// `false` where `ins` is no memory access or its index is out of
/// bounds.
pub fn unconflicted_or(
    m: &Machine,
    s: &[u64],
    i: usize,
    ins: &Instr,
    fut: &mut Lazy,
    blind: impl FnOnce() -> bool,
) -> bool {
    match access(m, s, i, ins) {
        Some((cell, load)) => blind() || !fut.any_conflict(i, cell, load),
        None => false,
    }
}

/// The cell invocation `i`'s memory instruction `ins` touches at `s`, and
/// whether it only reads it; `None` for an instruction that is not a
/// memory access or an index out of bounds (a fault, not an access).
fn access(m: &Machine, s: &[u64], i: usize, ins: &Instr) -> Option<(u64, bool)> {
    let Instr::Atomic { op, addr, .. } = *ins else {
        return None;
    };
    // The index's value (every register is known at `s`).
    let k = match addr.index {
        Operand::Reg(r) => Some(m.reg(s, i, r as usize)),
        o => operand(m, i, &[None; 8], o),
    };
    let cell = cells(m, i, addr.loc as usize, k);
    (cell != 0).then_some((cell, matches!(op, AtomicOp::Load)))
}

/// The invocations other than `i` whose future (`futures`, from
/// [`Accesses::futures`]) conflicts with `i`'s memory instruction `ins`
/// at `s`: those that may still write its cell (a load) or access it (a
/// write), as a bit set. `None` where `ins` is no memory access or its
/// index is out of bounds.
pub fn conflicts(
    m: &Machine,
    s: &[u64],
    i: usize,
    ins: &Instr,
    futures: &[(u64, u64)],
) -> Option<u32> {
    let (cell, load) = access(m, s, i, ins)?;
    Some(
        futures
            .iter()
            .enumerate()
            .filter(|&(j, &(w, a))| j != i && (if load { w } else { a }) & cell != 0)
            .fold(0, |acc, (j, _)| acc | 1 << j),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::litmus;
    use crate::kernel::machine::set_bits;
    use crate::kernel::model::Mode;

    #[test]
    fn the_future_cells_follow_known_registers_and_forget_loaded_ones() {
        let p = litmus::parse(
            "values 4;\nworkgroups 1;\nglobal x[2];\nglobal y;\nkernel {\n  x[r] = 1;\nl:\n  r = y;\n  y = r;\n  if (r == 0) goto l;\n  load(x[1]);\n}\n",
        )
        .unwrap();
        let m = Machine::new(&p, Mode::Interleaved).unwrap();
        let (x0, x1, y) = (1u64, 2u64, 4u64);
        let env = [Some(0); 8];
        // From the start: x[0] (r is 0) written, x[1] read, y both.
        assert_eq!(future(&m, 0, 0, env), (x0 | y, x0 | x1 | y));
        // From the loop on, x[0] is never touched again.
        assert_eq!(future(&m, 0, 1, env), (y, x1 | y));
        // With r = 1, the first store is x[1].
        let mut one = env;
        one[0] = Some(1);
        assert_eq!(future(&m, 0, 0, one).0, x1 | y);
    }

    /// Conflicts asked of one state in a row (each future read once, when
    /// first needed) are those of every future, on the states of random
    /// walks of a program whose invocations write, read and leave cells.
    #[test]
    fn conflicts_asked_in_a_row_are_those_of_every_future() {
        let p = litmus::parse(
            "values 4;\nworkgroups 4;\nglobal x[4];\nglobal y;\nglobal z;\nkernel {\n  r = wg_id;\n  x[r] = 1;\n  s = y;\n  if (s == 1) goto END;\n  y = r;\n  load(z);\n}\n",
        )
        .unwrap();
        let m = Machine::new(&p, Mode::Interleaved).unwrap();
        let acc = Accesses::new(&m);
        let n = m.num_invocations();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |k: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % k as u64) as usize
        };
        let (mut asked, mut yes) = (0, 0);
        for _ in 0..200 {
            let mut s = [0u64; 4];
            m.init(&mut s);
            for _ in 0..next(24) {
                let mut out = Vec::new();
                let a = next(n);
                m.steps(&s, a, &mut out).unwrap();
                if let Some(&(_, t)) = out.first() {
                    s = t;
                }
            }
            let v = m.view(&s);
            let all = acc.futures(&m, &s);
            let mut buf = [(0, 0); MAX_INVOCATIONS];
            let mut fut = Lazy::new(Some(&acc), &m, &s, &v, &mut buf);
            for _ in 0..6 {
                let (i, cell, load) = (next(n), 1u64 << next(6), next(2) == 0);
                let want =
                    (0..n).any(|j| j != i && (if load { all[j].0 } else { all[j].1 }) & cell != 0);
                assert_eq!(
                    fut.any_conflict(i, cell, load),
                    want,
                    "{s:x?}: {i} {cell:b} {load}"
                );
                asked += 1;
                yes += usize::from(want);
            }
        }
        assert!(yes > asked / 5 && yes < asked * 4 / 5, "{yes} of {asked}");
    }

    /// The table and the hash map remember what [`future`] computes, per
    /// invocation, pc and registers, asked twice each: registers of 4
    /// bits in the table, of 32 bits (8 registers of 4) in the hash map.
    #[test]
    fn remembered_futures_are_computed_ones() {
        let narrow = "values 4;\nworkgroups 2;\nglobal x[4];\nkernel {\nl:\n  x[r] = 1;\n  s = x[s];\n  if (s == 2) goto l;\n  r = s + 1;\n  load(x[r]);\n}\n";
        let wide = "values 16;\nworkgroups 2;\nglobal x[4];\nkernel {\n  a = 1;\n  b = 2;\n  c = 3;\n  d = 0;\n  e = 1;\n  f = 2;\n  x[g] = 1;\n  h = x[h];\n  if (h == g) goto END;\n  load(x[a]);\n}\n";
        for (src, dense) in [(narrow, true), (wide, false)] {
            let p = litmus::parse(src).unwrap();
            let m = Machine::new(&p, Mode::Interleaved).unwrap();
            let acc = Accesses::new(&m);
            assert_eq!(acc.dense.is_empty(), !dense);
            let nregs = acc.regs[0].2;
            let mut asked = 0;
            for round in 0..2 {
                for j in 0..2 {
                    for pc in 0..=m.code_len(j) {
                        // Every value of the first two registers (the
                        // ones addresses and branches read), the rest 0
                        // and 1.
                        for v in 0..16u16 {
                            let mut s = [0u64; 8];
                            let mut env: Env = [None; 8];
                            for (r, e) in env.iter_mut().enumerate().take(nregs) {
                                let x = if r < 2 {
                                    (v >> (2 * r)) & 3
                                } else {
                                    r as u16 & 1
                                };
                                let (off, w) = m.reg_range(j, r);
                                set_bits(&mut s, off, w, x as u64);
                                *e = Some(x);
                            }
                            let want = if pc < m.code_len(j) {
                                future(&m, j, pc, env)
                            } else {
                                (0, 0)
                            };
                            assert_eq!(acc.of(&m, &s, j, pc), want, "{src} round {round}");
                            asked += 1;
                        }
                    }
                }
            }
            assert!(asked > 200);
        }
    }
}
