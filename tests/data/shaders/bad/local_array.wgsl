// error: only integer and bool scalars become registers
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    var a: array<u32, 2>;
    a[wg.x] = 1u;
    atomicStore(&x, a[0]);
}
