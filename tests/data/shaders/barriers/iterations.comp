#version 450
// Invocation l reaches the barrier in iteration l only: invocation 0 in
// the first, invocation 1 in the second. The kernel language's barrier,
// matched by instruction, would let the two complete it together, but
// they execute different dynamic instances of it, which GLSL leaves
// undefined: refused, naming both (with subgroups of 1, so that the
// interleaved exploration meets it; in one subgroup of 2 lockstep meets
// the divergence first).
// subgroup_size 1;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint done; };
void main() {
  for (uint i = 0u; i < 2u; i++) {
    if (i == gl_LocalInvocationID.x) {
      barrier();
    }
  }
  atomicAdd(done, 1u);
}
