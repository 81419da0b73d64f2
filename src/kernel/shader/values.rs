//! The value rule (docs/KERNEL.md §10.3): a shader's values are 32-bit,
//! the kernel program's are `b`-bit; a verdict on wrapped values would be
//! a verdict on another program. So every reachable step of the translated
//! program is computed both ways and the program is refused at the first
//! step where they differ.
//!
//! Why this is sound: the explorer visits every state reachable under any
//! schedule (no reduction, every interleaving, and also lockstep subgroups
//! when there are any, which have states of their own). In the initial
//! state every value (0, constants, ids) is its own 32-bit value. If no
//! step taken so far wrapped, every register and cell holds the exact
//! 32-bit value the shader would hold; the next step's operands are then
//! exact, so comparing its `b`-bit result with the 32-bit result of the same
//! operation on them decides whether the step is exact. By induction, a
//! program that passes has, on every schedule, exactly the shader's values,
//! and a program with a wrapping step on some schedule is refused at that
//! step (the first one found in breadth-first order), naming its shader
//! line. Loads, stores, exchanges, compare-exchanges, min, max, and, or,
//! xor, comparisons and collectives cannot leave the domain; add, sub, mul
//! and shifts (in assignments and read-modify-writes) can.

use super::{ShaderError, Span, Translation};
use crate::axb::test::Target;
use crate::kernel::independence::{self, Accesses, Futures, Lazy};
use crate::kernel::machine::{Machine, Packed};
use crate::kernel::program::{
    AtomicOp, BinOp, IdKind, Instr, Operand, Program, RmwOp, MAX_INVOCATIONS, MAX_VALUES,
};
use rustc_hash::FxHashSet;
use std::collections::VecDeque;

/// Checks every reachable step of `t`'s program for a 32-bit result that
/// differs from its `b`-bit one, and for a read of workgroup memory the
/// source language leaves undefined ([`Translation::undefined`]) before
/// any write to it; also reports run-time faults (an index outside its
/// array) at their shader line. A program none of whose instructions can
/// leave the domain, and that has no undefined memory, is not explored.
pub fn check(t: &Translation, max_states: usize) -> Result<(), Refused> {
    let lang = match t.launch.memory.workgroup {
        super::launch::Workgroup::Undefined(lang) => lang,
        _ => "the source language",
    };
    let c = Ctx {
        program: &t.program,
        spans: &t.spans,
        undefined: (t.undefined.iter())
            .map(|(l, n)| (*l, n.as_str()))
            .collect(),
        lang,
        reduce: true,
        max_states,
    };
    c.check()
}

/// [`check`] on a kernel program with no shader behind it (errors name
/// no line), whose locations `undefined` start undefined; with the
/// reductions of docs/KERNEL.md §10.3 or without them (`reduce`): the
/// property tests compare the two.
#[doc(hidden)]
pub fn check_program(
    p: &Program,
    undefined: &[u8],
    max_states: usize,
    reduce: bool,
) -> Result<(), String> {
    let c = Ctx {
        program: p,
        spans: &[],
        undefined: undefined
            .iter()
            .map(|&l| (l, "an undefined location"))
            .collect(),
        lang: "the program",
        reduce,
        max_states,
    };
    c.check().map_err(|e| e.error.msg)
}

/// Why the check refuses a program, and whether a wider domain could
/// help: a step's result wraps modulo the domain but is not negative.
#[derive(Debug)]
pub struct Refused {
    pub error: ShaderError,
    pub wider_helps: bool,
}

impl From<ShaderError> for Refused {
    fn from(error: ShaderError) -> Refused {
        Refused {
            error,
            wider_helps: false,
        }
    }
}

/// What the check reads of a translation, and how it explores.
struct Ctx<'t> {
    program: &'t Program,
    /// The shader line of each instruction (of the only code block).
    spans: &'t [Span],
    /// The locations that start undefined, with their shader names.
    undefined: Vec<(u8, &'t str)>,
    /// The source language, as the undefined-read error names it.
    lang: &'t str,
    /// Whether steps go alone where they may (docs/KERNEL.md §10.3).
    reduce: bool,
    max_states: usize,
}

