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
use crate::target::host::{self, ProgramError};
use crate::target::{amber, cpp, cuda, glsl, kernel, metal, templates, vulkan, webgpu, wgsl, File};
use crate::toolchain::{self, ToolError};
use progress_litmus::axb::load::NamedTest;
use progress_litmus::kernel::load::NamedProgram;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// What to emit.
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
    pub fn name(self) -> &'static str {
        match self {
            Target::Amber => "amber",
            Target::Glsl => "glsl",
            Target::Metal => "metal",
            Target::Cuda => "cuda",
            Target::Cpp => "cpp",
            Target::Vulkan => "vulkan",
            Target::Wgsl => "wgsl",
            Target::Webgpu => "webgpu",
        }
    }

    /// Whether the target holds all tests in one program.
    pub fn is_program(self) -> bool {
        matches!(self, Target::Cuda | Target::Cpp)
    }

    fn extension(self) -> &'static str {
        match self {
            Target::Amber => "amber",
            Target::Glsl | Target::Vulkan => "comp",
            Target::Metal => "metal",
            Target::Cuda => "cu",
            Target::Cpp => "cpp",
            Target::Wgsl => "wgsl",
            Target::Webgpu => "html",
        }
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

impl From<ProgramError> for EmitError {
    fn from(e: ProgramError) -> EmitError {
        EmitError::Program(e)
    }
}

/// `path` as a case-insensitive file system sees it (macOS and Windows by
/// default): two tests whose files differ only in case would be one file
/// there, the second overwriting the first, so file clashes are found on
/// these keys. (Generated names are ASCII: [`file_stem`].)
pub fn case_folded(path: &Path) -> PathBuf {
    PathBuf::from(path.to_string_lossy().to_ascii_lowercase())
}

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
    let program_path = PathBuf::from(format!(
        "{}.{}",
        file_stem(&opts.program_name),
        opts.target.extension()
    ));
    match opts.target {
        Target::Cpp => {
            return Ok(vec![File {
                path: program_path,
                contents: cpp::program(tests, &host_opts)?,
            }])
        }
        Target::Cuda => {
            return Ok(vec![File {
                path: program_path,
                contents: cuda::program(tests, &host_opts)?,
            }])
        }
        // A page runs tests by name, as a program does.
        Target::Webgpu => host::check_names(tests)?,
        _ => {}
    }
    host::check_names(tests)?;
    let (mut out, owners) = shader_files(tests, opts)?;
    if opts.target == Target::Webgpu {
        // The shaders, in test order and each test's mappings in order, go
        // into the page.
        let shaders: Vec<String> = out.into_iter().map(|f| f.contents).collect();
        let page = webgpu::page(
            &opts.program_name,
            tests,
            &opts.mappings,
            &shaders,
            opts.shape,
        );
        return Ok(vec![File {
            path: program_path,
            contents: page,
        }]);
    }
    if opts.target == Target::Metal {
        out.push(File {
            path: PathBuf::from("harness.swift"),
            contents: templates::METAL_HARNESS.to_string(),
        });
    }
    if opts.target == Target::Vulkan {
        vulkan_files(&owners, opts, &mut out)?;
    }
    Ok(out)
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
    let layout_err = |msg| EmitError::Layout {
        test: t.name.clone(),
        mapping,
        msg,
    };
    Ok(match opts.target {
        Target::Glsl if opts.bare => {
            glsl::bare_shader(t, &layout, opts.shape).map_err(layout_err)?
        }
        Target::Wgsl if opts.bare => {
            wgsl::bare_shader(t, &layout, opts.shape).map_err(layout_err)?
        }
        Target::Glsl => glsl::shader(t, &layout, opts.shape, "glsl").map_err(layout_err)?,
        Target::Vulkan => glsl::shader(t, &layout, opts.shape, "vulkan").map_err(layout_err)?,
        Target::Amber => amber::script(t, &layout, opts.shape).map_err(layout_err)?,
        Target::Metal => metal::kernel(t, &layout, opts.shape),
        Target::Wgsl => wgsl::shader(t, &layout, opts.shape, "wgsl").map_err(layout_err)?,
        Target::Webgpu => wgsl::shader(t, &layout, opts.shape, "webgpu").map_err(layout_err)?,
        Target::Cpp | Target::Cuda => unreachable!("programs are handled above"),
    })
}

