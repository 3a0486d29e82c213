// Conversions between the C API's types and the C++ runtime's (internal to the runtime).
#pragma once

#include "hologram/hologram.h"
#include "hologram/isa/launch.h"
#include "hologram/support/status.h"

namespace hologram::runtime {

hg_status status_code_of(ErrorCode code);
/// The LaunchConfig of a C launch description. Inline: the generated header's calls pass one
/// on every launch, and a copy returned through memory from another file cost a store-to-load
/// forwarding stall there (its fields are written as words and read back as vectors).
inline LaunchConfig launch_config_of(const hg_launch &launch) {
  LaunchConfig lc;
  lc.grid = {launch.grid[0], launch.grid[1], launch.grid[2]};
  lc.block = {launch.block[0], launch.block[1], launch.block[2]};
  lc.shared_memory = launch.shared_memory;
  return lc;
}

} // namespace hologram::runtime
