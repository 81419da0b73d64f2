#version 450
#extension GL_KHR_shader_subgroup_vote : require
// vote_not_taken.wgsl in GLSL (found by an audit of issue 42; the same
// panic): invocation 1 alone votes on `lid == 0u`, which is false, so
// nothing is written; nothing waits: P under every model.
// expect unfair: P;
// expect HSA: P;
// expect OBE: P;
// expect fair: P;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint n; };
void main() {
  uint lid = gl_LocalInvocationID.x;
  if (lid == 1u) { if (subgroupAny(lid == 0u)) { atomicAdd(n, 1u); } }
}
