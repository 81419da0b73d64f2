//! # Termination of kernel programs under scoped progress models
//!
//! The oracle for the kernel language of `progress_litmus::kernel` (docs/KERNEL.md):
//! the product of a program with a scoped model ([`product`], [`scopes`]),
//! the weak, strong and deadlock rules ([`check`]), witnesses
//! ([`witness`]), their rendering ([`explain`], [`dot`]), the reductions
//! ([`symmetry`]), and the check of a program's own `expect` lines
//! ([`check_expectations`]). The `oracle` command line takes kernel
//! programs and AXB tests alike (`progress_litmus::kernel::load`).
//!
//! AXB tests are kernel programs (`progress_litmus::kernel::embed`), and on them this
//! checker gives the verdicts of the AXB engine ([`crate::verdicts`]) under
//! all eleven models: the tests cross-check the two implementations on
//! every published and every synthesized test. Memory is sequentially
//! consistent.

pub mod arena;
pub mod check;
pub mod counted;
pub mod dot;
pub mod explain;
pub use progress_litmus::kernel::independence;
pub mod lean;
pub mod lifted;
pub mod liveness;
pub mod outcomes;
pub mod product;
pub mod proviso;
pub mod replay;
pub mod rows;
pub mod scopes;
pub mod sentence;
pub mod stats;
pub mod symmetry;
pub mod witness;
pub mod words;

use product::{Chains, Kernel, Reductions, Shared};
use progress_litmus::kernel::load::NamedProgram;
use progress_litmus::kernel::machine::{Fault, Packed};
use progress_litmus::kernel::program::{Outcome, Program};
use progress_litmus::kernel::ScopedModel;
use progress_litmus::{Fairness, Model, Verdict, Verdicts};
use std::collections::HashMap;
use std::fmt;

/// The default bound on the number of states of a product.
pub const DEFAULT_MAX_STATES: usize = 5_000_000;

/// The byte budget of a state bound: one rule for the checker and the
/// shader frontend's value check, kept in the core (see
/// [`progress_litmus::kernel::budget`]).
pub use progress_litmus::kernel::budget::{budget, BYTES_PER_STATE, MIN_BUDGET};

/// Why a program got no verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// The product grew past the state bound.
    TooLarge(usize),
    /// The product's tables outgrew the budget of the state bound
    /// ([`budget`]), or the system refused memory for them.
    OutOfMemory {
        bound: usize,
        err: progress_litmus::axb::space::OutOfMemory,
    },
    /// The program went wrong at run time (an index out of bounds).
    Fault(Fault),
    /// The program or model is outside what the checker supports.
    Unsupported(String),
    /// The program cannot run under the model, at this line and column of
    /// its source (a SIMT-Step model's structure rules, docs/KERNEL.md
    /// §2.9).
    At {
        line: usize,
        col: usize,
        msg: String,
    },
    /// The checker contradicted itself (a witness that does not check on
    /// the program's states): a bug, reported rather than shown.
    Internal(String),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::TooLarge(b) => write!(
                f,
                "the state space exceeds --max-states {b}: no verdict (raise the bound, or shrink the program)"
            ),
            KernelError::OutOfMemory { bound, err } if err.refused_by_system => write!(
                f,
                "out of memory: the system refused the {} MB the state space needed under --max-states {bound}: no verdict (lower the bound, run fewer inputs at once, or shrink the program)",
                err.wanted / 1_000_000
            ),
            KernelError::OutOfMemory { bound, err } => write!(
                f,
                "the state space exceeds --max-states {bound}: its tables outgrew the {} MB that bound allows: no verdict (raise the bound, or shrink the program)",
                err.limit / 1_000_000
            ),
            KernelError::Fault(e) => write!(f, "a schedule goes wrong: {e}"),
            KernelError::Unsupported(m) => f.write_str(m),
            KernelError::At { line, col, msg } => write!(f, "{line}:{col}: {msg}"),
            KernelError::Internal(m) => write!(f, "internal error: {m} (please report it)"),
        }
    }
}

impl std::error::Error for KernelError {}

impl KernelError {
    /// Whether the bound or memory stopped the check, rather than the
    /// program: a larger share of the bound, or the machine to itself,
    /// may decide it.
    pub fn is_bound(&self) -> bool {
        matches!(
            self,
            KernelError::TooLarge(_) | KernelError::OutOfMemory { .. }
        )
    }

    /// Whether the checker, not the input, went wrong (exit status 1).
    pub fn is_internal(&self) -> bool {
        matches!(self, KernelError::Internal(_))
    }
}

