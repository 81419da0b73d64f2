// error: constant 1000: value bound exceeded
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    atomicStore(&x, 1000u);
}
