//! Scoped progress models (docs/KERNEL.md §3): a fair set F per scope.
//!
//! The entities form a tree: the device, its workgroups, their subgroups,
//! their invocations. Each inner entity runs a scheduler over its children
//! and keeps F, the children guaranteed fair execution, by the rules of
//! docs/SPEC.md §2 with threads replaced by children: a child *steps* when
//! an invocation inside it steps, and *terminates* when every invocation
//! inside it has signalled Terminate. An entity is *guaranteed* (in P) when
//! its parent is and it is in its parent's F; the device always is. A scope
//! whose entity has a single child keeps no F: that child is guaranteed
//! exactly when its parent is (the two carry the same obligation).
//!
//! F sets live in the packed state after the machine's fields, one bit per
//! child, so the product space is that of docs/SPEC.md §3 when every
//! workgroup has one invocation.

use progress_litmus::kernel::machine::{get_bits, set_bits, Machine};
use progress_litmus::kernel::{Sched, ScopedModel};

/// An F set's update by a step: (offset, width, value now, value after
/// the step), or none where no step changes it.
type FUpdate = Option<(u32, u32, u16, u16)>;

/// `t()` where `s` is LOBE (the only scheduler whose F after a step
/// reads the terminated children), else 0.
#[inline]
fn lobe(s: Sched, t: impl FnOnce() -> u16) -> u16 {
    if s == Sched::Lobe {
        t()
    } else {
        0
    }
}

/// Entity bits of the masks the checker uses: workgroups 0..8, subgroups
/// 8..24, invocations 24..40, the device 40.
pub const DEVICE: u64 = 1 << 40;

pub fn wg_bit(w: usize) -> u64 {
    1 << w
}

pub fn sg_bit(g: usize) -> u64 {
    1 << (8 + g)
}

pub fn inv_bit(i: usize) -> u64 {
    1 << (24 + i)
}

/// F when no child has started; `n` children.
pub fn initial(s: Sched, n: usize) -> u16 {
    match s {
        Sched::Unfair | Sched::Obe | Sched::Lobe | Sched::Lockstep => 0,
        Sched::Fair | Sched::Cm | Sched::Sm | Sched::Scf | Sched::Sso => ((1u32 << n) - 1) as u16,
        Sched::Hsa | Sched::HsaObe | Sched::Priority => 1,
    }
}

fn smallest_live(n: usize, terminated: u16) -> u16 {
    (0..n)
        .find(|&t| terminated & (1 << t) == 0)
        .map_or(0, |t| 1 << t)
}

/// F after child `t` steps; `terminated`: children that have terminated.
pub fn after_step(s: Sched, f: u16, t: usize, terminated: u16) -> u16 {
    match s {
        Sched::Unfair | Sched::Fair | Sched::Hsa | Sched::Priority | Sched::Lockstep => f,
        Sched::Cm | Sched::Sm | Sched::Scf | Sched::Sso => f,
        Sched::Obe | Sched::HsaObe => f | 1 << t,
        Sched::Lobe => f | (((1u32 << (t + 1)) - 1) as u16 & !terminated),
    }
}

/// Whether a step of a child may change F ([`after_step`] is not the
/// identity): the schedulers that add the children that step.
pub fn steps_change_f(s: Sched) -> bool {
    matches!(s, Sched::Obe | Sched::HsaObe | Sched::Lobe)
}

/// F after child `t` terminates; `terminated` includes `t`.
pub fn after_terminate(s: Sched, f: u16, t: usize, n: usize, terminated: u16) -> u16 {
    match s {
        Sched::Unfair | Sched::Lockstep => f,
        Sched::Fair | Sched::Obe | Sched::Lobe => f & !(1 << t),
        Sched::Cm | Sched::Sm | Sched::Scf | Sched::Sso => f & !(1 << t),
        Sched::Hsa | Sched::Priority => smallest_live(n, terminated),
        Sched::HsaObe => (f & !(1 << t)) | smallest_live(n, terminated),
    }
}

