#version 450
// `signed_loop.comp` with unsigned indices, offset by one: the same
// program, whose verdicts the test compares with the signed one's.
// workgroups 3;
// expect HSA: P;
// expect OBE: F;
// expect HSA+OBE: P;
// expect LOBE: P;
// expect fair: P;
// expect unfair: F;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Flags {
    uint flags[4];
};
void main() {
    uint me = gl_WorkGroupID.x;
    for (uint i = me; i > 0u; i--) {
        while (atomicAdd(flags[i - 1u], 0u) == 0u) {}
    }
    atomicExchange(flags[me], 1u);
}
