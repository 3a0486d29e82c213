// Which addresses step by a fixed number of bytes from one lane to the next: the contiguity
// analysis the SPMD code generators query to load and store consecutive lanes as one vector.
// A 64-bit integer register is lane-affine when, in every lane of a block, it holds
// `uniform + stride * id` for a lane id that consecutive SIMD lanes step through by one:
// `%gid` always, `%gid.x` and `%lane.x` while a run of lanes stays in one row of the block.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/isa/uniformity.h"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace hologram::opt {

enum class LaneId : uint8_t {
  Gid,   ///< consecutive across the whole block
  GidX,  ///< consecutive within a row of the block
  LaneX, ///< consecutive within a row of the block
};

/// `uniform + stride * id` per lane; stride 0 with no id is a uniform value.
struct LaneStep {
  std::optional<LaneId> id;
  int64_t stride = 0;
  friend bool operator==(const LaneStep &, const LaneStep &) = default;
};

class LaneAffinity {
public:
  /// Analyses a verified kernel, given its per-(register, type) uniformity.
  LaneAffinity(const isa::Kernel &k, const isa::Cfg &cfg, const isa::Uniformity &u);

  /// How the byte offset `index * scale + disp` of `a` steps between lanes (nullopt when no
  /// fixed step is known). The base itself is not considered: the caller knows whether it is
  /// the same for every lane.
  [[nodiscard]] std::optional<LaneStep> offset_step(const isa::Address &a) const;
  /// The step of register `r` read as `t` (a special register included).
  [[nodiscard]] std::optional<LaneStep> step_of(isa::Reg r, isa::Type t) const;
  /// Whether `a` addresses a buffer parameter that nothing in the kernel reads: no instruction
  /// that reads memory does so through that parameter or through a raw address. Stores there
  /// may bypass the caches (a buffer bound to two parameters is not seen; it costs speed, not
  /// correctness).
  [[nodiscard]] bool write_only(const isa::Address &a) const;

  struct Form; // the lattice value of one (register, type), in lane_affinity.cpp

private:
  std::map<isa::TypedSlot, std::optional<LaneStep>> steps_;
  std::vector<bool> params_read_; ///< per parameter: read through an address
  bool raw_reads_ = false;        ///< something reads through a register-held address
};

} // namespace hologram::opt
