#version 450
// A look-back over signed indices, in the form of the TLA+ forward-progress
// project's look-back shaders (`for (int i = int(me) - 1; i >= 0; ...)`):
// each workgroup waits, from the one before it down to workgroup 0, for
// its flag, then raises its own. For workgroup 0, `i` starts at -1 and
// the loop is not entered. Each waits only for lower workgroups: P under
// HSA, LOBE, HSA+OBE and fair; F under OBE (workgroup 0 may never start)
// and unfair. Compared unsigned, `-1 >= 0` would hold and workgroup 0
// would read `flags[-1]`.
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
    for (int i = int(me) - 1; i >= 0; i--) {
        while (atomicAdd(flags[i], 0u) == 0u) {}
    }
    atomicExchange(flags[me], 1u);
}
