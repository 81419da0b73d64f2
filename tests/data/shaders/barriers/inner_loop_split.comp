#version 450
// inner_loop_first.comp's shape, with the barrier reached by invocation
// 1 in the first outer iteration and by invocation 0 in the second, each
// after one inner back edge: the counts of the inner loop agree, the
// outer loop's do not. Different dynamic instances: refused, naming the
// outer loop (its `while` line).
// subgroup_size 1;
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint o; };
void main() {
  uint lid = gl_LocalInvocationID.x;
  uint i = 0u;
  uint j = 0u;
  do {
    while (j < lid) { j++; }
    if ((lid == 1u && i == 0u) || (lid == 0u && i == 1u)) {
      barrier();
    }
    i++;
  } while (i < 2u);
  atomicExchange(o, 1u);
}
