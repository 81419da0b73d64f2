//! The C++ target: one self-contained C++17 program (std::thread and
//! std::atomic) holding every test, for CPU baselines (paper §6.3.1).
//!
//! Build with `g++ -std=c++17 -O2 -pthread prog.cpp -o prog`. Besides the
//! shared flags (see [`crate::target::host`]) the program takes
//!
//! ```text
//! --threads T          OS threads in the pool (default: hardware threads;
//!                      100x that over-subscribes, as in the paper)
//! --scheduler S        fair (default) or obe (occupancy-bound, linear order)
//! ```
//!
//! and its result lines add `"threads":T,"scheduler":"fair"|"obe"`. How
//! workgroups share the pool is documented in `templates/cpp_main.inc`.
//!
//! Each test becomes `uint32_t axb_test_K(thread, pc, mem, base, stop,
//! budget)`: the SPEC §6 loop from `pc` until END, the stop flag, or the end
//! of a slice of `budget` iterations, returning the pc it stopped at.

use crate::target::codegen::{self, Dialect, Shape};
use crate::target::emitter::Emitter;
use crate::target::host::{self, Harness, Options, ProgramError};
use crate::target::language::{Language, Syntax};
use crate::target::templates;
use crate::target::File;
use crate::toolchain::{self, ToolError};
use progress_litmus::axb::load::NamedTest;
use std::path::{Path, PathBuf};

/// The C++ spelling: sequentially consistent std::atomic operations; the
/// loop is left when the stop flag is set or the slice is used up.
fn dialect() -> Dialect {
    Dialect {
        lang: &Cpp,
        leave: "stop.load(std::memory_order_relaxed) || budget-- == 0u".to_string(),
    }
}

/// The C++17: `std::atomic<uint32_t>` words ([`Language`]; AXB tests only).
pub struct Cpp;

impl Language for Cpp {
    fn name(&self) -> &'static str {
        "cpp"
    }

    fn syntax(&self) -> Syntax {
        Syntax::C
    }

    fn discard(&self) -> &'static str {
        "(void)"
    }

    fn exchange(&self, cell: &str, v: &str) -> String {
        format!("{cell}.exchange({v})")
    }

    fn fetch_add(&self, cell: &str, v: &str) -> String {
        format!("{cell}.fetch_add({v})")
    }
}

const PRELUDE: &str =
    "#include <atomic>\n#include <cerrno>\n#include <chrono>\n#include <condition_variable>\n\
#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <mutex>\n\
#include <random>\n#include <string>\n#include <thread>\n#include <vector>\n\n\
// One word of test memory.\ntypedef std::atomic<uint32_t> Cell;\n";

const INFO_STRUCT: &str = "typedef uint32_t (*StepFn)(uint32_t, uint32_t, Cell*, uint32_t, const std::atomic<bool>&, uint32_t);\n\n\
struct TestInfo {\n    const char* name;\n    const char* json;  // the name as a JSON string\n    \
uint32_t threads;\n    uint32_t stride;    // words of memory per instance\n    \
uint32_t ends[8];   // END of each thread\n    StepFn step;\n};\n";

const OWN_FLAGS: &str = "  --threads T          OS threads running the workgroups (default: hardware threads)\n\
                         \x20 --scheduler S        fair: every pool thread interleaves its workgroups in random slices;\n\
                         \x20                      obe: each pool thread runs workgroups to END in id order (default: fair)\n";

/// The function of the test with index `k` in the program: the SPEC §6
/// loop of every thread, selected by `thread`.
pub fn test_function(k: usize, t: &NamedTest, shape: Shape) -> String {
    format!(
        "static uint32_t {}(uint32_t thread, uint32_t pc, Cell* mem, uint32_t base, const std::atomic<bool>& stop, uint32_t budget) {{\n{}    return pc;\n}}\n",
        host::fn_name(k),
        codegen::indent(&codegen::dispatch(&t.entry.test, "thread", &dialect(), shape), 1)
    )
}

/// The whole C++ program for `tests`.
pub fn program(tests: &[NamedTest], opts: &Options) -> Result<String, ProgramError> {
    let function = |k: usize, t: &NamedTest| test_function(k, t, opts.shape);
    let info_extra = |k: usize, t: &NamedTest| {
        let ends: Vec<String> = t
            .entry
            .test
            .threads
            .iter()
            .map(|th| codegen::uint(th.len()))
            .collect();
        format!("{{{}}}, {}", ends.join(", "), host::fn_name(k))
    };
    host::assemble(
        &Harness {
            target: "cpp",
            build: "g++ -std=c++17 -O2 -pthread THIS_FILE -o tests",
            prelude: PRELUDE,
            locate_qualifiers: "static inline",
            function: &function,
            info_struct: INFO_STRUCT,
            info_extra: &info_extra,
            own_flags: OWN_FLAGS,
            main: templates::CPP_MAIN,
        },
        tests,
        opts,
    )
}

/// The C++ target: one program for the whole suite, run on the CPU.
pub struct Program;

impl Emitter for Program {
    fn name(&self) -> &'static str {
        "cpp"
    }

    fn extension(&self) -> &'static str {
        "cpp"
    }

    fn is_program(&self) -> bool {
        true
    }

    fn program(&self, tests: &[NamedTest], opts: &Options) -> Result<String, ProgramError> {
        program(tests, opts)
    }

    /// g++, leaving the executable beside the source.
    fn check(&self, _: &Path, _: &[File], paths: &[PathBuf], _: &Path) -> Result<(), ToolError> {
        toolchain::compile_cpp(&paths[0], &paths[0].with_extension(""))
    }
}
