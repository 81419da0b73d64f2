// error: textures and images
@group(0) @binding(0) var t: texture_2d<u32>;
@group(0) @binding(1) var<storage, read_write> x: atomic<u32>;
@compute @workgroup_size(1)
fn main() {
    atomicStore(&x, textureDimensions(t).x);
}
