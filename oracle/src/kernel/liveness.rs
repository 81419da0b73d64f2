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
//!
//! *Determined collectives* (§8.5) extend the map with values: once some
//! lane of a subgroup is at a collective whose result its own operand
//! already decides (`subgroupAll` of a 0, `subgroupAny` of a non-zero,
//! `subgroupBroadcastFirst` with lane 0 there), the operands of every lane
//! at that collective are read by nobody (each lane there can only arrive;
//! the completing arrival computes the result they cannot change) and are
//! set to one value, when the operand register is dead after the
//! collective or is its destination.

use progress_litmus::kernel::cfg;
use progress_litmus::kernel::machine::{set_bits, Machine};
use progress_litmus::kernel::program::{
    AtomicOp, Code, CollectiveOp, Instr, Operand, MAX_INVOCATIONS,
};
use std::ops::Range;

/// The live registers of every pc of every code block.
#[derive(Clone, Debug)]
pub struct Liveness {
    /// Per code block, per pc (END included): the registers dead there,
    /// one bit a register.
    dead: Vec<Vec<u8>>,
    /// Per invocation, per pc (END included): the bits of the state its
    /// dead registers there take, as (word, bits) twice (`dead` in the
    /// state's layout); `None` if some register block spans more than
    /// two words.
    masks: Option<Masks>,
    /// Per invocation: its workgroup's first and last invocation + 1.
    wg_range: Vec<(usize, usize)>,
    /// Per code block, per pc: the collective there whose operand register
    /// dies with it (op, register), for determined collectives; empty
    /// when none applies (lockstep and SIMT-Step machines, where a
    /// collective is one step of its active lanes, or no such collective).
    decided: Vec<Vec<Option<(CollectiveOp, u8)>>>,
    /// Per code block, the pcs of `decided` with a collective, one bit each.
    decided_pcs: Vec<u64>,
    /// The subgroup size.
    sg_size: usize,
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

/// Per pc of a block: the collective whose operand is a register dead
/// after it (or overwritten by it), with that register.
fn decided_of(code: &Code, dead: &[u8]) -> Vec<Option<(CollectiveOp, u8)>> {
    code.instrs
        .iter()
        .enumerate()
        .map(|(pc, i)| match *i {
            Instr::Collective {
                op,
                dst,
                src: Operand::Reg(a),
            } if a == dst || dead[pc + 1] & (1 << a) != 0 => Some((op, a)),
            _ => None,
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

/// Bits of a state to clear, as (word, bits) twice (unused: bits 0).
type WordMasks = [(u32, u64); 2];

/// [`Liveness::masks`] in one table: every invocation's pcs in a row.
#[derive(Clone, Debug)]
struct Masks {
    all: Vec<WordMasks>,
    /// Per invocation, its first row in `all` and its last pc (END).
    at: Vec<(u32, u32)>,
}

/// [`Liveness::masks`]: per invocation, per pc, the state bits of its
/// dead registers, in at most two words (else `None`).
fn clear_masks(m: &Machine, dead: &[Vec<u8>]) -> Option<Masks> {
    let per_inv = clear_masks_of(m, dead)?;
    let mut all = Vec::new();
    let mut at = Vec::new();
    for by_pc in per_inv {
        at.push((all.len() as u32, by_pc.len() as u32 - 1));
        all.extend(by_pc);
    }
    Some(Masks { all, at })
}

/// [`clear_masks`], per invocation.
fn clear_masks_of(m: &Machine, dead: &[Vec<u8>]) -> Option<Vec<Vec<WordMasks>>> {
    (0..m.num_invocations())
        .map(|i| {
            dead[m.code_index(i)]
                .iter()
                .map(|&d| {
                    let mut words: Vec<(u32, u64)> = Vec::new();
                    for r in (0..8).filter(|r| d >> r & 1 != 0) {
                        let (off, w) = m.reg_range(i, r);
                        for b in off..off + w {
                            match words.iter_mut().find(|x| x.0 == b / 64) {
                                Some(x) => x.1 |= 1 << (b % 64),
                                None => words.push((b / 64, 1 << (b % 64))),
                            }
                        }
                    }
                    match words[..] {
                        [] => Some([(0, 0), (0, 0)]),
                        [a] => Some([a, (0, 0)]),
                        [a, b] => Some([a, b]),
                        _ => None,
                    }
                })
                .collect()
        })
        .collect()
}

impl Liveness {
    /// The liveness of a program's blocks; `None` when no register is
    /// ever dead (nothing to clear).
    pub fn new(m: &Machine) -> Option<Liveness> {
        let p = &m.program;
        let dead: Vec<Vec<u8>> = p.codes.iter().map(dead_of).collect();
        let interleaved = !m.lockstep() && m.direct().is_none();
        let decided: Vec<Vec<Option<(CollectiveOp, u8)>>> = if interleaved {
            p.codes
                .iter()
                .zip(&dead)
                .map(|(c, d)| decided_of(c, d))
                .collect()
        } else {
            Vec::new()
        };
        let decided = if decided.iter().flatten().any(Option::is_some) {
            decided
        } else {
            Vec::new()
        };
        if dead.iter().all(|d| d.iter().all(|&x| x == 0)) && decided.is_empty() {
            return None;
        }
        let n = p.workgroup_size as usize;
        let wg_range = (0..m.num_invocations())
            .map(|i| {
                let w = m.coords(i).0;
                (w * n, (w + 1) * n)
            })
            .collect();
        let masks = clear_masks(m, &dead);
        let decided_pcs = decided
            .iter()
            .map(|d| {
                d.iter()
                    .enumerate()
                    .filter(|(_, x)| x.is_some())
                    .fold(0u64, |b, (pc, _)| b | 1 << pc)
            })
            .collect();
        Some(Liveness {
            dead,
            masks,
            wg_range,
            decided,
            decided_pcs,
            sg_size: p.subgroup_size.max(1) as usize,
        })
    }

    /// Clears the dead registers of the invocations of `inv`'s workgroup
    /// (a step changes no other invocation: barriers and collectives
    /// release only their own workgroup).
    pub fn clear(&self, m: &Machine, s: &mut [u64], inv: usize) {
        let (lo, hi) = self.wg_range[inv];
        self.clear_invocations(m, s, lo..hi);
        if !self.decided.is_empty() {
            for first in (lo..hi).step_by(self.sg_size) {
                self.settle_collectives(m, s, first..(first + self.sg_size).min(hi));
            }
        }
    }

    /// [`Liveness::clear`] after a step that changed no invocation but
    /// `inv` (interleaved lanes, no barrier or collective), of a state the
    /// map leaves as it is: only `inv`'s registers and its subgroup's
    /// collectives can change, as the map of any other invocation or
    /// subgroup reads only its own pcs and registers, as they were
    /// (§8.5: the map is idempotent, and every state the product expands
    /// is its image or the initial state, which it keeps).
    pub fn clear_one(&self, m: &Machine, s: &mut [u64], inv: usize) {
        self.clear_invocations(m, s, inv..inv + 1);
        if !self.decided.is_empty() {
            let first = inv - m.coords(inv).3;
            let hi = self.wg_range[inv].1;
            self.settle_collectives(m, s, first..(first + self.sg_size).min(hi));
        }
    }

    /// Clears the dead registers of invocations `invs`.
    fn clear_invocations(&self, m: &Machine, s: &mut [u64], invs: Range<usize>) {
        match &self.masks {
            Some(masks) => {
                for i in invs {
                    let (first, end) = masks.at[i];
                    let pc = (m.pc(s, i) as u32).min(end);
                    let [(w0, b0), (w1, b1)] = masks.all[(first + pc) as usize];
                    s[w0 as usize] &= !b0;
                    s[w1 as usize] &= !b1;
                }
            }
            None => self.clear_registers(m, s, invs),
        }
    }

    /// Clears the dead registers of invocations `invs`, register by
    /// register.
    fn clear_registers(&self, m: &Machine, s: &mut [u64], invs: Range<usize>) {
        for i in invs {
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

    /// Determined collectives in the subgroup of `lanes`: for each lane at
    /// such a collective (the first at its pc), if the operands of the
    /// lanes there decide the result, sets every one of them to the value
    /// that decides it (§8.5).
    fn settle_collectives(&self, m: &Machine, s: &mut [u64], lanes: Range<usize>) {
        let code = m.code_index(lanes.start);
        let decided_pcs = self.decided_pcs[code];
        // The lanes' pcs, decoded once (settling writes registers only).
        let mut pcs = [0u8; MAX_INVOCATIONS];
        for i in lanes.clone() {
            pcs[i] = m.pc(s, i) as u8;
        }
        for i in lanes.clone() {
            let pc = pcs[i] as usize;
            if decided_pcs >> pc & 1 == 0 {
                continue;
            }
            let Some((op, a)) = self.decided[code].get(pc).copied().flatten() else {
                continue;
            };
            // The lanes there, as bits from the first lane.
            let there = at(m, &pcs, &lanes, pc);
            if there.trailing_zeros() as usize != i - lanes.start {
                continue; // settled from the first lane at this pc
            }
            let Some(v) = self.determined(m, s, &lanes, pc, there) else {
                continue;
            };
            for j in lanes
                .clone()
                .filter(|j| there >> (j - lanes.start) & 1 != 0)
            {
                if op == CollectiveOp::BroadcastFirst && j == lanes.start {
                    continue; // lane 0's operand is the result
                }
                let (off, w) = m.reg_range(j, a as usize);
                set_bits(s, off, w, v);
            }
        }
    }

    /// The value that settles the determined collective at `pc` in the
    /// subgroup of `lanes` (§8.5), if the collective there is one whose
    /// operand dies with it and the operands of the lanes at it (`there`:
    /// [`at`]) decide its result.
    fn determined(
        &self,
        m: &Machine,
        s: &[u64],
        lanes: &Range<usize>,
        pc: usize,
        there: u64,
    ) -> Option<u64> {
        let code = m.code_index(lanes.start);
        let (op, a) = self.decided.get(code)?.get(pc).copied().flatten()?;
        let mut at = (lanes.clone()).filter(|j| there >> (j - lanes.start) & 1 != 0);
        match op {
            CollectiveOp::All => at.any(|j| m.reg(s, j, a as usize) == 0).then_some(0),
            CollectiveOp::Any => at.any(|j| m.reg(s, j, a as usize) != 0).then_some(1),
            CollectiveOp::BroadcastFirst => (there & 1 != 0).then_some(0),
        }
    }

    /// Whether invocation `i`'s next instruction `ins`, at `pc`, is a
    /// *blind load* (§8.7): a load whose value nobody will read, because
    /// its register is dead after it or is the operand of a collective
    /// next that the lanes already there decide. It then commutes with
    /// every write to its cell: the value is cleared in either order.
    /// `pcs`: every invocation's pc at `s` (the `pc` of [`Machine::view`]).
    pub fn blind(
        &self,
        m: &Machine,
        s: &[u64],
        pcs: &[u8; MAX_INVOCATIONS],
        i: usize,
        pc: usize,
        ins: &Instr,
    ) -> bool {
        let Instr::Atomic {
            op: AtomicOp::Load,
            dst: Some(r),
            branch: None,
            ..
        } = *ins
        else {
            return false;
        };
        let code = m.code_index(i);
        if self.dead[code][pc + 1] >> r & 1 != 0 {
            return true;
        }
        let lane = m.coords(i).3;
        let lanes = i - lane..(i - lane + self.sg_size).min(self.wg_range[i].1);
        self.decided
            .get(code)
            .and_then(|d| d.get(pc + 1).copied().flatten())
            .is_some_and(|(_, a)| a == r)
            && (self.determined(m, s, &lanes, pc + 1, at(m, pcs, &lanes, pc + 1))).is_some()
    }
}

/// The lanes of `lanes` at `pc` (their pcs `pcs`, by invocation) in the
/// same code block as the first, as bits from the first.
fn at(m: &Machine, pcs: &[u8; MAX_INVOCATIONS], lanes: &Range<usize>, pc: usize) -> u64 {
    let code = m.code_index(lanes.start);
    (lanes.clone())
        .filter(|&j| pcs[j] as usize == pc && m.code_index(j) == code)
        .fold(0, |b, j| b | 1 << (j - lanes.start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use progress_litmus::kernel::litmus;

    /// Steps invocation `i` of `m` (interleaved: actor `i`) and settles.
    fn step(m: &Machine, l: &Liveness, s: &[u64; 4], i: usize) -> [u64; 4] {
        let mut out = Vec::new();
        m.steps(s, i, &mut out).unwrap();
        let mut t = out[0].1;
        l.clear(m, &mut t, i);
        t
    }

    #[test]
    fn a_collective_its_lanes_decide_settles_their_operands() {
        // v is each lane's local id: lane 0 decides subgroupAll (0), any
        // lane but 0 decides subgroupAny (non-zero).
        for (op, value) in [("subgroupAll", 0), ("subgroupAny", 1)] {
            let p = litmus::parse(&format!(
                "values 4;\nworkgroups 1;\nworkgroup_size 3;\nsubgroup_size 3;\nglobal x;\nkernel {{\n  v = local_id;\n  v = {op}(v);\n  x = v;\n}}\n"
            ))
            .unwrap();
            let m = Machine::new(&p, progress_litmus::kernel::model::Mode::Interleaved).unwrap();
            let l = Liveness::new(&m).unwrap();
            let mut s = [0u64; 4];
            m.init(&mut s);
            let v = |s: &[u64; 4], i: usize| m.reg(s, i, 0);
            // Lane 2 alone at the collective (v = 2): decided only by Any.
            let s2 = step(&m, &l, &s, 2);
            assert_eq!(v(&s2, 2), if value == 1 { 1 } else { 2 }, "{op}");
            // Lanes 1 and 2 there (v = 1, 2): Any settles both to 1.
            let s12 = step(&m, &l, &s2, 1);
            assert_eq!(
                (v(&s12, 1), v(&s12, 2)),
                if value == 1 { (1, 1) } else { (1, 2) }
            );
            // All three there: lane 0's 0 decides All, every operand is 0.
            let s012 = step(&m, &l, &s12, 0);
            assert!((0..3).all(|i| v(&s012, i) == if value == 1 { 1 } else { 0 }));
            // Lane 0 first, then lane 1: settled on lane 1's arrival.
            let s01 = step(&m, &l, &step(&m, &l, &s, 0), 1);
            assert_eq!(v(&s01, 1), if value == 1 { 1 } else { 0 });
        }
    }

    #[test]
    fn a_load_is_blind_when_its_value_dies_or_joins_a_decided_collective() {
        let p = litmus::parse(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\nglobal y;\nkernel {\n  v = x;\n  v = subgroupAll(v);\n  r = y;\n  x = v;\n}\n",
        )
        .unwrap();
        let m = Machine::new(&p, progress_litmus::kernel::model::Mode::Interleaved).unwrap();
        let l = Liveness::new(&m).unwrap();
        let code = &p.codes[0];
        let mut s = [0u64; 4];
        m.init(&mut s);
        // r = y is never read: blind anywhere.
        assert!(l.blind(&m, &s, &m.view(&s).pc, 0, 2, &code.instrs[2]));
        // v = x: not blind while nobody is at the collective, blind once
        // lane 1 waits there with the 0 it read.
        assert!(!l.blind(&m, &s, &m.view(&s).pc, 0, 0, &code.instrs[0]));
        let s1 = step(&m, &l, &s, 1);
        assert!(l.blind(&m, &s1, &m.view(&s1).pc, 0, 0, &code.instrs[0]));
        // A store is never blind.
        assert!(!l.blind(&m, &s1, &m.view(&s1).pc, 0, 3, &code.instrs[3]));
    }

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
