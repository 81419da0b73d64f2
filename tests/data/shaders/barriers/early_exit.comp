#version 450
// Invocation l goes around the loop l + 1 times: in the second iteration
// invocation 1 waits at the barrier that invocation 0, finished, never
// reaches again. Undefined in GLSL; a deadlock of the kernel program:
// F under every model.
// subgroup_size 1;
// expect unfair: F;
// expect WEAK_FAIR: F;
// expect STRONG_FAIR: F;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint done; };
void main() {
  for (uint i = 0u; i <= gl_LocalInvocationID.x; i++) {
    barrier();
  }
  atomicAdd(done, 1u);
}
