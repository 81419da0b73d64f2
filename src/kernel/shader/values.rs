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
//!
//! With two's complement values ([`Translation::sext`]: a `b`-bit value
//! stands for the 32-bit value that repeats its top bit), the same
//! argument holds with "the 32-bit value the `b`-bit result stands for";
//! the signed `>>`, `/` and `%` the translation made unsigned
//! instructions are computed as the shader computes them ([`Exact`]).
//! docs/KERNEL.md §10.3 argues each operation.

mod barriers;
mod races;

use super::{ShaderError, Span, Translation};
use crate::axb::test::Target;
use crate::kernel::independence::{self, Accesses, Futures, Lazy};
use crate::kernel::machine::{Machine, Packed};
use crate::kernel::model::Mode;
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
///
/// `Ok(Some(e))`: on some schedule, in GLSL or SPIR-V, an invocation
/// waits at a barrier that another invocation of its workgroup passes by
/// (`e` says where and how): undefined behaviour, under which no model
/// guarantees termination, and a deadlock of the kernel program, so that
/// its verdicts are F under every model; the launch line says why
/// ([`Translation::undefined_barrier`]). WGSL refuses such a shader.
pub fn check(t: &Translation, source: &'static str, max_states: usize) -> Found {
    let lang = match t.launch.memory.workgroup {
        super::launch::Workgroup::Undefined(lang) => lang,
        _ => "the source language",
    };
    let c = Ctx {
        program: &t.program,
        spans: &t.spans,
        exact: &t.exact,
        sext: t.sext,
        undefined: (t.undefined.iter())
            .map(|(l, n)| (*l, n.as_str()))
            .collect(),
        lang,
        barriers: barriers::crossed(&t.program).then_some(source),
        source: &t.source,
        plain: &t.plain,
        back_edges: &t.back_edges,
        language: source,
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
        exact: &[],
        sext: false,
        undefined: undefined
            .iter()
            .map(|&l| (l, "an undefined location"))
            .collect(),
        lang: "the program",
        barriers: barriers::crossed(p).then_some("the kernel language"),
        source: "",
        plain: &[],
        back_edges: &[],
        language: "the kernel language",
        reduce,
        max_states,
    };
    match c.check() {
        Ok(f) => f.undefined_barrier.map_or(Ok(()), |e| Err(e.msg)),
        Err(e) => Err(e.error.msg),
    }
}

/// Why the check refuses a program, and whether a wider domain could
/// help (a step's result wraps modulo the domain, but a domain of 256
/// values holds it), or two's complement values (a step's exact result
/// is negative, which unsigned values cannot hold: docs/KERNEL.md §10.3).
#[derive(Debug)]
pub struct Refused {
    pub error: ShaderError,
    pub wider_helps: bool,
    pub sext_helps: bool,
    /// The exploration ran past `--max-states` or the memory budget.
    pub budget: bool,
}

impl From<ShaderError> for Refused {
    fn from(error: ShaderError) -> Refused {
        Refused {
            error,
            wider_helps: false,
            sext_helps: false,
            budget: false,
        }
    }
}

/// The integer the `b`-bit value `v` of a domain of `values` stands
/// for: `v` itself, or with two's complement values (`sext`) `v -
/// values` from half the domain up (docs/KERNEL.md §10.3). The
/// translation and the check read values through this one function.
pub fn stands_for(v: u16, values: u16, sext: bool) -> i64 {
    let (v, values) = (i64::from(v), i64::from(values));
    if sext && 2 * v >= values {
        v - values
    } else {
        v
    }
}

/// How to read the two's complement values of a domain of `values`, as
/// every output that shows them says it.
pub fn reading(values: u16) -> String {
    let half = values / 2;
    format!(
        "values are two's complement: {half} to {} stand for -{half} to -1",
        values - 1
    )
}

/// How the check computes an instruction's 32-bit result where the
/// shader's operation is not the kernel instruction's on two's
/// complement values (docs/KERNEL.md §10.3): a signed `>>` shifts the
/// sign in, a signed `/` and `%` by a power of two round toward zero,
/// where the kernel's `>>` and `&` are unsigned. On unsigned values, and
/// on non-negative signed ones, they agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Exact {
    /// The kernel instruction's own operation.
    #[default]
    Same,
    /// `>>` of an `i32`: arithmetic.
    ShrSigned,
    /// `/ 2^k` of an `i32`, translated as `>> k`.
    DivSigned,
    /// `% 2^k` of an `i32`, translated as `& (2^k - 1)`.
    RemSigned,
}

