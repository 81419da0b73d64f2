//! Dead registers (docs/KERNEL.md §8.5): a register whose value no later
//! step can read before overwriting it is set to 0, so that states which
//! differ only in such values are one state.
//!
//! A register is *live* at a pc when some path from that pc reads it
//! before writing it (the classic backward data-flow equations, per code
//! block, on bit sets). Clearing the dead registers is a map `h` on
//! states that commutes with every move: a step reads only registers live
//! at its pc (its operands), so it does the same from `s` and `h(s)`, and
//! after it a register live at the new pc was either written by the step
//! or live before it (live-in = uses ∪ (live-out − writes)). Enabledness,
//! F sets, Terminate and faults read no register, so `h` is a bisimulation
//! of the product that keeps every verdict and every deadlock. Outcomes
//! read final registers: `oracle outcomes`, witnesses and drawings build
//! their products without it.

use progress_litmus::kernel::cfg;
use progress_litmus::kernel::machine::{set_bits, Machine};
use progress_litmus::kernel::program::{Code, Operand};

/// The live registers of every pc of every code block.
#[derive(Clone, Debug)]
pub struct Liveness {
    /// Per code block, per pc (END included): the registers dead there,
    /// one bit a register.
    dead: Vec<Vec<u8>>,
    /// Per invocation: its workgroup's first and last invocation + 1.
    wg_range: Vec<(usize, usize)>,
}

/// Registers read and written by each instruction of a block.
fn uses_defs(code: &Code) -> Vec<(u8, u8)> {
    code.instrs
        .iter()
        .map(|i| {
            let uses = i.operands().iter().fold(0u8, |m, o| match o {
                Operand::Reg(r) => m | 1 << r,
                _ => m,
            });
            let defs = i.dst().map_or(0, |r| 1u8 << r);
            (uses, defs)
        })
        .collect()
}

/// The dead registers at every pc of a block (END: all of them).
fn dead_of(code: &Code) -> Vec<u8> {
    let len = code.instrs.len();
    let ud = uses_defs(code);
    let succ: Vec<Vec<usize>> = (0..len).map(|pc| cfg::successors(code, pc)).collect();
    let mut live = vec![0u8; len + 1];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..len).rev() {
            let out = succ[pc].iter().fold(0u8, |m, &s| m | live[s.min(len)]);
            let new = ud[pc].0 | (out & !ud[pc].1);
            if new != live[pc] {
                live[pc] = new;
                changed = true;
            }
        }
    }
    let all = if code.regs.len() >= 8 {
        u8::MAX
    } else {
        (1u8 << code.regs.len()) - 1
    };
    live.iter().map(|l| all & !l).collect()
}

impl Liveness {
    /// The liveness of a program's blocks; `None` when no register is
    /// ever dead (nothing to clear).
    pub fn new(m: &Machine) -> Option<Liveness> {
        let p = &m.program;
        let dead: Vec<Vec<u8>> = p.codes.iter().map(dead_of).collect();
        if dead.iter().all(|d| d.iter().all(|&x| x == 0)) {
            return None;
        }
        let n = p.workgroup_size as usize;
        let wg_range = (0..m.num_invocations())
            .map(|i| {
                let w = m.coords(i).0;
                (w * n, (w + 1) * n)
            })
            .collect();
        Some(Liveness { dead, wg_range })
    }

    /// Clears the dead registers of the invocations of `inv`'s workgroup
    /// (a step changes no other invocation: barriers and collectives
    /// release only their own workgroup).
    pub fn clear(&self, m: &Machine, s: &mut [u64], inv: usize) {
        let (lo, hi) = self.wg_range[inv];
        for i in lo..hi {
            let pc = m.pc(s, i);
            let code = m.code_index(i);
            let mut dead = self.dead[code][pc.min(self.dead[code].len() - 1)];
            while dead != 0 {
                let r = dead.trailing_zeros() as usize;
                dead &= dead - 1;
                let (off, w) = m.reg_range(i, r);
                set_bits(s, off, w, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use progress_litmus::kernel::litmus;

    #[test]
    fn a_value_never_read_is_dead_and_a_loop_keeps_its_register_live() {
        let p = litmus::parse(
            "values 4;\nworkgroups 1;\nglobal x;\nglobal y;\nkernel {\nl:\n  s = x;\n  r = y;\n  if (x != s) goto l;\n}\n",
        )
        .unwrap();
        let code = &p.codes[0];
        let d = dead_of(code);
        let (s, r) = (
            code.regs.iter().position(|n| n == "s").unwrap(),
            code.regs.iter().position(|n| n == "r").unwrap(),
        );
        // r is never read: dead everywhere; s is live from its load to
        // the comparison, dead before the load (overwritten first).
        assert!(d.iter().all(|&x| x & (1 << r) != 0));
        assert_eq!(d[0] & (1 << s), 1 << s);
        assert_eq!(d[1] & (1 << s), 0);
        assert_eq!(d[2] & (1 << s), 0);
        assert_eq!(d[3], (1 << code.regs.len()) - 1);
    }
}
