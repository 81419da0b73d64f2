//! The GLSL target: a GLSL 450 compute shader per test and mapping, for
//! Vulkan (through Amber, [`crate::target::amber`], or any host).
//!
//! One invocation per workgroup (`local_size_x = 1`); dispatch
//! `workgroups` x 1 x 1 (see the `axb-run:` line). Bindings, set 0:
//! 0 is the test memory (`words` uints, zeroed), 1 the stop flag (one uint,
//! zero; a host sets it nonzero at its deadline, through host-visible
//! coherent memory). Memory accesses are `atomicExchange` and `atomicAdd`
//! of 0 on the storage buffer; the stop flag is a `coherent volatile` read,
//! once per loop iteration, and is not an atomic so it adds nothing to the
//! atomic traffic of the test.

use crate::mapping::Layout;
use crate::target::codegen::{self, Dialect, Shape};
use crate::target::emitter::Emitter;
use crate::target::language::{
    rmw_suffix, Atomic, BareLanguage, KernelFile, KernelLanguage, Lang, Language, SimtFile, Syntax,
};
use crate::target::File;
use crate::toolchain::{self, ToolError};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::program::{CollectiveOp, RmwOp};
use std::path::{Path, PathBuf};

fn dialect(bare: bool) -> Dialect {
    Dialect {
        lang: &Glsl,
        leave: if bare { "" } else { "stop_flag != 0u" }.to_string(),
    }
}

/// The GLSL 450 language ([`Language`], [`KernelLanguage`]): atomics on
/// buffer and shared variables, clustered subgroup operations.
pub struct Glsl;

impl Language for Glsl {
    fn name(&self) -> &'static str {
        "glsl"
    }

    fn syntax(&self) -> Syntax {
        Syntax::C
    }

    fn discard(&self) -> &'static str {
        ""
    }

    fn exchange(&self, cell: &str, v: &str) -> String {
        format!("atomicExchange({cell}, {v})")
    }

    fn fetch_add(&self, cell: &str, v: &str) -> String {
        format!("atomicAdd({cell}, {v})")
    }
}

