// Evaluation of one pure instruction on constants, by the interpreter's own semantics.
#include "hologram/interp/evaluate.h"

#include "semantics.h"

namespace hologram::interp {

using namespace isa;

std::optional<uint64_t> evaluate_pure(const Instruction &inst,
                                      std::span<const uint64_t> operand_bits) {
  auto bits = [&](size_t i) { return i < operand_bits.size() ? operand_bits[i] : uint64_t{0}; };
  const OpcodeInfo &row = inst.info();
  if (!row.pure()) return std::nullopt;
  switch (row.family) {
  case OpFamily::Move:
    if (inst.op == Opcode::Mov) return bits(1);
    if (inst.op == Opcode::MovImm) return inst.operands[1].imm;
    if (inst.op == Opcode::Cvt) return sem::convert(inst.type, inst.type2, bits(1));
    return std::nullopt; // param and addr depend on the launch
  case OpFamily::Logic:
    switch (as_family<LogicOpcode>(inst.op)) {
    case LogicOpcode::And:
    case LogicOpcode::Or:
    case LogicOpcode::Xor:
    case LogicOpcode::Not:
    case LogicOpcode::Shl:
    case LogicOpcode::Shr: break;
    case LogicOpcode::Set:
    case LogicOpcode::Sel:
    case LogicOpcode::PAnd:
    case LogicOpcode::POr:
    case LogicOpcode::PNot: return std::nullopt; // predicates in or out
    }
    [[fallthrough]];
  case OpFamily::Arith:
  case OpFamily::Math: {
    bool div_by_zero = false;
    const uint64_t v = sem::compute(inst, bits(1), bits(2), bits(3), div_by_zero);
    if (div_by_zero) return std::nullopt;
    return v;
  }
  case OpFamily::Control:
  case OpFamily::Sync:
  case OpFamily::Atomic:
  case OpFamily::Atlas:
  case OpFamily::Reduce:
  case OpFamily::Pool:
  case OpFamily::HigherOrder:
  case OpFamily::Library: break;
  }
  return std::nullopt;
}

} // namespace hologram::interp
