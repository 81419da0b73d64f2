//! `backends emit`: the files of a target for a set of tests.
//!
//! C++ and CUDA give one program for all tests (a campaign compiles once);
//! GLSL, Amber and Metal give one file per test and mapping, named
//! `<test>.<mapping>.<ext>` (plus `harness.swift` for Metal); Vulkan gives
//! the GLSL shaders plus the generic host and its build script; WGSL gives
//! one shader per test and mapping, and WebGPU one page holding the WGSL
//! shaders of every test. The bytes depend only on the tests and the
//! options, never on time or machine. With `bare` (GLSL and WGSL), every
//! file is the verification form instead: the test or kernel program
//! alone, without stop flag, iteration budget or counters, for a verifier
//! (`oracle` reads it back: [`crate::target::glsl::bare_shader`],
//! [`crate::target::wgsl::bare_shader`], [`crate::target::kernel::bare`]).

use crate::mapping::{Layout, Mapping};
use crate::target::codegen::{self, Shape};
use crate::target::emitter::{Clash, Emitter, Suite};
use crate::target::host::{self, ProgramError};
use crate::target::{amber, cpp, cuda, glsl, kernel, metal, vulkan, webgpu, wgsl, File};
use crate::toolchain::ToolError;
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::load::NamedProgram;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// What to emit: the `--target` values. Each names a target object
/// ([`Target::emitter`], [`Emitter`]), in that target's file; a new
/// target is a file with its object, a value here and its arm there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Target {
    Amber,
    Glsl,
    Metal,
    Cuda,
    Cpp,
    /// The GLSL shaders with a Vulkan host that runs them with a deadline.
    Vulkan,
    /// WGSL compute shaders with an iteration budget (WebGPU).
    Wgsl,
    /// One self-contained HTML page that runs the suite's WGSL shaders on
    /// the visitor's GPU (WebGPU) and offers the results for `import`.
    Webgpu,
}

impl Target {
    /// The target's object: the one place a target is chosen.
    pub fn emitter(self) -> &'static dyn Emitter {
        match self {
            Target::Amber => &amber::Scripts,
            Target::Glsl => &glsl::Shaders,
            Target::Metal => &metal::Kernels,
            Target::Cuda => &cuda::Program,
            Target::Cpp => &cpp::Program,
            Target::Vulkan => &vulkan::Host,
            Target::Wgsl => &wgsl::Shaders,
            Target::Webgpu => &webgpu::Page,
        }
    }

    pub fn name(self) -> &'static str {
        self.emitter().name()
    }

    /// Whether the target holds all tests in one program.
    pub fn is_program(self) -> bool {
        self.emitter().is_program()
    }

    fn extension(self) -> &'static str {
        self.emitter().extension()
    }

    /// The names of the targets whose object `has`, for a message:
    /// "glsl, cuda and wgsl".
    pub fn names_where(has: impl Fn(&dyn Emitter) -> bool) -> String {
        use clap::ValueEnum;
        let names: Vec<&str> = (Target::value_variants().iter())
            .filter(|t| has(t.emitter()))
            .map(|t| t.name())
            .collect();
        and_list(&names)
    }
}

