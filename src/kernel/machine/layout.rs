//! The state layout every execution mode shares (docs/KERNEL.md §2):
//! memory cells first, then per invocation its fields, in one run of bits
//! (pc, registers, Terminate and wait flags, and the SIMT-Step fields),
//! and the accessors that read and write them. What only one mode keeps
//! is laid out by that mode's file (`lockstep.rs`: the reconvergence
//! stacks; `simt.rs`: the SIMT-Step fields' meaning; `interleaved.rs`:
//! the table its fast view reads).

use super::{get, set, Machine};
use crate::kernel::model::Direct;

#[derive(Clone, Debug)]
pub(super) struct Inv {
    pub(super) wg: usize,
    pub(super) local: usize,
    pub(super) sg: usize,
    pub(super) lane: usize,
    pub(super) code: usize,
    pub(super) pc_off: u32,
    pub(super) regs_off: u32,
    pub(super) term_off: u32,
    pub(super) wait_off: u32,
    /// SIMT-Step state (§2.9): the lanes of the invocation's dynamic block
    /// (`cur`), then per scope depth the lanes of the scope's instance,
    /// then the merge-wait and synchronised flags; `end` is one past them.
    /// Under SSO, which keeps no masks, the iteration counts of the counted
    /// loops containing its pc start here instead.
    pub(super) cur_off: u32,
    pub(super) end: u32,
}

impl Machine {
    /// Places every invocation's fields from bit `off`; returns the end.
    pub(super) fn lay_out_invocations(&mut self, mut off: u32) -> u32 {
        let (n, s) = (self.n, self.s);
        let direct = self.direct().is_some() && self.direct() != Some(Direct::Sso);
        for wg in 0..self.program.workgroups as usize {
            let code = self.program.wg_code[wg] as usize;
            let nregs = self.program.codes[code].regs.len() as u32;
            for local in 0..n {
                let pc_off = off;
                if !self.lockstep() {
                    off += self.pcb;
                }
                let regs_off = off;
                off += nregs * self.vb;
                let term_off = off;
                off += 1;
                let wait_off = off;
                if !self.lockstep() {
                    off += 1;
                }
                let cur_off = off;
                if direct {
                    off += (1 + self.simt.scope_depth as u32) * s as u32 + 2;
                }
                off += self.simt.iter_slots as u32 * self.simt.iter_bits;
                self.invs.push(Inv {
                    wg,
                    local,
                    sg: wg * (n / s) + local / s,
                    lane: local % s,
                    code,
                    pc_off,
                    regs_off,
                    term_off,
                    wait_off,
                    cur_off,
                    end: off,
                });
            }
        }
        off
    }

    /// Workgroup, id within the workgroup, global subgroup index and lane of
    /// invocation `i`.
    #[inline]
    pub fn coords(&self, i: usize) -> (usize, usize, usize, usize) {
        let v = &self.invs[i];
        (v.wg, v.local, v.sg, v.lane)
    }

    /// The length (END pc) of invocation `i`'s code.
    #[inline]
    pub fn code_len(&self, i: usize) -> usize {
        self.lens[self.invs[i].code]
    }

    /// The code block index of invocation `i`.
    #[inline]
    pub fn code_index(&self, i: usize) -> usize {
        self.invs[i].code
    }

    /// The cell of element `k` of workgroup `copy`'s copy of location `l`
    /// (copy 0 for a global location).
    #[inline]
    pub fn cell_of(&self, l: usize, copy: usize, k: usize) -> usize {
        self.loc_base[l] + copy * self.program.locations[l].len() + k
    }

    #[inline]
    pub fn mem(&self, s: &[u64], cell: usize) -> u16 {
        get(s, cell as u32 * self.vb, self.vb) as u16
    }

    #[inline]
    pub(super) fn set_mem(&self, s: &mut [u64], cell: usize, v: u16) {
        set(s, cell as u32 * self.vb, self.vb, v as u64)
    }

    #[inline]
    pub fn reg(&self, s: &[u64], i: usize, r: usize) -> u16 {
        get(s, self.invs[i].regs_off + r as u32 * self.vb, self.vb) as u16
    }

    #[inline]
    pub(super) fn set_reg(&self, s: &mut [u64], i: usize, r: usize, v: u16) {
        set(
            s,
            self.invs[i].regs_off + r as u32 * self.vb,
            self.vb,
            v as u64,
        )
    }

    /// Whether invocation `i` has signalled Terminate.
    #[inline]
    pub fn terminated(&self, s: &[u64], i: usize) -> bool {
        get(s, self.invs[i].term_off, 1) != 0
    }

    /// The offset of invocation `i`'s Terminate flag in a state.
    pub fn terminated_bit(&self, i: usize) -> u32 {
        self.invs[i].term_off
    }

    /// Bit `i` set iff invocation `i` has signalled Terminate.
    #[inline]
    pub fn terminated_mask(&self, s: &[u64]) -> u32 {
        self.invs
            .iter()
            .enumerate()
            .fold(0, |m, (i, v)| m | (get(s, v.term_off, 1) as u32) << i)
    }

    #[inline]
    pub(super) fn set_pc(&self, s: &mut [u64], i: usize, pc: usize) {
        set(s, self.invs[i].pc_off, self.pcb, pc as u64)
    }

    /// The bit range (offset, width) of register `r` of invocation `i`
    /// (the oracle clears registers no later step reads).
    pub fn reg_range(&self, i: usize, r: usize) -> (u32, u32) {
        (self.invs[i].regs_off + r as u32 * self.vb, self.vb)
    }

    /// The bit range (offset, width) of invocation `i`'s own fields (pc,
    /// registers, Terminate and wait flags), contiguous in the state: what
    /// symmetry reduction permutes.
    pub fn invocation_range(&self, i: usize) -> (u32, u32) {
        let v = &self.invs[i];
        let start = if self.lockstep() {
            v.regs_off
        } else {
            v.pc_off
        };
        let end = if self.lockstep() {
            v.term_off + 1
        } else {
            v.end
        };
        (start, end - start)
    }

    /// The bit ranges of workgroup `w`'s copies of the shared locations.
    pub fn shared_ranges(&self, w: usize) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for (l, loc) in self.program.locations.iter().enumerate() {
            if loc.shared {
                let first = self.loc_base[l] + w * loc.len();
                v.push((first as u32 * self.vb, loc.len() as u32 * self.vb));
            }
        }
        v
    }

    /// Whether every invocation has signalled Terminate.
    #[inline]
    pub fn all_terminated(&self, s: &[u64]) -> bool {
        (0..self.invs.len()).all(|i| self.terminated(s, i))
    }
}
