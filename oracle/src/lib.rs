//! # oracle: is a progress litmus test guaranteed to terminate?
//!
//! For a test and one of the eleven progress models (SPEC §2-3) the oracle
//! decides termination by strongly connected components (weak fairness), a
//! backward fixpoint (strong fairness) or cycle detection (unfair).
//!
//! Two engines share those rules:
//!
//! - [`verdicts`] and its batch forms build one state space per test,
//!   shared by all eleven models ([`axb::shared_space`]: every model's fair
//!   set F is a function of its states), and decide the eleven verdicts in
//!   two linear passes over it ([`axb::decide`]). This is what labelling
//!   suites costs.
//! - [`analyse`] builds the product of the test with one model's F
//!   ([`axb::product`], [`axb::fair_set`]) and, when termination is not
//!   guaranteed, finds a witness schedule on it ([`axb::check`];
//!   [`axb::explain`] renders it).
//!
//! The property tests check that the two agree on random programs.
//!
//! Every builder takes a bound on the number of states (`max_states`):
//! past it, a test is refused with [`TooLarge`] instead of exhausting
//! memory. [`DEFAULT_MAX_STATES`] says how the default was chosen.
//!
//! The `oracle` command line is [`cli`], one thin file a subcommand, in
//! the library so that it is compiled, linted and read with the engines.
//!
//! [`json`] is the one way the three tools write JSON text: serde_json,
//! then every character an input could use to drive a terminal escaped.

pub mod axb;
pub mod cli;
pub mod json;
pub mod kernel;

pub use axb::{
    analyse, decide_on_product, try_analyse, try_verdicts, try_verdicts_all, try_verdicts_in,
    verdict, verdicts, verdicts_all, verdicts_per_model, Analysis, TooLarge, BYTES_PER_STATE,
    DEFAULT_MAX_STATES, PRODUCT_BYTES_PER_STATE,
};
