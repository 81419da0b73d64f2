// error: constant -300: value bound exceeded (the kernel language's values are below 256, which as two's complement values are -128 to 127)
@group(0) @binding(0) var<storage, read_write> x: atomic<i32>;
@compute @workgroup_size(1)
fn main() {
    atomicStore(&x, -300i);
}
