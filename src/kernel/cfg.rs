//! Control flow of a code block: successors and immediate post-dominators,
//! which are where divergent lanes of a lockstep subgroup reconverge
//! (docs/KERNEL.md §2.6).
//!
//! Nodes are the pcs `0..len` and the exit node `len` (END). Post-dominator
//! sets are computed by the iterative data-flow equations on bit sets (at
//! most 64 nodes), so no recursion and no graph library is needed.

use crate::kernel::program::{Code, Instr};

/// The pcs control can go to after instruction `pc` (END is `len`).
pub fn successors(code: &Code, pc: usize) -> Vec<usize> {
    let len = code.instrs.len();
    let next = pc + 1;
    match code.instrs[pc] {
        Instr::Goto { target } => vec![target.pc(len)],
        ref i => match i.target() {
            Some(t) if t.pc(len) != next => vec![next, t.pc(len)],
            _ => vec![next],
        },
    }
}

/// Whether no jump crosses instruction `b` of `instrs` (none from before
/// it to after it, or from after it to at or before it): every
/// invocation that starts the block and ends it executes `b` exactly
/// once, so a barrier there is in uniform control flow. The emitters
/// split a block at such a barrier; the value check looks for an
/// unmatched barrier elsewhere only (docs/KERNEL.md §10.3).
pub fn top_level(instrs: &[Instr], b: usize) -> bool {
    let len = instrs.len();
    instrs.iter().enumerate().all(|(pc, i)| match i.target() {
        None => true,
        Some(t) => {
            let t = t.pc(len);
            !((pc < b && t > b) || (pc > b && t <= b))
        }
    })
}

/// The immediate post-dominator of every pc; END (`len`) for pcs whose
/// every path loops forever (no exit is reachable) or whose only
/// post-dominator is the exit.
pub fn ipdoms(code: &Code) -> Vec<usize> {
    let len = code.instrs.len();
    let exit = len;
    let all: u64 = if len + 1 == 64 {
        u64::MAX
    } else {
        (1u64 << (len + 1)) - 1
    };
    let succ: Vec<Vec<usize>> = (0..len).map(|pc| successors(code, pc)).collect();
    let mut pdom = vec![all; len + 1];
    pdom[exit] = 1 << exit;
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..len).rev() {
            let meet = succ[pc].iter().fold(all, |m, &s| m & pdom[s]);
            let new = meet | 1 << pc;
            if new != pdom[pc] {
                pdom[pc] = new;
                changed = true;
            }
        }
    }
    // Which pcs can reach the exit at all (a full post-dominator set is
    // also what a node that cannot reach it keeps).
    let mut reaches = 1u64 << exit;
    let mut grew = true;
    while grew {
        grew = false;
        for (pc, next) in succ.iter().enumerate() {
            if reaches & (1 << pc) == 0 && next.iter().any(|&s| reaches & (1 << s) != 0) {
                reaches |= 1 << pc;
                grew = true;
            }
        }
    }
    (0..len)
        .map(|pc| {
            if reaches & (1 << pc) == 0 {
                // No path to the exit: reconverge at END (never).
                return exit;
            }
            let strict = pdom[pc] & !(1 << pc);
            // Post-dominator sets form a chain; the immediate one is the
            // strict post-dominator with the most post-dominators itself.
            (0..=len)
                .filter(|&d| strict & (1 << d) != 0)
                .max_by_key(|&d| pdom[d].count_ones())
                .unwrap_or(exit)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axb::test::Target;
    use crate::kernel::program::{Cmp, Operand};

    fn br(t: u8) -> Instr {
        Instr::Branch {
            a: Operand::Reg(0),
            cmp: Cmp::Eq,
            b: Operand::Imm(0),
            target: Target::At(t),
        }
    }

    fn nop() -> Instr {
        Instr::Assign {
            dst: 0,
            op: None,
            a: Operand::Imm(1),
            b: Operand::Imm(0),
        }
    }

    fn code(instrs: Vec<Instr>) -> Code {
        Code {
            regs: vec!["r".into()],
            labels: vec![None; instrs.len()],
            constructs: Vec::new(),
            instrs,
            at: Default::default(),
        }
    }

    #[test]
    fn if_then_else_reconverges_at_the_join() {
        // 0: if (r == 0) goto 3; 1: r = 1; 2: goto 4; 3: r = 1; 4: r = 1;
        let c = code(vec![
            br(3),
            nop(),
            Instr::Goto {
                target: Target::At(4),
            },
            nop(),
            nop(),
        ]);
        let ip = ipdoms(&c);
        assert_eq!(ip[0], 4);
        assert_eq!(ip[1], 2);
        assert_eq!(ip[4], 5);
    }

    #[test]
    fn a_spin_loop_reconverges_after_the_loop_and_an_endless_one_at_end() {
        // 0: if (r == 0) goto 0; 1: r = 1;
        let c = code(vec![br(0), nop()]);
        assert_eq!(ipdoms(&c), vec![1, 2]);
        // 0: goto 0
        let c = code(vec![Instr::Goto {
            target: Target::At(0),
        }]);
        assert_eq!(ipdoms(&c), vec![1]);
    }
}
