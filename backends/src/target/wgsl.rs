//! The WGSL target: a WGSL compute shader per test and mapping, for WebGPU:
//! the page of [`crate::target::webgpu`] in any browser, or a native
//! WebGPU implementation (the `wgpu` runner).
//!
//! Same shape as the GLSL shaders ([`crate::target::glsl`]): one invocation
//! per workgroup, `workgroups` x 1 x 1 dispatched, the same `axb-run:`
//! first line, instance counts and memory layout (instance i owns words
//! `[i * S, (i + 1) * S)` of binding 0). Memory accesses are
//! `atomicExchange` and `atomicAdd` of 0.
//!
//! **No stop flag, a budget instead.** WebGPU cannot write a buffer while a
//! dispatch runs, so no host can end a spinning run at a deadline. Every
//! iteration of a thread's loop spends one unit of an iteration budget
//! (binding 2, set per run by the host, which calibrates it into a time,
//! see [`crate::target::webgpu`]). A thread whose budget is spent counts
//! itself in `ends.exhausted` and leaves; every thread reads that counter
//! (an atomic load, once per iteration, as the GLSL shaders read their stop
//! flag) and leaves as soon as it is nonzero, so one spent budget ends the
//! whole dispatch, and the run counts as non-terminating. Binding 1 counts
//! how each thread ended:
//!
//! | word | counter     | a thread that ...                                        |
//! |------|-------------|----------------------------------------------------------|
//! | 0    | `exhausted` | spent its budget (the run does not terminate in time)    |
//! | 1    | `stopped`   | left because another thread spent its budget             |
//! | 2    | `finished`  | reached END                                              |
//! | 3    | `early`     | left its loop before END with budget left               |
//!
//! The four add up to `workgroups`. `early` is never a test outcome: only a
//! device that ends loops by itself (Mesa's llvmpipe does, after 65535
//! iterations) makes it nonzero, and a host refuses such a device. A run
//! terminated iff `finished == workgroups`.
//!
//! Bounded loops also spare the shaders the forward-progress assumptions
//! some shader compilers make about infinite loops.

use crate::mapping::Layout;
use crate::target::codegen::{self, Dialect, Shape};
use crate::target::emitter::Emitter;
use crate::target::language::{
    rmw_suffix, Atomic, BareLanguage, KernelFile, KernelLanguage, Lang, Language, SimtFile, Syntax,
    KERNEL_FIRST_LINE, SIMT_FIRST_LINE,
};
use crate::target::File;
use crate::toolchain::ToolError;
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::program::CollectiveOp;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The bindings of every shader, as the hosts bind them (group 0).
pub const BINDING_MEMORY: u32 = 0;
/// See the module doc: four `u32` counters.
pub const BINDING_ENDS: u32 = 1;
/// A uniform buffer whose first `u32` is the iteration budget (16 bytes).
pub const BINDING_PARAMS: u32 = 2;

fn dialect(bare: bool) -> Dialect {
    Dialect {
        lang: &Wgsl,
        leave: if bare { "" } else { "axb_leave(&left, &why)" }.to_string(),
    }
}

/// The WGSL language ([`Language`], [`KernelLanguage`]): atomics through
/// pointers to `atomic<u32>`; WebGPU's core has no subgroups, and its
/// uniformity rules keep barriers out of non-uniform control flow.
pub struct Wgsl;

impl Language for Wgsl {
    fn name(&self) -> &'static str {
        "wgsl"
    }

    fn syntax(&self) -> Syntax {
        Syntax::Wgsl
    }

    fn discard(&self) -> &'static str {
        "_ = "
    }

    fn exchange(&self, cell: &str, v: &str) -> String {
        format!("atomicExchange(&{cell}, {v})")
    }

    fn fetch_add(&self, cell: &str, v: &str) -> String {
        format!("atomicAdd(&{cell}, {v})")
    }
}

