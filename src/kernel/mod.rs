//! # Kernel programs: beyond AXB
//!
//! The language of real GPU idioms (docs/KERNEL.md): workgroups of
//! invocations (and subgroups), ids as values, registers with integer
//! arithmetic modulo a bounded domain, branches and jumps, atomic loads,
//! stores, exchanges, compare-exchanges and read-modify-writes, workgroup
//! barriers and subgroup collectives. Memory is sequentially consistent.
//!
//! - [`program`]: the program type and its validation;
//! - [`model`]: scoped progress models (their names and text form; the
//!   semantics is in the oracle);
//! - [`embed`]: AXB tests as kernel programs, losslessly;
//! - [`litmus`]: the hand-written text format, parser and printer;
//! - [`ron`]: the RON forms (a program, a suite of programs);
//! - [`cfg`], [`machine`]: control flow and the packed-state semantics;
//! - [`load`]: reading programs from files and directories;
//! - [`shader`]: WGSL, GLSL and SPIR-V compute shaders as kernel programs.

pub mod cfg;
pub mod embed;
pub mod litmus;
pub mod load;
pub mod machine;
pub mod model;
pub mod program;
pub mod ron;
pub mod shader;

pub use model::{Sched, ScopedModel};
pub use program::{Outcome, Program};