/// The scope tree of a program under a model, and where its F sets are.
#[derive(Clone, Debug)]
pub struct Scopes {
    pub model: ScopedModel,
    /// Workgroups, invocations per workgroup, lanes per subgroup, subgroups
    /// per workgroup.
    pub w: usize,
    pub n: usize,
    pub s: usize,
    pub per: usize,
    lockstep: bool,
    /// Offsets of the F sets: the device's, each workgroup's (when it has
    /// several subgroups), each subgroup's (several lanes, not lockstep).
    pub dev: Option<u32>,
    pub wg: Vec<u32>,
    pub sg: Vec<u32>,
    /// First bit after the F sets.
    pub end: u32,
    /// Per invocation, the F bits a step of the actor moving it sets,
    /// as (word, bits) pairs (bits 0 where unused), where no scheduler
    /// is LOBE: an OBE or HSA+OBE step adds its child's bit, which is at
    /// a fixed place, whatever the state ([`Scopes::marks_of`]). `None`
    /// under LOBE, whose step adds the children below its own that have
    /// not terminated.
    marks: Option<Vec<Marks>>,
}

/// The F bits a step sets, as (word, bits) pairs: one per scope.
type Marks = [(u32, u64); 3];

impl Scopes {
    /// Lays out the F sets after the machine's `start` bits.
    pub fn new(m: &Machine, model: &ScopedModel) -> Scopes {
        let p = &m.program;
        let (w, n, s) = (
            p.workgroups as usize,
            p.workgroup_size as usize,
            p.subgroup_size as usize,
        );
        let per = n / s;
        let lockstep = m.lockstep();
        let mut off = m.bits();
        let dev = (w > 1).then(|| {
            let o = off;
            off += w as u32;
            o
        });
        let mut wg = Vec::new();
        if per > 1 {
            for _ in 0..w {
                wg.push(off);
                off += per as u32;
            }
        }
        let mut sg = Vec::new();
        if s > 1 && !lockstep {
            for _ in 0..w * per {
                sg.push(off);
                off += s as u32;
            }
        }
        let mut sc = Scopes {
            model: *model,
            w,
            n,
            s,
            per,
            lockstep,
            dev,
            wg,
            sg,
            end: off,
            marks: None,
        };
        let scheds = [model.device, model.workgroup, model.subgroup];
        if !scheds.contains(&Sched::Lobe) {
            let marks = (0..m.num_invocations()).map(|i| sc.marks_of(m, i));
            sc.marks = Some(marks.collect());
        }
        sc
    }

    /// [`Scopes::marks`] of invocation `i`: the bit of its workgroup in
    /// the device's F, of its subgroup in its workgroup's, of its lane in
    /// its subgroup's (not in lockstep), where the scope has an F set and
    /// its scheduler adds the children that step ([`steps_change_f`]).
    fn marks_of(&self, m: &Machine, i: usize) -> Marks {
        let (w, _, g, lane) = m.coords(i);
        let changes = steps_change_f;
        let bits = [
            self.dev
                .filter(|_| changes(self.model.device))
                .map(|o| o + w as u32),
            (self.wg.get(w).filter(|_| changes(self.model.workgroup)))
                .map(|&o| o + (g - w * self.per) as u32),
            (self
                .sg
                .get(g)
                .filter(|_| !self.lockstep && changes(self.model.subgroup)))
            .map(|&o| o + lane as u32),
        ];
        bits.map(|b| b.map_or((0, 0), |b| (b / 64, 1u64 << (b % 64))))
    }

    /// Writes the initial F sets.
    pub fn init(&self, st: &mut [u64]) {
        if let Some(o) = self.dev {
            set_bits(
                st,
                o,
                self.w as u32,
                initial(self.model.device, self.w) as u64,
            );
        }
        for &o in &self.wg {
            set_bits(
                st,
                o,
                self.per as u32,
                initial(self.model.workgroup, self.per) as u64,
            );
        }
        for &o in &self.sg {
            set_bits(
                st,
                o,
                self.s as u32,
                initial(self.model.subgroup, self.s) as u64,
            );
        }
    }

    pub fn f_device(&self, st: &[u64]) -> Option<u16> {
        self.dev.map(|o| get_bits(st, o, self.w as u32) as u16)
    }

    pub fn f_workgroup(&self, st: &[u64], w: usize) -> Option<u16> {
        self.wg
            .get(w)
            .map(|&o| get_bits(st, o, self.per as u32) as u16)
    }

    pub fn f_subgroup(&self, st: &[u64], g: usize) -> Option<u16> {
        self.sg
            .get(g)
            .map(|&o| get_bits(st, o, self.s as u32) as u16)
    }

