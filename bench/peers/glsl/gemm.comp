#version 450
#extension GL_GOOGLE_include_directive : require
// C = A B for n x n row-major matrices, 16x16 tiles staged in shared memory.
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint grid_x, grid_y, grid_z, base_x, base_y, base_z; uint n; } p;
#include "common.glsl"
shared float ta[16][16];
shared float tb[16][16];
void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint row = block_y() * 16 + ty, col = block_x() * 16 + tx;
  float acc = 0.0;
  for (uint k0 = 0; k0 < p.n; k0 += 16) {
    ta[ty][tx] = (row < p.n && k0 + tx < p.n) ? a[row * p.n + k0 + tx] : 0.0;
    tb[ty][tx] = (k0 + ty < p.n && col < p.n) ? b[(k0 + ty) * p.n + col] : 0.0;
    barrier();
    for (uint k = 0; k < 16; ++k) acc += ta[ty][k] * tb[k][tx];
    barrier();
  }
  if (row < p.n && col < p.n) c[row * p.n + col] = acc;
}
