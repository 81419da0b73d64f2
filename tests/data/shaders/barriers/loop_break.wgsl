// A barrier in a loop some invocations may leave before others: the
// `for` loop's test reads the invocation id (times 0, which WGSL's
// analysis does not fold), so the analysis rejects every barrier in it,
// before the test or after. At run time every invocation goes around
// twice, so it was P (found by an adversarial review of issue 42).
@group(0) @binding(0) var<storage, read_write> n: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lid: u32) {
  for (var i = 0u; i < lid * 0u + 2u; i++) {
    workgroupBarrier();
  }
  atomicAdd(&n, 1u);
}
