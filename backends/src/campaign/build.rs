//! Building a suite's program, the first stage of `backends run`: the
//! source (one C++ or CUDA program holding every test, [`crate::target::cpp`],
//! [`crate::target::cuda`]; for Vulkan, the suite's shaders and the generic
//! host of [`crate::target::vulkan`]), compiled once into a cache directory
//! named by the hash of its source and compiler options (a re-run, or a
//! resumed campaign, reuses it), and the device the program reports.

use crate::campaign::options::{hardware_threads, RunArgs, RunTarget};
use crate::campaign::suite::show_paths;
use crate::campaign::{env, input, Failure};
use crate::mapping::Mapping;
use crate::target::emit::{self, EmitOptions, Target};
use crate::target::host::{self, Options};
use crate::target::{cpp, cuda, vulkan, File};
use crate::toolchain::{self, Tool};
use axb::load::NamedTest;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The CPU model from `/proc/cpuinfo` (`model name`, or `Hardware` /
/// `Processor` on some ARM kernels), if any.
pub fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    for key in ["model name", "Hardware", "Processor", "cpu model"] {
        for line in info.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

/// FNV-1a, 64 bits: a stable fingerprint of the generated program.
pub fn fnv64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// What `backends run` builds: one program (C++, CUDA), or the files of
/// `backends emit --target vulkan` (shaders, host, build script).
pub(crate) enum Source {
    Program(String),
    Shaders(Vec<File>),
}

impl Source {
    /// The bytes the build depends on, for its cache key.
    pub(crate) fn hash(&self) -> String {
        match self {
            Source::Program(text) => fnv64(text.as_bytes()),
            Source::Shaders(files) => {
                let mut all = Vec::new();
                for f in files {
                    all.extend_from_slice(f.path.to_string_lossy().as_bytes());
                    all.push(0);
                    all.extend_from_slice(f.contents.as_bytes());
                    all.push(0);
                }
                fnv64(&all)
            }
        }
    }
}

/// The source of the campaign's program: `tests` as one C++ or CUDA
/// program, or as the files of `backends emit --target vulkan` under
/// `mappings` (the instance count compiled into the shaders).
pub(crate) fn source(
    args: &RunArgs,
    tests: &[NamedTest],
    mappings: &[Mapping],
) -> Result<Source, Failure> {
    let opts = Options::default();
    let suite_err = |e: &dyn std::fmt::Display| input(format!("{}: {e}", show_paths(&args.suite)));
    Ok(match args.target {
        RunTarget::Cpp => Source::Program(cpp::program(tests, &opts).map_err(|e| suite_err(&e))?),
        RunTarget::Cuda => Source::Program(cuda::program(tests, &opts).map_err(|e| suite_err(&e))?),
        RunTarget::Vulkan => {
            host::check_names(tests).map_err(|e| suite_err(&e))?;
            let emit_opts = EmitOptions {
                target: Target::Vulkan,
                mappings: mappings.to_vec(),
                instances: args.instances,
                shape: opts.shape,
                deadline_ms: args.deadline_ms,
                program_name: "tests".to_string(),
            };
            Source::Shaders(emit::files(tests, &emit_opts).map_err(|e| suite_err(&e))?)
        }
        RunTarget::Webgpu => return Err(input(WEBGPU_IS_IMPORTED)),
        RunTarget::Wgpu => {
            host::check_names(tests).map_err(|e| suite_err(&e))?;
            let emit_opts = EmitOptions {
                target: Target::Wgsl,
                mappings: mappings.to_vec(),
                instances: args.instances,
                shape: opts.shape,
                deadline_ms: args.deadline_ms,
                program_name: "tests".to_string(),
            };
            Source::Shaders(emit::files(tests, &emit_opts).map_err(|e| suite_err(&e))?)
        }
    })
}

/// Why `backends run --target webgpu` is refused.
pub(crate) const WEBGPU_IS_IMPORTED: &str = "webgpu runs in a browser, not from here: write its page with `backends emit --target webgpu SUITE --out DIR`, open it, and bring its result file back with `backends import --target webgpu SUITE --lines FILE`";

/// The compiled program: generated, then compiled once into a cache
/// directory named by the hash of its source and compiler options (a
/// re-run, or a resumed campaign, reuses it).
pub(crate) fn build(args: &RunArgs, source: &Source, hash: &str) -> Result<PathBuf, Failure> {
    if let (RunTarget::Wgpu, Source::Shaders(files)) = (args.target, source) {
        return bundle_wgpu(files, hash);
    }
    let (tool, ext) = match (args.target, args.cuda_on_cpu) {
        (RunTarget::Cpp, _) | (RunTarget::Cuda, true) => (Tool::Gxx, "cpp"),
        (RunTarget::Cuda, false) => (Tool::Nvcc, "cu"),
        (RunTarget::Vulkan, _) => (Tool::Glslang, "cpp"),
        (RunTarget::Webgpu, _) => return Err(input(WEBGPU_IS_IMPORTED)),
        (RunTarget::Wgpu, _) => unreachable!("bundled above"),
    };
    toolchain::find(tool)?;
    toolchain::find(Tool::Gxx)?;
    let key = fnv64(format!("{hash} {:?} {:?}", args.nvcc_flags, args.cuda_on_cpu).as_bytes());
    let dir = std::env::temp_dir()
        .join("axb-backends-run")
        .join(format!("{}-{key}", args.target.name()));
    let exe = dir.join("tests");
    if exe.is_file() {
        return Ok(exe);
    }
    // Build in a directory of our own, then move the results into place:
    // concurrent builds of the same program (parallel tests, two campaigns)
    // never see each other's half-written files.
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let work = dir.join(format!(
        "build-{}-{}",
        std::process::id(),
        BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&work).map_err(|e| env(format!("{}: {e}", work.display())))?;
    let source = match source {
        Source::Program(text) => text,
        Source::Shaders(files) => return build_vulkan(&dir, &work, files),
    };
    let src = work.join(format!("tests.{ext}"));
    std::fs::write(&src, source.as_bytes())
        .map_err(|e| env(format!("{}: cannot write: {e}", src.display())))?;
    let built = work.join("tests");
    eprintln!("compiling {} with {} ...", src.display(), tool.program());
    let compiled = match (args.target, args.cuda_on_cpu) {
        (RunTarget::Cpp, _) => toolchain::compile_cpp(&src, &built),
        (RunTarget::Cuda, true) => toolchain::compile_cuda_on_cpu(&src, &built, &work),
        (RunTarget::Cuda, false) => {
            let flags: Vec<&str> = args.nvcc_flags.iter().map(String::as_str).collect();
            toolchain::compile_cuda(&src, &built, &flags)
        }
        (RunTarget::Vulkan | RunTarget::Webgpu | RunTarget::Wgpu, _) => {
            unreachable!(
                "shaders are built by build_vulkan; webgpu is refused and wgpu bundled above"
            )
        }
    };
    if let Err(e) = compiled {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e.into());
    }
    std::fs::rename(&src, dir.join(format!("tests.{ext}")))
        .and_then(|_| std::fs::rename(&built, &exe))
        .map_err(|e| env(format!("{}: {e}", exe.display())))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(exe)
}

/// The Vulkan build: shaders to SPIR-V and the host, in `work`, which then
/// becomes `dir/bundle` (the host finds the shaders beside itself).
fn build_vulkan(dir: &Path, work: &Path, files: &[File]) -> Result<PathBuf, Failure> {
    let bundle = dir.join("bundle");
    let exe = bundle.join("tests");
    if exe.is_file() {
        let _ = std::fs::remove_dir_all(work);
        return Ok(exe);
    }
    emit::write(work, files).map_err(|e| env(format!("{}: {e}", work.display())))?;
    let comps: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "comp"))
        .map(|f| work.join(&f.path))
        .collect();
    eprintln!(
        "compiling {} shaders with glslangValidator and the Vulkan host with g++ ...",
        comps.len()
    );
    if let Err(e) = vulkan::build(&comps, &work.join(vulkan::HOST_FILE), &work.join("tests")) {
        let _ = std::fs::remove_dir_all(work);
        return Err(e.into());
    }
    if let Err(e) = std::fs::rename(work, &bundle) {
        let _ = std::fs::remove_dir_all(work);
        // Another build of the same bundle may have won the race.
        if !exe.is_file() {
            return Err(env(format!("{}: {e}", bundle.display())));
        }
    }
    Ok(exe)
}

