// Loop-invariant code motion: a pure instruction in a natural loop whose sources no
// instruction of the loop writes moves in front of the loop header, so it runs once per entry
// into the loop instead of once per trip. Uniform loop bounds and strides (a parameter times
// a constant, a conversion of the trip count) are the usual case; the move keeps a value that
// differs between lanes just as it was.
//
// An instruction moves when:
//   - its result's register is written nowhere else in the loop, and every read of it in the
//     loop comes after it (in its block, or in blocks it dominates), so no trip reads an
//     older value;
//   - its block dominates every latch and every block that leaves the loop, so it ran on
//     every path through the loop before: the value after the loop is the same, and a
//     division is not run on a path that did not run it;
//   - the header is entered from outside the loop only by falling through from the
//     instruction before it, where the moved code goes.
// Innermost loops come first; the pipeline's next round moves what became invariant in the
// loop around them.
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <algorithm>

namespace hologram::opt {

using namespace isa;

namespace {

/// The instructions of `loop` that can move in front of it, in an order where each comes
/// after the moved instructions it reads.
std::vector<uint32_t> invariants(const Kernel &k, const Cfg &cfg, const NaturalLoop &loop) {
  const auto idom = dominators(cfg, loop.function_entry);
  std::vector<uint32_t> writes(kNumSlots, 0); // definitions per slot inside the loop
  std::vector<RegAccess> uses, defs;
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
    if (!loop.body[b]) continue;
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      instruction_defs(k.insts[i], defs);
      for (const auto &d : defs)
        if (d.pred || !is_special(d.reg)) ++writes[slot_of(d)];
    }
  }
  // Blocks the moved instruction must dominate: latches and blocks with a way out.
  std::vector<uint32_t> must;
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
    if (!loop.body[b]) continue;
    bool leaves = cfg.blocks[b].ends_in_exit || cfg.blocks[b].ends_in_ret;
    for (uint32_t s : cfg.blocks[b].succs) leaves = leaves || !loop.body[s];
    if (leaves || std::find(loop.latches.begin(), loop.latches.end(), b) != loop.latches.end())
      must.push_back(b);
  }
  // Every read of slot `s` inside the loop comes after instruction `at` (in block `ab`).
  auto reads_follow = [&](unsigned s, uint32_t ab, uint32_t at) {
    for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
      if (!loop.body[b]) continue;
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
        instruction_uses(k.insts[i], uses);
        for (const auto &u : uses) {
          if ((!u.pred && is_special(u.reg)) || slot_of(u) != s) continue;
          const bool after = b == ab ? i > at : dominates(idom, ab, b);
          if (!after) return false;
        }
      }
    }
    return true;
  };
  std::vector<uint32_t> moved;
  std::vector<bool> taken(k.insts.size(), false);
  for (bool grew = true; grew;) {
    grew = false;
    for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
      if (!loop.body[b]) continue;
      if (!std::all_of(must.begin(), must.end(), [&](uint32_t m) { return dominates(idom, b, m); }))
        continue;
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
        const Instruction &inst = k.insts[i];
        if (taken[i] || !inst.info().pure() || inst.guard.present) continue;
        instruction_defs(inst, defs);
        if (defs.size() != 1 || (!defs[0].pred && is_special(defs[0].reg))) continue;
        const unsigned d = slot_of(defs[0]);
        if (writes[d] != 1 || !reads_follow(d, b, i)) continue;
        instruction_uses(inst, uses);
        const bool sources_invariant = std::all_of(uses.begin(), uses.end(), [&](const auto &u) {
          return (!u.pred && is_special(u.reg)) || writes[slot_of(u)] == 0;
        });
        if (!sources_invariant) continue;
        taken[i] = true;
        moved.push_back(i);
        writes[d] = 0; // its readers may move after it
        grew = true;
      }
    }
  }
  return moved;
}

} // namespace

bool hoist_loop_invariants(Kernel &k) {
  bool changed = false;
  // Each move shifts instructions, so the loops are found again after one.
  for (size_t guard = 0; guard < k.insts.size(); ++guard) {
    const Cfg cfg = build_cfg(k);
    bool moved_any = false;
    for (const NaturalLoop &loop : natural_loops(cfg)) {
      if (!detail::enters_by_falling_through(k, cfg, loop)) continue;
      auto moved = invariants(k, cfg, loop);
      if (moved.empty()) continue;
      detail::move_before(k, moved, cfg.blocks[loop.header].begin);
      moved_any = changed = true;
      break;
    }
    if (!moved_any) break;
  }
  return changed;
}

} // namespace hologram::opt
