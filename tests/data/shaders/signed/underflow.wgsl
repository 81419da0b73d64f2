// `0u - 1u` wraps in 32 bits to 4294967295, which two's complement values
// hold. Workgroup 1 computes it (`1u - 1u - 1u`) and stores it; workgroup
// 0 waits for it. Waiting for a higher workgroup: F under HSA (workgroup
// 0, the lowest, spins; workgroup 1 may never run), OBE, HSA+OBE and
// LOBE; P only under fair. Unsigned values refused the step as a wrap.
// workgroups 2;
// expect HSA: F;
// expect OBE: F;
// expect HSA+OBE: F;
// expect LOBE: F;
// expect fair: P;
// expect unfair: F;
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    let y = 1u - wg.x;
    if wg.x == 1u {
        atomicStore(&x, y - 1u);
    } else {
        while atomicLoad(&x) != 4294967295u {}
    }
}
