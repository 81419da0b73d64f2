// error: is recursive
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
fn f(n: u32) -> u32 { return f(n); }
@compute @workgroup_size(1)
fn main() {
    atomicStore(&x, f(1u));
}
