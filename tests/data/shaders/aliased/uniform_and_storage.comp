#version 450
// error: `U` and `S` are both at binding 0 of group 0 (aliased): a storage buffer and another kind of resource
layout(local_size_x = 1) in;
layout(std140, binding = 0) uniform U { uint u; };
layout(std430, binding = 0) buffer S { uint s; };
void main() { atomicAdd(s, u); }
