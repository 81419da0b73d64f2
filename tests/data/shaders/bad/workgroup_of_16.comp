// error: workgroup size 16: at most 8 invocations per workgroup
#version 450
// local_size_x = 99 in a comment is not the size (the error points at line 5)
/* nor local_size_x in this one */
layout(local_size_y = 1, local_size_x = 16) in;
layout(std430, binding = 0) buffer B { uint x; };
void main() { atomicAdd(x, 1u); }
