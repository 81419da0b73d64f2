//! # backends: progress litmus tests as GPU and CPU programs
//!
//! Turns AXB tests ([`progress_litmus::axb::test::Test`]) into programs for real devices
//! (SPEC §6, paper §6), runs them, and reports which progress models a
//! device is consistent with. Three parts, one folder each:
//!
//! - [`target`]: the programs. GLSL compute shaders and Amber scripts for
//!   Vulkan, Metal kernels with a Swift host, CUDA and C++ programs, the
//!   shaders with a generic Vulkan host, WGSL shaders with a page that runs
//!   them in any WebGPU browser (and, with the `wgpu` feature, the runner
//!   `backends-wgpu`); one shared lowering
//!   ([`target::codegen`]); what `backends emit` writes ([`target::emit`]).
//! - [`campaign`]: a suite run on a device (journaled, resumable) or
//!   imported from a program run elsewhere (or from the WebGPU page's
//!   result file): `backends run`, `backends import`.
//! - [`report`]: the artifact's result CSVs, the observations they hold,
//!   and which models they are consistent with, as text, JSON and SVG:
//!   `backends report`; the SQLite results database of many devices
//!   (`backends db`) and the static site drawn from it (`backends site`).
//! - [`serve`]: the results service over both (`backends serve`): the
//!   WebGPU page, the site, and the page's uploads into the database.
//!
//! Below the three parts, the ground they share: [`mapping`], where test
//! threads run (used by all three), [`toolchain`], finding and running
//! the compilers (used by `emit --check` and `run`), [`excerpt`],
//! input quoted in messages (used by all three), [`glossary`], the words
//! of every page and `--help`, and [`json`], JSON read from other
//! machines' files, refusing a key given twice.
//!
//! Above the three parts, [`cli`]: the command line of `backends`, one
//! thin file per subcommand (`emit`, `run`, `import`, `report`, `db`).
//!
//! Dependencies run one way: `cli` uses every part and no part uses it;
//! `serve` uses `campaign`, `target` and `report`; `campaign` uses
//! `target` and `report`; `target` and `report` use only
//! the shared ground, never each other nor `campaign` (checked by
//! `backends/tests/layout.rs`). `ARCHITECTURE.md`, at the root of the
//! repository, maps the whole workspace.

pub mod campaign;
pub mod cli;
pub mod excerpt;
pub mod glossary;
pub mod json;
pub mod mapping;
pub mod report;
pub mod serve;
pub mod target;
pub mod toolchain;

pub use mapping::{Layout, Mapping};
pub use target::codegen::Shape;
