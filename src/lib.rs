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

pub mod buckets;
pub mod error;
pub mod fast_ron;
pub mod fingerprint;
pub mod kernel;
pub mod load;
pub mod locate;
pub mod machine;
pub mod model;
pub mod packed;
pub mod pseudo;
pub mod published;
pub mod space;
pub mod suite;
pub mod test;
pub mod text;

pub use error::{FileError, ParseError};
pub use model::{Base, Fairness, Model, Verdict, Verdicts};
pub use suite::{Entry, Suite};
pub use test::{Instr, Target, Test, Thread};
