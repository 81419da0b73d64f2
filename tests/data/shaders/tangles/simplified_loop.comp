#version 450
#extension GL_KHR_shader_subgroup_vote : enable
// Our own shader after the TLA+ forward-progress project's "simplified
// loop" tangle (described in suites/simt/tangles/README.md; nothing
// copied). Three lanes; lanes 0 and 1 loop three times and vote in
// iteration i when i is their id or 2; lane 2 skips the loop; then all
// three vote. The votes in the loop are each taken by the lanes that
// reach it in that iteration: P under every model.
// workgroups 1;
// subgroup_size 3;
// expect unfair: P;
// expect OBE: P;
// expect fair: P;
layout(local_size_x = 3) in;
layout(set = 0, binding = 0) buffer Out { uint votes; };

void main() {
    uint t = gl_LocalInvocationID.x;
    for (uint i = 0u; i < 3u && t < 2u; i++) {
        if (i == t || i == 2u) {
            bool c = subgroupAll(true);
        }
    }
    if (subgroupAll(true)) {
        atomicAdd(votes, 1u);
    }
}