impl KernelLanguage for Wgsl {
    fn extension(&self) -> &'static str {
        "wgsl"
    }

    fn title(&self) -> &'static str {
        "WGSL/WebGPU"
    }

    fn atomic(&self, op: Atomic, cell: &str, args: &[&str]) -> String {
        let name = match op {
            Atomic::Load => "Load",
            Atomic::Store => "Store",
            Atomic::Exchange => "Exchange",
            Atomic::CompareExchange => "CompareExchangeWeak",
            Atomic::Fetch(rmw) => rmw_suffix(rmw),
        };
        let mut a = vec![format!("&{cell}")];
        a.extend(args.iter().map(|s| s.to_string()));
        format!("atomic{name}({})", a.join(", "))
    }

    fn max_subgroup(&self) -> usize {
        128
    }

    fn max_workgroup(&self) -> usize {
        256
    }

    fn barrier(&self) -> &'static str {
        "workgroupBarrier();"
    }

    fn crossed_barrier_refusal(&self) -> Option<&'static str> {
        Some("WGSL requires workgroupBarrier() in uniform control flow (WGSL's uniformity rules; naga does not check barriers, so this does); emit it for cuda or glsl")
    }

    fn collective_refusal(&self, _n: usize, _s: usize) -> Option<String> {
        Some("subgroup collectives need WGSL's `subgroups` extension, which WebGPU's core lacks; emit it for cuda or glsl".to_string())
    }

    /// Spends one unit of the budget (`axb_leave` of [`KernelLanguage::kernel_file`]).
    fn stop(&self) -> &'static str {
        "if (axb_leave(&budget)) { left = true; break; }\n"
    }

    fn ids(&self, s: usize) -> String {
        format!(
            "let wg_id = wid.x;\nlet local_id = lid.x;\nlet subgroup_id = local_id / {s}u;\nlet lane_id = local_id % {s}u;\n_ = subgroup_id;\n_ = lane_id;\n"
        )
    }

    fn subgroup_setup(&self, _s: usize) -> String {
        unreachable!("WGSL refuses collectives (collective_refusal)")
    }

    fn collectives_note(&self) -> &'static str {
        unreachable!("WGSL refuses collectives (collective_refusal)")
    }

    fn collective(&self, _: CollectiveOp, _: &str, _: usize, _: &mut String) -> String {
        unreachable!("WGSL refuses collectives (collective_refusal)")
    }

    fn run_state(&self) -> &'static str {
        "var pc = 0u;\nvar left = false;\nvar budget = params.budget;\n"
    }

    fn count_end(&self) -> &'static str {
        "if (left) { atomicAdd(&ends.stopped, 1u); } else { atomicAdd(&ends.finished, 1u); }\n"
    }

    fn shared_store(&self, cell: usize, v: u16) -> String {
        format!("atomicStore(&sh[{cell}], {v}u);")
    }

    /// The shader around the body: the bindings the page and
    /// `backends-wgpu` set up, and the budget that ends a run (WGSL has no
    /// flag a host can set while it runs).
    fn kernel_file(&self, f: &KernelFile) -> String {
        let n = f.workgroup_size;
        format!(
            "{}{}\
             // Binding 0: the global locations (see the first line); 1: ends; 2: the budget.\n\
             @group(0) @binding(0) var<storage, read_write> mem: array<atomic<u32>>;\n\
             struct Ends {{\n    finished: atomic<u32>,\n    stopped: atomic<u32>,\n    exhausted: atomic<u32>,\n}}\n\
             @group(0) @binding(1) var<storage, read_write> ends: Ends;\n\
             struct Params {{\n    budget: u32,\n}}\n\
             @group(0) @binding(2) var<uniform> params: Params;\n\
             var<workgroup> sh: array<atomic<u32>, {sh}>;\n\n\
             // Spends one unit of the budget; true when this invocation must leave:\n\
             // its budget is spent, or another invocation's was.\n\
             fn axb_leave(budget: ptr<function, u32>) -> bool {{\n    \
             if (*budget == 0u) {{\n        atomicAdd(&ends.exhausted, 1u);\n        return true;\n    }}\n    \
             *budget = *budget - 1u;\n    return atomicLoad(&ends.exhausted) != 0u;\n}}\n\n\
             @compute @workgroup_size({n})\n\
             fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{\n{}}}\n",
            f.run_line,
            f.header,
            codegen::indent(&f.body, 1),
            sh = f.shared_words,
        )
    }

    fn active_collective(&self, op: CollectiveOp, dst: u8, v: &str) -> String {
        match op {
            CollectiveOp::All => format!("r{dst} = select(0u, 1u, subgroupAll({v} != 0u));"),
            CollectiveOp::Any => format!("r{dst} = select(0u, 1u, subgroupAny({v} != 0u));"),
            CollectiveOp::BroadcastFirst => format!("r{dst} = subgroupBroadcastFirst({v});"),
        }
    }

    fn simt_lanes(&self, s: usize) -> (String, String) {
        (
            "let dev_lane = sg_lane;\nlet dev_sg = lidx / sg_size;\nlet wg_id = wid.x;\n"
                .to_string(),
            format!(
                "if (sg_size < {s}u) {{\n    atomicOr(&ends.unsupported, 1u);\n    return;\n}}\n"
            ),
        )
    }

    fn simt_state(&self) -> &'static str {
        "var left = false;\nvar budget = BUDGET;\n"
    }

    /// With WebGPU's `subgroups` extension, and the uniformity diagnostic
    /// off: the program's subgroup operations sit in divergent control
    /// flow on purpose.
    fn simt_file(&self, f: &SimtFile) -> String {
        format!(
            "{}{}enable subgroups;\n\
             // The program's subgroup operations sit in divergent control flow on purpose:\n\
             // that is what the SIMT-Step tests ask about (Tint would refuse them otherwise).\n\
             diagnostic(off, subgroup_uniformity);\n\n\
             // Binding 0: the global locations; 1: every invocation's registers; 2: ends.\n\
             @group(0) @binding(0) var<storage, read_write> mem: array<atomic<u32>>;\n\
             @group(0) @binding(1) var<storage, read_write> regs_out: array<u32>;\n\
             struct Ends {{\n    finished: atomic<u32>,\n    stopped: atomic<u32>,\n    unsupported: atomic<u32>,\n}}\n\
             @group(0) @binding(2) var<storage, read_write> ends: Ends;\n\
             const BUDGET: u32 = {}u;\n\n\
             @compute @workgroup_size({})\n\
             fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lidx: u32, \
             @builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_size) sg_size: u32) {{\n{}}}\n",
            f.first_line,
            f.comment,
            f.budget,
            f.launch,
            codegen::indent(&f.body, 1)
        )
    }

    fn bare(&self) -> Option<&'static dyn BareLanguage> {
        Some(&Wgsl)
    }
}

