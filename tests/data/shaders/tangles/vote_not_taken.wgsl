// A vote in divergent code that comes out false (found by an audit of
// issue 42): invocation 1 alone votes on `lid == 0u`, which is false
// for it, so the write under the vote never happens; invocation 0 skips
// the branch. Nothing waits: P under every model. With two workgroups
// (the default), the value check runs the vote under SSO's machine, which
// keeps no dynamic-block field, and read one past the last invocation's
// fields: the translation panicked (index out of bounds at
// src/kernel/machine.rs:63) for every command.
// expect unfair: P;
// expect HSA: P;
// expect OBE: P;
// expect fair: P;
enable subgroups;
@group(0) @binding(0) var<storage, read_write> n: u32;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) lidb: u32) {
  var lid = lidb;
  if lid == 1u {
    if subgroupAny(lid == 0u) { n = 1u; }
  }
}
