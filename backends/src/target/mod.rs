//! The targets: progress litmus tests as GPU and CPU programs (SPEC §6,
//! paper §6), one file per target, and the lowering they share.
//!
//! - [`codegen`]: the per-instruction lowering every target spells in its
//!   own [`codegen::Dialect`], and the comment blocks a file starts with.
//! - [`glsl`], [`amber`], [`metal`]: one file per test and mapping, the
//!   mapping and instance count baked in; [`vulkan`]: the GLSL shaders with
//!   a generic Vulkan host that runs them with a deadline.
//! - [`cpp`], [`cuda`]: one program for a whole suite, tests selected at run
//!   time by name; what the two programs share (command line, result lines,
//!   test table) is in [`host`].
//! - [`emit`]: the `backends emit` command, writing any of the above.
//!
//! Dependencies run one way: the targets use the lowering and the shared
//! ground below the three parts ([`crate::mapping`], [`crate::toolchain`]),
//! and nothing here knows of campaigns ([`crate::campaign`]) or reports
//! ([`crate::report`]).

pub mod amber;
pub mod codegen;
pub mod cpp;
pub mod cuda;
pub mod emit;
pub mod glsl;
pub mod host;
pub mod metal;
pub mod vulkan;
