#version 450
// `flag` is written before the barrier and read after it: its undefined
// start is never seen. Invocation 1 sets it; invocation 0 waits for it.
// Under HSA the lowest unfinished workgroup keeps running, so each
// finishes in turn: P. Under unfair, workgroup 0 may never be scheduled
// again while its invocation 0 spins: F. Each invocation is its own
// subgroup here (the line below): in one subgroup of 2, the default, the
// branch at line 14 diverges and in lockstep the spinning side may run
// forever, the SIMT deadlock, F under every model.
// subgroup_size 1;
// expect unfair: F;
// expect HSA: P;
layout(local_size_x = 2) in;
shared uint flag;
void main() {
  if (gl_LocalInvocationID.x == 0u) { flag = 0u; }
  barrier();
  if (gl_LocalInvocationID.x == 1u) { atomicExchange(flag, 1u); }
  else { while (atomicAdd(flag, 0u) == 0u) {} }
}