/// WebGPU guarantees 65535 workgroups per dimension
/// (`maxComputeWorkgroupsPerDimension`), and the shader reads the
/// workgroup id from x alone.
pub fn check_layout(layout: &Layout) -> Result<(), String> {
    crate::mapping::check_dispatch(layout, "WebGPU")
}

/// The declarations and the budget function every shader shares.
const PRELUDE: &str = "\
// Binding 1: how the run's threads ended, counted (zeroed before each run).
struct Ends {
    // Threads that spent their budget: the run did not terminate in time.
    exhausted: atomic<u32>,
    // Threads that left because another thread spent its budget.
    stopped: atomic<u32>,
    // Threads that reached END.
    finished: atomic<u32>,
    // Threads that left their loop before END with budget left: the device
    // ended a loop by itself, which makes its results meaningless.
    early: atomic<u32>,
}
@group(0) @binding(1) var<storage, read_write> ends: Ends;

// Binding 2: the loop iterations each thread may spend in this run.
struct Params {
    budget: u32,
}
@group(0) @binding(2) var<uniform> params: Params;

// Run at the top of every loop iteration: true to leave the loop, with
// `why` saying why (1: this thread spent its budget; 2: another did).
fn axb_leave(left: ptr<function, u32>, why: ptr<function, u32>) -> bool {
    if (atomicLoad(&ends.exhausted) != 0u) {
        *why = 2u;
        return true;
    }
    if (*left == 0u) {
        atomicAdd(&ends.exhausted, 1u);
        *why = 1u;
        return true;
    }
    *left = *left - 1u;
    return false;
}
";

