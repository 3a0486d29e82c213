// The interpreter's machine state: memory regions with bounds checking, lanes, and the
// services the whole-launch (library) operations use. Internal to lib/interp.
#pragma once

#include "hologram/interp/interpreter.h"
#include "hologram/isa/program.h"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace hologram::interp::detail {

/// A bounds-checked byte range an address resolves into.
struct Region {
  std::byte *data = nullptr;
  uint64_t size = 0;
  std::string name; ///< "parameter %a", "shared memory", "class 5 of the boundary pool", ...
};

/// Access to the arguments for whole-launch operations.
struct LaunchView {
  const isa::Kernel &kernel;
  std::span<const ArgValue> args;
  /// The buffer argument at parameter index p, as a typed span of n elements (checked).
  template <typename T> Status array(unsigned p, uint64_t n, T *&out, const char *role) const {
    const auto &a = args[p];
    uint64_t need = n * sizeof(T);
    if (n != 0 && need / n != sizeof(T)) return {ErrorCode::OutOfBounds, "size overflow"};
    if (need > a.memory.size())
      return {ErrorCode::OutOfBounds, "kernel '" + kernel.name + "': " + role + " %" +
                                          kernel.params[p].name + " needs " + std::to_string(need) +
                                          " bytes, but the buffer holds " +
                                          std::to_string(a.memory.size())};
    out = reinterpret_cast<T *>(a.memory.data());
    return {};
  }
};

/// Executes one whole-launch instruction (map, map2, reduce_all and the library ops).
/// `reg` reads a source register's bits; `result` receives a register result (reduce_all, dot).
Status run_launch_op(const isa::Instruction &inst, const LaunchView &view,
                     const std::function<uint64_t(isa::Reg)> &reg, uint64_t &result);

} // namespace hologram::interp::detail
