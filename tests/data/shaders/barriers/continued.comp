#version 450
// Invocation l skips the barrier by `continue` in iteration l: invocation
// 1 reaches it in iteration 0, invocation 0 in iteration 1. Refused.
// subgroup_size 1;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint o; };
void main() {
  for (uint i = 0u; i < 2u; i++) {
    if (i == gl_LocalInvocationID.x) continue;
    barrier();
  }
  atomicExchange(o, 1u);
}
