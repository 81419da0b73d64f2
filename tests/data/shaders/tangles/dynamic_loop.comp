#version 450
#extension GL_KHR_shader_subgroup_vote : enable
// Our own shader after the TLA+ forward-progress project's "dynamic loop"
// tangle (described in suites/simt/tangles/README.md; nothing copied).
// Three lanes of one subgroup loop; lane t leaves once t + count > 2, so
// lane 2 runs one iteration, lane 1 two, lane 0 three, each running a
// subgroup operation with the lanes still in that iteration; after the
// loop, one more with all three. Nothing waits on anything that may not
// come: P under every model, in lockstep (the active lanes vote) and
// interleaved (each iteration's vote is that iteration's lanes, its
// dynamic block). Before issue 42's tangles, every lane's vote waited
// for the whole subgroup at one instruction: F everywhere.
// workgroups 1;
// subgroup_size 3;
// expect unfair: P;
// expect HSA: P;
// expect OBE: P;
// expect fair: P;
layout(local_size_x = 3) in;
layout(set = 0, binding = 0) buffer Out { uint votes; };

void main() {
    uint t = gl_LocalInvocationID.x;
    uint count = 0u;
    for (;;) {
        if (t + count > 2u) {
            break;
        }
        bool c = subgroupAll(true);
        count = count + 1u;
    }
    if (subgroupAll(true)) {
        atomicAdd(votes, 1u);
    }
}
