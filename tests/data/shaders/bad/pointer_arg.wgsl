// error: pointer or struct argument
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
fn bump(p: ptr<function, u32>) { *p = *p + 1u; }
@compute @workgroup_size(1)
fn main() {
    var v = 0u;
    bump(&v);
    atomicStore(&x, v);
}
