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

/// A bounds-checked byte range an address resolves into. What it is called in an error
/// ("parameter %a", "class 5 of the boundary pool", ...) is spelled only for the message: an
/// access copies no string.
struct Region {
  enum class Kind : uint8_t { Param, Shared, Class, Boundary, Scratch };
  std::byte *data = nullptr;
  uint64_t size = 0;
  Kind kind = Kind::Param;
  uint64_t id = 0; ///< the parameter's index, the class, or the pool.alloc of a scratch pool
};

/// Element counts of whole-launch operations are computed in 128 bits and saturate, so an
/// extent built from huge sizes can never wrap around and pass a bounds check.
__extension__ typedef unsigned __int128 Count;
inline constexpr Count kCountMax = ~Count{0} >> 1;
inline Count sat_add(Count a, Count b) {
  return a > kCountMax - b ? kCountMax : a + b;
}
inline Count sat_mul(Count a, Count b) {
  return a != 0 && b > kCountMax / a ? kCountMax : a * b;
}
template <typename... T> Count prod(T... xs) {
  Count r = 1;
  ((r = sat_mul(r, static_cast<Count>(xs))), ...);
  return r;
}

/// Access to the arguments for whole-launch operations.
struct LaunchView {
  const isa::Kernel &kernel;
  std::span<const ArgValue> args;
  /// The buffer argument at parameter index p, as a typed span of n elements (checked).
  template <typename T> Status array(unsigned p, Count n, T *&out, const char *role) const {
    const auto &a = args[p];
    Count need = sat_mul(n, sizeof(T));
    if (need > a.memory.size())
      return {ErrorCode::OutOfBounds,
              std::string(role) + " %" + kernel.params[p].name + " needs " +
                  (need > Count{~uint64_t{0}} ? std::string("more than 2^64")
                                              : std::to_string(static_cast<uint64_t>(need))) +
                  " bytes, but the buffer holds " + std::to_string(a.memory.size())};
    out = reinterpret_cast<T *>(a.memory.data());
    return {};
  }
};

/// Executes one whole-launch instruction (map, map2, reduce_all and the library ops).
/// `reg` reads a source register's bits; `result` receives a register result (reduce_all, dot).
Status run_launch_op(const isa::Instruction &inst, const LaunchView &view,
                     const std::function<uint64_t(isa::Reg)> &reg, uint64_t &result);

} // namespace hologram::interp::detail
