// A vote in divergent control flow beside a one-shot weak
// compare-exchange (found by an audit of issue 42). Invocation 0 votes
// alone (invocation 1 took the other arm) and may store; then each tries
// one compare-exchange, which may fail: nothing waits, so every run ends,
// P under every model. Before, the weak compare-exchange (a `choose`,
// which SSO's machine did not take) kept the vote a rendezvous of the
// whole subgroup, waiting for invocation 1, which never comes: F
// everywhere, a wrong answer. In lockstep the two arms run one after
// the other and reconverge: P too.
// workgroups 1;
// subgroup_size 2;
// expect unfair: P;
// expect HSA: P;
// expect fair: P;
// expect strong fair: P;
@group(0) @binding(0) var<storage, read_write> out: atomic<u32>;

@compute @workgroup_size(2)
fn main(@builtin(local_invocation_index) me: u32) {
  if (me == 0u) {
    let v = subgroupAll(true);
    if (v) {
      atomicStore(&out, 1u);
    }
  }
  let r = atomicCompareExchangeWeak(&out, 5u, 6u);
}
