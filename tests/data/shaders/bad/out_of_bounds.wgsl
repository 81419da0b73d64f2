// error: index 2 is out of bounds
@group(0) @binding(0) var<storage, read_write> a: array<atomic<u32>, 2>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    atomicAdd(&a[wg.x + 1u], 1u);
}
