#version 450
// An inner loop at the very start of an outer one: both begin at one pc
// of the kernel program, told apart by their back edges. Invocation l
// goes around the inner loop l times in the first outer iteration, then
// reaches the barrier in the same outer iteration as the other: defined,
// nothing waits: P, no note (it was refused as different iterations when
// loops were told apart by their heads).
// subgroup_size 1;
// expect unfair: P;
// expect WEAK_FAIR: P;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint o; };
void main() {
  uint i = 0u;
  uint j = 0u;
  do {
    while (j < gl_LocalInvocationID.x) { j++; }
    barrier();
    i++;
  } while (i < 2u);
  atomicAdd(o, j);
}
