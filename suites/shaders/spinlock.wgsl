// A spin lock in WGSL: every workgroup's invocation takes the lock with a
// compare-exchange, increments a counter inside its critical section, and
// releases the lock.
//
// Expected verdicts (the oracle decides them with `oracle classify
// suites/shaders/spinlock.wgsl`, two workgroups of one invocation):
// - OBE: P. Whoever holds the lock has started, and OBE schedules every
//   started workgroup fairly, so the holder releases it.
// - HSA: F. HSA guarantees only the lowest-numbered live workgroup: it may
//   spin forever while workgroup 1 holds the lock and is never scheduled.
// - WEAK_FAIR: P and UNFAIR: F, as for every blocking lock.
// This is the mutex idiom of suites/idioms/mutex.litmus, written as a user
// would write it.
//
// model OBE;
// expect OBE: P;
// expect HSA: F;
// expect LOBE: P;
// expect WEAK_FAIR: P;
// expect UNFAIR: F;

@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> counter: atomic<u32>;

fn acquire() {
    loop {
        if atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged {
            break;
        }
    }
}

fn release() {
    atomicStore(&lock, 0u);
}

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    acquire();
    atomicAdd(&counter, 1u);
    release();
}
