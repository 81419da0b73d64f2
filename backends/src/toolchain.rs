//! Finding and running the compilers the emitted programs need, with a
//! message that names the missing tool and the package that provides it.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The header that lets `clang++ -fsyntax-only` check Metal kernels off
/// macOS: the Metal types and atomic functions the kernels use.
pub const METAL_SHIM: &str = include_str!("../metal-shim/metal_stdlib");

/// The CPU emulation of the CUDA runtime that lets g++ compile and run the
/// CUDA harness and kernels (for tests; see `cuda-shim/cuda_runtime.h`).
pub const CUDA_SHIM: &str = include_str!("../cuda-shim/cuda_runtime.h");

/// An external compiler or validator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tool {
    Gxx,
    Clang,
    Glslang,
    Nvcc,
}

impl Tool {
    /// The executable.
    pub fn program(self) -> &'static str {
        match self {
            Tool::Gxx => "g++",
            Tool::Clang => "clang++",
            Tool::Glslang => "glslangValidator",
            Tool::Nvcc => "nvcc",
        }
    }

    /// How to install it on Debian/Ubuntu.
    pub fn install_hint(self) -> &'static str {
        match self {
            Tool::Gxx => "install the Debian package `g++` (apt-get install g++)",
            Tool::Clang => "install the Debian package `clang` (apt-get install clang)",
            Tool::Glslang => {
                "install the Debian package `glslang-tools` (apt-get install glslang-tools)"
            }
            Tool::Nvcc => {
                "install the CUDA toolkit (NVIDIA's `cuda-toolkit` package, or Debian's `nvidia-cuda-toolkit`) and put nvcc on PATH"
            }
        }
    }
}

/// A tool that could not be found or that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolError {
    Missing(Tool),
    /// It ran and reported errors: the command line and its output.
    Failed {
        command: String,
        output: String,
    },
    /// A library the build needs is not installed.
    MissingLibrary {
        what: &'static str,
        hint: &'static str,
    },
    Io(String),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Missing(t) => write!(
                f,
                "`{}` not found on PATH: {}",
                t.program(),
                t.install_hint()
            ),
            ToolError::Failed { command, output } => write!(f, "`{command}` failed:\n{output}"),
            ToolError::MissingLibrary { what, hint } => write!(f, "{what} not found: {hint}"),
            ToolError::Io(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ToolError {}

/// The path of `tool` on PATH. A tool found in a place that other users
/// can write (a world-writable directory, `/tmp` say, or a world-writable
/// file; a relative PATH entry such as `.`) is refused rather than run:
/// anybody could have put it there.
pub fn find(tool: Tool) -> Result<PathBuf, ToolError> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(tool.program()))
        .find(|p| p.is_file())
        .ok_or(ToolError::Missing(tool))?;
    let writable =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o002 != 0);
    let dir = found.parent().unwrap_or(Path::new("."));
    if found.is_relative() || writable(&found) || writable(dir) {
        return Err(ToolError::Io(format!(
            "`{}` was found at {}, {}: refusing to run it (anybody could have put it there); fix PATH",
            tool.program(),
            found.display(),
            if found.is_relative() {
                "through a relative PATH entry"
            } else {
                "a place every user can write"
            }
        )));
    }
    Ok(found)
}