    /// Terminated lanes of subgroup `g`, from the terminated invocations.
    fn term_lanes(&self, tm: u32, g: usize) -> u16 {
        ((tm >> (g * self.s)) & ((1u32 << self.s) - 1)) as u16
    }

    /// Terminated subgroups of workgroup `w`, as local subgroup ids.
    fn term_sgs(&self, tm: u32, w: usize) -> u16 {
        let full = ((1u32 << self.s) - 1) as u16;
        (0..self.per)
            .filter(|&k| self.term_lanes(tm, w * self.per + k) == full)
            .fold(0, |a, k| a | 1 << k)
    }

    /// Terminated workgroups (all their invocations have terminated).
    fn term_wgs_of(&self, tm: u32) -> u16 {
        if self.n == 1 {
            return (tm & ((1u32 << self.w) - 1)) as u16;
        }
        let full = (1u32 << self.n) - 1;
        (0..self.w)
            .filter(|&w| (tm >> (w * self.n)) & full == full)
            .fold(0, |a, w| a | 1 << w)
    }

    /// Terminated workgroups.
    pub fn term_wgs(&self, m: &Machine, st: &[u64]) -> u16 {
        self.term_wgs_of(m.terminated_mask(st))
    }

    /// [`Scopes::resident`] from the terminated invocations `tm`.
    pub fn resident_of(&self, tm: u32) -> u16 {
        let all = ((1u32 << self.w) - 1) as u16;
        match self.model.occupancy {
            None => all,
            Some(k) => {
                let t = self.term_wgs_of(tm);
                let admitted = (k as usize + t.count_ones() as usize).min(self.w);
                ((1u32 << admitted) - 1) as u16 & !t
            }
        }
    }

    /// F updates for a step of the actor moving invocation `i` (in lockstep
    /// the whole subgroup of `i` steps: no lane-scope update); `tm`: the
    /// terminated invocations ([`Machine::terminated_mask`], which no step
    /// changes).
    pub fn on_step(&self, m: &Machine, st: &mut [u64], i: usize, tm: u32) {
        if let Some(marks) = &self.marks {
            for (word, bits) in marks[i] {
                st[word as usize] |= bits;
            }
            return;
        }
        self.on_step_general(m, st, i, tm);
    }

    /// [`Scopes::on_step`] from the schedulers' rules (LOBE's included).
    fn on_step_general(&self, m: &Machine, st: &mut [u64], i: usize, tm: u32) {
        let (w, _, g, _) = m.coords(i);
        let updates = [
            self.dev_update(st, w, tm),
            self.wg_update(st, w, g, tm),
            self.sg_update(st, i, g, tm),
        ];
        for (o, w, f, nf) in updates.into_iter().flatten() {
            if nf != f {
                set_bits(st, o, w, nf as u64);
            }
        }
    }

    /// Whether a step of the actor moving invocation `i` leaves every F
    /// set as it is: [`Scopes::on_step`] would write back the values it
    /// reads (the same computation, without copying the state), each
    /// scope's asked only while the ones above keep theirs.
    pub fn step_keeps_f(&self, m: &Machine, st: &[u64], i: usize, tm: u32) -> bool {
        if let Some(marks) = &self.marks {
            return marks[i]
                .iter()
                .all(|&(word, bits)| st[word as usize] & bits == bits);
        }
        self.step_keeps_f_general(m, st, i, tm)
    }

    /// [`Scopes::step_keeps_f`] from the schedulers' rules.
    fn step_keeps_f_general(&self, m: &Machine, st: &[u64], i: usize, tm: u32) -> bool {
        let keeps = |u: FUpdate| u.is_none_or(|(_, _, f, nf)| nf == f);
        let (w, _, g, _) = m.coords(i);
        keeps(self.dev_update(st, w, tm))
            && keeps(self.wg_update(st, w, g, tm))
            && keeps(self.sg_update(st, i, g, tm))
    }

