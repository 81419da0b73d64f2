//! The shader frontend (issue 21, docs/KERNEL.md §10): the shaders of
//! `suites/shaders/` translate and print back as litmus, every refused
//! construct of `tests/data/shaders/bad/` is one error at its position,
//! the value rule refuses wrapped values and only them, and mutated
//! shaders never panic.

#[path = "support/scratch.rs"]
#[allow(dead_code)]
mod scratch;
use scratch::Scratch;
#[path = "support/spirv.rs"]
mod spirv;

use progress_litmus::kernel::litmus;
use progress_litmus::kernel::shader::{print, translate, Launch};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> (PathBuf, Vec<u8>) {
    let p = root().join(rel);
    let bytes = std::fs::read(&p).unwrap();
    (p, bytes)
}

fn shaders() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("suites/shaders"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            progress_litmus::kernel::shader::is_shader_ext(
                p.extension().and_then(|e| e.to_str()).unwrap_or(""),
            )
        })
        .collect();
    v.sort();
    v
}

/// Every shader of the suite translates, states its verdicts, and its
/// `oracle translate` text parses back (comments and all) to the program.
#[test]
fn suite_shaders_translate_and_print_back() {
    let all = shaders();
    assert!(all.len() >= 3, "{all:?}");
    for p in all {
        let bytes = std::fs::read(&p).unwrap();
        let t = translate(&p, &bytes, &Launch::default()).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !t.program.expect.is_empty(),
            "{}: no expect lines",
            p.display()
        );
        let text = print::annotated(&t, "x");
        assert!(text.contains("  // "), "no source lines:\n{text}");
        let back = litmus::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, t.program, "{}", p.display());
    }
}

/// The WGSL spin lock is what a reader expects: a compare-exchange loop
/// (WGSL's is weak: a choice between the strong `cas` and a spurious
/// failure, docs/KERNEL.md §2.11), the counter, the release.
#[test]
fn wgsl_spin_lock_translation() {
    let (p, b) = read("suites/shaders/spinlock.wgsl");
    let t = translate(&p, &b, &Launch::default()).unwrap();
    let text = litmus::print(&t.program);
    assert!(
        text.contains("  0: choose finitely goto 4;\n  1: r0 = cas(lock, 0, 1);\n  2: r1 = r0 == 0;\n  3: goto 6;\n  4: load(lock);\n  5: r1 = 0;\n  6: if (r1 == 0) goto 0;\n"),
        "{text}"
    );
    assert!(text.contains("fetch_add(counter, 1);"), "{text}");
    assert!(text.contains("lock = 0;"), "{text}");
    assert_eq!(t.program.values, 4);
    assert_eq!(t.program.workgroups, 2);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

/// The GLSL atomics become single atomic instructions (no copies around
/// them), and positions after the prelude are the user's.
#[test]
fn glsl_atomics_are_single_instructions() {
    let (p, b) = read("suites/shaders/spinlock_glsl.comp");
    let t = translate(&p, &b, &Launch::default()).unwrap();
    let text = litmus::print(&t.program);
    assert!(text.contains("0: r0 = cas(lock, 0, 1);"), "{text}");
    assert!(text.contains("exch(lock, 0);"), "{text}");
    assert!(
        !text.contains("= lock;") && !text.contains("= counter;"),
        "{text}"
    );
    let a = print::annotated(&t, "x");
    assert!(
        a.contains("// 27: while (atomicCompSwap(lock, 0u, 1u) != 0u) {"),
        "{a}"
    );
}

/// Each file of the bad corpus states its error on its first line
/// (`// error: TEXT`): the translation fails with one line naming the file
/// (with line and column where the construct has one) and that text.
#[test]
fn every_refused_construct_is_one_error_at_its_place() {
    let dir = root().join("tests/data/shaders/bad");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{} bad shaders", files.len());
    for p in files {
        let bytes = std::fs::read(&p).unwrap();
        let src = String::from_utf8_lossy(&bytes);
        let want = src
            .lines()
            .next()
            .unwrap()
            .strip_prefix("// error: ")
            .expect("an error line");
        let e = match translate(&p, &bytes, &Launch::default()) {
            Ok(_) => panic!("{}: translated", p.display()),
            Err(e) => e,
        };
        let line = e.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            e.msg.contains(want),
            "{}: `{line}` lacks `{want}`",
            p.display()
        );
        let whole_file = ["no_compute.wgsl", "two_entries.wgsl"];
        let name = p.file_name().unwrap().to_str().unwrap();
        assert_eq!(e.line == 0, whole_file.contains(&name), "{line}");
    }
}

