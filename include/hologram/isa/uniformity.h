// Uniformity and divergence (Karrenberg & Hack): which values differ between the lanes of a
// block, and which blocks run with only some of its lanes. One implementation, two precisions:
// the verifier asks per program point (a register reused for a uniform value after holding a
// lane-varying one is uniform again), the SPMD code generators per (register, type), since
// they keep each register of a type either scalar or vector for the whole kernel.
#pragma once

#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"

#include <cstdint>
#include <set>
#include <vector>

namespace hologram::isa {

/// A general register with one type, or a predicate (type Pred).
struct TypedSlot {
  bool pred = false;
  Reg reg = 0;
  Type type = Type::None;
  friend auto operator<=>(const TypedSlot &, const TypedSlot &) = default;
};

enum class UniformityPrecision {
  PerPoint,    ///< a value is varying where a lane-varying definition of it reaches
  PerRegister, ///< a (register, type) is varying everywhere if any definition of it is
};

struct Uniformity {
  UniformityPrecision precision = UniformityPrecision::PerPoint;
  /// Per CFG block: a block ending in a lane-varying branch between which and its
  /// reconvergence point the block lies, so that some lanes of the launch block may not reach
  /// it (kNoBlock: every lane does). Lanes that leave through `exit` count as not reaching it.
  std::vector<uint32_t> controlled_by;
  /// Per CFG block: runs with only some of the lanes that are still running. A branch with an
  /// exit on one side splits nothing here: the lanes that take it are gone.
  std::vector<uint8_t> divergent;
  /// PerPoint: per CFG block, which slots (slot_of) hold a lane-varying value on entry.
  std::vector<std::vector<uint8_t>> varying_in;
  /// Every (register, type) the kernel writes, and those some lane-varying definition writes.
  std::set<TypedSlot> written, varying;
  /// A kernel with `call`: lanes keep their own return stacks, so the code generators treat
  /// every block as divergent (the analysis itself follows calls and returns).
  bool has_calls = false;

  /// PerRegister: whether a read of `u` may see different values in different lanes
  /// (special registers by the SPEC's rule).
  [[nodiscard]] bool varying_read(const RegAccess &u) const;
};

/// Analyses a verified (or verifying: labels resolved, CFG built) kernel.
Uniformity analyse_uniformity(const Kernel &k, const Cfg &cfg, UniformityPrecision precision);

} // namespace hologram::isa
