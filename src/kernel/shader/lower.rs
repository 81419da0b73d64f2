//! naga IR -> kernel program: one compute entry point, structured control
//! flow to goto code, function calls inlined, locals and `let`s as
//! registers, storage and workgroup variables as global and shared
//! locations (docs/KERNEL.md §10).
//!
//! The kernel language has 8 registers and 63 instructions per block, so
//! the translation is frugal: constants and ids are operands, a load of a
//! local is its register (copied only when the local is stored while the
//! loaded value is still to be used), a comparison used by one branch is
//! the branch itself, and a temporary's register is freed after its last
//! use (or, for one defined outside a loop and used inside, when the loop
//! ends). Anything outside the language is one [`ShaderError`] at the
//! shader position of the construct.

use super::values::Exact;
use super::{Launch, ShaderError, Span, Translation};
use crate::axb::test::Target;
use crate::kernel::program::{
    Addr, AtomicOp, BinOp, Cmp, Code, CollectiveOp, IdKind, Instr, Location, Operand, Program,
    RmwOp, MAX_VALUES,
};
use crate::kernel::structure::Construct;
use naga::{Expression as E, Handle, Statement as S, TypeInner as T};
use std::collections::{BTreeSet, HashMap};

type Res<X> = Result<X, ShaderError>;

/// Registers of the kernel language.
const NREGS: usize = crate::kernel::program::MAX_REGS;
/// Inlining deeper than this is refused (recursion is refused anyway).
const MAX_CALL_DEPTH: usize = 16;
/// The most calls inlined in one translation. Each call is a copy of its
/// function's body, so a function calling another ten times, eight deep
/// (a 700-byte shader), is 10^8 copies; empty bodies emit no instruction,
/// so no bound on the program's size would see them.
/// How the warning about plain accesses begins: the value check's races
/// replace it where it looked for them (docs/KERNEL.md §10.2, *Races*).
pub const PLAIN_WARNING: &str = "plain (non-atomic) accesses to";

pub const MAX_INLINED_CALLS: usize = 4096;
/// The most instructions the translation emits before it simplifies
/// them (the result may have 63): a body of 1,000 statements inlined
/// 4,000 times once ran 16 s and 183 MB before that bound was checked,
/// and a macro-built one ran out of memory.
pub const MAX_EMITTED: usize = 16_384;

/// Where a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ptr {
    /// A memory cell (location, index).
    Mem(u8, Operand),
    /// A whole array location, to be indexed.
    Array(u8),
    /// A whole struct global, to be member-selected.
    Struct(Handle<naga::GlobalVariable>),
    /// A register (a local variable or a private scalar).
    Reg(u8),
    /// A private vector global that holds an id vector (GLSL's copies of
    /// the built-in inputs).
    VecGlobal(Handle<naga::GlobalVariable>),
    /// One component of such a vector.
    VecComp(Handle<naga::GlobalVariable>, u32),
}

/// The value of an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Val {
    /// A scalar operand.
    Op(Operand),
    /// A comparison not yet computed: a branch on it costs one instruction.
    Cmp(Cmp, Operand, Operand),
    /// A vector of operands (id built-ins: `(x, 0, 0)`).
    Vec(Vec<Operand>),
    /// The result of `atomicCompareExchangeWeak`: old value, exchanged.
    Cas(Operand, Option<Operand>),
    /// The result of a weak compare-exchange that may fail spuriously:
    /// the old value and `exchanged` (0 or 1), each in a register.
    Exchanged(Operand, Operand),
    /// A struct of built-in inputs (an entry point's struct argument).
    Inputs(Vec<Val>),
    Ptr(Ptr),
}

/// A cached value with what it holds on to.
#[derive(Clone, Debug)]
struct Slot {
    val: Val,
    /// Registers this value owns, freed when its last use is translated.
    temps: Vec<u8>,
    /// Expressions this value reads through (released with it).
    deps: Vec<Handle<E>>,
    /// The block it was computed in (copying it is valid there only).
    block: usize,
}

