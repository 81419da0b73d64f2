//! AXB execution on packed states.
//!
//! A program state (memory and pcs) is packed into one `u64`: four bits per
//! location in bits 0..32, four bits per pc in bits 32..64. State spaces are
//! hashed millions of times by the synthesizer and the oracle, so states are
//! plain integers rather than vectors.

use crate::axb::test::{Test, MAX_LOCS, MAX_THREADS};

/// A packed program state: memory and pcs.
pub type PState = u64;

const PC_SHIFT: u32 = 32;

#[derive(Clone, Copy, Debug)]
struct Op {
    loc_shift: u32,
    check: u64,
    exch: Option<u64>,
    jump: u64,
}

/// The outcome of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepInfo {
    /// The thread's pc before the step.
    pub pc: usize,
    /// The value read.
    pub old: u8,
    /// Whether the comparison held (the branch was taken).
    pub taken: bool,
}

/// A test compiled for stepping.
#[derive(Clone, Debug)]
pub struct Machine {
    n: usize,
    lens: [u8; MAX_THREADS],
    /// `ops[t * 16 + pc]`.
    ops: Vec<Op>,
}

impl Machine {
    /// Compiles a valid test (see [`Test::validate`]).
    pub fn new(test: &Test) -> Machine {
        let n = test.threads.len();
        assert!(n <= MAX_THREADS);
        let mut lens = [0u8; MAX_THREADS];
        let mut ops = vec![
            Op {
                loc_shift: 0,
                check: 0,
                exch: None,
                jump: 0,
            };
            n * 16
        ];
        for (t, th) in test.threads.iter().enumerate() {
            lens[t] = th.len() as u8;
            for (pc, i) in th.iter().enumerate() {
                assert!((i.loc as usize) < MAX_LOCS);
                ops[t * 16 + pc] = Op {
                    loc_shift: 4 * i.loc as u32,
                    check: i.check as u64,
                    exch: i.exch.map(u64::from),
                    jump: i.jump.pc(th.len()) as u64,
                };
            }
        }
        Machine { n, lens, ops }
    }

    pub fn num_threads(&self) -> usize {
        self.n
    }

    /// Instructions in thread `t`; its END pc.
    pub fn len(&self, t: usize) -> usize {
        self.lens[t] as usize
    }

    /// Memory zero, every pc 0.
    pub fn initial(&self) -> PState {
        0
    }

    pub fn pc(&self, s: PState, t: usize) -> usize {
        ((s >> (PC_SHIFT + 4 * t as u32)) & 0xf) as usize
    }

    pub fn mem(&self, s: PState, loc: usize) -> u8 {
        ((s >> (4 * loc as u32)) & 0xf) as u8
    }

    /// Whether thread `t` has reached END.
    pub fn finished(&self, s: PState, t: usize) -> bool {
        self.pc(s, t) >= self.len(t)
    }

    /// Whether every thread has reached END.
    pub fn all_finished(&self, s: PState) -> bool {
        (0..self.n).all(|t| self.finished(s, t))
    }

    /// Bit `t` set iff thread `t` has reached END.
    pub fn finished_mask(&self, s: PState) -> u32 {
        (0..self.n)
            .filter(|&t| self.finished(s, t))
            .fold(0, |m, t| m | 1 << t)
    }

    /// Executes one instruction of thread `t`; `None` if `t` has finished.
    #[inline]
    pub fn step(&self, s: PState, t: usize) -> Option<(PState, StepInfo)> {
        let pc_shift = PC_SHIFT + 4 * t as u32;
        let pc = (s >> pc_shift) & 0xf;
        if pc >= self.lens[t] as u64 {
            return None;
        }
        let op = self.ops[t * 16 + pc as usize];
        let old = (s >> op.loc_shift) & 0xf;
        let mut next = s;
        if let Some(x) = op.exch {
            next = (next & !(0xf << op.loc_shift)) | (x << op.loc_shift);
        }
        let taken = old == op.check;
        let new_pc = if taken { op.jump } else { pc + 1 };
        next = (next & !(0xf << pc_shift)) | (new_pc << pc_shift);
        Some((
            next,
            StepInfo {
                pc: pc as usize,
                old: old as u8,
                taken,
            },
        ))
    }

    /// `Mem=[a,b] pc=[x,y]` with END for finished threads; `locs` locations.
    pub fn describe(&self, s: PState, locs: usize) -> String {
        let mem: Vec<String> = (0..locs).map(|l| self.mem(s, l).to_string()).collect();
        let pcs: Vec<String> = (0..self.n)
            .map(|t| {
                if self.finished(s, t) {
                    "END".to_string()
                } else {
                    self.pc(s, t).to_string()
                }
            })
            .collect();
        format!("Mem=[{}] pc=[{}]", mem.join(","), pcs.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axb::text;

    #[test]
    fn steps_follow_the_axb_semantics() {
        // T0: if (Exch(Mem[0],1) == 0) goto 0;   T1: Mem[1] = 3; if (Mem[1] == 3) goto END
        let t = text::parse("THREAD0\natomic_exch_branch(0,0,1,0)\nTHREAD1\natomic_store(1,3)\natomic_chk_branch(1,3,END)\n").unwrap();
        let m = Machine::new(&t);
        let s0 = m.initial();
        let (s1, i) = m.step(s0, 0).unwrap();
        assert!(i.taken);
        assert_eq!((m.pc(s1, 0), m.mem(s1, 0)), (0, 1));
        let (s2, i) = m.step(s1, 0).unwrap();
        assert!(!i.taken);
        assert!(m.finished(s2, 0));
        assert!(m.step(s2, 0).is_none());
        let (s3, _) = m.step(s2, 1).unwrap();
        assert_eq!((m.pc(s3, 1), m.mem(s3, 1)), (1, 3));
        let (s4, i) = m.step(s3, 1).unwrap();
        assert!(i.taken && m.all_finished(s4));
        assert_eq!(m.describe(s4, 2), "Mem=[1,3] pc=[END,END]");
    }
}