/// How to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub max_states: usize,
    pub reductions: Reductions,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_states: DEFAULT_MAX_STATES,
            reductions: Reductions::ALL,
        }
    }
}

/// A verdict with its detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    /// Some schedule reaches a state where nothing can move and not every
    /// invocation has terminated (a barrier or collective that cannot
    /// complete); the verdict is then F under every model.
    pub deadlock: bool,
    /// States and transitions of the product that decided it.
    pub states: usize,
    pub transitions: usize,
    /// What the product cost (issue 24 item 1).
    pub stats: stats::Stats,
}

/// Calls a function generic in the packed state width with the width a
/// kernel needs.
macro_rules! with_words {
    ($words:expr, $f:ident ( $($arg:expr),* )) => {
        match $words {
            1 => $f::<[u64; 1]>($($arg),*),
            2 => $f::<[u64; 2]>($($arg),*),
            3 => $f::<[u64; 3]>($($arg),*),
            4 => $f::<[u64; 4]>($($arg),*),
            5 => $f::<[u64; 5]>($($arg),*),
            6 => $f::<[u64; 6]>($($arg),*),
            7 => $f::<[u64; 7]>($($arg),*),
            _ => $f::<[u64; 8]>($($arg),*),
        }
    };
}
pub(crate) use with_words;

/// Which verdicts of a product a caller needs: the rule of a verdict not
/// needed is not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    Weak,
    Strong,
    Both,
}

/// The weak and strong verdicts of the product of `k` (each `None` when
/// not wanted).
///
/// The strong rule runs first: a program that terminates under weak
/// fairness terminates under strong fairness (a strongly fair run is
/// weakly fair; docs/KERNEL.md §8.4), so where it fails strongly, or
/// deadlocks, it fails weakly too and the weak rule (components, lifted
/// ones under symmetry) is not run. The full product's rules
/// ([`decide_both_full`]) run both, and the tests compare the two.
fn decide_both_w<S: Packed>(
    k: &Kernel,
    max_states: usize,
    want: Want,
) -> Result<(Option<Decision>, Option<Decision>), KernelError> {
    let p = lean::build::<S>(k, max_states)?;
    let states = p.graph.num_states();
    let transitions = p.graph.num_transitions() + p.twin_moves;
    let stats = stats::Stats::of_lean(&p);
    let deadlock = lean::deadlock(k, &p);
    let strong = (want != Want::Weak).then(|| !deadlock && lean::strong_passes(k, &p));
    let weak = match want {
        Want::Strong => None,
        _ if deadlock || strong == Some(false) => Some(false),
        _ => Some(lean::weak_passes(k, &p)?),
    };
    let d = |pass: bool| Decision {
        verdict: Verdict::from_pass(pass),
        deadlock,
        states,
        transitions,
        stats,
    };
    Ok((weak.map(d), strong.map(d)))
}

/// [`decide_both_w`] on the full product ([`product::build`], the rules of
/// [`check`] and [`lifted`]): the reference the lean checker is tested
/// against.
fn decide_both_full_w<S: Packed>(
    k: &Kernel,
    max_states: usize,
) -> Result<(Decision, Decision), KernelError> {
    let p = product::build::<S>(k, max_states)?;
    let states = p.lts.num_states();
    let transitions = p.lts.num_transitions();
    let stats = stats::Stats::of(&p);
    let deadlock = check::deadlock(k, &p).is_some();
    let weak = !deadlock && lifted::weak_passes(k, &p)?;
    let strong = check::strong_passes(k, &p);
    let d = |pass: bool| Decision {
        verdict: Verdict::from_pass(pass),
        deadlock,
        states,
        transitions,
        stats,
    };
    Ok((d(weak), d(strong)))
}

/// The weak and strong verdicts of `program` under `model` (whose own
/// fairness is ignored): they share one product.
pub fn decide_both(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
) -> Result<(Decision, Decision), KernelError> {
    let (weak, strong) = decide_wanted(program, model, opts, Want::Both, &mut Shared::default())?;
    Ok((weak.expect("wanted"), strong.expect("wanted")))
}

