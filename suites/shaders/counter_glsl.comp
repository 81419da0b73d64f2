// No waiting at all, in GLSL: ids through gl_LocalInvocationID,
// gl_GlobalInvocationID and gl_WorkGroupID, workgroup memory behind
// barrier(), a dynamically indexed buffer array and a counted for loop.
//
// Expected verdicts (`oracle classify suites/shaders/counter_glsl.comp`,
// two workgroups of two invocations): P under every model, UNFAIR
// included. Nothing waits on another workgroup, the barrier waits only on
// the invocations of its own workgroup (fair inside workgroups), and the
// loop runs twice. The counter reaches 4, below the domain 8 (the least
// power of two above W x N = 4); with --workgroups 3 it would reach 6,
// still below 8; make the loop run more and the value rule refuses it.
//
// expect UNFAIR: P;
// expect HSA: P;
// expect OBE: P;
// expect WEAK_FAIR: P;
#version 450
layout(local_size_x = 2) in;

layout(std430, binding = 0) buffer B {
    uint slots[4];
    uint done;
};
shared uint s;

void main() {
    uint l = gl_LocalInvocationID.x;
    uint g = gl_GlobalInvocationID.x;
    if (l == 0u) {
        s = gl_WorkGroupID.x;
    }
    barrier();
    slots[g] = s + 1u;
    for (uint i = 0u; i < 2u; i++) {
        if (l == 0u) {
            atomicAdd(done, 1u);
        }
    }
}
