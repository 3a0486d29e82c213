// Counts of the schedules that whole-launch operations took on one backend: what
// Backend::library_path_counts() reports, so a test can prove that a fast path ran instead of a
// silent fallback to the reference.
#pragma once

#include "hologram/isa/opcode.h"
#include "hologram/runtime/backend.h"

#include <mutex>
#include <string_view>

namespace hologram::runtime {

class LibraryPathCounter {
public:
  /// Records that `op` ran with `schedule` ("packed", "reference", ...).
  void count(isa::Opcode op, std::string_view schedule) {
    std::string key(isa::info(op).mnemonic);
    key += ':';
    key += schedule;
    std::lock_guard lock(mutex_);
    ++counts_[key];
  }
  [[nodiscard]] LibraryPathCounts snapshot() const {
    std::lock_guard lock(mutex_);
    return counts_;
  }

private:
  mutable std::mutex mutex_;
  LibraryPathCounts counts_;
};

} // namespace hologram::runtime
