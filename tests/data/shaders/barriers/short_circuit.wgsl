// A barrier under `wid.x == 0u || lid == 9u` (found by an adversarial
// review of issue 42): naga lowers `||` into a variable set in an `if`,
// so the condition reads a variable, set from the invocation id; WGSL's
// analysis takes the `||` as non-uniform and rejects the shader. Every
// workgroup's invocations agree at run time (lid 9 does not exist), so
// it was P.
@group(0) @binding(0) var<storage, read_write> n: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  if wid.x == 0u || lid == 9u {
    workgroupBarrier();
  }
  atomicAdd(&n, 1u);
}
