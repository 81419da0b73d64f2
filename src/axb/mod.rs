//! # AXB tests: the paper's language
//!
//! Threads of `atomic_chk_branch` and `atomic_exch_branch` instructions,
//! one thread a workgroup (docs/SPEC.md): the instructions and their
//! validation ([`mod@test`]), the artifact's text format ([`text`]), RON
//! tests and suites ([`suite`], [`load`], [`fast_ron`]), packed suites
//! ([`packed`]), the paper's notation ([`pseudo`]), the 483 published
//! tests ([`published`]), and the explicit state-space builder
//! ([`machine`], [`space`]). AXB is an exact subset of the kernel
//! language ([`crate::kernel::embed`]).

pub mod fast_ron;
pub mod load;
pub mod machine;
pub mod packed;
pub mod pseudo;
pub mod published;
pub mod space;
pub mod suite;
pub mod test;
pub mod text;
