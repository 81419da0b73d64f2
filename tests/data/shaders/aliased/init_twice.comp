#version 450
// error: init `ready`: memory the init line at line 4 sets already
// workgroups 1;
// init flag = 1;
// init ready = 0;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Producer { uint flag; };
layout(std430, binding = 0) buffer Consumer { uint ready; };
void main() { while (atomicAdd(ready, 0u) == 0u) {} atomicAdd(flag, 1u); }
