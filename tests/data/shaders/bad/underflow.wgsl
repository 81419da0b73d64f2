// error: value bound exceeded: a negative value below -128, which the kernel language's values (unsigned, or two's complement from -128 up) cannot hold
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    let y = 1u - wg.x;
    atomicStore(&x, y - 200u);
}
