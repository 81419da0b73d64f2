// A barrier after an early return some invocations take (found by an
// adversarial review of issue 42): the textbook shape WGSL's uniformity
// analysis rejects, as the rest of the function then runs for some
// invocations only. Invocation 9 does not exist, so no schedule passes
// the barrier by: the value check finds nothing, and it was P.
@group(0) @binding(0) var<storage, read_write> n: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lid: u32) {
  if lid == 9u {
    return;
  }
  workgroupBarrier();
  atomicAdd(&n, 1u);
}
