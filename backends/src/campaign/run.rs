//! `backends run`: a campaign of a suite on this machine's CPU (`cpp`), an
//! NVIDIA GPU (`cuda`) or any Vulkan device (`vulkan`).
//!
//! The suite becomes one program (helper modules [`crate::target::cpp`],
//! [`crate::target::cuda`]; for Vulkan, the suite's SPIR-V shaders and the generic
//! host of [`crate::target::vulkan`]), compiled once and cached by the hash of its
//! source.
//! Every test x mapping x iteration is then run by that program, which
//! prints one JSON result line per run (format in [`crate::target::host`]); each
//! line is checked and appended to the journal ([`crate::campaign::journal`], fsync'd)
//! the moment it arrives. Pending runs are grouped so that one program
//! process does as many as possible (a CUDA context costs a fraction of a
//! second to create); a resumed campaign runs only what the journal lacks,
//! numbering iterations after the recorded ones, so nothing is lost or
//! counted twice.
//!
//! When every run is journaled, the results are written from the journal:
//! artifact-format CSVs, one per configuration directory
//! (`OUT/<N>_thread_<M>_instruction/<framework>/<name>.csv`, ids numbering
//! the tests `<N>t<M>i_<id>`; tests named otherwise go to
//! `OUT/<config>/<framework>/<name>.csv` under their full names), and
//! `OUT/<name>.device.json` with the device, the options and the times.

use crate::campaign::journal::{self, Entry, RunRecord, Session};
use crate::mapping::Mapping;
use crate::report::results::{self, Cell};
use crate::target::host::Options;
use crate::toolchain::{self, Tool, ToolError};
use axb::load::{load_all, write_atomically, NamedTest};
use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunTarget {
    Cpp,
    Cuda,
    Vulkan,
}

impl RunTarget {
    pub fn name(self) -> &'static str {
        match self {
            RunTarget::Cpp => "cpp",
            RunTarget::Cuda => "cuda",
            RunTarget::Vulkan => "vulkan",
        }
    }

    /// The framework directory of the results, as in the artifact.
    pub fn framework(self) -> &'static str {
        match self {
            RunTarget::Cpp => "cpp",
            RunTarget::Cuda => "CUDA",
            RunTarget::Vulkan => "Vulkan",
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Where to run: `cpp` (this CPU, g++), `cuda` (an NVIDIA GPU, nvcc) or
    /// `vulkan` (any Vulkan device: glslangValidator, g++ and libvulkan-dev;
    /// a device that ends loops by itself, like Mesa's CPU device lavapipe,
    /// is refused by the canary, see `backends::target::vulkan`).
    #[arg(long, value_enum)]
    pub target: RunTarget,
    /// The suite: RON suites, artifact `.txt` tests, or directories of them
    /// (several paths make one campaign; test names must be unique).
    #[arg(required = true, value_name = "SUITE")]
    pub suite: Vec<PathBuf>,
    /// Run only the tests named in this file, one per line, e.g. a
    /// conformance list of `synth suites` (`suites/2t4i/conformance/WEAK_FAIR.txt`).
    #[arg(long, value_name = "FILE")]
    pub only: Option<PathBuf>,
    /// Mappings to run, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "plain,round-robin,chunked"
    )]
    pub mappings: Vec<Mapping>,
    /// Runs of each test under each mapping.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,
    /// A run not finished after this many milliseconds is stopped and
    /// recorded as non-terminating (the paper used 20 s on CPUs and CUDA).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub deadline_ms: u64,
    /// Instances for round-robin and chunked (default: floor(65535 / N);
    /// for vulkan they are compiled into the shaders).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub instances: Option<u32>,
    /// cpp: OS threads running the workgroups (default: this machine's
    /// hardware threads; 100x that over-subscribes, as in the paper).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
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
    /// cuda, for tests without a GPU: compile the CUDA program with g++
    /// against the CPU emulation of the runtime instead of nvcc.
    #[arg(long, hide = true)]
    pub cuda_on_cpu: bool,
    /// Results directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Continue the interrupted campaign journaled in --out.
    #[arg(long)]
    pub resume: bool,
}

