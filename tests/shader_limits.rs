//! Deep and huge shaders (issue 46, item 1): naga's GLSL reader recurses
//! as deep as its input nests, with no limit of its own. Each reproducer
//! of the issue (6,000 nested parentheses, a chain of 10,000 `+ 0u`, 3,000
//! nested `if`s; also a macro that doubles at each level) once aborted
//! the process with a stack overflow or ran out of memory; now it is one
//! error at its line and column, whatever thread calls the frontend. The
//! deepest input just inside the bounds (`glsl::check_shape`) of every
//! recursive shape is read without overflowing, in this build's frames.

use progress_litmus::kernel::shader::glsl::{MAX_NESTING, MAX_STATEMENT_TOKENS, MAX_TOKENS};
use progress_litmus::kernel::shader::{translate, Launch};
use std::path::Path;

const HEAD: &str = "#version 450\nlayout(local_size_x = 1) in;\nlayout(std430, binding = 0) buffer B { uint x; };\n";

/// A shader whose `main` is `body`.
fn shader(body: &str) -> String {
    format!("{HEAD}void main() {{ {body} }}\n")
}

/// The shapes naga's parser recurses on, `n` deep.
fn shapes(n: usize) -> Vec<(&'static str, String)> {
    vec![
        (
            "parentheses",
            shader(&format!("x = {}1u{};", "(".repeat(n), ")".repeat(n))),
        ),
        (
            "binary chain",
            shader(&format!("x = 1u{};", " + 0u".repeat(n))),
        ),
        (
            "nested ifs",
            shader(&format!(
                "{}x = 1u;{}",
                "if (x == 0u) { ".repeat(n),
                " }".repeat(n)
            )),
        ),
        (
            "ifs without braces",
            shader(&format!("{}x = 1u;", "if (x == 0u) ".repeat(n))),
        ),
        ("unary chain", shader(&format!("x = {}1u;", "~".repeat(n)))),
        (
            "conditional chain",
            shader(&format!("x = {}0u;", "x == 0u ? 1u : ".repeat(n))),
        ),
        (
            "assignment chain",
            shader(&format!("{}1u;", "x = ".repeat(n))),
        ),
        (
            "nested blocks",
            shader(&format!("{}x = 1u;{}", "{ ".repeat(n), " }".repeat(n))),
        ),
    ]
}

/// Translates on a thread with a small stack, as a rayon worker would
/// call the loader: the frontend must not depend on its caller's stack.
fn translate_on_small_stack(name: &str, src: &str) -> Result<(), String> {
    let src = src.to_string();
    let name = format!("{name}.comp");
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            translate(Path::new(&name), src.as_bytes(), &Launch::default())
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .unwrap()
        .join()
        .expect("the caller's thread survives")
}

/// The reproducers and larger: one error line each, at line 4
/// (the body's line), naming the bound.
#[test]
fn deep_glsl_is_one_error_not_an_abort() {
    for (name, src) in shapes(10_000) {
        let e = translate_on_small_stack(name, &src).unwrap_err();
        assert!(e.starts_with(&format!("{name}.comp:4:")), "{name}: {e}");
        assert!(
            e.contains("nested more than") || e.contains("a statement of more than"),
            "{name}: {e}"
        );
        assert!(!e.contains('\n'), "{name}: one line: {e}");
    }
}

/// Just inside the bounds, every shape is parsed by naga without
/// overflowing the frontend's stack (in this build's frame sizes): the
/// bounds, not luck, keep the reader safe.
#[test]
fn deepest_accepted_glsl_parses() {
    // Each level of these takes this many tokens of a statement, or this
    // many brackets (the `if`'s parentheses sit one level deeper).
    let deepest = [
        ("parentheses", MAX_NESTING - 1),
        ("binary chain", MAX_STATEMENT_TOKENS / 2 - 4),
        ("nested ifs", MAX_NESTING - 2),
        ("ifs without braces", MAX_STATEMENT_TOKENS / 6 - 2),
        ("unary chain", MAX_STATEMENT_TOKENS - 4),
        ("conditional chain", MAX_STATEMENT_TOKENS / 6 - 2),
        ("assignment chain", MAX_STATEMENT_TOKENS / 2 - 2),
        ("nested blocks", MAX_NESTING - 1),
    ];
    for (name, n) in deepest {
        let src = shapes(n).into_iter().find(|(s, _)| *s == name).unwrap().1;
        match translate_on_small_stack(name, &src) {
            Ok(()) => {}
            Err(e) => assert!(
                !e.contains("nested more than") && !e.contains("a statement of more than"),
                "{name} at {n}: refused by the bounds: {e}"
            ),
        }
    }
}

