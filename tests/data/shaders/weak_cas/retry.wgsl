// A retry loop on a weak compare-exchange, one invocation: it fails
// spuriously only finitely often on a run (the default assumption), so the
// loop ends on every run, even an unfair one (there is nobody else to
// schedule): P under every model. With --spurious-failures unbounded it
// may fail forever: F under every model (tests/shaders.rs checks both).
// workgroups 1;
// expect unfair: P;
// expect HSA: P;
// expect fair: P;
// expect strong fair: P;
@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> count: atomic<u32>;

@compute @workgroup_size(1)
fn main() {
  while (!atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged) {}
  atomicAdd(&count, 1u);
  atomicStore(&lock, 0u);
}
