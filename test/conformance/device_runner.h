// A GPU-API backend (Vulkan, OpenCL) as a conformance runner: each case's kernel goes through
// Backend::execute_program, which compiles it to SPIR-V for the device.
#pragma once

#include "harness.h"

#include <memory>

namespace hologram::conformance {

class DeviceRunner final : public Runner {
public:
  /// Starts backend `name` by name (CPU-class devices such as lavapipe included); nullptr
  /// with `error` set when it cannot start.
  static std::unique_ptr<DeviceRunner> start(const std::string &name, std::string &error);
  [[nodiscard]] std::string name() const override { return name_; }
  Status run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) override;
  std::string unsupported(const isa::Kernel &kernel) override;
  [[nodiscard]] RunnerKind kind() const override { return RunnerKind::Device; }
  [[nodiscard]] LibraryPathCounts last_paths() const override { return paths_; }

private:
  DeviceRunner(std::string name, std::unique_ptr<Backend> backend)
      : name_(std::move(name)), backend_(std::move(backend)) {}
  std::string name_;
  std::unique_ptr<Backend> backend_;
  LibraryPathCounts paths_;
};

} // namespace hologram::conformance
