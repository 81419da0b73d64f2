#version 450
// GLSL atomics inside helper functions and in a spin loop there (the
// regression: naga's GLSL reader copies an atomic's buffer argument in
// and out, and the translation, which drops those copies, knew them by
// expression number in whichever function it met them, so a spin loop
// in a helper panicked: "spill loads are loads"). Each invocation sets
// `flag`, bumps `count` through a helper and then waits in another until
// `flag` is set and `count` has passed its own bump, which both have: P
// under every scheduler, UNFAIR included; a wrong translation of either
// helper spins forever.
// expect unfair: P;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer A { uint flag; uint count; };
uint bump() { return atomicAdd(count, 1u); }
void wait_ready() { while (atomicAdd(flag, 0u) == 0u) {} }
void wait_for(uint v) { while (atomicAdd(count, 0u) <= v) {} }
void main() {
  // Every workgroup id is below 8: the `else` is never taken.
  if (gl_WorkGroupID.x < 8u) { atomicExchange(flag, 1u); } else { wait_ready(); }
  wait_ready();
  uint old = bump();
  wait_for(old);
}
