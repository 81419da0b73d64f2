//! # axb: progress litmus tests
//!
//! The shared core of the GPU forward-progress toolchain: the AXB language
//! ([`test`]), its file formats ([`text`] for the published artifact's
//! format, [`load`] and [`suite`] for RON, [`locate`] to point at a fault in
//! RON, [`pseudo`] for the paper's C-like notation), the names of the progress models and verdicts ([`model`]), the
//! Table 4 buckets ([`buckets`]), and the explicit state-space builder
//! ([`machine`], [`space`]); and [`kernel`], the language of real GPU idioms
//! (workgroups of invocations, barriers, atomics, registers) that AXB is a
//! subset of.
//!
//! The three tools build on this crate and never on each other's internals:
//! `synth` generates tests, `oracle` decides termination under each progress
//! model, `backends` turns tests into GPU and CPU programs and runs them.

pub mod axb;
pub mod buckets;
pub mod error;
pub mod fingerprint;
pub mod json;
pub mod kernel;
pub mod locate;
pub mod model;
pub mod tree;

pub use axb::suite::{Entry, Suite};
pub use axb::test::{Instr, Target, Test, Thread};
pub use error::{FileError, ParseError};
pub use model::{Base, Fairness, Model, Verdict, Verdicts};
