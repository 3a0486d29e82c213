// Kernels linked into the application run through the Backend API too: the generated header
// declares the module's descriptor; CpuBackend::load_linked_module launches its x86 code, the
// Vulkan and OpenCL backends the SPIR-V compiled for their targets next to it.
#include "hologram/runtime/backend.h"
#include "vector.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int relu_on(const char *kind, const char *expect_variant, int &failures) {
  std::unique_ptr<hologram::Backend> backend;
  try {
    backend = hologram::create_backend(hologram::Preference::parse(kind));
  } catch (const hologram::Error &e) {
    // A backend HOLOGRAM_REQUIRE_BACKENDS names must start.
    const char *required = std::getenv("HOLOGRAM_REQUIRE_BACKENDS");
    bool needed = required && std::string(required).find(kind) != std::string::npos;
    std::printf("%s: %s (%s)\n", kind, needed ? "FAILED to start" : "not run here", e.what());
    return needed ? ++failures : failures;
  }
  auto module = backend->load_linked_module(&hologram_module_vector);
  auto info = backend->module_info(module);
  if (info.variant.rfind(expect_variant, 0) != 0 || info.kernels.size() != 12) ++failures;
  auto x = backend->allocate_buffer(12), y = backend->allocate_buffer(12);
  std::vector<float> in{-3.0f, 0.5f, 4.0f};
  backend->write<float>(x, in);
  hologram::KernelArg args[] = {hologram::KernelArg::buffer(x), hologram::KernelArg::buffer(y),
                                hologram::KernelArg::u32(3)};
  backend->launch(module, "relu", hologram::LaunchConfig::linear(3, 1), args);
  auto out = backend->read<float>(y);
  if (out[0] != 0.0f || out[1] != 0.5f || out[2] != 4.0f) ++failures;
  try {
    backend->load_linked_module(nullptr);
    ++failures;
  } catch (const hologram::Error &) {
  }
  std::printf("%s: relu from the linked module (variant %s)\n", kind, info.variant.c_str());
  return failures;
}

} // namespace

int main() {
  int failures = 0;
  relu_on("cpu", "x86-64-v", failures);
  relu_on("vulkan", "vulkan1.1", failures);
  relu_on("opencl", "opencl1.2", failures);
  std::printf("linked module test: %s\n", failures ? "FAILED" : "passed");
  return failures != 0;
}
