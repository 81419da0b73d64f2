// error: value bound exceeded: raise --values
// values 4;
@group(0) @binding(0) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    atomicAdd(&x, 3u);
}
