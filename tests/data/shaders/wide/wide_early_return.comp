#version 450
// A barrier after a branch with an early return that is never taken
// (found by an adversarial review of issue 42): every invocation
// reaches the barrier, with no loop and no subgroup operation. With
// subgroups of 1, P under every model; in lockstep with subgroups of 2
// or more, the `return` makes the end of the shader the branch's
// reconvergence point, so lane 1 waits at the barrier for lane 0, which
// waits to reconverge with it at the end: F under every model. So the
// width matters, and it must be named. (In WGSL, the uniformity
// analysis rejects the shape: a barrier after a return under a
// condition on the invocation id.)
layout(local_size_x = 8) in;
layout(std430, binding = 0) readonly buffer M { uint m; };
layout(std430, binding = 1) buffer X { uint x; };
void main() {
  uint lid = gl_LocalInvocationIndex;
  atomicAdd(x, 1u);
  if (lid < 1u) {
    if (m == 5u) { return; }
  }
  barrier();
  atomicAdd(x, 4u);
}
