// error: subgroup operation
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main(@builtin(subgroup_invocation_id) l: u32) {
    atomicStore(&x, subgroupAdd(l));
}
