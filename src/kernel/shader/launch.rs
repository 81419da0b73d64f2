//! The launch a shader was decided for, and where each of its numbers came
//! from (issue 42: `--workgroup-size` silently replaced a literal
//! `@workgroup_size`, deciding another program, and a clspv module's
//! specialization-constant default, 1, was used without a word).
//!
//! A shader states its workgroup size (a literal `@workgroup_size`,
//! `local_size_x` or `LocalSize`), or leaves it to the host (a WGSL
//! `override`, a SPIR-V specialization constant whose default the host may
//! replace). The number of workgroups and the subgroup size are the host's
//! and the device's. The rules (docs/KERNEL.md §10.1): a flag may set what
//! the shader leaves open; a flag that contradicts a literal size is
//! refused; a specialization constant's default is used only with a
//! warning saying so; and every verdict line of a shader names the launch
//! ([`Taken::describe`]).

use super::{Launch, ShaderError, Span};
use crate::kernel::model::Sched;
use crate::kernel::program::{Instr, Program, MAX_LOCKSTEP_SUBGROUP};

/// Where a number of the launch came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum From {
    /// A command-line flag.
    Flag,
    /// The shader's annotation line (`// workgroups W;`).
    Annotation,
    /// The TLA+ forward-progress project's GLSL launch line
    /// (`layout(tla_num_workgroups = W) in;`).
    Layout,
    /// Nobody said: the tools' default.
    #[default]
    Default,
}

/// Where the workgroup size came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SizeFrom {
    /// The shader's own literal size.
    #[default]
    Literal,
    /// `--workgroup-size`, for a size the shader leaves to the host.
    Flag,
    /// The default of a specialization constant (its `SpecId`, if any).
    SpecDefault(Option<u32>),
}

/// What the launch takes memory to hold at the start (docs/KERNEL.md
/// §10.3): the host fills storage buffers, the source language says what
/// workgroup memory holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// Some storage variable's start is given by an `// init` line.
    pub init_storage: bool,
    /// Some workgroup variable's start is given by an `// init` line.
    pub init_workgroup: bool,
    /// The shader uses workgroup memory without an initializer.
    pub workgroup: Workgroup,
}

/// What a shader's workgroup memory holds at the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workgroup {
    /// None used without an initializer (or an `// init` line).
    #[default]
    None,
    /// Zero: WGSL zero-initialises workgroup memory.
    Zero,
    /// Zero in GLSL or SPIR-V, as `--workgroup-memory zero` states.
    ZeroByFlag,
    /// Undefined by the language named (GLSL, SPIR-V): the value check
    /// found no schedule on which it is read before it is written.
    Undefined(&'static str),
}

/// The launch a shader was decided for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Taken {
    pub workgroups: (u8, From),
    pub workgroup_size: (u16, SizeFrom),
    pub subgroup_size: (u8, From),
    /// The subgroup size named, where it is wider than the workgroup
    /// (which then fills one subgroup, the size taken).
    pub subgroup_asked: Option<u8>,
    pub memory: Memory,
    /// The program has a weak compare-exchange: `Some(finite)`
    /// ([`super::Launch::spurious_finite`]).
    pub weak_cas: Option<bool>,
    /// Subgroups of two or more: `Some(hardware)`
    /// ([`crate::kernel::program::Program::hardware_subgroups`]).
    pub subgroups: Option<bool>,
    /// Subgroup operations with subgroups of two or more, tangled
    /// ([`crate::kernel::program::Program::tangled_collectives`]).
    pub tangled: bool,
}

fn from_text(f: From, flag: &str, line: &str) -> String {
    match f {
        From::Flag => flag.to_string(),
        From::Annotation => format!("its `// {line}` line"),
        From::Layout => {
            let what = if flag == "--workgroups" {
                "tla_num_workgroups = W"
            } else {
                "tla_subgroup_size = S"
            };
            format!("its `layout({what}) in;` line")
        }
        From::Default => "default".to_string(),
    }
}

fn plural(n: impl Into<u16>, one: &str) -> String {
    let n: u16 = n.into();
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}

