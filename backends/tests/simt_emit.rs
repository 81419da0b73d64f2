//! The SIMT form (issue 22, docs/KERNEL.md §2.10): the SIMT-Step tests of
//! suites/simt emitted for CUDA, GLSL and WGSL. The GLSL validates with
//! glslangValidator (Vulkan 1.1, subgroup extensions), the WGSL with naga
//! and its subgroup capability, the CUDA passes g++ -fsyntax-only against
//! the CPU shim (nvcc where present); the control flow is the source's
//! structure (no dispatch loop), and what cannot be written is refused.

mod common;

use backends::target::kernel::simt::{emit_simt, FIRST_LINE};
use backends::target::kernel::Lang;
use backends::target::wgsl::validate_simt;
use backends::toolchain::{self, Tool};
use common::{cuda_syntax_check, kernel_programs as programs, repo, scratch};
use progress_litmus::kernel::load::NamedProgram;
use std::process::Command;

fn suite() -> Vec<NamedProgram> {
    let ps: Vec<_> = programs(&repo("suites/simt"))
        .into_iter()
        .filter(|p| !p.program.asserts.is_empty())
        .collect();
    assert_eq!(ps.len(), 10);
    ps
}

fn program(name: &str, src: &str) -> NamedProgram {
    let f = scratch(name).join(format!("{name}.litmus"));
    std::fs::write(&f, src).unwrap();
    programs(&f).remove(0)
}

/// The selections of a program: one `if (!(` each in the emitted code.
fn selections(p: &NamedProgram) -> usize {
    p.program
        .codes
        .iter()
        .flat_map(|c| &c.constructs)
        .filter(|k| {
            matches!(
                k,
                progress_litmus::kernel::structure::Construct::Selection { .. }
            )
        })
        .count()
}

#[test]
fn every_simt_test_is_structured_code_in_the_three_languages() {
    for p in suite() {
        for lang in [Lang::Cuda, Lang::Glsl, Lang::Wgsl] {
            let src = emit_simt(&p, lang).unwrap_or_else(|e| panic!("{e}"));
            let first = src.lines().find(|l| l.starts_with(FIRST_LINE)).unwrap();
            assert!(first.contains(" observe="), "{first}");
            assert!(!src.contains("switch (pc)"), "{}: dispatch loop", p.name);
            assert_eq!(
                src.matches("if (!(").count(),
                selections(&p),
                "{}\n{src}",
                p.name
            );
            // Every observed term is named on the first line.
            for a in &p.program.asserts {
                for atom in a.cond.atoms() {
                    assert!(first.contains(&format!("{}@", atom.term)), "{first}");
                }
            }
        }
    }
}

#[test]
fn the_wgsl_validates_with_the_subgroups_capability_and_needs_the_enable() {
    for p in suite() {
        let src = emit_simt(&p, Lang::Wgsl).unwrap();
        assert!(src.contains("\nenable subgroups;\n"));
        validate_simt(&src).unwrap_or_else(|e| panic!("{}: {e}\n{src}", p.name));
        let without = src.replace("enable subgroups;\n", "");
        assert!(validate_simt(&without)
            .unwrap_err()
            .contains("enable subgroups"));
    }
    // A real error is still reported: a misspelt builtin.
    let p = &suite()[0];
    let bad = emit_simt(p, Lang::Wgsl)
        .unwrap()
        .replace("subgroupAll", "subgroupAlll");
    if bad.contains("subgroupAlll") {
        assert!(validate_simt(&bad).is_err());
    }
}

#[test]
fn the_glsl_validates_with_glslang() {
    let dir = scratch("glsl");
    let mut files = Vec::new();
    for p in suite() {
        let src = emit_simt(&p, Lang::Glsl).unwrap();
        assert!(src.contains("#extension GL_KHR_shader_subgroup_vote : require"));
        let f = dir.join(format!("{}.comp", p.name));
        std::fs::write(&f, src).unwrap();
        files.push(f);
    }
    if toolchain::find(Tool::Glslang).is_err() {
        eprintln!("skipped: glslangValidator is missing (apt-get install glslang-tools)");
        return;
    }
    for f in &files {
        let out = Command::new("glslangValidator")
            .args(["-V", "--target-env", "vulkan1.1", "-o"])
            .arg(f.with_extension("spv"))
            .arg(f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn the_cuda_passes_the_syntax_check_and_compiles_where_nvcc_is() {
    let dir = scratch("cuda");
    let gxx = toolchain::find(Tool::Gxx).ok();
    for p in suite() {
        let src = emit_simt(&p, Lang::Cuda).unwrap();
        assert!(src.contains("__global__ void axb_simt("));
        assert!(src.contains("int main("));
        let f = dir.join(format!("{}.cu", p.name));
        std::fs::write(&f, &src).unwrap();
        if let Some(gxx) = &gxx {
            cuda_syntax_check(gxx, &f, &p.name);
        }
        if toolchain::find(Tool::Nvcc).is_ok() {
            toolchain::compile_cuda(&f, &f.with_extension(""), &[]).unwrap();
        }
    }
}

#[test]
fn loops_break_and_continue_are_the_languages_own() {
    let p = program(
        "loops",
        "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\nexists x == 2;\n\
         kernel {\n  loop {\n    i = i + 1;\n    if (i == 1) {\n      continue;\n    }\n    if (i == 2) {\n      break;\n    }\n  }\n  x = i;\n}\n",
    );
    for lang in [Lang::Cuda, Lang::Glsl, Lang::Wgsl] {
        let src = emit_simt(&p, lang).unwrap();
        assert!(src.contains("continue; //"), "{src}");
        assert!(src.contains("break; //"), "{src}");
        assert!(
            src.contains("if (budget == 0u) { left = true; break; }"),
            "{src}"
        );
        if lang == Lang::Wgsl {
            validate_simt(&src).unwrap();
        }
    }
}

#[test]
fn what_the_simt_form_cannot_write_is_refused_with_the_program_named() {
    let head = "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\n";
    let cases = [
        ("noassert", format!("{head}global x;\nkernel {{\n  x = 1;\n}}\n"), "needs outcome assertions"),
        ("barrier", format!("{head}global x;\nexists x == 1;\nkernel {{\n  x = 1;\n  barrier();\n}}\n"), "no barriers"),
        ("shared", format!("{head}shared s;\nglobal x;\nexists x == 1;\nkernel {{\n  s = 1;\n  x = 1;\n}}\n"), "global locations only"),
        ("goto", format!("{head}global x;\nexists x == 1;\nkernel {{\n  a = local_id;\n  if (a == 0) goto L;\n  x = 1;\nL:\n  x = 2;\n}}\n"), "unstructured control flow"),
    ];
    for (name, src, want) in cases {
        let p = program(name, &src);
        for lang in [Lang::Cuda, Lang::Glsl, Lang::Wgsl] {
            let e = emit_simt(&p, lang).unwrap_err();
            assert!(e.contains(want), "{name}: {e}");
            assert!(e.contains(&format!("program `{name}`")), "{e}");
        }
    }
    // Three padded subgroups are over WebGPU's 256 invocations, not CUDA's.
    let p = program("wide", "values 4;\nworkgroups 1;\nworkgroup_size 6;\nsubgroup_size 2;\nglobal x;\nexists x == 1;\nkernel {\n  x = 1;\n}\n");
    assert!(emit_simt(&p, Lang::Wgsl)
        .unwrap_err()
        .contains("over the 256"));
    assert!(emit_simt(&p, Lang::Cuda).is_ok());
}
