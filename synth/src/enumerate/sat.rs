//! The SAT engine: one varisat instance per unit, all models enumerated.
//!
//! # Encoding
//!
//! *Program.* For each instruction `(t, i)` of the unit's split, one-hot
//! variables for its location, check, exchange (a value or none) and jump
//! (`0..=len`, `len` = END). Meaningful comparisons: `jump == i + 1` forces
//! check 0 and an exchange, so a model's program variables spell exactly one
//! test. Location symmetry: location `l > 0` at a position needs `l - 1` at
//! an earlier position (first-use order, the form of
//! [`progress_litmus::Test::canonical_locs`]), which also makes locations `0..L'` used.
//! Inter-thread influence is a direct clause over locations and jumps.
//!
//! *Semantics.* States are `(memory, pcs)`, all `V^L * prod(len_t + 1)` of
//! them. Instruction `(t, i)` executed in memory `m` has a *local transition*
//! literal `T(t, i, m, m', p')` that is true iff it writes memory `m'` and
//! moves to pc `p'`; it is defined exactly (both directions) from the program
//! variables via `eq(t, i, m)` ("the comparison holds in `m`"). A global edge
//! `s -> s'` by thread `t` is such a literal when the other pcs agree.
//!
//! *Exact reachability* (a least fixpoint, so closure alone is not enough):
//! `reach(init)`; closed under edges (`reach(s) & edge -> reach(s')`), which
//! makes `reach` contain every reachable state; and every `reach(s)`, `s` not
//! the start, is *justified* by an edge from some `reach(s')` with
//! `rank(s') < rank(s)`, ranks being order-encoded integers below the number
//! of states, which makes every `reach` state really reachable (follow the
//! justifications back: ranks decrease, so the chain ends at the start). BFS
//! distance is a valid rank, so no reachable set is excluded.
//!
//! *Possible termination*: every reachable non-final state has an edge to a
//! state of smaller *co-rank* (successors of reachable states are reachable,
//! so the chain stays reachable and, ranks decreasing, ends in the
//! all-finished state; distance to it is a valid co-rank).
//! *Cycle*: a non-empty set of reachable states each with an edge into the
//! set. *All branches possible*: each branching instruction has a reachable
//! state at its pc where `eq` holds, and one where it does not. The bounds
//! are sequential-counter cardinality constraints on `reach`, weighted by the
//! number of unfinished threads for actions.
//!
//! # Enumeration
//! After each model the test is re-checked with [`crate::enumerate::constraints::check`]
//! (a mismatch is a bug and panics) and blocked by a clause over its program
//! variables only, so auxiliary freedom (ranks, witnesses) never yields the
//! same test twice.
//!
//! # For `find`
//! `Encoding::build_requiring` adds required failures of strong models
//! as *traps*: sets of states closed under the fair moves, which, unlike
//! reachability, are greatest fixpoints and need no ranks (strong HSA
//! exactly, strong OBE and HSA+OBE as a necessary condition).
//! `Encoding::block` adds a blocking clause without the literals the
//! formula implies (found by solving under an assumption), since varisat
//! rebuilds all its watch lists on the next solve after a clause with a
//! literal false at its top level.

use crate::enumerate::config::Config;
use crate::enumerate::constraints;
use crate::enumerate::program::{positions, Unit};
use progress_litmus::axb::test::{Instr, Target, Test};
use varisat::{ExtendFormula, Lit, Solver};

/// The most clauses one encoding may have (an estimate: see
/// [`encoding_clauses`]). Measured, a search holds about 85 bytes per
/// estimated clause (2t3i with 7 values: 1.1e7, 0.9 GB), so this keeps one
/// encoding under 2 GB; the largest encodings the documented runs build
/// (`synth find -t 4 -i 6`: 1.2e6) are far below it, while `--values 12` in
/// 2t3i (1.7e8) is above it and used to abort on allocation.
pub const MAX_ENCODING_CLAUSES: f64 = 2e7;

/// About how many clauses the encoding of the split `lens` has: the
/// rank comparisons dominate, `O(domain)` clauses for each edge of the
/// state graph, twice (reachability and termination), where states are
/// `V^L * prod(len_t + 1)`, each has an edge per thread per next memory and
/// pc, and the rank domain is the state count (or `--max-states`).
pub fn encoding_clauses(lens: &[usize], cfg: &Config) -> f64 {
    let nmem = (cfg.values as f64).powi(cfg.locs as i32);
    let states = nmem * lens.iter().map(|&l| (l + 1) as f64).product::<f64>();
    let next_mem = (1 + cfg.locs * cfg.values.saturating_sub(1)) as f64;
    let degree: f64 = lens.iter().map(|&l| next_mem * (l + 1) as f64).sum();
    let domain = cfg.max_states.map_or(states, |b| states.min(b as f64));
    2.0 * states * degree * domain
}

