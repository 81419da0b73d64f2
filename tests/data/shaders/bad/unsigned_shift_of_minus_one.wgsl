// error: value bound exceeded: the kernel language's values are below 256, which as two's complement values are -128 to 127 (invocation 0.0: -1 >> 1 is 2147483647 in 32 bits but 1 modulo 4)
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    atomicStore(&x, ~wg.x >> 1u);
}
