// barrier_ordered.wgsl without its barrier: invocation 1 may read `s`
// before, after or while invocation 0 writes it. The launch line names
// the write (line 11) and the read (line 13). Nothing waits: P.
// expect unfair: P;
var<workgroup> s: u32;
@group(0) @binding(0) var<storage, read_write> total: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    s = 5u;
  }
  atomicAdd(&total, s);
}
