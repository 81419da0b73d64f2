// error: GLSL: past the preprocessor's bounds
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint x; };
#define D(x) x x
void main() {
  x = D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(1u))))))))))))))))))))))))))))))))))))))));
}