/// The value rule is exact: the same shader is refused when a sum wraps
/// modulo V and decided when V holds it (V given by the shader's
/// `// values 4;` line, or by `--values`).
#[test]
fn value_rule_refuses_wrapping_only() {
    let (p, b) = read("tests/data/shaders/bad/overflow.wgsl");
    let e = translate(&p, &b, &Launch::default()).unwrap_err();
    assert_eq!((e.line, e.col), (6, 5), "{e}");
    assert!(
        e.msg.starts_with("value bound exceeded: raise --values"),
        "{e}"
    );
    let wide = Launch {
        values: Some(8),
        ..Launch::default()
    };
    let t = translate(&p, &b, &wide).unwrap();
    assert_eq!(t.program.values, 8);
    // Three workgroups add 9 > 7: refused again at V = 8, decided at 16.
    let three = Launch {
        workgroups: Some(3),
        values: Some(8),
        ..Launch::default()
    };
    assert!(translate(&p, &b, &three).is_err());
    let three16 = Launch {
        values: Some(16),
        ..three
    };
    assert!(translate(&p, &b, &three16).is_ok());
}

/// With no domain given, the translation takes the least power of two
/// in which no step of any schedule wraps (docs/KERNEL.md §10.3): the
/// constants and ids of `atomicAdd(&x, 3u)` need 4 values, two
/// workgroups' sums 8, three 16; 200 added twice fits no domain of the
/// kernel language, and a negative value none at all.
#[test]
fn without_a_domain_the_least_that_holds_every_value_is_taken() {
    let (p, b) = read("tests/data/shaders/bad/overflow.wgsl");
    let src = String::from_utf8_lossy(&b).replace("// values 4;\n", "");
    let at = |w: u8, src: &str| {
        let l = Launch {
            workgroups: Some(w),
            ..Launch::default()
        };
        translate(&p, src.as_bytes(), &l).map(|t| t.program.values)
    };
    assert_eq!(at(2, &src).unwrap(), 8);
    assert_eq!(at(3, &src).unwrap(), 16);
    let e = at(2, &src.replace("3u", "200u")).unwrap_err();
    assert_eq!((e.line, e.col), (5, 5), "{e}");
    assert_eq!(e.msg, "value bound exceeded: the kernel language's values are below 256 (invocation 1.0: 200 + 200 is 400 in 32 bits but 144 modulo 256)");
    let (p, b) = read("tests/data/shaders/bad/underflow.wgsl");
    let e = translate(&p, &b, &Launch::default()).unwrap_err();
    assert_eq!(e.msg, "value bound exceeded: a negative value below -128, which the kernel language's values (unsigned, or two's complement from -128 up) cannot hold (invocation 0.0: 1 - 200 is 4294967097 in 32 bits but 57 modulo 256)");
    // Above -128, two's complement values hold it (docs/KERNEL.md §10.3).
    let (p, b) = read("tests/data/shaders/signed/underflow.wgsl");
    let t = translate(&p, &b, &Launch::default()).unwrap();
    assert!(t.sext && t.program.values == 4, "{}", t.program.values);
}