/// What the check reads of a translation, and how it explores.
struct Ctx<'t> {
    program: &'t Program,
    /// The shader line of each instruction (of the only code block).
    spans: &'t [Span],
    /// The shader's operation of each instruction, where it is not the
    /// instruction's own (none past the end: the same).
    exact: &'t [Exact],
    /// Values are two's complement: a `b`-bit value `v` stands for the
    /// 32-bit value with `v`'s top bit repeated (so `2^b - 1` is -1, or
    /// 4294967295 as a `u32`); else for `v` itself.
    sext: bool,
    /// The locations that start undefined, with their shader names.
    undefined: Vec<(u8, &'t str)>,
    /// The source language, as the undefined-read error names it.
    lang: &'t str,
    /// The source language, where the program has a barrier a jump
    /// crosses: the check then refuses it where not every invocation of
    /// a workgroup reaches a barrier ([`barriers`]).
    barriers: Option<&'t str>,
    /// The shader's text (empty for SPIR-V), for the lines errors name.
    source: &'t str,
    /// Which instructions are the shader's plain accesses
    /// ([`Translation::plain`]; none for a program without a shader).
    plain: &'t [bool],
    /// The source language (WGSL, GLSL, SPIR-V), as races name it.
    language: &'t str,
    /// Which instructions are the back edges of the shader's loops
    /// ([`Translation::back_edges`]; for a program without a shader, every
    /// jump to the same or an earlier pc is one).
    back_edges: &'t [Option<u16>],
    /// Whether steps go alone where they may (docs/KERNEL.md §10.3).
    reduce: bool,
    max_states: usize,
}

impl Ctx<'_> {
    /// [`Ctx::explore_all`]; where the races' bits take it past the
    /// budget, again without them (the translation's warning about plain
    /// accesses then stands: docs/KERNEL.md §10.2, *Races*).
    fn check(&self) -> Found {
        match self.explore_all() {
            Err(e) if e.budget && races::tracks(self.program, self.plain) => Ctx {
                plain: &[],
                undefined: self.undefined.clone(),
                ..*self
            }
            .explore_all(),
            found => found,
        }
    }

    fn explore_all(&self) -> Found {
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
        let reads_signed = self.exact.iter().any(|e| *e != Exact::Same);
        if !p.codes.iter().flat_map(|c| &c.instrs).any(can_wrap)
            && !reads_signed
            && self.undefined.is_empty()
            && self.barriers.is_none()
            && !races::tracks(p, self.plain)
        {
            return Ok(Findings::default());
        }
        let found = explore(self, Mode::Interleaved)?;
        let s = p.subgroup_size as usize;
        if s > 1 && s <= crate::kernel::program::MAX_LOCKSTEP_SUBGROUP {
            return Ok(found.merge(explore(self, Mode::Lockstep)?));
        }
        Ok(found)
    }

    /// A run-time fault `f` found by the exploration, at its shader line,
    /// saying how to read two's complement values.
    fn fault(&self, f: &crate::kernel::machine::Fault) -> ShaderError {
        let read = if self.sext {
            format!(" ({})", reading(self.program.values))
        } else {
            String::new()
        };
        ShaderError::new(
            self.at(f.pc),
            format!(
                "run-time fault: invocation {}.{}: {}{read}",
                f.wg, f.local, f.msg
            ),
        )
    }

    /// The shader span of instruction `pc`.
    fn at(&self, pc: usize) -> Span {
        self.spans.get(pc).copied().unwrap_or(Span::UNDEFINED)
    }
}

