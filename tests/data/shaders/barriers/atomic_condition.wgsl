// A barrier under a condition that reads an atomic (found by an audit of
// issue 42): every invocation loads the same 0 and takes the branch, so
// no schedule passes the barrier by, and the value check found nothing:
// P under every model. But WGSL's uniformity analysis takes an atomic's
// value as non-uniform and rejects the shader at creation, so no GPU
// runs it: refused at the barrier, naming the condition's line.
@group(0) @binding(0) var<storage, read_write> c: atomic<u32>;

@compute @workgroup_size(2)
fn main() {
  if atomicLoad(&c) == 0u {
    workgroupBarrier();
  }
}
