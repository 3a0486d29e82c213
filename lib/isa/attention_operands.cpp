// See attention_operands.h.
#include "hologram/isa/attention_operands.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace hologram::isa {

namespace {

constexpr uint64_t kHuge = UINT64_MAX;

uint64_t mul_sat(uint64_t a, uint64_t b) {
  return a != 0 && b > kHuge / a ? kHuge : a * b;
}
uint64_t add_sat(uint64_t a, uint64_t b) {
  return b > kHuge - a ? kHuge : a + b;
}

/// The index of the last element of rows of `width` elements, n1 of them `s1` apart and n2 of
/// those `s2` apart, plus one.
uint64_t extent(uint64_t n1, uint64_t s1, uint64_t n2, uint64_t s2, uint64_t width) {
  if (n1 == 0 || n2 == 0 || width == 0) return 0;
  return add_sat(add_sat(mul_sat(n1 - 1, s1), mul_sat(n2 - 1, s2)), width);
}

} // namespace

uint64_t AttentionOperands::q_extent() const {
  return extent(heads, q_head_stride, seq_q, q_row_stride, head_dim);
}

uint64_t AttentionOperands::kv_extent() const {
  if (empty() || seq_k == 0) return 0;
  return extent(kv_heads, kv_head_stride, seq_k, kv_row_stride, head_dim);
}

std::string AttentionOperands::problem() const {
  if (heads == 0) return {};
  if (kv_heads == 0 || heads % kv_heads != 0)
    return "attention's heads (" + std::to_string(heads) + ") must be a multiple of kv_heads (" +
           std::to_string(kv_heads) + ")";
  if (empty()) return {};
  // out's rows must not overlap: taken from the smaller stride up, each dimension that has more
  // than one row must step past everything inside it.
  std::array<std::pair<uint64_t, uint64_t>, 2> dims{
      {{q_head_stride, heads}, {q_row_stride, seq_q}}};
  std::sort(dims.begin(), dims.end());
  uint64_t width = head_dim;
  for (const auto &[stride, count] : dims) {
    if (count <= 1) continue;
    if (stride < width)
      return "attention's output rows overlap: q_head_stride " + std::to_string(q_head_stride) +
             " and q_row_stride " + std::to_string(q_row_stride) + " for " + std::to_string(heads) +
             " heads of " + std::to_string(seq_q) + " rows of " + std::to_string(head_dim);
    width = add_sat(mul_sat(count - 1, stride), width);
  }
  return {};
}

AttentionOperands attention_operands(const Instruction &inst,
                                     const std::function<uint64_t(Reg)> &reg) {
  if (inst.op != Opcode::Attention)
    throw std::logic_error("attention_operands of an instruction that is not an attention");
  constexpr Opcode Op = Opcode::Attention;
  auto u = [&](size_t pos) { return reg(inst.operands[pos].index); };
  AttentionOperands a;
  a.out = operand_index(Op, "out");
  a.q = operand_index(Op, "Q");
  a.k = operand_index(Op, "K");
  a.v = operand_index(Op, "V");
  a.mask = operand_index(Op, "mask");
  a.has_mask = inst.operands[a.mask].kind == OperandKind::Param;
  a.heads = u(operand_index(Op, "heads"));
  a.kv_heads = u(operand_index(Op, "kv_heads"));
  a.seq_q = u(operand_index(Op, "seq_q"));
  a.seq_k = u(operand_index(Op, "seq_k"));
  a.head_dim = u(operand_index(Op, "head_dim"));
  a.q_head_stride = u(operand_index(Op, "q_head_stride"));
  a.q_row_stride = u(operand_index(Op, "q_row_stride"));
  a.kv_head_stride = u(operand_index(Op, "kv_head_stride"));
  a.kv_row_stride = u(operand_index(Op, "kv_row_stride"));
  a.scale_bits = u(operand_index(Op, "scale"));
  a.causal = inst.operands[operand_index(Op, "causal")].imm != 0;
  return a;
}

} // namespace hologram::isa
