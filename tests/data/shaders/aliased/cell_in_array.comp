#version 450
// Two blocks on one binding (aliased), laid out in std430: `second` is
// word 1 of the buffer, so it is `flags[1]`, and `first` is `flags[0]`.
// Workgroup 0 sets flags[1] and flags[0]; workgroup 1 waits for `second`
// and then for `first`: message passing, with the verdicts of
// message.comp. (Were `second` taken as flags[0] or as a word of its own,
// the rows would differ: other_cell.comp.)
// workgroups 2;
// expect HSA: P;
// expect OBE: F;
// expect HSA_OBE: P;
// expect LOBE: P;
// expect WEAK_FAIR: P;
// expect unfair: F;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Flags { uint flags[4]; };
layout(std430, binding = 0) buffer Pair { uint first; uint second; };
void main() {
  if (gl_WorkGroupID.x == 0u) {
    atomicExchange(flags[1], 1u);
    atomicExchange(flags[0], 1u);
  } else {
    while (atomicAdd(second, 0u) == 0u) {}
    while (atomicAdd(first, 0u) == 0u) {}
  }
}
