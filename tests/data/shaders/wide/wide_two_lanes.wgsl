// Lanes 0 and 4 of a workgroup of 8 take one lock (found by an audit of
// issue 42). On a GPU whose subgroups hold 8 or more they are lanes of
// one subgroup: the SIMT deadlock, F under every model. The default
// used to take subgroups of 4 (the lockstep machine's widest that
// divides 8), which puts them in two subgroups: P under every model
// with one workgroup. Now the shader is refused unless a width is named;
// `--subgroup-size 4` decides that device, on which it is P.
@group(0) @binding(0) var<storage, read_write> lock: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> counter: atomic<u32>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) lid: u32) {
  if lid % 4u == 0u {
    loop {
      if atomicExchange(&lock, 1u) == 0u { break; }
    }
    atomicAdd(&counter, 1u);
    atomicStore(&lock, 0u);
  }
}