/// One function being inlined.
struct Frame<'a> {
    fun: &'a naga::Function,
    info: &'a naga::valid::FunctionInfo,
    slots: HashMap<Handle<E>, Slot>,
    refs: HashMap<Handle<E>, u32>,
    locals: HashMap<Handle<naga::LocalVariable>, u8>,
    args: Vec<Val>,
    /// Label and register of `return` (none in the entry point).
    ret: Option<(usize, Option<u8>)>,
    /// Break and continue labels of the enclosing loops and switches.
    breaks: Vec<(usize, Option<usize>)>,
}

/// What a global variable became.
#[derive(Clone, Debug)]
enum Global {
    Loc(u8),
    /// A struct's members (a member of an aliased buffer may be one cell
    /// of another view's array: `alias.rs`).
    Struct(Vec<Ptr>),
    /// A variable that is not a struct, seen through an aliased binding.
    Alias(Ptr),
    Reg(u8),
    Vec(Option<Vec<Operand>>),
}

pub struct Lower<'a> {
    module: &'a naga::Module,
    minfo: &'a naga::valid::ModuleInfo,
    src: &'a str,
    launch: &'a Launch,
    wg_size: u8,
    locations: Vec<Location>,
    /// The shader's names of each location (see [`Translation::names`]).
    names: Vec<(String, u8)>,
    /// The shader's names of single cells ([`Translation::cells`]).
    cells: Vec<(String, u8, u16)>,
    atomic_loc: Vec<bool>,
    globals: HashMap<Handle<naga::GlobalVariable>, Global>,
    instrs: Vec<Instr>,
    spans: Vec<Span>,
    /// The value check's reading of each instruction ([`Translation::exact`]).
    exact: Vec<Exact>,
    /// The reading of the next instruction pushed.
    next_exact: Exact,
    /// Which instructions are plain (non-atomic) loads and stores
    /// ([`Translation::plain`]).
    plain_at: Vec<bool>,
    /// The next instruction pushed is a plain access.
    next_plain: bool,
    /// Which instructions are loops' back edges, and whose
    /// ([`Translation::back_edges`]).
    back_edge_at: Vec<Option<u16>>,
    /// The next instruction pushed is this loop's back edge.
    next_back_edge: Option<u16>,
    /// The loops lowered so far.
    loops_made: u16,
    /// Values are two's complement ([`Translation::sext`]).
    sext: bool,
    /// Label of each jump instruction (by pc) to resolve at the end.
    fixups: Vec<(usize, usize)>,
    labels: Vec<Option<usize>>,
    used: [bool; NREGS],
    pinned: [bool; NREGS],
    span: Span,
    /// The span of the statement being translated (its instruction's
    /// position, rather than that of its last operand).
    stmt_span: Span,
    frames: Vec<Frame<'a>>,
    calls: Vec<Handle<naga::Function>>,
    /// Calls inlined so far.
    inlined: usize,
    /// Temps to free when the loop at each depth ends.
    loop_frees: Vec<Vec<u8>>,
    /// The loop depth each register's temp was defined at.
    temp_depth: [usize; NREGS],
    blocks: Vec<usize>,
    next_block: usize,
    max_const: u32,
    plain: BTreeSet<u8>,
    /// Locations a branch inside a loop reads through a plain load made
    /// inside a loop (`stmt.rs`, `track_spins`).
    spun: BTreeSet<u8>,
    /// Registers holding (a value computed from) a plain load made inside
    /// a loop, with its location.
    tainted: Vec<(u8, u8)>,
    written: BTreeSet<u8>,
    /// Workgroup locations declared without an initializer, with their
    /// shader names ([`Translation::undefined`]).
    undefined: Vec<(u8, String)>,
    /// The END label: one past the last instruction.
    end: usize,
    /// A GLSL module (its renamed atomics are recognised).
    glsl: bool,
    spills: glsl_atomics::Spills,
    /// The atomic being translated is a GLSL one: a compare-exchange
    /// returns the old value, not a struct.
    glsl_result: bool,
    /// A compare-exchange may fail spuriously (WGSL's
    /// `atomicCompareExchangeWeak`): `Some(finite)`, `finite` when a run
    /// fails spuriously only finitely often ([`Launch::spurious`]).
    weak_cas: Option<bool>,
    /// GLSL atomics with a scope (GL_KHR_memory_scope_semantics):
    /// location, scope, position, function ([`Translation::races`]).
    scoped: Vec<(u8, u32, Span, &'static str)>,
    /// Lower control flow as SPIR-V's structured constructs (docs/KERNEL.md
    /// §2.8) and keep them: for a shader with subgroup operations, whose
    /// participants its constructs decide, and for the SIMT-Step models
    /// (§10.6).
    structured: bool,
    /// Thread jumps and remove all unreachable code (§10.5); off where
    /// the constructs are kept.
    thread: bool,
    /// The constructs made so far: (a loop, header label, merge label).
    constructs: Vec<(bool, usize, usize)>,
}

