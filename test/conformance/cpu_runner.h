// The compiled CPU backend as a conformance runner, forced to one x86 variant.
#pragma once

#include "harness.h"

namespace hologram::conformance {

class CpuRunner final : public Runner {
public:
  /// `level`: "x86-64-v2", "x86-64-v3" or "x86-64-v4"; `checked`: compiled with
  /// -fbounds-check, which a valid program never trips (runner "cpu_checked").
  explicit CpuRunner(std::string level, bool checked = false)
      : level_(std::move(level)), checked_(checked) {}
  [[nodiscard]] std::string name() const override {
    return checked_ ? "cpu_checked" : "cpu_v" + level_.substr(8);
  }
  Status run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) override;
  [[nodiscard]] RunnerKind kind() const override { return RunnerKind::Cpu; }
  [[nodiscard]] LibraryPathCounts last_paths() const override { return paths_; }

private:
  std::string level_;
  bool checked_;
  LibraryPathCounts paths_;
};

} // namespace hologram::conformance
