// The SIMT deadlock with no subgroup size named (issue 42): by default
// a workgroup's invocations form one subgroup, as on every GPU whose
// subgroups hold 2 or more (docs/KERNEL.md §10.1). In lockstep the two
// invocations diverge at the loop's exit test: the winner leaves the
// loop and waits at the reconvergence point (the loop's exit) for the
// loser, which spins on the lock the winner holds: F under every model.
// With subgroups of 1 (the default before), each invocation was its own
// subgroup, scheduled fairly: P under all 11 models, `unfair` included.
// workgroups 1;
// expect unfair: F;
// expect fair: F;
// expect strong fair: F;
@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> count: atomic<u32>;

@compute @workgroup_size(2)
fn main() {
  while (atomicExchange(&lock, 1u) != 0u) {}
  atomicAdd(&count, 1u);
  atomicStore(&lock, 0u);
}
