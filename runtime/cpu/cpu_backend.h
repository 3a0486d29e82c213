// The CPU backend: host memory for buffers, pools and the Atlas state; ISA programs compiled by
// Hologram::jit, or (`interpret`, the "interp" backend) run on the reference interpreter.
#pragma once

#include "hologram/runtime/backend.h"

#include <memory>

namespace hologram::runtime {

std::unique_ptr<Backend> make_cpu_backend(bool interpret = false);
/// The CPU device as discover() reports it.
DeviceInfo cpu_device_info();
/// The same device as the "interp" backend reports it.
DeviceInfo interpreter_device_info();

} // namespace hologram::runtime
