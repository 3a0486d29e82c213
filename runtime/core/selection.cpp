// Backend selection and discovery (SPEC §10). Never a silent fallback: a preference either
// yields the backend it names or an error listing why each candidate was rejected.
#include "../cpu/cpu_backend.h"
#include "hologram/runtime/backend.h"

#include <algorithm>
#include <sstream>

namespace hologram {

namespace {

const std::vector<std::string> kKnown = {"vulkan", "opencl", "cpu"};

/// Why a backend this build does not contain cannot be used.
std::string absent_reason(const std::string &name) {
  return "the " + name + " backend is not part of this build of hologram";
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
                  "unknown backend '" + name + "' (expected auto, vulkan, opencl or cpu)");
    p.names.push_back(name);
  }
  if (p.names.empty()) throw Error(ErrorCode::InvalidArgument, "empty backend preference");
  return p;
}

std::vector<BackendReport> discover() {
  std::vector<BackendReport> out;
  out.push_back({"vulkan", "", false, absent_reason("vulkan")});
  out.push_back({"opencl", "", false, absent_reason("opencl")});
  auto cpu = runtime::cpu_device_info();
  out.push_back({"cpu", cpu.name, true, ""});
  return out;
}

std::unique_ptr<Backend> create_backend(const Preference &preference) {
  // auto: a GPU through Vulkan, then through OpenCL, then the CPU backend.
  std::vector<std::string> order = preference.names.empty() ? kKnown : preference.names;
  std::string rejected;
  for (const auto &name : order) {
    if (name == "cpu") return runtime::make_cpu_backend();
    rejected += "\n  " + name + ": " + absent_reason(name);
  }
  throw Error(ErrorCode::BackendUnavailable, "no backend could be started:" + rejected);
}

} // namespace hologram
