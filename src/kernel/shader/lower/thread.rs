//! Simplifying the translation before it is decided (docs/KERNEL.md
//! §10.5): jump threading, unreachable code and dead registers.
//!
//! Shaders written as state machines (a `pc` variable and a `switch` in a
//! loop, as `backends emit --bare` writes, or as hand-written interpreters
//! are) translate into long chains of branches on a register whose value
//! the jump into the chain already decides. Three rewrites remove them,
//! each dropping only *local* steps (jumps, branches on registers,
//! assignments to registers that are never read again), never a memory
//! access, barrier or collective:
//!
//! 1. **Jump threading.** Where the register values a jump leaves behind
//!    are known (constants assigned on the straight-line code before it,
//!    with no other way in), a jump whose target is a chain of `goto`s and
//!    branches those values decide jumps to the chain's end at once. A
//!    chain that loops is left as it is (an invocation that spins on local
//!    steps still spins).
//! 2. **Unreachable code** (no path from the entry) is removed.
//! 3. **Dead registers**: an assignment to a register that no path reads
//!    before it is written again is removed; an atomic's dead result is
//!    dropped (the access stays).
//!
//! Every remaining instruction keeps its shader position. Removing local
//! steps keeps every verdict: they touch no shared state, so they commute
//! with every other invocation's steps and no schedule of the original
//! program is lost or gained but for the stuttering of these steps
//! (`backends/tests/bare.rs` checks it: all 483 published tests read back
//! with and without these rewrites give the published verdicts). Under
//! lockstep subgroups (§2.6) the pcs lanes share are those of the
//! simplified program.

use super::*;

/// Register values known at a point: `Some(v)` for a known constant.
type Env = [Option<u16>; NREGS];

/// How many rounds of threading at most (each removes at least one jump
/// into a chain; programs are at most a few hundred instructions).
const MAX_ROUNDS: usize = 64;

impl<'a> Lower<'a> {
    /// The three rewrites of the module doc, to a fixpoint.
    pub(super) fn simplify(&mut self) {
        for _ in 0..MAX_ROUNDS {
            // Structured constructs say where lanes reconverge (§10.6):
            // threading would move that; unreachable code goes but for
            // loops' back edges, which a loop's construct needs.
            if !self.thread {
                self.remove_unreachable();
                self.drop_fallthrough_jumps();
                if !self.remove_dead_assignments() {
                    break;
                }
                continue;
            }
            let threaded = self.thread_jumps();
            let entry = self.thread_entry();
            self.remove_unreachable();
            self.drop_fallthrough_jumps();
            let dead = self.remove_dead_assignments();
            if !(threaded || entry || dead) {
                break;
            }
        }
    }

    /// The pc a label stands for.
    fn at(&self, label: usize) -> usize {
        self.labels[label].expect("every label is bound before simplifying")
    }

    /// The pcs some jump goes to.
    fn jump_targets(&self) -> Vec<bool> {
        let mut t = vec![false; self.instrs.len() + 1];
        for &(_, l) in &self.fixups {
            t[self.at(l)] = true;
        }
        t
    }

    /// The registers known before `pc`: walking back over straight-line
    /// code that no jump enters, the last constant assigned to each
    /// register; at the entry, every register not yet written is 0.
    fn known_before(&self, pc: usize, targets: &[bool]) -> Env {
        let mut env = [None; NREGS];
        let mut seen = [false; NREGS];
        let mut q = pc;
        loop {
            if targets[q] {
                return env;
            }
            if q == 0 {
                for r in 0..NREGS {
                    if !seen[r] {
                        env[r] = Some(0);
                    }
                }
                return env;
            }
            let prev = &self.instrs[q - 1];
            if matches!(prev, Instr::Goto { .. }) {
                return env;
            }
            if let Some(d) = prev.dst() {
                let d = d as usize;
                if !seen[d] {
                    seen[d] = true;
                    if let Instr::Assign {
                        op: None,
                        a: Operand::Imm(c),
                        ..
                    } = prev
                    {
                        env[d] = Some(*c);
                    }
                }
            }
            q -= 1;
        }
    }

