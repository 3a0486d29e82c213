// Element-wise fusion: pure instructions between the element-wise whole-launch operations of a
// block (reading a scalar parameter, converting a count) move in front of the first of them,
// so that the operations follow each other and form one element-wise chain
// (isa::elementwise_chains), which the back ends run fused: each range of the arrays through
// every operation while it is in cache. An instruction moves only when none of the operations
// it passes reads a register it writes; whole-launch operations write no register (a reducing
// one, which may end a chain, is never passed), so what it reads is unchanged.
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/isa/elementwise.h"
#include "hologram/opt/pass_manager.h"

#include <bitset>
#include <iterator>

namespace hologram::opt {

using namespace isa;

namespace {

using Slots = std::bitset<kNumSlots>;

void add_uses(const Instruction &inst, Slots &read) {
  std::vector<RegAccess> uses;
  instruction_uses(inst, uses);
  for (const RegAccess &u : uses)
    if (u.pred || !is_special(u.reg)) read.set(slot_of(u));
}

bool writes_any(const Instruction &inst, const Slots &read) {
  std::vector<RegAccess> defs;
  instruction_defs(inst, defs);
  for (const RegAccess &d : defs)
    if (read[slot_of(d)]) return true;
  return false;
}

/// The pure instructions of block [begin, end) that, moved in front of the element-wise
/// operation at `start`, join it with the operations after them into one chain; empty when
/// none do.
std::vector<uint32_t> movable_between(const Kernel &k, uint32_t start, uint32_t end) {
  std::vector<uint32_t> committed, pending;
  Slots read; // the registers the chain's operations so far read
  add_uses(k.insts[start], read);
  uint32_t last = start;
  for (uint32_t j = start + 1; j < end; ++j) {
    const Instruction &inst = k.insts[j];
    if (continues_chain(k.insts[last], inst)) {
      committed.insert(committed.end(), pending.begin(), pending.end());
      pending.clear();
      last = j;
      add_uses(inst, read);
      if (inst.info().reduces()) break; // the chain ends with it
      continue;
    }
    if (!inst.info().pure() || writes_any(inst, read)) break;
    pending.push_back(j);
  }
  return committed;
}

/// Puts `moved` (ascending indices after `start` in its block) in front of instruction `start`,
/// in their order: the block keeps its first index, so a label of it names the first moved
/// one and a branch to the block still runs them.
void move_in_front(Kernel &k, const std::vector<uint32_t> &moved, uint32_t start) {
  std::vector<Instruction> front, rest;
  size_t next = 0;
  for (uint32_t i = start; i <= moved.back(); ++i) {
    const bool moves = next < moved.size() && moved[next] == i;
    next += moves ? 1 : 0;
    (moves ? front : rest).push_back(std::move(k.insts[i]));
  }
  front.insert(front.end(), std::make_move_iterator(rest.begin()),
               std::make_move_iterator(rest.end()));
  std::move(front.begin(), front.end(), k.insts.begin() + start);
}

} // namespace

bool gather_elementwise_chains(Kernel &k) {
  if (!k.is_launch_level()) return false;
  bool changed = false;
  // Moves stay inside a block and keep its first index, so the blocks stay as they are.
  const Cfg cfg = build_cfg(k);
  for (const BasicBlock &bb : cfg.blocks)
    for (uint32_t i = bb.begin; i < bb.end; ++i) {
      if (!k.insts[i].info().elementwise()) continue;
      const std::vector<uint32_t> moved = movable_between(k, i, bb.end);
      if (moved.empty()) continue;
      move_in_front(k, moved, i);
      changed = true;
      i += static_cast<uint32_t>(moved.size()); // the operation's new place
    }
  return changed;
}

} // namespace hologram::opt
