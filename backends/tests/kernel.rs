//! Kernel programs (suites/idioms) emitted for CUDA, GLSL and WGSL: every
//! idiom WGSL can express validates with naga and the uniformity rule,
//! exactly the others are refused; every GLSL validates with
//! glslangValidator; every CUDA file compiles with nvcc where present and
//! passes g++ -fsyntax-only against the CPU shim everywhere.

use axb::kernel::load::{load_all, Item, NamedProgram};
use backends::target::kernel::{emit, validate_wgsl, Lang};
use backends::toolchain::{self, Tool};
use std::path::{Path, PathBuf};
use std::process::Command;

fn idioms() -> Vec<NamedProgram> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/idioms");
    let (items, errors) = load_all(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let programs: Vec<NamedProgram> = items
        .into_iter()
        .filter_map(|i| match i {
            Item::Kernel(p) => Some(p),
            Item::Axb(_) => None,
        })
        .collect();
    assert!(programs.len() >= 20, "{}", programs.len());
    programs
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kernel-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn wgsl_validates_every_idiom_it_can_express_and_refuses_the_rest() {
    let mut refused = Vec::new();
    for p in idioms() {
        match emit(&p, Lang::Wgsl) {
            Ok(src) => {
                validate_wgsl(&src).unwrap_or_else(|e| panic!("{}: {e}\n{src}", p.name));
                assert!(src.contains("axb_leave(&budget)"), "{}", p.name);
            }
            Err(e) => {
                assert!(e.contains(&format!("program `{}`", p.name)), "{e}");
                refused.push(p.name.clone());
            }
        }
    }
    // Barriers a jump crosses (the oracle's deadlocks) and collectives.
    assert_eq!(
        refused,
        [
            "barrier-nonuniform-1",
            "barrier-nonuniform-2",
            "decoupled-lookback-parallel",
            "simt-spinlock-done"
        ]
    );
}

#[test]
fn glsl_of_every_idiom_validates_with_glslang() {
    let dir = scratch("glsl");
    let mut files = Vec::new();
    for p in idioms() {
        let src = emit(&p, Lang::Glsl).unwrap();
        assert!(src.contains("stop_flag != 0u"), "{}", p.name);
        let f = dir.join(format!("{}.comp", p.name));
        std::fs::write(&f, src).unwrap();
        files.push(f);
    }
    if toolchain::find(Tool::Glslang).is_err() {
        eprintln!("skipped: glslangValidator is missing (apt-get install glslang-tools); the GLSL was emitted but not validated");
        return;
    }
    toolchain::check_glsl(&files).unwrap();
}

/// Braces balance outside comments and strings (a cheap structural check).
fn balanced(src: &str) -> bool {
    let mut depth = 0i64;
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("");
        if code.contains('"') {
            continue;
        }
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
    }
    depth == 0
}

#[test]
fn cuda_of_every_idiom_is_well_formed_and_compiles_where_nvcc_is() {
    let dir = scratch("cuda");
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda-shim");
    let decls = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kernel_cuda_syntax.h");
    let gxx = toolchain::find(Tool::Gxx).ok();
    let nvcc = toolchain::find(Tool::Nvcc).ok();
    for p in idioms() {
        let src = emit(&p, Lang::Cuda).unwrap();
        assert!(src.starts_with("// axb-kernel: "), "{}", p.name);
        assert!(src.contains("__global__ void axb_kernel("), "{}", p.name);
        assert!(src.contains("int main("), "{}", p.name);
        assert!(balanced(&src), "{}", p.name);
        // One case per instruction of every code block, but for the
        // barriers between the dispatch loops.
        let cases = src.matches("case ").count()
            + src
                .matches("(top-level: every invocation reaches it once)")
                .count();
        let instrs: usize = p.program.codes.iter().map(|c| c.instrs.len()).sum();
        assert_eq!(cases, instrs, "{}", p.name);
        let f = dir.join(format!("{}.cu", p.name));
        std::fs::write(&f, &src).unwrap();
        if let Some(gxx) = &gxx {
            let out = Command::new(gxx)
                .args(["-std=c++17", "-fsyntax-only", "-x", "c++", "-I"])
                .arg(&shim)
                .arg("-include")
                .arg(&decls)
                .arg(&f)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                p.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        if nvcc.is_some() {
            toolchain::compile_cuda(&f, &f.with_extension(""), &[]).unwrap();
        }
    }
    if gxx.is_none() {
        eprintln!("skipped the syntax check: g++ is missing");
    }
    if nvcc.is_none() {
        eprintln!(
            "skipped nvcc: not installed (the CUDA files were checked structurally and with g++)"
        );
    }
}

#[test]
fn emit_refuses_kernel_programs_for_other_targets_and_goes_on_in_a_batch() {
    let bin = env!("CARGO_BIN_EXE_backends");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = scratch("cli");
    let r = Command::new(bin)
        .args(["emit", "--target", "amber", "-o"])
        .arg(out.join("amber"))
        .arg(root.join("suites/idioms/mutex.litmus"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("the amber target takes AXB tests only"),
        "{err}"
    );
    let r = Command::new(bin)
        .args(["emit", "--check", "--target", "wgsl", "-o"])
        .arg(out.join("wgsl"))
        .arg(root.join("suites/idioms"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error: ")).count(),
        4,
        "{err}"
    );
    assert!(
        err.contains("barrier-nonuniform-1.litmus:")
            || err.contains("barrier-nonuniform-1.litmus: program"),
        "{err}"
    );
    let written = std::fs::read_dir(out.join("wgsl")).unwrap().count();
    assert_eq!(written, 19);
}
