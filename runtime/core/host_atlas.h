// The Atlas state (SPEC §4) kept in host memory behind one mutex, with the Backend accessors:
// the base of every backend whose kernels read and write it on the host (the CPU backend;
// the Vulkan backend, whose kernels do not touch it yet).
#pragma once

#include "handle_table.h"
#include "hologram/interp/interpreter.h"
#include "hologram/runtime/backend.h"

#include <cstring>
#include <mutex>

namespace hologram::runtime {

class HostAtlasBackend : public Backend {
public:
  std::array<double, atlas::kNumClasses> resonance() override {
    std::lock_guard lock(atlas_mutex_);
    return atlas_.resonance;
  }
  void set_resonance(const std::array<double, atlas::kNumClasses> &v) override {
    std::lock_guard lock(atlas_mutex_);
    atlas_.resonance = v;
  }
  uint32_t phase() override {
    std::lock_guard lock(atlas_mutex_);
    return atlas_.phase;
  }
  void set_phase(uint32_t p) override {
    std::lock_guard lock(atlas_mutex_);
    atlas_.phase = p % atlas::kPhaseModulus;
  }
  void copy_to_boundary(uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(atlas_mutex_);
    check_range("the boundary pool", 0, atlas::kBoundaryPoolBytes, offset, data.size(), "a copy");
    if (!data.empty())
      std::memcpy(atlas_state().boundary.data() + offset, data.data(), data.size());
  }
  void copy_from_boundary(uint64_t offset, std::span<std::byte> out) override {
    std::lock_guard lock(atlas_mutex_);
    check_range("the boundary pool", 0, atlas::kBoundaryPoolBytes, offset, out.size(), "a copy");
    if (out.empty()) return;
    if (atlas_.boundary.empty()) // never written: zeros, without making the pool
      std::memset(out.data(), 0, out.size());
    else
      std::memcpy(out.data(), atlas_.boundary.data() + offset, out.size());
  }

protected:
  /// The Atlas state, its boundary pool (1.18 MB) made at first use: a backend whose kernels
  /// never touch the pool pays neither the memory nor the page faults of zeroing it. Called
  /// with atlas_mutex_ held.
  interp::AtlasState &atlas_state() {
    if (atlas_.boundary.empty()) atlas_.boundary.resize(atlas::kBoundaryPoolBytes);
    return atlas_;
  }

  std::mutex atlas_mutex_; ///< held by launches of kernels that use the Atlas state

private:
  interp::AtlasState atlas_{.boundary = {}};
};

} // namespace hologram::runtime
