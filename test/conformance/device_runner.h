// A backend as a conformance runner through Backend::execute_program: Vulkan and OpenCL, which
// compile each case's kernel to SPIR-V for the device, and the CPU backend ("cpu_jit"), which
// compiles it in process with Hologram::jit (LLVM ORC).
#pragma once

#include "harness.h"

#include <memory>

namespace hologram::conformance {

class DeviceRunner final : public Runner {
public:
  /// Starts backend `backend` by name (CPU-class devices such as lavapipe included), shown as
  /// `name` (the backend's name when empty); nullptr with `error` set when it cannot start.
  static std::unique_ptr<DeviceRunner> start(const std::string &backend, std::string &error,
                                             std::string name = "");
  [[nodiscard]] std::string name() const override { return name_; }
  Status run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) override;
  std::string unsupported(const isa::Kernel &kernel) override;
  [[nodiscard]] RunnerKind kind() const override {
    return spirv_ ? RunnerKind::Device : RunnerKind::Cpu;
  }
  [[nodiscard]] LibraryPathCounts last_paths() const override { return paths_; }

private:
  DeviceRunner(std::string name, std::unique_ptr<Backend> backend)
      : name_(std::move(name)), backend_(std::move(backend)),
        spirv_(backend_->device_info().backend != "cpu") {}
  std::string name_;
  std::unique_ptr<Backend> backend_;
  LibraryPathCounts paths_;
  bool spirv_; ///< Vulkan or OpenCL
};

} // namespace hologram::conformance
