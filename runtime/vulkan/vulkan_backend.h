// The Vulkan backend (SPEC §9.1, §10): libvulkan opened with dlopen, one compute queue of one
// physical device, buffers and pools as storage buffers, kernels as compute pipelines built
// from our SPIR-V.
#pragma once

#include "hologram/runtime/backend.h"

#include <memory>
#include <string>
#include <vector>

namespace hologram::runtime {

struct VulkanDeviceReport {
  std::string name;
  bool is_gpu = false;
  bool usable = false;
  std::string reason; ///< why it cannot be used
};

/// Every Vulkan physical device; when the loader or the instance cannot be had, none and
/// `error` says why.
std::vector<VulkanDeviceReport> vulkan_devices(std::string &error);

/// A backend on the first usable device: GPUs first; CPU-class devices (lavapipe) only when
/// `allow_cpu_devices`. Throws Error(BackendUnavailable) naming every device and its reason.
std::unique_ptr<Backend> make_vulkan_backend(bool allow_cpu_devices);

} // namespace hologram::runtime
