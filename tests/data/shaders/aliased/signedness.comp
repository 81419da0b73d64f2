#version 450
// error: `a` (words 0..1) and `b` (words 0..1) of one buffer overlap as signed and unsigned integers
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer A { int a; };
layout(std430, binding = 0) buffer B { uint b; };
void main() { atomicAdd(a, 1); atomicAdd(b, 1u); }
