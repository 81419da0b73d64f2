#version 450
// Two blocks on one binding (aliased): `part` and `bitArray` are the same
// word of one buffer (each is its block's first member, at byte 0). One
// invocation adds 1 through each view, so nothing waits: P under every
// model. (Before aliased bindings were read, this was refused.)
// expect unfair: P;
// expect WEAK_FAIR: P;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Partition { uint part; };
layout(std430, binding = 0) buffer BitArray { uint bitArray; };
void main() { atomicAdd(part, 1u); atomicAdd(bitArray, 1u); }