    /// Where a chain of jumps and decided branches starting at `pc` ends,
    /// and the loop of the first back edge on it (a jump threaded through
    /// a loop's back edge becomes one: `Translation::back_edges`).
    fn chase(
        &self,
        mut pc: usize,
        env: &Env,
        jumps: &HashMap<usize, usize>,
    ) -> (usize, Option<u16>) {
        let mut back = None;
        let value = |o: Operand| match o {
            Operand::Imm(v) => Some(v),
            Operand::Reg(r) => env[r as usize],
            Operand::Id(_) => None,
        };
        let mut visited = BTreeSet::new();
        while pc < self.instrs.len() && visited.insert(pc) {
            let next = match self.instrs[pc] {
                Instr::Goto { .. } => self.at(jumps[&pc]),
                Instr::Branch { a, cmp, b, .. } => match (value(a), value(b)) {
                    (Some(x), Some(y)) if cmp.eval(x, y) => self.at(jumps[&pc]),
                    (Some(_), Some(_)) => pc + 1,
                    _ => break,
                },
                _ => break,
            };
            if visited.contains(&next) {
                break;
            }
            if next != pc + 1 {
                back = back.or(self.back_edge_at[pc]);
            }
            pc = next;
        }
        (pc, back)
    }

    /// Jump threading (rewrite 1) over every jump; whether one changed.
    /// A branch on two constants (`while (true)`) is first a `goto` or
    /// nothing.
    fn thread_jumps(&mut self) -> bool {
        let mut changed = false;
        let mut keep = vec![true; self.instrs.len()];
        for (pc, i) in self.instrs.iter_mut().enumerate() {
            if let Instr::Branch {
                a: Operand::Imm(x),
                cmp,
                b: Operand::Imm(y),
                target,
            } = *i
            {
                if cmp.eval(x, y) {
                    *i = Instr::Goto { target };
                } else {
                    keep[pc] = false;
                }
                changed = true;
            }
        }
        self.remove(&keep);
        let targets = self.jump_targets();
        let jumps: HashMap<usize, usize> = self.fixups.iter().copied().collect();
        for k in 0..self.fixups.len() {
            let (pc, label) = self.fixups[k];
            let env = self.known_before(pc, &targets);
            let (to, back) = self.chase(self.at(label), &env, &jumps);
            if to != self.at(label) && to != pc {
                self.back_edge_at[pc] = self.back_edge_at[pc].or(back);
                self.labels.push(Some(to));
                self.fixups[k].1 = self.labels.len() - 1;
                changed = true;
            }
        }
        changed
    }

    /// The entry threaded too: when the chain at pc 0 is decided by the
    /// initial registers (all 0), the program starts with a jump to its
    /// end (one local step instead of the chain; the old pc 0 stays for
    /// the jumps to it).
    fn thread_entry(&mut self) -> bool {
        let jumps: HashMap<usize, usize> = self.fixups.iter().copied().collect();
        if !matches!(self.instrs.first(), Some(Instr::Branch { .. })) {
            return false;
        }
        let (to, _) = self.chase(0, &[Some(0); NREGS], &jumps);
        if to <= 1 {
            return false;
        }
        self.instrs.insert(
            0,
            Instr::Goto {
                target: Target::End,
            },
        );
        self.spans.insert(0, self.spans[0]);
        self.exact.insert(0, Exact::Same);
        self.plain_at.insert(0, false);
        self.back_edge_at.insert(0, None);
        for l in self.labels.iter_mut().flatten() {
            *l += 1;
        }
        for f in &mut self.fixups {
            f.0 += 1;
        }
        self.labels.push(Some(to + 1));
        self.fixups.push((0, self.labels.len() - 1));
        true
    }