impl KernelLanguage for Glsl {
    fn extension(&self) -> &'static str {
        "comp"
    }

    fn title(&self) -> &'static str {
        "GLSL/Vulkan"
    }

    /// GLSL 450 has no atomic load, store or subtract: a load is an or of
    /// 0, a store an exchange, a subtract an add of the two's complement.
    fn atomic(&self, op: Atomic, cell: &str, args: &[&str]) -> String {
        let name = match op {
            Atomic::Load => return format!("atomicOr({cell}, 0u)"),
            Atomic::Store | Atomic::Exchange => "Exchange",
            Atomic::CompareExchange => "CompSwap",
            Atomic::Fetch(RmwOp::Sub) => {
                return format!("atomicAdd({cell}, (0u - {}))", args[0]);
            }
            Atomic::Fetch(rmw) => rmw_suffix(rmw),
        };
        format!("atomic{name}({cell}, {})", args.join(", "))
    }

    fn max_subgroup(&self) -> usize {
        128
    }

    fn max_workgroup(&self) -> usize {
        1024
    }

    fn barrier(&self) -> &'static str {
        "barrier();"
    }

    fn collective_refusal(&self, _n: usize, s: usize) -> Option<String> {
        (!s.is_power_of_two()).then(|| format!(
            "subgroup_size {s}: a collective over the program's subgroup is a clustered subgroup operation in GLSL (GL_KHR_shader_subgroup_clustered), whose cluster size must be a power of two; emit it for cuda"
        ))
    }

    fn stop(&self) -> &'static str {
        "if (stop_flag != 0u) { left = true; break; }\n"
    }

    fn ids(&self, s: usize) -> String {
        format!(
            "uint wg_id = gl_WorkGroupID.x;\nuint local_id = gl_LocalInvocationID.x;\nuint subgroup_id = local_id / {s}u;\nuint lane_id = local_id % {s}u;\n"
        )
    }

    /// Clusters of `s` invocations of the device's subgroup are the
    /// program's subgroups only where the device's subgroup size is a
    /// multiple of `s` and local ids map to subgroup invocation ids in
    /// order (as implementations do, and Vulkan does not promise); a
    /// workgroup where that does not hold does not run the program, so
    /// that no collective is taken over other invocations than the
    /// program's: its invocations count as neither finished nor stopped.
    fn subgroup_setup(&self, s: usize) -> String {
        format!(
            "// The device's subgroups must hold the program's as clusters of {s}:\n\
             // else the workgroup leaves, counted neither finished nor stopped.\n\
             uint sg_n = subgroupClusteredAdd(1u, {s}u);\n\
             uint sg_lo = subgroupClusteredMin(subgroup_id, {s}u);\n\
             uint sg_hi = subgroupClusteredMax(subgroup_id, {s}u);\n\
             if (local_id == 0u) {{ sg_bad = 0u; }}\n\
             barrier();\n\
             if (gl_SubgroupSize % {s}u != 0u || gl_SubgroupInvocationID % {s}u != lane_id || sg_n != {s}u || sg_lo != subgroup_id || sg_hi != subgroup_id) {{\n    atomicOr(sg_bad, 1u);\n}}\n\
             barrier();\n\
             if (sg_bad != 0u) {{\n    return;\n}}\n"
        )
    }

    fn collectives_note(&self) -> &'static str {
        "clustered subgroup operations over the program's\n\
         {comment} subgroups (GL_KHR_shader_subgroup_clustered: the host must enable them)"
    }

    fn collective(&self, op: CollectiveOp, v: &str, s: usize, out: &mut String) -> String {
        match op {
            CollectiveOp::All => format!("subgroupClusteredAnd(({v} != 0u) ? 1u : 0u, {s}u)"),
            CollectiveOp::Any => format!("subgroupClusteredOr(({v} != 0u) ? 1u : 0u, {s}u)"),
            CollectiveOp::BroadcastFirst => {
                // The value of the lowest lane taking part.
                out.push_str(&format!(
                    "uint first = subgroupClusteredMin(lane_id, {s}u);\n"
                ));
                format!("subgroupClusteredOr((lane_id == first) ? {v} : 0u, {s}u)")
            }
        }
    }

    fn run_state(&self) -> &'static str {
        "uint pc = 0u;\nbool left = false;\n"
    }

    fn count_end(&self) -> &'static str {
        "if (left) { atomicAdd(ends.stopped, 1u); } else { atomicAdd(ends.finished, 1u); }\n"
    }

    fn shared_store(&self, cell: usize, v: u16) -> String {
        format!("sh[{cell}] = {v}u;")
    }

    /// The compute shader around the body: the extensions collectives
    /// need and the bindings the Vulkan hosts set up.
    fn kernel_file(&self, f: &KernelFile) -> String {
        let n = f.workgroup_size;
        let (ext, sg_bad) = if f.collectives {
            (
                "#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_clustered : require\n",
                "shared uint sg_bad;\n",
            )
        } else {
            ("", "")
        };
        format!(
            "#version 450\n{ext}{}{}\
             layout(local_size_x = {n}, local_size_y = 1, local_size_z = 1) in;\n\n\
             // Binding 0: the global locations (see the first line); 1: the stop flag; 2: ends.\n\
             layout(std430, set = 0, binding = 0) buffer Memory {{\n    uint mem[];\n}};\n\
             layout(std430, set = 0, binding = 1) coherent volatile buffer Stop {{\n    uint stop_flag;\n}};\n\
             layout(std430, set = 0, binding = 2) buffer Ends {{\n    uint finished;\n    uint stopped;\n}} ends;\n\
             shared uint sh[{sh}];\n{sg_bad}\n\
             void main() {{\n{}}}\n",
            f.run_line,
            f.header,
            codegen::indent(&f.body, 1),
            sh = f.shared_words,
        )
    }

    fn active_collective(&self, op: CollectiveOp, dst: u8, v: &str) -> String {
        match op {
            CollectiveOp::All => format!("r{dst} = subgroupAll({v} != 0u) ? 1u : 0u;"),
            CollectiveOp::Any => format!("r{dst} = subgroupAny({v} != 0u) ? 1u : 0u;"),
            CollectiveOp::BroadcastFirst => format!("r{dst} = subgroupBroadcastFirst({v});"),
        }
    }

    fn simt_lanes(&self, s: usize) -> (String, String) {
        (
            "uint dev_lane = gl_SubgroupInvocationID;\nuint dev_sg = gl_SubgroupID;\nuint wg_id = gl_WorkGroupID.x;\n".to_string(),
            format!("if (gl_SubgroupSize < {s}u) {{\n    atomicOr(ends.unsupported, 1u);\n    return;\n}}\n"),
        )
    }

    fn simt_state(&self) -> &'static str {
        "bool left = false;\nuint budget = BUDGET;\n"
    }

    fn simt_file(&self, f: &SimtFile) -> String {
        format!(
            "#version 450\n\
             #extension GL_KHR_shader_subgroup_basic : require\n\
             #extension GL_KHR_shader_subgroup_vote : require\n\
             #extension GL_KHR_shader_subgroup_ballot : require\n\
             {}{}\
             layout(local_size_x = {}, local_size_y = 1, local_size_z = 1) in;\n\n\
             // Binding 0: the global locations; 1: every invocation's registers; 2: ends.\n\
             layout(std430, set = 0, binding = 0) buffer Memory {{\n    uint mem[];\n}};\n\
             layout(std430, set = 0, binding = 1) buffer Regs {{\n    uint regs_out[];\n}};\n\
             layout(std430, set = 0, binding = 2) buffer Ends {{\n    uint finished;\n    uint stopped;\n    uint unsupported;\n}} ends;\n\
             const uint BUDGET = {}u;\n\n\
             void main() {{\n{}}}\n",
            f.first_line,
            f.comment,
            f.launch,
            f.budget,
            codegen::indent(&f.body, 1)
        )
    }

    fn bare(&self) -> Option<&'static dyn BareLanguage> {
        Some(&Glsl)
    }
}

