// Barriers under conditions WGSL's uniformity analysis takes as uniform:
// the workgroup id, a read-only storage buffer and a value loaded with
// workgroupUniformLoad. Nothing waits on anything: P under every model.
// The static uniformity pass must not refuse them.
// expect unfair: P;
// expect HSA: P;
// expect OBE: P;
// expect fair: P;
@group(0) @binding(0) var<storage, read> limit: u32;
@group(0) @binding(1) var<storage, read_write> out: atomic<u32>;
var<workgroup> shared_flag: u32;

@compute @workgroup_size(2)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  if wid.x == 0u {
    workgroupBarrier();
  }
  if limit == 0u {
    workgroupBarrier();
  }
  if lid == 0u {
    shared_flag = 1u;
  }
  let f = workgroupUniformLoad(&shared_flag);
  if f == 1u {
    workgroupBarrier();
  }
  atomicAdd(&out, 1u);
}
