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
#include <span>

namespace hologram::opt {

using namespace isa;

namespace {

using Live = std::bitset<kNumSlots>;

/// What every instruction of a kernel reads and writes, in two flat lists.
class Accesses {
public:
  explicit Accesses(const Kernel &k) {
    std::vector<RegAccess> one;
    for (const Instruction &inst : k.insts) {
      instruction_uses(inst, one);
      append(uses_, use_end_, one);
      instruction_defs(inst, one);
      append(defs_, def_end_, one);
    }
  }
  [[nodiscard]] std::span<const RegAccess> uses(size_t i) const {
    return slice(uses_, use_end_, i);
  }
  [[nodiscard]] std::span<const RegAccess> defs(size_t i) const {
    return slice(defs_, def_end_, i);
  }

private:
  static void append(std::vector<RegAccess> &all, std::vector<uint32_t> &ends,
                     const std::vector<RegAccess> &one) {
    all.insert(all.end(), one.begin(), one.end());
    ends.push_back(static_cast<uint32_t>(all.size()));
  }
  static std::span<const RegAccess> slice(const std::vector<RegAccess> &all,
                                          const std::vector<uint32_t> &ends, size_t i) {
    const uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return {all.data() + begin, ends[i] - begin};
  }
  std::vector<RegAccess> uses_, defs_;
  std::vector<uint32_t> use_end_, def_end_;
};

bool removable(const Instruction &inst, std::span<const RegAccess> defs, const Live &live) {
  if (!inst.info().pure() || defs.empty()) return false;
  for (const RegAccess &d : defs)
    if (live[slot_of(d)]) return false;
  return true;
}

/// Applies an instruction that reads `uses` and writes `defs` backwards to `live`.
void step_back(std::span<const RegAccess> defs, std::span<const RegAccess> uses, Live &live) {
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
  const Accesses access(k);
  // Walks block b backwards from its live-out; `dead` marks the removable instructions.
  std::vector<Live> live_in(nb);
  std::vector<std::vector<uint32_t>> succs(nb), preds(nb);
  for (uint32_t b = 0; b < nb; ++b) {
    succs[b] = cfg.flow_succs(b);
    for (uint32_t s : succs[b]) preds[s].push_back(b);
  }
  auto walk_back = [&](uint32_t b, std::vector<bool> *dead) {
    Live live;
    for (uint32_t s : succs[b]) live |= live_in[s];
    for (uint32_t i = cfg.blocks[b].end; i-- > cfg.blocks[b].begin;) {
      if (removable(k.insts[i], access.defs(i), live)) {
        if (dead) (*dead)[i] = true;
      } else {
        step_back(access.defs(i), access.uses(i), live);
      }
    }
    return live;
  };
  // Live-in of every block, to a fixpoint: sweeps in reverse order (which converges fastest),
  // walking a block again only when a successor's live-in changed since (a loop), so a
  // loop-free kernel is walked once.
  std::vector<bool> dirty(nb, true);
  for (bool again = true; again;) {
    again = false;
    for (uint32_t b = static_cast<uint32_t>(nb); b-- > 0;) {
      if (!dirty[b]) continue;
      dirty[b] = false;
      const Live live = walk_back(b, nullptr);
      if (live == live_in[b]) continue;
      live_in[b] = live;
      for (uint32_t p : preds[b])
        if (!dirty[p]) {
          dirty[p] = true;
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
