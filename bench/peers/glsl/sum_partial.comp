#version 450
#extension GL_GOOGLE_include_directive : require
// One stage of a sum: each block of 256 lanes folds a grid-stride share into out[block].
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer O { float o[]; };
layout(push_constant) uniform P { uint grid_x, grid_y, grid_z, base_x, base_y, base_z; uint n; } p;
#include "common.glsl"
shared float s[256];
void main() {
  uint lane = gl_LocalInvocationID.x;
  uint stride = p.grid_x * gl_WorkGroupSize.x;
  float acc = 0.0;
  for (uint i = block_x() * gl_WorkGroupSize.x + lane; i < p.n; i += stride) acc += x[i];
  s[lane] = acc;
  barrier();
  for (uint h = 128; h > 0; h >>= 1) {
    if (lane < h) s[lane] += s[lane + h];
    barrier();
  }
  if (lane == 0) o[block_x()] = s[0];
}
