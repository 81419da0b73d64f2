// The old value of a weak compare-exchange is the cell's value whether or
// not it failed spuriously. Two invocations each try once to swap `a`
// from 0 to 1; one that reads old value 0 without exchanging (a spurious
// failure) waits for `done`, which only a winner sets. If both fail
// spuriously (two failures: finitely many) both wait forever: F under
// every model. A strong compare-exchange makes exactly one winner, who
// sets `done`, and the other reads 1 and ends: P.
// workgroups 1;
// expect fair: F;
// expect strong fair: F;
@group(0) @binding(0) var<storage, read_write> a: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> done: atomic<u32>;

@compute @workgroup_size(2)
fn main() {
  let r = atomicCompareExchangeWeak(&a, 0u, 1u);
  if (r.exchanged) {
    atomicStore(&done, 1u);
  } else if (r.old_value == 0u) {
    while (atomicLoad(&done) == 0u) {}
  }
}
