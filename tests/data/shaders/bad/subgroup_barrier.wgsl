// error: subgroupBarrier
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    subgroupBarrier();
    atomicStore(&x, 1u);
}
