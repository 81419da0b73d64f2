#version 450
layout(local_size_x = 2) in;
shared uint s[2];
layout(std430, binding = 0) buffer B { uint total; };
void main() {
  s[gl_LocalInvocationID.x] = 1u;
  barrier();
  uint sum = 0u;
  for (uint i = 0u; i < 2u; i++) { sum = sum + s[i]; }
  atomicAdd(total, sum);
}
