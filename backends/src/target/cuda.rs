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

use crate::target::codegen::{self, Dialect, Shape};
use crate::target::emitter::Emitter;
use crate::target::host::{self, Harness, Options, ProgramError};
use crate::target::language::{
    rmw_suffix, Atomic, KernelFile, KernelLanguage, Lang, Language, SimtFile, Syntax,
};
use crate::target::templates;
use crate::target::File;
use crate::toolchain::{self, ToolError};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::program::CollectiveOp;
use std::path::{Path, PathBuf};

/// The CUDA spelling of the AXB tests: device-scope atomics; the stop flag
/// is mapped pinned host memory read through a volatile pointer in every
/// iteration.
fn dialect() -> Dialect {
    Dialect {
        lang: &Cuda,
        leave: "*stop != 0u".to_string(),
    }
}

/// The CUDA language ([`Language`], [`KernelLanguage`]): device-scope
/// atomics on pointers, warp-level collectives.
pub struct Cuda;

/// The threads of a CUDA warp: a block's threads `32k..32k+31` (by
/// `threadIdx.x` in a one-dimensional block) are warp k.
pub const WARP: usize = 32;

/// Whether each of the program's subgroups (`s` consecutive invocations
/// of a workgroup of `n`) lies in one CUDA warp, so that a warp-level
/// collective with a mask of its lanes can take it: true when `s` divides
/// 32 or the whole workgroup is one warp.
fn subgroups_within_warps(n: usize, s: usize) -> bool {
    let s = s.max(1);
    (0..n / s).all(|k| (k * s) / WARP == ((k + 1) * s - 1) / WARP)
}

impl Language for Cuda {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn syntax(&self) -> Syntax {
        Syntax::C
    }

    fn discard(&self) -> &'static str {
        "(void)"
    }

    fn exchange(&self, cell: &str, v: &str) -> String {
        format!("atomicExch(&{cell}, {v})")
    }

    fn fetch_add(&self, cell: &str, v: &str) -> String {
        format!("atomicAdd(&{cell}, {v})")
    }
}

