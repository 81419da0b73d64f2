// error: choose one with --entry
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn a() { atomicStore(&x, 1u); }
@compute @workgroup_size(1)
fn b() { atomicStore(&x, 0u); }