/// The compute shader for `t` under `layout`; `target` names the emitting
/// target in the header comment (`wgsl`, or `webgpu` when embedded).
pub fn shader(
    t: &NamedTest,
    layout: &Layout,
    shape: Shape,
    target: &str,
) -> Result<String, String> {
    check_layout(layout)?;
    let test = &t.entry.test;
    let (thread, instance) = layout.locate_exprs("w");
    let lens: Vec<String> = test
        .threads
        .iter()
        .map(|th| codegen::uint(th.len()))
        .collect();
    let mut body = String::new();
    let _ = writeln!(body, "let w = wg.x;");
    let _ = writeln!(body, "let tid = {thread};");
    let _ = writeln!(
        body,
        "let base = ({instance}) * {};",
        codegen::uint(codegen::stride(test))
    );
    let _ = writeln!(
        body,
        "// END of each thread: its number of instructions.\nlet lens = array<u32, {}>({});",
        lens.len(),
        lens.join(", ")
    );
    body.push_str("var pc: u32 = 0u;\nvar left: u32 = params.budget;\nvar why: u32 = 0u;\n");
    body.push_str(&codegen::dispatch(test, "tid", &dialect(false), shape));
    body.push_str(
        "if (why == 2u) {\n    atomicAdd(&ends.stopped, 1u);\n} else if (why == 0u) {\n    \
         if (pc == lens[tid]) {\n        atomicAdd(&ends.finished, 1u);\n    } else {\n        \
         atomicAdd(&ends.early, 1u);\n    }\n}\n",
    );
    Ok(format!(
        "{}\
         // Dispatch the workgroups in x; bindings: 0 memory, 1 how threads ended, 2 the budget.\n\n\
         // Binding 0: the test's memory; instance i owns words [i * {stride}, (i + 1) * {stride}).\n\
         @group(0) @binding(0) var<storage, read_write> mem: array<atomic<u32>>;\n\n\
         {PRELUDE}\n\
         @compute @workgroup_size(1)\n\
         fn main(@builtin(workgroup_id) wg: vec3<u32>) {{\n{}}}\n",
        codegen::shader_preamble(t, layout, shape, target, "//"),
        codegen::indent(&body, 1),
        stride = codegen::stride(test),
    ))
}

/// The bare (verification) form of [`shader`]: the test's code alone, no
/// iteration budget and no counters of how threads ended, the memory a
/// fixed-size array (the oracle's shader frontend reads fixed-size arrays
/// only), and the launch in a `workgroups W;` comment line. For a
/// verifier (`oracle classify`), not for running: nothing bounds a
/// spinning run.
pub fn bare_shader(t: &NamedTest, layout: &Layout, shape: Shape) -> Result<String, String> {
    check_layout(layout)?;
    let test = &t.entry.test;
    let (thread, instance) = layout.locate_exprs("w");
    let stride = codegen::stride(test);
    let words = stride as u64 * layout.instances as u64;
    let mut body = String::new();
    let _ = writeln!(body, "let w = wg.x;\nlet tid = {thread};");
    let _ = writeln!(body, "let base = ({instance}) * {};", codegen::uint(stride));
    body.push_str("var pc: u32 = 0u;\n");
    body.push_str(&codegen::dispatch(test, "tid", &dialect(true), shape));
    Ok(format!(
        "{}\n\
         // The test's memory, all 0 at the start: instance i owns words [i * {stride}, (i + 1) * {stride}).\n\
         @group(0) @binding(0) var<storage, read_write> mem: array<atomic<u32>, {words}>;\n\n\
         @compute @workgroup_size(1)\n\
         fn main(@builtin(workgroup_id) wg: vec3<u32>) {{\n{}}}\n",
        codegen::bare_preamble(t, layout, shape, "wgsl", "//"),
        codegen::indent(&body, 1),
    ))
}