/// The verdicts `want` asks for of `program` under `model` (whose own
/// fairness is ignored); where the verdict must also hold in lockstep
/// ([`lockstep_twin`]), P only where it is P under both (the costs add).
fn decide_wanted(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
    want: Want,
    shared: &mut Shared,
) -> Result<(Option<Decision>, Option<Decision>), KernelError> {
    let (weak, strong) = decide_wanted_one(program, model, opts, want, shared)?;
    let Some(lock) = lockstep_twin(program, model) else {
        return Ok((weak, strong));
    };
    let (lw, ls) = decide_wanted_one(program, &lock, opts, want, &mut Shared::default())
        .map_err(|e| match e {
            KernelError::Unsupported(msg) => KernelError::Unsupported(format!(
                "{msg}: a shader's verdict must also hold for lockstep subgroups (docs/KERNEL.md §10.6); --subgroup-scheduling fair decides for independent fair scheduling alone"
            )),
            e => e,
        })?;
    Ok((meet(weak, lw), meet(strong, ls)))
}

/// The model a verdict of `program` under `model` must also hold under:
/// for a shader whose subgroups are scheduled as GPUs do
/// ([`Program::hardware_subgroups`]), with subgroups of two or more, a
/// model fair inside subgroups is also decided with lockstep subgroups
/// (docs/KERNEL.md §10.6).
pub fn lockstep_twin(program: &Program, model: &ScopedModel) -> Option<ScopedModel> {
    (program.hardware_subgroups
        && program.subgroup_size > 1
        && model.subgroup == progress_litmus::kernel::Sched::Fair)
        .then_some(ScopedModel {
            subgroup: progress_litmus::kernel::Sched::Lockstep,
            ..*model
        })
}

/// Both decisions' verdict (P only if both are) and costs.
fn meet(a: Option<Decision>, b: Option<Decision>) -> Option<Decision> {
    let (mut a, b) = (a?, b?);
    a.verdict = Verdict::from_pass(a.verdict == Verdict::P && b.verdict == Verdict::P);
    a.deadlock |= b.deadlock;
    a.states += b.states;
    a.transitions += b.transitions;
    a.stats += b.stats;
    Some(a)
}

/// The model whose witness shows why `program` fails under `model`:
/// `model`, or its lockstep twin ([`lockstep_twin`]) where only that
/// fails. `explain` and `check` name it.
pub fn explained_model(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
) -> Result<ScopedModel, KernelError> {
    let Some(lock) = lockstep_twin(program, model) else {
        return Ok(*model);
    };
    let one = |m: &ScopedModel| -> Result<Verdict, KernelError> {
        let want = match m.fairness {
            Fairness::Weak => Want::Weak,
            Fairness::Strong => Want::Strong,
        };
        let (w, s) = decide_wanted_one(program, m, opts, want, &mut Shared::default())?;
        Ok(w.or(s).expect("wanted").verdict)
    };
    Ok(if one(model)? == Verdict::F || one(&lock)? == Verdict::P {
        *model
    } else {
        lock
    })
}

/// [`decide_wanted`] under `model` alone.
fn decide_wanted_one(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
    want: Want,
    shared: &mut Shared,
) -> Result<(Option<Decision>, Option<Decision>), KernelError> {
    if progress_litmus::kernel::machine::explicit_fits(program).is_err() {
        return counted_wanted(program, model, opts, want);
    }
    let red = opts.reductions;
    let first = match red.chains {
        Chains::WhenLarge => Reductions {
            chains: Chains::Never,
            ..red
        },
        _ => red,
    };
    let k = Kernel::new_sharing(program, model, first, shared)?;
    match with_words!(k.words, decide_both_w(&k, opts.max_states, want)) {
        // Too large without chains: again with them (docs/KERNEL.md §8.8).
        Err(e) if e.is_bound() && red.chains == Chains::WhenLarge => {
            drop(k);
            let always = Reductions {
                chains: Chains::Always,
                ..red
            };
            let k = Kernel::new_sharing(program, model, always, shared)?;
            with_words!(k.words, decide_both_w(&k, opts.max_states, want))
        }
        r => r,
    }
}

/// [`decide_wanted_one`] for a program too large for the explicit
/// product: the counted product ([`counted`]), or why it does not apply.
fn counted_wanted(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
    want: Want,
) -> Result<(Option<Decision>, Option<Decision>), KernelError> {
    let (weak, strong) = counted::decide_both(program, model, opts).map_err(|e| match e {
        KernelError::Unsupported(why) => KernelError::Unsupported(format!(
            "{}; {why}",
            progress_litmus::kernel::machine::explicit_fits(program).unwrap_err()
        )),
        e => e,
    })?;
    Ok(match want {
        Want::Weak => (Some(weak), None),
        Want::Strong => (None, Some(strong)),
        Want::Both => (Some(weak), Some(strong)),
    })
}

