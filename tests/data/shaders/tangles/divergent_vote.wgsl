// A vote in divergent control flow (issue 42): invocation 0 votes alone
// (invocation 1 took the other arm) and raises `flag` when the vote
// passes; invocation 1 waits for `flag`. Interleaved, the vote is
// executed by the lanes of its dynamic block, invocation 0 alone, so it
// passes and invocation 1 leaves: with `--subgroup-scheduling fair`, P
// under all 11 models (the one workgroup runs whenever anything runs, and
// inside it invocations are fair), F with `--model "OBE,
// subgroup=unfair"` (invocation 0 may never run). As a rendezvous of
// the whole subgroup it would wait for invocation 1, which waits for it:
// F everywhere. In lockstep the subgroup diverges at the `if`; if
// invocation 1's path runs first it spins forever while invocation 0
// waits at the reconvergence point (the SIMT deadlock): F everywhere, so
// the default, which must hold in lockstep too, is F.
// workgroups 1;
// subgroup_size 2;
// expect unfair: F;
// expect OBE: F;
// expect fair: F;
@group(0) @binding(0) var<storage, read_write> flag: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    if (subgroupAll(lid == 0u)) {
      atomicStore(&flag, 1u);
    }
  } else {
    while (atomicLoad(&flag) == 0u) {
    }
  }
}
