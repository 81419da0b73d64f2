// Semantics check in GLSL (see arith.wgsl): a wrong value spins forever.
// expect UNFAIR: P;
#version 450
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint cells[4]; };
void fail() { while (true) { } }
void main() {
    uint g = gl_GlobalInvocationID.x;
    atomicMax(cells[g], g + 1u);
    uint k = 0u;
    for (uint i = 0u; i < 3u; i++) {
        if (i == 1u) { continue; }
        k = k + 1u;
    }
    if (k != 2u) { fail(); }
    if (atomicCompSwap(cells[g], g + 1u, 0u) != g + 1u) { fail(); }
}