/// Runs `tool` with `args`; its combined output on success.
pub fn run(tool: Tool, args: &[OsString]) -> Result<String, ToolError> {
    let exe = find(tool)?;
    let out = Command::new(&exe)
        .args(args)
        .output()
        .map_err(|e| ToolError::Io(format!("cannot run {}: {e}", exe.display())))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(text)
    } else {
        let shown: Vec<String> = args
            .iter()
            .take(12)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let more = if args.len() > 12 { " ..." } else { "" };
        Err(ToolError::Failed {
            command: format!("{} {}{more}", tool.program(), shown.join(" ")),
            output: text,
        })
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// The g++ flags the C++ program must compile cleanly under.
pub const CXX_FLAGS: &[&str] = &[
    "-std=c++17",
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pthread",
];

/// Compiles the C++ program `src` to the executable `exe`.
pub fn compile_cpp(src: &Path, exe: &Path) -> Result<(), ToolError> {
    let mut args = os(CXX_FLAGS);
    args.extend([src.into(), "-o".into(), exe.into()]);
    run(Tool::Gxx, &args).map(drop)
}

/// Compiles the Vulkan host (`templates/vulkan_host.cpp`) to `exe`,
/// linking the Vulkan loader.
pub fn compile_vulkan_host(src: &Path, exe: &Path) -> Result<(), ToolError> {
    let mut args = os(CXX_FLAGS);
    args.extend([src.into(), "-lvulkan".into(), "-o".into(), exe.into()]);
    match run(Tool::Gxx, &args) {
        Err(ToolError::Failed { output, .. })
            if output.contains("vulkan/vulkan.h") || output.contains("-lvulkan") =>
        {
            Err(ToolError::MissingLibrary {
                what: "the Vulkan headers or loader (vulkan/vulkan.h, libvulkan.so)",
                hint: "install the Debian package `libvulkan-dev` (apt-get install libvulkan-dev)",
            })
        }
        other => other.map(drop),
    }
}

/// Compiles the CUDA program `src` to `exe` with nvcc, adding `extra`
/// flags (e.g. `-arch=sm_90`).
///
/// Distribution packages of CUDA can be older than the distribution's g++
/// (Debian 12: CUDA 11.8 and g++ 12), and nvcc then refuses to start. When
/// it says so and no `-ccbin` was given, the build is retried once with
/// `-ccbin clang++` if clang++ is installed, and a note says so.
pub fn compile_cuda(src: &Path, exe: &Path, extra: &[&str]) -> Result<(), ToolError> {
    let build = |ccbin: Option<&str>| {
        let mut args = os(&["-O2", "-std=c++17"]);
        if let Some(c) = ccbin {
            args.extend(os(&["-ccbin", c]));
        }
        args.extend(os(extra));
        args.extend([src.into(), "-o".into(), exe.into()]);
        run(Tool::Nvcc, &args).map(drop)
    };
    match build(None) {
        Err(ToolError::Failed { output, .. })
            if output.contains("No supported gcc/g++ host compiler")
                && !extra
                    .iter()
                    .any(|f| f.starts_with("-ccbin") || f.starts_with("--compiler-bindir"))
                && find(Tool::Clang).is_ok() =>
        {
            eprintln!("note: nvcc does not support this g++; building with -ccbin clang++");
            build(Some("clang++"))
        }
        other => other,
    }
}

/// Compiles the CUDA program `src` with g++ against the CPU emulation of
/// the runtime in `shim_dir` (where [`CUDA_SHIM`] is written).
pub fn compile_cuda_on_cpu(src: &Path, exe: &Path, shim_dir: &Path) -> Result<(), ToolError> {
    write_file(&shim_dir.join("cuda_runtime.h"), CUDA_SHIM)?;
    let mut args = os(CXX_FLAGS);
    args.extend(os(&["-x", "c++"]));
    args.extend([
        OsString::from("-I"),
        shim_dir.into(),
        src.into(),
        "-x".into(),
        "none".into(),
    ]);
    args.extend(["-o".into(), exe.into()]);
    run(Tool::Gxx, &args).map(drop)
}

/// Validates GLSL compute shaders (`.comp`) in one glslangValidator call
/// per batch of files. A batch is compiled as separate units (no linking),
/// so this checks the language, not SPIR-V generation; see
/// [`compile_glsl_spirv`] for that.
pub fn check_glsl(files: &[PathBuf]) -> Result<(), ToolError> {
    for chunk in files.chunks(2000) {
        let args: Vec<OsString> = chunk.iter().map(OsString::from).collect();
        run(Tool::Glslang, &args)?;
    }
    Ok(())
}

/// Compiles one GLSL compute shader to Vulkan SPIR-V at `spv`.
pub fn compile_glsl_spirv(file: &Path, spv: &Path) -> Result<(), ToolError> {
    let mut args = os(&["-V", "--target-env", "vulkan1.1", "-o"]);
    args.extend([spv.into(), file.into()]);
    run(Tool::Glslang, &args).map(drop)
}

/// Checks Metal kernels with `clang++ -fsyntax-only` against [`METAL_SHIM`]
/// (written into `shim_dir`). One compiler process checks many kernels:
/// a driver file includes each kernel file inside a namespace of its own
/// (the shim, included first, is guarded), so every file is checked as
/// written, errors point into it, and the per-process cost is paid once.
pub fn check_metal(files: &[PathBuf], shim_dir: &Path) -> Result<(), ToolError> {
    write_file(&shim_dir.join("metal_stdlib"), METAL_SHIM)?;
    for (n, chunk) in files.chunks(2000).enumerate() {
        let mut driver = String::from("#include <metal_stdlib>\n");
        for (k, f) in chunk.iter().enumerate() {
            let abs = std::path::absolute(f)
                .map_err(|e| ToolError::Io(format!("{}: {e}", f.display())))?;
            // A header name is not a string literal: no escapes are possible.
            let name = abs.to_string_lossy();
            if name.contains(['"', '\n']) {
                return Err(ToolError::Io(format!(
                    "{name}: a path with a quote or newline cannot be #included"
                )));
            }
            driver.push_str(&format!(
                "namespace axb_kernel_{k} {{\n#include \"{name}\"\n}}\n"
            ));
        }
        let driver_path = shim_dir.join(format!("check_{n}.cpp"));
        write_file(&driver_path, &driver)?;
        let mut args = os(&[
            "-fsyntax-only",
            "-std=c++17",
            "-x",
            "c++",
            "-Wall",
            "-Werror",
            "-Wno-unknown-attributes",
        ]);
        args.extend([OsString::from("-I"), shim_dir.into(), driver_path.into()]);
        run(Tool::Clang, &args)?;
    }
    Ok(())
}

fn write_file(path: &Path, text: &str) -> Result<(), ToolError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|e| ToolError::Io(format!("cannot write {}: {e}", path.display())))
}
