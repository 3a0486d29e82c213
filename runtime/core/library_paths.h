// Counts of the schedules that whole-launch operations took on one backend: what
// Backend::library_path_counts() reports, so a test can prove that a fast path ran instead of a
// silent fallback to the reference.
#pragma once

#include "hologram/isa/opcode.h"
#include "hologram/runtime/backend.h"

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace hologram::runtime {

class LibraryPathCounter {
public:
  /// Records that `op` ran with `schedule` ("packed", "reference", ...).
  /// (This runs on every whole-launch instruction: the key is spelled in a buffer on the stack
  /// and allocated once, when it is first seen.)
  void count(isa::Opcode op, std::string_view schedule) {
    const std::string_view mnemonic = isa::info(op).mnemonic;
    char buffer[128];
    std::string spelled;
    std::string_view key;
    if (mnemonic.size() + 1 + schedule.size() <= sizeof buffer) {
      std::memcpy(buffer, mnemonic.data(), mnemonic.size());
      buffer[mnemonic.size()] = ':';
      std::memcpy(buffer + mnemonic.size() + 1, schedule.data(), schedule.size());
      key = {buffer, mnemonic.size() + 1 + schedule.size()};
    } else {
      spelled = std::string(mnemonic) + ":" + std::string(schedule);
      key = spelled;
    }
    std::lock_guard lock(mutex_);
    if (auto it = counts_.find(key); it != counts_.end())
      ++it->second;
    else
      counts_.emplace(std::string(key), 1);
  }
  [[nodiscard]] LibraryPathCounts snapshot() const {
    std::lock_guard lock(mutex_);
    return {counts_.begin(), counts_.end()};
  }

private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t, std::less<>> counts_; ///< looked up by string_view
};

} // namespace hologram::runtime