/// The bits a state of the check carries beside the machine's: the
/// written bits of the undefined cells, then the loop fields of
/// [`barriers::Loops`]; none, up to 64, 512 or 1024.
trait Written: Copy + Default + Eq + std::hash::Hash {
    fn has(&self, bit: usize) -> bool;
    fn set_to(&mut self, bit: usize, v: bool);
    fn set(&mut self, bit: usize) {
        self.set_to(bit, true)
    }
    /// The `w`-bit field at bit `off`.
    fn get(&self, off: usize, w: usize) -> u64 {
        (0..w).fold(0, |v, k| v | u64::from(self.has(off + k)) << k)
    }
    fn put(&mut self, off: usize, w: usize, v: u64) {
        for k in 0..w {
            self.set_to(off + k, v >> k & 1 == 1);
        }
    }
}

impl Written for () {
    fn has(&self, _: usize) -> bool {
        unreachable!("a program without undefined cells or counted loops asks for none")
    }
    fn set_to(&mut self, _: usize, _: bool) {
        unreachable!("a program without undefined cells or counted loops sets none")
    }
}

impl Written for u64 {
    fn has(&self, bit: usize) -> bool {
        *self >> bit & 1 == 1
    }
    fn set_to(&mut self, bit: usize, v: bool) {
        *self = *self & !(1 << bit) | u64::from(v) << bit;
    }
}

