#version 450
// error: `a`: an array whose elements are 16 bytes apart (std140 pads them to 16)
layout(local_size_x = 1) in;
layout(std140, binding = 0) buffer A { uint a[2]; };
layout(std430, binding = 0) buffer B { uint b[8]; };
void main() { atomicAdd(a[1], 1u); atomicAdd(b[4], 1u); }