/// Names as a message lists them: "a", "a and b", "a, b and c".
pub fn and_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Options of `backends emit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitOptions {
    pub target: Target,
    /// Shader targets: one file per mapping. Programs: the default mappings.
    pub mappings: Vec<Mapping>,
    /// `None`: floor(65535 / N). For programs, only the default.
    pub instances: Option<u32>,
    pub shape: Shape,
    /// Programs only: the default deadline.
    pub deadline_ms: u64,
    /// Programs only: the file stem of the program.
    pub program_name: String,
    /// GLSL and WGSL only: the bare (verification) form, the program a
    /// verifier should see: no stop flag, no iteration budget, no counters,
    /// fixed-size memory and the launch in comment lines the oracle reads
    /// (docs/KERNEL.md §10.1). Not for running.
    pub bare: bool,
}

/// Why the tests cannot be emitted as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmitError {
    Program(ProgramError),
    /// A test cannot run under a layout on this target.
    Layout {
        test: String,
        mapping: Mapping,
        msg: String,
    },
    /// A kernel program that the target cannot express (a WGSL barrier in
    /// non-uniform control flow), or a target without kernel programs.
    Kernel(String),
    /// Two tests would be written to the same file.
    FileClash {
        path: PathBuf,
        first: String,
        second: String,
    },
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::Program(e) => e.fmt(f),
            EmitError::Kernel(m) => f.write_str(m),
            EmitError::Layout { test, mapping, msg } => {
                write!(f, "test `{test}`, {mapping} mapping: {msg}")
            }
            EmitError::FileClash {
                path,
                first,
                second,
            } if first.eq_ignore_ascii_case(second) && first != second => write!(
                f,
                "tests `{first}` and `{second}` would both be written to {} on a file system that ignores case (macOS, Windows): rename one",
                path.display()
            ),
            EmitError::FileClash {
                path,
                first,
                second,
            } => write!(
                f,
                "tests `{first}` and `{second}` would both be written to {}: rename one",
                path.display()
            ),
        }
    }
}

impl std::error::Error for EmitError {}

impl From<Clash> for EmitError {
    fn from(c: Clash) -> Self {
        EmitError::FileClash {
            path: c.path,
            first: c.first,
            second: c.second,
        }
    }
}

impl From<ProgramError> for EmitError {
    fn from(e: ProgramError) -> EmitError {
        EmitError::Program(e)
    }
}

pub use crate::target::emitter::case_folded;

/// A file stem for a test name: letters, digits, `-`, `_` and `.` kept,
/// anything else `_` (names come from file stems and suite entries, which
/// may hold anything).
pub fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

/// The files for `tests` under `opts`, in a deterministic order.
pub fn files(tests: &[NamedTest], opts: &EmitOptions) -> Result<Vec<File>, EmitError> {
    let host_opts = host::Options {
        shape: opts.shape,
        mappings: opts.mappings.clone(),
        instances: opts.instances,
        deadline_ms: opts.deadline_ms,
    };
    let target = opts.target.emitter();
    let program_path = PathBuf::from(format!(
        "{}.{}",
        file_stem(&opts.program_name),
        target.extension()
    ));
    if target.is_program() {
        return Ok(vec![File {
            path: program_path,
            contents: target.program(tests, &host_opts)?,
        }]);
    }
    // A page runs tests by name, as a program does; shader files are
    // named after them.
    host::check_names(tests)?;
    let (out, owners) = shader_files(tests, opts)?;
    let suite = Suite {
        tests,
        mappings: &opts.mappings,
        name: &opts.program_name,
        shape: opts.shape,
        owners: &owners,
        program_path,
    };
    Ok(target.finish(out, &suite)?)
}

/// One shader (or script) per test and mapping, for the targets that
/// write one each, with the test that owns each file name (case folded):
/// two tests whose names differ only in case, or in characters a file
/// name cannot hold, would overwrite each other, and are refused.
fn shader_files<'a>(
    tests: &'a [NamedTest],
    opts: &EmitOptions,
) -> Result<(Vec<File>, BTreeMap<PathBuf, &'a str>), EmitError> {
    let mut out = Vec::new();
    let mut owners: BTreeMap<PathBuf, &str> = BTreeMap::new();
    for t in tests {
        for &mapping in &opts.mappings {
            let path = PathBuf::from(format!(
                "{}.{}.{}",
                file_stem(&t.name),
                mapping,
                opts.target.extension()
            ));
            if let Some(first) = owners.insert(case_folded(&path), &t.name) {
                return Err(EmitError::FileClash {
                    path,
                    first: first.to_string(),
                    second: t.name.clone(),
                });
            }
            let contents = shader(t, mapping, opts)?;
            out.push(File { path, contents });
        }
    }
    Ok((out, owners))
}

/// The shader (or Amber script) of one test under one mapping; a layout
/// the target cannot launch is the test's error.
fn shader(t: &NamedTest, mapping: Mapping, opts: &EmitOptions) -> Result<String, EmitError> {
    let layout = Layout::new(mapping, t.entry.test.num_threads(), opts.instances);
    (opts.target.emitter())
        .shader(t, &layout, opts.shape, opts.bare)
        .map_err(|msg| EmitError::Layout {
            test: t.name.clone(),
            mapping,
            msg,
        })
}

/// The files of kernel programs (docs/KERNEL.md) for the targets that
/// emit them ([`kernel`]): one `<name>.<ext>` each, and beside them the
/// programs the target cannot express (each its own error: the rest of
/// the batch is still emitted).
pub fn kernel_files(
    programs: &[NamedProgram],
    target: Target,
    bare: bool,
) -> Result<(Vec<File>, Vec<EmitError>), EmitError> {
    let Some(lang) = target.emitter().kernel() else {
        return Err(EmitError::Kernel(format!(
            "{}: program `{}`: the {} target takes AXB tests only; kernel programs are emitted for {}",
            programs[0].source.display(),
            programs[0].name,
            target.name(),
            Target::names_where(|e| e.kernel().is_some())
        )));
    };
    let mut out = Vec::new();
    let mut refused = Vec::new();
    let mut owners: BTreeMap<PathBuf, &str> = BTreeMap::new();
    let mut simt = Vec::new();
    for p in programs {
        let path = PathBuf::from(format!("{}.{}", file_stem(&p.name), lang.extension()));
        if let Some(first) = owners.insert(case_folded(&path), &p.name) {
            return Err(EmitError::FileClash {
                path,
                first: first.to_string(),
                second: p.name.clone(),
            });
        }
        let emitted = if bare {
            kernel::bare::emit_bare(p, lang)
        } else if !p.program.asserts.is_empty() {
            // A program with outcome assertions is a SIMT-Step test: its
            // structured form records one outcome a run.
            kernel::simt::emit_simt(p, lang)
        } else {
            kernel::emit(p, lang)
        };
        match emitted {
            Ok(contents) => {
                if contents.starts_with(kernel::simt::FIRST_LINE) {
                    simt.push(p);
                }
                out.push(File { path, contents })
            }
            Err(e) => refused.push(EmitError::Kernel(e)),
        }
    }
    if lang == kernel::Lang::Wgsl && !simt.is_empty() {
        // The SIMT-Step tests' page, which runs them where WebGPU offers
        // subgroups.
        out.push(File {
            path: PathBuf::from(kernel::simt_page::PAGE),
            contents: kernel::simt_page::page(&simt).map_err(EmitError::Kernel)?,
        });
    }
    Ok((out, refused))
}

/// Writes `files` under `dir`, creating it.
pub fn write(dir: &Path, files: &[File]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for f in files {
        let path = dir.join(&f.path);
        std::fs::write(&path, &f.contents)?;
        #[cfg(unix)]
        if f.contents.starts_with("#!") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// Compiles or validates written files with the target's tool: g++ for
/// C++ (leaving the executable beside the source), nvcc for CUDA,
/// glslangValidator for GLSL and Amber (the embedded shaders), clang++
/// against the Metal shim for Metal; for Vulkan, SPIR-V beside each shader
/// and the host `vkrun` (as `build.sh` does); for WGSL and WebGPU (the
/// page's shaders), naga in-process. `scratch` holds temporary files.
pub fn check(
    dir: &Path,
    files: &[File],
    opts: &EmitOptions,
    scratch: &Path,
) -> Result<(), ToolError> {
    let paths: Vec<PathBuf> = files.iter().map(|f| dir.join(&f.path)).collect();
    opts.target.emitter().check(dir, files, &paths, scratch)
}

/// One test's own code for one target (and mapping, for the shader
/// targets), as a reader wants to see it, e.g. in `synth explorer`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub target: Target,
    /// The mapping of a shader file; `None` for the C++ and CUDA function,
    /// whose harness (shared by every test of a program) applies the
    /// mapping chosen on its command line.
    pub mapping: Option<Mapping>,
    pub text: String,
}

/// The code `backends emit` writes for one test: for GLSL, Amber and Metal
/// the whole file per mapping (default instances); for C++ and CUDA the
/// test's function in the program (the rest of the program is the same
/// for every test). The texts are exactly those of `backends emit`.
pub fn test_sources(t: &NamedTest, shape: Shape) -> Result<Vec<Source>, EmitError> {
    let mut out = Vec::new();
    for target in [Target::Glsl, Target::Amber, Target::Metal, Target::Wgsl] {
        for mapping in Mapping::ALL {
            let layout = Layout::new(mapping, t.entry.test.num_threads(), None);
            let text = (target.emitter())
                .shader(t, &layout, shape, false)
                .map_err(|msg| EmitError::Layout {
                    test: t.name.clone(),
                    mapping,
                    msg,
                })?;
            out.push(Source {
                target,
                mapping: Some(mapping),
                text,
            });
        }
    }
    let note = |cmd: &str| {
        format!(
            "// The function of {} in the program `backends emit --target {cmd}` writes for a suite;\n\
             // its harness, shared by all tests, maps workgroups to (thread, instance) by --mapping.\n",
            codegen::comment_safe(&t.name)
        )
    };
    out.push(Source {
        target: Target::Cuda,
        mapping: None,
        text: note("cuda") + &cuda::test_kernel(0, t, shape),
    });
    out.push(Source {
        target: Target::Cpp,
        mapping: None,
        text: note("cpp") + &cpp::test_function(0, t, shape),
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// The command line's value for a target (clap's, from the enum) is
    /// its object's name, and the objects' facts agree with the forms
    /// `files` makes: a program target writes no shaders, and the
    /// targets that take kernel programs or the bare form are named in
    /// the messages that list them.
    #[test]
    fn each_target_value_names_its_object() {
        for t in Target::value_variants() {
            let value = t.to_possible_value().unwrap();
            assert_eq!(value.get_name(), t.name(), "{t:?}");
            let e = t.emitter();
            assert!(!(e.is_program() && e.has_bare()), "{t:?}");
        }
        assert_eq!(
            Target::names_where(|e| e.kernel().is_some()),
            "glsl, cuda and wgsl"
        );
        assert_eq!(Target::names_where(|e| e.has_bare()), "glsl and wgsl");
        assert_eq!(Target::names_where(|e| e.is_program()), "cuda and cpp");
        assert_eq!(Target::names_where(|_| false), "");
    }

    fn named(name: &str) -> NamedTest {
        let test = progress_litmus::axb::text::parse("THREAD0\natomic_store(0,1)\n").unwrap();
        NamedTest {
            name: name.into(),
            entry: progress_litmus::axb::suite::Entry::new(name, test),
            source: "t.txt".into(),
        }
    }

    fn options(target: Target) -> EmitOptions {
        EmitOptions {
            target,
            mappings: vec![Mapping::Plain],
            instances: None,
            shape: Shape::Switch,
            deadline_ms: 1000,
            program_name: "tests".into(),
            bare: false,
        }
    }

    /// Every target that writes a file per test refuses two tests whose
    /// files would be one on a case-insensitive file system, and the
    /// Vulkan target a test that would take its canary's file; the
    /// program targets hold both in one file.
    #[test]
    fn files_that_would_overwrite_each_other_are_refused_on_every_target() {
        let twins = [named("ab"), named("AB")];
        for t in Target::value_variants() {
            let got = files(&twins, &options(*t));
            if t.is_program() {
                assert!(got.is_ok(), "{t:?}: {got:?}");
            } else {
                let e = got.expect_err(t.name()).to_string();
                assert!(e.contains("ab") && e.contains("AB"), "{t:?}: {e}");
            }
        }
        let canary = [named(vulkan::CANARY)];
        assert!(files(&canary, &options(Target::Vulkan)).is_err());
    }
}
