// Verifier rule family: uniformity. A barrier in a block that a lane-varying branch controls
// (isa::analyse_uniformity, per program point) is rejected, since not every lane of the block
// would reach it.
#include "hologram/isa/uniformity.h"
#include "verify_context.h"

namespace hologram::isa::detail {

void verify_uniformity(VerifyContext &cx) {
  const Kernel &k = cx.kernel;
  bool has_barrier = false;
  for (const auto &inst : k.insts) has_barrier |= (inst.info().flags & kFlagBarrier) != 0;
  if (!has_barrier) return;
  const Uniformity u = analyse_uniformity(k, cx.cfg, UniformityPrecision::PerPoint);
  for (uint32_t b = 0; b < cx.cfg.blocks.size(); ++b) {
    if (u.controlled_by[b] == kNoBlock) continue;
    for (uint32_t i = cx.cfg.blocks[b].begin; i < cx.cfg.blocks[b].end; ++i) {
      if ((k.insts[i].info().flags & kFlagBarrier) == 0) continue;
      const Instruction &branch = k.insts[cx.cfg.blocks[u.controlled_by[b]].end - 1];
      cx.error_at(i, "bar.sync is under lane-varying control flow",
                  {"the branch at line " + std::to_string(branch.loc.line) + " ('" +
                       print_instruction(k, branch) +
                       "') depends on a value that differs between the lanes of a block",
                   "every lane of the block must reach the barrier"});
    }
  }
}

} // namespace hologram::isa::detail