    /// The pcs each instruction may go to next (`len`: the end).
    fn successors(&self, pc: usize, jumps: &HashMap<usize, usize>) -> Vec<usize> {
        match self.instrs[pc] {
            Instr::Goto { .. } => vec![self.at(jumps[&pc])],
            Instr::Branch { .. } | Instr::Choose { .. } => vec![self.at(jumps[&pc]), pc + 1],
            _ => vec![pc + 1],
        }
    }

    /// Removes the instructions no path from the entry reaches (rewrite 2).
    fn remove_unreachable(&mut self) {
        let jumps: HashMap<usize, usize> = self.fixups.iter().copied().collect();
        let len = self.instrs.len();
        let mut reached = vec![false; len + 1];
        let mut stack = vec![0];
        for &(lp, _, exit) in &self.constructs {
            if lp && !self.thread {
                stack.extend(self.labels[exit].and_then(|m| m.checked_sub(1)));
            }
        }
        while let Some(pc) = stack.pop() {
            if reached[pc] {
                continue;
            }
            reached[pc] = true;
            if pc < len {
                stack.extend(self.successors(pc, &jumps));
            }
        }
        reached.pop();
        self.remove(&reached);
    }

    /// Removes dead assignments and drops dead atomic results (rewrite
    /// 3); whether anything changed.
    fn remove_dead_assignments(&mut self) -> bool {
        let jumps: HashMap<usize, usize> = self.fixups.iter().copied().collect();
        let len = self.instrs.len();
        let regs = |os: Vec<Operand>| {
            os.into_iter().fold(0u16, |m, o| match o {
                Operand::Reg(r) => m | 1 << r,
                _ => m,
            })
        };
        // live[pc]: registers read on some path from pc before a write.
        let mut live = vec![0u16; len + 1];
        loop {
            let mut changed = false;
            for pc in (0..len).rev() {
                let out = self
                    .successors(pc, &jumps)
                    .into_iter()
                    .fold(0u16, |m, s| m | live[s]);
                let def = self.instrs[pc].dst().map_or(0, |d| 1u16 << d);
                let now = regs(self.instrs[pc].operands()) | (out & !def);
                if now != live[pc] {
                    live[pc] = now;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let outs: Vec<u16> = (0..len)
            .map(|pc| {
                self.successors(pc, &jumps)
                    .into_iter()
                    .fold(0u16, |m, s| m | live[s])
            })
            .collect();
        let mut keep = vec![true; len];
        let mut changed = false;
        for ((i, &out), k) in self.instrs.iter_mut().zip(&outs).zip(&mut keep) {
            match i {
                Instr::Assign { dst, .. } if out & (1 << *dst) == 0 => {
                    *k = false;
                    changed = true;
                }
                Instr::Atomic { dst, .. } if dst.is_some_and(|d| out & (1 << d) == 0) => {
                    *dst = None;
                    changed = true;
                }
                _ => {}
            }
        }
        self.remove(&keep);
        changed
    }

    /// Keeps the instructions `keep` says, renumbering labels (a label of
    /// a removed instruction moves to the next one kept) and jumps.
    pub(super) fn remove(&mut self, keep: &[bool]) {
        let mut new_pc = Vec::with_capacity(keep.len() + 1);
        let mut n = 0;
        for &k in keep {
            new_pc.push(n);
            n += k as usize;
        }
        new_pc.push(n);
        // A selection whose header branch goes is no construct any more.
        let labels = &self.labels;
        self.constructs.retain(|&(lp, h, _)| {
            lp || labels[h].is_none_or(|pc| keep.get(pc).copied().unwrap_or(true))
        });
        for l in self.labels.iter_mut().flatten() {
            *l = new_pc[*l];
        }
        self.fixups = self
            .fixups
            .iter()
            .filter(|(pc, _)| keep[*pc])
            .map(|&(pc, l)| (new_pc[pc], l))
            .collect();
        let mut k = keep.iter();
        self.instrs.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        self.spans.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        self.exact.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        self.plain_at.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        self.back_edge_at.retain(|_| *k.next().unwrap_or(&true));
    }
}