/// A failure, with the exit status it deserves: 2 for bad input (arguments,
/// suite, journal), 1 for the environment (compiler, program, disk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: u8,
    pub msg: String,
}

pub(crate) fn input(msg: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        msg: msg.into(),
    }
}

pub(crate) fn env(msg: impl Into<String>) -> Failure {
    Failure {
        code: 1,
        msg: msg.into(),
    }
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Failure {
        env(e.to_string())
    }
}

/// The machine's hardware threads.
pub fn hardware_threads() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

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

/// Everything that defines a campaign; a journal is resumed only with the
/// same. `os_threads` is resolved (not left to the program's default) so
/// that resuming on a different machine is caught.
fn campaign(args: &RunArgs, name: &str, tests: &[NamedTest], program_hash: &str) -> Value {
    json!({
        "name": name,
        "target": args.target.name(),
        "suite": suite_json(&args.suite),
        "only": args.only.as_ref().map(|p| p.display().to_string()),
        "tests": tests.len(),
        "program_fnv64": program_hash,
        "mappings": args.mappings.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "iterations": args.iterations,
        "deadline_ms": args.deadline_ms,
        "instances": args.instances,
        "os_threads": match args.target {
            RunTarget::Cpp => Some(args.os_threads.unwrap_or_else(hardware_threads)),
            RunTarget::Cuda | RunTarget::Vulkan => None,
        },
        "program_args": args.program_args,
        "nvcc_flags": args.nvcc_flags,
        "cuda_on_cpu": args.cuda_on_cpu,
    })
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

/// The default device name.
fn default_name(args: &RunArgs) -> String {
    match args.target {
        RunTarget::Cpp => format!(
            "cpp-{}threads",
            args.os_threads.unwrap_or_else(hardware_threads)
        ),
        RunTarget::Cuda => "cuda".to_string(),
        RunTarget::Vulkan => "vulkan".to_string(),
    }
}

/// Where a test's results go: the configuration directory and the id.
pub fn result_slot(name: &str, test: &axb::Test) -> (String, String) {
    let parsed = name.split_once('_').and_then(|(config, id)| {
        let rest = config.strip_suffix('i')?;
        let (n, m) = rest.split_once('t')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(n) && digits(m) && digits(id) && !n.starts_with('0') && !m.starts_with('0'))
            .then(|| (format!("{n}_thread_{m}_instruction"), id.to_string()))
    });
    parsed.unwrap_or_else(|| (test.config(), name.to_string()))
}

/// The arguments of one program invocation (without the executable).
pub fn program_command(
    args: &RunArgs,
    tests: &[&str],
    mappings: &[Mapping],
    iterations: u32,
) -> Vec<String> {
    let mut v = vec![
        format!("--test={}", tests.join(",")),
        format!(
            "--mapping={}",
            mappings
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(",")
        ),
        format!("--iterations={iterations}"),
        format!("--deadline-ms={}", args.deadline_ms),
    ];
    if let Some(m) = args.instances {
        v.push(format!("--instances={m}"));
    }
    if args.target == RunTarget::Cpp {
        v.push(format!(
            "--threads={}",
            args.os_threads.unwrap_or_else(hardware_threads)
        ));
    }
    v.extend(args.program_args.iter().cloned());
    v
}

