// Device objects a thread uses for one operation at a time (a Vulkan command buffer with its
// fence, an OpenCL command queue): taken from the idle ones or made, and given back after, so
// threads issuing at once each have their own and none is made twice.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

namespace hologram::runtime {

template <typename T> class IdleList {
public:
  /// An idle object, or `make()` when none is.
  template <typename Make> T take(Make &&make) {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        T t = std::move(idle_.back());
        idle_.pop_back();
        return t;
      }
    }
    return make();
  }
  void give(T t) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(t));
  }
  /// The idle objects, to release them (when no thread holds one).
  std::vector<T> &idle() { return idle_; }

  /// Takes one for the lifetime of the lease, and gives it back.
  class Lease {
  public:
    template <typename Make>
    Lease(IdleList &list, Make &&make) : list_(list), t_(list.take(make)) {}
    ~Lease() { list_.give(t_); }
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    const T &operator*() const { return t_; }

  private:
    IdleList &list_;
    T t_;
  };

private:
  std::mutex mutex_;
  std::vector<T> idle_;
};

} // namespace hologram::runtime
