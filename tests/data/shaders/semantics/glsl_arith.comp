// Semantics check in GLSL (see arith.wgsl): a wrong value spins forever.
// expect UNFAIR: P;
#version 450
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint c; uint cells[4]; };
void fail() { while (true) { } }
uint twice(uint v) { return v + v; }
void main() {
    uint l = gl_LocalInvocationID.x;
    if (gl_GlobalInvocationID.x != gl_WorkGroupID.x * 2u + l) { fail(); }
    uint t = twice(l);
    if (t != l * 2u) { fail(); }
    uint old = atomicAdd(c, 1u);
    if (old > 3u) { fail(); }
}
