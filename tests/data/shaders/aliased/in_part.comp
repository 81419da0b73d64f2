#version 450
// error: `a` (words 0..2) and `b` (words 1..3) of one buffer overlap in part
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer A { uint a[2]; };
layout(std430, binding = 0) buffer B { uint x; uint b[2]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  atomicAdd(a[i], 1u);
  atomicAdd(b[i], 1u);
}
