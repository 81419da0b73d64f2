// error: textures and images
#version 450
layout(local_size_x = 1) in;
layout(binding = 0, r32ui) uniform uimage2D img;
layout(std430, binding = 1) buffer B { uint x; };
void main() {
    atomicAdd(x, uint(imageSize(img).x));
}
