//! The Vulkan target: the GLSL shaders of [`crate::target::glsl`], compiled to
//! SPIR-V, run on any Vulkan device by one generic host program
//! (`templates/vulkan_host.cpp`) with a deadline and a stop flag.
//!
//! `backends emit --target vulkan` writes the shaders (one per test and
//! mapping, the instance count baked in), `vulkan_host.cpp` and `build.sh`,
//! which compiles the shaders with glslangValidator and the host with
//! `g++ ... -lvulkan` (Debian: `glslang-tools`, `libvulkan-dev`). Then
//! `./vkrun --shaders .` runs them, with the command line and JSON result
//! lines of the C++ and CUDA programs (see [`crate::target::host`]) plus
//! `--shaders DIR`, `--device D` and `--info`.
//!
//! Unlike Amber, which runs a dispatch to completion, the host stops a run
//! at its deadline: it writes the stop flag, a word of host-visible,
//! host-coherent memory that every loop iteration of the shader reads, so
//! a non-terminating run ends and the next one starts in the same process.
//! The word is device-local where the device has such memory
//! (`--stop-memory auto`): on an NVIDIA H200 a flag in host memory never
//! reached a running dispatch (`results/h200-vulkan/README.md`).
//! `backends run --target vulkan` does all of this for a suite.
//!
//! **The canary.** A run that ends is only evidence of termination if the
//! device never ends a loop by itself, and some do: Mesa's llvmpipe, behind
//! the CPU Vulkan device lavapipe, leaves every loop of a shader after 65535
//! iterations in all (`LP_MAX_TGSI_LOOP_ITERATIONS`), so on it every spin
//! loop "terminates" within milliseconds. The emitted directory therefore
//! holds [`CANARY`], one thread waiting for a write nobody makes, which no
//! scheduler can end; before any run (and for `--info` with `--shaders`) the
//! host dispatches it with a short deadline and refuses the device, naming
//! this reason, if the canary ends. `--no-canary` runs anyway, for testing
//! the host itself on such a device (its non-termination results are then
//! meaningless).

use crate::mapping::{Layout, Mapping};
use crate::target::codegen::Shape;
use crate::target::emitter::{Clash, Emitter, Suite};
use crate::target::glsl;
use crate::target::{templates, File};
use crate::toolchain::{self, Tool, ToolError};
use progress_litmus::axb::load::NamedTest;
use std::path::{Path, PathBuf};

pub use crate::target::host::CANARY;

/// The canary shader ([`crate::target::host::canary_test`]) under the plain mapping.
pub fn canary(shape: Shape) -> File {
    let layout = Layout::new(Mapping::Plain, 1, None);
    File {
        path: PathBuf::from(format!("{CANARY}.comp")),
        contents: crate::target::glsl::shader(
            &crate::target::host::canary_test(),
            &layout,
            shape,
            "vulkan",
        )
        .expect("one workgroup fits any device"),
    }
}

/// The host program's source: `templates/vulkan_host.cpp` with the
/// helpers every generated host shares ([`templates::HOST_UTIL`]).
pub fn host() -> String {
    templates::VULKAN_HOST.replace("// @HOST_UTIL@\n", templates::HOST_UTIL)
}

/// The file name of the host source in an emitted directory.
pub const HOST_FILE: &str = "vulkan_host.cpp";

/// The build script of an emitted directory.
pub const BUILD_SCRIPT: &str = "#!/bin/sh\n\
# Compiles every shader here to SPIR-V and builds the Vulkan host `vkrun`.\n\
# Needs glslangValidator (Debian: glslang-tools) and the Vulkan loader and\n\
# headers (Debian: libvulkan-dev). Then run: ./vkrun --shaders . --help\n\
set -e\n\
cd \"$(dirname \"$0\")\"\n\
for f in *.comp; do\n\
\x20   glslangValidator -V --target-env vulkan1.1 -o \"${f%.comp}.spv\" \"$f\" > /dev/null\n\
done\n\
g++ -std=c++17 -O2 vulkan_host.cpp -lvulkan -o vkrun\n";

/// Compiles the shaders `comps` to SPIR-V beside them (`.spv`), in
/// parallel, and the host `src` to `exe`.
pub fn build(comps: &[PathBuf], src: &Path, exe: &Path) -> Result<(), ToolError> {
    use rayon::prelude::*;
    toolchain::find(Tool::Glslang)?;
    comps
        .par_iter()
        .try_for_each(|c| toolchain::compile_glsl_spirv(c, &c.with_extension("spv")))?;
    toolchain::compile_vulkan_host(src, exe)
}

/// The Vulkan target: the GLSL shaders, and the generic host that runs
/// them with a deadline, its canary and its build script.
pub struct Host;

impl Emitter for Host {
    fn name(&self) -> &'static str {
        "vulkan"
    }

    fn extension(&self) -> &'static str {
        "comp"
    }

    fn shader(
        &self,
        t: &NamedTest,
        layout: &Layout,
        shape: Shape,
        _: bool,
    ) -> Result<String, String> {
        glsl::shader(t, layout, shape, "vulkan")
    }

    /// The canary shader (refused if a test's file would take its name),
    /// the host's source and its build script.
    fn finish(&self, mut out: Vec<File>, suite: &Suite) -> Result<Vec<File>, Clash> {
        if suite
            .owner(Path::new(&format!("{CANARY}.plain.comp")))
            .is_some()
        {
            return Err(Clash {
                path: PathBuf::from(format!("{CANARY}.comp")),
                first: CANARY.to_string(),
                second: "the built-in canary".to_string(),
            });
        }
        out.push(canary(suite.shape));
        out.push(File {
            path: PathBuf::from(HOST_FILE),
            contents: host(),
        });
        out.push(File {
            path: PathBuf::from("build.sh"),
            contents: BUILD_SCRIPT.to_string(),
        });
        Ok(out)
    }

    /// SPIR-V beside each shader and the host `vkrun`, as `build.sh` does.
    fn check(&self, dir: &Path, _: &[File], paths: &[PathBuf], _: &Path) -> Result<(), ToolError> {
        let comps: Vec<PathBuf> = (paths.iter())
            .filter(|p| p.extension().is_some_and(|e| e == "comp"))
            .cloned()
            .collect();
        build(&comps, &dir.join(HOST_FILE), &dir.join("vkrun"))
    }
}