/// Validates WGSL `source` as a WebGPU implementation would: parsed and
/// validated by naga (wgpu's shader compiler) with no capabilities beyond
/// WebGPU's core. The error is naga's report, with the offending line.
///
/// WGSL's uniformity analysis constrains barriers, `workgroupUniformLoad`,
/// subgroup operations and derivatives (explicit, or implicit in
/// `textureSample`). naga checks derivatives but not the others (it
/// records their requirement without reporting it: naga issue 1744), so
/// this also refuses any of them outright: the test shaders use none, which
/// makes them uniform under the analysis of any WebGPU implementation.
pub fn validate(source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        let name = f.name.as_deref().unwrap_or("?");
        if let Some(what) = needs_uniformity(&f.body) {
            return Err(format!(
                "function `{name}`: {what}, which WGSL's uniformity analysis restricts: the test shaders must have none"
            ));
        }
        for (_, e) in f.expressions.iter() {
            if matches!(
                e,
                naga::Expression::Derivative { .. } | naga::Expression::ImageSample { .. }
            ) {
                return Err(format!(
                    "function `{name}`: a derivative or texture sample, which WGSL's uniformity analysis restricts: the test shaders must have none"
                ));
            }
        }
    }
    Ok(())
}

/// The first statement in `block` (or nested in it) that WGSL's
/// uniformity analysis requires to be in uniform control flow.
fn needs_uniformity(block: &naga::Block) -> Option<&'static str> {
    use naga::Statement as S;
    block.iter().find_map(|s| match s {
        S::ControlBarrier(_) | S::MemoryBarrier(_) => Some("a barrier"),
        S::WorkGroupUniformLoad { .. } => Some("a workgroupUniformLoad"),
        S::SubgroupBallot { .. }
        | S::SubgroupGather { .. }
        | S::SubgroupCollectiveOperation { .. } => Some("a subgroup operation"),
        S::Block(b) => needs_uniformity(b),
        S::If { accept, reject, .. } => {
            needs_uniformity(accept).or_else(|| needs_uniformity(reject))
        }
        S::Switch { cases, .. } => cases.iter().find_map(|c| needs_uniformity(&c.body)),
        S::Loop {
            body, continuing, ..
        } => needs_uniformity(body).or_else(|| needs_uniformity(continuing)),
        _ => None,
    })
}

impl BareLanguage for Wgsl {
    fn prologue(&self) -> &'static str {
        ""
    }

    /// WGSL requires the directive; the oracle's reader blanks it for
    /// naga, which refuses it (docs/KERNEL.md §10.2).
    fn subgroup_enable(&self) -> &'static str {
        "enable subgroups;\n"
    }

    fn shared_starts_undefined(&self) -> bool {
        false
    }

    fn declaration(
        &self,
        name: &str,
        len: usize,
        array: bool,
        shared: bool,
        binding: usize,
    ) -> String {
        let ty = if array {
            format!("array<atomic<u32>, {len}>")
        } else {
            "atomic<u32>".to_string()
        };
        if shared {
            format!("var<workgroup> {name}: {ty};\n")
        } else {
            format!("@group(0) @binding({binding}) var<storage, read_write> {name}: {ty};\n")
        }
    }

    fn builtin_ids(&self) -> (&'static str, &'static str) {
        ("wid.x", "lid.x")
    }

    fn state(&self) -> &'static str {
        "var pc = 0u;\n"
    }

    fn entry_point(&self, n: usize, body: &str) -> String {
        format!(
            "\n@compute @workgroup_size({n})\n\
             fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{\n{body}}}\n"
        )
    }
}

/// The WGSL target: one compute shader per test and mapping with an
/// iteration budget (or its bare form), and kernel programs.
pub struct Shaders;

impl Emitter for Shaders {
    fn name(&self) -> &'static str {
        "wgsl"
    }

    fn extension(&self) -> &'static str {
        "wgsl"
    }

    fn shader(
        &self,
        t: &NamedTest,
        layout: &Layout,
        shape: Shape,
        bare: bool,
    ) -> Result<String, String> {
        if bare {
            bare_shader(t, layout, shape)
        } else {
            shader(t, layout, shape, "wgsl")
        }
    }

    fn has_bare(&self) -> bool {
        true
    }

    /// naga in-process, each file by its kind (a test's shader, a kernel
    /// program's run form or SIMT form); the SIMT page is skipped.
    fn check(
        &self,
        _: &Path,
        files: &[File],
        paths: &[PathBuf],
        _: &Path,
    ) -> Result<(), ToolError> {
        for (f, p) in files.iter().zip(paths) {
            if f.path.extension().is_some_and(|e| e == "html") {
                continue;
            }
            let validate = if f.contents.starts_with(KERNEL_FIRST_LINE) {
                validate_kernel
            } else if f.contents.starts_with(SIMT_FIRST_LINE) {
                validate_simt
            } else {
                validate
            };
            validate(&f.contents).map_err(|output| ToolError::Failed {
                command: format!("naga (in-process WGSL validation) {}", p.display()),
                output,
            })?;
        }
        Ok(())
    }

    fn kernel(&self) -> Option<Lang> {
        Some(Lang::Wgsl)
    }
}

