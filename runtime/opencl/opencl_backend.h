// The OpenCL backend (SPEC §9.2, §9.3, §10): the ICD loader opened with dlopen, one in-order
// queue on one device, buffers and pools as cl_mem, kernels from our SPIR-V, loaded with
// clCreateProgramWithIL where the device takes SPIR-V, otherwise translated to SPIR 1.2 by
// llvm-spirv and loaded as a cl_khr_spir binary.
#pragma once

#include "hologram/runtime/backend.h"

#include <memory>
#include <string>
#include <vector>

namespace hologram::runtime {

struct OpenClDeviceReport {
  std::string name; ///< "<device> (<platform>)"
  bool is_gpu = false;
  bool usable = false;
  std::string reason; ///< why it cannot be used
  std::string loader; ///< how programs reach it: "SPIR-V IL" or "SPIR 1.2 via <llvm-spirv>"
};

/// Every OpenCL device of every platform; when the ICD loader cannot be opened or finds no
/// platform, none and `error` says why.
std::vector<OpenClDeviceReport> opencl_devices(std::string &error);

/// A backend on the first usable device: GPUs first; CPU-class devices (PoCL) only when
/// `allow_cpu_devices`. Throws Error(BackendUnavailable) naming every device and its reason.
///
/// HOLOGRAM_OPENCL_PROGRAMS=il|spir forces one way of loading programs (a device that cannot
/// take it is refused with the reason); HOLOGRAM_LLVM_SPIRV names the llvm-spirv to use.
std::unique_ptr<Backend> make_opencl_backend(bool allow_cpu_devices);

} // namespace hologram::runtime