fn refuse<X>(span: Span, msg: impl Into<String>) -> Res<X> {
    Err(ShaderError::new(span, msg))
}

/// Translates the entry point `launch` selects into a kernel program.
pub fn lower(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    src: &str,
    launch: &Launch,
    weak_cas: Option<bool>,
    sext: bool,
) -> Res<Translation> {
    let lanes = launch.subgroup_size() > 1;
    let modes = (weak_cas, sext);
    if lanes && launch.structured {
        return lower_as(module, info, src, launch, modes, (true, false));
    }
    let t = lower_as(module, info, src, launch, modes, (false, true))?;
    if !(lanes && t.program.tangles()) {
        return Ok(t);
    }
    lower_as(module, info, src, launch, modes, (true, false))
}

/// [`lower`], with control flow as structured constructs or not, and
/// jumps threaded or not (`(structured, thread)`).
fn lower_as(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    src: &str,
    launch: &Launch,
    (weak_cas, sext): (Option<bool>, bool),
    (structured, thread): (bool, bool),
) -> Res<Translation> {
    let (index, ep) = pick_entry(module, launch)?;
    let wg_size = workgroup_size(ep, launch)?;
    let mut l = Lower {
        module,
        minfo: info,
        src,
        launch,
        wg_size,
        locations: Vec::new(),
        names: Vec::new(),
        cells: Vec::new(),
        atomic_loc: Vec::new(),
        globals: HashMap::new(),
        instrs: Vec::new(),
        spans: Vec::new(),
        exact: Vec::new(),
        next_exact: Exact::Same,
        plain_at: Vec::new(),
        next_plain: false,
        back_edge_at: Vec::new(),
        next_back_edge: None,
        loops_made: 0,
        sext,
        fixups: Vec::new(),
        labels: Vec::new(),
        used: [false; NREGS],
        pinned: [false; NREGS],
        span: Span::UNDEFINED,
        stmt_span: Span::UNDEFINED,
        frames: Vec::new(),
        calls: Vec::new(),
        inlined: 0,
        loop_frees: vec![Vec::new()],
        temp_depth: [0; NREGS],
        blocks: vec![0],
        next_block: 1,
        max_const: 0,
        plain: BTreeSet::new(),
        spun: BTreeSet::new(),
        tainted: Vec::new(),
        written: BTreeSet::new(),
        undefined: Vec::new(),
        end: 0,
        glsl: launch_is_glsl(module),
        spills: Default::default(),
        glsl_result: false,
        weak_cas,
        scoped: Vec::new(),
        structured,
        thread,
        constructs: Vec::new(),
    };
    l.end = l.new_label();
    l.entry(ep, info.get_entry_point(index))?;
    l.finish()
}

/// The workgroup size the entry point `launch` selects declares: its
/// literal x (`None` for a WGSL `override`), and where to point an error
/// about it (the entry point's body).
pub fn declared_size(module: &naga::Module, launch: &Launch) -> Res<(Option<u32>, Span)> {
    let (_, ep) = pick_entry(module, launch)?;
    let span = body_span(ep);
    let literal = ep.workgroup_size_overrides.is_none();
    Ok((literal.then_some(ep.workgroup_size[0]), span))
}

