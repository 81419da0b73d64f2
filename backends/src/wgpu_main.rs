//! `backends-wgpu`: the WGSL shaders of `backends emit --target wgsl` run on
//! a GPU with wgpu (Vulkan, Metal, D3D12); see `backends::target::wgpu`.
//! Built with `cargo build --release -p backends --features wgpu`.

fn main() -> std::process::ExitCode {
    backends::target::wgpu::main()
}
