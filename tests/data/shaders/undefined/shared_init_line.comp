#version 450
// An `// init` line states the start of workgroup memory (the verdict
// line says so): `flag` starts at 0, and the loop exits at once.
// init flag = 0;
// expect unfair: P;
layout(local_size_x = 2) in;
shared uint flag;
void main() {
  while (atomicAdd(flag, 0u) != 0u) {}
}
