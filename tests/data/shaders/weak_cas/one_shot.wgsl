// A single weak compare-exchange: where it fails, the invocation waits for
// a flag that nobody sets. With one invocation the strong operation always
// succeeds (the lock starts at 0); the weak one may fail spuriously, even
// once on a run where spurious failures are finitely many, and then the
// wait never ends: F under every model, `unfair` to `fair` (issue 42).
// workgroups 1;
// expect unfair: F;
// expect fair: F;
// expect strong fair: F;
@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> flag: atomic<u32>;

@compute @workgroup_size(1)
fn main() {
  let r = atomicCompareExchangeWeak(&lock, 0u, 1u);
  if (!r.exchanged) {
    while (atomicLoad(&flag) == 0u) {}
  }
}
