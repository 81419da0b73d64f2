//! Kernel programs (docs/KERNEL.md: workgroups of invocations, barriers,
//! read-modify-writes, registers, branches, ids) as CUDA, GLSL and WGSL,
//! so that an idiom the oracle checks can be run on a device.
//!
//! **One file per program, one instance.** A program is launched as its
//! `workgroups` workgroups of `workgroup_size` invocations (CUDA: blocks
//! of threads); global locations live in binding 0 (CUDA: `mem`), laid out
//! in declaration order, initialised by the host from the `axb-kernel:`
//! first line; shared locations are workgroup memory, initialised by
//! invocation 0 before a barrier.
//!
//! **Lowering.** Every instruction is one `case` of a pc dispatch loop,
//! as in the AXB targets; each loop iteration first checks the target's
//! termination detection (CUDA and GLSL: the host's stop flag; WGSL: the
//! iteration budget and the `exhausted` counter of [`crate::target::wgsl`]).
//! A barrier that no jump crosses (no jump from before it to after it or
//! from after it to before it) is *top-level*: the dispatch loop is split
//! there and the barrier is emitted between the loops, in uniform control
//! flow, which every invocation reaches exactly once, also after being
//! stopped. Any other barrier sits in control flow that depends on the
//! invocation: CUDA and GLSL emit it in its `case` (the oracle reports
//! such programs as deadlocking, a device may hang or misbehave: the stop
//! flag cannot end an invocation waiting at it); WGSL refuses the program,
//! as naga's uniformity analysis would reject the shader.
//!
//! **Values.** Registers hold values of the domain `0..V` (masked after
//! every operation). A memory cell holds a value congruent to its value
//! modulo `V` (reads mask), so that `fetch_add`/`sub` can be the device's
//! own wrapping `atomicAdd`; on a location that is also the target of a
//! compare-exchange, `fetch_min` or `fetch_max` (which need the exact
//! value) every `fetch_add`/`sub` is a compare-exchange loop instead, and
//! the cell always holds its exact value.
//!
//! Ends: binding 1 (CUDA: `ends`) counts the invocations that reached END
//! (`finished`) and those that left their loop because of the termination
//! detection (`stopped`): a run terminated iff `finished` is
//! `workgroups * workgroup_size`.

use progress_litmus::axb::test::Target as Jump;
use progress_litmus::kernel::cfg;
use progress_litmus::kernel::litmus;
use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::program::{
    Addr, AtomicOp, BinOp, Cmp, CollectiveOp, CondBranch, IdKind, Instr, Operand, Program, RmwOp,
};
use std::fmt::Write;

use crate::target::cuda::Cuda;
use crate::target::glsl::Glsl;
use crate::target::language::Syntax;
use crate::target::language::{Atomic, KernelFile, KernelLanguage};
use crate::target::wgsl::Wgsl;

pub use crate::target::language::Lang;

impl Lang {
    /// The language object that spells it (`crate::target::language`):
    /// the one place a kernel language is chosen.
    pub fn language(self) -> &'static dyn KernelLanguage {
        match self {
            Lang::Cuda => &Cuda,
            Lang::Glsl => &Glsl,
            Lang::Wgsl => &Wgsl,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        self.language().name()
    }

    /// The file extension of the emitted file.
    pub fn extension(self) -> &'static str {
        self.language().extension()
    }

    /// Whether its statements are WGSL's (`let`, `select`, `loop`).
    pub(crate) fn wgsl(self) -> bool {
        self.language().syntax() == Syntax::Wgsl
    }
}

/// The pieces of a code block: maximal runs of instructions between
/// top-level barriers (`Segment`), and the barriers.
#[derive(Debug, PartialEq, Eq)]
struct Segments {
    /// `(start, end)`: pcs `start..end` run in one dispatch loop; a
    /// top-level barrier sits at `end` unless `end` is the block's length.
    ranges: Vec<(usize, usize)>,
}

fn segments(instrs: &[Instr]) -> Segments {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (pc, i) in instrs.iter().enumerate() {
        if *i == Instr::Barrier && cfg::top_level(instrs, pc) {
            ranges.push((start, pc));
            start = pc + 1;
        }
    }
    ranges.push((start, instrs.len()));
    Segments { ranges }
}

pub mod bare;
pub mod simt;
pub mod simt_page;

/// Why a program cannot be emitted for a target.
pub fn refusal(p: &NamedProgram, lang: Lang) -> Option<String> {
    refusal_in(p, lang, false)
}

