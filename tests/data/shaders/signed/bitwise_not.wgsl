// `~0u` is 4294967295, every bit set: two's complement values hold it
// (docs/KERNEL.md §10.3), as 2^b - 1. Workgroup 1 waits for workgroup 0 to
// store it, so it needs workgroup 0 to run: P under HSA (the lowest
// workgroup not finished runs), LOBE, HSA+OBE and fair; F under OBE
// (workgroup 0 may never start) and unfair. Had `~0u` and `0xFFFFFFFFu`
// been taken as different values, workgroup 1 would wait forever: F even
// under fair.
// workgroups 2;
// expect HSA: P;
// expect OBE: F;
// expect HSA+OBE: P;
// expect LOBE: P;
// expect fair: P;
// expect unfair: F;
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    if wg.x == 0u {
        atomicStore(&x, ~0u);
    } else {
        while atomicLoad(&x) != 0xFFFFFFFFu {}
    }
}
