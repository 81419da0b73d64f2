#version 450
// Uniform too, but each invocation goes around the loop 19 times between
// two barriers, more than the 15 back edges the check counts: it cannot
// tell whether all invocations reach the barrier in the same iteration,
// and refuses, at the loop, rather than guess.
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint done; };
void main() {
  for (uint j = 0u; j < 20u; j++) {
    if (j == 19u) {
      barrier();
    }
  }
  atomicAdd(done, 1u);
}
