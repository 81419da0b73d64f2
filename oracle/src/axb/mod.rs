//! # The AXB engines
//!
//! AXB tests (docs/SPEC.md) decided under the eleven progress models: the
//! shared space of all eleven ([`shared_space`], [`decide`], [`scratch`])
//! for verdicts, and the per-model products ([`product`], [`fair_set`],
//! [`check`]) for witnesses ([`explain`], [`lts`], [`dot`]). Kernel
//! programs have their own engine beside this one ([`crate::kernel`]).

pub mod check;
pub mod decide;
pub mod dot;
pub mod explain;
pub mod fair_set;
pub mod lts;
pub mod product;
pub mod scratch;
pub mod shared_space;

use product::Product;
pub use progress_litmus::axb::space::TooLarge;
use progress_litmus::{Base, Fairness, Model, Test, Verdict, Verdicts};
use rayon::prelude::*;
use scratch::Scratch;
use std::cell::RefCell;

/// The default bound on the states of one test's space (`--max-states`).
///
/// Measured peaks (eight threads, about seven transitions a state): the
/// shared space of `classify`, `table` and `label` takes 72 to 76 bytes a
/// state (3.5 and 18.6 million states), the per-model product and witness
/// of `explain` about 190. Twenty million states keep either under 4 GB,
/// well under the 24 GiB of the machine this was measured on, and take
/// a minute or two to explore. Batches explore large tests one at a time
/// (see [`try_verdicts_all`]), so the bound holds per process, not per core.
pub const DEFAULT_MAX_STATES: usize = 20_000_000;

/// Bytes a state of the shared space takes at its peak, rounded up (see
/// [`DEFAULT_MAX_STATES`]).
pub const BYTES_PER_STATE: usize = 100;

/// Bytes a state of a per-model product takes with its witness, rounded up.
pub const PRODUCT_BYTES_PER_STATE: usize = 200;

/// Tests whose space grows past this many states are labelled one at a
/// time by [`try_verdicts_all`], after the others, so that peak memory is
/// one large space whatever the number of cores.
const SMALL_STATES: usize = shared_space::LARGE;

thread_local! {
    /// Each worker thread's buffers, reused from test to test.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::new());
}

/// The verdict of one model on a product space of its base (the per-model
/// engine, used for witnesses and as a cross-check of the shared one).
pub fn decide_on_product(p: &Product, fairness: Fairness) -> bool {
    match (p.base, fairness) {
        (Base::Unfair, _) => check::cyclic_component(p).is_none(),
        (_, Fairness::Weak) => check::weak_passes(p),
        (_, Fairness::Strong) => check::strong_passes(p),
    }
}

/// The eleven verdicts computed the long way: one product space per base
/// model ([`Product`]) and the rules of [`check`] on each. Slower than
/// [`verdicts`]; kept as a cross-check of the shared space.
pub fn verdicts_per_model(test: &Test) -> Verdicts {
    let mut v = [Verdict::F; 11];
    for base in [
        Base::Unfair,
        Base::Hsa,
        Base::Obe,
        Base::HsaObe,
        Base::Lobe,
        Base::Fair,
    ] {
        let p = Product::build(test, base);
        for fairness in [Fairness::Weak, Fairness::Strong] {
            if base == Base::Unfair && fairness == Fairness::Strong {
                continue;
            }
            v[Model::new(base, fairness).index()] =
                Verdict::from_pass(decide_on_product(&p, fairness));
        }
    }
    Verdicts(v)
}

/// The verdicts of `test` under all eleven models, or [`TooLarge`] if its
/// state space has more than `max_states` states. Uses the calling thread's
/// reusable buffers.
pub fn try_verdicts(test: &Test, max_states: usize) -> Result<Verdicts, TooLarge> {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let r = try_verdicts_in(&mut s, test, max_states);
        if s.space.num_states() > SMALL_STATES {
            // Do not keep a large space's buffers for the thread's life.
            *s = Scratch::new();
        }
        r
    })
}

/// [`try_verdicts`] with explicit buffers.
pub fn try_verdicts_in(
    scratch: &mut Scratch,
    test: &Test,
    max_states: usize,
) -> Result<Verdicts, TooLarge> {
    scratch.build(test, max_states)?;
    let Scratch { space, work, .. } = scratch;
    Ok(decide::decide(space, work))
}

/// Whether `test` (valid, see [`Test::validate`]) is guaranteed to
/// terminate under `model`. Unbounded: see [`try_verdicts`] for input from
/// users.
pub fn verdict(test: &Test, model: Model) -> Verdict {
    verdicts(test).get(model)
}

/// The verdicts of `test` under all eleven models. Unbounded (up to
/// [`shared_space::MAX_STATES_LIMIT`] states, past which it panics): tools
/// that read tests from users call [`try_verdicts`] or [`try_verdicts_all`].
pub fn verdicts(test: &Test) -> Verdicts {
    try_verdicts(test, shared_space::MAX_STATES_LIMIT).unwrap_or_else(|e| {
        panic!("a state space of more than {} states", e.bound);
    })
}

/// [`verdicts`] for many tests, in parallel, in input order. Unbounded, as
/// [`verdicts`].
pub fn verdicts_all(tests: &[&Test]) -> Vec<Verdicts> {
    try_verdicts_all(tests, shared_space::MAX_STATES_LIMIT)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("a state space of more than {} states", e.bound)))
        .collect()
}

/// [`try_verdicts`] for many tests, on every core, in input order.
///
/// Tests are first explored in parallel up to a million states each; those
/// that need more are then explored one at a time up to `max_states`, so
/// that the memory a batch needs is that of one large space plus a small one
/// per core, however many cores there are.
pub fn try_verdicts_all(tests: &[&Test], max_states: usize) -> Vec<Result<Verdicts, TooLarge>> {
    let first = max_states.min(SMALL_STATES);
    let mut out: Vec<Result<Verdicts, TooLarge>> = tests
        .par_iter()
        .with_min_len(16)
        .map(|t| try_verdicts(t, first))
        .collect();
    if max_states > first {
        let mut scratch = Scratch::new();
        for (r, t) in out.iter_mut().zip(tests) {
            if r.is_err() {
                *r = try_verdicts_in(&mut scratch, t, max_states);
            }
        }
    }
    out
}

/// A verdict with its evidence, for [`explain`].
pub struct Analysis {
    pub model: Model,
    pub verdict: Verdict,
    pub product: Product,
    pub witness: Option<check::Witness>,
}

/// Decides `test` under `model` on its product space and, when it fails,
/// finds a witness. Unbounded: see [`try_analyse`].
pub fn analyse(test: &Test, model: Model) -> Analysis {
    try_analyse(test, model, shared_space::MAX_STATES_LIMIT)
        .unwrap_or_else(|e| panic!("a state space of more than {} states", e.bound))
}

/// [`analyse`], or [`TooLarge`] if the product space has more than
/// `max_states` states.
pub fn try_analyse(test: &Test, model: Model, max_states: usize) -> Result<Analysis, TooLarge> {
    let product = Product::build_bounded(test, model.base, max_states)?;
    let witness = match (model.base, model.fairness) {
        (Base::Unfair, _) => check::unfair_witness(&product),
        (_, Fairness::Weak) => check::weak_witness(&product),
        (_, Fairness::Strong) => check::strong_witness(&product),
    };
    Ok(Analysis {
        model,
        verdict: Verdict::from_pass(witness.is_none()),
        product,
        witness,
    })
}
