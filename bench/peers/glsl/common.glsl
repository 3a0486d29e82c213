// The interface hologram's Vulkan kernels have (docs/spirv.md), so the runtime launches these
// shaders exactly as it launches hologram-cc's: block size from specialisation constants
// 0-2, buffers in set 0 by parameter, geometry then scalars in the push constants.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
#define GEOMETRY uint grid_x, grid_y, grid_z, base_x, base_y, base_z
uint block_x() { return gl_WorkGroupID.x + p.base_x; }
uint block_y() { return gl_WorkGroupID.y + p.base_y; }
