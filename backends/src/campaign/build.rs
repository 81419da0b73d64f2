//! Building a suite's program, the first stage of `backends run`: the
//! source (one C++ or CUDA program holding every test, [`crate::target::cpp`],
//! [`crate::target::cuda`]; for Vulkan, the suite's shaders and the generic
//! host of [`crate::target::vulkan`]), compiled once into the private
//! build cache ([`crate::campaign::cache`]; a re-run, or a resumed
//! campaign, reuses it), and the device the program reports.

use crate::campaign::cache;
use crate::campaign::options::{hardware_threads, RunArgs, RunTarget, WEBGPU_IS_IMPORTED};
use crate::campaign::suite::show_paths;
use crate::campaign::{env, input, Failure};
use crate::mapping::Mapping;
use crate::target::emit::{self, EmitOptions};
use crate::target::host::{self, Options};
use crate::target::{vulkan, File};
use crate::toolchain::{self, Tool};
use progress_litmus::axb::load::NamedTest;
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
            Source::Program(text) => crate::target::fnv64(text.as_bytes()),
            Source::Shaders(files) => {
                let mut all = Vec::new();
                for f in files {
                    all.extend_from_slice(f.path.to_string_lossy().as_bytes());
                    all.push(0);
                    all.extend_from_slice(f.contents.as_bytes());
                    all.push(0);
                }
                crate::target::fnv64(&all)
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
    if !args.target.facts().runs_here {
        return Err(input(WEBGPU_IS_IMPORTED));
    }
    let target = args.target.emits();
    if target.is_program() {
        let text = (target.emitter().program(tests, &opts)).map_err(|e| suite_err(&e))?;
        return Ok(Source::Program(text));
    }
    host::check_names(tests).map_err(|e| suite_err(&e))?;
    let emit_opts = EmitOptions {
        target,
        mappings: mappings.to_vec(),
        instances: args.instances,
        shape: opts.shape,
        deadline_ms: args.deadline_ms,
        program_name: "tests".to_string(),
        bare: false,
    };
    Ok(Source::Shaders(
        emit::files(tests, &emit_opts).map_err(|e| suite_err(&e))?,
    ))
}

impl Source {
    /// The key of its build in the cache: the target, how it is compiled
    /// and every source file ([`cache::key`]).
    fn cache_key(&self, args: &RunArgs) -> String {
        let mut parts: Vec<Vec<u8>> = vec![
            args.target.name().as_bytes().to_vec(),
            vec![args.cuda_on_cpu as u8],
        ];
        parts.extend(args.nvcc_flags.iter().map(|f| f.as_bytes().to_vec()));
        parts.push(b"sources".to_vec());
        match self {
            Source::Program(text) => parts.push(text.as_bytes().to_vec()),
            Source::Shaders(files) => {
                for f in files {
                    parts.push(f.path.to_string_lossy().as_bytes().to_vec());
                    parts.push(f.contents.as_bytes().to_vec());
                }
            }
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        cache::key(&refs)
    }
}

/// The compiled program (`tests` in its cache entry): taken from the
/// build cache ([`cache`]) if it holds exactly this build, else generated
/// and compiled into it.
pub(crate) fn build(args: &RunArgs, source: &Source) -> Result<PathBuf, Failure> {
    if let (RunTarget::Wgpu, Source::Shaders(files)) = (args.target, source) {
        return bundle_wgpu(args, source, files);
    }
    let tool = match (args.target, args.cuda_on_cpu) {
        (RunTarget::Cpp, _) | (RunTarget::Cuda, true) => Tool::Gxx,
        (RunTarget::Cuda, false) => Tool::Nvcc,
        (RunTarget::Vulkan, _) => Tool::Glslang,
        (RunTarget::Webgpu, _) => return Err(input(WEBGPU_IS_IMPORTED)),
        (RunTarget::Wgpu, _) => unreachable!("bundled above"),
    };
    toolchain::find(tool)?;
    toolchain::find(Tool::Gxx)?;
    let root = cache::root()?;
    let key = source.cache_key(args);
    if let Some(entry) = cache::lookup(&root, &key) {
        return Ok(entry.join("tests"));
    }
    let work = cache::work_dir(&root)?;
    let built = match source {
        Source::Program(text) => compile(args, tool, text, &work),
        Source::Shaders(files) => build_vulkan(&work, files),
    };
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e);
    }
    Ok(cache::commit(&root, &work, &key)?.join("tests"))
}

