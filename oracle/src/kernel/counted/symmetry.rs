//! Symmetry between workgroups in the counted product (docs/KERNEL.md
//! §8.10): where the device scheduler ignores ids (unfair, OBE, fair), no
//! occupancy bound orders admissions, every workgroup runs one block and
//! none reads `wg_id`, permuting workgroups (with their shared cells and
//! F bits) is an automorphism of the product, as in §8.1; states are
//! kept with their workgroups sorted.

use super::space::{Space, St};
use progress_litmus::kernel::program::{IdKind, Operand, Program};
use progress_litmus::kernel::{Sched, ScopedModel};

/// Whether permuting the workgroups of `p` is an automorphism of its
/// product with `model`.
pub fn workgroups_interchangeable(p: &Program, model: &ScopedModel) -> bool {
    let w = p.workgroups as usize;
    let reads_wg_id = p.codes.iter().any(|c| {
        c.instrs
            .iter()
            .any(|i| i.operands().contains(&Operand::Id(IdKind::WgId)))
    });
    w > 1
        && matches!(model.device, Sched::Unfair | Sched::Obe | Sched::Fair)
        && model.occupancy.is_none_or(|k| k as usize >= w)
        && p.wg_code.iter().all(|&c| c == p.wg_code[0])
        && !reads_wg_id
}

impl Space<'_> {
    /// What workgroup `w` of `st` is, for sorting: its F bit, its shared
    /// cells and its classes.
    pub(super) fn wg_key(&self, st: &St, w: usize) -> Vec<u8> {
        let mut k = vec![(st.f >> w & 1) as u8];
        for (l, loc) in self.p.locations.iter().enumerate() {
            if loc.shared {
                let at = self.loc_base[l] + w * loc.len();
                k.extend_from_slice(&st.cells[at..at + loc.len()]);
            }
        }
        for (r, c) in &st.wgs[w] {
            k.extend_from_slice(r);
            k.extend_from_slice(&c.to_be_bytes());
        }
        k
    }

    /// `st` with its workgroups sorted by [`Space::wg_key`], where they
    /// are interchangeable.
    pub fn canonicalize(&self, st: &mut St) {
        if !self.sym {
            return;
        }
        let keys: Vec<Vec<u8>> = (0..self.w).map(|w| self.wg_key(st, w)).collect();
        let mut order: Vec<usize> = (0..self.w).collect();
        order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
        if order.iter().enumerate().all(|(i, &o)| i == o) {
            return;
        }
        let old = st.clone();
        st.f = 0;
        for (i, &o) in order.iter().enumerate() {
            st.f |= (old.f >> o & 1) << i;
            st.wgs[i] = old.wgs[o].clone();
            for (l, loc) in self.p.locations.iter().enumerate() {
                if loc.shared {
                    let (to, from) = (
                        self.loc_base[l] + i * loc.len(),
                        self.loc_base[l] + o * loc.len(),
                    );
                    st.cells[to..to + loc.len()]
                        .copy_from_slice(&old.cells[from..from + loc.len()]);
                }
            }
        }
    }

    /// Of the moves `first` that may go first, the one to take: the
    /// first; where workgroups are interchangeable, every one whose
    /// workgroup and record are least, so that the choice does not
    /// depend on the workgroups' order (twins' moves lead to one
    /// canonical state).
    pub(super) fn least(&self, st: &St, first: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
        if !self.sym {
            return vec![first[0]];
        }
        let keys: Vec<Vec<u8>> = (0..self.w).map(|w| self.wg_key(st, w)).collect();
        let key = |&(w, ci): &(usize, usize)| (&keys[w], &st.wgs[w][ci].0);
        let least = first.iter().map(key).min().expect("some move goes first");
        first.iter().copied().filter(|m| key(m) == least).collect()
    }
}