impl Taken {
    /// `2 workgroups (default) of 4 invocations (the shader's size), subgroups
    /// of 1 invocation (default); storage buffers start at 0`, and what
    /// workgroup memory starts with where the shader has some.
    pub fn describe(&self) -> String {
        let storage = if self.memory.init_storage {
            "storage buffers start at 0 or their `// init` line's values"
        } else {
            "storage buffers start at 0"
        };
        let workgroup = match self.memory.workgroup {
            Workgroup::None => String::new(),
            Workgroup::Zero => ", workgroup memory at 0 (WGSL zero-initialises it)".into(),
            Workgroup::ZeroByFlag => ", workgroup memory at 0 (--workgroup-memory zero)".into(),
            Workgroup::Undefined(lang) => format!(
                ", workgroup memory undefined ({lang}) and written before it is read on every schedule (checked)"
            ),
        };
        let stated = if self.memory.init_workgroup {
            ", workgroup memory where `// init` lines say"
        } else {
            ""
        };
        let weak = match self.weak_cas {
            None => "",
            Some(true) => "; atomicCompareExchangeWeak may fail spuriously, finitely often on a run (assumed, as C++ recommends; WGSL does not promise it; --spurious-failures unbounded drops it)",
            Some(false) => "; atomicCompareExchangeWeak may fail spuriously any number of times (--spurious-failures unbounded)",
        };
        let inside = match self.subgroups {
            None => "",
            Some(true) => BOTH_WAYS,
            Some(false) => "; inside a subgroup, invocations are scheduled fairly (--subgroup-scheduling fair, as CUDA's independent thread scheduling)",
        };
        let tangled = match self.tangled {
            true => "; a subgroup operation is executed by the lanes that execute it together: the active lanes in lockstep, else the lanes of its dynamic block (maximal reconvergence, as subgroup=sso; an implementation without it may group fewer lanes, which is not decided)",
            false => "",
        };
        format!(
            "{}; {storage}{workgroup}{stated}{weak}{inside}{tangled}",
            self.sizes()
        )
    }

    /// The numbers of the launch and where each came from.
    fn sizes(&self) -> String {
        let (w, wf) = self.workgroups;
        let (n, nf) = self.workgroup_size;
        let (s, sf) = self.subgroup_size;
        let size = match nf {
            SizeFrom::Literal => "the shader's size".to_string(),
            SizeFrom::Flag => "--workgroup-size".to_string(),
            SizeFrom::SpecDefault(Some(id)) => {
                format!("the default of specialization constant SpecId {id}")
            }
            SizeFrom::SpecDefault(None) => "a specialization constant's default".to_string(),
        };
        let subgroups = match (sf, self.subgroup_asked) {
            (From::Default, _) => default_subgroup_reason(s, n),
            (_, Some(asked)) => format!(
                "{}: subgroups of {asked}, which one workgroup of {n} fills, the lanes past it inactive",
                from_text(sf, "--subgroup-size", "subgroup_size S;")
            ),
            _ => from_text(sf, "--subgroup-size", "subgroup_size S;"),
        };
        format!(
            "{} ({}) of {} ({size}), subgroups of {} ({subgroups})",
            plural(w, "workgroup"),
            from_text(wf, "--workgroups", "workgroups W;"),
            plural(n, "invocation"),
            plural(s, "invocation"),
        )
    }
}

/// What begins the launch line's clause on a barrier in non-uniform
/// control flow ([`super::Translation::undefined_barrier`]): tools that
/// report it find it there.
pub const UNDEFINED_BARRIER: &str =
    "undefined behaviour, under which no model guarantees termination: a workgroup barrier in non-uniform control flow";

/// What precedes the data races on a launch line
/// ([`super::Translation::assumptions`]): tools that report them find
/// them after it.
pub const RACES: &str =
    "; data races in the Vulkan memory model, decided as sequentially consistent: ";

/// The launch line's clause for subgroups decided both ways (§10.6): what
/// a model fair inside subgroups rests on.
pub const BOTH_WAYS: &str = "; inside a subgroup, a verdict is P only if it holds both in lockstep (reconvergence at the immediate post-dominator) and under fair independent scheduling";

