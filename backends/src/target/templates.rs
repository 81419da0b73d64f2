//! The hand-written parts of the generated programs, read from
//! `backends/templates/` at compile time: the one place that names those
//! files, so a template is found (and its path kept right) here.
//!
//! Each is C++, CUDA or Swift source inserted verbatim; the generated code
//! around it defines what the template says it needs (`kUsage`, `kTests`,
//! ...). A template changes the emitted bytes exactly as an edit of the
//! generator would, and the emitted-bytes tests see it.

/// Command-line and output helpers of every generated host program (C++,
/// CUDA and the Vulkan host): `axb_fail_usage`, `axb_flag`, `axb_split`,
/// `axb_parse_count`, `axb_json_string`, `axb_ms_since`, `kMappingNames`.
/// They need `kUsage` defined above them.
pub const HOST_UTIL: &str = include_str!("../../templates/host_util.inc");

/// The test-table part of the C++ and CUDA command line and result lines;
/// needs [`HOST_UTIL`] above it.
pub const HOST_COMMON: &str = include_str!("../../templates/host_common.inc");

/// The C++ program's `main`: workgroups on a pool of OS threads.
pub const CPP_MAIN: &str = include_str!("../../templates/cpp_main.inc");

/// The CUDA program's host harness and `main`.
pub const CUDA_MAIN: &str = include_str!("../../templates/cuda_main.inc");

/// The generic Vulkan host, with a `// @HOST_UTIL@` line where
/// [`HOST_UTIL`] goes (see [`crate::target::vulkan::host`]).
pub const VULKAN_HOST: &str = include_str!("../../templates/vulkan_host.cpp");

/// The Swift host harness of the Metal kernels, written as `harness.swift`.
pub const METAL_HARNESS: &str = include_str!("../../templates/metal_harness.swift");

/// The WebGPU runner (`AxbGpu`), with a `/*@CANARY@*/ null` where the
/// canary shaders go (see [`crate::target::webgpu::runner_script`]).
pub const WEBGPU_RUNNER: &str = include_str!("../../templates/webgpu_runner.js");

/// The webgpu page's HTML, with `@TITLE@`, `@CSS@`, `@DATA@`, `@RUNNER@`
/// and `@PAGE@` where [`crate::target::webgpu::page`] puts its parts.
pub const WEBGPU_PAGE: &str = include_str!("../../templates/webgpu_page.html");

/// The webgpu page's style sheet.
pub const WEBGPU_CSS: &str = include_str!("../../templates/webgpu_page.css");

/// The webgpu page's own script: settings, storage, progress, download.
pub const WEBGPU_PAGE_JS: &str = include_str!("../../templates/webgpu_page.js");

/// The host `main` of a kernel program's `.cu` file
/// ([`crate::target::kernel`]): one launch, a deadline, one JSON line.
pub const KERNEL_CUDA_HOST: &str = include_str!("../../templates/kernel_cuda_host.inc");

/// The host `main` of a kernel program's SIMT form `.cu` file
/// ([`crate::target::kernel::simt`]): many runs, one outcome line each.
pub const KERNEL_SIMT_CUDA_HOST: &str = include_str!("../../templates/kernel_simt_cuda_host.inc");

/// The SIMT-Step page's script ([`crate::target::kernel::simt_page`]).
pub const SIMT_PAGE_JS: &str = include_str!("../../templates/simt_page.js");
