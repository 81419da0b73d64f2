//! Fuzzing every reader of user input in this crate, on stable Rust (issue
//! 46, item 6), through the one loader every command uses
//! ([`progress_litmus::kernel::load::load_file_with`]): the artifact's
//! text format, RON tests and suites, packed `.axb.gz` suites, `.litmus`
//! programs with their outcome assertions, kernel RON, and WGSL, GLSL and
//! SPIR-V compute shaders. The engine is `tests/support/fuzz.rs`: corpora
//! of the repository's own files, mutated; replayed regression inputs in
//! `tests/data/fuzz/<target>/`.
//!
//! What must hold for every input: the loader returns programs that are
//! valid (AXB tests validate; a kernel program validates and its litmus
//! text parses back to it; a shader's `oracle translate` text parses back
//! to its program), or one error line whose line and column lie inside
//! the file; never a panic, never minutes.
//!
//! `cargo test --release --test fuzz` runs a few thousand cases in all
//! (CI); longer: `FUZZ_SECONDS=600 cargo test --release --test fuzz --
//! --nocapture` (each target for ten minutes), `FUZZ_SEED=N` for another
//! stream. fuzz/README.md has the recipe.

#[path = "support/fuzz.rs"]
mod fuzz;
#[path = "support/spirv.rs"]
mod spirv;

use fuzz::{corpus, dict, run, Target};
use progress_litmus::kernel::load::{load_file_with, Item};
use progress_litmus::kernel::shader::Launch;
use progress_litmus::kernel::{litmus, ron};
use std::path::{Path, PathBuf};

/// Cases per target in `cargo test`; a debug build runs a tenth.
fn cases(release: u64) -> u64 {
    if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    }
}