/// The launch flags (issue 42): `--workgroup-size` that contradicts the
/// shader's literal size is refused (it silently decided another
/// program), one that agrees is taken; it sets a size the shader leaves
/// to the host (a WGSL `override`); `--entry` picks among entry points;
/// every translation names its launch and where each number came from.
#[test]
fn launch_rules() {
    let (p, b) = read("suites/shaders/spinlock.wgsl");
    let l = Launch {
        workgroup_size: Some(2),
        workgroups: Some(1),
        ..Launch::default()
    };
    let e = translate(&p, &b, &l).unwrap_err();
    assert!(
        e.msg
            .starts_with("--workgroup-size 2 contradicts the shader's own workgroup size 1"),
        "{e}"
    );
    assert!(e.line > 0, "at the entry point: {e}");
    let l = Launch {
        workgroup_size: Some(1),
        workgroups: Some(3),
        ..Launch::default()
    };
    let t = translate(&p, &b, &l).unwrap();
    assert_eq!((t.program.workgroups, t.program.workgroup_size), (3, 1));
    assert_eq!(
        t.launch.describe(),
        "3 workgroups (--workgroups) of 1 invocation (the shader's size), subgroups of 1 invocation (default); storage buffers start at 0; atomicCompareExchangeWeak may fail spuriously, finitely often on a run (assumed, as C++ recommends; WGSL does not promise it; --spurious-failures unbounded drops it)"
    );
    let t = translate(&p, &b, &Launch::default()).unwrap();
    assert_eq!(
        t.launch.describe(),
        "2 workgroups (default) of 1 invocation (the shader's size), subgroups of 1 invocation (default); storage buffers start at 0; atomicCompareExchangeWeak may fail spuriously, finitely often on a run (assumed, as C++ recommends; WGSL does not promise it; --spurious-failures unbounded drops it)"
    );
    // A size the host sets: an override needs the flag, and takes it.
    let src =
        b"override n: u32 = 4u;\n@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;\n\
                @compute @workgroup_size(n)\nfn main() {\n    atomicStore(&x, 1u);\n}\n";
    let e = translate(Path::new("o.wgsl"), src, &Launch::default()).unwrap_err();
    assert!(e.msg.contains("give --workgroup-size"), "{e}");
    let l = Launch {
        workgroup_size: Some(2),
        ..Launch::default()
    };
    let t = translate(Path::new("o.wgsl"), src, &l).unwrap();
    assert_eq!(t.program.workgroup_size, 2);
    assert!(
        t.launch
            .describe()
            .contains("of 2 invocations (--workgroup-size)"),
        "{}",
        t.launch.describe()
    );
    // Annotation lines are named as such.
    let annotated = String::from_utf8(b.clone()).unwrap().replacen(
        "// model OBE;",
        "// model OBE;\n// workgroups 4;\n// subgroup_size 1;",
        1,
    );
    let t = translate(&p, annotated.as_bytes(), &Launch::default()).unwrap();
    assert_eq!(
        t.launch.describe(),
        "4 workgroups (its `// workgroups W;` line) of 1 invocation (the shader's size), subgroups of 1 invocation (its `// subgroup_size S;` line); storage buffers start at 0; atomicCompareExchangeWeak may fail spuriously, finitely often on a run (assumed, as C++ recommends; WGSL does not promise it; --spurious-failures unbounded drops it)"
    );
    let (p, b) = read("tests/data/shaders/bad/two_entries.wgsl");
    let l = Launch {
        entry: Some("b".into()),
        ..Launch::default()
    };
    let t = translate(&p, &b, &l).unwrap();
    assert!(litmus::print(&t.program).contains("x = 0;"));
}