/// Refuses, before any work, a configuration whose SAT encoding (of its
/// largest split) would not fit in memory: one clear error instead of an
/// abort on allocation minutes later. The limit is [`MAX_ENCODING_CLAUSES`].
pub fn check_encoding_size(cfg: &Config) -> Result<(), String> {
    let limit = max_encoding_clauses()?;
    let worst = crate::enumerate::program::splits(cfg.threads, cfg.instrs)
        .iter()
        .map(|lens| encoding_clauses(lens, cfg))
        .fold(0.0, f64::max);
    if worst > limit {
        return Err(format!(
            "{} with {} locations and {} values: the SAT encoding would have about {worst:.1e} clauses (about {:.1} GB), over the limit of {limit:.1e}; use fewer values, locations or instructions, or set {MAX_CLAUSES_ENV} to raise the limit on a machine with the memory",
            cfg.name(),
            cfg.locs,
            cfg.values,
            worst * 85.0 / 1e9,
        ));
    }
    Ok(())
}

/// The environment variable that raises (or lowers) the limit on the size
/// of a SAT encoding: the default suits a machine of a few GB, a larger one
/// can search larger configurations.
pub const MAX_CLAUSES_ENV: &str = "SYNTH_MAX_SAT_CLAUSES";

/// The limit on an encoding's estimated clauses: [`MAX_CLAUSES_ENV`] if
/// set (a positive number, `1e8` or `100000000`), else
/// [`MAX_ENCODING_CLAUSES`].
pub fn max_encoding_clauses() -> Result<f64, String> {
    match std::env::var(MAX_CLAUSES_ENV) {
        Err(_) => Ok(MAX_ENCODING_CLAUSES),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(n) if n.is_finite() && n >= 1.0 => Ok(n),
            _ => Err(format!(
                "{MAX_CLAUSES_ENV}={v:?}: expected a positive number of clauses, e.g. 1e8"
            )),
        },
    }
}

/// Every test of the configuration in `unit`, in the order found.
pub fn enumerate_unit(unit: &Unit, cfg: &Config) -> Vec<Test> {
    let mut enc = Encoding::new(unit, cfg);
    let mut out = Vec::new();
    while let Some((test, chosen)) = enc.next_model() {
        if let Err(v) = constraints::check(&test, cfg) {
            panic!(
                "SAT engine bug: model violates {v}:\n{}",
                progress_litmus::axb::text::print(&test)
            );
        }
        let block: Vec<Lit> = chosen.iter().map(|&l| !l).collect();
        enc.solver.add_clause(&block);
        out.push(test);
    }
    out
}

/// The local transitions of one instruction in one memory: `(memory after,
/// pc after, literal)`.
type LocalSteps = Vec<(usize, usize, Lit)>;

/// The edges out of (or into) one global state: `(other state, literal)`.
type Edges = Vec<(usize, Lit)>;

/// The global states of a split: `s = m + nmem * (mixed-radix pcs)`, with
/// memories `m` in base `V` over the locations.
struct States {
    lens: Vec<usize>,
    nl: usize,
    nv: usize,
    nmem: usize,
    radix: Vec<usize>,
    stride: Vec<usize>,
    count: usize,
}

#[allow(clippy::needless_range_loop)]
impl States {
    fn new(lens: &[usize], nl: usize, nv: usize) -> States {
        let nmem = nv.pow(nl as u32);
        let radix: Vec<usize> = lens.iter().map(|l| l + 1).collect();
        let count = nmem * radix.iter().product::<usize>();
        let mut stride = vec![nmem; lens.len()];
        for t in 1..lens.len() {
            stride[t] = stride[t - 1] * radix[t - 1];
        }
        States {
            lens: lens.to_vec(),
            nl,
            nv,
            nmem,
            radix,
            stride,
            count,
        }
    }

    /// The value of location `l` in memory `m`.
    fn get(&self, m: usize, l: usize) -> usize {
        (m / self.nv.pow(l as u32)) % self.nv
    }

    /// Memory `m` with location `l` set to `x`.
    fn set(&self, m: usize, l: usize, x: usize) -> usize {
        m - self.get(m, l) * self.nv.pow(l as u32) + x * self.nv.pow(l as u32)
    }

    /// The pc of thread `t` in state `s`.
    fn pc_of(&self, s: usize, t: usize) -> usize {
        (s / self.stride[t]) % self.radix[t]
    }

    /// Whether every thread of `s` is at its end.
    fn is_final(&self, s: usize) -> bool {
        (0..self.lens.len()).all(|t| self.pc_of(s, t) == self.lens[t])
    }

