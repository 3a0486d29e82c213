#version 450
#extension GL_GOOGLE_include_directive : require
layout(push_constant) uniform P { uint grid_x, grid_y, grid_z, base_x, base_y, base_z; } p;
#include "common.glsl"
void main() {}
