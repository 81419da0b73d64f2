// error: a 64-bit integer: the translation computes in 32 bits
// Issue 46: `1 << 32` on a u64 is 2^32, whose low word is 0, so this
// shader terminates; read in 32 bits (shift amounts modulo 32) it spun,
// and was refused saying "1 << 32 is 1 in 32 bits".
// init x = 1;
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    let a = u64(atomicLoad(&x));
    while (u32(a << 32u) != 0u) { }
}
