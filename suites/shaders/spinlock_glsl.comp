// A spin lock in GLSL (Vulkan compute): the same lock as spinlock.wgsl,
// taken with atomicCompSwap and released with atomicExchange.
//
// Expected verdicts (`oracle classify suites/shaders/spinlock.comp`, two
// workgroups of one invocation):
// - OBE: P. The holder of the lock has started, so OBE keeps scheduling it
//   until it releases the lock.
// - HSA: F. Only the lowest-numbered live workgroup is guaranteed to run:
//   workgroup 0 may spin while workgroup 1 holds the lock.
// - WEAK_FAIR: P; UNFAIR: F.
//
// model OBE;
// expect OBE: P;
// expect HSA: F;
// expect LOBE: P;
// expect WEAK_FAIR: P;
// expect UNFAIR: F;
#version 450
layout(local_size_x = 1) in;

layout(std430, binding = 0) buffer Lock {
    uint lock;
    uint counter;
};

void main() {
    while (atomicCompSwap(lock, 0u, 1u) != 0u) {
    }
    atomicAdd(counter, 1u);
    atomicExchange(lock, 0u);
}
