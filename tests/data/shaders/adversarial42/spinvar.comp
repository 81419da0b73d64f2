#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint flag; };
void main() {
  if (gl_WorkGroupID.x == 0u) { flag = 1u; }
  else { uint x = flag; while (x == 0u) { x = flag; } }
}
