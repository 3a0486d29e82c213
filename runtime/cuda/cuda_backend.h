// The CUDA backend (SPEC §9.4, §10): the driver (libcuda.so.1) opened with dlopen, the primary
// context of one device, buffers and pools in device memory, kernels from the PTX payloads of
// bundles JIT-compiled by the driver (cuModuleLoadDataEx), launches that return when they have
// finished. No CUDA toolkit is needed, here or where it runs.
#pragma once

#include "hologram/runtime/backend.h"

#include <memory>
#include <string>
#include <vector>

namespace hologram::runtime {

struct CudaDeviceReport {
  std::string name; ///< the device's own name
  bool usable = false;
  std::string reason;  ///< why it cannot be used
  std::string details; ///< "sm_90, 132 SMs, driver 13.0"
};

/// Every CUDA device; when the driver cannot be opened or initialised, or has no device, none
/// and `error` says why.
std::vector<CudaDeviceReport> cuda_devices(std::string &error);

/// A backend on the first usable CUDA device. Throws Error(BackendUnavailable) saying why
/// there is none: no libcuda.so.1, a driver that does not start (the toolkit's stub library,
/// no device), or devices it cannot run.
std::unique_ptr<Backend> make_cuda_backend();

} // namespace hologram::runtime
