#version 450
// init b_x = 1;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint x; uint y; } b;
shared uint b_x;
void main() {
  atomicAdd(b.x, 1u);
  atomicAdd(b.y, 1u);
  while (atomicAdd(b_x, 0u) != 0u) {}
}
