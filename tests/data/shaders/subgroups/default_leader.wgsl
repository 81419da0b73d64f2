// One leader per subgroup (issue 42): `subgroupBroadcastFirst` picks the
// first active lane. With the default width (the workgroup's 2
// invocations in one subgroup) there is one leader, so `cnt` stops at 1
// and both invocations wait for 2 forever: F under every model. With
// subgroups of 1 each invocation leads its own and `cnt` reaches 2: P
// (`--subgroup-size 1` decides that width).
// workgroups 1;
// expect unfair: F;
// expect fair: F;
// expect strong fair: F;
// (WGSL requires the directive below before subgroup built-ins; naga
// refuses it, so the reader blanks it: docs/KERNEL.md §10.2.)
enable subgroups;

@group(0) @binding(0) var<storage, read_write> cnt: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) me: u32) {
  let leader = subgroupBroadcastFirst(me);
  if (me == leader) {
    atomicAdd(&cnt, 1u);
  }
  while (atomicLoad(&cnt) < 2u) {}
}
