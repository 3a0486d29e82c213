// Common-subexpression elimination within each basic block (local value numbering): a pure
// instruction that computes what an earlier one computed from the same register values, and
// whose result is still in its register, becomes a `mov` of that register. The sources of a
// commutative instruction (flag C of the table) are compared in either order.
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace hologram::opt {

using namespace isa;

namespace {

/// Whether CSE may share this instruction's result: pure, one general-register result, and not
/// a move (sharing a constant or a copy gains nothing).
bool shareable(const Instruction &inst, const std::vector<RegAccess> &defs) {
  const OpcodeInfo &row = inst.info();
  if (!row.pure() || defs.size() != 1 || defs[0].pred) return false;
  return inst.op != Opcode::Mov && inst.op != Opcode::MovImm && inst.op != Opcode::Param;
}

/// Hashes a value-numbering key.
struct KeyHash {
  size_t operator()(const std::vector<uint64_t> &key) const {
    uint64_t h = 0x9e3779b97f4a7c15;
    for (uint64_t w : key) h = (h ^ w) * 0x100000001b3;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

} // namespace

bool eliminate_common_subexpressions(Kernel &k) {
  const Cfg cfg = build_cfg(k);
  bool changed = false;
  std::vector<RegAccess> defs;
  std::vector<uint32_t> version(kNumSlots, 0);
  struct Value {
    Reg reg;
    uint32_t version;
  };
  // The key of a shareable instruction: opcode, types and sub-operation, then per source its
  // kind and index and the version of the register it names (or its literal). Built in one
  // buffer; the table copies it only for an instruction it keeps.
  std::vector<uint64_t> key;
  for (const BasicBlock &block : cfg.blocks) {
    std::unordered_map<std::vector<uint64_t>, Value, KeyHash> available;
    for (uint32_t i = block.begin; i < block.end; ++i) {
      Instruction &inst = k.insts[i];
      instruction_defs(inst, defs);
      const bool share = shareable(inst, defs);
      if (share) {
        key = {static_cast<uint64_t>(inst.op), static_cast<uint64_t>(inst.type),
               static_cast<uint64_t>(inst.type2), inst.sub};
        for (size_t j = 1; j < inst.operands.size(); ++j) {
          const Operand &o = inst.operands[j];
          // A predicate source (sel's) is versioned like a register: a sel after its
          // predicate is written again computes something else.
          const bool reg = o.kind == OperandKind::Reg, pred = o.kind == OperandKind::Pred;
          const uint64_t v = pred                          ? version[kFirstSpecialReg + o.index]
                             : reg && !is_special(o.index) ? version[o.index]
                                                           : 0;
          key.push_back((uint64_t{static_cast<uint8_t>(o.kind)} << 32) | o.index);
          key.push_back(reg || pred ? v : o.imm);
        }
        // Sources 1 and 2 of a commutative instruction in a fixed order (pairs at 4 and 6).
        if (inst.info().commutative() && inst.operands.size() >= 3 &&
            std::pair(key[6], key[7]) < std::pair(key[4], key[5])) {
          std::swap(key[4], key[6]);
          std::swap(key[5], key[7]);
        }
      }
      const Reg dst = defs.empty() ? 0 : defs[0].reg;
      if (share) {
        auto it = available.find(key);
        if (it != available.end() && version[it->second.reg] == it->second.version &&
            it->second.reg != dst) {
          inst = detail::mov(inst, dst, it->second.reg, inst.type);
          changed = true;
        }
      }
      for (const RegAccess &d : defs) ++version[slot_of(d)];
      if (share && inst.op != Opcode::Mov) available[key] = {dst, version[dst]};
    }
  }
  return changed;
}

} // namespace hologram::opt