/// A macro that doubles at each level expands to 2^59 tokens: refused
/// once the expansion passes the bound, in well under a second, before
/// naga allocates for it (it once tried 4 GiB and aborted, or ran on).
#[test]
fn macro_bombs_are_refused() {
    let doubling = |unit: &str| {
        let mut d = format!("#define A0 {unit}\n");
        for i in 1..60 {
            d.push_str(&format!("#define A{i} A{} A{}\n", i - 1, i - 1));
        }
        d
    };
    // In one statement (the statement bound) and in many (the token bound).
    for (defs, body, bound) in [
        (doubling("1u +"), "x = A59 1u;", "a statement of more than"),
        (
            doubling("x = 1u;"),
            "A59",
            "tokens once macros are expanded",
        ),
    ] {
        let src = format!("{HEAD}{defs}void main() {{ {body} }}\n");
        let t = std::time::Instant::now();
        let e = translate_on_small_stack("bomb", &src).unwrap_err();
        assert!(e.contains(bound), "{e}");
        assert!(e.starts_with("bomb.comp:"), "{e}");
        assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
    }
    const { assert!(MAX_TOKENS >= 100_000) };
}

/// A SPIR-V compute shader whose body is `n` nested selections around one
/// store, as assembly text.
fn nested_selections(n: usize) -> String {
    let mut s = String::from(
        "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
         OpExecutionMode %main LocalSize 1 1 1\nOpMemberDecorate %B 0 Offset 0\nOpDecorate %B BufferBlock\n\
         OpDecorate %v DescriptorSet 0\nOpDecorate %v Binding 0\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n\
         %uint = OpTypeInt 32 0\n%bool = OpTypeBool\n%B = OpTypeStruct %uint\n%pB = OpTypePointer Uniform %B\n\
         %v = OpVariable %pB Uniform\n%int = OpTypeInt 32 1\n%int_0 = OpConstant %int 0\n\
         %pu = OpTypePointer Uniform %uint\n%uint_1 = OpConstant %uint 1\n\
         %main = OpFunction %void None %fn\n%entry = OpLabel\n%p = OpAccessChain %pu %v %int_0\n\
         %x = OpLoad %uint %p\n%c = OpIEqual %bool %x %uint_1\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "OpSelectionMerge %m{i} None\nOpBranchConditional %c %l{i} %m{i}\n%l{i} = OpLabel\n"
        ));
    }
    s.push_str("OpStore %p %uint_1\n");
    for i in (0..n).rev() {
        s.push_str(&format!("OpBranch %m{i}\n%m{i} = OpLabel\n"));
    }
    s.push_str("OpReturn\nOpFunctionEnd\n");
    s
}

/// SPIR-V nests as deep as its structured constructs: 20,000 nested
/// selections (1 MB) took naga's reader 2 s and 200,000 minutes (it walks
/// the nesting for every value it looks up; its validator recurses
/// through it). Refused before naga, naming the instruction, in either
/// byte order; 100 nested selections still reach the translation.
/// Assembled with `spirv-as` (Debian's spirv-tools, which `.ci/run`
/// installs): skipped without it, except under `CI=true`.
#[test]
fn deeply_nested_spirv_is_refused_before_naga() {
    let ok = std::process::Command::new("spirv-as")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let why = "spirv-as not found: install Debian's spirv-tools (`.ci/run` does)";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("skipped: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("shader_limits_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let assemble = |n: usize| {
        let (asm, spv) = (
            dir.join(format!("{n}.spvasm")),
            dir.join(format!("{n}.spv")),
        );
        std::fs::write(&asm, nested_selections(n)).unwrap();
        let o = std::process::Command::new("spirv-as")
            .arg(&asm)
            .arg("-o")
            .arg(&spv)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(&spv).unwrap()
    };
    let deep = assemble(20_000);
    let big_endian: Vec<u8> = deep
        .chunks(4)
        .flat_map(|w| [w[3], w[2], w[1], w[0]])
        .collect();
    for bytes in [&deep, &big_endian] {
        let t = std::time::Instant::now();
        let e = translate(Path::new("deep.spv"), bytes, &Launch::default()).unwrap_err();
        assert!(
            e.msg.starts_with("SPIR-V: more than 1024 structured constructs (OpSelectionMerge, OpLoopMerge): refused at instruction "),
            "{e}"
        );
        assert!(t.elapsed().as_millis() < 1000, "{:?}", t.elapsed());
    }
    let shallow = assemble(100);
    let e = translate(Path::new("shallow.spv"), &shallow, &Launch::default()).unwrap_err();
    assert!(
        e.msg.contains("instructions: the kernel language allows"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
