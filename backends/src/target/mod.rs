//! The targets: progress litmus tests as GPU and CPU programs (SPEC §6,
//! paper §6), one file per target, and the lowering they share.
//!
//! - [`language`]: the languages as objects ([`language::Language`],
//!   [`language::KernelLanguage`]), one in each language's file
//!   (`cuda::Cuda`, `glsl::Glsl`, `wgsl::Wgsl`, `metal::Metal`,
//!   `cpp::Cpp`): how each spells atomics, barriers, ids and the file
//!   around a kernel, for the AXB and the kernel emitters alike.
//! - [`codegen`]: the per-instruction lowering of the AXB tests, spelt by
//!   a [`codegen::Dialect`] (a language and a stop test), and the comment
//!   blocks a file starts with.
//! - [`glsl`], [`amber`], [`metal`]: one file per test and mapping, the
//!   mapping and instance count baked in; [`vulkan`]: the GLSL shaders with
//!   a generic Vulkan host that runs them with a deadline.
//! - [`wgsl`]: WGSL shaders with an iteration budget instead of a stop
//!   flag; [`webgpu`]: one page that runs them in a browser.
//! - [`cpp`], [`cuda`]: one program for a whole suite, tests selected at run
//!   time by name; what the two programs share (command line, result lines,
//!   test table) is in [`host`], and which test names a program can carry
//!   in [`names`].
//! - [`templates`]: the hand-written host code the generated programs embed.
//! - [`emitter`]: what `backends emit` asks of a target
//!   ([`emitter::Emitter`]), one object in each target's file.
//! - [`File`]: an emitted file, made by the targets and written by [`emit`].
//! - [`emit`]: the `backends emit` command, writing any of the above
//!   through the target objects.
//!
//! **For other crates**: [`test_sources`] gives the code of one test for
//! each target (and mapping, for the shader targets), each a [`Source`],
//! in a code [`Shape`], exactly as `backends emit` writes it, and
//! [`runner_script`] runs WGSL shaders in a browser (the webgpu page's
//! runner). `synth explorer` uses these four and nothing else of `backends` (checked by
//! `backends/tests/layout.rs`), so the rest can change without touching it.
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
pub mod emitter;
pub mod glsl;
pub mod host;
pub mod kernel;
pub mod language;
pub mod metal;
pub mod names;
pub mod templates;
pub mod vulkan;
pub mod webgpu;
#[cfg(feature = "wgpu")]
pub mod wgpu;
pub mod wgsl;

// The API for other crates, see the module doc.
pub use codegen::Shape;
pub use emit::{test_sources, Source};
pub use webgpu::runner_script;

use std::path::PathBuf;

/// One emitted file, its path relative to the output directory. Below the
/// targets and [`emit`] alike: a target that brings files of its own (the
/// Vulkan canary and host) makes them, and `emit` writes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub path: PathBuf,
    pub contents: String,
}

/// FNV-1a, 64 bits, as hex: a stable fingerprint of generated programs and
/// suites (not a security hash: the build cache uses SHA-256).
pub use progress_litmus::fingerprint::fnv64;
