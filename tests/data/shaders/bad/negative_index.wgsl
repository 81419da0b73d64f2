// error: run-time fault: invocation 0.0: index 7 is out of bounds: `arr` has 4 cells (values are two's complement: 4 to 7 stand for -4 to -1)
// workgroups 1;
@group(0) @binding(0) var<storage, read_write> arr: array<atomic<i32>, 4>;
@group(0) @binding(1) var<storage, read_write> inp: atomic<i32>;
@compute @workgroup_size(1)
fn main() {
    let i = atomicLoad(&inp) - 1;
    atomicStore(&arr[i], -1);
}
