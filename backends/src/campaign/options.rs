//! What defines a campaign: where it runs ([`RunTarget`]), the options of
//! `backends run` ([`RunArgs`]), and the record of both that a journal
//! starts with (`campaign()`), so that `--resume` continues only the same
//! campaign.

use crate::campaign::suite::suite_json;
use crate::mapping::{Mapping, MappingList};
use crate::report::format::Format;
use crate::target::emit::Target;
use clap::{Args, ValueEnum};
use progress_litmus::axb::load::NamedTest;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Where a campaign runs: the target whose program runs the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunTarget {
    Cpp,
    Cuda,
    Vulkan,
    /// The page of `backends emit --target webgpu`, in a browser: its
    /// results are imported, never run from here.
    Webgpu,
    /// The WGSL shaders run by `backends-wgpu` (Vulkan, Metal, D3D12).
    Wgpu,
}

/// What `run` and `import` ask of a run target besides how its program
/// is built (`campaign/build.rs`): one row each ([`RunTarget::facts`]),
/// so that the campaign reads facts rather than matching targets.
#[derive(Debug)]
pub struct RunFacts {
    /// Its name on the command line (`--target NAME`).
    pub name: &'static str,
    /// The framework directory of the results, as in the artifact.
    pub framework: &'static str,
    /// The `backends emit` target whose files it runs: its program, or
    /// its shaders with their host (wgpu runs the WGSL shaders).
    pub emits: Target,
    /// Whether `run` runs it from here: the webgpu page runs in a
    /// browser, and its results come in with `import`.
    pub runs_here: bool,
    /// Whether its program runs the tests on this machine's OS threads
    /// (`--os-threads`, passed as `--threads=`): the C++ program, whose
    /// device is the host.
    pub os_threads: bool,
    /// Whether its program first runs a canary, a test that must not end
    /// by itself, to refuse a device that ends loops on its own
    /// (`--no-canary` skips it).
    pub canary: bool,
    /// Whether it takes CUDA's flags (`--nvcc-flag`, `--cuda-on-cpu`).
    pub cuda: bool,
    /// Whether its program reads its shaders from the folder beside it
    /// (`--shaders=DIR`).
    pub shaders: bool,
    /// The key of the device's own description in the device file of
    /// imported results (beside `"imported": true`).
    pub imported_device: &'static str,
}

impl RunTarget {
    /// Its row of facts: the one place a run target is described.
    pub fn facts(self) -> &'static RunFacts {
        const fn row(
            name: &'static str,
            framework: &'static str,
            emits: Target,
            imported_device: &'static str,
        ) -> RunFacts {
            RunFacts {
                name,
                framework,
                emits,
                runs_here: true,
                os_threads: false,
                canary: true,
                cuda: false,
                shaders: false,
                imported_device,
            }
        }
        const CPP: RunFacts = RunFacts {
            os_threads: true,
            canary: false,
            ..row("cpp", "cpp", Target::Cpp, "host")
        };
        const CUDA: RunFacts = RunFacts {
            cuda: true,
            ..row("cuda", "CUDA", Target::Cuda, "gpu")
        };
        const VULKAN: RunFacts = RunFacts {
            shaders: true,
            ..row("vulkan", "Vulkan", Target::Vulkan, "vulkan")
        };
        const WEBGPU: RunFacts = RunFacts {
            runs_here: false,
            ..row("webgpu", "WebGPU", Target::Webgpu, "webgpu")
        };
        const WGPU: RunFacts = RunFacts {
            shaders: true,
            ..row("wgpu", "wgpu", Target::Wgsl, "wgpu")
        };
        match self {
            RunTarget::Cpp => &CPP,
            RunTarget::Cuda => &CUDA,
            RunTarget::Vulkan => &VULKAN,
            RunTarget::Webgpu => &WEBGPU,
            RunTarget::Wgpu => &WGPU,
        }
    }

    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// The `backends emit` target whose files it runs ([`RunFacts::emits`]).
    pub fn emits(self) -> Target {
        self.facts().emits
    }

    /// The framework directory of the results, as in the artifact.
    pub fn framework(self) -> &'static str {
        self.facts().framework
    }
}

