// error: value bound exceeded: raise --values (invocation 0.1: 2 + 2 is 4 in 32 bits but 0 modulo 4)
// The lanes of a lockstep subgroup add one after the other: the second sees
// the first's sum (once checked against the state before the step, and
// decided on wrapped values: the interleaved lanes deadlocked before the
// add, since the weak compare-exchange kept the votes a rendezvous). Since
// a weak compare-exchange keeps subgroup operations tangled, the
// interleaved lanes reach the add too, and the wrap is found there first
// (invocation 0.1, the second lane to add): this shader no longer
// isolates the lockstep path.
// subgroup_size 2;
// values 4;
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> y: atomic<u32>;
@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lid: u32) {
  let c = atomicCompareExchangeWeak(&y, 0u, 0u);
  var v = false;
  if (lid == 0u) { v = subgroupAny(true); } else { v = subgroupAny(false); }
  atomicAdd(&x, 2u);
}