/// The WGSL directive the SIMT form needs (WebGPU's `subgroups` feature).
pub const SUBGROUPS_ENABLE: &str = "enable subgroups;";

/// Validates a kernel program's WGSL as a WebGPU implementation would:
/// naga parses and validates it with WebGPU's core capabilities, and since
/// naga does not report WGSL's uniformity analysis (naga issue 1744), this
/// checks the one rule the emitted shaders meet it by: every barrier is
/// outside every loop and switch, under `if`s whose conditions read only
/// the workgroup id (uniform in a workgroup) and constants. (The emitted
/// entry points never return early: naga's only `return`s are the implicit
/// last ones, after every barrier.)
pub fn validate_kernel(source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    for (_, f) in module.functions.iter() {
        if barrier_in(&f.body) {
            return Err(format!(
                "function `{}`: a barrier outside the entry point",
                f.name.as_deref().unwrap_or("?")
            ));
        }
    }
    for ep in &module.entry_points {
        let f = &ep.function;
        // The argument that is the workgroup id.
        let wid = f.arguments.iter().position(|a| {
            matches!(
                a.binding,
                Some(naga::Binding::BuiltIn(naga::BuiltIn::WorkGroupId))
            )
        });
        uniform_barriers(f, &f.body, wid, true)?;
    }
    Ok(())
}

/// Whether `block` holds a barrier anywhere.
fn barrier_in(block: &naga::Block) -> bool {
    use naga::Statement as S;
    block.iter().any(|s| match s {
        S::ControlBarrier(_) | S::MemoryBarrier(_) => true,
        S::Block(b) => barrier_in(b),
        S::If { accept, reject, .. } => barrier_in(accept) || barrier_in(reject),
        S::Switch { cases, .. } => cases.iter().any(|c| barrier_in(&c.body)),
        S::Loop {
            body, continuing, ..
        } => barrier_in(body) || barrier_in(continuing),
        _ => false,
    })
}

/// Whether expression `e` reads only the workgroup id argument, constants
/// and pure operations on them.
fn uniform_expr(f: &naga::Function, e: naga::Handle<naga::Expression>, wid: Option<usize>) -> bool {
    use naga::Expression as E;
    match &f.expressions[e] {
        E::Literal(_) | E::Constant(_) | E::ZeroValue(_) => true,
        E::FunctionArgument(i) => Some(*i as usize) == wid,
        E::AccessIndex { base, .. } => uniform_expr(f, *base, wid),
        E::Binary { left, right, .. } => {
            uniform_expr(f, *left, wid) && uniform_expr(f, *right, wid)
        }
        E::Unary { expr, .. } => uniform_expr(f, *expr, wid),
        _ => {
            // A named `let` of a uniform value is the expression itself.
            false
        }
    }
}

