#version 450
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_vote : enable
// Our own shader after the TLA+ forward-progress project's "loop
// peeling" tangle (described in suites/simt/tangles/README.md; nothing
// copied). Two workgroups of one subgroup of two lanes: until done, the
// lanes still in the loop broadcast the first one's value, and the lane
// whose value it is is done. In each iteration the broadcast is from the
// lanes of that iteration (lane 0 first, then lane 1 alone), so both
// leave; then both vote together. P under every model.
// workgroups 2;
// subgroup_size 2;
// expect unfair: P;
// expect HSA: P;
// expect OBE: P;
// expect fair: P;
layout(local_size_x = 2) in;
layout(set = 0, binding = 0) buffer Out { uint finished; };

void main() {
    uint v = gl_WorkGroupID.x * 2u + gl_LocalInvocationID.x;
    uint done = 0u;
    for (;;) {
        if (done != 0u) {
            break;
        }
        uint rep = subgroupBroadcastFirst(v);
        if (v == rep) {
            done = 1u;
        }
    }
    if (subgroupAll(done != 0u)) {
        atomicAdd(finished, 1u);
    }
}
