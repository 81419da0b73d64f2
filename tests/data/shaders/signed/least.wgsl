// -128, the least 8-bit two's complement value (256 values: 128 to 255
// stand for -128 to -1). Workgroup 0 stores it; workgroup 1 waits for it:
// P under HSA, LOBE, HSA+OBE and fair; F under OBE and unfair. Had -128
// been refused or read as 128, the shader would not be decided, or
// workgroup 1 would wait forever (F under fair).
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
        atomicStore(&x, -128i);
    } else {
        while atomicLoad(&x) != -128i {}
    }
}
