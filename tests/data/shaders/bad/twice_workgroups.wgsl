// error: `workgroups` is given twice (first on line 2)
// workgroups 2;
// workgroups 1;
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    atomicStore(&x, 1u);
}
