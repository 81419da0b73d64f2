#version 450
// GLSL leaves `shared` memory undefined: invocation 0 may read `flag`
// before anyone writes it. Refused at the read (KERNEL.md §10.3); with
// --workgroup-memory zero it starts at 0 and the loop exits at once.
layout(local_size_x = 2) in;
shared uint flag;
void main() {
  while (atomicAdd(flag, 0u) != 0u) {}
}
