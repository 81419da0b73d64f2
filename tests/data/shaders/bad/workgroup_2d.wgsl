// error: only one-dimensional workgroups
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(2, 2)
fn main() {
    atomicStore(&x, 1u);
}
