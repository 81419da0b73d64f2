// error: GLSL: a macro's arguments of more than 65536 tokens (as written or expanded), or macro invocations nested more than 32 deep in arguments: refused
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint x; };
#define D(x) x x
void main() {
  x = D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(1u))))))))))))))))))))))))))))))))))))))));
}
