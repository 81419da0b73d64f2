#version 450
// `x` is written only in workgroup 0: workgroup 1 reads it undefined.
// Refused at the read.
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint flag; };
void main() {
  uint x;
  if (gl_WorkGroupID.x == 0u) { x = 1u; }
  while (atomicAdd(flag, 0u) != x) {}
}
