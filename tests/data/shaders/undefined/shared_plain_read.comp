#version 450
// A plain read of an unwritten `shared` variable (found by an audit of
// issue 42): refused at the read, line 10, column 12. naga's GLSL reader
// gives the variable's expression the span of its declaration (line 8),
// where the refusal pointed before.
layout(local_size_x = 2) in;
layout(std430, binding = 0) buffer B { uint nobody; };
shared uint s;
void main() {
  uint v = s;
  if (v != 0u) {
    while (atomicAdd(nobody, 0u) == 0u) {}
  }
}
