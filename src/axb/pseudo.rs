//! C-like pseudo-code, the way the paper prints tests:
//! `0: if (Exch(Mem[0],1) == 0) goto 0;`.

use crate::axb::test::{Instr, Test};

/// One instruction at `pc` of a thread of `len` instructions.
pub fn instr(i: &Instr, pc: usize, len: usize) -> String {
    let target = i.jump.pc(len);
    let goto = if target >= len {
        "END".to_string()
    } else {
        target.to_string()
    };
    let body = match (i.exch, i.is_store_like(pc, len)) {
        (Some(x), true) => format!("Mem[{}] = {x};", i.loc),
        (None, true) => format!("load(Mem[{}]);", i.loc),
        (Some(x), false) => format!("if (Exch(Mem[{}],{x}) == {}) goto {goto};", i.loc, i.check),
        (None, false) => format!("if (Mem[{}] == {}) goto {goto};", i.loc, i.check),
    };
    format!("{pc}: {body}")
}

/// Instruction `pc` of thread `t` of `test`.
pub fn at(test: &Test, t: usize, pc: usize) -> String {
    let th = &test.threads[t];
    instr(&th[pc], pc, th.len())
}

/// The whole test, one block per thread:
///
/// ```text
/// T0:
///   0: if (Exch(Mem[0],1) == 0) goto 0;
/// T1:
///   0: Mem[0] = 1;
/// ```
pub fn print(test: &Test) -> String {
    let mut out = String::new();
    for (t, th) in test.threads.iter().enumerate() {
        out.push_str(&format!("T{t}:\n"));
        for (pc, i) in th.iter().enumerate() {
            out.push_str("  ");
            out.push_str(&instr(i, pc, th.len()));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axb::text;

    #[test]
    fn prints_the_paper_forms() {
        let t = text::parse(
            "THREAD0\natomic_exch_branch(0,0,1,0)\natomic_store(0,0)\nTHREAD1\natomic_chk_branch(1,0,END)\natomic_chk_branch(1,0,2)\n",
        )
        .unwrap();
        assert_eq!(
            print(&t),
            "T0:\n  0: if (Exch(Mem[0],1) == 0) goto 0;\n  1: Mem[0] = 0;\nT1:\n  0: if (Mem[1] == 0) goto END;\n  1: load(Mem[1]);\n"
        );
    }
}