impl KernelLanguage for Cuda {
    fn extension(&self) -> &'static str {
        "cu"
    }

    fn title(&self) -> &'static str {
        "CUDA"
    }

    /// CUDA has no atomic load or store: a load is an add of 0, a store
    /// an exchange.
    fn atomic(&self, op: Atomic, cell: &str, args: &[&str]) -> String {
        let name = match op {
            Atomic::Load => return self.fetch_add(cell, "0u"),
            Atomic::Store | Atomic::Exchange => "Exch",
            Atomic::CompareExchange => "CAS",
            Atomic::Fetch(rmw) => rmw_suffix(rmw),
        };
        format!("atomic{name}(&{cell}, {})", args.join(", "))
    }

    fn max_subgroup(&self) -> usize {
        WARP
    }

    fn max_workgroup(&self) -> usize {
        1024
    }

    fn barrier(&self) -> &'static str {
        "__syncthreads();"
    }

    fn collective_refusal(&self, n: usize, s: usize) -> Option<String> {
        (!subgroups_within_warps(n, s)).then(|| format!(
            "subgroup_size {s} in workgroups of {n}: a subgroup would span two CUDA warps of {WARP}, which no warp-level collective can take; use a subgroup size that divides {WARP}"
        ))
    }

    fn stop(&self) -> &'static str {
        "if (*stop != 0u) { left = true; break; }\n"
    }

    fn ids(&self, s: usize) -> String {
        format!(
            "const uint wg_id = blockIdx.x;\nconst uint local_id = threadIdx.x;\nconst uint subgroup_id = local_id / {s}u;\nconst uint lane_id = local_id % {s}u;\n(void)wg_id;\n(void)subgroup_id;\n(void)lane_id;\n"
        )
    }

    /// The mask of the lanes of the invocation's subgroup in its warp, and
    /// its first lane.
    fn subgroup_setup(&self, s: usize) -> String {
        format!(
            "const uint sg_first = (subgroup_id * {s}u) % {WARP}u;\nconst uint sg_mask = (0xffffffffu >> ({WARP}u - {s}u)) << sg_first;\n"
        )
    }

    fn collectives_note(&self) -> &'static str {
        "every lane of the program's subgroup takes part\n\
         {comment} (__all_sync and the others with a mask of its lanes, sg_mask)"
    }

    fn collective(&self, op: CollectiveOp, v: &str, _s: usize, _out: &mut String) -> String {
        match op {
            CollectiveOp::All => format!("__all_sync(sg_mask, {v} != 0u) ? 1u : 0u"),
            CollectiveOp::Any => format!("__any_sync(sg_mask, {v} != 0u) ? 1u : 0u"),
            CollectiveOp::BroadcastFirst => format!("__shfl_sync(sg_mask, {v}, (int)sg_first)"),
        }
    }

    fn run_state(&self) -> &'static str {
        "uint pc = 0u;\nbool left = false;\n"
    }

    fn count_end(&self) -> &'static str {
        "if (left) { atomicAdd(&ends[1], 1u); } else { atomicAdd(&ends[0], 1u); }\n"
    }

    fn shared_store(&self, cell: usize, v: u16) -> String {
        format!("sh[{cell}] = {v}u;")
    }

    /// The kernel around the body, the program's constants and the host
    /// that runs it ([`templates::KERNEL_CUDA_HOST`]).
    fn kernel_file(&self, f: &KernelFile) -> String {
        let n = f.workgroup_size;
        let body = f
            .body
            .replace("uint ", "unsigned int ")
            .replace("const uint ", "const unsigned int ");
        format!(
            "{}{}\
             #include <cuda_runtime.h>\n#include <chrono>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <thread>\n#include <vector>\n\n\
             typedef unsigned int uint;\n\n\
             // Blocks of {n} threads; mem: the global locations; stop: mapped host memory\n\
             // the host sets at its deadline; ends[0]: finished, ends[1]: stopped.\n\
             __global__ void axb_kernel(unsigned int* mem, volatile unsigned int* stop, unsigned int* ends) {{\n    \
             __shared__ unsigned int sh[{sh}];\n    (void)sh;\n{}}}\n\n\
             static const unsigned int WORKGROUPS = {};\nstatic const unsigned int WORKGROUP_SIZE = {n};\n\
             static const unsigned int WORDS = {};\nstatic const unsigned int INIT[] = {{{}}};\nstatic const char* NAME = \"{}\";\n\n{}",
            f.run_line,
            f.header,
            codegen::indent(&body, 1),
            f.workgroups,
            f.global_words,
            f.init_words.join(", "),
            f.name,
            templates::KERNEL_CUDA_HOST,
            sh = f.shared_words,
        )
    }

    fn active_collective(&self, op: CollectiveOp, dst: u8, v: &str) -> String {
        match op {
            CollectiveOp::All => {
                format!("r{dst} = __all_sync(__activemask(), {v} != 0u) ? 1u : 0u;")
            }
            CollectiveOp::Any => {
                format!("r{dst} = __any_sync(__activemask(), {v} != 0u) ? 1u : 0u;")
            }
            CollectiveOp::BroadcastFirst => format!(
                "{{ const unsigned int am = __activemask(); r{dst} = __shfl_sync(am, {v}, __ffs(am) - 1); }}"
            ),
        }
    }

    /// A warp holds every program subgroup CUDA takes: no check.
    fn simt_lanes(&self, _s: usize) -> (String, String) {
        (
            format!("const uint dev_lane = threadIdx.x % {WARP}u;\nconst uint dev_sg = threadIdx.x / {WARP}u;\nconst uint wg_id = blockIdx.x;\n"),
            String::new(),
        )
    }

    /// nvcc warns of a budget no loop spends (#177-D, seen on the H200).
    fn simt_state(&self) -> &'static str {
        "bool left = false;\nuint budget = BUDGET;\n(void)budget;\n"
    }

    /// The kernel, the program's constants and the host that runs it and
    /// reads the observed terms ([`templates::KERNEL_SIMT_CUDA_HOST`]).
    fn simt_file(&self, f: &SimtFile) -> String {
        let launch = f.launch;
        let body = f.body.replace("uint ", "unsigned int ");
        let names: Vec<String> = f
            .observed
            .iter()
            .map(|(t, _, _)| format!("\"{t}\""))
            .collect();
        let kinds: Vec<&str> = f
            .observed
            .iter()
            .map(|&(_, regs, _)| if regs { "1" } else { "0" })
            .collect();
        let index: Vec<String> = f.observed.iter().map(|(_, _, k)| k.to_string()).collect();
        format!(
            "{}{}\
             #include <cuda_runtime.h>\n#include <cstdio>\n#include <cstdlib>\n#include <string>\n#include <vector>\n\n\
             typedef unsigned int uint;\nstatic const unsigned int BUDGET = {}u;\n\n\
             // Blocks of {launch} threads (warp k's first lanes are program subgroup k);\n\
             // mem: the global locations; regs_out: registers; ends[0] finished, ends[1] stopped.\n\
             __global__ void axb_simt(unsigned int* mem, unsigned int* regs_out, unsigned int* ends) {{\n{}}}\n\n\
             static const unsigned int WORKGROUPS = {};\nstatic const unsigned int LAUNCH = {launch};\n\
             static const unsigned int INVOCATIONS = {};\n\
             static const unsigned int WORDS = {};\nstatic const unsigned int INIT[] = {{{}}};\n\
             static const unsigned int REG_WORDS = {};\nstatic const unsigned int VALUES = {};\n\
             static const unsigned int OBSERVED = {};\nstatic const char* OBS_NAME[] = {{{}}};\n\
             static const int OBS_IN_REGS[] = {{{}}};\nstatic const unsigned int OBS_INDEX[] = {{{}}};\n\
             static const char* NAME = \"{}\";\n\n{}",
            f.first_line,
            f.comment,
            f.budget,
            codegen::indent(&body, 1),
            f.workgroups,
            f.invocations,
            f.global_words,
            f.init_words.join(", "),
            f.reg_words,
            f.values,
            f.observed.len(),
            names.join(", "),
            kinds.join(", "),
            index.join(", "),
            f.name,
            templates::KERNEL_SIMT_CUDA_HOST
        )
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

/// The CUDA target: one program for the whole suite, and kernel programs.
pub struct Program;

impl Emitter for Program {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn extension(&self) -> &'static str {
        "cu"
    }

    fn is_program(&self) -> bool {
        true
    }

    fn program(&self, tests: &[NamedTest], opts: &Options) -> Result<String, ProgramError> {
        program(tests, opts)
    }

    /// nvcc, each file to an executable beside it.
    fn check(&self, _: &Path, _: &[File], paths: &[PathBuf], _: &Path) -> Result<(), ToolError> {
        for p in paths {
            toolchain::compile_cuda(p, &p.with_extension(""), &[])?;
        }
        Ok(())
    }

    fn kernel(&self) -> Option<Lang> {
        Some(Lang::Cuda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subgroups_must_lie_in_one_warp() {
        // Any size while the workgroup is one warp (the language's bound
        // is 8 invocations), sizes dividing 32 beyond.
        assert!(subgroups_within_warps(6, 3) && subgroups_within_warps(8, 7));
        assert!(subgroups_within_warps(64, 8) && subgroups_within_warps(64, 32));
        assert!(!subgroups_within_warps(66, 3) && !subgroups_within_warps(128, 64));
    }
}
