//! # oracle: is a progress litmus test guaranteed to terminate?
//!
//! For a test and one of the eleven progress models (SPEC §2-3) the oracle
//! builds the product of the test's state space with the model's fair set F
//! ([`product`], [`fair_set`]), decides termination by strongly connected
//! components (weak fairness), a backward fixpoint (strong fairness) or
//! cycle detection (unfair) ([`check`]), and, when termination is not
//! guaranteed, produces a witness schedule ([`explain`] renders it).
//!
//! The weak and strong variants of a model share one product space, so
//! [`verdicts`] builds six spaces for eleven verdicts.

pub mod check;
pub mod dot;
pub mod explain;
pub mod fair_set;
pub mod kernel;
pub mod product;

use axb::{Base, Fairness, Model, Test, Verdict, Verdicts};
use product::Product;
use rayon::prelude::*;

/// The verdict of one model on a product space of its base.
fn decide(p: &Product, fairness: Fairness) -> bool {
    match (p.base, fairness) {
        (Base::Unfair, _) => check::cyclic_component(p).is_none(),
        (_, Fairness::Weak) => check::weak_passes(p),
        (_, Fairness::Strong) => check::strong_passes(p),
    }
}

/// Whether `test` (valid, see [`Test::validate`]) is guaranteed to
/// terminate under `model`.
pub fn verdict(test: &Test, model: Model) -> Verdict {
    Verdict::from_pass(decide(&Product::build(test, model.base), model.fairness))
}

/// The verdicts of `test` under all eleven models.
pub fn verdicts(test: &Test) -> Verdicts {
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
            v[Model::new(base, fairness).index()] = Verdict::from_pass(decide(&p, fairness));
        }
    }
    Verdicts(v)
}

/// [`verdicts`] for many tests, in parallel, in input order.
pub fn verdicts_all(tests: &[&Test]) -> Vec<Verdicts> {
    tests.par_iter().map(|t| verdicts(t)).collect()
}

/// A verdict with its evidence, for [`explain`].
pub struct Analysis {
    pub model: Model,
    pub verdict: Verdict,
    pub product: Product,
    pub witness: Option<check::Witness>,
}

/// Decides `test` under `model` and, when it fails, finds a witness.
pub fn analyse(test: &Test, model: Model) -> Analysis {
    let product = Product::build(test, model.base);
    let witness = match (model.base, model.fairness) {
        (Base::Unfair, _) => check::unfair_witness(&product),
        (_, Fairness::Weak) => check::weak_witness(&product),
        (_, Fairness::Strong) => check::strong_witness(&product),
    };
    Analysis {
        model,
        verdict: Verdict::from_pass(witness.is_none()),
        product,
        witness,
    }
}