fn uniform_barriers(
    f: &naga::Function,
    block: &naga::Block,
    wid: Option<usize>,
    uniform: bool,
) -> Result<(), String> {
    use naga::Statement as S;
    for s in block.iter() {
        match s {
            S::ControlBarrier(_) | S::MemoryBarrier(_) if !uniform => {
                return Err("a barrier in non-uniform control flow".into())
            }
            S::Block(b) => uniform_barriers(f, b, wid, uniform)?,
            S::If {
                condition,
                accept,
                reject,
            } => {
                let u = uniform && uniform_expr(f, *condition, wid);
                uniform_barriers(f, accept, wid, u)?;
                uniform_barriers(f, reject, wid, u)?;
            }
            S::Switch { cases, .. } if cases.iter().any(|c| barrier_in(&c.body)) => {
                return Err("a barrier in a switch".into());
            }
            S::Loop {
                body, continuing, ..
            } if barrier_in(body) || barrier_in(continuing) => {
                return Err("a barrier in a loop".into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// Validates a SIMT form's WGSL as a WebGPU implementation offering the
/// `subgroups` feature would: naga with the subgroup capabilities (the
/// form has no barriers, so the uniformity rule of
/// [`validate_kernel`] has nothing to check). naga 30 takes the
/// subgroup builtins but refuses the `enable subgroups;` directive itself
/// ("not yet supported", wgpu issue 5555), so that directive is blanked
/// (positions stay) before naga reads the rest, as the oracle's WGSL
/// reader does.
pub fn validate_simt(source: &str) -> Result<(), String> {
    if !source.lines().any(|l| l == SUBGROUPS_ENABLE) {
        return Err(format!(
            "no `{SUBGROUPS_ENABLE}` line: a browser would refuse the subgroup builtins"
        ));
    }
    let source = &*progress_litmus::kernel::shader::wgsl::without_subgroups_enable(source);
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::SUBGROUP,
    )
    .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
    .subgroup_operations(naga::valid::SubgroupOperationSet::all())
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::Mapping;

    fn named(src: &str) -> NamedTest {
        let test = progress_litmus::axb::text::parse(src).unwrap();
        NamedTest {
            name: "t".into(),
            entry: progress_litmus::axb::suite::Entry::new("t", test),
            source: "t.txt".into(),
        }
    }

    #[test]
    fn a_shader_validates_in_both_shapes_and_counts_how_threads_end() {
        let t = named(
            "THREAD0\natomic_exch_branch(0,0,1,0)\natomic_store(0,0)\nTHREAD1\natomic_store(0,1)\n",
        );
        for shape in [Shape::Switch, Shape::IfChain] {
            for mapping in Mapping::ALL {
                let layout = Layout::new(mapping, 2, Some(3));
                let s = shader(&t, &layout, shape, "wgsl").unwrap();
                validate(&s).unwrap_or_else(|e| panic!("{mapping} {shape:?}:\n{e}\n{s}"));
                assert!(s.starts_with("// axb-run: mapping="));
                assert_eq!(
                    s.matches("if (axb_leave(&left, &why)) { break; }").count(),
                    2
                );
                assert!(s.contains("let lens = array<u32, 2>(2u, 1u);"));
            }
        }
    }

    #[test]
    fn validation_reports_naga_errors_with_the_line() {
        let e = validate("fn main() { let x: u32 = 1.5; }").unwrap_err();
        assert!(e.contains("1.5") || e.contains("main"), "{e}");
        // The uniformity analysis: a barrier under non-uniform control flow.
        let bad = "@group(0) @binding(0) var<storage, read_write> m: array<u32>;\n\
                   @compute @workgroup_size(2)\n\
                   fn main(@builtin(local_invocation_index) i: u32) {\n\
                   \x20   if (m[i] == 0u) { workgroupBarrier(); }\n}\n";
        let e = validate(bad).unwrap_err();
        assert!(e.contains("a barrier") && e.contains("uniformity"), "{e}");
        // naga's own analysis: a derivative under non-uniform control flow.
        let derivative = "@fragment\n\
                          fn main(@location(0) x: f32) -> @location(0) vec4<f32> {\n\
                          \x20   var d = 0.0;\n\
                          \x20   if (x > 0.5) { d = dpdx(x); }\n\
                          \x20   return vec4<f32>(d);\n}\n";
        let e = validate(derivative).unwrap_err();
        assert!(e.contains("uniform") || e.contains("derivative"), "{e}");
    }

    #[test]
    fn too_many_workgroups_are_refused() {
        let t = named("THREAD0\natomic_store(0,1)\nTHREAD1\natomic_store(0,1)\n");
        let layout = Layout::new(Mapping::Chunked, 2, Some(40_000));
        assert!(shader(&t, &layout, Shape::Switch, "wgsl")
            .unwrap_err()
            .contains("lower --instances"));
    }
}