/// Compiles the C++ or CUDA program `text` into `work/tests`.
fn compile(args: &RunArgs, tool: Tool, text: &str, work: &Path) -> Result<(), Failure> {
    let ext = if tool == Tool::Nvcc { "cu" } else { "cpp" };
    let src = work.join(format!("tests.{ext}"));
    std::fs::write(&src, text.as_bytes())
        .map_err(|e| env(format!("{}: cannot write: {e}", src.display())))?;
    let exe = work.join("tests");
    eprintln!(
        "compiling {} with {} ...",
        crate::excerpt::printable(&src.display().to_string()),
        tool.program()
    );
    match (args.target, args.cuda_on_cpu) {
        (RunTarget::Cpp, _) => toolchain::compile_cpp(&src, &exe),
        (RunTarget::Cuda, true) => toolchain::compile_cuda_on_cpu(&src, &exe, work),
        (RunTarget::Cuda, false) => {
            let flags: Vec<&str> = args.nvcc_flags.iter().map(String::as_str).collect();
            toolchain::compile_cuda(&src, &exe, &flags)
        }
        (RunTarget::Vulkan | RunTarget::Webgpu | RunTarget::Wgpu, _) => {
            unreachable!(
                "shaders are built by build_vulkan; webgpu is refused and wgpu bundled apart"
            )
        }
    }
    .map_err(Failure::from)
}

/// The Vulkan build in `work`: the emitted files, the shaders compiled to
/// SPIR-V and the host to `work/tests` (the host finds the shaders beside
/// itself).
fn build_vulkan(work: &Path, files: &[File]) -> Result<(), Failure> {
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
    vulkan::build(&comps, &work.join(vulkan::HOST_FILE), &work.join("tests"))?;
    Ok(())
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

/// The wgpu "build": the suite's WGSL shaders and a copy of the runner
/// (`tests`, which finds the shaders beside itself as the Vulkan host
/// does) as an entry of the private build cache, keyed by the shaders and
/// the runner's own SHA-256: a rebuilt runner never meets an old bundle,
/// and the entry is verified like every other build.
fn bundle_wgpu(args: &RunArgs, source: &Source, files: &[File]) -> Result<PathBuf, Failure> {
    let runner = wgpu_runner()?;
    let bytes = std::fs::read(&runner).map_err(|e| env(format!("{}: {e}", runner.display())))?;
    let root = cache::root()?;
    let key = cache::key(&[
        source.cache_key(args).as_bytes(),
        cache::sha256(&bytes).as_bytes(),
    ]);
    if let Some(entry) = cache::lookup(&root, &key) {
        return Ok(entry.join("tests"));
    }
    let work = cache::work_dir(&root)?;
    let exe = work.join("tests");
    let made = emit::write(&work, files).and_then(|_| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&exe, &bytes)?;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o700))
    });
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&work);
        return Err(env(format!("{}: {e}", work.display())));
    }
    Ok(cache::commit(&root, &work, &key)?.join("tests"))
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
    if args.target.facts().os_threads {
        // The program's device is this host.
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
            crate::excerpt::excerpt(text.trim())
        ))
    })?;
    let key = if args.target == RunTarget::Vulkan {
        "vulkan"
    } else {
        "gpu"
    };
    Ok(json!({ "host": host, key: gpu }))
}
