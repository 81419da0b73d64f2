#version 450
// The `return` is never taken (`o` is never 5), so both invocations
// reach the barrier after the if/else: defined. In one subgroup of 2 (the
// default), lockstep reconverges at the immediate post-dominator, which
// the `return` puts past the barrier: that model deadlocks (the SIMT
// deadlock of §2.6), F under every model, but no note blames the shader,
// whose invocations, scheduled independently, never pass the barrier by.
// expect unfair: F;
// expect WEAK_FAIR: F;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint o; uint p; };
void main() {
  if (gl_LocalInvocationID.x == 0u) {
    atomicExchange(p, 1u);
  } else {
    if (atomicOr(o, 0u) == 5u) { return; }
  }
  barrier();
  atomicExchange(o, 1u);
}