/// The launch line `launch` as it holds under a model whose subgroup
/// scope is `sub`: a model that names a scheduler inside subgroups other
/// than fair is decided for that one alone, not also in lockstep (§10.6),
/// and the line says so instead of [`BOTH_WAYS`].
pub fn under(launch: &str, sub: Sched) -> String {
    if sub == Sched::Fair {
        return launch.to_string();
    }
    let named = format!(
        "; inside a subgroup, lanes scheduled as the model names (subgroup={})",
        sub.word()
    );
    launch.replace(BOTH_WAYS, &named)
}

/// The subgroup size a shader of workgroup size `n` is decided with where
/// neither a flag nor a line names one (docs/KERNEL.md §10.1): the whole
/// workgroup in one subgroup, as on every GPU whose subgroups hold `n`
/// invocations or more (a subgroup's invocations are promised no
/// progress, so its lanes are decided in lockstep too, §10.6). Past the
/// lockstep machine's width, 1: taken only for a shader whose verdicts no
/// width changes ([`width_matters`] refuses the others).
pub fn default_subgroup(n: u8) -> u8 {
    if n as usize <= MAX_LOCKSTEP_SUBGROUP {
        n
    } else {
        1
    }
}

/// Why a default subgroup size `s` was taken for workgroups of `n`.
fn default_subgroup_reason(s: u8, n: u16) -> String {
    let other = "--subgroup-size S decides another";
    if n == 1 {
        "default".to_string()
    } else if u16::from(s) == n {
        format!("default: the workgroup is one subgroup, as on every GPU whose subgroups hold {n} or more; {other}")
    } else {
        format!("default: no subgroup width changes this shader's verdicts (no subgroup operation, and --subgroup-scheduling fair or neither a loop nor a branch with a barrier), so lanes are decided one by one; {other}")
    }
}

/// Why the default subgroup size cannot decide `p`, a shader whose
/// workgroups are wider than the lockstep machine's subgroups
/// (docs/KERNEL.md §10.1): on every GPU whose subgroups hold the whole
/// workgroup (most hold 32 or 64), its invocations are one subgroup,
/// which no narrower width stands for where the shader has a subgroup
/// operation (it acts on the lanes of one subgroup), a loop that may
/// spin in lockstep (a subgroup's invocations are promised no progress:
/// the classic SIMT deadlock) or a barrier after a branch (lockstep may
/// hold lanes apart across it), unless `fair_subgroups` names
/// independent fair scheduling. `None` where no width changes the
/// verdicts: no subgroup operation, and fair scheduling named or neither
/// a loop nor a branch with a barrier.
pub fn width_matters(p: &Program, fair_subgroups: bool) -> Option<String> {
    let n = p.workgroup_size as usize;
    if n <= MAX_LOCKSTEP_SUBGROUP {
        return None;
    }
    let looped = (p.codes.iter()).any(|c| {
        let len = c.instrs.len();
        (c.instrs.iter().enumerate()).any(|(pc, i)| i.target().is_some_and(|t| t.pc(len) <= pc))
    });
    // A barrier where lanes may diverge: lockstep can hold one lane at a
    // reconvergence point past the barrier while another waits at it (an
    // early `return` makes the end the branch's reconvergence point).
    let instrs = || p.codes.iter().flat_map(|c| &c.instrs);
    let diverging_barrier = instrs().any(|i| matches!(i, Instr::Barrier))
        && instrs().any(|i| i.target().is_some() && !matches!(i, Instr::Goto { .. }));
    let fair = ", or --subgroup-scheduling fair for independent fair scheduling";
    let why = if p.has_collectives() {
        "whose subgroup operations act on its lanes together"
    } else if fair_subgroups {
        return None;
    } else if looped {
        "where a loop may spin in lockstep, no progress promised (the SIMT deadlock)"
    } else if diverging_barrier {
        "where lanes that part before a barrier may wait for each other in lockstep, one at the barrier, one where they reconverge"
    } else {
        return None;
    };
    let fair = if p.has_collectives() { "" } else { fair };
    Some(format!(
        "a workgroup of {n} invocations is one subgroup on GPUs whose subgroups hold {n} or more (most: 32 or 64), {why}; the lockstep machine takes at most {MAX_LOCKSTEP_SUBGROUP} lanes: give --subgroup-size S (dividing {n}, at most {MAX_LOCKSTEP_SUBGROUP}) to decide that width{fair}"
    ))
}

