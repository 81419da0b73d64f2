// error: bitwise not
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    atomicStore(&x, ~wg.x);
}