impl Ctx<'_> {
    fn check(&self) -> Result<(), Refused> {
        let p = self.program;
        // Nothing to explore when no instruction can leave the domain (the
        // oracle still reports an index fault, at its kernel instruction).
        let can_wrap = |i: &Instr| match *i {
            Instr::Assign { op: Some(op), .. } => {
                matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl | BinOp::Shr
                )
            }
            Instr::Atomic {
                op: AtomicOp::Fetch(RmwOp::Add | RmwOp::Sub, _),
                ..
            } => true,
            _ => false,
        };
        if !p.codes.iter().flat_map(|c| &c.instrs).any(can_wrap) && self.undefined.is_empty() {
            return Ok(());
        }
        explore(self, false)?;
        let s = p.subgroup_size as usize;
        if s > 1 && s <= crate::kernel::program::MAX_LOCKSTEP_SUBGROUP {
            explore(self, true)?;
        }
        Ok(())
    }

    /// The shader span of instruction `pc`.
    fn at(&self, pc: usize) -> Span {
        self.spans.get(pc).copied().unwrap_or(Span::UNDEFINED)
    }
}

/// The written bits of the undefined cells a state of the check carries
/// beside the machine's: none, up to 64, or up to 512 (64 cells in 8
/// workgroups, [`crate::kernel::program::MAX_CELLS`]).
trait Written: Copy + Default + Eq + std::hash::Hash {
    fn has(&self, bit: usize) -> bool;
    fn set(&mut self, bit: usize);
}

impl Written for () {
    fn has(&self, _: usize) -> bool {
        unreachable!("a program without undefined cells asks for none")
    }
    fn set(&mut self, _: usize) {
        unreachable!("a program without undefined cells sets none")
    }
}

impl Written for u64 {
    fn has(&self, bit: usize) -> bool {
        *self >> bit & 1 == 1
    }
    fn set(&mut self, bit: usize) {
        *self |= 1 << bit;
    }
}

impl Written for [u64; 8] {
    fn has(&self, bit: usize) -> bool {
        self[bit / 64] >> (bit % 64) & 1 == 1
    }
    fn set(&mut self, bit: usize) {
        self[bit / 64] |= 1 << (bit % 64);
    }
}

/// The undefined cells of a machine: each memory cell's bit, if the cell
/// is undefined at the start, and the shader's name of its variable.
struct Undefined<'t> {
    bit: Vec<Option<(usize, &'t str)>>,
    count: usize,
}

