// Backend selection and discovery (SPEC §10). Never a silent fallback: a preference either
// yields the backend it names or an error listing why each candidate was rejected.
#include "../cpu/cpu_backend.h"
#include "../cuda/cuda_backend.h"
#include "hologram/runtime/backend.h"
#ifdef HOLOGRAM_HAVE_VULKAN
#include "../vulkan/vulkan_backend.h"
#endif
#ifdef HOLOGRAM_HAVE_OPENCL
#include "../opencl/opencl_backend.h"
#endif

#include <algorithm>
#include <sstream>

namespace hologram {

namespace {

/// What `auto` tries, in order; "interp" (the reference interpreter) only when named.
const std::vector<std::string> kAutomatic = {"vulkan", "opencl", "cuda", "cpu"};
const std::vector<std::string> kKnown = {"vulkan", "opencl", "cuda", "cpu", "interp"};

/// Why a backend this build does not contain cannot be used.
std::string absent_reason(const std::string &name) {
  return "the " + name + " backend is not part of this build of hologram";
}

/// Starts backend `name`; `automatic` restricts Vulkan and OpenCL to GPUs (SPEC §10: CPU-class
/// devices only when asked for by name). Throws Error(BackendUnavailable) with the reason.
std::unique_ptr<Backend> start(const std::string &name, bool automatic) {
  if (name == "cpu") return runtime::make_cpu_backend();
  if (name == "interp") return runtime::make_cpu_backend(/*interpret=*/true);
  if (name == "cuda") return runtime::make_cuda_backend();
#ifdef HOLOGRAM_HAVE_VULKAN
  if (name == "vulkan") return runtime::make_vulkan_backend(!automatic);
#endif
#ifdef HOLOGRAM_HAVE_OPENCL
  if (name == "opencl") return runtime::make_opencl_backend(!automatic);
#endif
  (void)automatic;
  throw Error(ErrorCode::BackendUnavailable, absent_reason(name));
}

} // namespace

Preference Preference::parse(const std::string &text) {
  Preference p;
  if (text.empty() || text == "auto") return p;
  std::stringstream ss(text);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (std::find(kKnown.begin(), kKnown.end(), name) == kKnown.end())
      throw Error(ErrorCode::InvalidArgument,
                  "unknown backend '" + name +
                      "' (expected auto, vulkan, opencl, cuda, cpu or interp)");
    p.names.push_back(name);
  }
  if (p.names.empty()) throw Error(ErrorCode::InvalidArgument, "empty backend preference");
  return p;
}

std::vector<BackendReport> discover() {
  std::vector<BackendReport> out;
  [[maybe_unused]] std::string error;
#ifdef HOLOGRAM_HAVE_VULKAN
  auto devices = runtime::vulkan_devices(error);
  if (devices.empty()) out.push_back({"vulkan", "", false, error});
  for (const auto &d : devices)
    out.push_back({"vulkan", d.name, d.usable,
                   !d.usable  ? d.reason
                   : d.is_gpu ? ""
                              : "a CPU device: chosen only when the vulkan backend is named"});
#else
  out.push_back({"vulkan", "", false, absent_reason("vulkan")});
#endif
#ifdef HOLOGRAM_HAVE_OPENCL
  auto cl_devices = runtime::opencl_devices(error);
  if (cl_devices.empty()) out.push_back({"opencl", "", false, error});
  for (const auto &d : cl_devices)
    out.push_back({"opencl", d.name, d.usable,
                   !d.usable  ? d.reason
                   : d.is_gpu ? ""
                              : "a CPU device: chosen only when the opencl backend is named"});
#else
  out.push_back({"opencl", "", false, absent_reason("opencl")});
#endif
  auto cuda_devices = runtime::cuda_devices(error);
  if (cuda_devices.empty()) out.push_back({"cuda", "", false, error});
  for (const auto &d : cuda_devices) out.push_back({"cuda", d.name, d.usable, d.reason});
  auto cpu = runtime::cpu_device_info();
  out.push_back({"cpu", cpu.name, true, ""});
  return out;
}

std::unique_ptr<Backend> create_backend(const Preference &preference) {
  // auto: a GPU through Vulkan, then through OpenCL, then through CUDA, then the CPU backend.
  const bool automatic = preference.names.empty();
  std::vector<std::string> order = automatic ? kAutomatic : preference.names;
  std::string rejected;
  for (const auto &name : order) {
    try {
      return start(name, automatic);
    } catch (const Error &e) {
      if (e.code() != ErrorCode::BackendUnavailable) throw;
      rejected += "\n  " + name + ": " + e.what();
    }
  }
  throw Error(ErrorCode::BackendUnavailable, "no backend could be started:" + rejected);
}

} // namespace hologram
