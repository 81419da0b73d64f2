//! The Metal target: a `.metal` kernel per test and mapping, and one Swift
//! host harness ([`METAL_HARNESS`](crate::target::templates::METAL_HARNESS),
//! written as `harness.swift`) that runs them with a deadline.
//!
//! The kernel `axb_test` takes buffer 0 (test memory, `words` uints,
//! zeroed) and buffer 1 (the stop flag), and is dispatched as `workgroups`
//! threadgroups of one thread (see the `axb-run:` line, which the harness
//! reads). Metal atomics are relaxed only (MSL spec); the stop flag is read
//! with a relaxed atomic load once per loop iteration, because MSL gives no
//! volatile guarantee on device memory.
//!
//! Build the harness on macOS: `swiftc -O harness.swift -o axb-metal`, run
//! `./axb-metal --deadline-ms 5000 --iterations 20 *.metal`.

use crate::mapping::Layout;
use crate::target::codegen::{self, Dialect, Shape};
use crate::target::emitter::{Clash, Emitter, Suite};
use crate::target::language::{Language, Syntax};
use crate::target::{templates, File};
use crate::toolchain::{self, ToolError};
use progress_litmus::axb::load::NamedTest;
use std::path::{Path, PathBuf};

fn dialect() -> Dialect {
    Dialect {
        lang: &Metal,
        leave: "atomic_load_explicit(stop, memory_order_relaxed) != 0u".to_string(),
    }
}

/// The Metal Shading Language: relaxed atomics on `device atomic_uint` ([`Language`]; AXB tests only).
pub struct Metal;

impl Language for Metal {
    fn name(&self) -> &'static str {
        "metal"
    }

    fn syntax(&self) -> Syntax {
        Syntax::C
    }

    fn discard(&self) -> &'static str {
        "(void)"
    }

    fn exchange(&self, cell: &str, v: &str) -> String {
        format!("atomic_exchange_explicit(&{cell}, {v}, memory_order_relaxed)")
    }

    fn fetch_add(&self, cell: &str, v: &str) -> String {
        format!("atomic_fetch_add_explicit(&{cell}, {v}, memory_order_relaxed)")
    }
}

/// The Metal kernel for `t` under `layout`.
pub fn kernel(t: &NamedTest, layout: &Layout, shape: Shape) -> String {
    let test = &t.entry.test;
    let body = codegen::shader_body(test, layout, &dialect(), shape);
    format!(
        "{}\
         #include <metal_stdlib>\n\
         using namespace metal;\n\n\
         // Instance i owns words [i * {stride}, (i + 1) * {stride}) of mem; the host sets\n\
         // *stop nonzero at its deadline.\n\
         kernel void axb_test(device atomic_uint* mem [[buffer(0)]],\n\
         \x20                    device atomic_uint* stop [[buffer(1)]],\n\
         \x20                    uint w [[threadgroup_position_in_grid]]) {{\n{}}}\n",
        codegen::shader_preamble(t, layout, shape, "metal", "//"),
        codegen::indent(&body, 1),
        stride = codegen::stride(test),
    )
}

/// The Metal target: one kernel per test and mapping, and the Swift
/// harness that runs them.
pub struct Kernels;

impl Emitter for Kernels {
    fn name(&self) -> &'static str {
        "metal"
    }

    fn extension(&self) -> &'static str {
        "metal"
    }

    fn shader(
        &self,
        t: &NamedTest,
        layout: &Layout,
        shape: Shape,
        _: bool,
    ) -> Result<String, String> {
        Ok(kernel(t, layout, shape))
    }

    fn finish(&self, mut kernels: Vec<File>, _: &Suite) -> Result<Vec<File>, Clash> {
        kernels.push(File {
            path: PathBuf::from("harness.swift"),
            contents: templates::METAL_HARNESS.to_string(),
        });
        Ok(kernels)
    }

    /// clang++ against the Metal shim, on the kernels.
    fn check(
        &self,
        _: &Path,
        _: &[File],
        paths: &[PathBuf],
        scratch: &Path,
    ) -> Result<(), ToolError> {
        let kernels: Vec<PathBuf> = (paths.iter())
            .filter(|p| p.extension().is_some_and(|e| e == "metal"))
            .cloned()
            .collect();
        toolchain::check_metal(&kernels, scratch)
    }
}
