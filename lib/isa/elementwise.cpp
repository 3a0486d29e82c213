// See elementwise.h. The properties come from the instruction table (W, R and the operand named
// `n`); opcode.cpp checks at compile time that every W or R row has what this relies on.
#include "hologram/isa/elementwise.h"

namespace hologram::isa {

bool continues_chain(const Instruction &prev, const Instruction &next) {
  const OpcodeInfo &a = prev.info(), &b = next.info();
  if (!a.elementwise() || !(b.elementwise() || b.reduces())) return false;
  if (prev.type != next.type) return false;
  return operand_named(prev, "n") == operand_named(next, "n");
}

std::vector<ElementwiseChain> elementwise_chains(const Kernel &k) {
  std::vector<bool> entered(k.insts.size() + 1, false); // a label names the instruction
  for (const Label &l : k.labels)
    if (l.target < entered.size()) entered[l.target] = true;
  std::vector<ElementwiseChain> out;
  const auto n = static_cast<uint32_t>(k.insts.size());
  for (uint32_t i = 0; i < n;) {
    uint32_t end = i + 1;
    while (end < n && !entered[end] && continues_chain(k.insts[end - 1], k.insts[end])) ++end;
    if (end - i >= 2) out.push_back({i, end - i});
    i = end;
  }
  return out;
}

Reg element_count_register(const Instruction &inst) {
  return static_cast<Reg>(operand_named(inst, "n").index);
}

std::vector<size_t> chain_buffer_operands(const Instruction &inst) {
  std::vector<size_t> out;
  const std::string_view sig = inst.info().signature;
  for (size_t i = 0; i < sig.size() && i < inst.operands.size(); ++i)
    if (static_cast<OperandRole>(sig[i]) == OperandRole::BufferParam) out.push_back(i);
  return out;
}

} // namespace hologram::isa
