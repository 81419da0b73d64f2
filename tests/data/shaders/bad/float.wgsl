// error: float
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    let f = 1.5;
    atomicStore(&x, u32(f * 2.0));
}
