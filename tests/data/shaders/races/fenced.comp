#version 450
// message_passing.wgsl in GLSL, with memory barriers around the flag:
// these fences are how GLSL orders the plain accesses (with `coherent`
// memory), but the translation reads no fence or memory semantics, so it
// names the read of `data` (line 19) with that caveat. Verdicts as
// message_passing.wgsl's.
// expect OBE: F;
// expect HSA: P;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint data; uint flag; uint seen; };
void main() {
  if (gl_WorkGroupID.x == 0u) {
    data = 1u;
    memoryBarrierBuffer();
    atomicExchange(flag, 1u);
  } else {
    while (atomicAdd(flag, 0u) == 0u) {}
    memoryBarrierBuffer();
    seen = data;
  }
}