/// [`decide_both`] on the full product with the rules of [`check`] and
/// [`lifted`]: the reference the lean checker ([`lean`]) is tested
/// against (oracle/tests/kernel_props.rs).
pub fn decide_both_full(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
) -> Result<(Decision, Decision), KernelError> {
    let k = Kernel::new(program, model, opts.reductions)?;
    with_words!(k.words, decide_both_full_w(&k, opts.max_states))
}

/// The verdict of `program` under `model`.
pub fn decide(
    program: &Program,
    model: &ScopedModel,
    opts: Options,
) -> Result<Decision, KernelError> {
    Ok(match model.fairness {
        Fairness::Weak => {
            decide_wanted(program, model, opts, Want::Weak, &mut Shared::default())?.0
        }
        Fairness::Strong => {
            decide_wanted(program, model, opts, Want::Strong, &mut Shared::default())?.1
        }
    }
    .expect("wanted"))
}

/// The verdicts under the eleven models of docs/SPEC.md at the device
/// scope (fair inside workgroups), in [`Model::ALL`] order, and whether a
/// deadlock is reachable. Six products decide the eleven.
pub fn flat_verdicts(program: &Program, opts: Options) -> Result<(Verdicts, bool), KernelError> {
    flat_verdicts_stats(program, opts).map(|(v, deadlock, _)| (v, deadlock))
}

/// [`flat_verdicts`] with what the products cost.
///
/// Early termination (issue 24 item 2): the unfair product is built
/// first, and a program that passes under the unfair model passes under
/// every model, so the other five are not built. Passing unfairly means
/// no deadlock and no cycle in the program's own states (docs/KERNEL.md
/// §4: the device rule); every run of another product is a run of the
/// program (a model only restricts who moves, and at any state some actor
/// with a move may take it), so every run terminates under every model,
/// weakly and strongly.
///
/// Then the hierarchy (docs/SPEC.md, the paper's Table 4; docs/KERNEL.md
/// §8.4): unfair < HSA, OBE < HSA+OBE < LOBE < fair, each weak variant
/// below its strong one. A pass under a model is a pass under every model
/// above it, a failure a failure under every model below it; a product
/// both of whose verdicts are so known is not built. The products that
/// symmetry reduces (OBE, fair) are built first, then LOBE, HSA+OBE and
/// HSA.
/// Deadlocks are the same in every flat product (no flat model restricts
/// who moves), so the unfair product's is every product's. Tested against
/// all six products ([`flat_verdicts_all`]) in oracle/tests/kernel_props.rs.
pub fn flat_verdicts_stats(
    program: &Program,
    opts: Options,
) -> Result<(Verdicts, bool, stats::Stats), KernelError> {
    flat_verdicts_with(program, opts, true)
}

/// [`flat_verdicts`] from all six products, without early termination:
/// the reference the shortcut is tested against.
pub fn flat_verdicts_all(
    program: &Program,
    opts: Options,
) -> Result<(Verdicts, bool, stats::Stats), KernelError> {
    flat_verdicts_with(program, opts, false)
}

/// The flat models strictly below `b` in the hierarchy.
fn below(b: progress_litmus::Base) -> &'static [progress_litmus::Base] {
    use progress_litmus::Base::*;
    match b {
        Fair => &[Lobe, HsaObe, Hsa, Obe, Unfair],
        Lobe => &[HsaObe, Hsa, Obe, Unfair],
        HsaObe => &[Hsa, Obe, Unfair],
        Hsa | Obe => &[Unfair],
        Unfair => &[],
    }
}

/// The position of a model's verdict in [`Model::ALL`] order (the
/// unfair model has one verdict, for either fairness).
fn at(b: progress_litmus::Base, f: Fairness) -> usize {
    let f = if b == progress_litmus::Base::Unfair {
        Fairness::Weak
    } else {
        f
    };
    Model::new(b, f).index()
}

/// The flat models strictly above `b` in the hierarchy.
fn above(b: progress_litmus::Base) -> &'static [progress_litmus::Base] {
    use progress_litmus::Base::*;
    match b {
        Unfair => &[Hsa, Obe, HsaObe, Lobe, Fair],
        Hsa | Obe => &[HsaObe, Lobe, Fair],
        HsaObe => &[Lobe, Fair],
        Lobe => &[Fair],
        Fair => &[],
    }
}

/// Records the verdicts of base `b` and what they imply: a pass passes
/// every fairer model of its fairness and the strong variants, a failure
/// fails every less fair model of its fairness and the weak variants.
fn record(v: &mut [Option<Verdict>; 11], b: progress_litmus::Base, weak: Verdict, strong: Verdict) {
    v[at(b, Fairness::Weak)] = Some(weak);
    v[at(b, Fairness::Strong)] = Some(strong);
    for (f, verdict) in [(Fairness::Weak, weak), (Fairness::Strong, strong)] {
        let (others, implied) = match verdict {
            Verdict::P => (above(b), Fairness::Strong),
            Verdict::F => (below(b), Fairness::Weak),
        };
        for &o in others {
            v[at(o, f)].get_or_insert(verdict);
            v[at(o, implied)].get_or_insert(verdict);
        }
    }
}

