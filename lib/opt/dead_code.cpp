// Dead-code elimination: a pure instruction none of whose results is read on any path before
// being written again is removed. Liveness is a backward dataflow over the interprocedural
// CFG (a call flows into its callee, a `ret` to every return site), per register and predicate
// whatever the type read, so it is exact for the interpreter's 64-bit registers.
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <bitset>

namespace hologram::opt {

using namespace isa;

namespace {

using Live = std::bitset<detail::kSlots>;

bool removable(const Instruction &inst, const std::vector<RegAccess> &defs, const Live &live) {
  if (!inst.info().pure() || defs.empty()) return false;
  for (const RegAccess &d : defs)
    if (live[detail::slot_of(d.pred, d.reg)]) return false;
  return true;
}

/// Applies an instruction that reads `uses` and writes `defs` backwards to `live`.
void step_back(const std::vector<RegAccess> &defs, const std::vector<RegAccess> &uses, Live &live) {
  for (const RegAccess &d : defs)
    if (d.pred || !is_special(d.reg)) live.reset(detail::slot_of(d.pred, d.reg));
  for (const RegAccess &u : uses)
    if (u.pred || !is_special(u.reg)) live.set(detail::slot_of(u.pred, u.reg));
}

} // namespace

bool eliminate_dead_code(Kernel &k) {
  const Cfg cfg = build_cfg(k);
  const size_t nb = cfg.blocks.size();
  std::vector<RegAccess> uses, defs;
  // Live-in of every block, to a fixpoint (blocks in reverse order converge fastest).
  std::vector<Live> live_in(nb);
  std::vector<std::vector<uint32_t>> succs(nb);
  for (uint32_t b = 0; b < nb; ++b) succs[b] = cfg.flow_succs(b);
  auto live_out = [&](uint32_t b) {
    Live out;
    for (uint32_t s : succs[b]) out |= live_in[s];
    return out;
  };
  for (bool again = true; again;) {
    again = false;
    for (uint32_t b = static_cast<uint32_t>(nb); b-- > 0;) {
      Live live = live_out(b);
      for (uint32_t i = cfg.blocks[b].end; i-- > cfg.blocks[b].begin;) {
        instruction_uses(k.insts[i], uses);
        instruction_defs(k.insts[i], defs);
        if (!removable(k.insts[i], defs, live)) step_back(defs, uses, live);
      }
      if (live != live_in[b]) {
        live_in[b] = live;
        again = true;
      }
    }
  }
  std::vector<bool> dead(k.insts.size(), false);
  bool changed = false;
  for (uint32_t b = 0; b < nb; ++b) {
    Live live = live_out(b);
    for (uint32_t i = cfg.blocks[b].end; i-- > cfg.blocks[b].begin;) {
      instruction_uses(k.insts[i], uses);
      instruction_defs(k.insts[i], defs);
      if (removable(k.insts[i], defs, live)) {
        dead[i] = true;
        changed = true;
      } else {
        step_back(defs, uses, live);
      }
    }
  }
  if (changed) detail::erase_instructions(k, dead);
  return changed;
}

} // namespace hologram::opt