    /// The device's F update for a step of the actor moving an
    /// invocation of workgroup `w`, as (offset, width, value now, value
    /// after the step), if a step can change it; `tm`: the terminated
    /// invocations.
    #[inline]
    fn dev_update(&self, st: &[u64], w: usize, tm: u32) -> FUpdate {
        // Only LOBE reads the terminated children (`after_step`); a
        // scope whose F no step changes is left out (`after_step` would
        // give back the F it read).
        self.dev
            .filter(|_| steps_change_f(self.model.device))
            .map(|o| {
                let f = get_bits(st, o, self.w as u32) as u16;
                let t = lobe(self.model.device, || self.term_wgs_of(tm));
                (
                    o,
                    self.w as u32,
                    f,
                    after_step(self.model.device, f, w, t) & low(self.w),
                )
            })
    }

    /// [`Scopes::dev_update`] of workgroup `w`'s F (the mover in its
    /// subgroup `g`).
    #[inline]
    fn wg_update(&self, st: &[u64], w: usize, g: usize, tm: u32) -> FUpdate {
        (self.wg.get(w))
            .filter(|_| steps_change_f(self.model.workgroup))
            .map(|&o| {
                let f = get_bits(st, o, self.per as u32) as u16;
                let k = g - w * self.per;
                let t = lobe(self.model.workgroup, || self.term_sgs(tm, w));
                let nf = after_step(self.model.workgroup, f, k, t) & low(self.per);
                (o, self.per as u32, f, nf)
            })
    }

    /// [`Scopes::dev_update`] of the F of invocation `i`'s subgroup `g`
    /// (none in lockstep: the whole subgroup steps).
    #[inline]
    fn sg_update(&self, st: &[u64], i: usize, g: usize, tm: u32) -> FUpdate {
        let lane = i - g * self.s;
        (!self.lockstep && steps_change_f(self.model.subgroup))
            .then(|| self.sg.get(g))
            .flatten()
            .map(|&o| {
                let f = get_bits(st, o, self.s as u32) as u16;
                let t = lobe(self.model.subgroup, || self.term_lanes(tm, g));
                let nf = after_step(self.model.subgroup, f, lane, t) & low(self.s);
                (o, self.s as u32, f, nf)
            })
    }

    /// F updates for the Terminate of invocation `i` (already marked
    /// terminated in `st`): the lane leaves its subgroup's F; a subgroup
    /// whose lanes have all terminated leaves its workgroup's; a workgroup
    /// whose subgroups have, the device's.
    pub fn on_terminate(&self, m: &Machine, st: &mut [u64], i: usize) {
        self.on_terminate_with(m, st, i, m.terminated_mask(st));
    }

    /// [`Scopes::on_terminate`] where the terminated invocations `tm`
    /// (`i` included) are known: the checker has them from the state's
    /// view.
    pub fn on_terminate_with(&self, m: &Machine, st: &mut [u64], i: usize, tm: u32) {
        debug_assert_eq!(tm, m.terminated_mask(st));
        let (w, _, g, lane) = m.coords(i);
        let lanes_done = self.term_lanes(tm, g);
        if let Some(&o) = self.sg.get(g) {
            let f = get_bits(st, o, self.s as u32) as u16;
            let nf = after_terminate(self.model.subgroup, f, lane, self.s, lanes_done);
            set_bits(st, o, self.s as u32, nf as u64);
        }
        if lanes_done != ((1u32 << self.s) - 1) as u16 {
            return;
        }
        let sgs_done = self.term_sgs(tm, w);
        if let Some(&o) = self.wg.get(w) {
            let f = get_bits(st, o, self.per as u32) as u16;
            let k = g - w * self.per;
            let nf = after_terminate(self.model.workgroup, f, k, self.per, sgs_done);
            set_bits(st, o, self.per as u32, nf as u64);
        }
        if sgs_done != ((1u32 << self.per) - 1) as u16 {
            return;
        }
        if let Some(o) = self.dev {
            let f = get_bits(st, o, self.w as u32) as u16;
            let t = self.term_wgs_of(tm);
            let nf = after_terminate(self.model.device, f, w, self.w, t);
            set_bits(st, o, self.w as u32, nf as u64);
        }
    }

