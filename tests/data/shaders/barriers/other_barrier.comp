#version 450
// Each invocation waits at its own barrier instruction: two dynamic
// instances no invocation shares. Undefined in GLSL; in the kernel
// program neither barrier ever completes: F under every model.
// subgroup_size 1;
// expect unfair: F;
// expect WEAK_FAIR: F;
// expect STRONG_FAIR: F;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint done; };
void main() {
  if (gl_LocalInvocationID.x == 0u) {
    barrier();
  } else {
    barrier();
  }
  atomicAdd(done, 1u);
}
