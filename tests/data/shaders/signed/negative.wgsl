// A signed wait: workgroup 1 waits while `x > -3`; `x` starts at 0 and
// workgroup 0 stores -3. It needs workgroup 0 to run: P under HSA, LOBE,
// HSA+OBE and fair; F under OBE and unfair. Compared as unsigned
// values (-3 is 4294967293), `0 > -3` would be false at once and the
// shader would terminate under every model (P under OBE).
// workgroups 2;
// expect HSA: P;
// expect OBE: F;
// expect HSA+OBE: P;
// expect LOBE: P;
// expect fair: P;
// expect unfair: F;
@group(0) @binding(0) var<storage, read_write> x: atomic<i32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    if wg.x == 0u {
        atomicStore(&x, -3i);
    } else {
        while atomicLoad(&x) > -3i {}
    }
}
