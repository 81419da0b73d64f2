#version 450
// Invocation 0 of each workgroup waits at the barrier; invocation 1 skips
// it and finishes. GLSL requires barrier() in uniform control flow and
// leaves this undefined: no model guarantees termination, and the kernel
// program deadlocks there (invocation 0 waits for 1, which has finished),
// so every verdict is F, and the launch line says why.
// expect unfair: F;
// expect HSA: F;
// expect OBE: F;
// expect WEAK_FAIR: F;
// expect STRONG_FAIR: F;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint done; };
void main() {
  if (gl_LocalInvocationID.x == 0u) {
    barrier();
  }
  atomicAdd(done, 1u);
}
