//! Validity of the emitted programs with the real compilers (issue 5, item
//! 5): GLSL with glslangValidator, C++ with g++ (and runs on the CPU), CUDA
//! host logic with g++ against the CPU emulation of the runtime, Metal with
//! clang++ against the Metal shim.
//!
//! A missing tool fails the test with the Debian package to install, unless
//! BACKENDS_SKIP_TOOLCHAIN_TESTS=1 is set (then the test says so and passes).

mod common;
use backends::target::emit::{self, EmitOptions, Target};
use backends::target::File;
use backends::toolchain::{self, Tool, ToolError};
use backends::{Mapping, Shape};
use common::tools;
use progress_litmus::axb::load::{load_all, load_file, NamedTest};
use std::path::{Path, PathBuf};
use std::process::Command;

const PUBLISHED: &str = "../data/oopsla21/tests";

fn published() -> Vec<NamedTest> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(PUBLISHED);
    let (tests, errors) = load_all(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tests.len(), 483);
    tests
}

/// One test of the published suite by name.
fn published_test(name: &str) -> NamedTest {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(PUBLISHED)
        .join(format!("{name}.txt"));
    load_file(&path).unwrap().remove(0)
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn opts(target: Target, shape: Shape) -> EmitOptions {
    EmitOptions {
        target,
        mappings: Mapping::ALL.to_vec(),
        instances: None,
        shape,
        deadline_ms: 20_000,
        program_name: "tests".to_string(),
        bare: false,
    }
}

fn emit_to(dir: &Path, tests: &[NamedTest], o: &EmitOptions) -> Vec<File> {
    let files = emit::files(tests, o).unwrap();
    emit::write(dir, &files).unwrap();
    files
}

fn paths(dir: &Path, files: &[File], ext: &str) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == ext))
        .map(|f| dir.join(&f.path))
        .collect()
}

