//! # progress_litmus: the core of the GPU forward-progress toolchain
//!
//! The programs the three tools read, write and decide, and the names they
//! share:
//!
//! - [`axb`]: AXB tests, the paper's language (one thread a workgroup):
//!   instructions and their validation ([`axb::test`]), the published
//!   artifact's text format ([`axb::text`]), RON tests and suites
//!   ([`axb::load`], [`axb::suite`]), packed suites ([`axb::packed`]), the
//!   paper's pseudo-code ([`axb::pseudo`]), the 483 published tests
//!   ([`axb::published`]) and the explicit state-space builder
//!   ([`axb::machine`], [`axb::space`]).
//! - [`kernel`]: kernel programs, the language of real GPU idioms
//!   (workgroups of invocations, subgroups, barriers, atomics, registers)
//!   of which AXB is an exact subset, with the shader frontends
//!   ([`kernel::shader`]: WGSL, GLSL, SPIR-V) and [`kernel::load`], the one
//!   loader every command reads its inputs with.
//! - Shared by both: the eleven progress models and their verdicts
//!   ([`model`]), Table 4's buckets ([`buckets`]), errors that point at a
//!   file, line and column ([`error`]; [`locate`] finds a value's place in
//!   RON), suite fingerprints ([`fingerprint`]), JSON text safe to show
//!   ([`json`]), files and streams read and written defensively ([`io`])
//!   and output folders written without following links ([`tree`]).
//!
//! The four crates of the workspace depend one way, each only on those to
//! its left (checked by the workspace's `tests/layout.rs`):
//!
//! ```text
//! progress_litmus (this crate)  <-  oracle  <-  backends  <-  synth
//! ```
//!
//! `oracle` decides whether a program is guaranteed to terminate under each
//! progress model; `backends` turns programs into GPU and CPU programs, runs
//! them and reports which models a device is consistent with, against the
//! oracle's verdicts; `synth` enumerates tests and builds the suites, with
//! both. `ARCHITECTURE.md`, at the root of the repository, is the map of the
//! whole workspace.

pub mod axb;
pub mod buckets;
pub mod error;
pub mod exit;
pub mod fingerprint;
pub mod graph;
pub mod io;
pub mod json;
pub mod kernel;
pub mod locate;
pub mod model;
pub mod progress;
pub mod tree;

pub use axb::suite::{Entry, Suite};
pub use axb::test::{Instr, Target, Test, Thread};
pub use error::{FileError, ParseError};
pub use model::{Base, Fairness, Model, Verdict, Verdicts};
