// Copy propagation within each basic block: after `mov.T rA, rB`, a read of rA as T reads rB
// instead, until either register is written again. Dead-code elimination then removes the
// copies nothing reads.
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <array>
#include <optional>

namespace hologram::opt {

using namespace isa;

namespace {

struct Copy {
  Reg src;
  Type type;
};
using Copies = std::array<std::optional<Copy>, kFirstSpecialReg>;

/// Reads rB for a read of r as `t` when r holds a copy of rB of that type.
bool rewrite(Reg &r, Type t, const Copies &copies) {
  if (is_special(r) || !copies[r] || copies[r]->type != t) return false;
  r = copies[r]->src;
  return true;
}

} // namespace

bool propagate_copies(Kernel &k) {
  const Cfg cfg = build_cfg(k);
  bool changed = false;
  std::vector<RegAccess> defs;
  for (const BasicBlock &block : cfg.blocks) {
    Copies copies{};
    for (uint32_t i = block.begin; i < block.end; ++i) {
      Instruction &inst = k.insts[i];
      const OpcodeInfo &row = inst.info();
      for (size_t j = 0; j < inst.operands.size() && j < row.num_operands(); ++j) {
        Operand &o = inst.operands[j];
        // A loop counter is read and written in place, so it keeps its register.
        if (o.kind == OperandKind::Reg && row.role(j) != OperandRole::LoopCounter) {
          const Type t = read_type(inst, row.role(j));
          if (t != Type::None) changed |= rewrite(o.index, t, copies);
        } else if (o.kind == OperandKind::Addr) {
          if (o.addr.base == AddrBase::Reg) changed |= rewrite(o.addr.base_id, Type::U64, copies);
          if (o.addr.index != kNoReg) changed |= rewrite(o.addr.index, Type::U64, copies);
        }
      }
      instruction_defs(inst, defs);
      for (const RegAccess &d : defs) {
        if (d.pred) continue;
        copies[d.reg].reset();
        for (auto &c : copies)
          if (c && c->src == d.reg) c.reset();
      }
      if (inst.op == Opcode::Mov) {
        const Reg dst = inst.operands[0].index, src = inst.operands[1].index;
        if (!is_special(src) && src != dst) copies[dst] = Copy{src, inst.type};
      }
    }
  }
  return changed;
}

} // namespace hologram::opt