    /// The global edges, out of and into each state: a local transition of
    /// a thread not at its end, the other pcs unchanged.
    fn edges(&self, local: &[Vec<Vec<LocalSteps>>]) -> (Vec<Edges>, Vec<Edges>) {
        let mut out_edges: Vec<Edges> = vec![Vec::new(); self.count];
        let mut in_edges: Vec<Edges> = vec![Vec::new(); self.count];
        for s in 0..self.count {
            let m = s % self.nmem;
            for (t, &len) in self.lens.iter().enumerate() {
                let pc = self.pc_of(s, t);
                if pc == len {
                    continue;
                }
                for &(mm, p, tl) in &local[t][pc][m] {
                    let s2 = s - m + mm - pc * self.stride[t] + p * self.stride[t];
                    out_edges[s].push((s2, tl));
                    in_edges[s2].push((s, tl));
                }
            }
        }
        (out_edges, in_edges)
    }
}

/// The one-hot program variables of one instruction.
struct InstrVars {
    loc: Vec<Lit>,
    check: Vec<Lit>,
    /// `exch[v]` for value `v`; `exch[values]` for no exchange.
    exch: Vec<Lit>,
    /// `jump[p]`, `p = len` is END.
    jump: Vec<Lit>,
}

/// The strong models every answer of a search must fail, for
/// `Encoding::build_requiring`: strong HSA exactly, strong OBE and
/// strong HSA+OBE by a necessary condition (each method's documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failures {
    pub strong_hsa: bool,
    pub strong_obe: bool,
    pub strong_hsa_obe: bool,
}

/// The varisat encoding of one unit or split (see the module docs); `find`
/// drives it with its own blocking clauses.
pub(crate) struct Encoding<'a> {
    pub(crate) solver: Solver<'a>,
    num_vars: usize,
    lens: Vec<usize>,
    prog: Vec<Vec<InstrVars>>,
    values: usize,
    /// What [`Encoding::block`] knows of the program variables (the first
    /// `known.streak.len()` variables).
    known: Known,
}

/// Program variables proved true in every model, and how many models in a
/// row each has been true in ([`Encoding::block`]).
#[derive(Default)]
struct Known {
    implied: Vec<bool>,
    streak: Vec<u32>,
    /// The streak at which a variable is tried (again) for implied.
    probe_at: Vec<u32>,
}

/// The streak at which a program variable is first tried for implied
/// (then twice the last, after each try that finds a model without it).
pub(crate) const FIRST_PROBE: u32 = 4;

