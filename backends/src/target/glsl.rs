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
use crate::target::codegen::{self, Dialect, Shape, Syntax};
use progress_litmus::axb::load::NamedTest;

fn dialect(bare: bool) -> Dialect {
    Dialect {
        syntax: Syntax::C,
        exch: |i, v| format!("atomicExchange(mem[{i}], {v})"),
        add0: |i| format!("atomicAdd(mem[{i}], 0u)"),
        leave: if bare { "" } else { "stop_flag != 0u" }.to_string(),
        discard: "",
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
