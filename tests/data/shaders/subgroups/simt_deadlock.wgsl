// The classic SIMT deadlock (issue 42): both invocations of one subgroup
// spin on one lock. Scheduled fairly (CUDA's independent thread
// scheduling), the winner releases the lock and the loser takes it: P.
// In lockstep with reconvergence at the immediate post-dominator, the
// subgroup diverges at the `if`; if the losers' path runs first, they
// spin forever while the winner waits at the reconvergence point to run
// its release: F under every model, even fair between workgroups. The
// default asks for both (Vulkan and WGSL promise neither): F.
// workgroups 1;
// subgroup_size 2;
// expect unfair: F;
// expect fair: F;
// expect strong fair: F;
@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> count: atomic<u32>;

@compute @workgroup_size(2)
fn main() {
  loop {
    if (atomicExchange(&lock, 1u) == 0u) {
      atomicAdd(&count, 1u);
      atomicStore(&lock, 0u);
      break;
    }
  }
}
