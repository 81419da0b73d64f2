#version 450
// Only the views the entry point uses share a binding: a uniform block
// and a block of vectors on binding 0 that nothing reads are no views
// (Vulkan asks only the variables an entry point statically uses to fit
// the binding). `flag` alone is used: workgroup 0 sets it, workgroup 1
// waits for it, message passing (the rows of message.comp).
// workgroups 2;
// expect HSA: P;
// expect OBE: F;
// expect unfair: F;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer A { uint flag; };
layout(std140, binding = 0) uniform U { uint u; };
layout(std430, binding = 0) buffer V { uvec2 v; float f; };
void main() {
  if (gl_WorkGroupID.x == 0u) {
    atomicExchange(flag, 1u);
  } else {
    while (atomicAdd(flag, 0u) == 0u) {}
  }
}
