// Instruction-list edits shared by the passes.
#include "kernel_edit.h"

#include "hologram/support/unreachable.h"

namespace hologram::opt::detail {

using namespace isa;

void erase_instructions(Kernel &k, const std::vector<bool> &dead) {
  const size_t n = k.insts.size();
  std::vector<uint32_t> new_index(n + 1, 0);
  std::vector<Instruction> kept;
  kept.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    new_index[i] = static_cast<uint32_t>(kept.size());
    if (!dead[i]) kept.push_back(std::move(k.insts[i]));
  }
  new_index[n] = static_cast<uint32_t>(kept.size());
  for (auto &l : k.labels)
    if (l.target <= n) l.target = new_index[l.target];
  k.insts = std::move(kept);
}

Instruction mov_imm(const Instruction &at, Reg dst, Type t, uint64_t bits) {
  Instruction m;
  m.op = Opcode::MovImm;
  m.type = t;
  m.operands = {Operand::reg(dst), Operand::imm_bits(bits)};
  m.loc = at.loc;
  return m;
}

Instruction mov(const Instruction &at, Reg dst, Reg src, Type t) {
  Instruction m;
  m.op = Opcode::Mov;
  m.type = t;
  m.operands = {Operand::reg(dst), Operand::reg(src)};
  m.loc = at.loc;
  return m;
}

Type source_type(const Instruction &inst, OperandRole role) {
  switch (role) {
  case OperandRole::SrcT: return inst.type;
  case OperandRole::SrcU32: return Type::U32;
  case OperandRole::SrcU64: return Type::U64;
  case OperandRole::SrcF64: return Type::F64;
  case OperandRole::CvtSrc: return inst.type2;
  case OperandRole::DstT:
  case OperandRole::DstPred:
  case OperandRole::SrcPred:
  case OperandRole::DstU32:
  case OperandRole::DstU64:
  case OperandRole::LiteralT:
  case OperandRole::Count:
  case OperandRole::Label:
  case OperandRole::ScalarParam:
  case OperandRole::BufferParam:
  case OperandRole::OptBufferParam:
  case OperandRole::MemParam:
  case OperandRole::Address:
  case OperandRole::LoopCounter:
  case OperandRole::RegWindow:
  case OperandRole::CvtDst: return Type::None;
  }
  unreachable_enum("OperandRole");
}

} // namespace hologram::opt::detail
