// A small map that keeps the values used most recently: the backends' programs compiled at run
// time (execute_program), so that a process compiling many distinct programs holds the code
// of the last few only. Not thread-safe (its owners lock around it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace hologram::runtime {

/// How many programs compiled at run time a backend keeps (the code of older ones is freed
/// once no launch holds it; using one again compiles it again, from the compile cache).
inline constexpr size_t kRecentPrograms = 64;

/// At most `capacity` values by key; putting a new key into a full cache drops the value used
/// least recently (found or put). Values are usually shared pointers, so one dropped here
/// lives on while a launch still holds it.
template <typename Key, typename Value> class RecentCache {
public:
  explicit RecentCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  /// The value of `key`, marked as used now; nullptr when absent.
  template <typename K> Value *find(const K &key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    it->second.used = ++clock_;
    return &it->second.value;
  }

  /// Sets the value of `key` (used now), dropping the least recently used one if full.
  Value &put(Key key, Value value) {
    if (auto it = entries_.find(key); it != entries_.end()) {
      it->second = {std::move(value), ++clock_};
      return it->second.value;
    }
    if (entries_.size() >= capacity_) {
      auto oldest = entries_.begin();
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->second.used < oldest->second.used) oldest = it;
      entries_.erase(oldest);
    }
    return entries_.emplace(std::move(key), Entry{std::move(value), ++clock_}).first->second.value;
  }

  [[nodiscard]] size_t size() const { return entries_.size(); }

private:
  struct Entry {
    Value value;
    uint64_t used;
  };
  std::map<Key, Entry, std::less<>> entries_;
  uint64_t clock_ = 0;
  size_t capacity_;
};

} // namespace hologram::runtime
