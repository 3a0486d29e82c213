#version 450
#extension GL_GOOGLE_include_directive : require
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint grid_x, grid_y, grid_z, base_x, base_y, base_z; uint n; } p;
#include "common.glsl"
void main() {
  uint i = block_x() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i < p.n) c[i] = a[i] + b[i];
}