/// [`refusal`] for the run form, or for the bare form (`bare`), whose
/// collectives are the language's own subgroup operations.
pub(crate) fn refusal_in(p: &NamedProgram, lang: Lang, bare: bool) -> Option<String> {
    let prog = &p.program;
    for (c, code) in prog.codes.iter().enumerate() {
        for (pc, i) in code.instrs.iter().enumerate() {
            let at = || {
                format!(
                    "{}: program `{}`, `{}`",
                    p.source.display(),
                    p.name,
                    litmus::print::at(prog, c, pc)
                )
            };
            match i {
                Instr::Barrier if !cfg::top_level(&code.instrs, pc) => {
                    if let Some(why) = lang.language().crossed_barrier_refusal() {
                        return Some(format!(
                            "{}: a barrier in non-uniform control flow (a jump crosses it): {why}",
                            at()
                        ));
                    }
                }
                Instr::Collective { .. } if !bare => {
                    let (n, s) = (prog.workgroup_size.into(), prog.subgroup_size.into());
                    if let Some(why) = lang.language().collective_refusal(n, s) {
                        return Some(format!("{}: {why}", at()));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// The largest value `o` can take in `p`: registers hold `0..values`, ids
/// are below their counts.
fn operand_max(p: &Program, o: Operand) -> usize {
    let s = usize::from(p.subgroup_size.max(1));
    let n = usize::from(p.workgroup_size);
    match o {
        Operand::Imm(v) => usize::from(v),
        Operand::Reg(_) => usize::from(p.values) - 1,
        Operand::Id(IdKind::WgId) => usize::from(p.workgroups).saturating_sub(1),
        Operand::Id(IdKind::LocalId) => n.saturating_sub(1),
        Operand::Id(IdKind::SubgroupId) => (n / s).saturating_sub(1),
        Operand::Id(IdKind::LaneId) => s - 1,
    }
}

/// Whether some index of `p` may fall outside its location: not every
/// value its operand can take is a cell.
fn index_may_fault(p: &Program) -> bool {
    p.codes.iter().flat_map(|c| &c.instrs).any(|i| match i {
        Instr::Atomic { addr, .. } => {
            operand_max(p, addr.index) >= p.locations[usize::from(addr.loc)].len()
        }
        _ => false,
    })
}

/// Why `p` is not emitted when some schedule takes an index outside its
/// location: the oracle rejects such a program as a run-time fault
/// (docs/KERNEL.md §2.7), and an emitted program would read or write
/// another cell (the device has no such fault), so its runs would say
/// nothing about the program the oracle decided. Only programs whose
/// indexes are not all in range by their operands' ranges are explored
/// (the oracle's own product, unfair: every reachable state).
pub(crate) fn index_refusal(p: &NamedProgram) -> Option<String> {
    use oracle::kernel::product::{build, Kernel, Reductions};
    use oracle::kernel::{KernelError, DEFAULT_MAX_STATES};
    let prog = &p.program;
    if !index_may_fault(prog) {
        return None;
    }
    let model = progress_litmus::kernel::ScopedModel::flat(progress_litmus::Model::new(
        progress_litmus::Base::Unfair,
        progress_litmus::Fairness::Weak,
    ));
    let explored = Kernel::new(prog, &model, Reductions::ALL).and_then(|k| {
        let max = DEFAULT_MAX_STATES;
        match k.words {
            1 => build::<[u64; 1]>(&k, max).map(drop),
            2 => build::<[u64; 2]>(&k, max).map(drop),
            3 => build::<[u64; 3]>(&k, max).map(drop),
            4 => build::<[u64; 4]>(&k, max).map(drop),
            5 => build::<[u64; 5]>(&k, max).map(drop),
            6 => build::<[u64; 6]>(&k, max).map(drop),
            7 => build::<[u64; 7]>(&k, max).map(drop),
            _ => build::<[u64; 8]>(&k, max).map(drop),
        }
    });
    let at = format!("{}: program `{}`", p.source.display(), p.name);
    match explored {
        Ok(()) => None,
        Err(KernelError::Fault(f)) => Some(format!(
            "{at}: a schedule goes wrong: {f}: the oracle rejects the program (an index outside its location is a fault, docs/KERNEL.md §2.7), so it is not emitted"
        )),
        Err(KernelError::TooLarge(b)) => Some(format!(
            "{at}: an index may fall outside its location, and the state space exceeds {b} states, so no check says it never does; it is not emitted (keep every index in range by its operand's range)"
        )),
        Err(e) => Some(format!("{at}: {e}")),
    }
}

/// Whether the program has a subgroup collective.
fn has_collectives(p: &Program) -> bool {
    p.codes.iter().any(|c| {
        c.instrs
            .iter()
            .any(|i| matches!(i, Instr::Collective { .. }))
    })
}

/// Where each location starts in global memory (`None` for shared ones)
/// and in shared memory.
pub(crate) struct Layout {
    global_off: Vec<usize>,
    shared_off: Vec<usize>,
    global_words: usize,
    shared_words: usize,
    /// Locations whose `fetch_add`/`sub` must keep the exact value.
    exact: Vec<bool>,
}

pub(crate) fn layout(p: &Program) -> Layout {
    let (mut g, mut s) = (0, 0);
    let mut global_off = Vec::new();
    let mut shared_off = Vec::new();
    for l in &p.locations {
        if l.shared {
            shared_off.push(s);
            global_off.push(0);
            s += l.len();
        } else {
            global_off.push(g);
            shared_off.push(0);
            g += l.len();
        }
    }
    let mut exact = vec![false; p.locations.len()];
    for code in &p.codes {
        for i in &code.instrs {
            if let Instr::Atomic { op, addr, .. } = i {
                if matches!(
                    op,
                    AtomicOp::CompareExchange(..) | AtomicOp::Fetch(RmwOp::Min | RmwOp::Max, _)
                ) {
                    exact[addr.loc as usize] = true;
                }
            }
        }
    }
    Layout {
        global_off,
        shared_off,
        global_words: g.max(1),
        shared_words: s,
        exact,
    }
}

/// Spellings that differ between the languages.
pub(crate) struct Spell {
    pub(crate) lang: Lang,
    pub(crate) mask: u32,
    pub(crate) bits: u32,
    /// The bare (verification) form ([`bare::emit_bare`]).
    pub(crate) bare: bool,
}

impl Spell {
    pub(crate) fn u(&self, v: impl std::fmt::Display) -> String {
        format!("{v}u")
    }

    pub(crate) fn operand(&self, o: Operand) -> String {
        match o {
            Operand::Reg(r) => format!("r{r}"),
            Operand::Imm(v) => self.u(v),
            Operand::Id(IdKind::WgId) => "wg_id".into(),
            Operand::Id(IdKind::LocalId) => "local_id".into(),
            Operand::Id(IdKind::SubgroupId) => "subgroup_id".into(),
            Operand::Id(IdKind::LaneId) => "lane_id".into(),
        }
    }

    /// The language object.
    pub(crate) fn l(&self) -> &'static dyn KernelLanguage {
        self.lang.language()
    }

    /// Whether the statements are WGSL's.
    pub(crate) fn wgsl(&self) -> bool {
        self.lang.wgsl()
    }

    /// A boolean as 0 or 1.
    fn b2u(&self, b: &str) -> String {
        if self.wgsl() {
            format!("select(0u, 1u, {b})")
        } else {
            format!("(({b}) ? 1u : 0u)")
        }
    }

    pub(crate) fn cmp(&self, a: &str, c: Cmp, b: &str) -> String {
        format!("{a} {} {b}", c.symbol())
    }

    fn binop(&self, op: BinOp, a: &str, b: &str) -> String {
        let m = self.u(self.mask);
        match op {
            BinOp::Cmp(c) => self.b2u(&self.cmp(a, c, b)),
            BinOp::Shl | BinOp::Shr => {
                let sym = op.symbol();
                match self.wgsl() {
                    // The bare form has no `min` (outside the oracle's
                    // language); its registers hold values below 2^bits.
                    true if self.bare => format!(
                        "select(({a} {sym} {b}) & {m}, 0u, {b} >= {})",
                        self.u(self.bits)
                    ),
                    true => format!(
                        "select(({a} {sym} min({b}, 31u)) & {m}, 0u, {b} >= {})",
                        self.u(self.bits)
                    ),
                    false => format!(
                        "(({b} >= {}) ? 0u : (({a} {sym} {b}) & {m}))",
                        self.u(self.bits)
                    ),
                }
            }
            _ => format!("(({a} {} {b}) & {m})", op.symbol()),
        }
    }

    /// The atomic `op` on the word `cell` (an lvalue), in the language.
    pub(crate) fn atomic(&self, op: Atomic, cell: &str, args: &[&str]) -> String {
        self.l().atomic(op, cell, args)
    }
}

/// The statements of one instruction inside its `case`; they set `pc`.
pub(crate) fn lower(p: &Program, c: usize, pc: usize, lay: &Layout, sp: &Spell) -> String {
    let code = &p.codes[c];
    let len = code.instrs.len();
    let jump = |t: Jump| match t {
        Jump::At(t) => sp.u(t),
        Jump::End => sp.u(len),
    };
    let next = sp.u(pc + 1);
    let mut out = String::new();
    match code.instrs[pc] {
        Instr::Assign { dst, op, a, b } => {
            let (a, b) = (sp.operand(a), sp.operand(b));
            let v = match op {
                None => a,
                Some(op) => sp.binop(op, &a, &b),
            };
            let _ = writeln!(out, "r{dst} = {v};\npc = {next};");
        }
        Instr::Branch { a, cmp, b, target } => {
            let cond = sp.cmp(&sp.operand(a), cmp, &sp.operand(b));
            let _ = writeln!(out, "{}", branch_pc(sp, &cond, &jump(target), &next));
        }
        Instr::Goto { target } => {
            let _ = writeln!(out, "pc = {};", jump(target));
        }
        // A device takes one of the choice's ways (docs/KERNEL.md §2.11):
        // the fall-through, whose runs are runs of the program, so a run
        // that does not end still says the program can hang.
        Instr::Choose { .. } => {
            let _ = writeln!(
                out,
                "// choose: this run takes the fall-through\npc = {next};"
            );
        }
        Instr::Barrier => {
            // (WGSL refuses it: `crossed_barrier_refusal`.)
            let b = sp.l().barrier();
            let _ = writeln!(
                out,
                "// A barrier a jump crosses: not every invocation may reach it (the oracle's deadlock).\n{b}\npc = {next};"
            );
        }
        Instr::Collective { op, dst, src } => {
            let e = collective(p, op, src, sp, &mut out);
            let _ = writeln!(out, "r{dst} = {e};\npc = {next};");
        }
        Instr::Atomic { .. } if sp.bare => out = bare_atomic(p, c, pc, sp),
        Instr::Atomic {
            op,
            addr,
            dst,
            branch,
        } => {
            let parts = (op, addr, dst, branch);
            atomic_statements(p, parts, lay, sp, &next, &jump, &mut out);
        }
    }
    out
}

/// The fields of an [`Instr::Atomic`]: operation, address, destination
/// register and conditional jump.
type AtomicParts = (AtomicOp, Addr, Option<u8>, Option<CondBranch>);

/// The statements of a running (not bare) atomic: the read-modify-write on
/// its cell, the old value masked to the program's values into `v`, then
/// the register write and the conditional jump that `pc` takes.
fn atomic_statements(
    p: &Program,
    (op, addr, dst, branch): AtomicParts,
    lay: &Layout,
    sp: &Spell,
    next: &str,
    jump: &dyn Fn(Jump) -> String,
    out: &mut String,
) {
    let m = sp.u(sp.mask);
    let wgsl = sp.wgsl();
    let cell = atomic_cell(p, addr, lay, sp);
    let exact = lay.exact[addr.loc as usize];
    let old = atomic_old(op, &cell, exact, sp, out);
    let decl = if wgsl { "let" } else { "uint" };
    if old == "old" {
        let _ = writeln!(out, "{decl} v = old & {m};");
    } else {
        let _ = writeln!(out, "{decl} v = {old} & {m};");
    }
    if let Some(d) = dst {
        let _ = writeln!(out, "r{d} = v;");
    }
    let v_unused = dst.is_none() && branch.is_none();
    match branch {
        Some(b) => {
            let cond = sp.cmp("v", b.cmp, &sp.operand(b.rhs));
            let _ = writeln!(out, "{}", branch_pc(sp, &cond, &jump(b.target), next));
        }
        None => {
            // (GLSL needs no discard of a value it does not use.)
            let discard = sp.l().discard();
            if v_unused && !discard.is_empty() {
                let _ = writeln!(out, "{discard}v;");
            }
            let _ = writeln!(out, "pc = {next};");
        }
    }
}

/// The statement of a conditional jump: `pc` is `target` if `cond`, else
/// `next` (WGSL has no `?:`, only `select`).
fn branch_pc(sp: &Spell, cond: &str, target: &str, next: &str) -> String {
    if sp.bare {
        // A branch, as a verifier reads it best (no selection through a
        // temporary), the same in both languages.
        format!("if ({cond}) {{\n    pc = {target};\n}} else {{\n    pc = {next};\n}}")
    } else if sp.wgsl() {
        format!("pc = select({next}, {target}, {cond});")
    } else {
        format!("pc = ({cond}) ? {target} : {next};")
    }
}

/// The value of a collective over the program's subgroup; GLSL's
/// broadcast first writes a statement to `out` before it.
fn collective(p: &Program, op: CollectiveOp, src: Operand, sp: &Spell, out: &mut String) -> String {
    let v = sp.operand(src);
    if !sp.bare {
        // Over the program's subgroup, never the device's (whose size is
        // another): CUDA names its lanes in a mask (`sg_mask`, every lane
        // takes part, as in the oracle's rendezvous, §2.5); GLSL takes
        // clusters of `subgroup_size` invocations.
        return sp
            .l()
            .collective(op, &v, p.subgroup_size.max(1).into(), out);
    }
    // The bare form (GLSL and WGSL): the language's own collectives, over
    // the subgroups of its `subgroup_size` line.
    let vote = |f: &str| {
        if sp.wgsl() {
            format!("select(0u, 1u, {f}({v} != 0u))")
        } else {
            format!("({f}({v} != 0u) ? 1u : 0u)")
        }
    };
    match op {
        CollectiveOp::All => vote("subgroupAll"),
        CollectiveOp::Any => vote("subgroupAny"),
        CollectiveOp::BroadcastFirst => format!("subgroupBroadcastFirst({v})"),
    }
}

/// The cell an atomic touches: its location's offset in the shared or
/// global array plus the index.
pub(crate) fn atomic_cell(p: &Program, addr: Addr, lay: &Layout, sp: &Spell) -> String {
    let loc = &p.locations[addr.loc as usize];
    if sp.bare {
        // The location's own variable; `emit_bare` refuses a program whose
        // index may leave it, as `emit` does.
        let name = bare_var_name(loc);
        return if loc.array {
            format!("{name}[{}]", sp.operand(addr.index))
        } else {
            name
        };
    }
    let (off, shared) = if loc.shared {
        (lay.shared_off[addr.loc as usize], true)
    } else {
        (lay.global_off[addr.loc as usize], false)
    };
    // `emit` refuses a program some schedule of which takes an
    // index outside its location (the oracle's fault), so the
    // `min` never changes an index: it only keeps a device's
    // access in bounds whatever happens.
    let idx = match addr.index {
        Operand::Imm(i) => sp.u(off + i as usize),
        o => format!(
            "{} + min({}, {})",
            sp.u(off),
            sp.operand(o),
            sp.u(loc.len().saturating_sub(1))
        ),
    };
    let arr = if shared { "sh" } else { "mem" };
    format!("{arr}[{idx}]")
}

/// The value an atomic reads (before the mask), as an expression; an exact
/// add or sub writes its compare-exchange loop to `out` and is `old`.
pub(crate) fn atomic_old(
    op: AtomicOp,
    cell: &str,
    exact: bool,
    sp: &Spell,
    out: &mut String,
) -> String {
    let m = sp.u(sp.mask);
    let wgsl = sp.wgsl();
    let cas = Atomic::CompareExchange;
    match op {
        AtomicOp::Load => sp.atomic(Atomic::Fetch(RmwOp::Add), cell, &["0u"]),
        AtomicOp::Store(v) | AtomicOp::Exchange(v) => {
            sp.atomic(Atomic::Exchange, cell, &[&sp.operand(v)])
        }
        AtomicOp::CompareExchange(e, n) => {
            let (e, n) = (sp.operand(e), sp.operand(n));
            if wgsl {
                format!("{}.old_value", sp.atomic(cas, cell, &[&e, &n]))
            } else {
                sp.atomic(cas, cell, &[&e, &n])
            }
        }
        AtomicOp::Fetch(rmw @ (RmwOp::Add | RmwOp::Sub), v) if exact && !sp.bare => {
            // A compare-exchange loop keeps the exact value: the
            // location also takes compare-exchange, min or max.
            let v = sp.operand(v);
            let sym = if rmw == RmwOp::Add { "+" } else { "-" };
            let load = sp.atomic(Atomic::Fetch(RmwOp::Add), cell, &["0u"]);
            let swap = sp.atomic(cas, cell, &["old", &format!("(old {sym} {v}) & {m}")]);
            let _ = if wgsl {
                writeln!(
                    out,
                    "var old = {load};\nloop {{\n    let r = {swap};\n    if (r.exchanged) {{ break; }}\n    old = r.old_value;\n}}"
                )
            } else {
                writeln!(
                    out,
                    "uint old = {load};\nfor (;;) {{\n    uint seen = {swap};\n    if (seen == old) break;\n    old = seen;\n}}"
                )
            };
            "old".to_string()
        }
        AtomicOp::Fetch(rmw, v) => sp.atomic(Atomic::Fetch(rmw), cell, &[&sp.operand(v)]),
    }
}

pub(crate) fn indent(s: &str, n: usize) -> String {
    let pad = "    ".repeat(n);
    s.lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("{pad}{l}\n")
            }
        })
        .collect()
}

/// The `case` arms of pcs `range` of block `c`, each with its instruction
/// as a comment.
fn cases(p: &Program, c: usize, range: std::ops::Range<usize>, lay: &Layout, sp: &Spell) -> String {
    let mut cases = String::new();
    for pc in range {
        let body = lower(p, c, pc, lay, sp);
        let text = litmus::print::at(p, c, pc).replace('\n', " ");
        let brk = if sp.wgsl() { "" } else { "    break;\n" };
        let _ = write!(
            cases,
            "case {}: {{ // {text}\n{}{brk}}}\n",
            sp.u(pc),
            indent(&body, 1)
        );
    }
    cases
}

/// The body of one code block: its segments' dispatch loops and the
/// top-level barriers between them.
fn block(p: &Program, c: usize, lay: &Layout, sp: &Spell) -> String {
    let code = &p.codes[c];
    let segs = segments(&code.instrs);
    let mut out = String::new();
    let stop = if sp.bare { "" } else { sp.l().stop() };
    let left = if sp.bare { "" } else { "!left && " };
    for (k, &(start, end)) in segs.ranges.iter().enumerate() {
        let _ = writeln!(out, "// pcs {start}..{end}");
        let cond = if start == 0 && sp.bare {
            format!("{left}pc < {}", sp.u(end))
        } else if sp.bare {
            // Two tests, not `&&` (which a verifier reads as arithmetic).
            format!("pc >= {}", sp.u(start))
        } else if start == 0 {
            // `pc >= 0u` of an unsigned pc: nvcc warns (#186-D, on the H200).
            format!("{left}pc < {}", sp.u(end))
        } else {
            format!("{left}pc >= {} && pc < {}", sp.u(start), sp.u(end))
        };
        let cases = cases(p, c, start..end, lay, sp);
        let default = if sp.wgsl() {
            "default: { }\n"
        } else {
            "default: break;\n"
        };
        let body = format!(
            "{stop}switch (pc) {{\n{}{}}}\n",
            indent(&cases, 1),
            indent(default, 1)
        );
        let body = if sp.bare && start > 0 {
            format!("if (pc >= {}) {{ break; }}\n{body}", sp.u(end))
        } else {
            body
        };
        if sp.wgsl() {
            let _ = write!(
                out,
                "loop {{\n    if (!({cond})) {{ break; }}\n{}}}\n",
                indent(&body, 1)
            );
        } else {
            let _ = write!(out, "while ({cond}) {{\n{}}}\n", indent(&body, 1));
        }
        if k + 1 < segs.ranges.len() {
            let b = sp.l().barrier();
            let next = if sp.bare {
                format!("pc = {};", sp.u(end + 1))
            } else {
                format!("if (!left) {{ pc = {}; }}", sp.u(end + 1))
            };
            let _ = writeln!(
                out,
                "// {} (top-level: every invocation reaches it once)\n{b}\n{next}",
                litmus::print::at(p, c, end)
            );
        }
    }
    out
}

pub use crate::target::language::KERNEL_FIRST_LINE as FIRST_LINE;

/// The `axb-kernel:` first line: what a host needs to run the file.
fn run_line(p: &NamedProgram, lay: &Layout, comment: &str) -> String {
    let prog = &p.program;
    let init: Vec<String> = prog
        .locations
        .iter()
        .filter(|l| !l.shared)
        .flat_map(|l| l.init.iter().map(|v| v.to_string()))
        .collect();
    let init = if init.is_empty() {
        "0".to_string()
    } else {
        init.join(",")
    };
    debug_assert_eq!(comment, "//", "FIRST_LINE");
    format!(
        "{FIRST_LINE} workgroups={} workgroup_size={} words={} init={init}\n",
        prog.workgroups, prog.workgroup_size, lay.global_words
    )
}

/// The comment block after the first line: the program as written, its
/// stated verdicts and how to run it.
///
/// `collectives` is how the form's collectives take the program's
/// subgroups, said where the program has one: the run form's, the
/// language's [`KernelLanguage::collectives_note`]; the bare and SIMT
/// forms say theirs elsewhere (their collectives are the language's own,
/// over other lanes than the run form's clusters).
pub(crate) fn header(
    p: &NamedProgram,
    lang: Lang,
    comment: &str,
    collectives: Option<&str>,
) -> String {
    let prog = &p.program;
    let mut s = format!(
        "{comment} Kernel program `{}` for {} (backends emit; docs/KERNEL.md).\n\
         {comment} Memory is sequentially consistent in the oracle; on a device these are\n\
         {comment} device-scope atomics. Subgroup ids are the program's ({} invocations a subgroup).\n",
        p.name,
        lang.name(),
        prog.subgroup_size
    );
    if let Some(how) = collectives.filter(|_| has_collectives(prog)) {
        let _ = writeln!(
            s,
            "{comment} Collectives: {}.",
            how.replace("{comment}", comment)
        );
    }
    for l in litmus::print::print(prog).lines() {
        if l.is_empty() {
            let _ = writeln!(s, "{comment}");
        } else {
            let _ = writeln!(s, "{comment}   {}", l.replace("*/", "* /"));
        }
    }
    s
}

/// The code block of each workgroup, as a condition on `wg_id` per block
/// (uniform: the workgroup id is the same for the whole workgroup); no
/// condition when every workgroup runs the same block.
pub(crate) fn dispatch(p: &Program, lay: &Layout, sp: &Spell) -> String {
    if p.codes.len() == 1 {
        return block(p, 0, lay, sp);
    }
    let mut out = String::new();
    for c in 0..p.codes.len() {
        // The workgroups that run block c, as a bit mask (no `||`, which
        // WGSL compilers lower into control flow).
        let mask: u32 = (0..p.workgroups as usize)
            .filter(|&w| p.wg_code[w] as usize == c)
            .map(|w| 1u32 << w)
            .sum();
        if mask == 0 {
            continue;
        }
        let _ = write!(
            out,
            "if ((({} >> wg_id) & 1u) == 1u) {{\n{}}}\n",
            sp.u(mask),
            indent(&block(p, c, lay, sp), 1)
        );
    }
    out
}

pub(crate) fn registers(p: &Program, lang: Lang) -> String {
    let n = p.codes.iter().map(|c| c.regs.len()).max().unwrap_or(0);
    (0..n)
        .map(|r| {
            if lang.wgsl() {
                format!("var r{r} = 0u;\n")
            } else {
                format!("uint r{r} = 0u;\n")
            }
        })
        .collect()
}

/// Shared locations' initial values, written by invocation 0 before a
/// barrier every invocation reaches.
fn shared_init(p: &Program, lay: &Layout, lang: Lang) -> String {
    if lay.shared_words == 0 {
        return String::new();
    }
    let mut s = String::from("if (local_id == 0u) {\n");
    for (k, l) in p.locations.iter().enumerate() {
        if !l.shared {
            continue;
        }
        for (i, v) in l.init.iter().enumerate() {
            let cell = lay.shared_off[k] + i;
            let _ = writeln!(s, "    {}", lang.language().shared_store(cell, *v as u16));
        }
    }
    s.push_str("}\n");
    s.push_str(lang.language().barrier());
    s.push('\n');
    s
}

/// The program as one file for `lang`, or why it cannot be.
pub fn emit(p: &NamedProgram, lang: Lang) -> Result<String, String> {
    if let Some(why) = refusal(p, lang).or_else(|| index_refusal(p)) {
        return Err(why);
    }
    let prog = &p.program;
    let lay = layout(prog);
    let sp = Spell {
        lang,
        mask: prog.values as u32 - 1,
        bits: prog.values.trailing_zeros(),
        bare: false,
    };
    // (WGSL, which has no note, refused the program if it has collectives.)
    let note = has_collectives(prog).then(|| lang.language().collectives_note());
    Ok(lang.language().kernel_file(&KernelFile {
        name: &p.name,
        run_line: run_line(p, &lay, "//"),
        header: header(p, lang, "//", note),
        body: kernel_body(prog, &lay, &sp),
        workgroups: prog.workgroups.into(),
        workgroup_size: prog.workgroup_size.into(),
        global_words: lay.global_words,
        init_words: init_words(prog, &lay),
        shared_words: lay.shared_words.max(1),
        collectives: has_collectives(prog),
    }))
}

/// The kernel's body, the same in every language but for spelling: the
/// ids, the dispatch state, the registers, the shared locations'
/// initial values, the dispatch loops, and how the invocation ended.
fn kernel_body(prog: &Program, lay: &Layout, sp: &Spell) -> String {
    let l = sp.l();
    let s = usize::from(prog.subgroup_size.max(1));
    let mut ids = l.ids(s);
    if has_collectives(prog) {
        ids += &l.subgroup_setup(s);
    }
    format!(
        "{ids}{}{}{}{}{}",
        l.run_state(),
        registers(prog, sp.lang),
        shared_init(prog, lay, sp.lang),
        dispatch(prog, lay, sp),
        l.count_end()
    )
}

pub(crate) fn init_words(p: &Program, lay: &Layout) -> Vec<String> {
    let mut w = vec!["0u".to_string(); lay.global_words];
    for (k, l) in p.locations.iter().enumerate() {
        if !l.shared {
            for (i, v) in l.init.iter().enumerate() {
                w[lay.global_off[k] + i] = format!("{v}u");
            }
        }
    }
    w
}

// ---- the bare (verification) form's own lowering ([`bare`]) ----

/// The variable a location becomes.
pub(crate) fn bare_var_name(l: &progress_litmus::kernel::program::Location) -> String {
    format!("{}_{}", if l.shared { "s" } else { "g" }, l.name)
}

/// Whether location `loc` takes a `fetch_add` or `fetch_sub`: only there
/// may a cell's 32-bit value leave the domain (the device's own wrapping
/// add), so only its reads are masked.
fn bare_wraps(p: &Program, loc: u8) -> bool {
    p.codes.iter().flat_map(|c| &c.instrs).any(|i| {
        matches!(i, Instr::Atomic { op: AtomicOp::Fetch(RmwOp::Add | RmwOp::Sub, _), addr, .. } if addr.loc == loc)
    })
}

/// The statements of atomic instruction `pc` of block `c` in the bare
/// form: one atomic call (a load is WGSL's `atomicLoad`, GLSL's
/// `atomicOr` of 0, which changes nothing; a store whose old value is
/// unused is WGSL's `atomicStore`), the old value masked only where the
/// cell may leave the domain, then the register, the branch and `pc`.
fn bare_atomic(p: &Program, c: usize, pc: usize, sp: &Spell) -> String {
    let Instr::Atomic {
        op,
        addr,
        dst,
        branch,
    } = p.codes[c].instrs[pc]
    else {
        unreachable!("an atomic instruction")
    };
    let len = p.codes[c].instrs.len();
    let wgsl = sp.wgsl();
    let cell = atomic_cell(p, addr, &layout(p), sp);
    let next = sp.u(pc + 1);
    let mut out = String::new();
    if dst.is_none() && branch.is_none() {
        let call = match op {
            AtomicOp::Store(v) if wgsl => sp.atomic(Atomic::Store, &cell, &[&sp.operand(v)]),
            _ => format!("{}{}", sp.l().discard(), bare_old(op, &cell, sp)),
        };
        let _ = writeln!(out, "{call};\npc = {next};");
        return out;
    }
    let v = bare_old(op, &cell, sp);
    let v = if bare_wraps(p, addr.loc) {
        format!("{v} & {}", sp.u(sp.mask))
    } else {
        v
    };
    // GLSL: `v` is declared once at the top (naga gives every declaration
    // a variable of its own, the oracle a register each).
    let _ = writeln!(out, "{}v = {v};", if wgsl { "let " } else { "" });
    if let Some(d) = dst {
        let _ = writeln!(out, "r{d} = v;");
    }
    match branch {
        Some(b) => {
            let target = match b.target {
                Jump::At(t) => sp.u(t),
                Jump::End => sp.u(len),
            };
            let cond = sp.cmp("v", b.cmp, &sp.operand(b.rhs));
            let _ = writeln!(out, "{}", branch_pc(sp, &cond, &target, &next));
        }
        None => {
            let _ = writeln!(out, "pc = {next};");
        }
    }
    out
}

/// The value an atomic reads, as one call.
fn bare_old(op: AtomicOp, cell: &str, sp: &Spell) -> String {
    match op {
        // WGSL's atomicLoad; GLSL's atomicOr of 0, which changes nothing.
        AtomicOp::Load => sp.atomic(Atomic::Load, cell, &[]),
        AtomicOp::Store(v) | AtomicOp::Exchange(v) => {
            sp.atomic(Atomic::Exchange, cell, &[&sp.operand(v)])
        }
        AtomicOp::CompareExchange(e, n) => {
            let args = [sp.operand(e), sp.operand(n)];
            let cas = sp.atomic(Atomic::CompareExchange, cell, &[&args[0], &args[1]]);
            if sp.wgsl() {
                format!("{cas}.old_value")
            } else {
                cas
            }
        }
        AtomicOp::Fetch(rmw, v) => sp.atomic(Atomic::Fetch(rmw), cell, &[&sp.operand(v)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(src: &str) -> NamedProgram {
        NamedProgram {
            name: "t".into(),
            program: litmus::parse(src).unwrap(),
            verdicts: None,
            source: "t.litmus".into(),
            launch: None,
        }
    }

    #[test]
    fn barriers_no_jump_crosses_split_the_loop() {
        let p = prog("values 2;\nworkgroups 1;\nworkgroup_size 2;\nglobal x;\nkernel {\n  0: x = 1;\n  1: barrier();\n  2: if (x == 0) goto 2;\n}\n");
        let s = segments(&p.program.codes[0].instrs);
        assert_eq!(s.ranges, vec![(0, 1), (2, 3)]);
        assert!(refusal(&p, Lang::Wgsl).is_none());
        // A jump over the barrier makes it non-uniform: WGSL refuses.
        let q = prog("values 2;\nworkgroups 1;\nworkgroup_size 2;\nkernel {\n  0: if (local_id == 0) goto 2;\n  1: barrier();\n}\n");
        assert_eq!(segments(&q.program.codes[0].instrs).ranges, vec![(0, 2)]);
        let e = refusal(&q, Lang::Wgsl).unwrap();
        assert!(
            e.contains(
                "t.litmus: program `t`, `1: barrier();`: a barrier in non-uniform control flow"
            ),
            "{e}"
        );
        assert!(refusal(&q, Lang::Cuda).is_none());
    }

    /// Only the run form says its collectives are clustered operations
    /// (and enables their extension): the bare form's are the language's
    /// own, over its `subgroup_size` line, and a bare file that told its
    /// host to enable GL_KHR_shader_subgroup_clustered misled it.
    #[test]
    fn only_the_run_form_says_its_collectives_are_clustered() {
        let p = prog("values 2;\nworkgroups 1;\nworkgroup_size 4;\nsubgroup_size 2;\nglobal x;\nkernel {\n  0: c = subgroupAll(1);\n  1: x = c;\n}\n");
        let clustered = "GL_KHR_shader_subgroup_clustered";
        let run = emit(&p, Lang::Glsl).unwrap();
        assert!(run.contains("// Collectives: clustered subgroup operations"));
        assert!(run.contains(&format!("#extension {clustered} : require")));
        let bare = bare::emit_bare(&p, Lang::Glsl).unwrap();
        assert!(bare.contains("subgroupAll(1u != 0u)"), "{bare}");
        assert!(!bare.contains(clustered), "{bare}");
        let cuda = emit(&p, Lang::Cuda).unwrap();
        assert!(cuda.contains("// Collectives: every lane of the program's subgroup takes part"));
    }

    /// The AXB tests and kernel programs spell a language's exchange and
    /// add the same way: one object answers both.
    #[test]
    fn the_axb_and_kernel_spellings_of_a_language_agree() {
        for lang in [Lang::Cuda, Lang::Glsl, Lang::Wgsl] {
            let l = lang.language();
            let (c, v) = ("mem[base + 1u]", "2u");
            assert_eq!(l.exchange(c, v), l.atomic(Atomic::Exchange, c, &[v]));
            assert_eq!(
                l.fetch_add(c, v),
                l.atomic(Atomic::Fetch(RmwOp::Add), c, &[v])
            );
            assert_eq!(lang.name(), l.name());
        }
    }

    #[test]
    fn the_wgsl_barrier_check_refuses_what_the_emitter_refuses() {
        let p = prog("values 2;\nworkgroups 2;\nworkgroup_size 2;\nglobal x;\nkernel {\n  0: x = 1;\n  1: barrier();\n  2: if (x == 0) goto 2;\n}\n");
        let w = emit(&p, Lang::Wgsl).unwrap();
        crate::target::wgsl::validate_kernel(&w).unwrap();
        // The same shader with its barrier moved into the dispatch loop,
        // as a barrier some jump crosses would be lowered.
        let bad = w
            .replacen(
                "    workgroupBarrier();\n        if (!left)",
                "    if (!left)",
                1,
            )
            .replacen(
                "switch (pc) {",
                "workgroupBarrier();\n            switch (pc) {",
                1,
            );
        assert_ne!(bad, w);
        let e = crate::target::wgsl::validate_kernel(&bad).unwrap_err();
        assert!(e.contains("a barrier in a loop"), "{e}");
    }
}