/// Why `run` does not run webgpu, and what to do instead.
pub(crate) const WEBGPU_IS_IMPORTED: &str = "webgpu runs in a browser, not from here: write its page with `backends emit --target webgpu SUITE --out DIR`, open it, and bring its result file back with `backends import --target webgpu SUITE --lines FILE`";

/// The targets `backends run` runs: every [`RunTarget`] that runs here
/// (all but webgpu).
fn run_targets() -> Vec<&'static str> {
    (RunTarget::value_variants().iter())
        .filter(|t| t.facts().runs_here)
        .map(|t| t.name())
        .collect()
}

/// The targets `backends run` runs whose row `has`, for a message:
/// "cuda, vulkan and wgpu".
pub(crate) fn run_targets_where(has: impl Fn(&RunFacts) -> bool) -> String {
    let names: Vec<&str> = (RunTarget::value_variants().iter())
        .filter(|t| t.facts().runs_here && has(t.facts()))
        .map(|t| t.name())
        .collect();
    crate::target::emit::and_list(&names)
}

/// `run --target`: the targets that run from here, listed as the possible
/// values; `webgpu` (a target of `import`) is refused with where its
/// results come from instead.
#[derive(Clone)]
struct RunTargetParser;

impl clap::builder::TypedValueParser for RunTargetParser {
    type Value = RunTarget;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<RunTarget, clap::Error> {
        if value == "webgpu" {
            let msg = format!(
                "invalid value 'webgpu' for '--target': {}\n",
                WEBGPU_IS_IMPORTED
            );
            return Err(clap::Error::raw(clap::error::ErrorKind::InvalidValue, msg).with_cmd(cmd));
        }
        let name =
            clap::builder::PossibleValuesParser::new(run_targets()).parse_ref(cmd, arg, value)?;
        Ok(RunTarget::from_str(&name, false).expect("a run target is a RunTarget"))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            run_targets()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// The most OS threads `--os-threads` may ask of the cpp program: a pool
/// of 4294967295 threads aborted it on allocation (std::bad_alloc) after
/// the compile; 100x the cores of a large machine stays below this.
pub const MAX_OS_THREADS: i64 = 65_536;

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Where to run: `cpp` (this CPU, g++), `cuda` (an NVIDIA GPU, nvcc) or
    /// `vulkan` (any Vulkan device: glslangValidator, g++ and libvulkan-dev;
    /// a device that ends loops by itself, like Mesa's CPU device lavapipe,
    /// is refused by the canary, see `backends::target::vulkan`), or `wgpu`
    /// (the WGSL shaders on Vulkan, Metal or D3D12 with `backends-wgpu`,
    /// built with `--features wgpu`). The webgpu page runs in a browser:
    /// its results come in with `import`.
    #[arg(long, value_parser = RunTargetParser)]
    pub target: RunTarget,
    /// The suite: RON suites, artifact `.txt` tests, or directories of them
    /// (several paths make one campaign; test names must be unique).
    #[arg(required = true, value_name = "SUITE")]
    pub suite: Vec<PathBuf>,
    /// Run only the tests named in this file, one per line, e.g. a
    /// model's conformance list of `synth suites`, every test that must
    /// terminate under it (`suites/2t4i/conformance/WEAK_FAIR.txt`).
    #[arg(long, value_name = "FILE")]
    pub only: Option<PathBuf>,
    /// Mappings to run: plain, round-robin, chunked, comma-separated, or
    /// all (`--mapping` is the same flag, as in `emit`).
    #[arg(
        long = "mappings",
        visible_alias = "mapping",
        value_name = "LIST",
        default_value = "all"
    )]
    pub mappings: Vec<MappingList>,
    /// Runs of each test under each mapping.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,
    /// A run not finished after this many milliseconds is stopped and
    /// recorded as non-terminating (the paper used 20 s on CPUs and CUDA).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=crate::target::host::MAX_DEADLINE_MS))]
    pub deadline_ms: u64,
    /// Instances for round-robin and chunked (default: floor(65535 / N);
    /// for vulkan they are compiled into the shaders).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub instances: Option<u32>,
    /// cpp: OS threads running the workgroups (default: this machine's
    /// hardware threads; 100x that over-subscribes, as in the paper).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_OS_THREADS))]
    pub os_threads: Option<u32>,
    /// The device's name: the stem of the result files (default: the
    /// target and, for cpp, the OS threads, e.g. `cpp-2threads`).
    #[arg(long)]
    pub name: Option<String>,
    /// An argument passed to every run of the program, e.g.
    /// `--program-arg=--cooperative`, `--program-arg=--intra-warp`,
    /// `--program-arg=--scheduler=obe` (repeatable).
    #[arg(long = "program-arg", allow_hyphen_values = true, value_name = "ARG")]
    pub program_args: Vec<String>,
    /// cuda: a flag for nvcc, e.g. `--nvcc-flag=-arch=sm_90` (repeatable).
    #[arg(long = "nvcc-flag", allow_hyphen_values = true, value_name = "FLAG")]
    pub nvcc_flags: Vec<String>,
    /// cuda and vulkan: run even if the device fails the canary (it ends
    /// loops by itself, or the stop flag does not reach it), for testing
    /// the host only: such a device cannot show non-termination. The same
    /// as `--program-arg=--no-canary`.
    #[arg(long)]
    pub no_canary: bool,
    /// cuda, on a machine without a GPU: compile the CUDA program with g++
    /// against the CPU emulation of the CUDA runtime
    /// (`backends/cuda-shim/`, an occupancy-bound "GPU" of 2 SMs) instead of
    /// nvcc. For trying a campaign, `import` and `report` anywhere; the
    /// results are the emulation's, not a GPU's.
    #[arg(long)]
    pub cuda_on_cpu: bool,
    /// Results directory (created; several campaigns may share one, each
    /// with its own --name).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: PathBuf,
    /// Continue the interrupted campaign journaled in --out.
    #[arg(long)]
    pub resume: bool,
    /// `json`: the summary as one JSON object on stdout (default: a line
    /// on stderr).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

