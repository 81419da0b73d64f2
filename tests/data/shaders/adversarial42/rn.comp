#version 450
#extension GL_KHR_memory_scope_semantics : enable
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer A { uint msg; } a;
layout(std430, binding = 1) buffer B { uint msg; } b;
void main() {
  atomicAdd(a.msg, 1u);
  if (gl_WorkGroupID.x == 0u) {
    atomicStore(b.msg, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
  } else {
    while (atomicLoad(b.msg, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire) == 0u) {}
  }
}
