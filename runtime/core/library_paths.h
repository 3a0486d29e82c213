// Counts of the schedules that whole-launch operations took on one backend: what
// Backend::library_path_counts() reports, so a test can prove that a fast path ran instead of a
// silent fallback to the reference.
#pragma once

#include "hologram/isa/opcode.h"
#include "hologram/runtime/backend.h"

#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace hologram::runtime {

class LibraryPathCounter {
public:
  /// Records that `op` ran with `schedule` ("packed", "reference", ...). This runs on every
  /// whole-launch instruction: counts are kept per opcode and looked up by the schedule's
  /// string_view, so a schedule seen before allocates nothing; the "mnemonic:schedule" keys
  /// are spelled by snapshot().
  void count(isa::Opcode op, std::string_view schedule) {
    std::lock_guard lock(mutex_);
    auto &schedules = counts_[op];
    if (auto it = schedules.find(schedule); it != schedules.end())
      ++it->second;
    else
      schedules.emplace(std::string(schedule), 1);
  }
  [[nodiscard]] LibraryPathCounts snapshot() const {
    std::lock_guard lock(mutex_);
    LibraryPathCounts out;
    for (const auto &[op, schedules] : counts_)
      for (const auto &[schedule, n] : schedules)
        out[std::string(isa::info(op).mnemonic) + ":" + schedule] = n;
    return out;
  }

private:
  mutable std::mutex mutex_;
  std::map<isa::Opcode, std::map<std::string, uint64_t, std::less<>>> counts_;
};

} // namespace hologram::runtime