impl<const N: usize> Written for [u64; N]
where
    [u64; N]: Default,
{
    fn has(&self, bit: usize) -> bool {
        self[bit / 64] >> (bit % 64) & 1 == 1
    }
    fn set_to(&mut self, bit: usize, v: bool) {
        let w = &mut self[bit / 64];
        *w = *w & !(1 << (bit % 64)) | u64::from(v) << (bit % 64);
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

/// What the check found that the translation keeps: the first barrier
/// in non-uniform control flow where the language leaves it undefined
/// ([`check`]), and the plain accesses no barrier orders with a
/// conflicting access of another invocation (docs/KERNEL.md §10.2,
/// *Races*).
#[derive(Debug, Default)]
pub struct Findings {
    pub undefined_barrier: Option<ShaderError>,
    /// Per location and pc of the access found, the race, in words.
    pub races: std::collections::BTreeMap<(u8, usize), String>,
    /// Whether the check looked for those races (it does where the
    /// shader has plain accesses of memory something writes, within
    /// the bits it carries for them, and the budget).
    pub races_tracked: bool,
}

impl Findings {
    fn merge(mut self, other: Findings) -> Findings {
        self.undefined_barrier = self.undefined_barrier.or(other.undefined_barrier);
        for (k, v) in other.races {
            self.races.entry(k).or_insert(v);
        }
        self.races_tracked |= other.races_tracked;
        self
    }
}

/// The check of `mode`'s executions ([`check`]).
type Found = Result<Findings, Refused>;

fn explore(c: &Ctx, mode: Mode) -> Found {
    let m = Machine::new(c.program, c.program.mode_for(mode))
        .map_err(|e| ShaderError::new(Span::UNDEFINED, format!("the translated program: {e}")))?;
    let u = Undefined::of(c, &m);
    let loops = barriers::Loops::of(c.program, c.barriers.is_some(), c.back_edges, u.count);
    let base = u.count + loops.bits(m.num_invocations());
    let mut races = races::Tracked::of(&m, c.plain, base);
    if races.bits() > races::MAX_BITS {
        races = races::Tracked::none(base);
    }
    let x = Extra { u, loops, races };
    match base + x.races.bits() {
        0 => explore_with::<()>(c, &m, &x),
        1..=64 => explore_with::<u64>(c, &m, &x),
        65..=512 => explore_with::<[u64; 8]>(c, &m, &x),
        1025.. => Err(Refused::from(ShaderError::new(
            Span::UNDEFINED,
            "the value check cannot follow this many loops around barriers a jump crosses in this many invocations: launch fewer invocations".to_string(),
        ))),
        _ => explore_with::<[u64; 16]>(c, &m, &x),
    }
}

/// What a state of the check carries beside the machine's state.
struct Extra<'t> {
    u: Undefined<'t>,
    loops: barriers::Loops,
    races: races::Tracked,
}

fn explore_with<W: Written>(c: &Ctx, m: &Machine, x: &Extra) -> Found {
    match m.bits().div_ceil(64) {
        0 | 1 => run::<[u64; 1], W>(c, m, x),
        2 => run::<[u64; 2], W>(c, m, x),
        3 => run::<[u64; 3], W>(c, m, x),
        4 => run::<[u64; 4], W>(c, m, x),
        _ => run::<[u64; 7], W>(c, m, x),
    }
}

fn run<S: Packed, W: Written>(c: &Ctx, m: &Machine, x: &Extra) -> Found {
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
    let mut found = Findings {
        races_tracked: x.races.any(),
        ..Findings::default()
    };
    while let Some((s, w)) = table.queue.pop_front() {
        let alone = local_first
            .then(|| first_alone(m, s.as_ref(), &heads, acc.as_ref()))
            .flatten();
        for a in alone.map_or(0..m.num_actors(), |a| a..a + 1) {
            let written = visit(c, m, x, (&s, w), a, &mut next, &mut found)?;
            for (info, n) in next.drain(..) {
                let w = successor(c, m, x, (&s, &n), (a, &info), written, &mut found)?;
                table.store((n, w))?;
            }
        }
    }
    Ok(found)
}

/// The extra bits of successor `n` of `s` by actor `a`'s step `info`
/// (the written bits `w` after the step, the loop fields updated, the
/// race bits of a workgroup whose barrier completed cleared), or the
/// refusal of a barrier in non-uniform control flow it reaches. A
/// barrier some invocation passes by, where the language leaves it
/// undefined (GLSL, SPIR-V), is put in `found` (the first one) instead.
fn successor<S: Packed, W: Written>(
    c: &Ctx,
    m: &Machine,
    x: &Extra,
    (s, n): (&S, &S),
    (a, info): (usize, &crate::kernel::machine::StepInfo),
    mut w: W,
    found: &mut Findings,
) -> Result<W, Refused> {
    let completed = barriers::completed(m, (s.as_ref(), n.as_ref()), (a, info));
    if let (Some(done), true) = (completed, x.races.any()) {
        x.races.completed(&mut w, done.wg);
    }
    let Some(lang) = c.barriers else {
        return Ok(w);
    };
    // Not in lockstep, whose reconvergence at the immediate
    // post-dominator may leave lanes apart that the shader's structure
    // reconverges before the barrier (a deadlock of that model, not of
    // the shader: its F verdicts stand, but no note blames the shader).
    if found.undefined_barrier.is_none() && !m.lockstep() {
        if let Some(u) = barriers::unmatched(m, n.as_ref()) {
            match lang {
                "GLSL" | "SPIR-V" => found.undefined_barrier = Some(c.undefined(m, lang, &u)),
                _ => return Err(c.unmatched(m, lang, &u)),
            }
        }
    }
    (x.loops
        .after(m, (s.as_ref(), n.as_ref()), (a, info), completed, w))
    .map_err(|i| c.instance(m, lang, i))
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
    fn store(&mut self, x: (S, W)) -> Result<(), Refused> {
        let over = |error| Refused {
            budget: true,
            ..Refused::from(error)
        };
        if self.seen.len() == self.seen.capacity() {
            grow(&mut self.seen, &mut self.queue, self.max_states).map_err(over)?;
        }
        if self.seen.insert(x) {
            if self.seen.len().is_multiple_of(4096) {
                crate::progress::stored(4096);
            }
            if self.seen.len() > self.max_states {
                return Err(over(ShaderError::new(
                    Span::UNDEFINED,
                    format!(
                        "the value check explored more than {} states: raise --max-states",
                        self.max_states
                    ),
                )));
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
    x: &Extra,
    (s, w): (&S, W),
    a: usize,
    next: &mut Vec<(crate::kernel::machine::StepInfo, S)>,
    found: &mut Findings,
) -> Result<W, Refused> {
    let u = &x.u;
    let at = |pc: usize| c.at(pc);
    let Some((pc, instr)) = m.next_instr(s.as_ref(), a) else {
        return Ok(w);
    };
    let mut written = w;
    let mut done = Vec::new();
    for i in m.stepping_invocations(s.as_ref(), a) {
        let (wg, l, _, _) = m.coords(i);
        if let Some(w) = wraps(c, m, s.as_ref(), (i, pc), instr, &mut done) {
            let what = if let Some(never) = w.never {
                never.to_string()
            } else if w.negative {
                "a negative value below -128, which the kernel language's values (unsigned, or two's complement from -128 up) cannot hold"
                    .to_string()
            } else if c.sext && (!w.wider_helps || m.program.values == MAX_VALUES) {
                format!("the kernel language's values are below {MAX_VALUES}, which as two's complement values are -128 to 127")
            } else if m.program.values == MAX_VALUES {
                format!("the kernel language's values are below {MAX_VALUES}")
            } else {
                "raise --values".to_string()
            };
            return Err(Refused {
                error: ShaderError::new(
                    at(pc),
                    format!(
                        "value bound exceeded: {what} (invocation {wg}.{l}: {})",
                        w.why
                    ),
                ),
                wider_helps: w.wider_helps,
                sext_helps: w.sext_helps,
                budget: false,
            });
        }
        let Some((cell, reads, writes)) = access(m, s.as_ref(), i, instr) else {
            continue;
        };
        if x.races.any() {
            let plain = c.plain.get(pc).copied().unwrap_or(false);
            let a = races::Access::of(instr, cell, plain);
            if let Some(r) = x.races.access(&mut written, (i, wg), a) {
                let Instr::Atomic { addr, .. } = instr else {
                    unreachable!("an access is an atomic instruction")
                };
                (found.races.entry((addr.loc, pc))).or_insert_with(|| r.describe(c.language));
            }
        }
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
    m.steps(s, a, next).map_err(|f| c.fault(&f))?;
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

/// A step whose 32-bit result its `b`-bit one does not stand for: why,
/// and whether a wider domain, or two's complement values, could hold it.
struct Wrap {
    why: String,
    /// What no domain can do, where that is why.
    never: Option<&'static str>,
    negative: bool,
    wider_helps: bool,
    sext_helps: bool,
}

/// A cell that lanes of one lockstep step add to or subtract from, as the
/// lanes so far left it: its value in lane order, and the most and least
/// it reaches in any order of them (the partial sums).
struct Lanes {
    cell: usize,
    now: u16,
    hi: i64,
    lo: i64,
}

/// Why invocation `i`'s next step `instr` (at `pc`) in state `s` has a
/// 32-bit result other than the one its `b`-bit result stands for, if it
/// does.
///
/// `done` holds the cells the lanes before `i` in the same lockstep step
/// have added to or subtracted from: the lanes' read-modify-writes happen
/// one after the other, and the machine takes them in every order. Each
/// lane's is evaluated on the cell as the lanes before it left it, in
/// lane order, and the highest and lowest partial sums any order reaches
/// (the start plus every positive, or every negative, change so far) must
/// be values too: with changes of one sign, as unsigned values have, the
/// lane-order sums reach them.
fn wraps(
    c: &Ctx,
    m: &Machine,
    s: &[u64],
    (i, pc): (usize, usize),
    instr: Instr,
    done: &mut Vec<Lanes>,
) -> Option<Wrap> {
    let p: &Program = &m.program;
    let (op, x, y, cell) = step_operands(c, m, s, i, instr, done)?;
    let kind = c.exact.get(pc).copied().unwrap_or_default();
    let (a, b) = (c.wide(x), c.wide(y));
    let exact = shader_result(op, kind, a, b)?;
    let small = op.eval(x, y, p.values);
    let sym = match kind {
        Exact::DivSigned => "/".to_string(),
        Exact::RemSigned => "%".to_string(),
        _ => op.symbol().to_string(),
    };
    let ys = match kind {
        Exact::DivSigned => (1u64 << (b & 31)).to_string(),
        Exact::RemSigned => (u64::from(b) + 1).to_string(),
        _ => c.show(y),
    };
    let xs = c.show(x);
    let never = (kind != Exact::Same && c.int(x) < 0).then_some(
        "a signed `>>`, `/` or `%` of a negative value, which the kernel language's unsigned `>>` and `&` do not compute",
    );
    let wrap = |reached: u32, why: String| Wrap {
        why,
        never,
        negative: !c.sext && op == BinOp::Sub && a < b,
        wider_helps: if c.sext {
            never.is_none() && (-128..128).contains(&(reached as i32))
        } else {
            !(op == BinOp::Sub && a < b)
        },
        sext_helps: !c.sext && (-128..0).contains(&(reached as i32)),
    };
    if exact != c.wide(small) {
        let shown = if c.sext {
            (exact as i32).to_string()
        } else {
            exact.to_string()
        };
        let why = format!(
            "{xs} {sym} {ys} is {shown} in 32 bits but {} modulo {}",
            c.show(small),
            p.values
        );
        return Some(wrap(exact, why));
    }
    let cell = cell?;
    let d = done.iter_mut().find(|d| d.cell == cell)?;
    let change = c.int(small) - d.int_now(c);
    d.now = small;
    if change >= 0 {
        d.hi += change;
    } else {
        d.lo += change;
    }
    let (min, max) = c.range();
    let out = [d.hi, d.lo]
        .into_iter()
        .find(|v| !(min..=max).contains(v))?;
    let why = format!(
        "the lanes' read-modify-writes of one step reach {out} when taken in another order, outside the domain of {} values",
        p.values
    );
    Some(wrap(out as i32 as u32, why))
}

/// The operation of invocation `i`'s step `instr` in state `s` that can
/// leave the domain, its operands, and for a read-modify-write its cell,
/// whose value is the one the lanes before `i` in `done` left it (entered
/// there at the first lane). `None` for any other step.
fn step_operands(
    c: &Ctx,
    m: &Machine,
    s: &[u64],
    i: usize,
    instr: Instr,
    done: &mut Vec<Lanes>,
) -> Option<(BinOp, u16, u16, Option<usize>)> {
    let p: &Program = &m.program;
    let ev = |o: Operand| operand(m, s, i, o);
    Some(match instr {
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
            if !done.iter().any(|d| d.cell == cell) {
                let v = c.int(old);
                done.push(Lanes {
                    cell,
                    now: old,
                    hi: v,
                    lo: v,
                });
            }
            let old = done.iter().find(|d| d.cell == cell).map_or(old, |d| d.now);
            let op = if f == RmwOp::Add {
                BinOp::Add
            } else {
                BinOp::Sub
            };
            (op, old, ev(v), Some(cell))
        }
        _ => return None,
    })
}

/// The 32-bit result of the shader's operation behind `op` (read as
/// `kind` says) on the 32-bit values `a` and `b`, for an operation that
/// can leave the domain; `None` for one that cannot.
fn shader_result(op: BinOp, kind: Exact, a: u32, b: u32) -> Option<u32> {
    let signed = |v: u32| i64::from(v as i32);
    Some(match (op, kind) {
        (BinOp::Add, _) => a.wrapping_add(b),
        (BinOp::Sub, _) => a.wrapping_sub(b),
        (BinOp::Mul, _) => a.wrapping_mul(b),
        (BinOp::Shl, _) => a.wrapping_shl(b),
        (BinOp::Shr, Exact::ShrSigned) => (a as i32).wrapping_shr(b) as u32,
        (BinOp::Shr, Exact::DivSigned) => (signed(a) / (1i64 << (b & 31))) as u32,
        (BinOp::Shr, _) => a.wrapping_shr(b),
        (BinOp::And, Exact::RemSigned) => (signed(a) % (i64::from(b) + 1)) as u32,
        _ => return None,
    })
}

impl Lanes {
    fn int_now(&self, c: &Ctx) -> i64 {
        c.int(self.now)
    }
}

impl Ctx<'_> {
    /// The 32-bit value a `b`-bit value stands for.
    fn wide(&self, v: u16) -> u32 {
        self.int(v) as i32 as u32
    }

    /// The value a `b`-bit value stands for, as an integer (two's
    /// complement ones may be negative).
    fn int(&self, v: u16) -> i64 {
        stands_for(v, self.program.values, self.sext)
    }

    /// The least and greatest value a `b`-bit value stands for.
    fn range(&self) -> (i64, i64) {
        let values = i64::from(self.program.values);
        if self.sext {
            (-values / 2, values / 2 - 1)
        } else {
            (0, values - 1)
        }
    }

    /// A `b`-bit value as the shader sees it (two's complement ones that
    /// stand for a negative value, as that).
    fn show(&self, v: u16) -> String {
        self.int(v).to_string()
    }
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