/// The workgroup size the entry point `launch` selects is translated
/// with: `--workgroup-size`, else its own (a SPIR-V specialization
/// constant's default included).
pub fn launched_size(module: &naga::Module, launch: &Launch) -> Res<u8> {
    workgroup_size(pick_entry(module, launch)?.1, launch)
}

/// The index and function of the entry point `launch` selects.
pub fn entry_point<'m>(
    module: &'m naga::Module,
    launch: &Launch,
) -> Res<(usize, &'m naga::Function)> {
    let (index, ep) = pick_entry(module, launch)?;
    Ok((index, &ep.function))
}

/// Whether the module came through the GLSL frontend with the atomics
/// prelude (its renamed atomics are declared).
fn launch_is_glsl(module: &naga::Module) -> bool {
    module
        .functions
        .iter()
        .any(|(_, f)| f.name.as_deref() == Some(glsl_atomics::FUNCTIONS[0].0))
}

/// The compute entry point: the one named by `--entry`, or the only one.
fn pick_entry<'m>(module: &'m naga::Module, launch: &Launch) -> Res<(usize, &'m naga::EntryPoint)> {
    let computes: Vec<(usize, &naga::EntryPoint)> = module
        .entry_points
        .iter()
        .enumerate()
        .filter(|(_, e)| e.stage == naga::ShaderStage::Compute)
        .collect();
    let names: Vec<&str> = computes.iter().map(|(_, e)| e.name.as_str()).collect();
    match &launch.entry {
        Some(n) => computes
            .iter()
            .find(|(_, e)| &e.name == n)
            .copied()
            .ok_or_else(|| {
                ShaderError::new(
                    Span::UNDEFINED,
                    format!(
                        "no compute entry point `{n}`; the module has: {}",
                        names.join(", ")
                    ),
                )
            }),
        None => match computes.as_slice() {
            [one] => Ok(*one),
            [] => refuse(Span::UNDEFINED, "the module has no compute entry point"),
            _ => refuse(
                Span::UNDEFINED,
                format!(
                    "the module has several compute entry points ({}): choose one with --entry",
                    names.join(", ")
                ),
            ),
        },
    }
}

/// Where to point an error about an entry point's attributes: its body's
/// first statement.
fn body_span(ep: &naga::EntryPoint) -> Span {
    // An `Emit`'s span is its expressions', which naga's GLSL reader
    // places at a global's declaration: the first other statement's.
    ep.function
        .body
        .span_iter()
        .filter(|(st, _)| !matches!(st, naga::Statement::Emit(_)))
        .map(|(_, s)| *s)
        .find(|s| s.is_defined())
        .unwrap_or(Span::UNDEFINED)
}

/// The workgroup size: `--workgroup-size` or the shader's (one-dimensional).
fn workgroup_size(ep: &naga::EntryPoint, launch: &Launch) -> Res<u8> {
    if let Some(n) = launch.workgroup_size {
        return Ok(n);
    }
    let span = body_span(ep);
    if ep.workgroup_size_overrides.is_some() {
        return refuse(
            span,
            "a workgroup size given by an override: give --workgroup-size",
        );
    }
    let [x, y, z] = ep.workgroup_size;
    if y != 1 || z != 1 {
        return refuse(
            span,
            format!(
                "workgroup size ({x}, {y}, {z}): only one-dimensional workgroups are translated"
            ),
        );
    }
    // Past the bound here, not in the program's validation: the error
    // then has the entry point's place.
    let max = crate::kernel::program::MAX_WG_SIZE;
    match u8::try_from(x) {
        Ok(n) if (n as usize) <= max => Ok(n),
        _ => refuse(
            span,
            format!("workgroup size {x}: at most {max} invocations per workgroup"),
        ),
    }
}

impl<'a> Lower<'a> {
    // ---- code and labels ----

    fn new_label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    fn bind(&mut self, label: usize) {
        self.labels[label] = Some(self.instrs.len());
    }

    fn push(&mut self, i: Instr) {
        self.track_spins(&i);
        self.instrs.push(i);
        self.spans.push(self.span);
        self.exact.push(std::mem::take(&mut self.next_exact));
        self.plain_at.push(std::mem::take(&mut self.next_plain));
        self.back_edge_at
            .push(std::mem::take(&mut self.next_back_edge));
    }

