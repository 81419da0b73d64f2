#version 450
// No barrier: invocation 1's exchange may come before invocation 0's
// write of 0, which then waits for a 1 nobody writes again. The start is
// never read (invocation 0 writes before it reads), so this is decided,
// not refused: F under every model, fair scheduling included.
// expect fair: F;
// expect unfair: F;
layout(local_size_x = 2) in;
shared uint flag;
void main() {
  if (gl_LocalInvocationID.x == 0u) { flag = 0u; }
  if (gl_LocalInvocationID.x == 1u) { atomicExchange(flag, 1u); }
  else { while (atomicAdd(flag, 0u) == 0u) {} }
}
