// Peterson's lock between two workgroups, in GLSL with plain (non-atomic)
// buffer accesses. The translation treats them as sequentially consistent
// accesses (and warns), which is the memory model Peterson's algorithm
// needs; on a real GPU the plain accesses race, so this shows what the
// oracle decides about progress, not that the shader is correct.
//
// Expected verdicts (`oracle classify suites/shaders/peterson_glsl.comp`):
// - OBE: P. A workgroup waits only while the other has announced itself
//   (flag[other] = 1), so the other has started, and OBE schedules it
//   fairly: it leaves its critical section and clears its flag.
// - HSA: F. Workgroup 0 may wait for workgroup 1, which has started but is
//   not guaranteed to be scheduled again under HSA.
// - WEAK_FAIR: P; UNFAIR: F.
//
// model OBE;
// expect OBE: P;
// expect HSA: F;
// expect WEAK_FAIR: P;
// expect UNFAIR: F;
#version 450
layout(local_size_x = 1) in;

layout(std430, binding = 0) buffer State {
    uint flag[2];
    uint turn;
    uint counter;
};

void main() {
    uint me = gl_WorkGroupID.x;
    uint other = 1u - me;
    flag[me] = 1u;
    turn = other;
    while (flag[other] == 1u && turn == other) {
    }
    counter = counter + 1u;
    flag[me] = 0u;
}
