//! AXB is an exact subset of the kernel language (docs/KERNEL.md §1.4).
//!
//! An AXB test of N threads is the kernel program of N workgroups of one
//! invocation each; thread t is workgroup t with its own code block; the
//! memory is one global array `Mem` (all zero); every AXB instruction is one
//! atomic instruction on `Mem[loc]`:
//!
//! - a plain store (`check == 0`, jump to the next instruction, an `exch`)
//!   is `Mem[loc] = exch;`
//! - with `exch` it is otherwise `if (exch(Mem[loc], exch) == check) goto jump;`
//! - without it is `if (Mem[loc] == check) goto jump;` (an atomic load fused
//!   with its comparison).
//!
//! [`from_axb`] and [`to_axb`] are inverse: `to_axb(&from_axb(t)) == Some(t)`
//! for every valid normalized test, and `to_axb(p)` is `Some` exactly for the
//! programs in the image of [`from_axb`].

use crate::axb::test::{self, Target, Test};
use crate::kernel::program::{
    Addr, AtomicOp, Cmp, Code, CondBranch, Instr, Location, Operand, Program,
};

/// The name of the one memory location of an embedded AXB test.
pub const MEM: &str = "Mem";

/// The kernel program of an AXB test (valid and normalized, see
/// [`Test::validate`] and [`Test::normalize`]).
pub fn from_axb(test: &Test) -> Program {
    let n = test.threads.len();
    let locs = test.num_locs().max(1);
    let values = (test.num_values() as u16).next_power_of_two().max(2);
    Program {
        values,
        workgroups: n as u8,
        workgroup_size: 1,
        subgroup_size: 1,
        locations: vec![Location {
            name: MEM.to_string(),
            shared: false,
            array: true,
            init: vec![0; locs],
        }],
        codes: test
            .threads
            .iter()
            .map(|th| Code {
                regs: Vec::new(),
                labels: vec![None; th.len()],
                constructs: Vec::new(),
                at: Default::default(),
                instrs: th
                    .iter()
                    .enumerate()
                    .map(|(pc, i)| embed_instr(i, pc, th.len()))
                    .collect(),
            })
            .collect(),
        wg_code: (0..n as u8).collect(),
        model: None,
        expect: Vec::new(),
        asserts: Vec::new(),
        hardware_subgroups: false,
        tangled_collectives: false,
    }
}

fn embed_instr(i: &test::Instr, pc: usize, len: usize) -> Instr {
    let addr = Addr {
        loc: 0,
        index: Operand::Imm(i.loc as u16),
    };
    match i.exch {
        Some(x) if i.check == 0 && i.is_store_like(pc, len) => Instr::Atomic {
            op: AtomicOp::Store(Operand::Imm(x as u16)),
            addr,
            dst: None,
            branch: None,
        },
        exch => Instr::Atomic {
            op: match exch {
                Some(x) => AtomicOp::Exchange(Operand::Imm(x as u16)),
                None => AtomicOp::Load,
            },
            addr,
            dst: None,
            branch: Some(CondBranch {
                cmp: Cmp::Eq,
                rhs: Operand::Imm(i.check as u16),
                target: Target::from_pc(i.jump.pc(len), len),
            }),
        },
    }
}

/// The AXB test a program is the embedding of, if it is one.
pub fn to_axb(p: &Program) -> Option<Test> {
    if p.workgroup_size != 1 || p.codes.len() != p.workgroups as usize {
        return None;
    }
    let threads = p
        .codes
        .iter()
        .map(|code| {
            let len = code.instrs.len();
            code.instrs
                .iter()
                .enumerate()
                .map(|(pc, i)| project_instr(i, pc, len))
                .collect::<Option<Vec<test::Instr>>>()
        })
        .collect::<Option<Vec<_>>>()?;
    let t = Test { threads };
    t.validate().ok()?;
    (from_axb(&t) == *p).then_some(t)
}

fn small(o: Operand) -> Option<u8> {
    match o {
        Operand::Imm(v) if v < 256 => Some(v as u8),
        _ => None,
    }
}

fn project_instr(i: &Instr, pc: usize, len: usize) -> Option<test::Instr> {
    let Instr::Atomic {
        op,
        addr,
        dst: None,
        branch,
    } = *i
    else {
        return None;
    };
    let loc = small(addr.index)?;
    match (op, branch) {
        (AtomicOp::Store(x), None) => Some(test::Instr {
            loc,
            check: 0,
            jump: Target::from_pc(pc + 1, len),
            exch: Some(small(x)?),
        }),
        (AtomicOp::Exchange(_) | AtomicOp::Load, Some(b)) if b.cmp == Cmp::Eq => {
            Some(test::Instr {
                loc,
                check: small(b.rhs)?,
                jump: b.target,
                exch: match op {
                    AtomicOp::Exchange(x) => Some(small(x)?),
                    _ => None,
                },
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axb::text;

    #[test]
    fn every_published_test_embeds_losslessly() {
        for t in crate::axb::published::tests().unwrap() {
            let p = from_axb(&t.entry.test);
            p.validate().unwrap();
            assert_eq!(to_axb(&p).as_ref(), Some(&t.entry.test), "{}", t.name);
        }
    }

    #[test]
    fn store_like_instructions_with_a_check_stay_exchanges() {
        // check = 1 on a store-like exchange is meaningless but must survive.
        let t = text::parse("THREAD0\natomic_exch_branch(0,1,1,1)\natomic_store(1,1)\n").unwrap();
        let p = from_axb(&t);
        assert!(matches!(
            p.codes[0].instrs[0],
            Instr::Atomic {
                op: AtomicOp::Exchange(_),
                branch: Some(_),
                ..
            }
        ));
        assert!(matches!(
            p.codes[0].instrs[1],
            Instr::Atomic {
                op: AtomicOp::Store(_),
                branch: None,
                ..
            }
        ));
        assert_eq!(to_axb(&p), Some(t));
    }

    #[test]
    fn programs_outside_the_image_do_not_project() {
        let t = text::parse("THREAD0\natomic_store(0,1)\n").unwrap();
        let mut p = from_axb(&t);
        p.values = 16;
        assert_eq!(to_axb(&p), None);
        let mut p = from_axb(&t);
        p.workgroup_size = 2;
        assert_eq!(to_axb(&p), None);
    }
}
