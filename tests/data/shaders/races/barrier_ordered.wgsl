// Invocation 0 writes `s` plainly; after the barrier every invocation
// reads it. The barrier orders the write before the reads: no race, no
// note. Nothing waits: P.
// expect unfair: P;
var<workgroup> s: u32;
@group(0) @binding(0) var<storage, read_write> total: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    s = 5u;
  }
  workgroupBarrier();
  atomicAdd(&total, s);
}
