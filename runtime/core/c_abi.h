// Conversions between the C API's types and the C++ runtime's (internal to the runtime).
#pragma once

#include "hologram/hologram.h"
#include "hologram/isa/launch.h"
#include "hologram/support/status.h"

namespace hologram::runtime {

hg_status status_code_of(ErrorCode code);
/// The LaunchConfig of a C launch description.
LaunchConfig launch_config_of(const hg_launch &launch);

} // namespace hologram::runtime
