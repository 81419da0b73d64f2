// The WGSL form of skipped.comp: WGSL's uniformity analysis makes a
// workgroupBarrier() in non-uniform control flow a shader-creation error
// (naga does not check barriers), so the shader is refused.
@group(0) @binding(0) var<storage, read_write> done: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    workgroupBarrier();
  }
  atomicAdd(&done, 1u);
}