/// What the Vulkan host needs beside the tests' shaders: the canary
/// shader (refused if a test's file would take its name), the host's
/// source and its build script.
fn vulkan_files(
    owners: &BTreeMap<PathBuf, &str>,
    opts: &EmitOptions,
    out: &mut Vec<File>,
) -> Result<(), EmitError> {
    if owners.contains_key(&case_folded(Path::new(&format!(
        "{}.plain.comp",
        vulkan::CANARY
    )))) {
        return Err(EmitError::FileClash {
            path: PathBuf::from(format!("{}.comp", vulkan::CANARY)),
            first: vulkan::CANARY.to_string(),
            second: "the built-in canary".to_string(),
        });
    }
    out.push(vulkan::canary(opts.shape));
    out.push(File {
        path: PathBuf::from(vulkan::HOST_FILE),
        contents: vulkan::host(),
    });
    out.push(File {
        path: PathBuf::from("build.sh"),
        contents: vulkan::BUILD_SCRIPT.to_string(),
    });
    Ok(())
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
    let lang = match target {
        Target::Cuda => kernel::Lang::Cuda,
        Target::Glsl => kernel::Lang::Glsl,
        Target::Wgsl => kernel::Lang::Wgsl,
        other => {
            return Err(EmitError::Kernel(format!(
                "{}: program `{}`: the {} target takes AXB tests only; kernel programs are emitted for cuda, glsl and wgsl",
                programs[0].source.display(),
                programs[0].name,
                other.name()
            )))
        }
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
    match opts.target {
        Target::Cpp => toolchain::compile_cpp(&paths[0], &paths[0].with_extension("")),
        Target::Cuda => {
            for p in &paths {
                toolchain::compile_cuda(p, &p.with_extension(""), &[])?;
            }
            Ok(())
        }
        Target::Glsl => toolchain::check_glsl(&paths),
        Target::Vulkan => {
            let comps: Vec<PathBuf> = paths
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "comp"))
                .cloned()
                .collect();
            vulkan::build(&comps, &dir.join(vulkan::HOST_FILE), &dir.join("vkrun"))
        }
        Target::Amber => {
            std::fs::create_dir_all(scratch).map_err(|e| ToolError::Io(e.to_string()))?;
            let mut shaders = Vec::new();
            for f in files {
                let src = &f.contents;
                let start = src.find("#version").unwrap_or(0);
                let end = src.rfind("\nEND\n\nBUFFER").map_or(src.len(), |i| i + 1);
                let p = scratch.join(f.path.with_extension("comp"));
                std::fs::write(&p, &src[start..end]).map_err(|e| ToolError::Io(e.to_string()))?;
                shaders.push(p);
            }
            toolchain::check_glsl(&shaders)
        }
        Target::Metal => {
            let kernels: Vec<PathBuf> = paths
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "metal"))
                .collect();
            toolchain::check_metal(&kernels, scratch)
        }
        Target::Wgsl => {
            for (f, p) in files.iter().zip(&paths) {
                if f.path.extension().is_some_and(|e| e == "html") {
                    continue;
                }
                let validate = if f.contents.starts_with(kernel::FIRST_LINE) {
                    kernel::validate_wgsl
                } else if f.contents.starts_with(kernel::simt::FIRST_LINE) {
                    kernel::simt::validate_wgsl
                } else {
                    wgsl::validate
                };
                validate(&f.contents).map_err(|output| ToolError::Failed {
                    command: format!("naga (in-process WGSL validation) {}", p.display()),
                    output,
                })?;
            }
            Ok(())
        }
        Target::Webgpu => {
            let page = &files[0];
            webgpu::check_page(&page.contents)
                .map_err(|e| ToolError::Io(format!("{}: {e}", paths[0].display())))
        }
    }
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
            let layout_err = |msg| EmitError::Layout {
                test: t.name.clone(),
                mapping,
                msg,
            };
            let text = match target {
                Target::Glsl => glsl::shader(t, &layout, shape, "glsl").map_err(layout_err)?,
                Target::Amber => amber::script(t, &layout, shape).map_err(layout_err)?,
                Target::Wgsl => wgsl::shader(t, &layout, shape, "wgsl").map_err(layout_err)?,
                _ => metal::kernel(t, &layout, shape),
            };
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
