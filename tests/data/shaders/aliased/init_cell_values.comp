#version 450
// error: init `first`: 4 values for 1 cell
// workgroups 1;
// init first = 0, 1, 0, 0;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Flags { uint flags[4]; };
layout(std430, binding = 0) buffer Pair { uint first; uint second; };
void main() { atomicAdd(flags[1], 1u); atomicAdd(second, 1u); atomicAdd(first, 1u); }
