// The SIMT deadlock in a workgroup of 5 (found by an audit of issue 42).
// On every GPU whose subgroups hold 5 or more (most hold 32 or 64) the
// five invocations are one subgroup: in lockstep the winner of the lock
// leaves the loop and waits at its exit for the others, which spin on
// the lock it holds: F under every model. The lockstep machine takes 4
// lanes, and the default used to decide subgroups of 1 (no width of 2
// to 4 divides 5): P under all 11 models, `unfair` included. Now the
// shader is refused unless a width or fair scheduling is named.
@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> counter: atomic<u32>;

@compute @workgroup_size(5)
fn main() {
  loop {
    if atomicExchange(&lock, 1u) == 0u { break; }
  }
  atomicAdd(&counter, 1u);
  atomicStore(&lock, 0u);
}
