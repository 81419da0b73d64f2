// error: `a` and `b` are both at binding 0 of group 0 (aliased): WGSL forbids two resource variables with the same group and binding
@group(0) @binding(0) var<storage, read_write> a: atomic<u32>;
@group(0) @binding(0) var<storage, read_write> b: atomic<u32>;
@compute @workgroup_size(1)
fn main() { atomicStore(&a, 1u); atomicStore(&b, 1u); }
