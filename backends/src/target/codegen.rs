//! The per-instruction lowering shared by every target (SPEC §6 code shape).
//!
//! A test thread becomes
//!
//! ```text
//! while (pc != END) {
//!     if (STOP) break;          // the only addition to the test's traffic
//!     switch (pc) {             // or an if-chain, see `Shape`
//!     case 0u: // 0: if (Exch(Mem[0],1) == 0) goto 0;
//!         pc = (EXCH(mem[base + 0u], 1u) == 0u) ? 0u : 1u;
//!         break;
//!     ...
//!     }
//! }
//! ```
//!
//! An exchange is an atomic exchange; a load-and-branch (no `exch`) is an
//! atomic add of 0, so every access reaches the point of coherence (paper
//! §6.2). The targets differ only in spelling, captured by a [`Dialect`]
//! (their [`Language`] and stop test): the generated code expects variables
//! `pc` (the thread's pc, unsigned) and `base` (the first memory word of
//! the instance) in scope, and the memory array `mem`.

use crate::mapping::Layout;
use crate::target::language::{Language, Syntax};
use progress_litmus::axb::pseudo;
use progress_litmus::axb::test::{Instr, Test};
use std::fmt::Write;

/// How the per-instruction dispatch is written. Some compilers treat the two
/// differently (jump tables, loop unswitching), and users study exactly that.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `switch (pc) { case 0u: ...; break; ... }`.
    #[default]
    Switch,
    /// `if (pc == 0u) { ... } else if (pc == 1u) { ... }`.
    IfChain,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Switch => "switch",
            Shape::IfChain => "if-chain",
        }
    }
}

/// One target's spelling of the AXB tests: its language (atomics,
/// statement syntax) and its stop test.
pub struct Dialect {
    /// The language: [`crate::target::cuda::Cuda`], ... (see
    /// [`crate::target::language`]).
    pub lang: &'static dyn Language,
    /// A boolean expression: leave the loop now (the stop flag is set);
    /// empty in the bare (verification) form, which has no stop.
    pub leave: String,
}

/// An unsigned literal, the same in every target.
pub fn uint(v: usize) -> String {
    format!("{v}u")
}