impl<'t> Undefined<'t> {
    fn of(c: &Ctx<'t>, m: &Machine) -> Undefined<'t> {
        let p = c.program;
        let cells: usize = p
            .locations
            .iter()
            .map(|l| l.len() * if l.shared { p.workgroups as usize } else { 1 })
            .sum();
        let mut bit = vec![None; cells];
        let mut count = 0;
        for &(l, name) in &c.undefined {
            let loc = &p.locations[l as usize];
            let copies = if loc.shared { p.workgroups as usize } else { 1 };
            for copy in 0..copies {
                for k in 0..loc.len() {
                    bit[m.cell_of(l as usize, copy, k)] = Some((count, name));
                    count += 1;
                }
            }
        }
        Undefined { bit, count }
    }
}

fn explore(c: &Ctx, lockstep: bool) -> Result<(), Refused> {
    let direct = c.program.direct_for(None, lockstep);
    let m = Machine::with_direct(c.program, lockstep, direct)
        .map_err(|e| ShaderError::new(Span::UNDEFINED, format!("the translated program: {e}")))?;
    let u = Undefined::of(c, &m);
    match u.count {
        0 => explore_with::<()>(c, &m, &u),
        1..=64 => explore_with::<u64>(c, &m, &u),
        _ => explore_with::<[u64; 8]>(c, &m, &u),
    }
}

fn explore_with<W: Written>(c: &Ctx, m: &Machine, u: &Undefined) -> Result<(), Refused> {
    match m.bits().div_ceil(64) {
        0 | 1 => run::<[u64; 1], W>(c, m, u),
        2 => run::<[u64; 2], W>(c, m, u),
        3 => run::<[u64; 3], W>(c, m, u),
        4 => run::<[u64; 4], W>(c, m, u),
        _ => run::<[u64; 7], W>(c, m, u),
    }
}

fn run<S: Packed, W: Written>(c: &Ctx, m: &Machine, u: &Undefined) -> Result<(), Refused> {
    let mut init = S::default();
    m.init(init.as_mut());
    let start = (init, W::default());
    let mut table = Table {
        seen: FxHashSet::default(),
        queue: VecDeque::new(),
        max_states: c.max_states,
    };
    table.store(start)?;
    // Local steps first (docs/KERNEL.md §10.3), but never from a loop
    // head: every cycle of a code block passes one, so no cycle of the
    // exploration is made of steps taken alone, and no step is left out
    // forever. Not where SIMT-Step schedules the lanes, whose local steps
    // another lane's can disable.
    let local_first = c.reduce && m.direct().is_none();
    // Memory steps nobody else can disturb or observe any more, first
    // too, between interleaved invocations (a lockstep step may be many
    // lanes' accesses).
    let acc = (local_first && !m.lockstep()).then(|| Accesses::new(m));
    let mut next = Vec::new();
    let heads = loop_heads(c.program);
    while let Some((s, w)) = table.queue.pop_front() {
        let alone = local_first
            .then(|| first_alone(m, s.as_ref(), &heads, acc.as_ref()))
            .flatten();
        for a in alone.map_or(0..m.num_actors(), |a| a..a + 1) {
            let written = visit(c, m, u, &s, w, a, &mut next)?;
            for (_, n) in next.drain(..) {
                table.store((n, written))?;
            }
        }
    }
    Ok(())
}

/// The states the check has seen, and those it has still to expand.
struct Table<S, W> {
    seen: FxHashSet<(S, W)>,
    queue: VecDeque<(S, W)>,
    max_states: usize,
}

impl<S: Packed, W: Written> Table<S, W> {
    /// Records `x`, to be expanded, unless it was seen before; within the
    /// budget of `--max-states`.
    fn store(&mut self, x: (S, W)) -> Result<(), ShaderError> {
        if self.seen.len() == self.seen.capacity() {
            grow(&mut self.seen, &mut self.queue, self.max_states)?;
        }
        if self.seen.insert(x) {
            if self.seen.len().is_multiple_of(4096) {
                crate::progress::stored(4096);
            }
            if self.seen.len() > self.max_states {
                return Err(ShaderError::new(
                    Span::UNDEFINED,
                    format!(
                        "the value check explored more than {} states: raise --max-states",
                        self.max_states
                    ),
                ));
            }
            self.queue.push_back(x);
        }
        Ok(())
    }
}

/// Per code block, per pc: whether it is a loop head, the target of a
/// jump to it or to an earlier pc. Every cycle of the block's control
/// flow holds such a jump, whose target is on the cycle.
fn loop_heads(p: &Program) -> Vec<Vec<bool>> {
    p.codes
        .iter()
        .map(|c| {
            let mut head = vec![false; c.instrs.len()];
            for (pc, i) in c.instrs.iter().enumerate() {
                if let Some(Target::At(t)) = i.target() {
                    if t as usize <= pc {
                        head[t as usize] = true;
                    }
                }
            }
            head
        })
        .collect()
}

/// The first actor of `s` whose next step may go alone: a local step
/// (registers and pc only), else, with the future accesses `acc` (the
/// invocations interleaved), an arrival at a barrier or a memory step no
/// other invocation can disturb or observe any more
/// ([`independence::unconflicted_or`]); never a step from a loop head.
fn first_alone(
    m: &Machine,
    s: &[u64],
    heads: &[Vec<bool>],
    acc: Option<&Accesses>,
) -> Option<usize> {
    let next = |a: usize| {
        let (pc, i) = m.next_instr(s, a)?;
        let code = m.code_index(m.actor_invocations(a).start);
        (!heads[code][pc]).then_some(i)
    };
    let local = (0..m.num_actors()).find(|&a| next(a).is_some_and(|i| i.is_local()));
    if local.is_some() {
        return local;
    }
    let acc = acc?;
    let v = m.view(s);
    let mut buf: Futures = [(0, 0); MAX_INVOCATIONS];
    let mut fut = Lazy::new(Some(acc), m, s, &v, &mut buf);
    (0..m.num_actors()).find(|&a| {
        next(a).is_some_and(|i| match i {
            Instr::Barrier => true,
            Instr::Atomic { .. } => independence::unconflicted_or(m, s, a, &i, &mut fut, || false),
            _ => false,
        })
    })
}

/// Checks actor `a`'s next step in state `s` (its values, and its read of
/// an undefined cell given the written bits `w`) and puts its successors
/// in `next`; the written bits after the step. Nothing when `a` cannot
/// step.
fn visit<S: Packed, W: Written>(
    c: &Ctx,
    m: &Machine,
    u: &Undefined,
    s: &S,
    w: W,
    a: usize,
    next: &mut Vec<(crate::kernel::machine::StepInfo, S)>,
) -> Result<W, Refused> {
    let at = |pc: usize| c.at(pc);
    let Some((pc, instr)) = m.next_instr(s.as_ref(), a) else {
        return Ok(w);
    };
    let mut written = w;
    let mut done = Vec::new();
    for i in m.stepping_invocations(s.as_ref(), a) {
        let (wg, l, _, _) = m.coords(i);
        if let Some((why, negative)) = wraps(m, s.as_ref(), i, instr, &mut done) {
            let what = if negative {
                "a negative value, which the kernel language's unsigned values cannot hold"
                    .to_string()
            } else if m.program.values == MAX_VALUES {
                format!("the kernel language's values are below {MAX_VALUES}")
            } else {
                "raise --values".to_string()
            };
            return Err(Refused {
                error: ShaderError::new(
                    at(pc),
                    format!("value bound exceeded: {what} (invocation {wg}.{l}: {why})"),
                ),
                wider_helps: !negative,
            });
        }
        let Some((cell, reads, writes)) = access(m, s.as_ref(), i, instr) else {
            continue;
        };
        let Some((bit, name)) = u.bit[cell] else {
            continue;
        };
        if reads && !w.has(bit) {
            return Err(Refused::from(ShaderError::new(
                at(pc),
                format!(
                    "{name} may be read before it is written (invocation {wg}.{l}, on some schedule): {} leaves workgroup memory's initial value undefined, and the tools pick none; write it before any invocation reads it (a barrier between), or, where the launch zeroes it (VK_KHR_zero_initialize_workgroup_memory), say so with --workgroup-memory zero",
                    c.lang
                ),
            )));
        }
        if writes {
            written.set(bit);
        }
    }
    m.steps(s, a, next).map_err(|f| {
        ShaderError::new(
            at(f.pc),
            format!("run-time fault: invocation {}.{}: {}", f.wg, f.local, f.msg),
        )
    })?;
    Ok(written)
}

/// The memory cell invocation `i`'s step `instr` accesses, whether the
/// step reads it (its old value reaches a register, a branch or the new
/// value: a load kept, a read-modify-write, a compare-exchange, an
/// exchange whose old value is kept) and whether it surely writes it (a
/// store, an exchange). `None` for a step without memory, or with an
/// index past its array (that step faults, and is reported as a fault).
fn access(m: &Machine, s: &[u64], i: usize, instr: Instr) -> Option<(usize, bool, bool)> {
    let Instr::Atomic {
        op,
        addr,
        dst,
        branch,
    } = instr
    else {
        return None;
    };
    let p = &m.program;
    let loc = &p.locations[addr.loc as usize];
    let k = operand(m, s, i, addr.index) as usize;
    if k >= loc.len() {
        return None;
    }
    let copy = if loc.shared { m.coords(i).0 } else { 0 };
    let kept = dst.is_some() || branch.is_some();
    let (reads, writes) = match op {
        AtomicOp::Load => (kept, false),
        AtomicOp::Store(_) => (false, true),
        AtomicOp::Exchange(_) => (kept, true),
        AtomicOp::CompareExchange(..) | AtomicOp::Fetch(..) => (true, false),
    };
    Some((m.cell_of(addr.loc as usize, copy, k), reads, writes))
}

/// The value of operand `o` for invocation `i` in state `s`.
fn operand(m: &Machine, s: &[u64], i: usize, o: Operand) -> u16 {
    match o {
        Operand::Reg(r) => m.reg(s, i, r as usize),
        Operand::Imm(v) => v,
        Operand::Id(k) => {
            let (w, l, _, lane) = m.coords(i);
            (match k {
                IdKind::WgId => w,
                IdKind::LocalId => l,
                IdKind::SubgroupId => l / m.program.subgroup_size.max(1) as usize,
                IdKind::LaneId => lane,
            }) as u16
        }
    }
}

/// Doubles the table of seen states (and makes room in the queue) within
/// the byte budget of `max_states` ([`crate::kernel::budget`]), or refuses:
/// past the budget, or when the system refuses the memory (an abort, once,
/// under a 3 GB address space).
fn grow<S: Copy + Eq + std::hash::Hash>(
    seen: &mut FxHashSet<S>,
    queue: &mut VecDeque<S>,
    max_states: usize,
) -> Result<(), ShaderError> {
    let more = seen.capacity().max(1024);
    // A hash table's slot is a state and a control byte; the queue holds
    // at most as many states as the table.
    let wanted = (seen.capacity() + more) * (2 * std::mem::size_of::<S>() + 1);
    let limit = crate::kernel::budget::budget(max_states);
    let refuse = |why: &str, advice: &str| {
        Err(ShaderError::new(
            Span::UNDEFINED,
            format!(
                "the value check's tables {why} ({} MiB, the budget of --max-states {max_states} being {} MiB): {advice}, or shrink the program",
                wanted >> 20,
                limit >> 20
            ),
        ))
    };
    if wanted > limit {
        return refuse("would pass their budget", "raise --max-states");
    }
    // The queue never holds more states than the table; the table may get
    // more room than asked (a hash table rounds up), so the queue is given
    // as much, and no push can reallocate it outside this check.
    if seen.try_reserve(more).is_err()
        || queue
            .try_reserve(seen.capacity().saturating_sub(queue.len()))
            .is_err()
    {
        return refuse(
            "could not grow: the system refused the memory",
            "lower --max-states, run fewer inputs at once",
        );
    }
    Ok(())
}

/// Why invocation `i`'s next step `instr` in state `s` has a 32-bit result
/// other than its `b`-bit one, if it does, and whether the exact result
/// is negative (no domain holds it).
///
/// `done` holds the cells the lanes before `i` in the same lockstep step
/// have added to or subtracted from, with their new values: the lanes'
/// read-modify-writes happen one after the other, and the machine takes
/// them in every order, of which lane order is one where a wrap shows if
/// one does in any (the partial sums of one sign only grow away from the
/// start). `i`'s own such access is added to it.
fn wraps(
    m: &Machine,
    s: &[u64],
    i: usize,
    instr: Instr,
    done: &mut Vec<(usize, u16)>,
) -> Option<(String, bool)> {
    let p: &Program = &m.program;
    let ev = |o: Operand| operand(m, s, i, o);
    let (op, x, y, cell) = match instr {
        Instr::Assign {
            op: Some(op), a, b, ..
        } => (op, ev(a), ev(b), None),
        Instr::Atomic {
            op: AtomicOp::Fetch(f @ (RmwOp::Add | RmwOp::Sub), v),
            addr,
            ..
        } => {
            let (loc, k) = (addr.loc as usize, ev(addr.index) as usize);
            let old = cell_value(m, s, i, loc, k)?;
            let l = &p.locations[loc];
            let cell = m.cell_of(loc, if l.shared { m.coords(i).0 } else { 0 }, k);
            let old = done.iter().find(|d| d.0 == cell).map_or(old, |d| d.1);
            let op = if f == RmwOp::Add {
                BinOp::Add
            } else {
                BinOp::Sub
            };
            (op, old, ev(v), Some(cell))
        }
        _ => return None,
    };
    let (a, b) = (x as u32, y as u32);
    let exact = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Shl => a.wrapping_shl(b),
        BinOp::Shr => a.wrapping_shr(b),
        _ => return None,
    };
    let small = op.eval(x, y, p.values);
    if let Some(cell) = cell {
        done.retain(|d| d.0 != cell);
        done.push((cell, small));
    }
    (exact != small as u32).then(|| {
        let why = format!(
            "{x} {} {y} is {exact} in 32 bits but {small} modulo {}",
            op.symbol(),
            p.values
        );
        (why, op == BinOp::Sub && a < b)
    })
}

/// The value of cell `k` of location `loc` as invocation `i` sees it
/// (`None` past the end: that step faults and is reported as a fault).
fn cell_value(m: &Machine, s: &[u64], i: usize, loc: usize, k: usize) -> Option<u16> {
    let l = &m.program.locations[loc];
    if k >= l.len() {
        return None;
    }
    let copy = if l.shared { m.coords(i).0 } else { 0 };
    Some(m.mem(s, m.cell_of(loc, copy, k)))
}
