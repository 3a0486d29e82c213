// Instruction-list edits shared by the passes.
#include "kernel_edit.h"

#include "hologram/isa/accesses.h"

#include <algorithm>
#include <utility>

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
  // A copy of each goes in front of `before`, then the originals go (their labels pass on to
  // the next instruction left, as erase_instructions does).
  std::vector<std::pair<uint32_t, Instruction>> copies;
  for (uint32_t m : moved) copies.push_back({before, k.insts[m]});
  insert_before(k, std::move(copies));
  std::vector<bool> dead(k.insts.size(), false);
  for (uint32_t m : moved) dead[m >= before ? m + moved.size() : m] = true;
  erase_instructions(k, dead);
}

void insert_before(Kernel &k, std::vector<std::pair<uint32_t, Instruction>> inserts) {
  // By position, keeping the given order at one position (the index breaks ties:
  // std::stable_sort warns under clang with libstdc++ 12).
  std::vector<size_t> order(inserts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(inserts[a].first, a) < std::pair(inserts[b].first, b);
  });
  const size_t n = k.insts.size();
  std::vector<Instruction> out;
  out.reserve(n + inserts.size());
  std::vector<uint32_t> new_index(n + 1, 0);
  size_t next = 0;
  for (size_t i = 0; i <= n; ++i) {
    for (; next < order.size() && inserts[order[next]].first == i; ++next)
      out.push_back(std::move(inserts[order[next]].second));
    new_index[i] = static_cast<uint32_t>(out.size());
    if (i < n) out.push_back(std::move(k.insts[i]));
  }
  for (auto &l : k.labels)
    if (l.target <= n) l.target = new_index[l.target];
  k.insts = std::move(out);
}

std::vector<bool> used_registers(const Kernel &k) {
  std::vector<bool> used(kFirstSpecialReg, false);
  std::vector<RegAccess> acc;
  for (const Instruction &inst : k.insts) {
    for (auto *list : {&instruction_uses, &instruction_defs}) {
      list(inst, acc);
      for (const RegAccess &a : acc)
        if (!a.pred && !is_special(a.reg)) used[a.reg] = true;
    }
  }
  return used;
}

std::optional<Reg> free_register(std::vector<bool> &used) {
  for (Reg r = kFirstSpecialReg; r-- > 0;)
    if (!used[r]) {
      used[r] = true;
      return r;
    }
  return std::nullopt;
}

bool enters_by_falling_through(const Kernel &k, const Cfg &cfg, const NaturalLoop &loop) {
  const BasicBlock &h = cfg.blocks[loop.header];
  if (h.begin == 0) return false;
  const uint32_t before = cfg.block_of[h.begin - 1];
  for (uint32_t p : h.preds)
    if (!loop.body[p] && p != before) return false;
  return !k.insts[h.begin - 1].info().ends_block() && !loop.body[before];
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
