#version 450
#extension GL_GOOGLE_include_directive : require
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint grid_x, grid_y, grid_z, base_x, base_y, base_z; float alpha; uint n; } p;
#include "common.glsl"
void main() {
  uint i = block_x() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i < p.n) y[i] = p.alpha * x[i] + y[i];
}
