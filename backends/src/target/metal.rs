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
use crate::target::language::{Language, Syntax};
use progress_litmus::axb::load::NamedTest;

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
