#version 450
// one_shot.wgsl in GLSL: atomicCompSwap is a strong compare-exchange, and
// with one invocation it succeeds: P under every model.
// workgroups 1;
// expect unfair: P;
// expect fair: P;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint lock; uint flag; };
void main() {
  if (atomicCompSwap(lock, 0u, 1u) != 0u) {
    while (atomicAdd(flag, 0u) == 0u) {}
  }
}
