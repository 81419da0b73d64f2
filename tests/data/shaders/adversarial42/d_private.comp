#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint flag; };
uint g;
void main() {
  while (atomicAdd(flag, 0u) != g) {}
}