/// The wgpu runner `backends-wgpu`: `$BACKENDS_WGPU`, or beside this
/// program (cargo builds both into one directory).
fn wgpu_runner() -> Result<PathBuf, Failure> {
    let runner = match std::env::var_os("BACKENDS_WGPU") {
        Some(p) => PathBuf::from(p),
        None => std::env::current_exe()
            .map_err(|e| env(format!("cannot find this program: {e}")))?
            .with_file_name(format!("backends-wgpu{}", std::env::consts::EXE_SUFFIX)),
    };
    if !runner.is_file() {
        return Err(env(format!(
            "{}: the wgpu runner is not built: `cargo build --release -p backends --features wgpu` builds it beside backends (or set BACKENDS_WGPU)",
            runner.display()
        )));
    }
    Ok(runner)
}

/// The wgpu "build": the suite's WGSL shaders written into a cache
/// directory (named by their hash and the runner) with a link `tests` to
/// the runner, which finds the shaders beside itself as the Vulkan host
/// does.
fn bundle_wgpu(files: &[File], hash: &str) -> Result<PathBuf, Failure> {
    let runner = wgpu_runner()?;
    let key = fnv64(format!("{hash} {}", runner.display()).as_bytes());
    let dir = std::env::temp_dir()
        .join("axb-backends-run")
        .join(format!("wgpu-{key}"));
    let exe = dir.join("tests");
    if exe.exists() {
        return Ok(exe);
    }
    static BUNDLES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let work = dir.with_file_name(format!(
        "wgpu-{key}.build-{}-{}",
        std::process::id(),
        BUNDLES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let made = emit::write(&work, files).and_then(|_| {
        #[cfg(unix)]
        return std::os::unix::fs::symlink(&runner, work.join("tests"));
        #[cfg(not(unix))]
        return std::fs::copy(&runner, work.join("tests")).map(|_| ());
    });
    if let Err(e) = made.and_then(|_| std::fs::rename(&work, &dir)) {
        let _ = std::fs::remove_dir_all(&work);
        // Another campaign may have made the same bundle meanwhile.
        if !exe.exists() {
            return Err(env(format!("{}: {e}", dir.display())));
        }
    }
    Ok(exe)
}

/// Where the Vulkan host's shaders are: beside it.
pub(crate) fn shader_dir(exe: &Path) -> &Path {
    exe.parent().unwrap_or(Path::new("."))
}

/// The device as the program reports it (`--info`, CUDA and Vulkan).
pub(crate) fn device_info(args: &RunArgs, exe: &Path) -> Result<Value, Failure> {
    let host = json!({
        "cpu_model": cpu_model(),
        "hardware_threads": hardware_threads(),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
    });
    if args.target == RunTarget::Cpp {
        return Ok(json!({ "host": host }));
    }
    let mut command = Command::new(exe);
    command.arg("--info").args(
        args.program_args
            .iter()
            .filter(|a| a.starts_with("--device") || *a == "--no-canary"),
    );
    if args.target == RunTarget::Vulkan {
        // With the shaders, --info first runs the canary (see crate::target::vulkan).
        command.arg(format!("--shaders={}", shader_dir(exe).display()));
    }
    if args.target == RunTarget::Wgpu {
        // --info runs the canary and the calibration for the deadline.
        command.arg(format!("--deadline-ms={}", args.deadline_ms));
    }
    let out = command
        .output()
        .map_err(|e| env(format!("cannot run {}: {e}", exe.display())))?;
    if !out.status.success() {
        return Err(env(format!(
            "{} --info failed ({}): {}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let gpu: Value = serde_json::from_str(text.trim()).map_err(|e| {
        env(format!(
            "{} --info printed `{}`, not a JSON line: {e}",
            exe.display(),
            text.trim()
        ))
    })?;
    let key = if args.target == RunTarget::Vulkan {
        "vulkan"
    } else {
        "gpu"
    };
    Ok(json!({ "host": host, key: gpu }))
}
