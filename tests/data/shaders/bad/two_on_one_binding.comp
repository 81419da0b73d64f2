// error: `Partition` and `BitArray` are both at binding 0 of group 0: one buffer seen through two declarations (aliased)
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Partition { uint part; };
layout(std430, binding = 0) buffer BitArray { uint bitArray; };
void main() { atomicAdd(part, 1u); atomicAdd(bitArray, 1u); }