/// Vulkan guarantees only 65535 workgroups in one dimension, and the
/// shader reads the workgroup id from x alone.
pub fn check_layout(layout: &Layout) -> Result<(), String> {
    crate::mapping::check_dispatch(layout, "Vulkan")
}

/// The compute shader for `t` under `layout`; `target` names the emitting
/// target in the header comment (`glsl`, or `amber` when embedded).
pub fn shader(
    t: &NamedTest,
    layout: &Layout,
    shape: Shape,
    target: &str,
) -> Result<String, String> {
    check_layout(layout)?;
    let test = &t.entry.test;
    let body = codegen::shader_body(test, layout, &dialect(false), shape);
    Ok(format!(
        "#version 450\n{}\
         // Dispatch the workgroups in x; binding 0: memory, binding 1: stop flag.\n\
         layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;\n\n\
         // The test's memory: instance i owns words [i * {stride}, (i + 1) * {stride}).\n\
         layout(std430, set = 0, binding = 0) buffer Memory {{\n    uint mem[];\n}};\n\n\
         // Set nonzero by the host at its deadline; read once per loop iteration.\n\
         layout(std430, set = 0, binding = 1) coherent volatile buffer Stop {{\n    uint stop_flag;\n}};\n\n\
         void main() {{\n    uint w = gl_WorkGroupID.x;\n{}}}\n",
        codegen::shader_preamble(t, layout, shape, target, "//"),
        codegen::indent(&body, 1),
        stride = codegen::stride(test),
    ))
}

/// The bare (verification) form of [`shader`]: the test's code alone, no
/// stop flag, the memory a fixed-size array (the oracle's shader frontend
/// reads fixed-size arrays only), and the launch in a `workgroups W;`
/// comment line. For a verifier (`oracle classify`), not for running:
/// nothing ends a spinning run.
pub fn bare_shader(t: &NamedTest, layout: &Layout, shape: Shape) -> Result<String, String> {
    check_layout(layout)?;
    let test = &t.entry.test;
    let body = codegen::shader_body(test, layout, &dialect(true), shape);
    let words = codegen::stride(test) as u64 * layout.instances as u64;
    Ok(format!(
        "#version 450\n{}\
         layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;\n\n\
         // The test's memory, all 0 at the start: instance i owns words [i * {stride}, (i + 1) * {stride}).\n\
         layout(std430, set = 0, binding = 0) buffer Memory {{\n    uint mem[{words}];\n}};\n\n\
         void main() {{\n    uint w = gl_WorkGroupID.x;\n{}}}\n",
        codegen::bare_preamble(t, layout, shape, "glsl", "//"),
        codegen::indent(&body, 1),
        stride = codegen::stride(test),
    ))
}

impl BareLanguage for Glsl {
    fn prologue(&self) -> &'static str {
        "#version 450\n"
    }

    fn subgroup_enable(&self) -> &'static str {
        "#extension GL_KHR_shader_subgroup_vote : require\n#extension GL_KHR_shader_subgroup_ballot : require\n"
    }

    /// GLSL leaves `shared` memory undefined (docs/KERNEL.md §10.3).
    fn shared_starts_undefined(&self) -> bool {
        true
    }

    fn declaration(
        &self,
        name: &str,
        len: usize,
        array: bool,
        shared: bool,
        binding: usize,
    ) -> String {
        let dim = if array {
            format!("[{len}]")
        } else {
            String::new()
        };
        if shared {
            format!("shared uint {name}{dim};\n")
        } else {
            format!("layout(std430, set = 0, binding = {binding}) buffer B_{name} {{\n    uint {name}{dim};\n}};\n")
        }
    }

    fn builtin_ids(&self) -> (&'static str, &'static str) {
        ("gl_WorkGroupID.x", "gl_LocalInvocationID.x")
    }

    /// `v` is declared once at the top (naga gives every declaration a
    /// variable of its own, the oracle a register each).
    fn state(&self) -> &'static str {
        "uint pc = 0u;\nuint v;\n"
    }

    fn entry_point(&self, n: usize, body: &str) -> String {
        format!(
            "layout(local_size_x = {n}, local_size_y = 1, local_size_z = 1) in;\n\n\
             void main() {{\n{body}}}\n"
        )
    }
}

/// The GLSL target: one compute shader per test and mapping (or its bare
/// form), and kernel programs.
pub struct Shaders;

impl Emitter for Shaders {
    fn name(&self) -> &'static str {
        "glsl"
    }

    fn extension(&self) -> &'static str {
        "comp"
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
            shader(t, layout, shape, "glsl")
        }
    }

    fn has_bare(&self) -> bool {
        true
    }

    /// glslangValidator.
    fn check(&self, _: &Path, _: &[File], paths: &[PathBuf], _: &Path) -> Result<(), ToolError> {
        toolchain::check_glsl(paths)
    }

    fn kernel(&self) -> Option<Lang> {
        Some(Lang::Glsl)
    }
}
