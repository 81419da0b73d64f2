// error: value bound exceeded: a signed `>>`, `/` or `%` of a negative value, which the kernel language's unsigned `>>` and `&` do not compute (invocation 0.0: -1 / 2 is 0 in 32 bits but 3 modulo 8)
@group(0) @binding(0) var<storage, read_write> x: atomic<i32>;
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    let y = i32(wg.x) - 1;
    atomicStore(&x, y / 2);
}