fn mutate(src: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    const ALPHABET: &[u8] = b"{}()[];,.<>=!+-*/&|^~01u2i _xlockatomic\n@fnvarlet";
    let mut v = src.to_vec();
    for &(pos, kind, ch) in edits {
        if v.is_empty() {
            break;
        }
        let at = pos % v.len();
        let c = ALPHABET[ch as usize % ALPHABET.len()];
        match kind % 3 {
            0 => {
                v.remove(at);
            }
            1 => v.insert(at, c),
            _ => v[at] = c,
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    /// Mutated shaders (up to 6 edits of any of the suite's shaders) give a
    /// program or one error line: never a panic, never a hang (the value
    /// check is bounded by a small state bound).
    #[test]
    fn mutated_shaders_never_panic(which in 0usize..16, edits in prop::collection::vec((0usize..4096, 0u8..3, 0u8..64), 1..6)) {
        let all = shaders();
        let p = &all[which % all.len()];
        let bytes = mutate(&std::fs::read(p).unwrap(), &edits);
        let launch = Launch { max_states: 20_000, ..Launch::default() };
        match translate(Path::new(p), &bytes, &launch) {
            Ok(t) => prop_assert!(t.program.validate().is_ok()),
            Err(e) => prop_assert!(!e.to_string().contains('\n'), "{}", e),
        }
    }
}

/// SPIR-V in: the suite's WGSL shaders written as SPIR-V binaries (naga's
/// spv-out) are read back by the frontend (naga's spv-in, structured
/// control flow recovered): the spin lock gives exactly the WGSL's kernel
/// program, the others the same locations.
#[test]
fn spirv_of_the_wgsl_shaders_translates() {
    for p in shaders()
        .into_iter()
        .filter(|p| p.extension().unwrap() == "wgsl")
    {
        let spv = spirv_of(&p);
        let dir = Scratch::new("axb-spv", "dir");
        let path = dir.join(p.file_stem().unwrap()).with_extension("spv");
        std::fs::write(&path, &spv).unwrap();
        let t = translate(&path, &spv, &Launch::default()).unwrap_or_else(|e| panic!("{e}"));
        let w = translate(&p, &std::fs::read(&p).unwrap(), &Launch::default()).unwrap();
        // The same program as from the WGSL text (its comments' verdict
        // lines aside: a binary has no comments) where naga's SPIR-V adds
        // nothing (it zero-initialises workgroup memory behind a barrier,
        // and reads built-ins through private variables: the oracle's
        // tests check that the verdicts are the same).
        let mut want = w.program.clone();
        want.model = None;
        want.expect.clear();
        // naga writes WGSL's weak compare-exchange as SPIR-V's
        // OpAtomicCompareExchange, which is strong: the WGSL's program
        // has the choice of a spurious failure (docs/KERNEL.md §2.11),
        // the SPIR-V's is the strong `cas` alone, as the WGSL's would be
        // without its choice.
        if p.ends_with("spinlock.wgsl") {
            let strong = litmus::parse(
                "values 4;\nworkgroups 2;\nglobal lock;\nglobal counter;\n\nkernel {\n  0: r0 = cas(lock, 0, 1);\n  1: if (r0 != 0) goto 0;\n  2: fetch_add(counter, 1);\n  3: lock = 0;\n}\n",
            )
            .unwrap();
            assert_eq!(t.program, strong, "{}", litmus::print(&t.program));
            assert!(litmus::print(&want).contains("choose finitely goto"));
        }
        let mut names: Vec<&str> = t
            .program
            .locations
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        let mut want_names: Vec<&str> = want.locations.iter().map(|l| l.name.as_str()).collect();
        names.sort();
        want_names.sort();
        assert_eq!(names, want_names);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A WGSL file as a SPIR-V binary.
pub fn spirv_of(p: &Path) -> Vec<u8> {
    spirv::spirv_of_wgsl(&std::fs::read_to_string(p).unwrap())
}

/// Division and remainder by a constant power of two are a shift and a
/// mask.
#[test]
fn division_by_powers_of_two() {
    let dir = Scratch::new("axb-div", "dir");
    let p = dir.join("div.wgsl");
    let src = "@group(0) @binding(0) var<storage, read_write> x: array<atomic<u32>, 2>;\n\
               @compute @workgroup_size(4)\n\
               fn main(@builtin(local_invocation_index) l: u32) {\n    atomicStore(&x[l / 2u], l % 2u);\n}\n";
    std::fs::write(&p, src).unwrap();
    let t = translate(&p, src.as_bytes(), &Launch::default()).unwrap();
    let text = litmus::print(&t.program);
    assert!(
        text.contains("r0 = local_id % 2") || text.contains("local_id >> 1"),
        "{text}"
    );
    assert!(text.contains("local_id & 1"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Mutated SPIR-V binaries (words of the spin lock's SPIR-V replaced)
    /// give a program or one error line, never a panic or a hang.
    #[test]
    fn mutated_spirv_never_panics(edits in prop::collection::vec((0usize..4096, any::<u32>()), 1..4)) {
        let p = root().join("suites/shaders/spinlock.wgsl");
        let mut words: Vec<u32> = spirv_of(&p)
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for (at, w) in edits {
            let n = words.len();
            words[5 + at % (n - 5)] = w % 4096;
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let launch = Launch { max_states: 20_000, ..Launch::default() };
        match translate(Path::new("m.spv"), &bytes, &launch) {
            Ok(t) => prop_assert!(t.program.validate().is_ok()),
            Err(e) => prop_assert!(!e.to_string().contains('\n'), "{}", e),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// The SPIR-V rewrite before naga (`spirv::prepare`) never panics on a
    /// mutated module: word counts, opcodes and operands at random (a
    /// panic there would be caught as naga's, so it is checked alone).
    #[test]
    fn spirv_prepare_never_panics(edits in prop::collection::vec((0usize..4096, any::<u32>()), 1..6)) {
        let p = root().join("suites/shaders/spinlock.wgsl");
        let mut words: Vec<u32> = spirv_of(&p)
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for (at, w) in edits {
            let n = words.len();
            // Small values hit opcodes, word counts and ids alike.
            words[5 + at % (n - 5)] = if w % 2 == 0 { w % 0x0010_0080 } else { w };
        }
        let _ = progress_litmus::kernel::shader::spirv::prepare(&words, Some(2));
    }
}

/// A corrupt SPIR-V binary on which naga's reader panics (found by the
/// property test): one error line, exit 2 in the commands, no backtrace.
#[test]
fn a_naga_panic_is_one_error() {
    let (p, b) = read("tests/data/shaders/naga_panics.spv");
    let e = translate(&p, &b, &Launch::default()).unwrap_err();
    assert!(
        e.msg
            .starts_with("internal error: the shader frontend (naga) panicked"),
        "{e}"
    );
    // Issue 46: the line says what naga said and where, and what names
    // the broken construct.
    assert!(
        e.msg
            .contains("(called `Option::unwrap()` on a `None` value, at front/spv/"),
        "{e}"
    );
    assert!(e.msg.contains("`spirv-val` names what is wrong"), "{e}");
}

/// Specialization constants a mutation made wrong (the modules of
/// `tests/data/shaders/spirv/`, their `.spvasm` beside them). A length of
/// 2^32-1 made naga's reader panic ("internal error ... panicked"): it is
/// refused before naga, naming the constant and the instruction; an
/// ill-typed one and an impossible workgroup size said only "Function [0]
/// '' is invalid" and "Entry point main at Compute is invalid": now the
/// entry point and naga's inner cause.
#[test]
fn spirv_spec_constant_mutations_are_named_errors() {
    for (file, want) in [
        (
            "spec_array_length",
            "SPIR-V: instruction 14 (byte 208): the length of the array type %9 is the specialization constant %2 `n` (SpecId 0), whose default is 4294967295: more than the 64 cells the kernel language holds in all (give the constant a smaller value)",
        ),
        (
            "spec_float_stored",
            "invalid shader: the body of entry point `main` is invalid: The type of [2] doesn't match the type stored in [5]",
        ),
        (
            "spec_workgroup_size",
            "invalid shader: Entry point main at Compute is invalid: Workgroup size is out of range",
        ),
    ] {
        let (p, b) = read(&format!("tests/data/shaders/spirv/{file}.spv"));
        let e = translate(&p, &b, &Launch::default()).unwrap_err();
        assert_eq!(e.msg, want, "{file}");
    }
    // The same length as an ordinary constant (OpSpecConstant, 50, made
    // OpConstant, 43): refused as such; at 64 it passes the check.
    let (_, b) = read("tests/data/shaders/spirv/spec_array_length.spv");
    let mut words: Vec<u32> = b
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let at = words
        .iter()
        .position(|&w| w == (4 << 16) | 50)
        .expect("the OpSpecConstant");
    words[at] = (4 << 16) | 43;
    use progress_litmus::kernel::shader::spirv::check_array_lengths;
    let e = check_array_lengths(&words, None).unwrap_err();
    assert!(
        e.contains("is the constant %2 `n` = 4294967295: more than the 64 cells"),
        "{e}"
    );
    words[at + 3] = 64;
    assert_eq!(check_array_lengths(&words, None), Ok(()));
    words[at + 3] = 65;
    assert!(check_array_lengths(&words, None).is_err());
}

/// A runtime-sized array (every buffer of clspv's and Slang's SPIR-V)
/// indexed by constants only gets the cells they reach; a run-time index
/// into one is refused (`bad/runtime_array.wgsl`).
#[test]
fn runtime_sized_array_gets_the_cells_its_constant_indices_reach() {
    let src = "@group(0) @binding(0) var<storage, read_write> a: array<atomic<u32>>;\n\
               @compute @workgroup_size(1)\n\
               fn main() {\n    atomicStore(&a[2], 1u);\n    atomicAdd(&a[0], 1u);\n}\n";
    let t = translate(Path::new("rt.wgsl"), src.as_bytes(), &Launch::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let text = litmus::print(&t.program);
    assert!(text.contains("global a[3];"), "{text}");
    assert!(text.contains("a[2] = 1;"), "{text}");
}

/// Characters an attacker puts in a comment: line ends of every kind,
/// escape sequences, other C0 and C1 controls, Unicode separators and
/// bidirectional overrides, and plain text.
fn hostile_char() -> impl Strategy<Value = char> {
    prop::sample::select(vec![
        '\r', '\n', '\u{1b}', ']', '0', ';', '\u{7}', '\u{8}', '\t', '\u{b}', '\u{c}', '\u{7f}',
        '\u{85}', '\u{9b}', '\u{2028}', '\u{2029}', '\u{202e}', '\u{2066}', '\u{61c}', 'a', ' ',
        'é', '\\',
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Issue 46, item 3: a `/* */` comment with control characters on a
    /// line of code of any suite shader. `oracle translate`'s text shows
    /// the line escaped (no raw control character but the line ends, so
    /// nothing drives a terminal) and parses back to the same program (a
    /// lone `\r` once ended a comment line and broke the listing); the
    /// witness lines of `explain` are escaped the same way.
    #[test]
    fn translations_escape_source_text_and_parse_back(
        which in 0usize..16,
        line in 0usize..64,
        comment in prop::collection::vec(hostile_char(), 1..12),
    ) {
        let all = shaders();
        let p = &all[which % all.len()];
        let src = std::fs::read_to_string(p).unwrap();
        let lines: Vec<&str> = src.lines().collect();
        // A line of code (one ending with `;`), picked by `line`.
        let code: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].trim_end().ends_with(';') && !lines[i].trim_start().starts_with("//"))
            .collect();
        let at = code[line % code.len()];
        let comment: String = comment.into_iter().collect();
        let edited: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| if i == at { format!("{l} /* {comment} */\n") } else { format!("{l}\n") })
            .collect();
        let t = translate(p, edited.as_bytes(), &Launch::default())
            .unwrap_or_else(|e| panic!("{e}\n{edited}"));
        let text = print::annotated(&t, "x");
        prop_assert!(
            !text.chars().any(|c| c != '\n' && progress_litmus::error::unprintable(c)),
            "raw control character in:\n{}", text
        );
        let back = litmus::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        prop_assert_eq!(back, t.program.clone());
        for pc in 0..t.spans.len() {
            if let Some(shown) = print::source_line(&t, pc) {
                prop_assert!(!shown.chars().any(progress_litmus::error::unprintable), "{:?}", shown);
            }
        }
    }
}

/// The reproducer: an escape sequence setting the window title and
/// a lone carriage return in a comment, exactly. The carriage return ends
/// line 40 (GLSL: lines "are terminated by carriage-return or line-feed";
/// WGSL's line breaks include it too; the tools' one rule): the comment
/// line shows line 40 up to it, escaped, and no raw control character
/// reaches the text, which parses back.
#[test]
fn a_lone_carriage_return_in_a_comment_is_shown_escaped() {
    let (p, b) = read("suites/shaders/spinlock.wgsl");
    let src = String::from_utf8(b).unwrap().replace(
        "atomicAdd(&counter, 1u);",
        "atomicAdd(&counter, 1u); /* \u{1b}]0;pwned\u{7}\u{1b}[2J\rFAKE LISTING LINE */",
    );
    assert!(src.contains('\r'), "the shader has the edited line");
    let t = translate(&p, src.as_bytes(), &Launch::default()).unwrap();
    let text = print::annotated(&t, "x");
    assert!(
        text.contains("  // 40: atomicAdd(&counter, 1u); /* \\u{1b}]0;pwned\\u{7}\\u{1b}[2J\n  7: fetch_add(counter, 1);\n"),
        "{text}"
    );
    assert!(!text.contains(['\r', '\u{1b}', '\u{7}']), "{text}");
    assert_eq!(litmus::parse(&text).unwrap(), t.program);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// The rewrites of GLSL's published forms move no byte: every position
    /// naga reports is the user's (`glsl::published_forms`), whatever the
    /// text, and every alias is absent from the user's text.
    #[test]
    fn published_forms_keep_every_position(
        parts in prop::collection::vec(prop::sample::select(vec![
            "}", "{", " c ", "c", ";", ".", "[", "uint c;", "} c;", "volatile", "coherent",
            "#version 430\n", "layout(tla_subgroup_size = 2) in;\n", "\n", "é", "c.c", "Qc",
        ]), 0..40)
    ) {
        let src: String = parts.concat();
        let (out, aliases) = progress_litmus::kernel::shader::glsl::published_forms(&src);
        prop_assert_eq!(out.len(), src.len());
        let lines = |t: &str| t.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>();
        prop_assert_eq!(lines(&out), lines(&src));
        for (alias, name) in aliases {
            prop_assert_eq!(alias.len(), name.len());
            let held = src
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == alias);
            prop_assert!(!held, "{} in {:?}", alias, src);
        }
    }
}

/// The published forms' rewrites, one by one, and a text built to make a
/// search for blocks quadratic (200,000 `} c;` after one `{`) done in one
/// pass.
#[test]
fn published_forms_rewrite_what_naga_does_not_read() {
    use progress_litmus::kernel::shader::glsl::{launch_line, published_forms};
    let src = "#version 430\nlayout(tla_num_workgroups = 3) in;\nlayout(binding = 0) volatile coherent buffer C { uint c; } c;\nvoid main() { c.c = 1u; }\n";
    let (out, aliases) = published_forms(src);
    assert_eq!(
        out,
        "#version 450\n                                  \nlayout(binding = 0)                   buffer C { uint c; } Q;\nvoid main() { Q.c = 1u; }\n"
    );
    assert_eq!(aliases, [("Q".to_string(), "c".to_string())]);
    assert_eq!(
        launch_line("layout( tla_subgroup_size=4 ) in ;"),
        Some(("subgroup_size", "4"))
    );
    assert_eq!(
        launch_line("#pragma scheduler(OBE)"),
        Some(("model", "OBE"))
    );
    assert_eq!(launch_line("layout(local_size_x = 4) in;"), None);
    let big = format!("{{{}", "} c;".repeat(200_000));
    let (out, _) = published_forms(&big);
    assert_eq!(out.len(), big.len());
}

/// `// init` lines (docs/KERNEL.md §10.1, §10.3): a value below 0 is a
/// two's complement one (-5 is 251 of 256 values), and without a domain
/// the least one that holds every initial value too is taken (100 takes
/// 128 values where the constants need 4); past what 256 values hold,
/// the line is refused.
#[test]
fn init_lines_give_negative_values_and_widen_the_domain() {
    let shader = |init: &str| {
        format!(
            "// workgroups 1;\n{init}\n@group(0) @binding(0) var<storage, read_write> x: atomic<i32>;\n@compute @workgroup_size(1)\nfn main() {{\n    while atomicLoad(&x) == 0i {{}}\n}}\n"
        )
    };
    let p = Path::new("init.wgsl");
    let t = translate(p, shader("// init x = -5;").as_bytes(), &Launch::default()).unwrap();
    assert!(t.sext);
    assert_eq!(t.program.values, 16);
    let v = t.program.values as i32;
    assert_eq!(t.program.locations[0].init, [(-5i32).rem_euclid(v) as u8]);
    let t = translate(p, shader("// init x = 100;").as_bytes(), &Launch::default()).unwrap();
    assert!(!t.sext);
    assert_eq!(
        (t.program.values, t.program.locations[0].init[0]),
        (128, 100)
    );
    let e = translate(
        p,
        shader("// init x = -100, ;").as_bytes(),
        &Launch::default(),
    );
    assert!(e
        .unwrap_err()
        .msg
        .contains("expected a number from -128 to 255"));
    let e = translate(
        p,
        shader("// init x = -129;").as_bytes(),
        &Launch::default(),
    );
    assert!(e
        .unwrap_err()
        .msg
        .contains("expected a number from -128 to 255"));
    let two = "// init x = 200;\n// init y = -1;\n@group(0) @binding(1) var<storage, read_write> y: atomic<i32>;";
    let src = shader(two).replace("== 0i {}", "== atomicLoad(&y) {}");
    let msg = translate(p, src.as_bytes(), &Launch::default())
        .unwrap_err()
        .msg;
    assert_eq!(msg, "init `x`: value 200: value bound exceeded: the kernel language's values are below 256, which as two's complement values are -128 to 127");
}