/// Where the number of workgroups or the subgroup size came from: the
/// flag (`flag`), else the annotation (`note`, a GLSL launch line where
/// `layout`), else the default.
pub fn origin(flag: Option<u8>, note: Option<u8>, layout: bool) -> From {
    match (flag, note) {
        (Some(_), _) => From::Flag,
        (None, Some(_)) if layout => From::Layout,
        (None, Some(_)) => From::Annotation,
        (None, None) => From::Default,
    }
}

/// The workgroup size's origin, from `--workgroup-size` (`launch`), the
/// size the entry point declares (`declared`: its literal x, `None` for a
/// WGSL `override`), and for SPIR-V, a specialization constant behind it
/// (`spec`: its default and `SpecId`). A flag that contradicts a literal
/// is refused at `span`; the size itself is the translation's (which
/// takes the flag where one is given, [`super::lower`]).
pub fn size_origin(
    launch: &Launch,
    declared: Option<u32>,
    spec: Option<(u32, Option<u32>)>,
    span: Span,
) -> Result<SizeFrom, ShaderError> {
    match (launch.workgroup_size, declared, spec) {
        (Some(_), _, Some(_)) | (Some(_), None, None) => Ok(SizeFrom::Flag),
        (Some(n), Some(x), None) if u32::from(n) != x => Err(ShaderError::new(
            span,
            format!(
                "--workgroup-size {n} contradicts the shader's own workgroup size {x} (`@workgroup_size`, `local_size_x` or `LocalSize`): that would decide another program; drop the flag, or change the shader"
            ),
        )),
        (_, _, Some((_, id))) => Ok(SizeFrom::SpecDefault(id)),
        _ => Ok(SizeFrom::Literal),
    }
}

/// The warning of a size taken from a specialization constant's default.
pub fn spec_default_warning(size: u16, id: Option<u32>) -> String {
    let which = id.map_or("a specialization constant".to_string(), |id| {
        format!("specialization constant SpecId {id}")
    });
    format!(
        "the workgroup size {size} is the default of {which}, which the host may replace: decided for {size}; pass --workgroup-size N to decide the size you dispatch"
    )
}

/// The race of an atomic `what` with `scope` (SPIR-V's and
/// GL_KHR_memory_scope_semantics's numbers) on workgroup memory (`shared`)
/// or a buffer, under a launch of `w` workgroups of `n` invocations in
/// subgroups of `s`: its words, if the scope does not hold every
/// invocation that may access the memory (every one of the dispatch for a
/// buffer, of its workgroup for workgroup memory).
pub fn scope_race(
    what: &str,
    scope: u32,
    shared: bool,
    (w, n, s): (u32, u32, u32),
) -> Option<String> {
    // Scopes from narrowest: invocation, subgroup, workgroup, then queue
    // family (every invocation of a dispatch), device.
    let needed = match (shared, w > 1, n > s, n > 1) {
        (false, true, _, _) => 3,
        (_, _, true, _) => 2,
        (_, _, _, true) => 1,
        _ => 0,
    };
    (scope_rank(scope) < needed).then(|| {
        format!(
            "{what} with {} scope, narrower than the invocations that may access it",
            scope_name(scope)
        )
    })
}

/// A GL_KHR_memory_scope_semantics scope's width, from 0 (invocation) to
/// 4 (device).
fn scope_rank(scope: u32) -> u32 {
    match scope {
        4 => 0,
        3 => 1,
        2 => 2,
        5 => 3,
        1 => 4,
        // CrossDevice (0), the widest.
        _ => 5,
    }
}

/// A scope's name (`gl_ScopeInvocation` is 4, ... ).
fn scope_name(scope: u32) -> &'static str {
    match scope {
        1 => "device",
        2 => "workgroup",
        3 => "subgroup",
        4 => "invocation",
        5 => "queue family",
        _ => "cross-device",
    }
}
