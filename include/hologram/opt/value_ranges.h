// Value ranges: the unsigned interval each integer (register, type) slot of a kernel stays in,
// from the limits every backend puts on a launch and the instructions that define the slot.
// A shared analysis the code generators query where a value's width matters: whether an
// index or lane id fits in 32 bits, whether a lane-affine value can wrap across a chunk.
//
// Flow-insensitive, like the lane analysis: a slot's range is the union of what each of its
// definitions can produce, iterated to a fixpoint (a slot that keeps growing, such as a loop
// counter, widens to its whole type). Ranges are of a slot's bits as an unsigned integer;
// definitions of unsigned slots are modelled, a signed slot's bits may be anything (a special
// register has its range whatever integer type of its width reads it).
#pragma once

#include "hologram/isa/program.h"
#include "hologram/isa/uniformity.h"

#include <cstdint>
#include <map>

namespace hologram::opt {

/// What every backend guarantees of a launch (the runtime refuses a launch beyond them).
struct LaunchLimits {
  uint64_t block_lanes = uint64_t{1} << 30;        ///< lanes per block, at most
  uint64_t launch_lanes = (uint64_t{1} << 62) - 1; ///< lanes per launch, at most
};

/// [lo, hi] as unsigned integers of a slot's width, every value a multiple of 2^zeros.
struct ValueRange {
  uint64_t lo = 0, hi = ~uint64_t{0};
  uint32_t zeros = 0; ///< low bits known to be zero, at most the slot's width
  friend bool operator==(const ValueRange &, const ValueRange &) = default;
};

class ValueRanges {
public:
  /// Analyses a verified kernel.
  explicit ValueRanges(const isa::Kernel &k, const LaunchLimits &limits = {});

  /// The range of register `r` read as `t` (a special register included): the whole range
  /// of t for what the analysis does not model.
  [[nodiscard]] ValueRange of(isa::Reg r, isa::Type t) const;
  /// Whether every value of `r` read as `t` plus `k` stays below 2^(width - 1) (so neither an
  /// unsigned nor a signed addition of k wraps).
  [[nodiscard]] bool adds_without_wrap(isa::Reg r, isa::Type t, uint64_t k) const;
  /// Whether every value of `r` read as `t` fits in 32 bits.
  [[nodiscard]] bool fits_u32(isa::Reg r, isa::Type t) const;
  /// Whether every value of `r` read as `t`, times `scale`, is a multiple of `align` (a power
  /// of two): an address `[base + r*scale]` keeps the base's alignment up to `align`.
  [[nodiscard]] bool scaled_multiple_of(isa::Reg r, isa::Type t, uint64_t scale,
                                        uint64_t align) const;

private:
  std::map<isa::TypedSlot, ValueRange> ranges_;
  LaunchLimits limits_;
};

/// The range of a special register under `limits`.
ValueRange special_range(isa::Special s, const LaunchLimits &limits);

} // namespace hologram::opt
