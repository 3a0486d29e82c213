// Constant folding and propagation within each basic block: a register known to hold a
// constant (from mov.imm or an earlier fold) makes a pure instruction whose sources are all
// known a `mov.imm` of the value the interpreter computes (interp::evaluate_pure), so a
// folded program computes bit for bit what the reference computes at run time.
#include "hologram/interp/evaluate.h"
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <array>
#include <optional>

namespace hologram::opt {

using namespace isa;

bool fold_constants(Kernel &k) {
  const Cfg cfg = build_cfg(k);
  bool changed = false;
  std::vector<RegAccess> uses, defs;
  std::vector<uint64_t> bits;
  for (const BasicBlock &block : cfg.blocks) {
    std::array<std::optional<uint64_t>, kFirstSpecialReg> known{};
    for (uint32_t i = block.begin; i < block.end; ++i) {
      Instruction &inst = k.insts[i];
      instruction_uses(inst, uses);
      instruction_defs(inst, defs);
      const bool one_register_result = defs.size() == 1 && !defs[0].pred;
      bool sources_known = one_register_result && inst.info().pure();
      for (const RegAccess &u : uses)
        sources_known = sources_known && !u.pred && !is_special(u.reg) && known[u.reg];
      std::optional<uint64_t> value;
      if (sources_known) {
        bits.assign(inst.operands.size(), 0);
        for (size_t j = 0; j < inst.operands.size(); ++j)
          if (inst.operands[j].kind == OperandKind::Reg && !is_special(inst.operands[j].index))
            bits[j] = known[inst.operands[j].index].value_or(0);
        value = interp::evaluate_pure(inst, bits);
      }
      for (const RegAccess &d : defs)
        if (!d.pred) known[d.reg].reset();
      if (!value) continue;
      const Reg dst = defs[0].reg;
      known[dst] = value;
      if (inst.op == Opcode::MovImm) continue;
      inst = detail::mov_imm(inst, dst, inst.type, *value);
      changed = true;
    }
  }
  return changed;
}

} // namespace hologram::opt
