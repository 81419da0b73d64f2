#version 450
// `init` lines name an aliased buffer's words by any view: `a_y` (block
// `A`'s instance `a`, member `y`) is `b.x`, word 1, and `second` is one
// cell of `flags`, word 3 of `C`'s array (`flags[1]`). Both are set, so
// neither wait below waits: P under every model, UNFAIR included. Were
// `a_y` taken as word 0 or `second` as the whole array (or its first
// cell), a wait would never end.
// workgroups 1;
// init a_y = 1;
// init second = 1;
// expect unfair: P;
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer A { uint x; uint y; } a;
layout(std430, binding = 0) buffer B { uint y; uint x; } b;
layout(std430, binding = 1) buffer C { uint flags[4]; };
layout(std430, binding = 1) buffer D { uint first; uint second; };
void main() {
  while (atomicAdd(b.x, 0u) == 0u) {}
  while (atomicAdd(flags[1], 0u) == 0u) {}
  atomicAdd(a.x, 1u);
  atomicAdd(first, 1u);
}