    fn push_jump(&mut self, i: Instr, label: usize) {
        self.fixups.push((self.instrs.len(), label));
        self.push(i);
    }

    fn goto(&mut self, label: usize) {
        self.push_jump(
            Instr::Goto {
                target: Target::End,
            },
            label,
        );
    }

    fn assign(&mut self, dst: u8, op: Option<BinOp>, a: Operand, b: Operand) {
        self.push(Instr::Assign { dst, op, a, b });
    }

    // ---- registers ----

    fn alloc(&mut self) -> Res<u8> {
        let r = (0..NREGS).find(|&r| !self.used[r]).ok_or_else(|| {
            ShaderError::new(
                self.span,
                format!("more than {NREGS} values live at once: the kernel language has {NREGS} registers"),
            )
        })?;
        self.used[r] = true;
        self.temp_depth[r] = self.loop_frees.len() - 1;
        Ok(r as u8)
    }

    /// Frees a temp now, or when the loop it was defined outside of ends.
    fn free(&mut self, r: u8) {
        if self.pinned[r as usize] {
            return;
        }
        let d = self.temp_depth[r as usize];
        if d + 1 < self.loop_frees.len() {
            self.loop_frees[d + 1].push(r);
        } else {
            self.used[r as usize] = false;
        }
    }

    fn constant(&mut self, v: i128) -> Res<Operand> {
        if self.sext {
            return self.sext_constant(v);
        }
        if v < 0 || (u32::MAX as i128 - 127..=u32::MAX as i128).contains(&v) {
            // -1, or 0xFFFFFFFF: a two's complement value (§10.3).
            let mut e = ShaderError::new(
                self.span,
                format!("negative constant {v}: values are unsigned below the domain (value bound exceeded: the kernel language has no negative values)"),
            );
            e.sext_helps = v >= -128;
            if v < -128 {
                e.msg = format!("constant {v}: value bound exceeded (the kernel language's values are below {MAX_VALUES}, which as two's complement values are -128 to 127)");
            }
            return Err(e);
        }
        if v >= MAX_VALUES as i128 {
            return refuse(
                self.span,
                format!("constant {v}: value bound exceeded (the kernel language's values are below {MAX_VALUES}, so no --values holds it)"),
            );
        }
        self.max_const = self.max_const.max(v as u32);
        Ok(Operand::Imm(v as u16))
    }

    /// A constant as a two's complement value: the 32-bit value `v` (an
    /// `i32` or `u32` literal) stands for the `b`-bit value with the same
    /// low bits if it is between -128 and 127 as an `i32`; the domain's
    /// upper half reaches it (§10.3). Where the domain is not
    /// chosen yet, any stands in: this translation only chooses it.
    fn sext_constant(&mut self, v: i128) -> Res<Operand> {
        let s = match i32::try_from(v).or_else(|_| u32::try_from(v).map(|u| u as i32)) {
            Ok(s) if (-128..128).contains(&s) => s,
            _ => {
                return refuse(
                    self.span,
                    format!("constant {v}: value bound exceeded (the kernel language's values are below {MAX_VALUES}, which as two's complement values are -128 to 127)"),
                )
            }
        };
        // The upper half of the domain must reach -s, the lower s + 1.
        let magnitude = if s < 0 {
            s.unsigned_abs() - 1
        } else {
            s as u32
        };
        self.max_const = self.max_const.max(magnitude);
        let values = i32::from(self.launch.values.unwrap_or(MAX_VALUES));
        Ok(Operand::Imm(s.rem_euclid(values) as u16))
    }

    fn frame(&self) -> &Frame<'a> {
        self.frames.last().expect("a frame")
    }

    fn frame_mut(&mut self) -> &mut Frame<'a> {
        self.frames.last_mut().expect("a frame")
    }

    fn cur_block(&self) -> usize {
        *self.blocks.last().expect("a block")
    }
}

mod alias;
mod arrays;
mod emit;
pub(in crate::kernel::shader) use emit::children;
mod finish;
pub mod glsl_atomics;
mod stmt;
mod thread;