/// Indents every non-empty line of `body` by `levels` * 4 spaces.
pub fn indent(body: &str, levels: usize) -> String {
    let pad = " ".repeat(4 * levels);
    let mut out = String::with_capacity(body.len() + 64);
    for line in body.lines() {
        if !line.is_empty() {
            out.push_str(&pad);
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A multi-way branch on `selector` (an unsigned expression), one arm per
/// `(value, comment, body)`, in the given shape. Bodies must not `break`
/// out of their arm (they may break out of loops of their own).
pub fn branch(
    selector: &str,
    arms: &[(usize, String, String)],
    shape: Shape,
    syntax: Syntax,
) -> String {
    let mut out = String::new();
    match shape {
        Shape::Switch if syntax == Syntax::Wgsl => {
            let _ = writeln!(out, "switch ({selector}) {{");
            for (value, comment, body) in arms {
                let _ = writeln!(out, "case {}: {{{}", uint(*value), comment_suffix(comment));
                out.push_str(&indent(body, 1));
                out.push_str("}\n");
            }
            out.push_str("default: {}\n}\n");
        }
        Shape::Switch => {
            let _ = writeln!(out, "switch ({selector}) {{");
            for (value, comment, body) in arms {
                let _ = writeln!(out, "case {}:{}", uint(*value), comment_suffix(comment));
                out.push_str(&indent(body, 1));
                out.push_str("    break;\n");
            }
            out.push_str("}\n");
        }
        Shape::IfChain => {
            for (k, (value, comment, body)) in arms.iter().enumerate() {
                let kw = if k == 0 { "if" } else { "} else if" };
                let _ = writeln!(
                    out,
                    "{kw} ({selector} == {}) {{{}",
                    uint(*value),
                    comment_suffix(comment)
                );
                out.push_str(&indent(body, 1));
            }
            if !arms.is_empty() {
                out.push_str("}\n");
            }
        }
    }
    out
}

fn comment_suffix(comment: &str) -> String {
    if comment.is_empty() {
        String::new()
    } else {
        format!(" // {comment}")
    }
}

/// The statement(s) for instruction `i` at `pc` of a thread of `len`.
pub fn instr(i: &Instr, pc: usize, len: usize, d: &Dialect) -> String {
    let index = format!("base + {}", uint(i.loc as usize));
    let cell = format!("mem[{index}]");
    let access = match i.exch {
        Some(x) => d.lang.exchange(&cell, &uint(x as usize)),
        None => d.lang.fetch_add(&cell, "0u"),
    };
    let next = uint(pc + 1);
    if i.is_store_like(pc, len) {
        // Both outcomes go to pc + 1: the comparison is irrelevant.
        format!("{}{access};\npc = {next};\n", d.lang.discard())
    } else {
        let (check, jump) = (uint(i.check as usize), uint(i.jump.pc(len)));
        if d.leave.is_empty() {
            // The bare form: a branch, as a verifier reads it best (no
            // selection through a temporary), the same in both syntaxes.
            return format!(
                "if ({access} == {check}) {{\n    pc = {jump};\n}} else {{\n    pc = {next};\n}}\n"
            );
        }
        match d.lang.syntax() {
            Syntax::C => format!("pc = ({access} == {check}) ? {jump} : {next};\n"),
            Syntax::Wgsl => format!("pc = select({next}, {jump}, {access} == {check});\n"),
        }
    }
}

/// The loop of thread `t` of `test`: runs from the current `pc` until END or
/// until the dialect says to leave.
pub fn thread_loop(test: &Test, t: usize, d: &Dialect, shape: Shape) -> String {
    let th = &test.threads[t];
    let len = th.len();
    let arms: Vec<(usize, String, String)> = th
        .iter()
        .enumerate()
        .map(|(pc, i)| (pc, pseudo::instr(i, pc, len), instr(i, pc, len, d)))
        .collect();
    let mut out = format!("while (pc != {}) {{\n", uint(len));
    match d.lang.syntax() {
        // The bare (verification) form: nothing but the test.
        _ if d.leave.is_empty() => Ok(()),
        Syntax::C => writeln!(out, "    if ({}) break;", d.leave),
        Syntax::Wgsl => writeln!(out, "    if ({}) {{ break; }}", d.leave),
    }
    .expect("writing to a String");
    out.push_str(&indent(&branch("pc", &arms, shape, d.lang.syntax()), 1));
    out.push_str("}\n");
    out
}

/// All threads of `test`, selected by the unsigned expression `thread`.
pub fn dispatch(test: &Test, thread: &str, d: &Dialect, shape: Shape) -> String {
    let arms: Vec<(usize, String, String)> = (0..test.num_threads())
        .map(|t| (t, format!("thread {t}"), thread_loop(test, t, d, shape)))
        .collect();
    branch(thread, &arms, shape, d.lang.syntax())
}

/// The test as a comment block in the paper's pseudo-code, each line
/// prefixed by `prefix` (`// ` in the C family, `# ` in Amber).
pub fn pseudo_comment(test: &Test, prefix: &str) -> String {
    pseudo::print(test)
        .lines()
        .map(|l| format!("{prefix}  {l}\n"))
        .collect()
}

/// Words of memory per instance: one per location, at least one so that an
/// instance's `base` is distinct from the next one's even for a test with no
/// location (which cannot occur in a valid test, but costs nothing).
pub fn stride(test: &Test) -> usize {
    test.num_locs().max(1)
}

/// The body of a shader entry point (GLSL, Metal) for one test under a
/// baked-in layout: which thread and instance the workgroup id `w` (an
/// unsigned variable in scope) stands for, then the dispatch. Both shader
/// languages spell the unsigned type `uint`.
pub fn shader_body(test: &Test, layout: &Layout, d: &Dialect, shape: Shape) -> String {
    let (thread, instance) = layout.locate_exprs("w");
    format!(
        "uint tid = {thread};\nuint base = ({instance}) * {};\nuint pc = 0u;\n{}",
        uint(stride(test)),
        dispatch(test, "tid", d, shape)
    )
}

/// Text safe inside a `//` comment: control characters become `?`, and a
/// trailing backslash (which would continue the comment) is dropped.
pub fn comment_safe(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    s.trim_end_matches('\\').to_string()
}

/// The machine-readable description a shader file starts with (after the
/// comment marker), so a host harness needs nothing but the file:
/// `axb-run: mapping=chunked instances=32767 workgroups=65534 words=32767 test=NAME`.
/// The name comes last and runs to the end of the line.
pub fn run_header(name: &str, test: &Test, layout: &Layout) -> String {
    format!(
        "axb-run: mapping={} instances={} workgroups={} words={} test={}",
        layout.mapping,
        layout.instances,
        layout.workgroups(),
        stride(test) as u64 * layout.instances as u64,
        comment_safe(name)
    )
}

/// The comment lines a shader file starts with: the [`run_header`], a title
/// and the test in pseudo-code, each line prefixed by `prefix`.
pub fn shader_preamble(
    t: &progress_litmus::axb::load::NamedTest,
    layout: &Layout,
    shape: Shape,
    target: &str,
    prefix: &str,
) -> String {
    let test = &t.entry.test;
    format!(
        "{prefix} {}\n{prefix} Progress litmus test {} ({}), {} mapping, generated by `backends emit --target {target}` (code shape: {}).\n{}",
        run_header(&t.name, test, layout),
        comment_safe(&t.name),
        test.config(),
        layout.mapping,
        shape.name(),
        pseudo_comment(test, prefix)
    )
}

/// The comment lines a bare (verification) shader starts with: what it
/// is, how the oracle reads it, the launch as an annotation the shader
/// frontend reads (`workgroups W;`, docs/KERNEL.md §10.1), and the test in
/// pseudo-code. No `axb-run:` line: no host runs a bare shader (it has no
/// way to stop).
pub fn bare_preamble(
    t: &progress_litmus::axb::load::NamedTest,
    layout: &Layout,
    shape: Shape,
    target: &str,
    prefix: &str,
) -> String {
    let test = &t.entry.test;
    format!(
        "{prefix} Progress litmus test {} ({}), {} mapping: the bare (verification) form, generated by\n\
         {prefix} `backends emit --target {target} --bare` (code shape: {}): the test and nothing else, no stop\n\
         {prefix} flag, no iteration budget, so it is not for running. `oracle classify FILE` decides it.\n\
         {prefix} workgroups {};\n{}",
        comment_safe(&t.name),
        test.config(),
        layout.mapping,
        shape.name(),
        layout.workgroups(),
        pseudo_comment(test, prefix)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_cannot_be_broken_out_of() {
        assert_eq!(comment_safe("a\nb\\"), "a?b");
    }

    /// A language whose atomics stand out.
    struct Plain;

    impl Language for Plain {
        fn name(&self) -> &'static str {
            "plain"
        }
        fn syntax(&self) -> Syntax {
            Syntax::C
        }
        fn discard(&self) -> &'static str {
            "(void)"
        }
        fn exchange(&self, cell: &str, v: &str) -> String {
            format!("XCHG({cell}, {v})")
        }
        fn fetch_add(&self, cell: &str, v: &str) -> String {
            format!("ADD{v}({cell})")
        }
    }

    fn dialect() -> Dialect {
        Dialect {
            lang: &Plain,
            leave: "STOP".to_string(),
        }
    }

    fn parse(src: &str) -> Test {
        progress_litmus::axb::text::parse(src).unwrap()
    }

    #[test]
    fn lowers_the_four_instruction_forms() {
        let t = parse(
            "THREAD0\natomic_exch_branch(0,0,1,0)\natomic_store(1,0)\natomic_chk_branch(0,1,END)\natomic_chk_branch(0,1,4)\n",
        );
        let d = dialect();
        let th = &t.threads[0];
        assert_eq!(
            instr(&th[0], 0, 4, &d),
            "pc = (XCHG(mem[base + 0u], 1u) == 0u) ? 0u : 1u;\n"
        );
        assert_eq!(
            instr(&th[1], 1, 4, &d),
            "(void)XCHG(mem[base + 1u], 0u);\npc = 2u;\n"
        );
        assert_eq!(
            instr(&th[2], 2, 4, &d),
            "pc = (ADD0u(mem[base + 0u]) == 1u) ? 4u : 3u;\n"
        );
        // A load-and-branch whose target is the next instruction is a plain load.
        assert_eq!(
            instr(&th[3], 3, 4, &d),
            "(void)ADD0u(mem[base + 0u]);\npc = 4u;\n"
        );
    }

    #[test]
    fn both_shapes_have_one_arm_per_instruction_and_check_stop_in_the_loop() {
        let t = parse(
            "THREAD0\natomic_exch_branch(0,0,1,0)\natomic_store(0,0)\nTHREAD1\natomic_store(0,1)\n",
        );
        let d = dialect();
        let sw = dispatch(&t, "tid", &d, Shape::Switch);
        assert_eq!(sw.matches("case ").count(), 2 + 3);
        assert_eq!(sw.matches("if (STOP) break;").count(), 2);
        assert!(sw.contains("while (pc != 2u) {"));
        assert!(sw.contains("case 0u: // 0: if (Exch(Mem[0],1) == 0) goto 0;"));
        let ifs = dispatch(&t, "tid", &d, Shape::IfChain);
        assert!(!ifs.contains("switch"));
        assert!(ifs.contains("} else if (pc == 1u) {"));
        assert_eq!(ifs.matches("if (STOP) break;").count(), 2);
        assert_eq!(ifs.matches("XCHG").count(), sw.matches("XCHG").count());
    }
}
