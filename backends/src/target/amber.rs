//! The Amber target: an AmberScript carrying the GLSL shader of
//! [`crate::target::glsl`], its two buffers and the dispatch, runnable by Amber on
//! any Vulkan device (`amber -d FILE.amber`; the paper used Amber's 5 s
//! timeout to detect non-termination).
//!
//! Amber runs a dispatch to completion and cannot write a buffer while it
//! runs, so the stop buffer stays zero here: it is present so the shader is
//! byte-for-byte the one a Vulkan host with a deadline would run.

use crate::mapping::Layout;
use crate::target::codegen::{self, Shape};
use crate::target::emitter::Emitter;
use crate::target::glsl;
use crate::target::File;
use crate::toolchain::{self, ToolError};
use progress_litmus::axb::load::NamedTest;
use std::path::{Path, PathBuf};

/// The Amber script for `t` under `layout`.
pub fn script(t: &NamedTest, layout: &Layout, shape: Shape) -> Result<String, String> {
    let shader = glsl::shader(t, layout, shape, "amber")?;
    let words = codegen::stride(&t.entry.test) as u64 * layout.instances as u64;
    Ok(format!(
        "#!amber\n{}\n\
         SHADER compute axb_test GLSL\n{shader}END\n\n\
         BUFFER mem DATA_TYPE uint32 SIZE {words} FILL 0\n\
         BUFFER stop DATA_TYPE uint32 SIZE 1 FILL 0\n\n\
         PIPELINE compute axb_pipeline\n  ATTACH axb_test\n\
         \x20 BIND BUFFER mem AS storage DESCRIPTOR_SET 0 BINDING 0\n\
         \x20 BIND BUFFER stop AS storage DESCRIPTOR_SET 0 BINDING 1\nEND\n\n\
         RUN axb_pipeline {} 1 1\n",
        codegen::shader_preamble(t, layout, shape, "amber", "#"),
        layout.workgroups(),
    ))
}

/// The Amber target: one script per test and mapping, its GLSL shader
/// and buffers inside.
pub struct Scripts;

impl Emitter for Scripts {
    fn name(&self) -> &'static str {
        "amber"
    }

    fn extension(&self) -> &'static str {
        "amber"
    }

    fn shader(
        &self,
        t: &NamedTest,
        layout: &Layout,
        shape: Shape,
        _: bool,
    ) -> Result<String, String> {
        script(t, layout, shape)
    }

    /// glslangValidator on the shaders the scripts embed, cut out into
    /// `scratch`.
    fn check(
        &self,
        _: &Path,
        files: &[File],
        _: &[PathBuf],
        scratch: &Path,
    ) -> Result<(), ToolError> {
        std::fs::create_dir_all(scratch).map_err(|e| ToolError::Io(e.to_string()))?;
        let mut shaders = Vec::new();
        for f in files {
            let src = &f.contents;
            let start = src.find("#version").unwrap_or(0);
            let end = src.rfind("\nEND\n\nBUFFER").map_or(src.len(), |i| i + 1);
            let p = scratch.join(f.path.with_extension("comp"));
            std::fs::write(&p, &src[start..end]).map_err(|e| ToolError::Io(e.to_string()))?;
            shaders.push(p);
        }
        toolchain::check_glsl(&shaders)
    }
}