/// A scratch folder for this process's inputs.
fn scratch() -> PathBuf {
    let d = fuzz::root().join(format!("target/tmp/fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Lines in `src` (by the tools' rule) and one more for an error at the
/// end; a packed suite's lines are those of its text.
fn lines_in(name: &str, bytes: &[u8]) -> usize {
    use std::io::Read;
    let mut text = Vec::new();
    let bytes = if name.ends_with(".axb.gz") {
        let _ = flate2::read::MultiGzDecoder::new(bytes)
            .take(64 << 20)
            .read_to_end(&mut text);
        &text[..]
    } else {
        bytes
    };
    progress_litmus::locate::lines(&String::from_utf8_lossy(bytes)).count() + 1
}

/// The check of every target: `bytes` written as a file named `name` and
/// read by the loader, with a small state bound for the shaders' value
/// check (so that a case takes milliseconds).
fn check(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path =
        dir.join(format!("{:?}-{name}", std::thread::current().id()).replace(['(', ')'], ""));
    std::fs::write(&path, bytes).map_err(|e| format!("scratch: {e}"))?;
    let launch = Launch {
        max_states: 20_000,
        ..Launch::default()
    };
    let r = load_file_with(&path, &launch, &mut Vec::new());
    let _ = std::fs::remove_file(&path);
    match r {
        Ok(items) => items.iter().try_for_each(|i| valid(&path, bytes, i)),
        Err(e) => {
            let line = e.to_string();
            if line.contains('\n') || line.contains('\r') {
                return Err(format!("an error of more than one line: {line:?}"));
            }
            if e.line > lines_in(name, bytes) {
                return Err(format!("an error past the input's lines: {line}"));
            }
            if line.len() > 2000 {
                return Err(format!("an error of {} bytes", line.len()));
            }
            Ok(())
        }
    }
}

/// What a loaded item must be: valid, and (for a kernel program) printed
/// as litmus text that parses back to it; a shader's annotated
/// translation too.
fn valid(path: &Path, bytes: &[u8], item: &Item) -> Result<(), String> {
    match item {
        Item::Axb(t) => t
            .entry
            .test
            .validate()
            .map_err(|e| format!("invalid test: {e:?}")),
        Item::Kernel(k) => {
            k.program
                .validate()
                .map_err(|e| format!("invalid program: {e}"))?;
            let text = litmus::print(&k.program);
            let back = litmus::parse(&text)
                .map_err(|e| format!("printed text does not parse: {e}\n{text}"))?;
            if back != k.program {
                return Err(format!("printed text parses to another program:\n{text}"));
            }
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if progress_litmus::kernel::shader::is_shader_ext(ext) {
                // One of several entry points is named `STEM.ENTRY`.
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                let entry = k.name.strip_prefix(&format!("{stem}.")).map(String::from);
                let launch = Launch {
                    max_states: 20_000,
                    entry,
                    ..Launch::default()
                };
                let t = progress_litmus::kernel::shader::translate(path, bytes, &launch)
                    .map_err(|e| format!("loaded, but translate fails: {e}"))?;
                let text = progress_litmus::kernel::shader::print::annotated(&t, "x");
                if text
                    .chars()
                    .any(|c| c != '\n' && progress_litmus::error::unprintable(c))
                {
                    return Err(format!(
                        "a raw control character in the translation:\n{text}"
                    ));
                }
                let back = litmus::parse(&text)
                    .map_err(|e| format!("the translation does not parse back: {e}\n{text}"))?;
                if back != t.program {
                    return Err("the translation parses back to another program".into());
                }
            }
            Ok(())
        }
    }
}

/// The tokens of the litmus format (statements, conditions, assertions).
const LITMUS: &[&str] = &[
    "kernel {",
    "}",
    "if (",
    ") goto ",
    "goto ",
    "barrier();",
    "fetch_add(",
    "exch(",
    "cas(",
    "subgroupAll(",
    "subgroupAny(",
    "subgroupBroadcastFirst(",
    "loop {",
    "break;",
    "merge L;",
    "exists ",
    "forall ",
    "&&",
    "||",
    "!",
    "==",
    "!=",
    "<",
    ">=",
    "global ",
    "shared ",
    "values ",
    "workgroups ",
    "workgroup_size ",
    "subgroup_size ",
    "model ",
    "expect ",
    "OBE, wg=fair",
    "subgroup=sso",
    "subgroup=lockstep",
    "r0",
    "r7",
    "r8",
    "local_id",
    "wg_id",
    "lane_id",
    "[0]",
    "[255]",
    "END",
    ": P;",
    "deadlock",
    "/*",
    "*/",
    "//",
];

/// The tokens of the AXB formats.
const AXB: &[&str] = &[
    "atomic_chk_branch",
    "atomic_exch_branch",
    "(",
    ")",
    ",",
    "\n",
    "Test(",
    "Suite(",
    "threads:",
    "tests:",
    "name:",
    "verdicts:",
    "Some(",
    "None",
    "[",
    "]",
    "AXB(",
    "CHK(",
    "EXCH(",
    "loc:",
    "value:",
    "target:",
    "Instr(",
    "\"",
    "#",
    "r#\"",
];

/// The tokens of the shading languages.
const SHADER: &[&str] = &[
    "@compute",
    "@workgroup_size(",
    "fn main() {",
    "}",
    "loop {",
    "if (",
    "while (",
    "for (",
    "atomicAdd(&",
    "atomicCompareExchangeWeak(&",
    "atomicLoad(&",
    "atomicStore(&",
    "var<workgroup>",
    "var<storage, read_write>",
    "workgroupBarrier();",
    "subgroupAll(",
    "let ",
    "u32(",
    "i32(",
    "1u",
    "0xffffffffu",
    "<<",
    ">>",
    "/",
    "%",
    "#version 450",
    "#define A ",
    "layout(local_size_x = ",
    "shared uint ",
    "buffer B {",
    "atomicCompSwap(",
    "barrier();",
    "uint64_t ",
    "1lu",
    "/*",
    "*/",
    "// init ",
    "// workgroups 8;",
    "// values 256;",
    "// expect OBE: P;",
    "(((((",
    ")))))",
    "\\",
];

fn shader_corpus() -> Vec<Vec<u8>> {
    let mut c = corpus("suites/shaders", ".wgsl", 64);
    c.extend(corpus("tests/data/shaders", ".wgsl", 64));
    c
}

fn glsl_corpus() -> Vec<Vec<u8>> {
    let mut c = corpus("suites/shaders", ".comp", 64);
    c.extend(corpus("tests/data/shaders", ".comp", 64));
    c
}

/// SPIR-V: the committed modules, and the suite's WGSL shaders written as
/// SPIR-V by naga.
fn spirv_corpus() -> Vec<Vec<u8>> {
    let mut c = corpus("tests/data/shaders", ".spv", 64);
    for src in corpus("suites/shaders", ".wgsl", 64) {
        c.push(spirv::spirv_of_wgsl(&String::from_utf8(src).unwrap()));
    }
    c
}

/// Kernel programs as RON (`Kernel(...)`), from the idioms.
fn kernel_ron_corpus() -> Vec<Vec<u8>> {
    corpus("suites/idioms", ".litmus", 12)
        .into_iter()
        .filter_map(|b| litmus::parse(&String::from_utf8(b).ok()?).ok())
        .map(|p| ron::program_to_ron(&p).into_bytes())
        .collect()
}

fn fuzz(name: &str, file: &str, corpus: Vec<Vec<u8>>, tokens: &[&str], release_cases: u64) {
    let dir = scratch();
    let check = |b: &[u8]| check(&dir, file, b);
    let n = run(
        &Target {
            name,
            corpus,
            dict: dict(tokens),
            check: &check,
        },
        cases(release_cases),
    );
    eprintln!("fuzz {name}: {n} cases");
}

#[test]
fn fuzz_axb_text() {
    fuzz(
        "axb_text",
        "t.txt",
        corpus("data/oopsla21/tests", ".txt", 120),
        AXB,
        3000,
    );
}

#[test]
fn fuzz_axb_ron() {
    let mut c = corpus("suites/2t2i", ".ron", 4);
    c.extend(corpus("oracle/tests/data", ".ron", 16));
    c.extend(corpus("tests/data", ".ron", 16));
    fuzz("axb_ron", "t.ron", c, AXB, 1500);
}

/// Packed suites: their text (mutated, then packed as `synth` packs it,
/// so that the fuzzer reaches the reader of the lines inside), and the
/// gzip bytes as they are (mutations of the container).
#[test]
fn fuzz_packed_suites() {
    use std::io::{Read, Write};
    let packed = corpus("suites/table4/2t4i", ".axb.gz", 8);
    let texts: Vec<Vec<u8>> = packed
        .iter()
        .map(|gz| {
            let mut t = Vec::new();
            flate2::read::MultiGzDecoder::new(&gz[..])
                .read_to_end(&mut t)
                .unwrap();
            t
        })
        .collect();
    let dir = scratch();
    let check = |text: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        check(&dir, "t.axb.gz", &e.finish().unwrap())
    };
    let n = run(
        &Target {
            name: "packed_text",
            corpus: texts,
            dict: dict(AXB),
            check: &check,
        },
        cases(1500),
    );
    eprintln!("fuzz packed_text: {n} cases");
    fuzz("packed", "t.axb.gz", packed, &[], 500);
}

#[test]
fn fuzz_litmus_and_assertions() {
    let mut c = corpus("suites/idioms", ".litmus", 64);
    c.extend(corpus("suites/simt", ".litmus", 64));
    c.extend(corpus("oracle/tests/data", ".litmus", 64));
    fuzz("litmus", "t.litmus", c, LITMUS, 4000);
}

#[test]
fn fuzz_kernel_ron() {
    fuzz("kernel_ron", "t.ron", kernel_ron_corpus(), LITMUS, 1500);
}

#[test]
fn fuzz_wgsl() {
    fuzz("wgsl", "t.wgsl", shader_corpus(), SHADER, 1500);
}

#[test]
fn fuzz_glsl() {
    fuzz("glsl", "t.comp", glsl_corpus(), SHADER, 1500);
}

#[test]
fn fuzz_spirv() {
    fuzz("spirv", "t.spv", spirv_corpus(), &[], 1500);
}
