//! What the command-line tests of `backends` share: the binary with its
//! build cache in the test's scratch space (never the user's ~/.cache),
//! scratch directories, published tests, and the shape of a clean failure.
//! Each test file that needs them says `mod common;`; not every file uses
//! every helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_backends");

/// A fresh, empty directory for one test: `<target tmp>/<test file>-<name>`.
pub fn scratch(name: &str) -> PathBuf {
    let file = module_path!().split("::").next().unwrap_or("test");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{file}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The binary, its build cache in the target directory.
pub fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env(
        "XDG_CACHE_HOME",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"),
    );
    c
}

pub fn backends(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Failed with `code`, without a panic, saying every one of `needles`.
pub fn assert_clean_failure(o: &Output, code: i32, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
}

/// The published test `name` (without `.txt`).
pub fn published(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data/oopsla21/tests")
        .join(format!("{name}.txt"))
}

/// `dir/suite`, a directory holding copies of the published tests `names`.
pub fn published_suite(dir: &Path, names: &[&str]) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    for t in names {
        std::fs::copy(published(t), suite.join(format!("{t}.txt"))).unwrap();
    }
    suite
}

/// Whether the tools are there: false (skip) only when skipping is asked
/// for (`BACKENDS_SKIP_TOOLCHAIN_TESTS=1`); a missing tool otherwise fails
/// the test with the install hint.
pub fn tools(needed: &[backends::toolchain::Tool]) -> bool {
    let skip = std::env::var("BACKENDS_SKIP_TOOLCHAIN_TESTS").is_ok_and(|v| v == "1");
    for &tool in needed {
        if let Err(e) = backends::toolchain::find(tool) {
            if skip {
                eprintln!("skipped (BACKENDS_SKIP_TOOLCHAIN_TESTS=1): {e}");
                return false;
            }
            panic!("{e} (or set BACKENDS_SKIP_TOOLCHAIN_TESTS=1 to skip toolchain tests)");
        }
    }
    true
}

/// `rel` below the repository root (the workspace).
pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

/// `backends ARGS` run in the repository root, so that `suites/simt` and
/// the like name the repository's files.
pub fn backends_at_root(args: &[&str]) -> Output {
    bin().args(args).current_dir(repo("")).output().unwrap()
}

/// The database `results/database/import.sh` builds, as `dir/results.sqlite`.
pub fn committed_db(dir: &Path) -> PathBuf {
    let db = dir.join("results.sqlite");
    let o = Command::new("sh")
        .arg(repo("results/database/import.sh"))
        .arg(&db)
        .env("BACKENDS", BIN)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    db
}

/// The kernel programs of the folder `dir` (every file loads).
pub fn kernel_programs(dir: &Path) -> Vec<progress_litmus::kernel::load::NamedProgram> {
    use progress_litmus::kernel::load::{load_all, Item};
    let (items, errors) = load_all(&[dir.to_path_buf()]);
    assert!(errors.is_empty(), "{errors:?}");
    items
        .into_iter()
        .filter_map(|i| match i {
            Item::Kernel(p) => Some(p),
            Item::Axb(_) => None,
        })
        .collect()
}

/// `g++ -fsyntax-only` of the CUDA file `f` against the CPU shim
/// (`backends/cuda-shim`) and the declarations of the device side
/// (`tests/data/kernel_cuda_syntax.h`); fails the test with g++'s errors,
/// naming `what`. Warnings are errors: nvcc warned of unused variables
/// and of `pc >= 0u` in the first build on a GPU (results/h200), and g++
/// finds the same (unused parameters aside, which nvcc does not report).
pub fn cuda_syntax_check(gxx: &Path, f: &Path, what: &str) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(gxx)
        .args(["-std=c++17", "-fsyntax-only", "-x", "c++"])
        .args(["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror", "-I"])
        .arg(here.join("cuda-shim"))
        .arg("-include")
        .arg(here.join("tests/data/kernel_cuda_syntax.h"))
        .arg(f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{what}: {}", stderr(&out));
}

/// Result folders read as devices, and the conformance report of them
/// against a set of tests (the GPU campaigns' finding tests).
pub struct Analysed {
    pub devices: Vec<backends::report::observations::Device>,
    pub report: backends::report::analysis::Report,
}

/// [`Analysed`] of the repository's `results` folders against `tests`.
pub fn analysed(results: &[&str], tests: &[&str]) -> Analysed {
    use backends::report::{analysis, observations, programs};
    let dirs: Vec<PathBuf> = results.iter().map(|r| repo(r)).collect();
    let mut devices = observations::load(&dirs).unwrap();
    let leads = programs::tag_files(&mut devices).unwrap();
    let paths: Vec<PathBuf> = tests.iter().map(|t| repo(t)).collect();
    let tests = programs::resolve(&mut devices, &paths, &leads).unwrap();
    let report = analysis::analyse(&devices, &tests).unwrap();
    Analysed { devices, report }
}

impl Analysed {
    /// The device of that name (the test fails if there is none).
    pub fn device(&self, name: &str) -> &backends::report::observations::Device {
        self.devices.iter().find(|x| x.name == name).unwrap()
    }

    /// The tests (with their mapping) that violate `model` on `device`.
    pub fn violators(
        &self,
        device: &str,
        model: progress_litmus::Model,
    ) -> std::collections::BTreeSet<(String, backends::mapping::Mapping)> {
        self.report
            .violations(device, model)
            .unwrap()
            .iter()
            .map(|v| (v.test.clone(), v.mapping))
            .collect()
    }
}

/// Headless Chromium: `BACKENDS_CHROMIUM`, else `chromium` or
/// `chromium-browser` on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BACKENDS_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
}

/// The published tests `names` copied into `dir/sample` (the suite of
/// the page and of its results), and the WebGPU page emitted for them,
/// `dir/page/sample.html`.
pub fn webgpu_sample(dir: &Path, names: &[&str]) -> (PathBuf, PathBuf) {
    use backends::target::emit::{files, write, EmitOptions, Target};
    let published = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests");
    let suite = dir.join("sample");
    std::fs::create_dir_all(&suite).unwrap();
    for t in names {
        std::fs::copy(
            published.join(format!("{t}.txt")),
            suite.join(format!("{t}.txt")),
        )
        .unwrap();
    }
    let (tests, errors) = progress_litmus::axb::load::load_all(std::slice::from_ref(&suite));
    assert!(errors.is_empty());
    let opts = EmitOptions {
        target: Target::Webgpu,
        mappings: backends::Mapping::ALL.to_vec(),
        instances: None,
        shape: backends::Shape::Switch,
        deadline_ms: 20_000,
        program_name: "sample".into(),
        bare: false,
    };
    let page_dir = dir.join("page");
    write(&page_dir, &files(&tests, &opts).unwrap()).unwrap();
    (suite, page_dir.join("sample.html"))
}

/// The flags that give WebGPU on SwiftShader in headless Chromium.
pub const SWIFTSHADER: [&str; 8] = [
    "--enable-unsafe-webgpu",
    "--ignore-gpu-blocklist",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    "--disable-vulkan-surface",
    "--enable-unsafe-swiftshader",
    "--disable-quic",
];