fn flat_verdicts_with(
    program: &Program,
    opts: Options,
    early: bool,
) -> Result<(Verdicts, bool, stats::Stats), KernelError> {
    use progress_litmus::Base;
    let mut v: [Option<Verdict>; 11] = [None; 11];
    let mut deadlock = false;
    let mut cost = stats::Stats::default();
    // The six products share the machine's tables.
    let mut shared = Shared::default();
    let order = [
        Base::Unfair,
        Base::Obe,
        Base::Fair,
        Base::Lobe,
        Base::HsaObe,
        Base::Hsa,
    ];
    for base in order {
        let known = |f| v[at(base, f)].is_some();
        if early && known(Fairness::Weak) && known(Fairness::Strong) {
            continue;
        }
        let m = ScopedModel::flat(Model::new(base, Fairness::Weak));
        // The unfair model has one verdict: its weak one.
        let want = if base == Base::Unfair {
            Want::Weak
        } else {
            Want::Both
        };
        let (weak, strong) = decide_wanted(program, &m, opts, want, &mut shared)?;
        let weak = weak.expect("wanted");
        cost += weak.stats;
        if early && base == Base::Unfair && weak.verdict == Verdict::P {
            return Ok((Verdicts([Verdict::P; 11]), false, cost));
        }
        deadlock |= weak.deadlock;
        let strong = strong.map_or(weak.verdict, |d| d.verdict);
        if early {
            record(&mut v, base, weak.verdict, strong);
        } else {
            v[at(base, Fairness::Weak)] = Some(weak.verdict);
            v[at(base, Fairness::Strong)] = Some(strong);
        }
    }
    Ok((Verdicts(v.map(|x| x.unwrap_or(Verdict::F))), deadlock, cost))
}

/// A decision as the outcome words of `expect` lines.
pub fn outcome(d: &Decision) -> Outcome {
    if d.verdict == Verdict::P {
        Outcome::P
    } else if d.deadlock {
        Outcome::Deadlock
    } else {
        Outcome::F
    }
}

/// What the oracle says of one `expect` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    Agrees,
    /// The oracle decided otherwise: what it says.
    Disagrees(Outcome),
    /// The oracle could not decide (the bound, a run-time fault): neither
    /// agreement nor disagreement (issue 20 item 11: this was reported as
    /// `"agrees": false`).
    Undecided(KernelError),
}

/// Each `expect` line of a program, in order, checked. `F` is met by a
/// deadlock too (a deadlock is a failure to terminate); `deadlock` only by
/// one.
///
/// Each model is decided once however many lines name it: a file of
/// 20,000 `expect OBE: P;` lines took 20 s, one decision a line.
pub fn check_each_expectation(p: &NamedProgram, opts: Options) -> Vec<Checked> {
    let mut decided: HashMap<ScopedModel, Result<Outcome, KernelError>> = HashMap::new();
    p.program
        .expect
        .iter()
        .map(|e| {
            let got = decided
                .entry(e.model)
                .or_insert_with(|| decide(&p.program, &e.model, opts).map(|d| outcome(&d)));
            let got = match got {
                Ok(got) => *got,
                Err(err) => return Checked::Undecided(err.clone()),
            };
            let ok = match e.outcome {
                Outcome::P => got == Outcome::P,
                Outcome::F => got != Outcome::P,
                Outcome::Deadlock => got == Outcome::Deadlock,
            };
            if ok {
                Checked::Agrees
            } else {
                Checked::Disagrees(got)
            }
        })
        .collect()
}

/// The `expect` lines of a program the oracle does not confirm: (model,
/// expected outcome, what the oracle says, or `no verdict (why)`).
pub fn check_expectations(p: &NamedProgram, opts: Options) -> Vec<(ScopedModel, Outcome, String)> {
    p.program
        .expect
        .iter()
        .zip(check_each_expectation(p, opts))
        .filter_map(|(e, c)| match c {
            Checked::Agrees => None,
            Checked::Disagrees(got) => Some((e.model, e.outcome, got.word().to_string())),
            Checked::Undecided(err) => Some((e.model, e.outcome, format!("no verdict ({err})"))),
        })
        .collect()
}
