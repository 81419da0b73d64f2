#version 450
// Two blocks on one binding (aliased): `flag` and `ready` are one word.
// Workgroup 0 sets it through one view; workgroup 1 waits for it through
// the other. Read as two buffers, workgroup 1 would wait forever (F under
// every model). As one buffer, workgroup 1 waits for workgroup 0, as in
// message passing: HSA schedules the lowest-numbered workgroup still
// running (P); OBE promises nothing to workgroup 0 before it starts (F);
// HSA+OBE, LOBE (workgroup 1 has started, so workgroup 0 has) and fair
// P; unfair F.
// workgroups 2;
// expect HSA: P;
// expect OBE: F;
// expect HSA_OBE: P;
// expect LOBE: P;
// expect WEAK_FAIR: P;
// expect unfair: F;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Producer { uint flag; };
layout(std430, binding = 0) buffer Consumer { uint ready; };
void main() {
  if (gl_WorkGroupID.x == 0u) {
    atomicExchange(flag, 1u);
  } else {
    while (atomicAdd(ready, 0u) == 0u) {}
  }
}
