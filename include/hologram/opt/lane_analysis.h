// What a SPMD code generator needs to know about a kernel before it maps lanes onto SIMD
// lanes: its blocks split at barriers, a block order in which lanes reconverge (every loop
// contiguous, every block after its forward predecessors), and which registers and branches
// are uniform across the lanes of a block (Karrenberg & Hack's divergence analysis, over
// (register, type) slots).
#pragma once

#include "hologram/isa/cfg.h"
#include "hologram/isa/program.h"
#include "hologram/isa/uniformity.h"

#include <cstdint>
#include <set>
#include <vector>

namespace hologram::opt {

inline constexpr uint32_t kExitBlock = 0xffffffff;

/// A straight run of instructions [begin, end). A block ends at a label, after a control
/// instruction, and after `bar.sync` (so a barrier always ends its block).
struct LaneBlock {
  uint32_t begin = 0, end = 0;
  /// Static successors: for a conditional `bra`/`loop` {target, fallthrough}; for a call
  /// {callee}; kExitBlock for the end of the kernel. `ret` has none (its targets are dynamic).
  std::vector<uint32_t> succs;
  uint32_t fallthrough = kExitBlock; ///< the block after `end` (return site of a call)
};

/// A register slot: a general register with one type, or a predicate.
using Slot = isa::TypedSlot;

struct LaneAnalysis {
  std::vector<LaneBlock> blocks;  ///< in instruction order; blocks[0] is the entry
  std::vector<uint32_t> block_of; ///< instruction -> block (n+1 entries, [n] = kExitBlock)
  std::vector<uint32_t> order;    ///< scheduling order (block indices); order[0] == 0
  std::vector<uint32_t> rank;     ///< block -> position in `order`
  std::vector<bool> divergent;    ///< block may run with only some of the live lanes
  std::set<Slot> slots;           ///< every slot the kernel writes
  std::set<Slot> varying;         ///< slots whose value may differ between lanes
  bool has_calls = false;
  bool has_barriers = false;
  isa::Cfg cfg;
  /// Per (register, type), as the code generators keep registers; with calls every block is
  /// divergent and every slot varying (lanes keep their own return stacks).
  isa::Uniformity uniformity;

  [[nodiscard]] bool is_varying(const Slot &s) const { return varying.count(s) != 0; }
  /// Whether the register read `reg` of `type` (or predicate) is uniform.
  [[nodiscard]] bool uniform_read(bool pred, isa::Reg reg, isa::Type type) const;
  /// Whether a lane that enters `block` finishes at once (it starts with `exit`, or it is the
  /// end of the kernel).
  [[nodiscard]] bool exits_at(const isa::Kernel &k, uint32_t block) const;
  /// The label operand's target block (kExitBlock when the label is the end of the kernel).
  [[nodiscard]] uint32_t target_block(const isa::Kernel &k, const isa::Operand &label) const;
};

/// Analyses a verified kernel.
LaneAnalysis analyse_lanes(const isa::Kernel &kernel);

} // namespace hologram::opt
