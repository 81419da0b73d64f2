// error: uniform buffer
@group(0) @binding(0) var<uniform> n: u32;
@group(0) @binding(1) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    atomicStore(&x, n);
}
