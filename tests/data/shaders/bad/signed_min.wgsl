// error: a signed atomicMin or atomicMax where values may be negative: the kernel language's min and max are unsigned
@group(0) @binding(0) var<storage, read_write> x: atomic<i32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    atomicMin(&x, i32(wg.x) - 1);
}
