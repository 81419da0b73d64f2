// error: Unknown function 'f'
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint x; };
uint f(uint n) { return f(n); }
void main() {
    atomicAdd(x, f(1u));
}