/// One result line of the program, checked against what was asked.
pub fn parse_result_line(line: &str, at_unix_ms: u64) -> Result<RunRecord, String> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| format!("not a JSON result line ({e}): `{line}`"))?;
    let Value::Object(mut o) = v else {
        return Err(format!("not a JSON object: `{line}`"));
    };
    let mut take = |k: &str| {
        o.remove(k)
            .ok_or_else(|| format!("result line without `{k}`: `{line}`"))
    };
    let str_of = |v: Value, k: &str| match v {
        Value::String(s) => Ok(s),
        _ => Err(format!("`{k}` is not a string in `{line}`")),
    };
    let u64_of = |v: Value, k: &str| {
        v.as_u64()
            .ok_or_else(|| format!("`{k}` is not an unsigned integer in `{line}`"))
    };
    let test = str_of(take("test")?, "test")?;
    let mapping = str_of(take("mapping")?, "mapping")?;
    let iteration = u64_of(take("iteration")?, "iteration")?;
    let terminated = take("terminated")?
        .as_bool()
        .ok_or_else(|| format!("`terminated` is not a boolean in `{line}`"))?;
    let elapsed_ms = take("elapsed_ms")?
        .as_f64()
        .ok_or_else(|| format!("`elapsed_ms` is not a number in `{line}`"))?;
    let instances = u64_of(take("instances")?, "instances")?;
    let workgroups = u64_of(take("workgroups")?, "workgroups")?;
    o.remove("target");
    Ok(RunRecord {
        test,
        mapping,
        iteration: u32::try_from(iteration)
            .map_err(|_| format!("iteration too large in `{line}`"))?,
        terminated,
        elapsed_ms,
        instances: u32::try_from(instances)
            .map_err(|_| format!("instances too large in `{line}`"))?,
        workgroups,
        at_unix_ms,
        extra: o,
    })
}

/// Progress on stderr: a rewritten line on a terminal, else a line every
/// 5% so logs stay short.
struct Progress {
    total: usize,
    done: usize,
    start_done: usize,
    started: Instant,
    tty: bool,
    last_pct: usize,
    hung: usize,
}

impl Progress {
    fn new(total: usize, done: usize) -> Progress {
        Progress {
            total,
            done,
            start_done: done,
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            last_pct: usize::MAX,
            hung: 0,
        }
    }

    fn tick(&mut self, r: &RunRecord) {
        self.done += 1;
        self.hung += !r.terminated as usize;
        let pct = self.done * 100 / self.total.max(1);
        let secs = self.started.elapsed().as_secs_f64();
        let rate = (self.done - self.start_done) as f64 / secs.max(1e-9);
        let eta = (self.total - self.done) as f64 / rate.max(1e-9);
        let msg = format!(
            "[{}/{}] {pct:3}%  {} {:<11} #{}  non-terminating so far: {}  elapsed {:.0}s  eta {:.0}s",
            self.done, self.total, r.test, r.mapping, r.iteration, self.hung, secs, eta
        );
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{msg}");
            if self.done == self.total {
                let _ = writeln!(err);
            }
        } else if pct / 5 != self.last_pct / 5 || self.done == self.total {
            let _ = writeln!(err, "{msg}");
        }
        self.last_pct = pct;
    }
}