// Indices name states, threads, locations and values throughout; the
// encoding reads more plainly with them than with zipped iterators.
#[allow(clippy::needless_range_loop)]
impl Encoding<'_> {
    fn lit(&mut self) -> Lit {
        self.num_vars += 1;
        self.solver.new_lit()
    }

    fn lits(&mut self, n: usize) -> Vec<Lit> {
        (0..n).map(|_| self.lit()).collect()
    }

    fn clause(&mut self, c: &[Lit]) {
        self.solver.add_clause(c);
    }

    fn exactly_one(&mut self, ls: &[Lit]) {
        self.clause(ls);
        for a in 0..ls.len() {
            for b in a + 1..ls.len() {
                self.clause(&[!ls[a], !ls[b]]);
            }
        }
    }

    /// `a <-> (b & c)`.
    fn and(&mut self, a: Lit, b: Lit, c: Lit) {
        self.clause(&[!a, b]);
        self.clause(&[!a, c]);
        self.clause(&[a, !b, !c]);
    }

    /// At most `k` of `xs` true (a literal listed twice counts twice):
    /// Sinz's sequential counter.
    fn at_most(&mut self, xs: &[Lit], k: usize) {
        let n = xs.len();
        if k >= n {
            return;
        }
        if k == 0 {
            for &x in xs {
                self.clause(&[!x]);
            }
            return;
        }
        // r[i][j]: at least j + 1 of xs[..=i] are true.
        let mut prev = self.lits(k);
        self.clause(&[!xs[0], prev[0]]);
        for &r in &prev[1..] {
            self.clause(&[!r]);
        }
        for &x in &xs[1..n - 1] {
            let cur = self.lits(k);
            self.clause(&[!x, cur[0]]);
            self.clause(&[!prev[0], cur[0]]);
            for j in 1..k {
                self.clause(&[!x, !prev[j - 1], cur[j]]);
                self.clause(&[!prev[j], cur[j]]);
            }
            self.clause(&[!x, !prev[k - 1]]);
            prev = cur;
        }
        self.clause(&[!xs[n - 1], !prev[k - 1]]);
    }

    /// `j -> a < b` for order-encoded `ge` (`ge[s][k-1]` is `rank(s) >= k`,
    /// ranks in `0..=ge[s].len()`).
    fn less(&mut self, j: Lit, a: &[Lit], b: &[Lit]) {
        let r = a.len();
        if r == 0 {
            self.clause(&[!j]);
            return;
        }
        self.clause(&[!j, b[0]]);
        for k in 0..r - 1 {
            self.clause(&[!j, !a[k], b[k + 1]]);
        }
        self.clause(&[!j, !a[r - 1]]);
    }

    fn ranks(&mut self, states: usize, domain: usize) -> Vec<Vec<Lit>> {
        (0..states)
            .map(|_| {
                let ge = self.lits(domain.saturating_sub(1));
                for k in 1..ge.len() {
                    self.clause(&[!ge[k], ge[k - 1]]);
                }
                ge
            })
            .collect()
    }

    /// The encoding of the programs of `unit`.
    fn new<'b>(unit: &Unit, cfg: &Config) -> Encoding<'b> {
        Encoding::build(&unit.lens, &unit.prefix, cfg)
    }

    /// The encoding of the programs of thread lengths `lens`, with the
    /// instructions at the first positions fixed to `prefix` (a unit or a
    /// piece of one; empty: a whole split, as `find` searches).
    ///
    /// The steps below follow the module documentation in order; the
    /// order of variables and clauses is part of the engine's behaviour
    /// (the solver's search, hence its speed), so they keep it.
    pub(crate) fn build<'b>(lens: &[usize], prefix: &[Instr], cfg: &Config) -> Encoding<'b> {
        Encoding::build_requiring(lens, prefix, cfg, Failures::default())
    }

    /// [`Encoding::build`], restricted to programs that fail each strong
    /// model of `fails` ([`Failures`]), so a search whose every answer must
    /// fail them is not proposed the many tests that pass them.
    pub(crate) fn build_requiring<'b>(
        lens: &[usize],
        prefix: &[Instr],
        cfg: &Config,
        fails: Failures,
    ) -> Encoding<'b> {
        let (nl, nv) = (cfg.locs, cfg.values);
        let mut e = Encoding {
            solver: Solver::new(),
            num_vars: 0,
            lens: lens.to_vec(),
            prog: Vec::new(),
            values: nv,
            known: Known::default(),
        };
        let pos = positions(lens);
        e.program(lens, nl);
        e.known = Known {
            implied: vec![false; e.num_vars],
            streak: vec![0; e.num_vars],
            probe_at: vec![FIRST_PROBE; e.num_vars],
        };
        e.fix_prefix(&pos, prefix);
        e.first_use(&pos, nl);
        e.influence(&pos, nl);
        let states = States::new(lens, nl, nv);
        let (eq, local) = e.local_transitions(&states);
        let (out_edges, in_edges) = states.edges(&local);
        let domain = cfg.max_states.unwrap_or(states.count).min(states.count);
        let reach = e.reachable(&out_edges, &in_edges, domain);
        e.termination_possible(&states, &out_edges, &reach, domain);
        e.cycle(&out_edges, &reach);
        e.branches(&states, &eq, &reach, cfg.store_must_change);
        e.alloy_bounds(&states, &reach, cfg);
        if fails.strong_hsa {
            e.strong_hsa_trap(&states, &local, &reach);
        }
        for (required, hsa_obe) in [(fails.strong_obe, false), (fails.strong_hsa_obe, true)] {
            if required {
                e.strong_obe_trap(&states, &local, &reach, hsa_obe);
            }
        }
        e
    }

    /// The test fails strong OBE (or, with `hsa_obe`, strong HSA+OBE), a
    /// necessary condition: a non-empty set of pairs `(s, S)`, `s` a
    /// reachable non-final state and `S` a set of its unfinished threads
    /// (the fair set F once the finished threads have made their free
    /// Terminates), closed under every step of a thread of `S`, where `S`
    /// holds every unfinished thread off pc 0 (those have stepped: F has
    /// them) and is never empty (a Step while F is empty is good, SPEC §3);
    /// under HSA+OBE it also holds the lowest unfinished thread. A step that
    /// finishes its thread drops it from `S` (its Terminate); under HSA+OBE
    /// the new lowest unfinished thread joins. The fair moves out of a real
    /// trap, its finished threads terminated, are such a set; the converse
    /// does not hold (a thread at pc 0 in `S` may never have stepped), so a
    /// candidate may still pass and is labelled as before.
    fn strong_obe_trap(
        &mut self,
        states: &States,
        local: &[Vec<Vec<LocalSteps>>],
        reach: &[Lit],
        hsa_obe: bool,
    ) {
        let lens = self.lens.clone();
        let n = lens.len();
        let unfinished = |s: usize| -> usize {
            (0..n)
                .filter(|&t| states.pc_of(s, t) < lens[t])
                .fold(0, |a, t| a | 1 << t)
        };
        let valid = |s: usize, set: usize| {
            let u = unfinished(s);
            let started = (0..n)
                .filter(|&t| u & 1 << t != 0 && states.pc_of(s, t) != 0)
                .fold(0, |a, t| a | 1 << t);
            let lowest = u & u.wrapping_neg();
            set != 0 && set & !u == 0 && set & started == started && (!hsa_obe || set & lowest != 0)
        };
        let sets = 1usize << n;
        let trap: Vec<Option<Lit>> = (0..states.count * sets)
            .map(|k| valid(k / sets, k % sets).then(|| self.lit()))
            .collect();
        self.clause(&trap.iter().flatten().copied().collect::<Vec<_>>());
        for (k, &x) in trap.iter().enumerate() {
            let Some(x) = x else { continue };
            let (s, set) = (k / sets, k % sets);
            self.clause(&[!x, reach[s]]);
            let m = s % states.nmem;
            for t in (0..n).filter(|&t| set & 1 << t != 0) {
                let pc = states.pc_of(s, t);
                for &(mm, p, tl) in &local[t][pc][m] {
                    let s2 = s - m + mm - pc * states.stride[t] + p * states.stride[t];
                    let u2 = unfinished(s2);
                    let mut set2 = set & u2;
                    if hsa_obe {
                        set2 |= u2 & u2.wrapping_neg();
                    }
                    match trap[s2 * sets + set2] {
                        Some(y) => self.clause(&[!x, !tl, y]),
                        _ => self.clause(&[!x, !tl]),
                    }
                }
            }
        }
    }

    /// The test fails strong HSA: a non-empty set `B` of reachable,
    /// non-final states closed under the step of the lowest unfinished
    /// thread. Under HSA that thread is the only one in F (the threads below
    /// it are at their end, and Terminates are free moves of the strong
    /// rule, SPEC §3), and F is never empty before all threads are done, so
    /// from a state the fair paths are the one run in which the lowest
    /// unfinished thread steps alone; the test passes iff that run ends from
    /// every reachable state. A run that never ends visits a closed set of
    /// non-final states; a closed set holding a reachable state holds such a
    /// run. Unlike reachability this needs no ranks: `B` is a greatest
    /// fixpoint.
    fn strong_hsa_trap(&mut self, states: &States, local: &[Vec<Vec<LocalSteps>>], reach: &[Lit]) {
        let trap = self.lits(states.count);
        self.clause(&trap);
        for s in 0..states.count {
            self.clause(&[!trap[s], reach[s]]);
            let lowest = (0..self.lens.len()).find(|&t| states.pc_of(s, t) < self.lens[t]);
            let Some(t) = lowest else {
                self.clause(&[!trap[s]]);
                continue;
            };
            // The steps of thread t out of s, one per next memory and pc.
            let (m, pc) = (s % states.nmem, states.pc_of(s, t));
            for &(mm, p, tl) in &local[t][pc][m] {
                let s2 = s - m + mm - pc * states.stride[t] + p * states.stride[t];
                self.clause(&[!trap[s], !tl, trap[s2]]);
            }
        }
    }

    /// Program variables and their well-formedness: one-hot groups, and
    /// meaningful comparisons (store-like means check 0, an exchange).
    fn program(&mut self, lens: &[usize], nl: usize) {
        let nv = self.values;
        for &len in lens {
            let mut th = Vec::new();
            for i in 0..len {
                let v = InstrVars {
                    loc: self.lits(nl),
                    check: self.lits(nv),
                    exch: self.lits(nv + 1),
                    jump: self.lits(len + 1),
                };
                for group in [&v.loc, &v.check, &v.exch, &v.jump] {
                    self.exactly_one(group);
                }
                // Meaningful comparisons: store-like means check 0, an exchange.
                self.clause(&[!v.jump[i + 1], v.check[0]]);
                self.clause(&[!v.jump[i + 1], !v.exch[nv]]);
                th.push(v);
            }
            self.prog.push(th);
        }
    }

    /// The unit's prefix: the instructions at its first positions, fixed,
    /// so that each unit searches its own part of the space.
    fn fix_prefix(&mut self, pos: &[(usize, usize)], prefix: &[Instr]) {
        let nv = self.values;
        for (&(t, i), f) in pos.iter().zip(prefix) {
            let v = &self.prog[t][i];
            let fixed = [
                v.loc[f.loc as usize],
                v.check[f.check as usize],
                v.exch[f.exch.map_or(nv, usize::from)],
                v.jump[f.jump.pc(self.lens[t])],
            ];
            for l in fixed {
                self.clause(&[l]);
            }
        }
    }

    /// First-use order of locations: one test per class of location
    /// renamings.
    fn first_use(&mut self, pos: &[(usize, usize)], nl: usize) {
        for (p, &(t, i)) in pos.iter().enumerate() {
            for l in 1..nl {
                let mut c = vec![!self.prog[t][i].loc[l]];
                c.extend(pos[..p].iter().map(|&(u, j)| self.prog[u][j].loc[l - 1]));
                self.clause(&c);
            }
        }
    }

    /// Local transitions of every instruction in every memory:
    /// `eq[t][i][m]` (the comparison holds) and `T[t][i][m] = [(m', p',
    /// lit)]`.
    #[allow(clippy::type_complexity)]
    fn local_transitions(
        &mut self,
        states: &States,
    ) -> (Vec<Vec<Vec<Lit>>>, Vec<Vec<Vec<LocalSteps>>>) {
        let lens = self.lens.clone();
        let mut eq: Vec<Vec<Vec<Lit>>> = vec![Vec::new(); lens.len()];
        let mut local: Vec<Vec<Vec<LocalSteps>>> = vec![Vec::new(); lens.len()];
        for (t, &len) in lens.iter().enumerate() {
            for i in 0..len {
                let mut eq_i = Vec::new();
                let mut local_i = Vec::new();
                for m in 0..states.nmem {
                    let (q, ts) = self.local_step(states, t, i, m);
                    eq_i.push(q);
                    local_i.push(ts);
                }
                eq[t].push(eq_i);
                local[t].push(local_i);
            }
        }
        (eq, local)
    }

    /// Instruction `(t, i)` executed in memory `m`: the literal of its
    /// comparison holding, and its local transitions, each defined exactly
    /// (both directions) from the program variables.
    fn local_step(&mut self, states: &States, t: usize, i: usize, m: usize) -> (Lit, LocalSteps) {
        let (nl, nv, len) = (states.nl, self.values, self.lens[t]);
        let q = self.lit();
        let v = &self.prog[t][i];
        let (loc, check, exch, jump) = (
            v.loc.clone(),
            v.check.clone(),
            v.exch.clone(),
            v.jump.clone(),
        );
        for l in 0..nl {
            for c in 0..nv {
                let val = if states.get(m, l) == c { q } else { !q };
                self.clause(&[!loc[l], !check[c], val]);
            }
        }
        // Memory after: m itself or one location overwritten.
        let mut cands = vec![m];
        for l in 0..nl {
            for x in (0..nv).filter(|&x| x != states.get(m, l)) {
                cands.push(states.set(m, l, x));
            }
        }
        let nm = self.lits(cands.len());
        for l in 0..nl {
            for (x, &ex) in exch.iter().enumerate() {
                let target = if x == nv { m } else { states.set(m, l, x) };
                for (c, &lit) in cands.iter().zip(&nm) {
                    let val = if *c == target { lit } else { !lit };
                    self.clause(&[!loc[l], !ex, val]);
                }
            }
        }
        // Pc after: the jump if the comparison holds, else i + 1.
        let np = self.lits(len + 1);
        for (p, &lit) in np.iter().enumerate() {
            if p == i + 1 {
                self.clause(&[!lit, !q, jump[p]]);
                self.clause(&[q, lit]);
                self.clause(&[!jump[p], lit]);
            } else {
                self.and(lit, q, jump[p]);
            }
        }
        let mut ts = Vec::new();
        for (&mm, &nml) in cands.iter().zip(&nm) {
            for (p, &npl) in np.iter().enumerate() {
                let tl = self.lit();
                self.and(tl, nml, npl);
                ts.push((mm, p, tl));
            }
        }
        (q, ts)
    }

    /// Exact reachability: `reach` holds the start, is closed under edges,
    /// and every reached state but the start is justified by an edge from
    /// a state of lower rank (module documentation).
    fn reachable(&mut self, out_edges: &[Edges], in_edges: &[Edges], domain: usize) -> Vec<Lit> {
        let nstates = out_edges.len();
        let reach = self.lits(nstates);
        self.clause(&[reach[0]]);
        for s in 0..nstates {
            for &(s2, tl) in &out_edges[s] {
                self.clause(&[!reach[s], !tl, reach[s2]]);
            }
        }
        // Justified reachability.
        let rank = self.ranks(nstates, domain);
        for s in 1..nstates {
            let mut c = vec![!reach[s]];
            for &(s1, tl) in in_edges[s].iter().filter(|(s1, _)| *s1 != s) {
                let j = self.lit();
                self.clause(&[!j, reach[s1]]);
                self.clause(&[!j, tl]);
                self.less(j, &rank[s1], &rank[s]);
                c.push(j);
            }
            self.clause(&c);
        }
        reach
    }

    /// Possible termination: every reachable non-final state has an edge
    /// to a state of lower co-rank (distance to a final state).
    fn termination_possible(
        &mut self,
        states: &States,
        out_edges: &[Edges],
        reach: &[Lit],
        domain: usize,
    ) {
        let corank = self.ranks(states.count, domain);
        for s in (0..states.count).filter(|&s| !states.is_final(s)) {
            let mut c = vec![!reach[s]];
            for &(s2, tl) in out_edges[s].iter().filter(|(s2, _)| *s2 != s) {
                let g = self.lit();
                self.clause(&[!g, tl]);
                self.less(g, &corank[s2], &corank[s]);
                c.push(g);
            }
            self.clause(&c);
        }
    }

    /// A cycle of reachable states: a non-empty set of reachable states
    /// each with an edge into the set.
    fn cycle(&mut self, out_edges: &[Edges], reach: &[Lit]) {
        let nstates = out_edges.len();
        let cyc = self.lits(nstates);
        self.clause(&cyc);
        for s in 0..nstates {
            self.clause(&[!cyc[s], reach[s]]);
            let mut c = vec![!cyc[s]];
            for &(s2, tl) in &out_edges[s] {
                let h = self.lit();
                self.clause(&[!h, tl]);
                self.clause(&[!h, cyc[s2]]);
                c.push(h);
            }
            self.clause(&c);
        }
    }

    /// All branches possible (every comparison both holds and fails in
    /// some reachable state); optionally every exchange changes memory.
    fn branches(
        &mut self,
        states: &States,
        eq: &[Vec<Vec<Lit>>],
        reach: &[Lit],
        store_must_change: bool,
    ) {
        let lens = self.lens.clone();
        for (t, &len) in lens.iter().enumerate() {
            for i in 0..len {
                let at: Vec<usize> = (0..states.count)
                    .filter(|&s| states.pc_of(s, t) == i)
                    .collect();
                let store_like = self.prog[t][i].jump[i + 1];
                for holds in [true, false] {
                    let mut c = vec![store_like];
                    for &s in &at {
                        let w = self.lit();
                        let q = eq[t][i][s % states.nmem];
                        self.clause(&[!w, reach[s]]);
                        self.clause(&[!w, if holds { q } else { !q }]);
                        c.push(w);
                    }
                    self.clause(&c);
                }
                if store_must_change {
                    self.exchange_changes(states, t, i, &at, reach);
                }
            }
        }
    }

    /// `--store-must-change`: the exchange of `(t, i)`, if any, overwrites
    /// a different value in some reachable state `at` its pc.
    fn exchange_changes(
        &mut self,
        states: &States,
        t: usize,
        i: usize,
        at: &[usize],
        reach: &[Lit],
    ) {
        let nv = self.values;
        let v = &self.prog[t][i];
        let (loc, exch) = (v.loc.clone(), v.exch.clone());
        let mut c = vec![exch[nv]];
        for &s in at {
            let m = s % states.nmem;
            let w = self.lit();
            self.clause(&[!w, reach[s]]);
            // w -> the exchange at (t, i) overwrites a different value in m.
            self.clause(&[!w, !exch[nv]]);
            for l in 0..states.nl {
                self.clause(&[!w, !loc[l], !exch[states.get(m, l)]]);
            }
            c.push(w);
        }
        self.clause(&c);
    }

    /// Alloy's bounds on reachable states and transitions, for the
    /// configurations the artifact ran with them.
    fn alloy_bounds(&mut self, states: &States, reach: &[Lit], cfg: &Config) {
        if let Some(k) = cfg.max_states {
            self.at_most(reach, k);
        }
        if let Some(k) = cfg.max_actions {
            let mut xs = Vec::new();
            for (s, &r) in reach.iter().enumerate() {
                let unfinished = (0..self.lens.len())
                    .filter(|&t| states.pc_of(s, t) < self.lens[t])
                    .count();
                xs.resize(xs.len() + unfinished, r);
            }
            self.at_most(&xs, k);
        }
    }

    /// Inter-thread influence (SPEC §4.3).
    fn influence(&mut self, pos: &[(usize, usize)], nl: usize) {
        let nv = self.values;
        // bl[(t, i)][l] -> instruction (t, i) is branching and at location l.
        let mut bl = Vec::new();
        for &(t, i) in pos {
            let ls = self.lits(nl);
            for (l, &b) in ls.iter().enumerate() {
                let (loc, store_like) = (self.prog[t][i].loc[l], self.prog[t][i].jump[i + 1]);
                self.clause(&[!b, loc]);
                self.clause(&[!b, !store_like]);
            }
            bl.push(ls);
        }
        for &(t, i) in pos {
            for l in 0..nl {
                let v = &self.prog[t][i];
                let (loc, none, store_like) = (v.loc[l], v.exch[nv], v.jump[i + 1]);
                let others = pos.iter().enumerate().filter(|(_, &(u, _))| u != t);
                // An exchange at l: some other thread branches on l.
                let mut c = vec![!loc, none];
                c.extend(others.clone().map(|(q, _)| bl[q][l]));
                self.clause(&c);
                // A branch on l: some other thread uses l.
                let mut c = vec![!loc, store_like];
                c.extend(others.map(|(_, &(u, j))| self.prog[u][j].loc[l]));
                self.clause(&c);
            }
        }
    }

    /// The literals saying that instruction `(t, i)` has location `loc`,
    /// check `check`, exchange `exch` and, if given, jump target pc `jump`.
    pub(crate) fn field_lits(
        &self,
        t: usize,
        i: usize,
        loc: u8,
        check: u8,
        exch: Option<u8>,
        jump: Option<usize>,
    ) -> Vec<Lit> {
        let v = &self.prog[t][i];
        let mut out = vec![
            v.loc[loc as usize],
            v.check[check as usize],
            v.exch[exch.map_or(self.values, usize::from)],
        ];
        out.extend(jump.map(|j| v.jump[j]));
        out
    }

    /// Requires location `l` to be used by some instruction (with
    /// first-use order: exactly `l + 1` locations when `l` is the last).
    pub(crate) fn require_loc(&mut self, l: usize) {
        let c: Vec<Lit> = self.prog.iter().flatten().map(|v| v.loc[l]).collect();
        self.clause(&c);
    }

    /// Solves; the test of the model and its program literals, or `None`
    /// when no model is left.
    pub(crate) fn next_model(&mut self) -> Option<(Test, Vec<Lit>)> {
        match self.solver.solve() {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => panic!("varisat failed: {e}"),
        }
        let value = self.model_values();
        for (streak, &v) in self.known.streak.iter_mut().zip(&value) {
            *streak = if v { *streak + 1 } else { 0 };
        }
        Some(self.decode(&value))
    }

    /// The values of the variables in the solver's model.
    fn model_values(&self) -> Vec<bool> {
        let model = self.solver.model().expect("a model after SAT");
        let mut value = vec![false; self.num_vars];
        for l in model {
            if l.index() < value.len() {
                value[l.index()] = l.is_positive();
            }
        }
        value
    }

    /// Adds the clause excluding every model in which all of `lits`
    /// (program variables true in the last model) hold: the negation of
    /// each, except those of variables implied by the formula. Such a
    /// negation is false at the solver's top level, and a clause holding
    /// one makes varisat put the unit back on its trail, then simplify
    /// every clause and rebuild every watch list on the next solve (about
    /// half of a search's time, measured). Leaving it out is exact: the
    /// literal is false in every model. A variable true in
    /// [`FIRST_PROBE`] models in a row is tried: solving under the
    /// assumption that it is false either fails (it is implied, for good)
    /// or finds a model (it is not: tried again after twice the streak).
    pub(crate) fn block(&mut self, lits: &[Lit]) {
        let mut clause = Vec::with_capacity(lits.len());
        for &l in lits {
            let v = l.index();
            let program = v < self.known.implied.len() && l.is_positive();
            if program && !self.known.implied[v] && self.known.streak[v] >= self.known.probe_at[v] {
                self.probe(v);
            }
            if !(program && self.known.implied[v]) {
                clause.push(!l);
            }
        }
        self.solver.add_clause(&clause);
    }

    /// Whether [`Encoding::block`] has found program literal `l` implied
    /// (for tests: the first instruction's location 0 is, by first-use
    /// order, once it has been true in enough models in a row).
    #[cfg(test)]
    pub(crate) fn found_implied(&self, l: Lit) -> bool {
        self.known.implied.get(l.index()).copied().unwrap_or(false)
    }

    /// Whether program variable `v` is implied by the formula: solves with
    /// it assumed false (see [`Encoding::block`]).
    fn probe(&mut self, v: usize) {
        let lit = Lit::from_index(v, true);
        self.solver.assume(&[!lit]);
        let sat = self
            .solver
            .solve()
            .unwrap_or_else(|e| panic!("varisat failed: {e}"));
        if sat {
            let value = self.model_values();
            for (streak, &x) in self.known.streak.iter_mut().zip(&value) {
                if !x {
                    *streak = 0;
                }
            }
            self.known.probe_at[v] = self.known.probe_at[v].saturating_mul(2);
        } else {
            // No model without it (or none at all: then any clause is
            // exact, the formula stays unsatisfiable).
            self.known.implied[v] = true;
        }
        self.solver.assume(&[]);
    }

    /// The test a model spells, and the program literals that spell it.
    fn decode(&self, value: &[bool]) -> (Test, Vec<Lit>) {
        let pick = |ls: &[Lit]| {
            ls.iter()
                .position(|l| value[l.index()] == l.is_positive())
                .expect("one-hot group has a true literal")
        };
        let mut chosen = Vec::new();
        let mut threads = Vec::new();
        for (t, th) in self.prog.iter().enumerate() {
            let len = self.lens[t];
            let mut instrs = Vec::new();
            for v in th {
                let (l, c, x, j) = (pick(&v.loc), pick(&v.check), pick(&v.exch), pick(&v.jump));
                chosen.extend([v.loc[l], v.check[c], v.exch[x], v.jump[j]]);
                instrs.push(Instr {
                    loc: l as u8,
                    check: c as u8,
                    exch: (x < self.values).then_some(x as u8),
                    jump: Target::from_pc(j, len),
                });
            }
            threads.push(instrs);
        }
        (Test { threads }, chosen)
    }
}
