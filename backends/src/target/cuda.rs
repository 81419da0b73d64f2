//! The CUDA target: one `.cu` file, kernels and host harness, holding every
//! test, for NVIDIA GPUs (paper §6; harness in `templates/cuda_main.inc`).
//!
//! Build with `nvcc -O2 -o tests prog.cu` (add `-arch=sm_XX` for the
//! device; `-arch=sm_60` on a Volta+ GPU selects the pre-Volta SIMT warp
//! scheduler for intra-warp studies). Besides the shared flags (see
//! [`crate::target::host`]) the program takes
//!
//! ```text
//! --cooperative   launch with cudaLaunchCooperativeKernel; M defaults to the
//!                 most instances whose grid is co-resident (occupancy API),
//!                 and an explicit --instances that does not fit is an error
//! --intra-warp    M blocks of N threads: the N threads of an instance are
//!                 lanes of one warp (plain and round-robin only)
//! --device D      CUDA device index (default 0)
//! --info          run the canary, print the device as one JSON line and exit
//! --no-canary     skip the canary
//! --stop-grace-ms MS  how long a stopped kernel may take to end (default
//!                 30000); past it the program fails: the flag is not
//!                 reaching the device
//! --stop-memory host|device  where the stop flag lives: mapped pinned host
//!                 memory (host, the default, measured on an H200) or
//!                 device memory set by a copy on a second stream (device:
//!                 every loop then reads the GPU's own memory, not PCIe;
//!                 not yet measured on a GPU)
//! ```
//!
//! Before any test (and for `--info`) the program runs the canary of
//! [`host::canary_test`]: one block spinning on memory nobody writes. If it
//! ends within 500 ms the device ends loops by itself (a watchdog, a loop
//! limit) and the program refuses to run; if the stop flag does not end it
//! within the grace, mapped pinned memory is not reaching the kernel and no
//! deadline could be kept. `--info` reports how long the canary took to
//! leave after the flag was set (`stop_latency_ms`).
//!
//! and its result lines add `"launch":"normal"|"cooperative",
//! "intra_warp":bool,"device":NAME`; for intra-warp runs `workgroups`
//! counts blocks.
//!
//! Launches go through `cudaLaunchKernel`, not `<<<...>>>`, so the host
//! code is plain C++: the tests compile it with g++ against a small CPU
//! emulation of the runtime (`cuda-shim/cuda_runtime.h`) and run it.

use crate::target::codegen::{self, Dialect, Shape, Syntax};
use crate::target::host::{self, Harness, Options, ProgramError};
use crate::target::templates;
use progress_litmus::axb::load::NamedTest;

/// The CUDA spelling: device-scope atomics; the stop flag is mapped pinned
/// host memory read through a volatile pointer in every iteration.
fn dialect() -> Dialect {
    Dialect {
        syntax: Syntax::C,
        exch: |i, v| format!("atomicExch(&mem[{i}], {v})"),
        add0: |i| format!("atomicAdd(&mem[{i}], 0u)"),
        leave: "*stop != 0u".to_string(),
        discard: "(void)",
    }
}

const PRELUDE: &str =
    "#include <cuda_runtime.h>\n\n#include <atomic>\n#include <cerrno>\n#include <chrono>\n\
#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n\
#include <string>\n#include <thread>\n#include <vector>\n";

const INFO_STRUCT: &str = "typedef void (*KernelFn)(unsigned int*, volatile unsigned int*, unsigned int, unsigned int);\n\n\
struct TestInfo {\n    const char* name;\n    const char* json;  // the name as a JSON string\n    \
uint32_t threads;\n    uint32_t stride;    // words of memory per instance\n    KernelFn kernel;\n};\n";

const OWN_FLAGS: &str = "  --cooperative        cooperative launch (default M: the most instances that are co-resident)\n\
                         \x20 --intra-warp         the N threads of an instance in one warp (plain, round-robin)\n\
                         \x20 --device D           CUDA device (default: 0)\n\
                         \x20 --info               run the canary, print the device as JSON and exit\n\
                         \x20 --stop-grace-ms MS   how long a stopped kernel may take to end (default: 30000)\n\
                         \x20 --stop-memory WHERE  the stop flag in mapped host memory (host, the default) or in\n\
                         \x20                      device memory written by a copy on a second stream (device)\n\
                         \x20 --no-canary          skip the canary (a device that ends loops by itself, or\n\
                         \x20                      a stop flag that does not reach the device, goes unnoticed)\n";

/// The kernel of the test with index `k` in the program: it finds its
/// thread and instance from the block id and the mapping chosen at run time
/// (`layout`), then runs the SPEC §6 loop.
pub fn test_kernel(k: usize, t: &NamedTest, shape: Shape) -> String {
    let test = &t.entry.test;
    format!(
        "__global__ void {}(unsigned int* mem, volatile unsigned int* stop, unsigned int layout, unsigned int m) {{\n    \
         uint32_t thread, instance;\n    \
         if (layout == 3u) {{ // intra-warp: an instance per block, a thread per lane\n        \
         thread = threadIdx.x;\n        instance = blockIdx.x;\n    }} else {{\n        \
         axb_locate(layout, {}, m, blockIdx.x, &thread, &instance);\n    }}\n    \
         const uint32_t base = instance * {};\n    uint32_t pc = 0u;\n{}}}\n",
        host::fn_name(k),
        codegen::uint(test.num_threads()),
        codegen::uint(codegen::stride(test)),
        codegen::indent(&codegen::dispatch(test, "thread", &dialect(), shape), 1)
    )
}

/// The whole `.cu` program for `tests`.
pub fn program(tests: &[NamedTest], opts: &Options) -> Result<String, ProgramError> {
    let function = |k: usize, t: &NamedTest| test_kernel(k, t, opts.shape);
    // The canary kernel, run before any test (templates/cuda_main.inc).
    let canary = test_kernel(0, &host::canary_test(), opts.shape).replacen(
        &format!("{}(", host::fn_name(0)),
        "axb_canary(",
        1,
    );
    let info_struct = format!(
        "// The canary (see --no-canary): one thread waiting for a write nobody makes.\n{canary}\n{INFO_STRUCT}"
    );
    let info_extra = |k: usize, _: &NamedTest| host::fn_name(k);
    host::assemble(
        &Harness {
            target: "cuda",
            build: "nvcc -O2 -o tests THIS_FILE",
            prelude: PRELUDE,
            locate_qualifiers: "__device__ inline",
            function: &function,
            info_struct: &info_struct,
            info_extra: &info_extra,
            own_flags: OWN_FLAGS,
            main: templates::CUDA_MAIN,
        },
        tests,
        opts,
    )
}
