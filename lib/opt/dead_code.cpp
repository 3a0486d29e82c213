// Dead-code elimination: a pure instruction none of whose results is read on any path before
// being written again is removed. Liveness is a backward dataflow over the interprocedural
// CFG (a call flows into its callee, a `ret` to every return site), per register and predicate
// whatever the type read, so it is exact for the interpreter's 64-bit registers.
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <algorithm>
#include <bitset>

namespace hologram::opt {

using namespace isa;

namespace {

using Live = std::bitset<kNumSlots>;

bool removable(const Instruction &inst, const std::vector<RegAccess> &defs, const Live &live) {
  if (!inst.info().pure() || defs.empty()) return false;
  for (const RegAccess &d : defs)
    if (live[slot_of(d)]) return false;
  return true;
}

/// Applies an instruction that reads `uses` and writes `defs` backwards to `live`.
void step_back(const std::vector<RegAccess> &defs, const std::vector<RegAccess> &uses, Live &live) {
  for (const RegAccess &d : defs)
    if (d.pred || !is_special(d.reg)) live.reset(slot_of(d));
  for (const RegAccess &u : uses)
    if (u.pred || !is_special(u.reg)) live.set(slot_of(u));
}

} // namespace

bool eliminate_dead_code(Kernel &k) {
  const Cfg cfg = build_cfg(k);
  const size_t nb = cfg.blocks.size(), n = k.insts.size();
  // What each instruction reads and writes, found once for the fixpoint and the sweep.
  std::vector<std::vector<RegAccess>> uses(n), defs(n);
  for (size_t i = 0; i < n; ++i) {
    instruction_uses(k.insts[i], uses[i]);
    instruction_defs(k.insts[i], defs[i]);
  }
  // Walks block b backwards from its live-out; `dead` marks the removable instructions.
  std::vector<Live> live_in(nb);
  std::vector<std::vector<uint32_t>> succs(nb);
  for (uint32_t b = 0; b < nb; ++b) succs[b] = cfg.flow_succs(b);
  auto walk_back = [&](uint32_t b, std::vector<bool> *dead) {
    Live live;
    for (uint32_t s : succs[b]) live |= live_in[s];
    for (uint32_t i = cfg.blocks[b].end; i-- > cfg.blocks[b].begin;) {
      if (removable(k.insts[i], defs[i], live)) {
        if (dead) (*dead)[i] = true;
      } else {
        step_back(defs[i], uses[i], live);
      }
    }
    return live;
  };
  // Live-in of every block, to a fixpoint (blocks in reverse order converge fastest).
  for (bool again = true; again;) {
    again = false;
    for (uint32_t b = static_cast<uint32_t>(nb); b-- > 0;) {
      const Live live = walk_back(b, nullptr);
      if (live != live_in[b]) {
        live_in[b] = live;
        again = true;
      }
    }
  }
  std::vector<bool> dead(n, false);
  for (uint32_t b = 0; b < nb; ++b) walk_back(b, &dead);
  const bool changed = std::find(dead.begin(), dead.end(), true) != dead.end();
  if (changed) detail::erase_instructions(k, dead);
  return changed;
}

} // namespace hologram::opt
