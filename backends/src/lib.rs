//! # backends: progress litmus tests as GPU and CPU programs
//!
//! Turns AXB tests ([`axb::test::Test`]) into programs for real devices
//! (SPEC §6, paper §6): GLSL compute shaders and Amber scripts for Vulkan,
//! Metal kernels with a Swift host, CUDA programs and C++ programs. Every
//! target shares one lowering ([`codegen`]) and one description of where
//! test threads run ([`mapping`]).
//!
//! - [`cpp::program`] and [`cuda::program`]: one program for a whole suite,
//!   tests selected at run time by name, one JSON result line per run (format
//!   and flags in [`host`]).
//! - [`glsl::shader`], [`amber::script`], [`metal::kernel`]: one file per test
//!   and mapping, the mapping and instance count baked in.
//! - [`vulkan`]: the GLSL shaders as SPIR-V with a generic Vulkan host that
//!   runs them with a deadline on any Vulkan device.
//! - [`emit`]: the `backends emit` command, writing any of the above.
//! - [`toolchain`]: finding and running the compilers, with install hints.
//! - [`run`], [`journal`], [`import`]: campaigns on a device (journaled,
//!   resumable) or imported from a program run elsewhere, written as
//!   artifact-format CSVs ([`results`]).
//! - [`report`], [`observations`], [`chart`]: which models the observations
//!   are consistent with, as text, JSON and SVG.

pub mod amber;
pub mod chart;
pub mod codegen;
pub mod cpp;
pub mod cuda;
pub mod emit;
pub mod glsl;
pub mod host;
pub mod import;
pub mod journal;
pub mod mapping;
pub mod metal;
pub mod observations;
pub mod report;
pub mod report_cli;
pub mod results;
pub mod run;
pub mod toolchain;
pub mod vulkan;

pub use codegen::Shape;
pub use mapping::{Layout, Mapping};