    /// The guaranteed entities (P) of a state, as entity bits.
    pub fn guaranteed(&self, st: &[u64]) -> u64 {
        let mut p = DEVICE;
        let fd = self.f_device(st);
        for w in 0..self.w {
            if !member(fd, w) {
                continue;
            }
            p |= wg_bit(w);
            let fw = self.f_workgroup(st, w);
            for k in 0..self.per {
                if !member(fw, k) {
                    continue;
                }
                let g = w * self.per + k;
                p |= sg_bit(g);
                if self.lockstep {
                    continue;
                }
                let fs = self.f_subgroup(st, g);
                for l in 0..self.s {
                    if member(fs, l) {
                        p |= inv_bit(g * self.s + l);
                    }
                }
            }
        }
        p
    }

    /// Whether some entity of `open` (entity bits) is guaranteed in
    /// `st`: `guaranteed(st) & open != 0`, reading only the F sets on
    /// the paths from those entities up to the device (the strong rule
    /// asks this of a few entities at a time, [`super::lean`]).
    pub fn guarantees_any(&self, st: &[u64], open: u64) -> bool {
        if open & DEVICE != 0 {
            return true;
        }
        let fd = self.f_device(st);
        let sg_ok = |g: usize| {
            let w = g / self.per;
            member(fd, w) && member(self.f_workgroup(st, w), g - w * self.per)
        };
        let sgs = self.w * self.per;
        let mut rest = open;
        while rest != 0 {
            let b = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let ok = match b {
                0..8 => b < self.w && member(fd, b),
                8..24 => b - 8 < sgs && sg_ok(b - 8),
                24..40 => {
                    let (i, g) = (b - 24, (b - 24) / self.s);
                    !self.lockstep
                        && g < sgs
                        && sg_ok(g)
                        && member(self.f_subgroup(st, g), i - g * self.s)
                }
                _ => false,
            };
            if ok {
                return true;
            }
        }
        false
    }

    /// The workgroups that may run: all of them, or under an occupancy
    /// bound K the first `K + (terminated workgroups)` by id that have not
    /// terminated (workgroups are admitted in id order as slots free up).
    pub fn resident(&self, m: &Machine, st: &[u64]) -> u16 {
        let tm = match self.model.occupancy {
            None => 0,
            Some(_) => m.terminated_mask(st),
        };
        self.resident_of(tm)
    }

    /// `F: dev={0,1} wg0={..} sg0={..}` for people (scopes with an F only).
    pub fn describe(&self, st: &[u64]) -> String {
        let mut parts = Vec::new();
        if let Some(f) = self.f_device(st) {
            parts.push(format!("dev={}", show(f, self.w)));
        }
        for w in 0..self.wg.len() {
            parts.push(format!(
                "wg{w}={}",
                show(self.f_workgroup(st, w).unwrap(), self.per)
            ));
        }
        for g in 0..self.sg.len() {
            parts.push(format!(
                "sg{g}={}",
                show(self.f_subgroup(st, g).unwrap(), self.s)
            ));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("F: {}", parts.join(" "))
        }
    }
}

/// The low `n` bits (the width of an F set of `n` children, as
/// [`set_bits`] writes it).
fn low(n: usize) -> u16 {
    ((1u32 << n) - 1) as u16
}

/// Whether child `k` is in F; a scope without F (one child) guarantees it.
fn member(f: Option<u16>, k: usize) -> bool {
    !matches!(f, Some(set) if set & (1 << k) == 0)
}

