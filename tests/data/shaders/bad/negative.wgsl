// error: negative constant
@group(0) @binding(0) var<storage, read_write> x: atomic<i32>;
@compute @workgroup_size(1)
fn main() {
    atomicStore(&x, -3i);
}