/// The compiled program: generated, then compiled once into a cache
/// directory named by the hash of its source and compiler options (a
/// re-run, or a resumed campaign, reuses it).
fn build(args: &RunArgs, source: &Source, hash: &str) -> Result<PathBuf, Failure> {
    let (tool, ext) = match (args.target, args.cuda_on_cpu) {
        (RunTarget::Cpp, _) | (RunTarget::Cuda, true) => (Tool::Gxx, "cpp"),
        (RunTarget::Cuda, false) => (Tool::Nvcc, "cu"),
        (RunTarget::Vulkan, _) => (Tool::Glslang, "cpp"),
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
        (RunTarget::Vulkan, _) => unreachable!("shaders are built by build_vulkan"),
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

/// What `backends run` builds: one program (C++, CUDA), or the files of
/// `backends emit --target vulkan` (shaders, host, build script).
enum Source {
    Program(String),
    Shaders(Vec<crate::target::File>),
}

impl Source {
    /// The bytes the build depends on, for its cache key.
    fn hash(&self) -> String {
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

/// The Vulkan build: shaders to SPIR-V and the host, in `work`, which then
/// becomes `dir/bundle` (the host finds the shaders beside itself).
fn build_vulkan(
    dir: &Path,
    work: &Path,
    files: &[crate::target::File],
) -> Result<PathBuf, Failure> {
    let bundle = dir.join("bundle");
    let exe = bundle.join("tests");
    if exe.is_file() {
        let _ = std::fs::remove_dir_all(work);
        return Ok(exe);
    }
    crate::target::emit::write(work, files).map_err(|e| env(format!("{}: {e}", work.display())))?;
    let comps: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "comp"))
        .map(|f| work.join(&f.path))
        .collect();
    eprintln!(
        "compiling {} shaders with glslangValidator and the Vulkan host with g++ ...",
        comps.len()
    );
    if let Err(e) = crate::target::vulkan::build(
        &comps,
        &work.join(crate::target::vulkan::HOST_FILE),
        &work.join("tests"),
    ) {
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

/// Where the Vulkan host's shaders are: beside it.
fn shader_dir(exe: &Path) -> &Path {
    exe.parent().unwrap_or(Path::new("."))
}

/// The device as the program reports it (`--info`, CUDA and Vulkan).
fn device_info(args: &RunArgs, exe: &Path) -> Result<Value, Failure> {
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

/// Runs one program invocation, journaling each result as it arrives.
#[allow(clippy::too_many_arguments)]
fn run_group(
    args: &RunArgs,
    exe: &Path,
    tests: &[&str],
    mappings: &[Mapping],
    offset: u32,
    count: u32,
    writer: &mut journal::Writer,
    progress: &mut Progress,
) -> Result<(), Failure> {
    let mut argv = program_command(args, tests, mappings, count);
    if args.target == RunTarget::Vulkan {
        argv.insert(0, format!("--shaders={}", shader_dir(exe).display()));
    }
    let mut child = Command::new(exe)
        .args(&argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| env(format!("cannot run {}: {e}", exe.display())))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let expected: BTreeSet<(&str, &str)> = tests
        .iter()
        .flat_map(|t| mappings.iter().map(move |m| (*t, m.name())))
        .collect();
    let mut seen: BTreeSet<(String, String, u32)> = BTreeSet::new();
    let want = expected.len() * count as usize;
    // A run ends by the deadline at the latest; allow for set-up and a slow
    // machine before calling the program stuck.
    // (A Vulkan host allows 30 s plus 1 ms per workgroup after the stop flag.)
    let patience = Duration::from_millis(2 * args.deadline_ms + 180_000);
    let shown = format!("{} {}", exe.display(), argv.join(" "));
    let fail = |child: &mut std::process::Child, msg: String| {
        let _ = child.kill();
        let _ = child.wait();
        env(format!("{msg}\n  command: {shown}"))
    };
    loop {
        let line = match rx.recv_timeout(patience) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => return Err(fail(&mut child, format!("reading the program's output: {e}"))),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(fail(
                    &mut child,
                    format!(
                        "no result for {} s although every run has a {} ms deadline: the program seems stuck",
                        patience.as_secs(),
                        args.deadline_ms
                    ),
                ))
            }
        };
        let mut r = match parse_result_line(&line, journal::now_unix_ms()) {
            Ok(r) => r,
            Err(e) => return Err(fail(&mut child, e)),
        };
        if !expected.contains(&(r.test.as_str(), r.mapping.as_str())) || r.iteration >= count {
            return Err(fail(
                &mut child,
                format!(
                    "unexpected result (test {}, mapping {}, iteration {}) for a request of {count} iterations",
                    r.test, r.mapping, r.iteration
                ),
            ));
        }
        r.iteration += offset;
        if !seen.insert((r.test.clone(), r.mapping.clone(), r.iteration)) {
            return Err(fail(
                &mut child,
                format!(
                    "the program reported run {} of {} under {} twice",
                    r.iteration - offset,
                    r.test,
                    r.mapping
                ),
            ));
        }
        writer.append(&Entry::Result(r.clone())).map_err(env)?;
        progress.tick(&r);
    }
    let _ = reader.join();
    let status = child
        .wait()
        .map_err(|e| env(format!("waiting for {}: {e}", exe.display())))?;
    if !status.success() {
        return Err(env(format!(
            "the program failed ({status})\n  command: {shown}"
        )));
    }
    if seen.len() != want {
        return Err(env(format!(
            "the program reported {} of {want} runs and exited\n  command: {shown}",
            seen.len()
        )));
    }
    Ok(())
}

/// The paths of a campaign's files.
pub struct Paths {
    pub journal: PathBuf,
    pub device: PathBuf,
}

pub fn paths(out: &Path, name: &str) -> Paths {
    Paths {
        journal: out.join(format!("{name}.journal.jsonl")),
        device: out.join(format!("{name}.device.json")),
    }
}

/// Writes the CSVs and the device file from a complete journal; returns
/// the files written.
pub(crate) fn write_results(
    out: &Path,
    target: RunTarget,
    name: &str,
    tests: &[NamedTest],
    contents: &journal::Contents,
    device: Value,
) -> Result<Vec<PathBuf>, Failure> {
    // (failed, runs) per test and mapping.
    let mut counts: BTreeMap<(&str, &str), (u32, u32)> = BTreeMap::new();
    for r in contents.results() {
        let c = counts.entry((&r.test, &r.mapping)).or_default();
        c.0 += !r.terminated as u32;
        c.1 += 1;
    }
    let mut files: BTreeMap<String, Vec<(String, [Cell; 3])>> = BTreeMap::new();
    for t in tests {
        let (dir, id) = result_slot(&t.name, &t.entry.test);
        let mut cells = [Cell::NotRun; 3];
        for m in Mapping::ALL {
            if let Some(&(k, n)) = counts.get(&(t.name.as_str(), m.name())) {
                cells[m.code() as usize] = Cell::from_counts(k, n);
            }
        }
        files.entry(dir).or_default().push((id, cells));
    }
    let mut written = Vec::new();
    for (dir, mut rows) in files {
        rows.sort_by(|a, b| crate::report::analysis::natural_cmp(&a.0, &b.0));
        let path = out
            .join(dir)
            .join(target.framework())
            .join(format!("{name}.csv"));
        write_atomically(&path, results::write(&rows).as_bytes())
            .map_err(|e| env(format!("{}: cannot write: {e}", path.display())))?;
        written.push(path);
    }
    // Times: per session, from its start to its last result.
    let mut sessions = Vec::new();
    let mut current: Option<(u64, u64, usize)> = None;
    for e in &contents.entries {
        match e {
            Entry::Session(s) => {
                if let Some(c) = current.take() {
                    sessions.push(c);
                }
                current = Some((s.started_unix_ms, s.started_unix_ms, 0));
            }
            Entry::Result(r) => {
                if let Some(c) = current.as_mut() {
                    c.1 = c.1.max(r.at_unix_ms);
                    c.2 += 1;
                }
            }
            Entry::Campaign(_) => {}
        }
    }
    sessions.extend(current);
    let runs = contents.results().count();
    let hung = contents.results().filter(|r| !r.terminated).count();
    let run_ms: f64 = contents.results().map(|r| r.elapsed_ms).sum();
    let doc = json!({
        "device": name,
        "target": target.name(),
        "description": device,
        "options": contents.campaign(),
        "results": {"runs": runs, "non_terminating_runs": hung},
        "times": {
            "sessions": sessions.iter().map(|(s, e, n)| json!({
                "started_unix_ms": s, "last_result_unix_ms": e, "wall_ms": e - s, "runs": n
            })).collect::<Vec<_>>(),
            "wall_ms": sessions.iter().map(|(s, e, _)| e - s).sum::<u64>(),
            "runs_ms": (run_ms * 1000.0).round() / 1000.0,
        },
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("serializable");
    text.push('\n');
    let device_path = paths(out, name).device;
    write_atomically(&device_path, text.as_bytes())
        .map_err(|e| env(format!("{}: cannot write: {e}", device_path.display())))?;
    written.push(device_path);
    Ok(written)
}

/// What a finished campaign did.
pub struct Summary {
    pub name: String,
    pub runs: usize,
    pub ran_now: usize,
    pub non_terminating: usize,
    pub files: Vec<PathBuf>,
}

/// The suite paths as one string for messages: `a, b`.
pub(crate) fn show_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The suite paths as recorded in a campaign: a string for one path (as
/// journals have always had it), a list for several.
pub(crate) fn suite_json(paths: &[PathBuf]) -> Value {
    match paths {
        [one] => Value::String(one.display().to_string()),
        _ => paths.iter().map(|p| p.display().to_string()).collect(),
    }
}

/// Checks a device name: it names the result files.
pub(crate) fn check_name(name: &str) -> Result<(), Failure> {
    if name.is_empty()
        || name.starts_with('.')
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(input(format!(
            "bad --name `{name}`: use letters, digits, `-`, `_` and `.` (it names the result files)"
        )));
    }
    Ok(())
}

/// The tests of a suite, every file readable.
pub(crate) fn load_suite(suite: &[PathBuf]) -> Result<Vec<NamedTest>, Failure> {
    if let Some(missing) = suite.iter().find(|p| !p.exists()) {
        return Err(input(format!(
            "{}: no such file or directory",
            missing.display()
        )));
    }
    let (tests, errors) = load_all(suite);
    if !errors.is_empty() {
        let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(input(msgs.join("\n")));
    }
    Ok(tests)
}

/// The tests of `suite` named in the file `list` (one name per line; blank
/// lines and `#` comments skipped), in the suite's order. A name that is
/// not in the suite is an error naming the line.
pub(crate) fn select(
    tests: Vec<NamedTest>,
    list: &Path,
    suite: &[PathBuf],
) -> Result<Vec<NamedTest>, Failure> {
    let text = std::fs::read_to_string(list)
        .map_err(|e| input(format!("{}: cannot read: {e}", list.display())))?;
    let known: BTreeSet<&str> = tests.iter().map(|t| t.name.as_str()).collect();
    let mut wanted = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let name = line.trim();
        if name.is_empty() || name.starts_with('#') {
            continue;
        }
        if !known.contains(name) {
            return Err(input(format!(
                "{}:{}: no test named `{name}` in {}",
                list.display(),
                n + 1,
                show_paths(suite)
            )));
        }
        wanted.insert(name.to_string());
    }
    if wanted.is_empty() {
        return Err(input(format!("{}: names no test", list.display())));
    }
    Ok(tests
        .into_iter()
        .filter(|t| wanted.contains(&t.name))
        .collect())
}

/// The whole command; see the module doc.
pub fn run(args: &RunArgs) -> Result<Summary, Failure> {
    if args.os_threads.is_some() && args.target != RunTarget::Cpp {
        return Err(input("--os-threads is for the cpp target"));
    }
    if !args.nvcc_flags.is_empty() && args.target != RunTarget::Cuda {
        return Err(input("--nvcc-flag is for the cuda target"));
    }
    if args.cuda_on_cpu && args.target != RunTarget::Cuda {
        return Err(input("--cuda-on-cpu is for the cuda target"));
    }
    let mut mappings = args.mappings.clone();
    mappings.sort();
    mappings.dedup();
    if mappings.len() != args.mappings.len() {
        return Err(input("a mapping is named twice in --mappings"));
    }
    let name = args.name.clone().unwrap_or_else(|| default_name(args));
    check_name(&name)?;
    let mut tests = load_suite(&args.suite)?;
    if let Some(list) = &args.only {
        tests = select(tests, list, &args.suite)?;
    }
    let opts = Options::default();
    let suite_err = |e: &dyn std::fmt::Display| input(format!("{}: {e}", show_paths(&args.suite)));
    let source = match args.target {
        RunTarget::Cpp => {
            Source::Program(crate::target::cpp::program(&tests, &opts).map_err(|e| suite_err(&e))?)
        }
        RunTarget::Cuda => {
            Source::Program(crate::target::cuda::program(&tests, &opts).map_err(|e| suite_err(&e))?)
        }
        RunTarget::Vulkan => {
            crate::target::host::check_names(&tests).map_err(|e| suite_err(&e))?;
            let emit_opts = crate::target::emit::EmitOptions {
                target: crate::target::emit::Target::Vulkan,
                mappings: mappings.clone(),
                instances: args.instances,
                shape: opts.shape,
                deadline_ms: args.deadline_ms,
                program_name: "tests".to_string(),
            };
            Source::Shaders(
                crate::target::emit::files(&tests, &emit_opts).map_err(|e| suite_err(&e))?,
            )
        }
    };
    let hash = source.hash();
    let campaign = campaign(args, &name, &tests, &hash);
    let p = paths(&args.out, &name);

    // The compiler and the device first: a missing one should not leave a
    // journal behind.
    let exe = build(args, &source, &hash)?;
    let device = device_info(args, &exe)?;

    std::fs::create_dir_all(&args.out)
        .map_err(|e| env(format!("{}: cannot create: {e}", args.out.display())))?;
    let mut writer = if p.journal.exists() {
        if !args.resume {
            return Err(input(format!(
                "{}: a campaign is already journaled here: pass --resume to continue it, or choose another --out or --name",
                p.journal.display()
            )));
        }
        let contents = journal::read(&p.journal).map_err(input)?;
        if contents.campaign() != &campaign {
            return Err(input(format!(
                "{}: the journaled campaign differs from this command's, so its runs cannot be counted together:\n  journal: {}\n  command: {}",
                p.journal.display(),
                contents.campaign(),
                campaign
            )));
        }
        if let Some(torn) = &contents.torn {
            eprintln!(
                "note: {}: cutting off the torn last line `{}` (a run interrupted while being recorded; it will be run again)",
                p.journal.display(),
                torn.escape_debug()
            );
        }
        journal::Writer::resume(&p.journal, contents.complete_len).map_err(env)?
    } else {
        if args.resume {
            eprintln!(
                "note: no journal at {}: starting the campaign",
                p.journal.display()
            );
        }
        journal::Writer::create(&p.journal, &campaign).map_err(env)?
    };
    writer
        .append(&Entry::Session(Session {
            started_unix_ms: journal::now_unix_ms(),
        }))
        .map_err(env)?;
    let contents = journal::read(&p.journal).map_err(input)?;

    // What is done, checked against the suite.
    let names: BTreeSet<&str> = tests.iter().map(|t| t.name.as_str()).collect();
    // (runs, highest iteration) per test and mapping. The journal has no
    // run twice, so the iterations are 0..runs iff the highest is runs - 1.
    let mut seen: BTreeMap<(&str, Mapping), (u32, u32)> = BTreeMap::new();
    for r in contents.results() {
        let m: Mapping = r.mapping.parse().map_err(input)?;
        let Some(t) = names
            .get(r.test.as_str())
            .copied()
            .filter(|_| mappings.contains(&m))
        else {
            return Err(input(format!(
                "{}: a result for test {} under {} is not part of this campaign",
                p.journal.display(),
                r.test,
                r.mapping
            )));
        };
        let e = seen.entry((t, m)).or_default();
        e.0 += 1;
        e.1 = e.1.max(r.iteration);
    }
    let mut done: BTreeMap<(&str, Mapping), u32> = BTreeMap::new();
    for ((t, m), (n, max)) in seen {
        if n > args.iterations || max + 1 != n {
            return Err(input(format!(
                "{}: the iterations of {t} under {m} are not 0..{n} (at most {} expected)",
                p.journal.display(),
                args.iterations
            )));
        }
        done.insert((t, m), n);
    }

    // Pending work, grouped: tests with the same mappings and the same
    // number of recorded runs share one program invocation.
    let mut groups: BTreeMap<(Vec<Mapping>, u32), Vec<&str>> = BTreeMap::new();
    for t in &tests {
        let mut by_done: BTreeMap<u32, Vec<Mapping>> = BTreeMap::new();
        for &m in &args.mappings {
            let d = done.get(&(t.name.as_str(), m)).copied().unwrap_or(0);
            if d < args.iterations {
                by_done.entry(d).or_default().push(m);
            }
        }
        for (d, ms) in by_done {
            groups.entry((ms, d)).or_default().push(&t.name);
        }
    }
    let total = tests.len() * args.mappings.len() * args.iterations as usize;
    let already = contents.results().count();
    let mut progress = Progress::new(total, already);
    for ((ms, d), group) in &groups {
        // Keep command lines short: at most 200 tests per invocation.
        for chunk in group.chunks(200) {
            run_group(
                args,
                &exe,
                chunk,
                ms,
                *d,
                args.iterations - d,
                &mut writer,
                &mut progress,
            )?;
        }
    }
    drop(writer);
    let contents = journal::read(&p.journal).map_err(input)?;
    let runs = contents.results().count();
    if runs != total {
        return Err(env(format!(
            "{}: {runs} of {total} runs journaled after the campaign",
            p.journal.display()
        )));
    }
    let files = write_results(&args.out, args.target, &name, &tests, &contents, device)?;
    Ok(Summary {
        name,
        runs,
        ran_now: runs - already,
        non_terminating: contents.results().filter(|r| !r.terminated).count(),
        files,
    })
}

/// `backends run`.
pub fn main(args: &RunArgs) -> ExitCode {
    finish(run(args), |s| {
        format!(
            "{}: {} runs ({} now), {} did not terminate; wrote {} files under {}",
            s.name,
            s.runs,
            s.ran_now,
            s.non_terminating,
            s.files.len(),
            args.out.display()
        )
    })
}

/// A command's end: `done`'s summary line, or the failure, on stderr, and
/// the exit status.
pub(crate) fn finish<T>(result: Result<T, Failure>, done: impl FnOnce(T) -> String) -> ExitCode {
    match result {
        Ok(s) => {
            eprintln!("{}", done(s));
            ExitCode::SUCCESS
        }
        Err(f) => {
            eprintln!("error: {}", f.msg);
            ExitCode::from(f.code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn parse(argv: &[&str]) -> RunArgs {
        Cli::try_parse_from(std::iter::once("run").chain(argv.iter().copied()))
            .unwrap()
            .run
    }

    #[test]
    fn cuda_command_lines_carry_the_options_and_no_cpu_threads() {
        let a = parse(&[
            "--target",
            "cuda",
            "suite.ron",
            "--out",
            "o",
            "--deadline-ms",
            "500",
            "--instances",
            "64",
            "--program-arg=--cooperative",
            "--nvcc-flag=-arch=sm_90",
        ]);
        assert_eq!(
            program_command(
                &a,
                &["2t2i_0", "2t2i_1"],
                &[Mapping::Plain, Mapping::Chunked],
                7
            ),
            [
                "--test=2t2i_0,2t2i_1",
                "--mapping=plain,chunked",
                "--iterations=7",
                "--deadline-ms=500",
                "--instances=64",
                "--cooperative"
            ]
        );
        assert_eq!(a.nvcc_flags, ["-arch=sm_90"]);
        let c = parse(&["--target", "cpp", "s", "--out", "o", "--os-threads", "200"]);
        assert_eq!(c.iterations, 20);
        assert_eq!(c.mappings, Mapping::ALL);
        assert!(program_command(&c, &["a"], &[Mapping::Plain], 1)
            .contains(&"--threads=200".to_string()));
    }

    #[test]
    fn cuda_result_lines_parse_with_their_own_fields() {
        let line = r#"{"test":"2t2i_0","target":"cuda","mapping":"chunked","instances":32767,"workgroups":65534,"iteration":3,"terminated":false,"elapsed_ms":1000.5,"launch":"normal","intra_warp":false,"device":"NVIDIA H100 80GB HBM3"}"#;
        let r = parse_result_line(line, 42).unwrap();
        assert_eq!(r.test, "2t2i_0");
        assert_eq!(r.mapping, "chunked");
        assert_eq!(r.iteration, 3);
        assert!(!r.terminated);
        assert_eq!(r.workgroups, 65534);
        assert_eq!(r.extra["device"], "NVIDIA H100 80GB HBM3");
        assert!(!r.extra.contains_key("target"));
        for bad in [
            "garbage",
            "[1]",
            r#"{"test":"a","mapping":"plain","iteration":0,"elapsed_ms":1,"instances":1,"workgroups":2}"#,
            r#"{"test":"a","mapping":"plain","iteration":-1,"terminated":true,"elapsed_ms":1,"instances":1,"workgroups":2}"#,
        ] {
            assert!(parse_result_line(bad, 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn results_go_to_artifact_configuration_directories() {
        let t = axb::text::parse("THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)\n")
            .unwrap();
        assert_eq!(
            result_slot("3t4i_34", &t),
            ("3_thread_4_instruction".to_string(), "34".to_string())
        );
        assert_eq!(
            result_slot("mutex", &t),
            ("2t2i".to_string(), "mutex".to_string())
        );
        assert_eq!(result_slot("3t4i_x", &t).1, "3t4i_x");
        assert_eq!(result_slot("03t4i_1", &t).1, "03t4i_1");
    }
}
