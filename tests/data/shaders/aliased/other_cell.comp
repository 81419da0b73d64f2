#version 450
// As cell_in_array.comp, but workgroup 0 sets flags[2], which no member
// of `Pair` covers (`second` is flags[1]): workgroup 1 waits forever
// once it runs, F under every model.
// workgroups 2;
// expect unfair: F;
// expect WEAK_FAIR: F;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Flags { uint flags[4]; };
layout(std430, binding = 0) buffer Pair { uint first; uint second; };
void main() {
  if (gl_WorkGroupID.x == 0u) {
    atomicExchange(flags[2], 1u);
  } else {
    while (atomicAdd(second, 0u) == 0u) {}
  }
}
