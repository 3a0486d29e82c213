// The integration application: both kernels through their generated headers (statically
// linked), then the same kernels from the bundle through the runtime on the CPU backend, with
// every x86 variant this machine runs forced in turn, and on the Vulkan and OpenCL backends
// from the bundle and from the SPIR-V linked into the application. It links Hologram::runtime
// only, so compiling an ISA program at run time is refused with a clear error (and the interp
// backend runs it).
#include "clamp.h"
#include "saxpy.h"

#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/support/diagnostics.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
int failures = 0;
void expect(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}
} // namespace

int main() {
  const uint32_t n = 1001;
  std::vector<float> x(n), y(n, 1.0f);
  std::vector<double> d(n), e(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    d[i] = static_cast<double>(i) - 500.0;
  }
  hologram_kernels::saxpy::saxpy(x.data(), y.data(), 2.0f, n);
  expect(y[1000] == 2001.0f, "saxpy through the header");
  hologram_kernels::clamp::clamp_f64(d.data(), e.data(), -10.0, 10.0, n);
  expect(e[0] == -10.0 && e[505] == 5.0 && e[1000] == 10.0, "clamp through the header");

  auto backend = hologram::create_backend(hologram::Preference::parse("cpu"));
  auto module = backend->load_module(APP_BUNDLE);
  auto info = backend->module_info(module);
  expect(info.kernels.size() == 2, "the bundle holds both kernels");
  for (const char *variant : {"x86-64-v2", "x86-64-v3", "x86-64-v4"}) {
    hologram::runtime::set_cpu_isa(variant);
    hologram::ModuleHandle m;
    try {
      m = backend->load_module(APP_BUNDLE);
    } catch (const hologram::Error &err) {
      std::printf("%s: not run here (%s)\n", variant, err.what());
      continue;
    }
    expect(backend->module_info(m).variant == variant, "the forced variant is chosen");
    auto bx = backend->allocate_buffer(n * 4), by = backend->allocate_buffer(n * 4);
    std::vector<float> ones(n, 1.0f);
    backend->write<float>(bx, x);
    backend->write<float>(by, ones);
    hologram::KernelArg args[] = {hologram::KernelArg::buffer(bx), hologram::KernelArg::buffer(by),
                                  hologram::KernelArg::f32(2.0f), hologram::KernelArg::u32(n)};
    backend->launch(m, "saxpy", hologram::LaunchConfig::linear(n, 128), args);
    auto out = backend->read<float>(by);
    expect(out == y, "saxpy from the bundle matches the header's result");
    std::printf("%s: saxpy from the bundle agrees with the static library\n", variant);
    backend->unload_module(m);
  }
  hologram::runtime::set_cpu_isa("");

  // An ISA program needs the compiler (Hologram::jit), which this application does not link:
  // the cpu backend says so, and the interp backend runs the program on the interpreter.
  hologram::DiagnosticEngine diags;
  auto program = hologram::isa::parse_module(".kernel k\n  exit\n", "k.hasm", diags);
  const auto &kernel = program->kernels.at(0);
  const auto one = hologram::LaunchConfig::linear(1, 1);
  try {
    backend->execute_program(kernel, one, {});
    expect(false, "execute_program on cpu without the compiler fails");
  } catch (const hologram::Error &err) {
    expect(std::string(err.what()).find("link Hologram::jit") != std::string::npos,
           "execute_program on cpu without the compiler says to link Hologram::jit");
  }
  hologram::create_backend(hologram::Preference::parse("interp"))->execute_program(kernel, one, {});

  // The bundle's SPIR-V on the Vulkan and OpenCL devices, named so CPU-class drivers count;
  // a backend HOLOGRAM_REQUIRE_BACKENDS names must start.
  const char *required = std::getenv("HOLOGRAM_REQUIRE_BACKENDS");
  for (const std::string name : {"vulkan", "opencl"}) {
    std::unique_ptr<hologram::Backend> device;
    try {
      device = hologram::create_backend(hologram::Preference::parse(name));
    } catch (const hologram::Error &err) {
      std::printf("%s: not run here (%s)\n", name.c_str(), err.what());
      expect(!required || std::string(required).find(name) == std::string::npos,
             "a required backend starts");
      continue;
    }
    const std::string target = name == "vulkan" ? "vulkan1.1" : "opencl1.2";
    for (const bool linked : {false, true}) {
      auto m = linked ? device->load_linked_module(&hologram_module_saxpy)
                      : device->load_module(APP_BUNDLE);
      expect(device->module_info(m).variant == target, "the SPIR-V for the backend is chosen");
      auto bx = device->allocate_buffer(n * 4), by = device->allocate_buffer(n * 4);
      std::vector<float> ones(n, 1.0f);
      device->write<float>(bx, x);
      device->write<float>(by, ones);
      hologram::KernelArg args[] = {hologram::KernelArg::buffer(bx),
                                    hologram::KernelArg::buffer(by), hologram::KernelArg::f32(2.0f),
                                    hologram::KernelArg::u32(n)};
      device->launch(m, "saxpy", hologram::LaunchConfig::linear(n, 128), args);
      expect(device->read<float>(by) == y, "saxpy's SPIR-V matches the header's result");
      std::printf("%s (%s): saxpy from the %s agrees with the static library\n", name.c_str(),
                  device->device_info().name.c_str(), linked ? "linked SPIR-V" : "bundle");
    }
    try {
      device->execute_program(kernel, one, {});
      expect(false, "execute_program without the compiler fails");
    } catch (const hologram::Error &err) {
      expect(std::string(err.what()).find("link Hologram::jit") != std::string::npos,
             "execute_program without the compiler says to link Hologram::jit");
      std::printf("%s: execute_program without Hologram::jit: %s\n", name.c_str(), err.what());
    }
  }
  if (failures == 0) std::printf("integration app: all checks passed\n");
  return failures != 0;
}