/// `{0,2}` style rendering of a set of `n` children.
pub fn show(set: u16, n: usize) -> String {
    let ids: Vec<String> = (0..n)
        .filter(|t| set & (1 << t) != 0)
        .map(|t| t.to_string())
        .collect();
    format!("{{{}}}", ids.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_table_per_scope() {
        assert_eq!(initial(Sched::Fair, 3), 0b111);
        assert_eq!(initial(Sched::Priority, 3), 0b001);
        assert_eq!(after_step(Sched::Lobe, 0, 2, 0b001), 0b110);
        assert_eq!(after_step(Sched::Obe, 0b001, 2, 0), 0b101);
        assert_eq!(after_terminate(Sched::Hsa, 0b001, 0, 3, 0b001), 0b010);
        assert_eq!(after_terminate(Sched::HsaObe, 0b101, 0, 3, 0b001), 0b110);
        assert_eq!(after_terminate(Sched::Priority, 0b100, 2, 3, 0b111), 0);
        assert_eq!(show(0b101, 3), "{0,2}");
    }

    /// Launches and models of every scheduler at each scope, with
    /// interleaved and lockstep lanes: each with its machine and scopes.
    fn launches_and_models() -> Vec<(String, Machine, Scopes)> {
        use progress_litmus::kernel::litmus;
        let launches = [
            "workgroups 3;\n",
            "workgroups 2;\nworkgroup_size 4;\nsubgroup_size 2;\n",
            "workgroups 8;\nworkgroup_size 2;\n",
            "workgroups 2;\nworkgroup_size 6;\nsubgroup_size 3;\n",
        ];
        let models = [
            "HSA",
            "OBE",
            "LOBE",
            "HSA_OBE",
            "WEAK_FAIR",
            "UNFAIR",
            "OBE, workgroup=hsa, subgroup=lobe",
            "LOBE, workgroup=obe, subgroup=fair",
            "HSA, workgroup=hsa_obe, subgroup=lockstep",
            "HSA_OBE, workgroup=obe, subgroup=obe",
        ];
        let mut out = Vec::new();
        for launch in launches {
            let src = format!("values 2;\n{launch}global x;\nkernel {{\n  x = 1;\n}}\n");
            let p = litmus::parse(&src).unwrap();
            for model in models {
                let model = ScopedModel::parse(model).unwrap();
                let m = Machine::new(&p, model.subgroup.mode()).unwrap();
                let sc = Scopes::new(&m, &model);
                out.push((format!("{launch} {model:?}"), m, sc));
            }
        }
        out
    }

    /// A xorshift generator from `x`.
    fn random(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// `guarantees_any` is `guaranteed` intersected, on random F sets
    /// and random sets of entities.
    #[test]
    fn guarantees_any_is_guaranteed_intersected() {
        let mut next = random(0x2545_f491_4f6c_dd1d);
        let (mut asked, mut yes) = (0, 0);
        for (what, _, sc) in launches_and_models() {
            for _ in 0..300 {
                let st: [u64; 8] = std::array::from_fn(|_| next());
                let all = sc.guaranteed(&st);
                // A few entities, any kind (the device too).
                let open = next() & next() & next() & ((DEVICE << 1) - 1);
                assert_eq!(
                    sc.guarantees_any(&st, open),
                    all & open != 0,
                    "{what} {open:x}"
                );
                asked += 1;
                yes += usize::from(all & open != 0);
            }
        }
        assert!(yes > asked / 4 && yes < asked * 3 / 4, "{yes} of {asked}");
    }

    /// A step's F updates made by setting the marked bits (no LOBE) are
    /// the schedulers' rules, and so is whether a step keeps every F, on
    /// random states (F sets and terminated invocations), for every
    /// invocation.
    #[test]
    fn marked_f_updates_are_the_rules() {
        let mut next = random(0x9e37_79b9_7f4a_7c15);
        let (mut marked, mut kept) = (0, 0);
        for (what, m, sc) in launches_and_models() {
            let lobe =
                [sc.model.device, sc.model.workgroup, sc.model.subgroup].contains(&Sched::Lobe);
            assert_eq!(sc.marks.is_none(), lobe, "{what}");
            marked += usize::from(!lobe);
            for _ in 0..100 {
                // F sets mostly full, so that some steps keep them.
                let st: [u64; 8] = std::array::from_fn(|_| next() | next());
                let tm = m.terminated_mask(&st);
                for i in 0..m.num_invocations() {
                    let (mut a, mut b) = (st, st);
                    sc.on_step(&m, &mut a, i, tm);
                    sc.on_step_general(&m, &mut b, i, tm);
                    assert_eq!(a, b, "{what}: invocation {i} at {st:x?}");
                    let keeps = sc.step_keeps_f(&m, &st, i, tm);
                    assert_eq!(keeps, sc.step_keeps_f_general(&m, &st, i, tm), "{what}");
                    assert_eq!(keeps, a == st, "{what}");
                    kept += usize::from(keeps);
                }
            }
        }
        assert!(marked >= 20 && kept > 100, "{marked} {kept}");
    }

    #[test]
    fn the_schedulers_whose_f_no_step_changes_are_those_steps_change_f_leaves_out() {
        for s in Sched::ALL {
            let identity = (0..8u16)
                .all(|f| (0..3).all(|t| (0..8u16).all(|term| after_step(s, f, t, term) == f)));
            assert_eq!(identity, !steps_change_f(s), "{s:?}");
        }
    }
}
