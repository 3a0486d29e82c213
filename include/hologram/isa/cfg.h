// The control-flow graph of a kernel: basic blocks, intraprocedural edges (a call falls
// through), call and return edges, functions (the kernel entry and every call target), and
// dominators. The verifier, the optimiser and the code generators share it.
#pragma once

#include "hologram/isa/program.h"

#include <cstdint>
#include <vector>

namespace hologram::isa {

inline constexpr uint32_t kNoBlock = 0xffffffff;

struct BasicBlock {
  uint32_t begin = 0, end = 0;     ///< instruction range [begin, end)
  std::vector<uint32_t> succs;     ///< intraprocedural successors (a call falls through)
  std::vector<uint32_t> preds;     ///< intraprocedural predecessors
  uint32_t call_target = kNoBlock; ///< for a block ending in `call`: the callee's entry block
  bool ends_in_ret = false;
  bool ends_in_exit = false; ///< `exit`, or falling off the end of the kernel
};

struct Cfg {
  std::vector<BasicBlock> blocks;
  std::vector<uint32_t> block_of;         ///< instruction index -> block index
  std::vector<uint32_t> function_entries; ///< entry blocks: [0] is the kernel, then callees
  /// Successors in the interprocedural view used by dataflow: a call goes to its callee,
  /// a `ret` to the instruction after every call site.
  [[nodiscard]] std::vector<uint32_t> flow_succs(uint32_t b) const;
  /// Blocks that follow a call (the return sites).
  std::vector<uint32_t> return_sites;
};

/// Builds the CFG; labels must be defined (the verifier checks that first).
Cfg build_cfg(const Kernel &k);

/// Blocks reachable from `entry` over intraprocedural edges, in reverse post-order.
std::vector<uint32_t> reverse_post_order(const Cfg &cfg, uint32_t entry);

/// Immediate dominators over intraprocedural edges from `entry` (kNoBlock where unreachable;
/// idom[entry] == entry).
std::vector<uint32_t> dominators(const Cfg &cfg, uint32_t entry);
/// Immediate post-dominators within `region` (blocks reachable from one function entry), with
/// a virtual exit at index blocks.size() that every block without successors flows to.
std::vector<uint32_t> post_dominators(const Cfg &cfg, const std::vector<uint32_t> &region);
/// Whether `a` dominates `b` in the tree `idom` (every block dominates itself).
bool dominates(const std::vector<uint32_t> &idom, uint32_t a, uint32_t b);

/// A natural loop: a header that dominates the sources of its back edges (the latches), and
/// the blocks that reach a latch without passing the header. Loops sharing a header are one.
struct NaturalLoop {
  uint32_t header = 0;
  std::vector<uint32_t> latches;
  std::vector<bool> body;      ///< per block, the header included
  uint32_t function_entry = 0; ///< the entry of the function the loop is in
  [[nodiscard]] size_t size() const;
};

/// The natural loops of every function, innermost (fewest blocks) first. Structurisers,
/// loop-invariant code motion and the code generators' block orders share this one answer.
std::vector<NaturalLoop> natural_loops(const Cfg &cfg);

} // namespace hologram::isa
