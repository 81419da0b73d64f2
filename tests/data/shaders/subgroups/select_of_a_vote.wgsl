// A vote whose operand is a comparison, its result chosen by `select`
// (found while making weak compare-exchanges tangled, issue 42). Both
// invocations vote in uniform control flow (invocation 0's `me != 0u` is
// false, so the vote fails and 0 is stored); nothing waits: P under every
// model. The translation lowers `select` as a one-armed selection; before,
// its branch declared no merge, and a shader with a subgroup operation
// (whose translation keeps structured control flow) was refused as
// unstructured.
// workgroups 1;
// expect unfair: P;
// expect HSA: P;
// expect fair: P;
// expect strong fair: P;
@group(0) @binding(0) var<storage, read_write> out: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) me: u32) {
  var r0 = me;
  let r2 = select(0u, 1u, subgroupAll(r0 != 0u));
  atomicStore(&out, r2);
}
