// The CPU backend: host memory for buffers, pools and the Atlas state; ISA programs run
// through the reference interpreter.
#pragma once

#include "hologram/runtime/backend.h"

#include <memory>

namespace hologram::runtime {

std::unique_ptr<Backend> make_cpu_backend();
/// The CPU device as discover() reports it.
DeviceInfo cpu_device_info();

} // namespace hologram::runtime
