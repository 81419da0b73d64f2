//! Kernel programs (suites/idioms) emitted for CUDA, GLSL and WGSL: every
//! idiom WGSL can express validates with naga and the uniformity rule,
//! exactly the others are refused; every GLSL validates with
//! glslangValidator; every CUDA file compiles with nvcc where present and
//! passes g++ -fsyntax-only against the CPU shim everywhere.

mod common;

use backends::target::kernel::{emit, Lang};
use backends::target::wgsl::validate_kernel;
use backends::toolchain::{self, Tool};
use common::{cuda_syntax_check, kernel_programs, repo, scratch};
use progress_litmus::kernel::load::{load_all, Item, NamedProgram};
use std::path::Path;
use std::process::Command;

fn idioms() -> Vec<NamedProgram> {
    let programs = kernel_programs(&repo("suites/idioms"));
    assert!(programs.len() >= 20, "{}", programs.len());
    programs
}

#[test]
fn wgsl_validates_every_idiom_it_can_express_and_refuses_the_rest() {
    let mut refused = Vec::new();
    for p in idioms() {
        match emit(&p, Lang::Wgsl) {
            Ok(src) => {
                validate_kernel(&src).unwrap_or_else(|e| panic!("{}: {e}\n{src}", p.name));
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
            cuda_syntax_check(gxx, &f, &p.name);
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

fn program(name: &str, src: &str) -> NamedProgram {
    let dir = scratch(name);
    let f = dir.join(format!("{name}.litmus"));
    std::fs::write(&f, src).unwrap();
    let (items, errors) = load_all(&[f]);
    assert!(errors.is_empty(), "{errors:?}");
    match items.into_iter().next() {
        Some(Item::Kernel(p)) => p,
        _ => panic!("not a kernel program"),
    }
}

/// Issue 20 item 9: subgroups of 2 in a workgroup of 4. Subgroup 0 votes
/// 1, subgroup 1 votes 0; subgroup 0 spins unless its own vote is all 1.
/// The oracle says P under every model; a collective over the device's
/// subgroup (all four invocations: `__activemask()`, `subgroupAll`) gives
/// 0 and the device spins forever. The collective must be over the
/// program's subgroup: a mask of its lanes (CUDA), clusters of 2 (GLSL).
const HALF_VOTE: &str = "values 2;\nworkgroups 1;\nworkgroup_size 4;\nsubgroup_size 2;\nkernel {\n  0: v = 1;\n  1: if (subgroup_id == 0) goto 3;\n  2: v = 0;\n  3: all = subgroupAll(v);\n  4: b = subgroupBroadcastFirst(v);\n  5: any = subgroupAny(v);\n  6: if (subgroup_id != 0) goto 8;\n  7: if (all == 0) goto 7;\n  8: v = 0;\n}\n";

#[test]
fn collectives_are_over_the_programs_subgroup_not_the_devices() {
    let p = program("half-vote", HALF_VOTE);
    let cuda = emit(&p, Lang::Cuda).unwrap();
    assert!(!cuda.contains("__activemask"), "{cuda}");
    assert!(
        cuda.contains("const unsigned int sg_first = (subgroup_id * 2u) % 32u;\n")
            && cuda.contains(
                "const unsigned int sg_mask = (0xffffffffu >> (32u - 2u)) << sg_first;\n"
            ),
        "{cuda}"
    );
    for op in [
        "__all_sync(sg_mask, r0 != 0u)",
        "__any_sync(sg_mask, r0 != 0u)",
        "__shfl_sync(sg_mask, r0, (int)sg_first)",
    ] {
        assert!(cuda.contains(op), "{op}: {cuda}");
    }
    let glsl = emit(&p, Lang::Glsl).unwrap();
    // The code, not the comments (which quote the program).
    let code: String = glsl
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    for gone in ["subgroupAll(", "subgroupAny(", "subgroupBroadcastFirst("] {
        assert!(!code.contains(gone), "{gone}: {glsl}");
    }
    for op in [
        "#extension GL_KHR_shader_subgroup_clustered : require",
        "subgroupClusteredAnd((r0 != 0u) ? 1u : 0u, 2u)",
        "subgroupClusteredOr((r0 != 0u) ? 1u : 0u, 2u)",
        "uint first = subgroupClusteredMin(lane_id, 2u);",
        "if (sg_bad != 0u) {",
    ] {
        assert!(glsl.contains(op), "{op}: {glsl}");
    }
    // Both compile (where the tools are).
    let dir = scratch("half-vote-out");
    let comp = dir.join("half-vote.comp");
    std::fs::write(&comp, &glsl).unwrap();
    if toolchain::find(Tool::Glslang).is_ok() {
        toolchain::check_glsl(&[comp]).unwrap();
    }
    let cu = dir.join("half-vote.cu");
    std::fs::write(&cu, &cuda).unwrap();
    if let Ok(gxx) = toolchain::find(Tool::Gxx) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new(gxx)
            .args(["-std=c++17", "-fsyntax-only", "-x", "c++", "-I"])
            .arg(root.join("cuda-shim"))
            .arg("-include")
            .arg(root.join("tests/data/kernel_cuda_syntax.h"))
            .arg(&cu)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A subgroup size GLSL's clusters cannot take (not a power of two) is
/// refused for GLSL, one line naming the program and the size; CUDA masks
/// any size whose subgroups lie in one warp.
#[test]
fn glsl_refuses_collectives_over_subgroups_of_three() {
    let src = HALF_VOTE
        .replace("workgroup_size 4;", "workgroup_size 6;")
        .replace("subgroup_size 2;", "subgroup_size 3;");
    let p = program("thirds", &src);
    let e = emit(&p, Lang::Glsl).unwrap_err();
    assert!(
        e.contains("program `thirds`") && e.contains("subgroup_size 3") && !e.contains('\n'),
        "{e}"
    );
    let cuda = emit(&p, Lang::Cuda).unwrap();
    assert!(
        cuda.contains("sg_mask = (0xffffffffu >> (32u - 3u)) << sg_first;"),
        "{cuda}"
    );
}

/// Issue 20 item 11: an index the oracle rejects as a fault (invocation 0
/// stores to `x[2]` of a two-cell `x`) was clamped into range by the
/// emitted `min`, so the device ran another program than the one decided.
/// `emit` refuses it, one line naming the file, program and fault, exit 2,
/// for every language, and still writes the program whose register index
/// the oracle proves in range.
#[test]
fn emit_refuses_an_index_the_oracle_rejects_instead_of_clamping_it() {
    let dir = scratch("index-fault");
    let oob = dir.join("oob.litmus");
    std::fs::write(&oob, "values 4;\nworkgroups 1;\nworkgroup_size 2;\nglobal x[2];\nkernel {\n  0: i = local_id + 2;\n  1: x[i] = 1;\n}\n").unwrap();
    let inb = dir.join("inb.litmus");
    std::fs::write(&inb, "values 4;\nworkgroups 1;\nworkgroup_size 2;\nglobal x[2];\nkernel {\n  0: i = local_id;\n  1: x[i] = 1;\n}\n").unwrap();
    for lang in ["cuda", "glsl", "wgsl"] {
        let out = dir.join(lang);
        let r = Command::new(env!("CARGO_BIN_EXE_backends"))
            .args(["emit", "--target", lang, "-o"])
            .arg(&out)
            .arg(&oob)
            .arg(&inb)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2), "{lang}");
        let err = String::from_utf8_lossy(&r.stderr);
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{lang}: {err}");
        assert!(
            errors[0].contains("oob.litmus: program `oob`")
                && errors[0].contains("index 2 is out of bounds: `x` has 2 cells")
                && errors[0].contains("not emitted"),
            "{lang}: {err}"
        );
        let written: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(written.len(), 1, "{lang}: {written:?}");
        assert!(written[0].starts_with("inb."), "{written:?}");
    }
}

/// Issue 20 item 11: two programs whose names differ only in case would be
/// one file on a case-insensitive file system (macOS, Windows): refused,
/// naming both.
#[test]
fn emit_refuses_names_that_differ_only_in_case() {
    let dir = scratch("case");
    let src = "values 2;\nworkgroups 1;\nkernel {\n  0: r = 1;\n}\n";
    std::fs::write(dir.join("Mutex.litmus"), src).unwrap();
    std::fs::write(dir.join("mutex.litmus"), src).unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(["emit", "--target", "cuda", "-o"])
        .arg(dir.join("out"))
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("`Mutex`") && err.contains("`mutex`") && err.contains("case"),
        "{err}"
    );
    assert!(!dir.join("out").exists());
    // AXB tests written one file per test and mapping (glsl): the same.
    let axb = scratch("case-axb");
    let published = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests/2t2i_0.txt");
    std::fs::copy(&published, axb.join("T1.txt")).unwrap();
    std::fs::copy(&published, axb.join("t1.txt")).unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_backends"))
        .args(["emit", "--target", "glsl", "-o"])
        .arg(axb.join("out"))
        .arg(&axb)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("`T1`") && err.contains("`t1`") && err.contains("ignores case"),
        "{err}"
    );
}