/// Runs a generated program; its JSON result lines.
fn run_json(exe: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let out = Command::new(exe).args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n{stdout}{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn outcome(lines: &[serde_json::Value], mapping: &str) -> Vec<bool> {
    lines
        .iter()
        .filter(|l| l["mapping"] == mapping)
        .map(|l| l["terminated"].as_bool().unwrap())
        .collect()
}

/// Every 40th published test: all five configurations appear.
fn sample() -> Vec<String> {
    published()
        .iter()
        .step_by(40)
        .map(|t| t.name.clone())
        .collect()
}

#[test]
fn glsl_of_the_published_suite_compiles_in_both_shapes() {
    if !tools(&[Tool::Glslang]) {
        return;
    }
    let tests = published();
    let mut all = Vec::new();
    for shape in [Shape::Switch, Shape::IfChain] {
        let dir = scratch(&format!("glsl-{}", shape.name()));
        let files = emit_to(&dir, &tests, &opts(Target::Glsl, shape));
        let comp = paths(&dir, &files, "comp");
        assert_eq!(comp.len(), 483 * 3);
        all.extend(comp);
    }
    toolchain::check_glsl(&all).unwrap();
    // The batch check parses; SPIR-V generation for Vulkan is checked on a
    // sample (one call per file, as a batch would be linked into one module).
    for p in all.iter().step_by(97) {
        toolchain::compile_glsl_spirv(p, &p.with_extension("spv")).unwrap();
    }
}

#[test]
fn the_glsl_check_rejects_a_broken_shader() {
    if !tools(&[Tool::Glslang]) {
        return;
    }
    let dir = scratch("glsl-broken");
    let t = published_test("2t2i_4");
    let good = backends::target::glsl::shader(
        &t,
        &backends::Layout::new(Mapping::Plain, 2, None),
        Shape::Switch,
        "glsl",
    )
    .unwrap();
    let bad = dir.join("bad.comp");
    std::fs::write(&bad, good.replace("atomicAdd(", "atomicAddd(")).unwrap();
    assert!(matches!(
        toolchain::check_glsl(&[bad]),
        Err(ToolError::Failed { .. })
    ));
}

#[test]
fn amber_scripts_carry_the_glsl_shader_buffers_and_dispatch() {
    if !tools(&[Tool::Glslang]) {
        return;
    }
    let t = published_test("3t4i_20");
    let dir = scratch("amber");
    let files = emit_to(
        &dir,
        std::slice::from_ref(&t),
        &opts(Target::Amber, Shape::Switch),
    );
    assert_eq!(files.len(), 3);
    let chunked = &files
        .iter()
        .find(|f| f.path.to_str() == Some("3t4i_20.chunked.amber"))
        .unwrap()
        .contents;
    let layout = backends::Layout::new(Mapping::Chunked, 3, None);
    let shader = backends::target::glsl::shader(&t, &layout, Shape::Switch, "amber").unwrap();
    assert!(chunked.starts_with("#!amber\n"));
    assert!(chunked.contains(&format!("SHADER compute axb_test GLSL\n{shader}END\n")));
    let words = t.entry.test.num_locs() * 21845;
    assert!(chunked.contains(&format!(
        "BUFFER mem DATA_TYPE uint32 SIZE {words} FILL 0\n"
    )));
    assert!(chunked.contains("BIND BUFFER stop AS storage DESCRIPTOR_SET 0 BINDING 1\n"));
    assert!(chunked.ends_with("RUN axb_pipeline 65535 1 1\n"));
    // The embedded shaders compile.
    emit::check(
        &dir,
        &files,
        &opts(Target::Amber, Shape::Switch),
        &dir.join("check"),
    )
    .unwrap();
}

#[test]
fn cpp_program_of_the_published_suite_compiles_and_a_sample_terminates_under_every_mapping() {
    if !tools(&[Tool::Gxx]) {
        return;
    }
    let dir = scratch("cpp-suite");
    let files = emit_to(&dir, &published(), &opts(Target::Cpp, Shape::Switch));
    let src = dir.join(&files[0].path);
    let exe = dir.join("tests");
    toolchain::compile_cpp(&src, &exe).unwrap();
    let names = sample().join(",");
    for threads in ["2", "16"] {
        let lines = run_json(
            &exe,
            &[
                "--test",
                &names,
                "--instances",
                "64",
                "--threads",
                threads,
                "--deadline-ms",
                "20000",
            ],
        );
        assert_eq!(lines.len(), sample().len() * 3);
        for l in &lines {
            assert_eq!(
                l["terminated"], true,
                "a fair CPU run did not terminate: {l}"
            );
            assert_eq!(l["threads"].as_u64(), Some(threads.parse().unwrap()));
        }
        let listed: Vec<&str> = lines
            .iter()
            .step_by(3)
            .map(|l| l["test"].as_str().unwrap())
            .collect();
        assert_eq!(listed.join(","), names);
        assert_eq!(
            lines[1]["workgroups"].as_u64().unwrap(),
            lines[1]["instances"].as_u64().unwrap() * 2
        );
    }
}

#[test]
fn cpp_if_chain_program_compiles_and_terminates() {
    if !tools(&[Tool::Gxx]) {
        return;
    }
    let tests: Vec<NamedTest> = sample().iter().map(|n| published_test(n)).collect();
    let dir = scratch("cpp-if-chain");
    let files = emit_to(&dir, &tests, &opts(Target::Cpp, Shape::IfChain));
    assert!(!files[0].contents.contains("switch (pc)"));
    let exe = dir.join("tests");
    toolchain::compile_cpp(&dir.join(&files[0].path), &exe).unwrap();
    let lines = run_json(
        &exe,
        &["--instances", "32", "--threads", "2", "--iterations", "2"],
    );
    assert_eq!(lines.len(), tests.len() * 3 * 2);
    assert!(lines.iter().all(|l| l["terminated"] == true));
}

/// The one-way producer-consumer with the consumer at the lower id (2t2i_4:
/// T0 spins until Mem[0] == 1, T1 stores 1) is what the chunked mapping was
/// designed to starve on an occupancy-bound, linear-order scheduler.
#[test]
fn cpp_stop_flag_ends_a_starved_chunked_run_and_the_program_goes_on() {
    if !tools(&[Tool::Gxx]) {
        return;
    }
    let t = published_test("2t2i_4");
    let dir = scratch("cpp-starved");
    let files = emit_to(&dir, &[t], &opts(Target::Cpp, Shape::Switch));
    let exe = dir.join("tests");
    toolchain::compile_cpp(&dir.join(&files[0].path), &exe).unwrap();
    let args = [
        "--instances",
        "16",
        "--threads",
        "2",
        "--deadline-ms",
        "300",
        "--iterations",
        "2",
    ];
    let obe = run_json(&exe, &[&args[..], &["--scheduler", "obe"]].concat());
    assert_eq!(outcome(&obe, "plain"), [true, true]);
    assert_eq!(outcome(&obe, "round-robin"), [true, true]);
    assert_eq!(outcome(&obe, "chunked"), [false, false]);
    for l in obe.iter().filter(|l| l["mapping"] == "chunked") {
        let ms = l["elapsed_ms"].as_f64().unwrap();
        assert!((300.0..5000.0).contains(&ms), "stopped after {ms} ms");
    }
    // The fair scheduler interleaves the spinning consumers with their producers.
    let fair = run_json(&exe, &args);
    assert!(fair
        .iter()
        .all(|l| l["terminated"] == true && l["scheduler"] == "fair"));
}

/// The CUDA program compiled by g++ against `cuda-shim/cuda_runtime.h`:
/// checks the host harness and kernels of the whole published suite, and
/// runs the deadline / stop-flag path the way issue 5 asks of the GPU.
#[test]
fn cuda_program_runs_on_the_cpu_emulation_of_the_runtime() {
    if !tools(&[Tool::Gxx]) {
        return;
    }
    let dir = scratch("cuda-shim");
    let files = emit_to(&dir, &published(), &opts(Target::Cuda, Shape::Switch));
    assert!(files[0].contents.contains("cudaHostAllocMapped"));
    assert!(files[0].contents.contains("cudaLaunchCooperativeKernel"));
    let exe = dir.join("tests");
    toolchain::compile_cuda_on_cpu(&dir.join(&files[0].path), &exe, &dir.join("shim")).unwrap();
    // Two block slots: the chunked consumers occupy both and spin for ever.
    let lines = run_json(
        &exe,
        &[
            "--test",
            "2t2i_4",
            "--instances",
            "8",
            "--deadline-ms",
            "300",
        ],
    );
    assert_eq!(outcome(&lines, "plain"), [true]);
    assert_eq!(outcome(&lines, "round-robin"), [true]);
    assert_eq!(outcome(&lines, "chunked"), [false]);
    assert!(lines
        .iter()
        .all(|l| l["launch"] == "normal" && l["intra_warp"] == false));
    // A cooperative launch shrinks M to what is co-resident: every block runs.
    let coop = run_json(
        &exe,
        &["--test", "2t2i_4", "--cooperative", "--mapping", "chunked"],
    );
    assert_eq!(coop[0]["instances"], 1);
    assert_eq!(coop[0]["terminated"], true);
    // Intra-warp: one block of N threads per instance.
    let warp = run_json(
        &exe,
        &[
            "--test",
            "2t2i_4,3t4i_20",
            "--intra-warp",
            "--instances",
            "4",
        ],
    );
    assert_eq!(warp.len(), 4);
    assert!(warp
        .iter()
        .all(|l| l["terminated"] == true && l["intra_warp"] == true));
    assert_eq!(warp[1]["workgroups"], 4);
    // The canary: --info reports how fast the stop flag ended it; a device
    // that ends it by itself, or that the flag never reaches, is refused.
    let info = run_json(&exe, &["--info"]);
    assert!(
        info[0]["stop_latency_ms"].as_f64().unwrap() < 1000.0,
        "{info:?}"
    );
    for (word, needle) in [
        ("1", "ended the canary"),
        ("0", "did not end within 300 ms of the stop flag"),
    ] {
        let o = Command::new(&exe)
            .args(["--test", "2t2i_4", "--stop-grace-ms", "300"])
            .env("AXB_SHIM_STOP_WORD", word)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(o.stdout.is_empty(), "no result before the canary passed");
    }
    // --stop-memory device (the flag in device memory, set by a copy on a
    // second stream while the kernel runs): the starved chunked run still
    // ends at its deadline, and --info says where the flag is.
    assert_eq!(info[0]["stop_memory"], "host", "{info:?}");
    let on_device = run_json(
        &exe,
        &[
            "--test",
            "2t2i_4",
            "--instances",
            "8",
            "--mapping",
            "chunked",
            "--deadline-ms",
            "300",
            "--stop-grace-ms",
            "5000",
            "--stop-memory",
            "device",
        ],
    );
    assert_eq!(outcome(&on_device, "chunked"), [false]);
    let info = run_json(&exe, &["--info", "--stop-memory", "device"]);
    assert_eq!(info[0]["stop_memory"], "device", "{info:?}");
    let bad = Command::new(&exe)
        .args(["--stop-memory", "gpu"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--stop-memory: `gpu` is not host or device")
    );
    // A sample under all three mappings on the emulated device.
    let names = sample().join(",");
    let lines = run_json(
        &exe,
        &[
            "--test",
            &names,
            "--instances",
            "1",
            "--deadline-ms",
            "20000",
        ],
    );
    assert_eq!(lines.len(), sample().len() * 3);
}

/// The CUDA program built by a real nvcc for Hopper (sm_90), where nvcc is
/// on PATH (CI has none: the toolkit is gigabytes): the device code
/// compiles, and in the machine code (SASS) every spin loop reads the stop
/// flag with a system-scope load, so a flag set by the host reaches it.
/// `AXB_NVCC_FLAGS` adds flags (space-separated).
#[test]
fn cuda_program_compiles_with_nvcc_and_reads_the_stop_flag_in_every_loop() {
    if toolchain::find(Tool::Nvcc).is_err() {
        eprintln!("skipped: nvcc not on PATH (this test needs the CUDA toolkit, not a GPU)");
        return;
    }
    let dir = scratch("cuda-nvcc");
    let tests = vec![published_test("2t2i_4"), published_test("3t4i_20")];
    let files = emit_to(&dir, &tests, &opts(Target::Cuda, Shape::Switch));
    let exe = dir.join("tests");
    let extra = std::env::var("AXB_NVCC_FLAGS").unwrap_or_default();
    let mut flags: Vec<&str> = vec!["-arch=sm_90", "-Xcompiler", "-Wall,-Wextra,-Werror"];
    flags.extend(extra.split_whitespace());
    toolchain::compile_cuda(&dir.join(&files[0].path), &exe, &flags).unwrap();
    let out = Command::new("cuobjdump")
        .args(["-sass", "-fun", "_Z10axb_test_0PjPVjjj"])
        .arg(&exe)
        .output()
        .unwrap();
    let sass = String::from_utf8_lossy(&out.stdout);
    assert!(sass.contains("sm_90"), "{sass}");
    // The consumer's loop: the flag load, then the atomic add of 0, then
    // the branch back to the flag load.
    let ops: Vec<&str> = sass
        .lines()
        .filter_map(|l| l.split_once("*/ ").map(|(_, op)| op.trim()))
        .filter(|op| op.contains("LDG") || op.contains("ATOMG") || op.contains("BRA"))
        .collect();
    let load = ops
        .iter()
        .position(|op| op.starts_with("LDG.E.STRONG.SYS"))
        .unwrap_or_else(|| panic!("no system-scope load of the stop flag:\n{sass}"));
    assert!(
        ops[load..].iter().any(|op| op.contains("ATOMG.E.ADD")),
        "no atomic add after the flag load:\n{sass}"
    );
    // Without a GPU the program still starts and fails cleanly.
    let list = Command::new(&exe).arg("--list").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&list.stdout),
        "2t2i_4\t2\n3t4i_20\t3\n"
    );
}

/// Emits `tests` for Vulkan with `instances` into `dir` and builds them as
/// `build.sh` would; `None` (after saying why) where the toolchain tests
/// are skipped and the Vulkan headers are missing.
fn build_vulkan(dir: &Path, tests: &[NamedTest], instances: u32) -> Option<Vec<File>> {
    let mut o = opts(Target::Vulkan, Shape::Switch);
    o.instances = Some(instances);
    let files = emit_to(dir, tests, &o);
    match emit::check(dir, &files, &o, &dir.join("scratch")) {
        Ok(()) => Some(files),
        Err(e @ ToolError::MissingLibrary { .. })
            if std::env::var("BACKENDS_SKIP_TOOLCHAIN_TESTS").is_ok_and(|v| v == "1") =>
        {
            eprintln!("skipped (BACKENDS_SKIP_TOOLCHAIN_TESTS=1): {e}");
            None
        }
        Err(e) => panic!("{e} (or set BACKENDS_SKIP_TOOLCHAIN_TESTS=1 to skip toolchain tests)"),
    }
}

/// The Vulkan target as `build.sh` builds it, run on the machine's Vulkan
/// device (CI: Mesa's lavapipe, on the CPU). The canary refuses a device
/// that ends loops by itself (lavapipe does, after 65535 iterations) and
/// passes any other; with `--no-canary` the host runs the tests under
/// every mapping; and the stop flag ends a dispatch of 2048 spinning
/// workgroups at its deadline, in the same process. (Lavapipe would end
/// them by its loop limit too, but only after seconds: 2048 x about 3 ms
/// on two threads.)
#[test]
fn vulkan_host_checks_the_canary_runs_shaders_and_stops_spinning_runs() {
    if !tools(&[Tool::Glslang, Tool::Gxx]) {
        return;
    }
    let dir = scratch("vulkan");
    let spin_file = dir.join("spin.txt");
    // One thread waiting for a write nobody makes: no scheduler ends it.
    std::fs::write(&spin_file, "THREAD0\natomic_chk_branch(0,0,0)\n").unwrap();
    let out = dir.join("tests");
    let tests = [published_test("2t2i_4"), published_test("3t4i_20")];
    let Some(files) = build_vulkan(&out, &tests, 4) else {
        return;
    };
    assert_eq!(files.len(), 2 * 3 + 3);
    let exe = out.join("vkrun");
    let shaders = format!("--shaders={}", out.display());
    let info = run_json(&exe, &["--info"]);
    assert!(info[0]["device"].is_string(), "{info:?}");
    let bounded_loops = info[0]["driver_name"] == "llvmpipe";
    let list = Command::new(&exe)
        .args([&shaders, "--list"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&list.stdout),
        "2t2i_4\t2\n3t4i_20\t3\n"
    );
    let checked = Command::new(&exe)
        .args([&shaders, "--info"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&checked.stderr);
    if bounded_loops {
        assert_eq!(checked.status.code(), Some(1), "{err}");
        assert!(
            err.contains("ended the canary") && err.contains("--no-canary"),
            "{err}"
        );
        assert!(checked.stdout.is_empty());
    } else {
        assert!(checked.status.success(), "{err}");
    }
    let lines = run_json(
        &exe,
        &[
            &shaders,
            "--no-canary",
            "--test",
            "2t2i_4,3t4i_20",
            "--deadline-ms",
            "20000",
        ],
    );
    assert_eq!(lines.len(), 6);
    assert_eq!(outcome(&lines, "plain"), [true, true]);
    assert!(lines
        .iter()
        .all(|l| l["target"] == "vulkan" && l["device"] == info[0]["device"]));
    assert_eq!(lines[2]["instances"], 4);
    assert_eq!(lines[5]["workgroups"], 12);

    // The stop flag: 2048 spinners, stopped at 100 ms, twice in one process.
    let spin_dir = dir.join("spin");
    build_vulkan(&spin_dir, &load_file(&spin_file).unwrap(), 2048).unwrap();
    let spin_dir_arg = format!("--shaders={}", spin_dir.display());
    let spin = |iterations: &str, deadline_ms: &str| {
        run_json(
            &spin_dir.join("vkrun"),
            &[
                &spin_dir_arg,
                "--no-canary",
                "--mapping",
                "round-robin",
                "--iterations",
                iterations,
                "--deadline-ms",
                deadline_ms,
            ],
        )
    };
    // On lavapipe the dispatch also ends by the loop limit, after seconds;
    // stopped at 100 ms it must end well before that. Elsewhere the
    // spinners never end by themselves. Both times are wall-clock times of
    // a CPU device on a shared machine: one of three tries must show it
    // (a loaded machine once stretched a stopped run past the bound).
    let mut tries = Vec::new();
    for _ in 0..3 {
        let stopped = spin("2", "100");
        assert_eq!(stopped.len(), 2);
        let limit = if bounded_loops {
            let natural = spin("1", "60000");
            assert_eq!(natural[0]["terminated"], true, "{natural:?}");
            0.75 * natural[0]["elapsed_ms"].as_f64().unwrap()
        } else {
            1500.0
        };
        for l in &stopped {
            assert_eq!(l["terminated"], false, "{l}");
            assert_eq!(l["workgroups"], 2048, "{l}");
        }
        let ms: Vec<f64> = stopped
            .iter()
            .map(|l| l["elapsed_ms"].as_f64().unwrap())
            .collect();
        if ms.iter().all(|ms| (100.0..limit).contains(ms)) {
            tries.clear();
            break;
        }
        tries.push(format!("stopped after {ms:?} ms, not before {limit} ms"));
    }
    assert!(tries.is_empty(), "{tries:?}");

    // The stop flag's memory (the H200 lesson, results/h200-vulkan): --info
    // says where it went; lavapipe's every memory type is device-local, so
    // `auto` and `device` put it there. A bad --stop-memory or
    // --stop-grace-ms is a usage error naming the flag.
    assert!(
        info[0]["stop_memory"] == "device" || info[0]["stop_memory"] == "host",
        "{info:?}"
    );
    if bounded_loops {
        assert_eq!(info[0]["stop_memory"], "device", "{info:?}");
        let on_device = run_json(&exe, &["--info", "--stop-memory", "device"]);
        assert_eq!(on_device[0]["stop_memory"], "device", "{on_device:?}");
    }
    for (flag, value, needle) in [
        (
            "--stop-memory",
            "gpu",
            "--stop-memory: `gpu` is not auto, device or host",
        ),
        ("--stop-grace-ms", "0", "--stop-grace-ms"),
    ] {
        let bad = Command::new(&exe)
            .args([&shaders, flag, value])
            .output()
            .unwrap();
        assert_eq!(bad.status.code(), Some(2), "{flag} {value}");
        assert!(
            String::from_utf8_lossy(&bad.stderr).contains(needle),
            "{flag} {value}: {}",
            String::from_utf8_lossy(&bad.stderr)
        );
    }

    // Shaders emitted for 4 instances cannot run 5; unknown tests are named.
    let wrong = Command::new(&exe)
        .args([&shaders, "--instances", "5"])
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("emitted for 4 instances"));
    let unknown = Command::new(&exe)
        .args([&shaders, "--test", "nope"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no test named `nope`"));
}

#[test]
fn metal_kernels_of_the_published_suite_pass_clang_syntax_check() {
    if !tools(&[Tool::Clang]) {
        return;
    }
    let dir = scratch("metal");
    let files = emit_to(&dir, &published(), &opts(Target::Metal, Shape::Switch));
    assert!(files
        .iter()
        .any(|f| f.path.to_str() == Some("harness.swift")));
    let kernels = paths(&dir, &files, "metal");
    assert_eq!(kernels.len(), 483 * 3);
    toolchain::check_metal(&kernels, &dir.join("shim")).unwrap();
    // The check can fail: a function Metal does not have is rejected.
    let bad = dir.join("bad.metal");
    let text = std::fs::read_to_string(&kernels[0]).unwrap();
    std::fs::write(
        &bad,
        text.replace("atomic_load_explicit", "atomic_load_explicit_sub"),
    )
    .unwrap();
    assert!(toolchain::check_metal(&[bad], &dir.join("shim")).is_err());
}
