#version 450
// Barriers that jumps cross, but in uniform control flow: every
// invocation goes around each loop the same number of times (the bounds
// are constants) and reaches each barrier in the same iteration, so the
// check finds nothing, the launch line says nothing of it, and nothing
// waits: P under every model.
// expect unfair: P;
// expect WEAK_FAIR: P;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint done; };
void main() {
  for (uint i = 0u; i < 3u; i++) {
    barrier();
  }
  for (uint j = 0u; j < 10u; j++) {
    if (j == 9u) {
      barrier();
    }
  }
  atomicAdd(done, 1u);
}
