#version 450
#extension GL_KHR_memory_scope_semantics : enable
// The scope decides whether the access races: it must be a constant.
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Msg { uint msg; uint scope; };
void main() {
  atomicStore(msg, 1u, int(scope), gl_StorageSemanticsBuffer, gl_SemanticsRelease);
}
