//! Which moves the counted product explores from a state (docs/KERNEL.md
//! §8.10): every mover's, or one that may go first alone (§8.2, §8.7).

use super::super::scopes;
use super::space::{Space, St, WAIT};
use progress_litmus::kernel::program::Instr;

impl Space<'_> {
    /// The moves explored from `st`, each `(workgroup, class, times)`:
    /// every mover's once, or where the reduction applies, the first
    /// pending Terminate (with no occupancy bound below W, a Terminate
    /// changes nobody else's moves), else the first mover whose step is
    /// local or an arrival that waits (not from a loop head, leaving F as
    /// it is), alone (§8.2, §8.7). A move that goes first is taken by the
    /// class's members one after the other, as many times as each may
    /// still go first (§8.10: all of them, but at a `choose` one, and at
    /// a barrier not the arrival that would complete it).
    pub fn explored(&self, st: &St) -> Vec<(usize, usize, u16)> {
        let all = self.movers(st);
        let once = |m: Vec<(usize, usize)>| m.into_iter().map(|(w, ci)| (w, ci, 1)).collect();
        if self.reduce {
            let admits = self.model.occupancy.is_some_and(|k| (k as usize) < self.w);
            let pending = |&&(w, ci): &&(usize, usize)| {
                st.wgs[w][ci].0[0] as usize >= self.p.codes[self.code[w]].instrs.len()
            };
            let first: Vec<_> = all
                .iter()
                .copied()
                .filter(|m| !admits && pending(&m))
                .collect();
            if !first.is_empty() {
                let ms = self.least(st, first);
                return ms
                    .into_iter()
                    .map(|(w, ci)| (w, ci, st.wgs[w][ci].1))
                    .collect();
            }
            // Without symmetry the first such move is taken: stop there.
            let take = if self.sym { usize::MAX } else { 1 };
            let first: Vec<_> = all
                .iter()
                .copied()
                .filter(|&(w, ci)| self.goes_first(st, w, ci))
                .take(take)
                .collect();
            if !first.is_empty() {
                let ms = self.least(st, first);
                return ms
                    .into_iter()
                    .map(|(w, ci)| (w, ci, self.times(st, w, ci)))
                    .collect();
            }
        }
        once(all)
    }

    /// How many members of class `ci` of `w` take its step that goes
    /// first in a row: one at a `choose` (each member chooses), at a
    /// barrier all but the last when the last arrival would complete it,
    /// else all.
    fn times(&self, st: &St, w: usize, ci: usize) -> u16 {
        let (r, count) = &st.wgs[w][ci];
        let pc = r[0] as usize;
        match self.p.codes[self.code[w]].instrs[pc] {
            Instr::Choose { .. } => 1,
            Instr::Barrier if !self.others_arrive(st, w, ci) => count - 1,
            _ => *count,
        }
    }

    /// Whether some invocation of `w` outside class `ci` has not arrived
    /// at the barrier at `ci`'s pc.
    fn others_arrive(&self, st: &St, w: usize, ci: usize) -> bool {
        let pc = st.wgs[w][ci].0[0];
        st.wgs[w]
            .iter()
            .enumerate()
            .any(|(k, (o, _))| k != ci && !(o[1] & WAIT != 0 && o[0] == pc))
    }

    fn goes_first(&self, st: &St, w: usize, ci: usize) -> bool {
        let (r, count) = &st.wgs[w][ci];
        let pc = r[0] as usize;
        let code = &self.p.codes[self.code[w]];
        if pc >= code.instrs.len() || self.heads[self.code[w]] >> pc & 1 == 1 {
            return false;
        }
        if self.w > 1 {
            let f = scopes::after_step(self.model.device, st.f, w, self.terminated(st));
            if f != st.f {
                return false;
            }
        }
        match code.instrs[pc] {
            ref i if i.is_local() => true,
            Instr::Barrier => *count > 1 || self.others_arrive(st, w, ci),
            _ => false,
        }
    }
}
