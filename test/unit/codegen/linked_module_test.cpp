// Kernels linked into the application run through the Backend API too: the generated header
// declares the module's descriptor, and CpuBackend::load_linked_module launches from it.
#include "hologram/runtime/backend.h"
#include "vector.h"

#include <cstdio>
#include <vector>

int main() {
  auto backend = hologram::create_backend(hologram::Preference::parse("cpu"));
  auto module = backend->load_linked_module(&hologram_module_vector);
  int failures = 0;
  auto info = backend->module_info(module);
  if (info.variant.rfind("x86-64-v", 0) != 0 || info.kernels.size() != 12) ++failures;
  auto x = backend->allocate_buffer(12), y = backend->allocate_buffer(12);
  std::vector<float> in{-3.0f, 0.5f, 4.0f};
  backend->write<float>(x, in);
  hologram::KernelArg args[] = {hologram::KernelArg::buffer(x), hologram::KernelArg::buffer(y),
                                hologram::KernelArg::u32(3)};
  backend->launch(module, "relu", hologram::LaunchConfig::linear(3), args);
  auto out = backend->read<float>(y);
  if (out[0] != 0.0f || out[1] != 0.5f || out[2] != 4.0f) ++failures;
  try {
    backend->load_linked_module(nullptr);
    ++failures;
  } catch (const hologram::Error &) {
  }
  std::printf("linked module test: %s (variant %s)\n", failures ? "FAILED" : "passed",
              info.variant.c_str());
  return failures != 0;
}