impl RunArgs {
    /// The mappings in the order given, `all` spelled out.
    pub fn mapping_list(&self) -> Vec<Mapping> {
        self.mappings.iter().flat_map(|l| l.0.clone()).collect()
    }
}

/// The machine's hardware threads.
pub fn hardware_threads() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// Everything that defines a campaign; a journal is resumed only with the
/// same. `os_threads` is resolved (not left to the program's default) so
/// that resuming on a different machine is caught.
pub(crate) fn campaign(
    args: &RunArgs,
    name: &str,
    tests: &[NamedTest],
    program_hash: &str,
) -> Value {
    json!({
        "name": name,
        "target": args.target.name(),
        "suite": suite_json(&args.suite),
        "only": args.only.as_ref().map(|p| p.display().to_string()),
        "tests": tests.len(),
        "program_fnv64": program_hash,
        "mappings": args.mapping_list().iter().map(|m| m.name()).collect::<Vec<_>>(),
        "iterations": args.iterations,
        "deadline_ms": args.deadline_ms,
        "instances": args.instances,
        "os_threads": (args.target.facts().os_threads)
            .then(|| args.os_threads.unwrap_or_else(hardware_threads)),
        "program_args": args.program_args,
        "nvcc_flags": args.nvcc_flags,
        "cuda_on_cpu": args.cuda_on_cpu,
    })
}

/// The default device name.
pub(crate) fn default_name(args: &RunArgs) -> String {
    if args.target.facts().os_threads {
        format!(
            "{}-{}threads",
            args.target.name(),
            args.os_threads.unwrap_or_else(hardware_threads)
        )
    } else {
        args.target.name().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows agree with the command line and with the emit targets
    /// they run: a run target's name is its clap value, it finds shaders
    /// beside its program exactly when it runs from here the files of a
    /// target that writes a file per test (Vulkan's, and wgpu's WGSL),
    /// and `run --target` offers every target that runs from here.
    #[test]
    fn each_run_target_row_agrees_with_its_value_and_emit_target() {
        for t in RunTarget::value_variants() {
            let f = t.facts();
            assert_eq!(t.to_possible_value().unwrap().get_name(), f.name);
            assert_eq!(f.shaders, f.runs_here && !f.emits.is_program(), "{t:?}");
            assert!(!(f.os_threads && f.canary), "{t:?}");
        }
        assert_eq!(run_targets(), ["cpp", "cuda", "vulkan", "wgpu"]);
        assert_eq!(run_targets_where(|f| f.canary), "cuda, vulkan and wgpu");
    }
}
