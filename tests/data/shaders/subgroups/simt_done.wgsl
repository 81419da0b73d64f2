// The "SIMT-safe" lock: the release is inside the loop, and a `done` flag
// leaves it. Fairly scheduled (--subgroup-scheduling fair), the winner
// releases and the loser takes the lock later: P. In lockstep, it depends
// on the compiled control flow, which the source does not fix: the
// translation threads the jump through `if (done)` (as a compiler's jump
// threading may), so the winner's path goes straight to the end after the
// release, the immediate post-dominator of the lock's branch is the end,
// and a loser spinning first keeps the winner waiting there forever: the
// SIMT deadlock again (the hazard SPV_KHR_maximal_reconvergence was made
// for). By default, F under every model; `oracle translate` shows the
// threaded program (tests/shaders.rs checks both answers).
// workgroups 1;
// subgroup_size 2;
// expect unfair: F;
// expect fair: F;
// expect strong fair: F;
@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> count: atomic<u32>;

@compute @workgroup_size(2)
fn main() {
  var done = false;
  loop {
    if (done) { break; }
    if (atomicExchange(&lock, 1u) == 0u) {
      atomicAdd(&count, 1u);
      atomicStore(&lock, 0u);
      done = true;
    }
  }
}
