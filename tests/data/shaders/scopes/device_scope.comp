#version 450
#extension GL_KHR_memory_scope_semantics : enable
// Message passing with GL_KHR_memory_scope_semantics's atomics at device
// scope: no race. Workgroup 1 waits for workgroup 0's store: as for any
// message passing, P under HSA and LOBE, F under OBE (workgroup 1 may
// start and spin before workgroup 0 ever starts).
// expect HSA: P;
// expect OBE: F;
// expect LOBE: P;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Msg { uint msg; };
void main() {
  if (gl_WorkGroupID.x == 0u) {
    atomicStore(msg, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
  } else {
    while (atomicLoad(msg, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire) == 0u) {}
  }
}
