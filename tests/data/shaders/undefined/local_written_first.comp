#version 450
// `x` is written on both arms of the `if` before it is read, and the loop
// reads it after: decided. Nobody waits: P everywhere.
// expect unfair: P;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint flag; };
void main() {
  uint x;
  if (gl_WorkGroupID.x == 0u) { x = 1u; } else { x = 0u; }
  for (uint i = 0u; i < 2u; i++) { x = x + 0u; }
  atomicExchange(flag, x);
}
