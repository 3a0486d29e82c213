// See gemm_operands.h.
#include "hologram/isa/gemm_operands.h"

#include <stdexcept>

namespace hologram::isa {

namespace {

template <Opcode Op>
GemmOperands read(const Instruction &inst, const std::function<uint64_t(Reg)> &reg) {
  auto u = [&](size_t pos) { return reg(inst.operands[pos].index); };
  auto flag = [&](size_t pos) { return inst.operands[pos].imm != 0; };
  GemmOperands g;
  g.c = operand_index(Op, "C");
  g.a = operand_index(Op, "A");
  g.b = operand_index(Op, "B");
  if constexpr (Op == Opcode::BatchedGemm) {
    g.batch = u(operand_index(Op, "batch"));
    g.stride_a = u(operand_index(Op, "strideA"));
    g.stride_b = u(operand_index(Op, "strideB"));
    g.stride_c = u(operand_index(Op, "strideC"));
  }
  g.m = u(operand_index(Op, "M"));
  g.n = u(operand_index(Op, "N"));
  g.k = u(operand_index(Op, "K"));
  g.alpha_bits = u(operand_index(Op, "alpha"));
  g.beta_bits = u(operand_index(Op, "beta"));
  g.lda = u(operand_index(Op, "lda"));
  g.ldb = u(operand_index(Op, "ldb"));
  g.ldc = u(operand_index(Op, "ldc"));
  g.trans_a = flag(operand_index(Op, "transA"));
  g.trans_b = flag(operand_index(Op, "transB"));
  return g;
}

} // namespace

GemmOperands gemm_operands(const Instruction &inst, const std::function<uint64_t(Reg)> &reg) {
  if (inst.op == Opcode::Gemm) return read<Opcode::Gemm>(inst, reg);
  if (inst.op == Opcode::BatchedGemm) return read<Opcode::BatchedGemm>(inst, reg);
  throw std::logic_error("gemm_operands of an instruction that is not a gemm");
}

} // namespace hologram::isa
