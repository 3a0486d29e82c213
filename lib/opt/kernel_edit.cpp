// Instruction-list edits shared by the passes.
#include "kernel_edit.h"

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

void move_before(Kernel &k, const std::vector<uint32_t> &moved, uint32_t before) {
  const size_t n = k.insts.size();
  std::vector<bool> is_moved(n, false);
  for (uint32_t i : moved) is_moved[i] = true;
  std::vector<Instruction> out;
  out.reserve(n);
  std::vector<uint32_t> new_index(n + 1, 0);
  for (size_t i = 0; i <= n; ++i) {
    if (i == before)
      for (uint32_t m : moved) out.push_back(k.insts[m]);
    new_index[i] = static_cast<uint32_t>(out.size());
    if (i < n && !is_moved[i]) out.push_back(std::move(k.insts[i]));
  }
  for (auto &l : k.labels)
    if (l.target <= n) l.target = new_index[l.target];
  k.insts = std::move(out);
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

} // namespace hologram::opt::detail
