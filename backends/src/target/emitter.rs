//! What `backends emit` asks of a target ([`Emitter`]): its name and
//! file extension, how it makes its files from AXB tests (one program for
//! all of them, or one file per test and mapping and what goes beside
//! them), how the target's own tool checks them, and whether it takes
//! kernel programs. One object per target, in that target's file
//! (`amber::Scripts`, `glsl::Shaders`, `vulkan::Host`, `metal::Kernels`,
//! `cuda::Program`, `cpp::Program`, `wgsl::Shaders`, `webgpu::Page`);
//! [`crate::target::emit::Target::emitter`] is the one place a target is
//! chosen, and `emit.rs` names none.
//!
//! A target is not a language: the Vulkan target writes GLSL and the
//! WebGPU page WGSL. How a language spells an atomic or a barrier is its
//! language object's ([`crate::target::language`]), which the targets of
//! that language share.

use crate::mapping::{Layout, Mapping};
use crate::target::codegen::Shape;
use crate::target::host::{self, ProgramError};
use crate::target::language::Lang;
use crate::target::File;
use crate::toolchain::ToolError;
use progress_litmus::axb::load::NamedTest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the files of a shader target are made for, beyond the tests'
/// own shaders (the page's title and the mappings it offers).
pub struct Suite<'a> {
    pub tests: &'a [NamedTest],
    pub mappings: &'a [Mapping],
    /// The file stem of a page or program (`--name`).
    pub name: &'a str,
    pub shape: Shape,
    /// Per shader file's name, case folded, the test that owns it: a file
    /// a target adds must not take one of these names.
    pub owners: &'a BTreeMap<PathBuf, &'a str>,
    /// The path of the one file a page or program target writes
    /// (`<name>.<extension>`).
    pub program_path: PathBuf,
}

impl Suite<'_> {
    /// The test whose shader file takes `path`'s name (case folded).
    pub fn owner(&self, path: &Path) -> Option<&str> {
        self.owners.get(&case_folded(path)).copied()
    }
}

/// `path` as a case-insensitive file system sees it (macOS and Windows by
/// default): two tests whose files differ only in case would be one file
/// there, the second overwriting the first, so file clashes are found on
/// these keys. (Generated names are ASCII: `emit::file_stem`.)
pub fn case_folded(path: &Path) -> PathBuf {
    PathBuf::from(path.to_string_lossy().to_ascii_lowercase())
}

/// Two files of one output that would take the same name (compared case
/// folded): the first owner's file and the second's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clash {
    pub path: PathBuf,
    pub first: String,
    pub second: String,
}

/// A target of `backends emit` (see the module doc).
pub trait Emitter: Sync {
    /// Its name on the command line (`--target NAME`).
    fn name(&self) -> &'static str;

    /// The extension of its files.
    fn extension(&self) -> &'static str;

    /// Whether it holds all tests in one program (a campaign compiles
    /// once), rather than a file per test and mapping.
    fn is_program(&self) -> bool {
        false
    }

    /// The whole suite as one program ([`Emitter::is_program`]).
    fn program(&self, _tests: &[NamedTest], _opts: &host::Options) -> Result<String, ProgramError> {
        unreachable!("{} writes a file per test and mapping", self.name())
    }

    /// One test's file under one layout (a target that writes one per
    /// test and mapping); with `bare`
    /// its verification form ([`Emitter::has_bare`]). An error is a
    /// layout the target cannot launch.
    fn shader(
        &self,
        _t: &NamedTest,
        _layout: &Layout,
        _shape: Shape,
        _bare: bool,
    ) -> Result<String, String> {
        unreachable!("{} writes one program, not shaders", self.name())
    }

    /// Whether it writes the bare (verification) form, which the oracle
    /// reads back.
    fn has_bare(&self) -> bool {
        false
    }

    /// The files it writes from its tests' shaders (in test order, each
    /// test's mappings in order): the shaders themselves by default, with
    /// what the target needs beside them (a harness, a host, a build
    /// script), or a page holding them.
    fn finish(&self, shaders: Vec<File>, _suite: &Suite) -> Result<Vec<File>, Clash> {
        Ok(shaders)
    }

    /// Checks written files (`paths`, under the output folder `dir`) with
    /// the target's tool; `scratch` holds temporary files.
    fn check(
        &self,
        dir: &Path,
        files: &[File],
        paths: &[PathBuf],
        scratch: &Path,
    ) -> Result<(), ToolError>;

    /// The language it writes kernel programs (docs/KERNEL.md) in, if it
    /// takes them.
    fn kernel(&self) -> Option<Lang> {
        None
    }
}
