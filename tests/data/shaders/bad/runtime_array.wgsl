// error: a runtime-sized array indexed by a run-time value
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) i: u32) {
    a[i] = 1u;
}
