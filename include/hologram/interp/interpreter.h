// The reference interpreter: executes a verified Atlas ISA kernel over a launch with the exact
// semantics of SPEC §3.4 and §4. Lanes of a block are interleaved one instruction at a time
// (so barriers are real and unsynchronised races are observable); blocks run in order, which
// keeps every result deterministic. Every memory access is bounds-checked.
#pragma once

#include "hologram/isa/atlas.h"
#include "hologram/isa/launch.h"
#include "hologram/isa/program.h"
#include "hologram/support/status.h"

#include <array>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace hologram::interp {

/// One kernel argument: a buffer or pool (memory owned by the caller) or a scalar (bits).
struct ArgValue {
  enum class Kind { Buffer, Pool, Scalar } kind = Kind::Scalar;
  std::span<std::byte> memory;
  uint64_t bits = 0;

  static ArgValue buffer(std::span<std::byte> m) { return {Kind::Buffer, m, 0}; }
  static ArgValue pool(std::span<std::byte> m) { return {Kind::Pool, m, 0}; }
  static ArgValue scalar(uint64_t b) { return {Kind::Scalar, {}, b}; }
  template <typename T> static ArgValue buffer_of(std::vector<T> &v) {
    return buffer(std::as_writable_bytes(std::span<T>(v)));
  }
};

/// The Atlas state of one backend instance, kept across launches (SPEC §4).
struct AtlasState {
  std::array<double, atlas::kNumClasses> resonance{};
  uint32_t phase = 0;
  std::vector<std::byte> boundary = std::vector<std::byte>(atlas::kBoundaryPoolBytes);
};

struct InterpOptions {
  bool check_div = false;  ///< -fcheck-div: integer division by zero fails the launch
  uint64_t max_steps = 0;  ///< instruction budget for the whole launch; 0 = unlimited
  bool verify = true;      ///< verify the kernel before running it
  std::string source_name; ///< file name for diagnostics
  /// Runs each whole-launch instruction instead of the reference implementation (a device
  /// backend running a whole-launch kernel's scalar part on the host): `pc` is its index in
  /// the kernel, `reg` reads a source register's bits, `result` receives the value of
  /// reduce_all and dot.
  std::function<Status(uint32_t pc, const isa::Instruction &inst,
                       const std::function<uint64_t(isa::Reg)> &reg, uint64_t &result)>
      launch_op;
  /// Performs ld/st through buffer parameters instead of touching `ArgValue::memory` (the same
  /// host run, where buffers live in device memory): `pc` the instruction's index in the
  /// kernel, `offset` in bytes, `bits` the value.
  std::function<Status(uint32_t pc, bool store, unsigned param, uint64_t offset, unsigned size,
                       uint64_t &bits)>
      param_memory;
};

/// Runs `kernel` over `launch` with `args` (in parameter order). Returns an error naming the
/// kernel, lane, instruction, parameter, offset and size on a fault.
Status run_kernel(const isa::Kernel &kernel, const LaunchConfig &launch,
                  std::span<const ArgValue> args, AtlasState &atlas,
                  const InterpOptions &opts = {});

/// Runs one whole-launch instruction (map, map2, reduce_all, the library ops of SPEC §3.8)
/// of `kernel` with the reference implementation: `reg` reads a source register's bits and
/// `result` receives the value of reduce_all and dot. Compiled backends use it where they
/// have no faster schedule of their own.
Status run_launch_instruction(const isa::Kernel &kernel, const isa::Instruction &inst,
                              std::span<const ArgValue> args,
                              const std::function<uint64_t(isa::Reg)> &reg, uint64_t &result);

} // namespace hologram::interp
